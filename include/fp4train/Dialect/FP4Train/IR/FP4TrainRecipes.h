//===- FP4TrainRecipes.h - Named training recipes ---------------*- C++ -*-===//
//
// The recipes of docs/recipes.md as `#fp4train.recipe` values, so passes
// and tools accept `recipe=nvfp4` and users can still spell any other
// recipe as an attribute; and the recipe overrides ([RO1]), the one
// definition of every option that changes one choice of a recipe.
//
//===----------------------------------------------------------------------===//

#ifndef FP4TRAIN_DIALECT_FP4TRAIN_IR_FP4TRAINRECIPES_H
#define FP4TRAIN_DIALECT_FP4TRAIN_IR_FP4TRAINRECIPES_H

#include "fp4train/Dialect/FP4Train/IR/FP4TrainAttrs.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/raw_ostream.h"

#include <optional>
#include <string>

namespace mlir {
class Location;
class MLIRContext;

namespace fp4train {

/// Names of the preset recipes, in the order of docs/recipes.md, followed
/// by `none` (every GEMM stays in high precision).
llvm::ArrayRef<llvm::StringRef> getRecipePresetNames();

/// Returns the preset recipe called `name`, or null when there is none.
RecipeAttr getRecipePreset(MLIRContext *context, llvm::StringRef name);

/// Parses `text`, a preset name or the text of a `#fp4train.recipe<...>`
/// attribute, as the `recipe` option of the quantize passes takes it. Returns
/// null after emitting an error at `loc` otherwise.
RecipeAttr parseRecipe(Location loc, llvm::StringRef text);

//===----------------------------------------------------------------------===//
// Recipe overrides
//===----------------------------------------------------------------------===//

/// A recipe choice that an option may leave unset: the recipe keeps its own.
template <typename T> struct Override : public std::optional<T> {
  using std::optional<T>::optional;
};

/// A set of roles as options spell it: `fprop,dgrad` (each role once).
struct RoleSet {
  /// roleBit(role) for each role of the set.
  unsigned bits = 0;
  bool operator==(const RoleSet &other) const { return bits == other.bits; }
};

/// How the options of RecipeOverrides spell one value of type T. Each
/// specialization (bool, unsigned, HadamardSigns, ScaleMode, RoleSet) has
///   static std::optional<std::string> parse(StringRef text, T &value):
///       the error message when `text` is not a value of T;
///   static void print(raw_ostream &os, const T &value);
///   static StringRef getValueName(): the values, as `--help` shows them.
template <typename T> struct OverrideValue;

/// The options that override one choice of a recipe each ([RO1] in
/// docs/recipes.md). The quantize pass, every pipeline, fp4-train, and
/// through the pipelines the C API and Python, take exactly these; a new
/// field is declared in forEachField, handled in apply, and tested.
struct RecipeOverrides {
  Override<bool> stochasticRounding;
  Override<unsigned> hadamard;
  Override<HadamardSigns> hadamardSigns;
  Override<HadamardPrecision> hadamardPrecision;
  Override<GemmAlpha> gemmAlpha;
  Override<ScaleMode> scaleMode;
  Override<bool> weights2d;
  Override<unsigned> keepFirst;
  Override<unsigned> keepLast;
  Override<unsigned> keepFirstBlocks;
  Override<unsigned> keepLastBlocks;
  Override<bool> quantizeRouter;
  Override<bool> perExpertGlobalScale;
  Override<RoleSet> roles;

  /// Calls `visit(field, name, description)` for each field, in a fixed
  /// order: the one list of the option names and their documentation.
  template <typename Self, typename Visitor>
  static void forEachField(Self &self, Visitor &&visit) {
    visit(self.stochasticRounding, "stochastic-rounding",
          "round the output gradient (dY) of Dgrad and Wgrad stochastically "
          "(1) or to nearest even (0); E2M1 formats only");
    visit(self.hadamard, "hadamard",
          "size of the Wgrad Hadamard rotation (16 to 256; 0: none)");
    visit(self.hadamardSigns, "hadamard-signs",
          "signs of the Wgrad Hadamard rotation");
    visit(self.hadamardPrecision, "hadamard-precision",
          "what rotated operands hold before they are quantized: f32, or "
          "operand (rounded to each operand's own element type, as "
          "TransformerEngine's RHT on bf16 inputs, [H2])");
    visit(self.gemmAlpha, "gemm-alpha",
          "the factor of each GEMM with two NVFP4 operands: scales (S_dec,a "
          "* S_dec,b) or amax (TransformerEngine's amax_a * amax_b / "
          "(6^2 * 448^2), [TE2])");
    visit(self.scaleMode, "scale-mode", "scale mode of every MX operand");
    visit(self.weights2d, "weights-2d",
          "16x16 weight blocks shared by Fprop and Dgrad (NVFP4 weights)");
    visit(self.keepFirst, "keep-first",
          "leading linear layers kept in high precision");
    visit(self.keepLast, "keep-last",
          "trailing linear layers kept in high precision");
    visit(self.keepFirstBlocks, "keep-first-blocks",
          "leading decoder blocks (fp4train.block) whose GEMMs keep the "
          "graph's precision");
    visit(self.keepLastBlocks, "keep-last-blocks",
          "trailing decoder blocks (fp4train.block) whose GEMMs keep the "
          "graph's precision");
    visit(self.quantizeRouter, "quantize-router",
          "quantize the GEMMs of mixture-of-experts routers "
          "(fp4train.router) too (1) or keep them in the graph's precision "
          "(0, the default)");
    visit(self.perExpertGlobalScale, "per-expert-global-scale",
          "one NVFP4 global scale per expert of an expert contraction (1, "
          "the default) or one per tensor (0)");
    visit(self.roles, "roles",
          "the roles quantized; the others keep the graph's precision");
  }

  /// Whether no field is set.
  bool empty() const;

  /// `recipe` with every set field applied. The result goes through the
  /// recipe's verifier, so an inconsistent combination is reported at
  /// `loc` (and null returned), never built.
  RecipeAttr apply(Location loc, RecipeAttr recipe) const;

  /// The set fields as pass options read them: `hadamard=32 roles=fprop`.
  void print(llvm::raw_ostream &os) const;
};

/// Prints an override's value as its option spells it; nothing when unset.
template <typename T>
llvm::raw_ostream &operator<<(llvm::raw_ostream &os, const Override<T> &value) {
  if (value)
    OverrideValue<T>::print(os, *value);
  return os;
}

#define FP4TRAIN_DECLARE_OVERRIDE_VALUE(T)                                     \
  template <> struct OverrideValue<T> {                                        \
    static std::optional<std::string> parse(llvm::StringRef text, T &value);   \
    static void print(llvm::raw_ostream &os, const T &value);                  \
    static llvm::StringRef getValueName();                                     \
  };
FP4TRAIN_DECLARE_OVERRIDE_VALUE(bool)
FP4TRAIN_DECLARE_OVERRIDE_VALUE(unsigned)
FP4TRAIN_DECLARE_OVERRIDE_VALUE(HadamardSigns)
FP4TRAIN_DECLARE_OVERRIDE_VALUE(ScaleMode)
FP4TRAIN_DECLARE_OVERRIDE_VALUE(HadamardPrecision)
FP4TRAIN_DECLARE_OVERRIDE_VALUE(GemmAlpha)
FP4TRAIN_DECLARE_OVERRIDE_VALUE(RoleSet)
#undef FP4TRAIN_DECLARE_OVERRIDE_VALUE

} // namespace fp4train
} // namespace mlir

#endif // FP4TRAIN_DIALECT_FP4TRAIN_IR_FP4TRAINRECIPES_H
