//===- RecipesTest.cpp - The named recipes of DESIGN.md §3 ----------------===//

#include "fp4train/Dialect/FP4Train/IR/FP4TrainOps.h"
#include "fp4train/Dialect/FP4Train/IR/FP4TrainRecipes.h"

#include "mlir/AsmParser/AsmParser.h"
#include "mlir/IR/MLIRContext.h"

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

// Each preset, spelled out: the table of DESIGN.md §3 in IR syntax.
TEST_F(RecipesTest, PresetsMatchTheDesignTable) {
  struct Case {
    StringRef name;
    const char *expected;
  } cases[] = {
      {"nvfp4",
       "#fp4train.recipe<name = \"nvfp4\","
       " fprop = <lhs = <format = nvfp4>, rhs = <format = nvfp4>>,"
       " dgrad = <lhs = <format = nvfp4, rounding = stochastic>,"
       "          rhs = <format = nvfp4>>,"
       " wgrad = <lhs = <format = nvfp4, rounding = stochastic>,"
       "          rhs = <format = nvfp4>, hadamard = <16, random>>,"
       " weights_2d = true>"},
      {"mxfp4",
       "#fp4train.recipe<name = \"mxfp4\","
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
  EXPECT_EQ(parseRoleList({"wgrad", " fprop"}),
            roleBit(Role::wgrad) | roleBit(Role::fprop));
  EXPECT_FALSE(parseRoleList({"fprop", "fprop"}));
  EXPECT_FALSE(parseRoleList({"other"}));
}

TEST_F(RecipesTest, UnknownNameHasNoPreset) {
  EXPECT_FALSE(getRecipePreset(&context, "fp4"));
  EXPECT_FALSE(getRecipePreset(&context, ""));
  EXPECT_FALSE(getRecipePreset(&context, "NVFP4"));
}

} // namespace
