//===- Passes.h - fp4train transformation passes ----------------*- C++ -*-===//

#ifndef FP4TRAIN_DIALECT_FP4TRAIN_TRANSFORMS_PASSES_H
#define FP4TRAIN_DIALECT_FP4TRAIN_TRANSFORMS_PASSES_H

#include "fp4train/Dialect/FP4Train/IR/FP4TrainOps.h"
#include "fp4train/Dialect/FP4Train/IR/FP4TrainRecipes.h"
#include "fp4train/Dialect/FP4Train/Transforms/RoleAnalysis.h"
#include "mlir/Pass/Pass.h"

namespace mlir {
namespace fp4train {

#define GEN_PASS_DECL
#include "fp4train/Dialect/FP4Train/Transforms/Passes.h.inc"

/// fp4train-quantize-matmuls with the recipe overrides ([RO1]) set, as a
/// pipeline builds it.
std::unique_ptr<Pass>
createFP4TrainQuantizeMatmuls(const FP4TrainQuantizeMatmulsOptions &options,
                              const RecipeOverrides &overrides);

#define GEN_PASS_REGISTRATION
#include "fp4train/Dialect/FP4Train/Transforms/Passes.h.inc"

} // namespace fp4train
} // namespace mlir

#endif // FP4TRAIN_DIALECT_FP4TRAIN_TRANSFORMS_PASSES_H
