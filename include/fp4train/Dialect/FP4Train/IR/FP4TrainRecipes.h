//===- FP4TrainRecipes.h - Named training recipes ---------------*- C++ -*-===//
//
// The recipes of DESIGN.md §3 as `#fp4train.recipe` values, so passes and
// tools accept `recipe=nvfp4` and users can still spell any other recipe as
// an attribute.
//
//===----------------------------------------------------------------------===//

#ifndef FP4TRAIN_DIALECT_FP4TRAIN_IR_FP4TRAINRECIPES_H
#define FP4TRAIN_DIALECT_FP4TRAIN_IR_FP4TRAINRECIPES_H

#include "fp4train/Dialect/FP4Train/IR/FP4TrainAttrs.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

namespace mlir {
class Location;
class MLIRContext;

namespace fp4train {

/// Names of the preset recipes, in the order of DESIGN.md §3, followed by
/// `none` (every GEMM stays in high precision).
llvm::ArrayRef<llvm::StringRef> getRecipePresetNames();

/// Returns the preset recipe called `name`, or null when there is none.
RecipeAttr getRecipePreset(MLIRContext *context, llvm::StringRef name);

/// Parses `text`, a preset name or the text of a `#fp4train.recipe<...>`
/// attribute, as the `recipe` option of the quantize passes takes it. Returns
/// null after emitting an error at `loc` otherwise.
RecipeAttr parseRecipe(Location loc, llvm::StringRef text);

} // namespace fp4train
} // namespace mlir

#endif // FP4TRAIN_DIALECT_FP4TRAIN_IR_FP4TRAINRECIPES_H
