//===- BlockGemm.h - Reference block-scaled matmul ([GEMM1]) ---*- C++ -*-===//
//
// C[M,N] = acc[M,N] + g · Σ_b sa·sb·P[b] with exact block dot products and an
// f32 sum over K blocks in increasing order, exactly as [GEMM1] defines it.
// The CPU paths of the compiler must agree with this bit for bit.
//
//===----------------------------------------------------------------------===//

#ifndef FP4TRAIN_NUMERICS_BLOCKGEMM_H
#define FP4TRAIN_NUMERICS_BLOCKGEMM_H

#include "fp4train/Numerics/BlockQuant.h"
#include "fp4train/Numerics/Error.h"
#include "fp4train/Numerics/Formats.h"

#include <cstdint>

namespace fp4train::numerics {

/// One operand of [GEMM1]: element codes [rows, k], row-major, in blocks of
/// `blockSize` along k. The scale of (row, kBlock) is
/// scales[(row / scaleRowGroup) · scaleRowStride + kBlock], so 1-D blocks use
/// scaleRowGroup = 1 and 2-D blockSize×blockSize tiles scaleRowGroup =
/// blockSize; any other per-(row, kBlock) arrangement can be described too.
struct GemmOperand {
  const uint8_t *codes = nullptr;
  int64_t rows = 0;
  int64_t k = 0;
  ElementType elementType = ElementType::E2M1;
  ScaleType scaleType = ScaleType::E8M0;
  int64_t blockSize = 32;
  const uint8_t *scales = nullptr;
  int64_t scaleRowGroup = 1;
  int64_t scaleRowStride = 0;
  /// S_dec of NVFP4, 1 for the MX formats.
  float globalDecodeScale = 1.0f;
};

/// Views a rank-2 quantized tensor [rows, K], blocked along K (1-D) or in
/// 2-D tiles, as a GEMM operand. The tensor must outlive the view.
Expected<GemmOperand> makeGemmOperand(const QuantizedTensor &tensor);

/// Rounds value · 2^exponent to the nearest f32, ties to even, once.
float roundScaledIntegerToFloat(__int128 value, int exponent);

/// [GEMM1] c[i·N + j] = acc[i·N + j] + f32(g · T[i,j]) for A [M,K] and B [N,K]
/// with
///   P[i,j,b] = Σ_{k∈b} a[i,k]·b[j,k]                        exact (integers)
///   T[i,j]   = Σ_b f32(sa[i,b]·sb[j,b]·P[i,j,b])             f32, from 0,
///                                                           b increasing
///   g        = f32(S_dec,a · S_dec,b)
/// Each term is rounded once from its exact value. A block pair holding a NaN
/// or Inf (element or scale) contributes the IEEE double evaluation of its
/// term, so NaN and Inf propagate as in a float dot product. `acc` may be
/// null (zeros) and may alias `c`. E2M1 x E2M1 products run on the packed
/// int8 kernels of BlockGemmKernels.h and FP8 x FP8 products with E8M0
/// scales on its packed double kernels ([GEMM2]), chosen for this CPU;
/// everything else on the reference. All are multithreaded over output
/// tiles, each output is computed by one thread, and the result does not
/// depend on the kernel or the thread count (up to a NaN's sign and
/// payload).
Status blockScaledGemm(const GemmOperand &a, const GemmOperand &b,
                       const float *acc, float *c);

} // namespace fp4train::numerics

#endif // FP4TRAIN_NUMERICS_BLOCKGEMM_H
