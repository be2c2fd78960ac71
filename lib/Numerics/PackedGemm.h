//===- PackedGemm.h - Packed int8 panels for [GEMM1] kernels ----*- C++ -*-===//
//
// Private to the numerics library: the data layout shared by the packed
// [GEMM1] kernels (BlockGemmKernels.cpp drives them; one file per ISA
// implements the micro-kernel) and the one exact block-term evaluation they
// all fall back to.
//
// Why integers are exact here: an E2M1 value times 2 is an integer in
// [-12, 12], so a block product P = Σ a·b is (Σ 2a·2b) / 4 with an integer
// numerator of at most 144 · 128 in magnitude. Folding the 1/2 of each side
// into the scales (h = scale / 2), [GEMM1]'s term f32(sa·sb·P) is
// f32(ha·hb·p) with p the integer dot product of the doubled codes.
//
// Layout, for an operand cut into tiles of R rows (R = MR for A, NR for B),
// rows past the end padded with zero elements and zero scales:
//   codes [tile][k / 4][row in tile][k % 4]  doubled E2M1 values; A adds
//         kOffset so that they are unsigned, as vpmaddubsw/vpdpbusd want;
//   scales [tile][kBlock][row in tile]      h = scale / 2, NaN for NaN scales;
//   corrections [tile][kBlock][row in tile][2]  B only, int16:
//         -kOffset · Σ b over the block's k with k % 4 < 2 and k % 4 ≥ 2,
//         which removes A's offset, Σ (a + 12)·b - 12·Σ b = Σ a·b. The two
//         halves match the two int16 lanes vpmaddubsw fills per column; their
//         sum is the int32 correction;
//   ranges [tile][kBlock]                   exponent range of the finite
//         nonzero h of the tile, to prove the f32 fast path exact.
//
//===----------------------------------------------------------------------===//

#ifndef FP4TRAIN_LIB_NUMERICS_PACKEDGEMM_H
#define FP4TRAIN_LIB_NUMERICS_PACKEDGEMM_H

#include "fp4train/Numerics/BlockGemmKernels.h"

#include <cstdint>

namespace fp4train::numerics::packed {

/// Added to A's doubled codes to make them unsigned bytes in [0, 24].
inline constexpr int kOffset = 12;

/// ilogb range of a tile's finite nonzero block scales h in one K block;
/// {0, 0} when there are none.
struct ExponentRange {
  int16_t min = 0, max = 0;
};

/// Whether the f32 fast path is exact for every scale pair of two tiles in
/// one K block. ha and hb have at most 4 significant bits each and |p| <
/// 2^15, so p·ha·hb has at most 23. With 2^(ea+eb) ≥ 2^-126 and
/// 2^(ea+eb+2) · 2^15 ≤ 2^128, both ha·hb and p·(ha·hb) are normal finite
/// f32 values and therefore exact: the term [GEMM1] rounds once is exactly
/// representable, and T + term may be computed as one fused multiply-add
/// fma(f32(p), ha·hb, T), whose single rounding is that of the addition.
/// Zero and NaN scales need no proof: the product is 0 or NaN like the exact
/// term (the reference evaluates a NaN block in IEEE double, giving NaN too).
inline bool isFastBlock(ExponentRange a, ExponentRange b) {
  return a.min + b.min >= -126 && a.max + b.max <= 111;
}

/// One MR × NR output tile over all of K. The micro-kernel writes T[i,j] of
/// [GEMM1] (before g and acc) to total[i · NR + j].
struct TileTask {
  const uint8_t *a;           // codes of the A tile
  const uint8_t *b;           // codes of the B tile (int8 bit patterns)
  const float *scaleA;        // [kBlock][MR]
  const float *scaleB;        // [kBlock][NR]
  const int16_t *correctionB; // [kBlock][NR][2]
  const ExponentRange *rangeA, *rangeB; // [kBlock]
  int64_t kBlocks;
  int64_t groupsPerBlock; // blockSize / 4
  float *total;
};

/// total[i·nr + j] += f32(ha[i]·hb[j]·p[i·nr + j]) for an mr × nr tile of one
/// block, each term evaluated exactly in double (≤ 8 + 15 significant bits,
/// exponents far inside double's range) and rounded to f32 once. The packed
/// kernels use it where isFastBlock cannot prove the f32 shortcut exact.
inline void addExactBlockTerms(const int32_t *p, const float *ha,
                               const float *hb, int mr, int nr, float *total) {
  for (int i = 0; i < mr; ++i)
    for (int j = 0; j < nr; ++j)
      total[i * nr + j] +=
          float(double(ha[i]) * double(hb[j]) * double(p[i * nr + j]));
}

/// Runs a packed kernel (not Reference) on a pair that isPackedGemmSupported
/// accepts, on a CPU that has it.
Status runPackedGemm(const GemmOperand &a, const GemmOperand &b,
                     const float *acc, float *c, GemmKernel kernel);

/// out[i] = table[codes[i] & 0xF] for i < count.
void translateCodesPortable(const uint8_t *codes, int64_t count,
                            const uint8_t table[16], uint8_t *out);

/// The micro-kernels, one per ISA file, each with its tile shape.
void microKernelPortable(const TileTask &task);
inline constexpr int kPortableMR = 4, kPortableNR = 8;
#if defined(__x86_64__)
void microKernelAVX2(const TileTask &task);
void translateCodesAVX2(const uint8_t *codes, int64_t count,
                        const uint8_t table[16], uint8_t *out);
inline constexpr int kAVX2MR = 6, kAVX2NR = 16;
void microKernelAVX512VNNI(const TileTask &task);
inline constexpr int kAVX512MR = 8, kAVX512NR = 32;
#endif

} // namespace fp4train::numerics::packed

#endif // FP4TRAIN_LIB_NUMERICS_PACKEDGEMM_H
