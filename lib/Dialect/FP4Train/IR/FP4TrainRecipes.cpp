//===- FP4TrainRecipes.cpp - Named training recipes -----------------------===//
//
// DESIGN.md §3, one row per recipe. Operand order per role: `lhs` is X for
// Fprop and dY for Dgrad and Wgrad; `rhs` is W for Fprop and Dgrad and X for
// Wgrad. Stochastic rounding is applied to gradients (dY) only.
//
//===----------------------------------------------------------------------===//

#include "fp4train/Dialect/FP4Train/IR/FP4TrainRecipes.h"

#include "fp4train/Dialect/FP4Train/IR/FP4TrainOps.h"

#include "mlir/AsmParser/AsmParser.h"
#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/StringExtras.h"

using namespace mlir;
using namespace mlir::fp4train;

namespace {
/// Builds the attributes of one recipe with little ceremony.
struct RecipeBuilder {
  MLIRContext *context;

  QuantSpecAttr quant(Format format,
                      RoundingMode rounding = RoundingMode::nearest_even) {
    return QuantSpecAttr::get(context, format, rounding, ScaleMode::floor);
  }
  GemmRecipeAttr gemm(QuantSpecAttr lhs, QuantSpecAttr rhs,
                      HadamardAttr hadamard = {}) {
    return GemmRecipeAttr::get(context, lhs, rhs, hadamard);
  }
  HadamardAttr hadamard(int64_t size, HadamardSigns signs) {
    return HadamardAttr::get(context, size, signs, {});
  }
  RecipeAttr recipe(StringRef name, GemmRecipeAttr fprop,
                    GemmRecipeAttr dgrad, GemmRecipeAttr wgrad,
                    bool weights2d = false, unsigned roles = kAllRoles) {
    return RecipeAttr::get(context, name, fprop, dgrad, wgrad, weights2d,
                           /*keepFirst=*/0, /*keepLast=*/0, roles);
  }

  /// MXFP4 on `roles`; `wgradHadamard` rotates the Wgrad operands and
  /// `gradRounding` rounds dY.
  RecipeAttr mxfp4(StringRef name, HadamardAttr wgradHadamard,
                   RoundingMode gradRounding, unsigned roles = kAllRoles) {
    QuantSpecAttr plain = quant(Format::mxfp4);
    QuantSpecAttr grad = quant(Format::mxfp4, gradRounding);
    return recipe(name, gemm(plain, plain), gemm(grad, plain),
                  gemm(grad, plain, wgradHadamard), /*weights2d=*/false,
                  roles);
  }
};
} // namespace

ArrayRef<StringRef> mlir::fp4train::getRecipePresetNames() {
  static const StringRef names[] = {
      "nvfp4",    "mxfp4", "mxfp4-hadamard", "mxfp4-random-hadamard",
      "mxfp4-sr", "mxfp8", "mxfp4-fprop-dgrad", "none"};
  return names;
}

RecipeAttr mlir::fp4train::getRecipePreset(MLIRContext *context,
                                           StringRef name) {
  RecipeBuilder b{context};
  constexpr RoundingMode rne = RoundingMode::nearest_even;
  constexpr RoundingMode sr = RoundingMode::stochastic;

  if (name == "nvfp4") {
    // NVIDIA's NVFP4 pretraining recipe: 16x16 weight blocks shared by Fprop
    // and Dgrad, SR on gradients, a random 16-point Hadamard on Wgrad.
    QuantSpecAttr nv = b.quant(Format::nvfp4);
    QuantSpecAttr nvGrad = b.quant(Format::nvfp4, sr);
    return b.recipe(name, b.gemm(nv, nv), b.gemm(nvGrad, nv),
                    b.gemm(nvGrad, nv, b.hadamard(16, HadamardSigns::random)),
                    /*weights2d=*/true);
  }
  if (name == "mxfp4")
    return b.mxfp4(name, /*wgradHadamard=*/{}, rne);
  if (name == "mxfp4-hadamard")
    // The AMD MXFP4 paper's fix: a deterministic 32-point rotation on Wgrad.
    return b.mxfp4(name, b.hadamard(32, HadamardSigns::fixed), rne);
  if (name == "mxfp4-random-hadamard")
    return b.mxfp4(name, b.hadamard(32, HadamardSigns::random), rne);
  if (name == "mxfp4-sr")
    return b.mxfp4(name, b.hadamard(32, HadamardSigns::fixed), sr);
  if (name == "mxfp4-fprop-dgrad")
    // The MXFP4 paper's first ablation row: Fprop and Dgrad in MXFP4, Wgrad
    // in the graph's precision.
    return b.mxfp4(name, /*wgradHadamard=*/{}, rne,
                   roleBit(Role::fprop) | roleBit(Role::dgrad));
  if (name == "mxfp8") {
    // The FP8 baseline: E4M3 for activations and weights, E5M2 for dY.
    QuantSpecAttr e4m3 = b.quant(Format::mxfp8_e4m3);
    QuantSpecAttr e5m2 = b.quant(Format::mxfp8_e5m2);
    return b.recipe(name, b.gemm(e4m3, e4m3), b.gemm(e5m2, e4m3),
                    b.gemm(e5m2, e4m3));
  }
  if (name == "none")
    return b.recipe(name, {}, {}, {});
  return {};
}

RecipeAttr mlir::fp4train::parseRecipe(Location loc, StringRef text) {
  MLIRContext *context = loc.getContext();
  std::string presets = llvm::join(getRecipePresetNames(), ", ");
  if (text.empty()) {
    emitError(loc, "the recipe option is required: one of ")
        << presets << ", or a #fp4train.recipe attribute";
    return {};
  }
  if (!text.starts_with("#")) {
    RecipeAttr recipe = getRecipePreset(context, text);
    if (!recipe)
      emitError(loc, "unknown recipe '")
          << text << "'; expected one of " << presets
          << ", or a #fp4train.recipe attribute";
    return recipe;
  }
  Attribute attr = parseAttribute(text, context);
  auto recipe = dyn_cast_or_null<RecipeAttr>(attr);
  if (!recipe)
    emitError(loc, "recipe '") << text << "' is not a #fp4train.recipe";
  return recipe;
}
