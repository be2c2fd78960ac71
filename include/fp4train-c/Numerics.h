/*===- fp4train-c/Numerics.h - Block quantization on caller buffers -*- C
-*-===*\
|*                                                                            *|
|* The numerics library (MXFP4, NVFP4, MXFP8 block quantization, stochastic  *|
|* rounding, Hadamard rotations) on row-major buffers the caller owns. The    *|
|* options are those of `fp4-quant quantize`, spelled the same, checked the   *|
|* same way and computing the same bits. No MLIR context is needed. Failures  *|
|* return a failed MlirLogicalResult and pass fp4-quant's one-line message,   *|
|* options named without dashes (`seed requires rounding sr ...`), to         *|
|* `onError(message, userData)` when `onError` is not null.                   *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#ifndef FP4TRAIN_C_NUMERICS_H
#define FP4TRAIN_C_NUMERICS_H

#include "mlir-c/Support.h"

#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// The options of `fp4-quant quantize`. Initialize with
/// fp4trainQuantOptionsInit, then set what differs from fp4-quant's defaults.
/// String fields are null-terminated; NULL means "option not given".
typedef struct FP4TrainQuantOptions {
  /// `mxfp4`, `nvfp4`, `mxfp8-e4m3` or `mxfp8-e5m2` (required).
  const char *format;
  /// `floor` or `rceil` (MX formats only; NULL: floor).
  const char *scaleMode;
  /// `16`, `32` or `16x16` (NULL: the format's default, 32 or 16).
  const char *block;
  /// The blocked axis, negative counting from the end (default -1).
  int64_t axis;
  /// `rne` or `sr` (NULL: rne).
  const char *rounding;
  /// Whether `seed` is given; it keys stochastic rounding and random
  /// Hadamard signs and needs `rounding = "sr"` or `signs = "random"`.
  bool hasSeed;
  uint64_t seed;
  /// NVFP4: use `amax` as the tensor's absolute maximum instead of computing
  /// it.
  bool hasAmax;
  float amax;
  /// A Hadamard rotation of this size (16, 32, 64, 128 or 256) along `axis`
  /// before quantization; 0 for none.
  int64_t hadamard;
  /// `none`, `fixed` or `random` (needs `hadamard`; NULL: none).
  const char *signs;
  /// The step that re-draws random signs (needs `signs = "random"`).
  bool hasStep;
  uint64_t step;
  /// Rotate dequantized values back (needs `hadamard`).
  bool unrotate;
} FP4TrainQuantOptions;

/// Sets every field of `options` to "not given" (fp4-quant's defaults) and
/// `format` to NULL.
MLIR_CAPI_EXPORTED void fp4trainQuantOptionsInit(FP4TrainQuantOptions *options);

/// Checks `options` against a tensor of shape `shape[0..rank)` and writes the
/// shape of its scale codes to `scalesShape[0..rank)`: the blocked dimension
/// (both of the last two for 16x16) divided by the block size.
MLIR_CAPI_EXPORTED MlirLogicalResult fp4trainQuantizeGetScalesShape(
    const FP4TrainQuantOptions *options, intptr_t rank, const int64_t *shape,
    int64_t *scalesShape, MlirStringCallback onError, void *userData);

/// Quantizes the row-major f32 tensor `data` of shape `shape[0..rank)` like
/// `fp4-quant quantize`: writes one element code per element to `codes`, the
/// scale codes (shape from fp4trainQuantizeGetScalesShape) to `scales`, and,
/// when not NULL, `[amax, S_dec]` to `globalScale[0..2)` (NVFP4; `[0, 1]` for
/// MX formats) and the dequantized values to `dequantized` (rotated back only
/// with `unrotate`). `data` is not modified (a rotation works on a copy).
MLIR_CAPI_EXPORTED MlirLogicalResult fp4trainQuantize(
    const FP4TrainQuantOptions *options, intptr_t rank, const int64_t *shape,
    const float *data, uint8_t *codes, uint8_t *scales, float *globalScale,
    float *dequantized, MlirStringCallback onError, void *userData);

/// Decodes `codes` and `scales` made by fp4trainQuantize with the same
/// `options` and shape into `out` (one f32 per element). `globalDecodeScale`
/// is NVFP4's S_dec (ignored, use 1, for MX formats). With `options->unrotate`
/// the values are rotated back by the options' Hadamard rotation.
MLIR_CAPI_EXPORTED MlirLogicalResult fp4trainDequantize(
    const FP4TrainQuantOptions *options, intptr_t rank, const int64_t *shape,
    const uint8_t *codes, const uint8_t *scales, float globalDecodeScale,
    float *out, MlirStringCallback onError, void *userData);

/// Rotates `data` (shape `shape[0..rank)`) in place by the block Hadamard
/// rotation [H1] of `size` points along `axis` with sign mode `signs`
/// (`none`, `fixed` or `random`; random signs are drawn from `seed` and
/// `step`), or by its inverse when `inverse`.
MLIR_CAPI_EXPORTED MlirLogicalResult fp4trainHadamardRotate(
    intptr_t rank, const int64_t *shape, float *data, int64_t size,
    const char *signs, uint64_t seed, uint64_t step, int64_t axis, bool inverse,
    MlirStringCallback onError, void *userData);

#ifdef __cplusplus
}
#endif

#endif // FP4TRAIN_C_NUMERICS_H
