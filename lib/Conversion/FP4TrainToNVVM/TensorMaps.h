//===- TensorMaps.h - TMA tensor maps of staged tiles -----------*- C++ -*-===//
//
// The host side of the NVIDIA kernels that load their staged tiles by TMA
// (sm_100a/sm_103a's tcgen05 GEMM, [TMA1]; sm_90a's wgmma GEMM on operands
// already in their staged type, [WG5]; docs/nvvm.md).
//
//===----------------------------------------------------------------------===//

#ifndef FP4TRAIN_LIB_CONVERSION_FP4TRAINTONVVM_TENSORMAPS_H
#define FP4TRAIN_LIB_CONVERSION_FP4TRAINTONVVM_TENSORMAPS_H

#include "mlir/IR/Builders.h"

namespace mlir::fp4train {

/// Bytes of a row of a TMA box: one 128-byte swizzle row.
inline constexpr int64_t kTmaBoxRowBytes = 128;

/// A tensor map of `codes` (memref<batch x rows x row bytes x i8>) whose box
/// is 1 x `boxRows` x 128 bytes, landing in the 128-byte swizzled layout the
/// MMAs' matrix descriptors describe, rows and K bytes past the tensor
/// zero-filled. Host code at `b`'s insertion point; a kernel gets it as a
/// pointer (an argument of tensor-map type would not pass
/// convert-gpu-to-nvvm).
Value buildSwizzledTileMap(OpBuilder &b, Location loc, Value codes,
                           int64_t boxRows);

} // namespace mlir::fp4train

#endif // FP4TRAIN_LIB_CONVERSION_FP4TRAINTONVVM_TENSORMAPS_H
