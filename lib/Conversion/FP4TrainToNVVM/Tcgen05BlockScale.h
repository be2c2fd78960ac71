//===- Tcgen05BlockScale.h - sm_100a/sm_103a tcgen05 GEMM kernel -*- C++
//-*-===//
//
// The block-scaled GEMM of the tcgen05 chips (B200/GB200: sm_100a, B300:
// sm_103a): tcgen05.mma with the accumulator and the block scales in tensor
// memory, operands in shared memory behind matrix descriptors (128-byte
// swizzle), a 4-stage mbarrier pipeline between producer warps (codes by
// TMA, [TMA1], or cp.async) and one MMA-issuing thread, two accumulators that
// the epilogue warps drain while the next tile's MMAs run, and a persistent
// tile loop (Tcgen05BlockScale.cpp has the layouts, docs/nvvm.md the picture).
// Quantize and Hadamard kernels are the shared ones on BlackwellTargetInfo.
//
//===----------------------------------------------------------------------===//

#ifndef FP4TRAIN_LIB_CONVERSION_FP4TRAINTONVVM_TCGEN05BLOCKSCALE_H
#define FP4TRAIN_LIB_CONVERSION_FP4TRAINTONVVM_TCGEN05BLOCKSCALE_H

#include "fp4train/Conversion/FP4TrainToNVVM/FP4TrainToNVVM.h"

#include <optional>
#include <string>

namespace mlir::fp4train {
class ScaledMatmulOp;

/// Rows of A and of B^T (columns of C) per workgroup tile of the tcgen05
/// kernel: one M = 128, N = 128 MMA.
inline constexpr int64_t kTcgen05TileRows = 128;

/// Why the tcgen05 kernel cannot take `op`'s operands, as the end of a
/// sentence "the chip ...", or std::nullopt.
std::optional<std::string> getTcgen05UnsupportedReason(ScaledMatmulOp op);

/// The persistent kernel's workgroups when fp4train-to-nvvm's
/// `gemm-workgroups` is 0: B200's 148 SMs (one workgroup fits an SM).
inline constexpr int64_t kTcgen05DefaultWorkgroups = 148;

/// Rewrites `op` (operands in fp4train-expand's 1:N conversion) into a
/// gpu.launch of the persistent tcgen05 kernel for `target` (sm_100a or
/// sm_103a) on min(`workgroups`, output tiles) workgroups; with `pair`
/// ([PAIR1] in docs/nvvm.md), clusters of two workgroups compute 256 x 128
/// tiles with cta_group::2 MMAs (min(2 x tiles, workgroups) rounded down to
/// an even count, at least 2). The caller has checked
/// getTcgen05UnsupportedReason.
LogicalResult lowerScaledMatmulToTcgen05Kernel(
    ScaledMatmulOp op, ValueRange lhs, ValueRange rhs, Value acc,
    const GPUTarget &target, int64_t workgroups, bool pair,
    ConversionPatternRewriter &rewriter);

} // namespace mlir::fp4train

#endif // FP4TRAIN_LIB_CONVERSION_FP4TRAINTONVVM_TCGEN05BLOCKSCALE_H
