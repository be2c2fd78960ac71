//===- ScaledTensorTypeTest.cpp - C++ API of the fp4train types -----------===//
//
// The C++ queries that passes and lowerings build on: scale shapes, format
// presets and recipe lookup. The IR syntax and verifiers are tested by lit.
//
//===----------------------------------------------------------------------===//

#include "fp4train/Dialect/FP4Train/IR/FP4TrainOps.h"

#include "mlir/AsmParser/AsmParser.h"
#include "mlir/IR/MLIRContext.h"

#include "gtest/gtest.h"

using namespace mlir;
using namespace mlir::fp4train;

namespace {

class ScaledTensorTypeTest : public ::testing::Test {
protected:
  ScaledTensorTypeTest() { context.loadDialect<FP4TrainDialect>(); }

  ScaledTensorType parse(StringRef text) {
    return dyn_cast_or_null<ScaledTensorType>(parseType(text, &context));
  }

  MLIRContext context;
};

TEST_F(ScaledTensorTypeTest, ScalesShapeDividesBlockedDims) {
  ScaledTensorType mx = parse(
      "!fp4train.scaled<64x128xf4E2M1FN, block = [1, 32], scale = f8E8M0FNU>");
  ASSERT_TRUE(mx);
  EXPECT_EQ(mx.getScalesShape(), (SmallVector<int64_t>{64, 4}));
  EXPECT_EQ(mx.getBlockedDims(), (SmallVector<int64_t>{1}));
  EXPECT_EQ(mx.getBlockNumElements(), 32);
  EXPECT_EQ(mx.getNumElements(), 64 * 128);
  EXPECT_FALSE(mx.is2DBlocked());
  EXPECT_EQ(mx.getFormat(), Format::mxfp4);

  ScaledTensorType nv2d = parse("!fp4train.scaled<3x64x128xf4E2M1FN, block = "
                                "[1, 16, 16], scale = f8E4M3FN, global>");
  ASSERT_TRUE(nv2d);
  EXPECT_EQ(nv2d.getScalesShape(), (SmallVector<int64_t>{3, 4, 8}));
  EXPECT_TRUE(nv2d.is2DBlocked());
  EXPECT_EQ(nv2d.getBlockNumElements(), 256);
  EXPECT_EQ(nv2d.getFormat(), Format::nvfp4);
  EXPECT_EQ(nv2d.getScalesTensorType(),
            RankedTensorType::get({3, 4, 8}, Float8E4M3FNType::get(&context)));
  EXPECT_EQ(
      nv2d.getValuesTensorType(),
      RankedTensorType::get({3, 64, 128}, Float4E2M1FNType::get(&context)));
}

TEST_F(ScaledTensorTypeTest, ForFormatMatchesTheFormatTable) {
  struct Case {
    Format format;
    const char *expected;
  } cases[] = {
      {Format::mxfp4, "!fp4train.scaled<32x64xf4E2M1FN, block = [32, 1], "
                      "scale = f8E8M0FNU>"},
      {Format::nvfp4, "!fp4train.scaled<32x64xf4E2M1FN, block = [16, 1], "
                      "scale = f8E4M3FN>"},
      {Format::mxfp8_e4m3, "!fp4train.scaled<32x64xf8E4M3FN, block = [32, "
                           "1], scale = f8E8M0FNU>"},
      {Format::mxfp8_e5m2, "!fp4train.scaled<32x64xf8E5M2, block = [32, 1], "
                           "scale = f8E8M0FNU>"},
  };
  for (const Case &c : cases) {
    ScaledTensorType type =
        ScaledTensorType::getForFormat(&context, c.format, {32, 64}, 0);
    EXPECT_EQ(type, parse(c.expected)) << stringifyFormat(c.format).str();
    EXPECT_EQ(type.getFormat(), c.format);
  }
  ScaledTensorType twoD = ScaledTensorType::getForFormat(
      &context, Format::nvfp4, {32, 64}, 0, /*dim2=*/1,
      /*hasGlobalScale=*/true);
  EXPECT_EQ(twoD, parse("!fp4train.scaled<32x64xf4E2M1FN, block = [16, 16], "
                        "scale = f8E4M3FN, global>"));
}

TEST_F(ScaledTensorTypeTest, GetCheckedRejectsPartialBlocks) {
  auto emitError = [&]() { return mlir::emitError(UnknownLoc::get(&context)); };
  // Swallow the diagnostic; the message itself is checked by invalid.mlir.
  ScopedDiagnosticHandler silence(&context,
                                  [](Diagnostic &) { return success(); });
  Type f4 = Float4E2M1FNType::get(&context);
  Type e8m0 = Float8E8M0FNUType::get(&context);
  EXPECT_FALSE(ScaledTensorType::getChecked(
      emitError, &context, ArrayRef<int64_t>{64, 40}, f4,
      ArrayRef<int64_t>{1, 32}, e8m0, false));
  EXPECT_TRUE(ScaledTensorType::getChecked(
      emitError, &context, ArrayRef<int64_t>{64, 64}, f4,
      ArrayRef<int64_t>{1, 32}, e8m0, false));
}

TEST_F(ScaledTensorTypeTest, RecipeLooksUpRoles) {
  auto recipe = dyn_cast_or_null<RecipeAttr>(parseAttribute(
      "#fp4train.recipe<fprop = <lhs = <format = mxfp4>, rhs = <format = "
      "mxfp4>>, wgrad = <lhs = <format = nvfp4, rounding = stochastic>, rhs "
      "= <format = nvfp4>, hadamard = <16, random>>>",
      &context));
  ASSERT_TRUE(recipe);
  EXPECT_EQ(recipe.getForRole(Role::fprop), recipe.getFprop());
  EXPECT_FALSE(recipe.getForRole(Role::dgrad));
  GemmRecipeAttr wgrad = recipe.getForRole(Role::wgrad);
  ASSERT_TRUE(wgrad);
  EXPECT_EQ(wgrad.getLhs().getRounding(), RoundingMode::stochastic);
  EXPECT_EQ(wgrad.getRhs().getRounding(), RoundingMode::nearest_even);
  ASSERT_TRUE(wgrad.getHadamard());
  EXPECT_TRUE(wgrad.getHadamard().isRandom());
  EXPECT_EQ(wgrad.getHadamard().getSize(), 16);
}

} // namespace
