//===- Wgmma.h - sm_90a warpgroup MMA models (wgmma.mma_async) -*- C++ -*-===//
//
// Models of Hopper's warpgroup-level MMA from the PTX ISA (§9.7.15
// "Asynchronous Warpgroup Level Matrix Multiply-Accumulate Instructions"),
// plain C++ on register and shared-memory contents like the other PTX
// models:
//  - the matrix descriptor (§9.7.15.5.1.2.2 "Matrix Descriptor Format"):
//    bits 0..13 start address, 16..29 leading dimension byte offset, 32..45
//    stride dimension byte offset (each matrix-descriptor-encode(x) =
//    (x & 0x3FFFF) >> 4), 49..51 the matrix base offset, 62..63 the swizzle
//    mode (0 none, 1 128-byte, 2 64-byte, 3 32-byte); the other bits
//    reserved;
//  - wgmma.mma_async.sync.aligned.m64nNk32.f32.atype.btype with .atype and
//    .btype in {.e4m3, .e5m2}, and m64nNk16.f32.f16.f16, A and B in shared
//    memory, both K-major (the only major-ness 8-bit types have; f16 may be
//    either, the model takes K-major), N a multiple of 8 in [8, 256]: D =
//    A·B + D, or D = A·B when scale-d is 0 (§9.7.15.5.2); a K-major row of
//    one instruction is 32 bytes either way;
//  - the accumulator fragment (§9.7.15.5.1.1, D of .m64nNk32 with .f32):
//    thread t of the warpgroup (warp w = t / 32, lane l) holds N / 2
//    registers; register i is D[16 w + l / 4 + 8 ((i / 2) % 2)]
//    [8 (i / 4) + 2 (l % 4) + i % 2] (the m16n8 C fragment of each warp's
//    16 rows, repeated for every 8 columns).
// The shared-memory matrix layouts are the canonical K-major ones that
// tcgen05 also reads (Tcgen05.h's getKMajorAddress: 8-row groups SBO
// apart, 8 x 16-byte core matrices LBO apart without swizzling, 32/64/128-
// byte swizzle rows otherwise); only the descriptor's encoding differs.
//
// Arithmetic: D = C + Σ_k a·b exact, rounded once to f32 nearest-even
// (BlockScaleArithmetic.h, the assumption the mma.sync models make too:
// the ISA leaves the internal precision open); without C (scale-d 0) the
// sum of the products alone, so an all-(-0) sum is -0.
//
//===----------------------------------------------------------------------===//

#ifndef FP4TRAIN_EMULATION_WGMMA_H
#define FP4TRAIN_EMULATION_WGMMA_H

#include "fp4train/Emulation/PTX.h"
#include "fp4train/Emulation/Tcgen05.h"

#include "llvm/ADT/ArrayRef.h"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace fp4train::emulation::ptx {

/// Threads of a warpgroup: four consecutive warps, the first a multiple of
/// four (§9.7.15.1).
inline constexpr unsigned kWarpgroupSize = 128;

/// Decodes a wgmma matrix descriptor, rejecting set reserved bits (14..15,
/// 30..31, 46..48, 52..61).
std::string decodeWgmmaDescriptor(uint64_t bits, SmemDescriptor *desc);

struct WgmmaConfig {
  /// N of m64nNk32 (m64nNk16 for f16).
  unsigned n = 8;
  /// E4M3/E5M2 for both (k32), or F16 for both (k16).
  ElementType typeA = ElementType::E4M3, typeB = ElementType::E4M3;
  /// scale-d: 1 adds the input accumulator, 0 ignores it.
  bool accumulate = true;
};

/// K of one wgmma of `config`'s types: 32 bytes of each K-major row.
inline unsigned getWgmmaK(const WgmmaConfig &config) {
  return config.typeA == ElementType::F16 ? 16 : 32;
}

/// The (row, column) of D that register `i` of warpgroup thread `thread`
/// (0..127) holds.
std::pair<unsigned, unsigned> getWgmmaAccumulatorPosition(unsigned thread,
                                                          unsigned i);

/// One warpgroup's wgmma.mma_async.sync.aligned.m64nNkK.f32.atype.btype
/// (K = getWgmmaK): A (64 x K) through `descA`, B (N x K, the columns of B
/// as K-major rows) through `descB`, both read from `smem`; `c` and `d`
/// hold the 128 threads' N / 2 f32 registers (`d` may alias `c`).
std::string wgmma(const WgmmaConfig &config, uint64_t descA, uint64_t descB,
                  SharedMemory &smem, llvm::ArrayRef<std::vector<uint32_t>> c,
                  std::vector<std::vector<uint32_t>> *d);

} // namespace fp4train::emulation::ptx

#endif // FP4TRAIN_EMULATION_WGMMA_H
