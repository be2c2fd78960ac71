/*===- fp4train-c/Dialects.h - C API of the fp4train dialect ------*- C -*-===*\
|*                                                                            *|
|* Registration of the dialect and of everything a training graph needs, and *|
|* accessors for `!fp4train.scaled` types and `#fp4train.recipe` attributes.  *|
|* Follows MLIR's C API conventions: value handles, MlirStringRef text that  *|
|* is not null-terminated, a null handle (check with mlir*IsNull) on failure. *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#ifndef FP4TRAIN_C_DIALECTS_H
#define FP4TRAIN_C_DIALECTS_H

#include "mlir-c/IR.h"
#include "mlir-c/Support.h"

#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// The handle of the fp4train dialect alone:
/// `mlirGetDialectHandle__fp4train__()`. Registering it does not make the
/// upstream dialects of a training graph (linalg, tensor, ...) available; use
/// fp4trainRegisterRequiredDialects for that.
MLIR_DECLARE_CAPI_DIALECT_REGISTRATION(FP4Train, fp4train);

/// Adds to `registry` the fp4train dialect, the upstream dialects a training
/// graph and its CPU, ROCDL and NVVM lowerings use (func, arith, math, linalg,
/// tensor, scf, bufferization, memref, vector, gpu, amdgpu, rocdl, nvvm, llvm,
/// ...), and their external interface models (bufferization, tiling,
/// conversion to LLVM, translation to LLVM IR): what `fp4-opt` registers.
/// Append the registry to a context (mlirContextAppendDialectRegistry) before
/// parsing training graphs in it.
MLIR_CAPI_EXPORTED void
fp4trainRegisterRequiredDialects(MlirDialectRegistry registry);

//===----------------------------------------------------------------------===//
// !fp4train.scaled
//===----------------------------------------------------------------------===//

/// Returns true if `type` is a `!fp4train.scaled` block-scaled tensor type.
MLIR_CAPI_EXPORTED bool fp4trainTypeIsAScaledTensor(MlirType type);

/// Returns the `!fp4train.scaled` type of logical shape `shape[0..rank)`,
/// element type `elementType`, block shape `blockShape[0..rank)` (1 for an
/// unblocked dimension), scale type `scaleType` and, if `hasGlobalScale`, an
/// f32 global scale. Returns a null type and reports the verifier's message
/// through `onError(message, userData)` (if not null) when the combination is
/// not one of the design's formats.
MLIR_CAPI_EXPORTED MlirType fp4trainScaledTensorTypeGetChecked(
    MlirContext context, intptr_t rank, const int64_t *shape,
    MlirType elementType, const int64_t *blockShape, MlirType scaleType,
    bool hasGlobalScale, MlirStringCallback onError, void *userData);

/// The rank of a `!fp4train.scaled` type.
MLIR_CAPI_EXPORTED intptr_t fp4trainScaledTensorTypeGetRank(MlirType type);

/// The size of dimension `dim` (in [0, rank)) of the logical shape.
MLIR_CAPI_EXPORTED int64_t fp4trainScaledTensorTypeGetDimSize(MlirType type,
                                                              intptr_t dim);

/// The block size along dimension `dim` (1 when the dimension is not blocked).
MLIR_CAPI_EXPORTED int64_t fp4trainScaledTensorTypeGetBlockSize(MlirType type,
                                                                intptr_t dim);

/// The element type (f4E2M1FN, f8E4M3FN or f8E5M2).
MLIR_CAPI_EXPORTED MlirType
fp4trainScaledTensorTypeGetElementType(MlirType type);

/// The scale type (f8E8M0FNU for MX formats, f8E4M3FN for NVFP4).
MLIR_CAPI_EXPORTED MlirType fp4trainScaledTensorTypeGetScaleType(MlirType type);

/// Whether the type carries an f32 per-tensor global scale (NVFP4 `global`).
MLIR_CAPI_EXPORTED bool fp4trainScaledTensorTypeHasGlobalScale(MlirType type);

//===----------------------------------------------------------------------===//
// #fp4train.recipe and its parts
//===----------------------------------------------------------------------===//

/// The GEMM roles of role inference (docs/semantics.md, [ROLE1]-[ROLE7]).
typedef enum FP4TrainRole {
  FP4TrainRoleFprop = 0,
  FP4TrainRoleDgrad = 1,
  FP4TrainRoleWgrad = 2,
} FP4TrainRole;

/// Returns true if `attr` is a `#fp4train.recipe`.
MLIR_CAPI_EXPORTED bool fp4trainAttributeIsARecipe(MlirAttribute attr);

/// Returns the recipe `text` names: a preset name (`nvfp4`, `mxfp4`,
/// `mxfp4-hadamard`, ..., `none`) or the text of a `#fp4train.recipe<...>`
/// attribute, as the `recipe` option of the quantize pipelines accepts.
/// Returns a null attribute and reports why through `onError` (if not null)
/// otherwise; nothing is printed.
MLIR_CAPI_EXPORTED MlirAttribute
fp4trainRecipeAttrParse(MlirContext context, MlirStringRef text,
                        MlirStringCallback onError, void *userData);

/// The number of preset recipes; their names are returned by
/// fp4trainRecipeGetPresetName(0..n).
MLIR_CAPI_EXPORTED intptr_t fp4trainRecipeGetNumPresets(void);

/// The name of preset `pos`, in the order of the presets table [RCP2]
/// (docs/recipes.md; `none` last).
MLIR_CAPI_EXPORTED MlirStringRef fp4trainRecipeGetPresetName(intptr_t pos);

/// The recipe's `name` parameter (empty when the attribute has none).
MLIR_CAPI_EXPORTED MlirStringRef fp4trainRecipeAttrGetName(MlirAttribute attr);

/// Whether weights use 16x16 blocks (`weights_2d`).
MLIR_CAPI_EXPORTED bool fp4trainRecipeAttrGetWeights2D(MlirAttribute attr);

/// How many leading / trailing linear layers stay in high precision.
MLIR_CAPI_EXPORTED unsigned fp4trainRecipeAttrGetKeepFirst(MlirAttribute attr);
MLIR_CAPI_EXPORTED unsigned fp4trainRecipeAttrGetKeepLast(MlirAttribute attr);

/// The `#fp4train.gemm` settings of `role`, or a null attribute when that
/// role stays in high precision.
MLIR_CAPI_EXPORTED MlirAttribute fp4trainRecipeAttrGetGemm(MlirAttribute attr,
                                                           FP4TrainRole role);

/// The `#fp4train.quant` of the left (`lhs = true`) or right operand of a
/// `#fp4train.gemm`.
MLIR_CAPI_EXPORTED MlirAttribute fp4trainGemmAttrGetOperand(MlirAttribute gemm,
                                                            bool lhs);

/// The Hadamard size of a `#fp4train.gemm` (0 when it has no rotation) and
/// its sign mode (`none`, `fixed` or `random`; empty without a rotation).
MLIR_CAPI_EXPORTED int64_t fp4trainGemmAttrGetHadamardSize(MlirAttribute gemm);
MLIR_CAPI_EXPORTED MlirStringRef
fp4trainGemmAttrGetHadamardSigns(MlirAttribute gemm);

/// The format (`mxfp4`, `nvfp4`, `mxfp8_e4m3`, `mxfp8_e5m2`), rounding
/// (`nearest_even`, `stochastic`) and scale mode (`floor`, `rceil`) of a
/// `#fp4train.quant`, spelled as in the attribute's syntax.
MLIR_CAPI_EXPORTED MlirStringRef fp4trainQuantAttrGetFormat(MlirAttribute q);
MLIR_CAPI_EXPORTED MlirStringRef fp4trainQuantAttrGetRounding(MlirAttribute q);
MLIR_CAPI_EXPORTED MlirStringRef fp4trainQuantAttrGetScaleMode(MlirAttribute q);

#ifdef __cplusplus
}
#endif

#endif // FP4TRAIN_C_DIALECTS_H
