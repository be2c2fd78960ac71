//===- FP4TrainRecipes.cpp - Named training recipes -----------------------===//
//
// docs/recipes.md, one row per recipe. Operand order per role: `lhs` is X for
// Fprop and dY for Dgrad and Wgrad; `rhs` is W for Fprop and Dgrad and X for
// Wgrad. Stochastic rounding is applied to gradients (dY) only.
//
//===----------------------------------------------------------------------===//

#include "fp4train/Dialect/FP4Train/IR/FP4TrainRecipes.h"

#include "fp4train/Dialect/FP4Train/IR/FP4TrainOps.h"
#include "fp4train/Support/EnumOption.h"

#include "mlir/AsmParser/AsmParser.h"
#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/STLExtras.h"
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
    return GemmRecipeAttr::get(context, lhs, rhs, hadamard,
                               HadamardPrecision::f32, GemmAlpha::scales);
  }
  HadamardAttr hadamard(int64_t size, HadamardSigns signs) {
    return HadamardAttr::get(context, size, signs, {});
  }
  RecipeAttr recipe(StringRef name, GemmRecipeAttr fprop, GemmRecipeAttr dgrad,
                    GemmRecipeAttr wgrad, bool weights2d = false,
                    unsigned roles = kAllRoles) {
    return RecipeAttr::get(context, name, fprop, dgrad, wgrad, weights2d,
                           /*keepFirst=*/0, /*keepLast=*/0, roles,
                           /*keepFirstBlocks=*/0, /*keepLastBlocks=*/0,
                           /*quantizeRouter=*/false,
                           /*perExpertGlobalScale=*/true);
  }

  /// MXFP4 on `roles`; `wgradHadamard` rotates the Wgrad operands and
  /// `gradRounding` rounds dY.
  RecipeAttr mxfp4(StringRef name, HadamardAttr wgradHadamard,
                   RoundingMode gradRounding, unsigned roles = kAllRoles) {
    QuantSpecAttr plain = quant(Format::mxfp4);
    QuantSpecAttr grad = quant(Format::mxfp4, gradRounding);
    return recipe(name, gemm(plain, plain), gemm(grad, plain),
                  gemm(grad, plain, wgradHadamard), /*weights2d=*/false, roles);
  }
};
} // namespace

ArrayRef<StringRef> mlir::fp4train::getRecipePresetNames() {
  static const StringRef names[] = {
      "nvfp4",    "mxfp4", "mxfp4-hadamard",    "mxfp4-random-hadamard",
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
  // f32, the name the training tools and the PyTorch front end give the
  // unquantized reference, is the same recipe.
  if (name == "none" || name == "f32")
    return b.recipe("none", {}, {}, {});
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

//===----------------------------------------------------------------------===//
// Recipe overrides
//===----------------------------------------------------------------------===//

std::optional<std::string> OverrideValue<bool>::parse(StringRef text,
                                                      bool &value) {
  if (text == "1" || text == "true")
    value = true;
  else if (text == "0" || text == "false")
    value = false;
  else
    return "'" + text.str() + "' is not 0 or 1";
  return std::nullopt;
}
void OverrideValue<bool>::print(raw_ostream &os, const bool &value) {
  os << (value ? 1 : 0);
}
StringRef OverrideValue<bool>::getValueName() { return "0|1"; }

std::optional<std::string> OverrideValue<unsigned>::parse(StringRef text,
                                                          unsigned &value) {
  if (text.getAsInteger(10, value))
    return "'" + text.str() + "' is not an integer in [0, 2^32)";
  return std::nullopt;
}
void OverrideValue<unsigned>::print(raw_ostream &os, const unsigned &value) {
  os << value;
}
StringRef OverrideValue<unsigned>::getValueName() { return "uint"; }

/// The override values of an enum of FP4TrainEnums.td: the names of its
/// cases (stringifyEnum / symbolizeEnum, generated for each), which are
/// numbered from 0.
template <typename Enum> struct EnumCases {
  static ArrayRef<StringRef> getNames() {
    static const SmallVector<StringRef> names = [] {
      SmallVector<StringRef> result;
      for (uint32_t value = 0;; ++value) {
        StringRef name = stringifyEnum(static_cast<Enum>(value));
        if (name.empty())
          return result;
        result.push_back(name);
      }
    }();
    return names;
  }
  static std::optional<std::string> parse(StringRef text, Enum &value) {
    if (std::optional<Enum> parsed = symbolizeEnum<Enum>(text)) {
      value = *parsed;
      return std::nullopt;
    }
    return getNotOneOfMessage(text, getNames());
  }
  static StringRef getValueName() {
    static const std::string name = llvm::join(getNames(), "|");
    return name;
  }
};

#define FP4TRAIN_DEFINE_ENUM_OVERRIDE_VALUE(Enum)                              \
  std::optional<std::string> OverrideValue<Enum>::parse(StringRef text,        \
                                                        Enum &value) {         \
    return EnumCases<Enum>::parse(text, value);                                \
  }                                                                            \
  void OverrideValue<Enum>::print(raw_ostream &os, const Enum &value) {        \
    os << stringifyEnum(value);                                                \
  }                                                                            \
  StringRef OverrideValue<Enum>::getValueName() {                              \
    return EnumCases<Enum>::getValueName();                                    \
  }
FP4TRAIN_DEFINE_ENUM_OVERRIDE_VALUE(HadamardSigns)
FP4TRAIN_DEFINE_ENUM_OVERRIDE_VALUE(ScaleMode)
FP4TRAIN_DEFINE_ENUM_OVERRIDE_VALUE(HadamardPrecision)
FP4TRAIN_DEFINE_ENUM_OVERRIDE_VALUE(GemmAlpha)
#undef FP4TRAIN_DEFINE_ENUM_OVERRIDE_VALUE

static constexpr Role kRoles[] = {Role::fprop, Role::dgrad, Role::wgrad};

std::optional<std::string> OverrideValue<RoleSet>::parse(StringRef text,
                                                         RoleSet &value) {
  SmallVector<StringRef> names;
  text.split(names, ',');
  unsigned bits = 0;
  for (StringRef name : names) {
    std::optional<Role> role = symbolizeRole(name.trim());
    if (!role || (bits & roleBit(*role)))
      return "'" + text.str() +
             "' must list distinct roles among fprop, dgrad and wgrad";
    bits |= roleBit(*role);
  }
  value.bits = bits;
  return std::nullopt;
}
void OverrideValue<RoleSet>::print(raw_ostream &os, const RoleSet &value) {
  llvm::interleave(
      llvm::make_filter_range(
          kRoles, [&](Role role) { return value.bits & roleBit(role); }),
      os, [&](Role role) { os << stringifyRole(role); }, ",");
}
StringRef OverrideValue<RoleSet>::getValueName() { return "fprop,dgrad,wgrad"; }

bool RecipeOverrides::empty() const {
  bool empty = true;
  forEachField(*this, [&](const auto &field, StringRef, StringRef) {
    empty &= !field.has_value();
  });
  return empty;
}

void RecipeOverrides::print(raw_ostream &os) const {
  StringRef separator;
  forEachField(*this, [&](const auto &field, StringRef name, StringRef) {
    if (!field)
      return;
    os << separator << name << '=' << field;
    separator = " ";
  });
}

/// Whether a GEMM multiplies two NVFP4 operands, the GEMMs [TE2]'s factor
/// applies to.
static bool bothNVFP4(QuantSpecAttr lhs, QuantSpecAttr rhs) {
  return lhs.getFormat() == Format::nvfp4 && rhs.getFormat() == Format::nvfp4;
}

RecipeAttr RecipeOverrides::apply(Location loc, RecipeAttr recipe) const {
  MLIRContext *context = loc.getContext();
  auto diag = [&]() { return mlir::emitError(loc); };

  // One operand's quantization.
  auto overrideQuant = [&](QuantSpecAttr spec, bool isGradient,
                           Role role) -> QuantSpecAttr {
    RoundingMode rounding = spec.getRounding();
    if (stochasticRounding == false)
      rounding = RoundingMode::nearest_even;
    if (stochasticRounding == true && isGradient) {
      if (!hasE2M1Elements(spec.getFormat())) {
        emitError(loc, "stochastic-rounding=1 needs E2M1 gradients, but "
                       "the ")
            << stringifyRole(role) << " dY format is "
            << stringifyFormat(spec.getFormat());
        return {};
      }
      rounding = RoundingMode::stochastic;
    }
    ScaleMode mode = spec.getScaleMode();
    if (scaleMode && spec.getFormat() != Format::nvfp4)
      mode = *scaleMode;
    return QuantSpecAttr::getChecked(diag, context, spec.getFormat(), rounding,
                                     mode);
  };

  auto overrideGemm = [&](GemmRecipeAttr gemm, Role role) -> GemmRecipeAttr {
    if (!gemm)
      return {};
    // lhs is dY for Dgrad and Wgrad: the operand stochastic rounding is for.
    bool lhsIsGradient = role != Role::fprop;
    QuantSpecAttr lhs = overrideQuant(gemm.getLhs(), lhsIsGradient, role);
    QuantSpecAttr rhs = overrideQuant(gemm.getRhs(), false, role);
    if (!lhs || !rhs)
      return {};
    HadamardAttr rotation = gemm.getHadamard();
    HadamardPrecision precision = gemm.getHadamardPrecision();
    if (role == Role::wgrad) {
      if (hadamard == 0u) {
        rotation = {};
      } else if (hadamard || hadamardSigns) {
        if (!rotation && !hadamard) {
          emitError(loc, "hadamard-signs needs a Wgrad Hadamard rotation; "
                         "set hadamard=N");
          return {};
        }
        int64_t size = hadamard ? *hadamard : rotation.getSize();
        // A new rotation without signs gets the deterministic rotation of
        // the AMD MXFP4 recipe.
        HadamardSigns signs = hadamardSigns ? *hadamardSigns
                              : rotation    ? rotation.getSigns()
                                            : HadamardSigns::fixed;
        rotation = HadamardAttr::getChecked(diag, context, size, signs, {});
        if (!rotation)
          return {};
      }
    }
    int64_t lhsBlock = getKBlockSize(lhs.getFormat());
    int64_t rhsBlock = getKBlockSize(rhs.getFormat());
    if (lhsBlock != rhsBlock) {
      emitError(loc, "the ")
          << stringifyRole(role) << " GEMM mixes K blocks of " << lhsBlock
          << " and " << rhsBlock << " (formats "
          << stringifyFormat(lhs.getFormat()) << " and "
          << stringifyFormat(rhs.getFormat()) << ")";
      return {};
    }
    if (!rotation)
      precision = HadamardPrecision::f32;
    else if (hadamardPrecision)
      precision = *hadamardPrecision;
    // [TE2] The factor applies to GEMMs of two NVFP4 operands; the others
    // keep their global scales' product.
    GemmAlpha alpha = gemm.getAlpha();
    if (!bothNVFP4(lhs, rhs))
      alpha = GemmAlpha::scales;
    else if (gemmAlpha)
      alpha = *gemmAlpha;
    return GemmRecipeAttr::get(context, lhs, rhs, rotation, precision, alpha);
  };

  auto rotates = [](GemmRecipeAttr gemm) { return gemm && gemm.getHadamard(); };
  auto nvfp4 = [&](GemmRecipeAttr gemm) {
    return gemm && bothNVFP4(gemm.getLhs(), gemm.getRhs());
  };
  if (gemmAlpha == GemmAlpha::amax && !nvfp4(recipe.getFprop()) &&
      !nvfp4(recipe.getDgrad()) && !nvfp4(recipe.getWgrad())) {
    emitError(loc, "gemm-alpha=amax needs a GEMM with two nvfp4 operands, "
                   "but recipe '")
        << recipe.getName() << "' has none";
    return {};
  }
  if (hadamardPrecision && *hadamardPrecision != HadamardPrecision::f32 &&
      !rotates(recipe.getFprop()) && !rotates(recipe.getDgrad()) &&
      !rotates(recipe.getWgrad()) && !hadamard.value_or(0)) {
    emitError(loc, "hadamard-precision=")
        << stringifyHadamardPrecision(*hadamardPrecision)
        << " needs a Hadamard rotation; set hadamard=N";
    return {};
  }

  GemmRecipeAttr fprop = overrideGemm(recipe.getFprop(), Role::fprop);
  GemmRecipeAttr dgrad = overrideGemm(recipe.getDgrad(), Role::dgrad);
  GemmRecipeAttr wgrad = overrideGemm(recipe.getWgrad(), Role::wgrad);
  if ((recipe.getFprop() && !fprop) || (recipe.getDgrad() && !dgrad) ||
      (recipe.getWgrad() && !wgrad))
    return {};
  return RecipeAttr::getChecked(
      diag, context, recipe.getName(), fprop, dgrad, wgrad,
      weights2d.value_or(recipe.getWeights_2d()),
      keepFirst.value_or(recipe.getKeepFirst()),
      keepLast.value_or(recipe.getKeepLast()),
      roles ? roles->bits : recipe.getRoles(),
      keepFirstBlocks.value_or(recipe.getKeepFirstBlocks()),
      keepLastBlocks.value_or(recipe.getKeepLastBlocks()),
      quantizeRouter.value_or(recipe.getQuantizeRouter()),
      perExpertGlobalScale.value_or(recipe.getPerExpertGlobalScale()));
}
