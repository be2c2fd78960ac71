//===- BlockGemmKernels.h - Fast [GEMM1] kernels ----------------*- C++ -*-===//
//
// blockScaledGemm (BlockGemm.h) is the semantic reference of [GEMM1]. For
// E2M1 × E2M1 operands (MXFP4, NVFP4, mixed) it runs a packed int8 kernel
// instead, and for FP8 × FP8 operands with E8M0 scales (MXFP8) a packed
// double kernel ([GEMM2]), each chosen at run time for the CPU; the kernels
// produce the same bits as the reference (docs/numerics.md §7). This
// header lets tests and benchmarks name a kernel explicitly.
//
//===----------------------------------------------------------------------===//

#ifndef FP4TRAIN_NUMERICS_BLOCKGEMMKERNELS_H
#define FP4TRAIN_NUMERICS_BLOCKGEMMKERNELS_H

#include "fp4train/Numerics/BlockGemm.h"

#include <cstdint>
#include <string_view>

namespace fp4train::numerics {

/// Implementations of [GEMM1].
enum class GemmKernel : uint8_t {
  /// The scalar reference of BlockGemm.cpp: every format pair.
  Reference,
  /// Packed int8 panels, plain C++: any CPU.
  Portable,
  /// x86 AVX2: `vpmaddubsw` int8 dot products, `vfmadd231pd` ymm for FP8.
  AVX2,
  /// x86 AVX-512 VNNI: `vpdpbusd` int8 dot products, `vfmadd231pd` zmm for
  /// FP8.
  AVX512VNNI,
};

/// reference, portable, avx2, avx512-vnni.
std::string_view getGemmKernelName(GemmKernel kernel);

/// Whether this CPU can run `kernel`.
bool isGemmKernelAvailable(GemmKernel kernel);

/// The fastest available packed kernel; blockScaledGemm uses it.
GemmKernel getDefaultGemmKernel();

/// Whether the packed kernels handle this pair exactly, among operands that
/// blockScaledGemm accepts: E2M1 elements on both sides (any scale types and
/// arrangement) with a block size that is a multiple of 4 and at most 128,
/// or E4M3/E5M2 elements on both sides with E8M0 scales (blocks of at most
/// 65536).
bool isPackedGemmSupported(const GemmOperand &a, const GemmOperand &b);

/// blockScaledGemm with an explicit kernel. A packed kernel falls back to the
/// reference for pairs that isPackedGemmSupported rejects; a kernel this CPU
/// cannot run is an error.
Status blockScaledGemm(const GemmOperand &a, const GemmOperand &b,
                       const float *acc, float *c, GemmKernel kernel);

} // namespace fp4train::numerics

#endif // FP4TRAIN_NUMERICS_BLOCKGEMMKERNELS_H
