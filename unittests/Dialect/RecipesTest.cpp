//===- RecipesTest.cpp - The named recipes of docs/recipes.md -------------===//

#include "fp4train/Dialect/FP4Train/IR/FP4TrainOps.h"
#include "fp4train/Dialect/FP4Train/IR/FP4TrainRecipes.h"

#include "mlir/AsmParser/AsmParser.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/ADT/StringSet.h"

#include "gtest/gtest.h"

using namespace mlir;
using namespace mlir::fp4train;

namespace {

class RecipesTest : public ::testing::Test {
protected:
  RecipesTest() { context.loadDialect<FP4TrainDialect>(); }

  RecipeAttr parse(StringRef text) {
    return dyn_cast_or_null<RecipeAttr>(parseAttribute(text, &context));
  }

  MLIRContext context;
};

// Each preset, spelled out: the table [RCP2] of docs/recipes.md in IR syntax.
TEST_F(RecipesTest, PresetsMatchTheDesignTable) {
  struct Case {
    StringRef name;
    const char *expected;
  } cases[] = {
      {"nvfp4", "#fp4train.recipe<name = \"nvfp4\","
                " fprop = <lhs = <format = nvfp4>, rhs = <format = nvfp4>>,"
                " dgrad = <lhs = <format = nvfp4, rounding = stochastic>,"
                "          rhs = <format = nvfp4>>,"
                " wgrad = <lhs = <format = nvfp4, rounding = stochastic>,"
                "          rhs = <format = nvfp4>, hadamard = <16, random>>,"
                " weights_2d = true>"},
      {"mxfp4", "#fp4train.recipe<name = \"mxfp4\","
                " fprop = <lhs = <format = mxfp4>, rhs = <format = mxfp4>>,"
                " dgrad = <lhs = <format = mxfp4>, rhs = <format = mxfp4>>,"
                " wgrad = <lhs = <format = mxfp4>, rhs = <format = mxfp4>>>"},
      {"mxfp4-hadamard",
       "#fp4train.recipe<name = \"mxfp4-hadamard\","
       " fprop = <lhs = <format = mxfp4>, rhs = <format = mxfp4>>,"
       " dgrad = <lhs = <format = mxfp4>, rhs = <format = mxfp4>>,"
       " wgrad = <lhs = <format = mxfp4>, rhs = <format = mxfp4>,"
       "          hadamard = <32, fixed>>>"},
      {"mxfp4-random-hadamard",
       "#fp4train.recipe<name = \"mxfp4-random-hadamard\","
       " fprop = <lhs = <format = mxfp4>, rhs = <format = mxfp4>>,"
       " dgrad = <lhs = <format = mxfp4>, rhs = <format = mxfp4>>,"
       " wgrad = <lhs = <format = mxfp4>, rhs = <format = mxfp4>,"
       "          hadamard = <32, random>>>"},
      {"mxfp4-sr",
       "#fp4train.recipe<name = \"mxfp4-sr\","
       " fprop = <lhs = <format = mxfp4>, rhs = <format = mxfp4>>,"
       " dgrad = <lhs = <format = mxfp4, rounding = stochastic>,"
       "          rhs = <format = mxfp4>>,"
       " wgrad = <lhs = <format = mxfp4, rounding = stochastic>,"
       "          rhs = <format = mxfp4>, hadamard = <32, fixed>>>"},
      {"mxfp8",
       "#fp4train.recipe<name = \"mxfp8\","
       " fprop = <lhs = <format = mxfp8_e4m3>, rhs = <format = mxfp8_e4m3>>,"
       " dgrad = <lhs = <format = mxfp8_e5m2>, rhs = <format = mxfp8_e4m3>>,"
       " wgrad = <lhs = <format = mxfp8_e5m2>, rhs = <format = mxfp8_e4m3>>>"},
      {"mxfp4-fprop-dgrad",
       "#fp4train.recipe<name = \"mxfp4-fprop-dgrad\","
       " fprop = <lhs = <format = mxfp4>, rhs = <format = mxfp4>>,"
       " dgrad = <lhs = <format = mxfp4>, rhs = <format = mxfp4>>,"
       " wgrad = <lhs = <format = mxfp4>, rhs = <format = mxfp4>>,"
       " roles = [fprop, dgrad]>"},
      {"none", "#fp4train.recipe<name = \"none\">"},
  };
  ASSERT_EQ(getRecipePresetNames().size(), std::size(cases));
  for (auto [name, c] : llvm::zip_equal(getRecipePresetNames(), cases)) {
    EXPECT_EQ(name, c.name);
    RecipeAttr expected = parse(c.expected);
    ASSERT_TRUE(expected) << c.name.str();
    EXPECT_EQ(getRecipePreset(&context, c.name), expected) << c.name.str();
  }
  // f32 names the unquantized recipe too.
  EXPECT_EQ(getRecipePreset(&context, "f32"),
            getRecipePreset(&context, "none"));
}

// `roles` selects among the recipe's GEMMs; every role is the default and
// is not printed.
TEST_F(RecipesTest, RolesSelectTheQuantizedGemms) {
  RecipeAttr partial = getRecipePreset(&context, "mxfp4-fprop-dgrad");
  ASSERT_TRUE(partial);
  EXPECT_TRUE(partial.getForRole(Role::fprop));
  EXPECT_TRUE(partial.getForRole(Role::dgrad));
  EXPECT_FALSE(partial.getForRole(Role::wgrad));
  EXPECT_TRUE(partial.getWgrad());
  EXPECT_FALSE(partial.hasRole(Role::wgrad));

  RecipeAttr all = getRecipePreset(&context, "mxfp4");
  EXPECT_EQ(all.getRoles(), kAllRoles);
  std::string text;
  llvm::raw_string_ostream(text) << Attribute(all);
  EXPECT_EQ(StringRef(text).find("roles"), StringRef::npos) << text;
  // Listed in any order, printed in role order, and the same attribute.
  EXPECT_EQ(parse("#fp4train.recipe<name = \"mxfp4-fprop-dgrad\","
                  " fprop = <lhs = <format = mxfp4>, rhs = <format = mxfp4>>,"
                  " dgrad = <lhs = <format = mxfp4>, rhs = <format = mxfp4>>,"
                  " wgrad = <lhs = <format = mxfp4>, rhs = <format = mxfp4>>,"
                  " roles = [dgrad, fprop]>"),
            partial);
}

TEST_F(RecipesTest, UnknownNameHasNoPreset) {
  EXPECT_FALSE(getRecipePreset(&context, "fp4"));
  EXPECT_FALSE(getRecipePreset(&context, ""));
  EXPECT_FALSE(getRecipePreset(&context, "NVFP4"));
}

//===----------------------------------------------------------------------===//
// Recipe overrides ([RO1])
//===----------------------------------------------------------------------===//

/// Parses `text` as a value of an override of type T.
template <typename T> static std::optional<T> parseValue(StringRef text) {
  T value{};
  if (OverrideValue<T>::parse(text, value))
    return std::nullopt;
  return value;
}

TEST(RecipeOverrideValues, ParseAndPrint) {
  EXPECT_EQ(parseValue<bool>("1"), true);
  EXPECT_EQ(parseValue<bool>("false"), false);
  EXPECT_FALSE(parseValue<bool>("2"));
  EXPECT_EQ(parseValue<unsigned>("32"), 32u);
  EXPECT_FALSE(parseValue<unsigned>("-1"));
  EXPECT_FALSE(parseValue<unsigned>("4294967296"));
  EXPECT_EQ(parseValue<HadamardSigns>("random"), HadamardSigns::random);
  EXPECT_FALSE(parseValue<HadamardSigns>("sometimes"));
  EXPECT_EQ(parseValue<ScaleMode>("rceil"), ScaleMode::rceil);
  std::optional<RoleSet> roles = parseValue<RoleSet>("wgrad, fprop");
  ASSERT_TRUE(roles);
  EXPECT_EQ(roles->bits, roleBit(Role::wgrad) | roleBit(Role::fprop));
  EXPECT_FALSE(parseValue<RoleSet>("fprop,fprop"));
  EXPECT_FALSE(parseValue<RoleSet>("other"));

  bool flag = false;
  EXPECT_EQ(*OverrideValue<bool>::parse("yes", flag), "'yes' is not 0 or 1");
  HadamardSigns signs{};
  EXPECT_EQ(*OverrideValue<HadamardSigns>::parse("x", signs),
            "'x' is not one of none, fixed, random");
  EXPECT_EQ(OverrideValue<ScaleMode>::getValueName(), "floor|rceil");
}

TEST(RecipeOverrideValues, FieldNamesAreDistinct) {
  RecipeOverrides overrides;
  llvm::StringSet<> names;
  unsigned count = 0;
  RecipeOverrides::forEachField(
      overrides, [&](auto &field, StringRef name, StringRef description) {
        EXPECT_FALSE(field.has_value()) << name.str();
        EXPECT_FALSE(description.empty()) << name.str();
        EXPECT_TRUE(names.insert(name).second) << name.str();
        ++count;
      });
  EXPECT_EQ(count, 14u);
  EXPECT_TRUE(overrides.empty());
}

TEST_F(RecipesTest, OverridesPrintAsOptions) {
  RecipeOverrides overrides;
  overrides.hadamard = 32u;
  overrides.hadamardSigns = HadamardSigns::random;
  overrides.roles = RoleSet{roleBit(Role::fprop) | roleBit(Role::dgrad)};
  overrides.stochasticRounding = false;
  std::string text;
  llvm::raw_string_ostream os(text);
  overrides.print(os);
  EXPECT_EQ(text, "stochastic-rounding=0 hadamard=32 hadamard-signs=random "
                  "roles=fprop,dgrad");
  EXPECT_FALSE(overrides.empty());
}

TEST_F(RecipesTest, OverridesChangeOneChoiceEach) {
  Location loc = UnknownLoc::get(&context);
  RecipeAttr nvfp4 = getRecipePreset(&context, "nvfp4");
  EXPECT_EQ(RecipeOverrides().apply(loc, nvfp4), nvfp4);

  RecipeOverrides rne;
  rne.stochasticRounding = false;
  RecipeAttr nearest = rne.apply(loc, nvfp4);
  ASSERT_TRUE(nearest);
  EXPECT_EQ(nearest.getDgrad().getLhs().getRounding(),
            RoundingMode::nearest_even);
  EXPECT_EQ(nearest.getWgrad().getHadamard(), nvfp4.getWgrad().getHadamard());

  RecipeOverrides rotation;
  rotation.hadamard = 64u;
  RecipeAttr mx = rotation.apply(loc, getRecipePreset(&context, "mxfp4"));
  ASSERT_TRUE(mx);
  EXPECT_EQ(mx.getWgrad().getHadamard().getSize(), 64);
  // A new rotation without signs is the AMD recipe's deterministic one.
  EXPECT_EQ(mx.getWgrad().getHadamard().getSigns(), HadamardSigns::fixed);
  EXPECT_FALSE(mx.getFprop().getHadamard());

  RecipeOverrides layers;
  layers.keepFirst = 1u;
  layers.keepLast = 2u;
  layers.weights2d = false;
  layers.roles = RoleSet{roleBit(Role::wgrad)};
  RecipeAttr kept = layers.apply(loc, nvfp4);
  ASSERT_TRUE(kept);
  EXPECT_EQ(kept.getKeepFirst(), 1u);
  EXPECT_EQ(kept.getKeepLast(), 2u);
  EXPECT_FALSE(kept.getWeights_2d());
  EXPECT_EQ(kept.getRoles(), roleBit(Role::wgrad));

  // [H2] Every rotated role's operands; the rotation itself unchanged.
  RecipeOverrides te;
  te.hadamardPrecision = HadamardPrecision::operand;
  RecipeAttr rounded = te.apply(loc, nvfp4);
  ASSERT_TRUE(rounded);
  EXPECT_EQ(rounded.getWgrad().getHadamardPrecision(),
            HadamardPrecision::operand);
  EXPECT_EQ(rounded.getWgrad().getHadamard(), nvfp4.getWgrad().getHadamard());
  EXPECT_EQ(rounded.getFprop(), nvfp4.getFprop());
  // Removing the rotation takes its precision with it.
  RecipeOverrides none;
  none.hadamard = 0u;
  RecipeAttr plain = none.apply(loc, rounded);
  ASSERT_TRUE(plain);
  EXPECT_EQ(plain.getWgrad().getHadamardPrecision(), HadamardPrecision::f32);

  RecipeOverrides rceil;
  rceil.scaleMode = ScaleMode::rceil;
  RecipeAttr scaled = rceil.apply(loc, getRecipePreset(&context, "mxfp8"));
  ASSERT_TRUE(scaled);
  EXPECT_EQ(scaled.getFprop().getRhs().getScaleMode(), ScaleMode::rceil);
}

TEST_F(RecipesTest, InconsistentOverridesAreErrors) {
  Location loc = UnknownLoc::get(&context);
  std::string message;
  // The first error of each apply.
  ScopedDiagnosticHandler handler(&context, [&](Diagnostic &diagnostic) {
    if (message.empty())
      message = diagnostic.str();
    return success();
  });
  RecipeOverrides sr;
  sr.stochasticRounding = true;
  EXPECT_FALSE(sr.apply(loc, getRecipePreset(&context, "mxfp8")));
  EXPECT_EQ(message, "stochastic-rounding=1 needs E2M1 gradients, but the "
                     "dgrad dY format is mxfp8_e5m2");
  message.clear();
  RecipeOverrides signs;
  signs.hadamardSigns = HadamardSigns::random;
  EXPECT_FALSE(signs.apply(loc, getRecipePreset(&context, "mxfp4")));
  EXPECT_EQ(message,
            "hadamard-signs needs a Wgrad Hadamard rotation; set hadamard=N");
  message.clear();
  RecipeOverrides precision;
  precision.hadamardPrecision = HadamardPrecision::operand;
  EXPECT_FALSE(precision.apply(loc, getRecipePreset(&context, "mxfp4")));
  EXPECT_EQ(message, "hadamard-precision=operand needs a Hadamard rotation; "
                     "set hadamard=N");
  RecipeOverrides blocks;
  blocks.weights2d = true;
  EXPECT_FALSE(blocks.apply(loc, getRecipePreset(&context, "mxfp4")));
}

} // namespace
