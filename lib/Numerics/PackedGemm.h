//===- PackedGemm.h - Packed panels for [GEMM1] kernels ---------*- C++ -*-===//
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
#include <functional>
#include <vector>

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

/// A growable array whose elements start at a 64-byte boundary, so that the
/// kernels' vector loads of aligned offsets never straddle two cache lines
/// (a line split costs a second load on current x86 cores).
template <typename T> class CacheAlignedArray {
public:
  void resize(size_t size) {
    storage.resize(size + kLineBytes / sizeof(T));
    auto address = reinterpret_cast<uintptr_t>(storage.data());
    offset = (-address & (kLineBytes - 1)) / sizeof(T);
  }
  T *data() { return storage.data() + offset; }
  const T *data() const { return storage.data() + offset; }

private:
  static constexpr uintptr_t kLineBytes = 64;
  std::vector<T> storage;
  size_t offset = 0;
};

/// Stores C = acc + f32(g · T) for the outputs of tile pair (tileA, tileB)
/// that lie inside the m × n result, T being the pair's `total`.
void storeOutputTile(int64_t m, int64_t n, int mr, int nr, int64_t tileA,
                     int64_t tileB, float g, const float *acc, float *c,
                     const float *total);

/// The loop of the int8 kernels: for each pair of an A tile (of `mr`
/// rows) and a B tile (of `nr`), `runTile(tileA, tileB, total)` writes the
/// pair's T[i,j] of [GEMM1] to total[i · nr + j], and the loop stores
/// C = acc + f32(g · T). A chunk of A tiles (`aTileBytes` each) stays in L2
/// while every B tile passes; each output is written by one thread.
void forEachOutputTile(
    int64_t m, int64_t n, int mr, int nr, int64_t tilesA, int64_t tilesB,
    int64_t aTileBytes, float g, const float *acc, float *c,
    const std::function<void(int64_t, int64_t, float *)> &runTile);

//===----------------------------------------------------------------------===//
// FP8 pairs: E4M3FN or E5M2 on either side, E8M0 scales (MXFP8)
//===----------------------------------------------------------------------===//
//
// Why double is exact here ([GEMM2]). Every finite FP8 element is x = odd · 2^e
// with at most 4 significant bits, so a product x·y has at most 8 and is exact
// in double. For one block pair let topA = max ilogb(x) and bottomA = min e
// over A's finite nonzero elements (likewise for B) and s = ceil(log2
// blockSize). Every product is an integer multiple of 2^(bottomA + bottomB)
// below 2^(topA + topB + 2) in magnitude, so every partial sum of the block, in
// any order, is such a multiple below 2^(topA + topB + 2 + s). When that span
// is at most 53 bits, double's significand is a fixed-point accumulator wide
// enough: every multiply-add is exact and P comes out exact whatever the
// summation order. E4M3 × E4M3 always qualifies (top ≤ 8, bottom ≥ -9:
// 8+8+2+5+18 = 41 bits for blocks of 32); pairs with an E5M2 side (top ≤ 15,
// bottom ≥ -16) need up to 55 or 69 bits, so their blocks take the check, and a
// block pair that fails it is evaluated exactly in integers
// (addExactFP8BlockTerms). With E8M0 scales sa·sb = 2^(ea+eb), |ea + eb| ≤ 254,
// and P·sa·sb is exact in double (|P| ≥ 2^-32 when nonzero, far above double's
// 2^-1074), so f32(P · (sa·sb)) is [GEMM1]'s term rounded once: the conversion
// rounds to nearest even, to f32 subnormals and to ±Inf as the reference does.
// NaN and Inf elements or NaN scales make the double evaluation NaN or ±Inf
// exactly as the reference's IEEE double evaluation of such a block.
//
// Layout, for tiles of R rows (rows past the end: zero elements and scales):
//   values [tile][k][row in tile]      elements decoded to double;
//   scales [tile][kBlock][row in tile] E8M0 scales as double (NaN for 0xFF);
//   ranges [tile][kBlock]              FP8Range of the tile's block.

/// ilogb and lowest-set-bit exponents of a tile's finite nonzero elements in
/// one K block; `any` is false when there are none.
struct FP8Range {
  int16_t top = 0, bottom = 0;
  bool any = false;
};

/// Whether every double multiply-add of the block pair is exact (above).
inline bool isFastFP8Block(FP8Range a, FP8Range b, int blockLog2) {
  return !a.any || !b.any ||
         a.top + b.top + 2 + blockLog2 - (a.bottom + b.bottom) <= 53;
}

/// One MR × NR output tile of an FP8 pair over `kBlocks` consecutive K
/// blocks; the micro-kernel adds their terms of [GEMM1], in K order, to
/// the f32 sums in total[i · NR + j].
struct FP8TileTask {
  const double *a;                 // values of the A tile, [k][MR]
  const double *b;                 // values of the B tile, [k][NR]
  const double *scaleA;            // [kBlock][MR]
  const double *scaleB;            // [kBlock][NR]
  const FP8Range *rangeA, *rangeB; // [kBlock]
  int64_t kBlocks;
  int64_t blockSize;
  int blockLog2;
  float *total;
};

/// total[i·nr + j] += the term of one block for an mr × nr tile, from the
/// block's values (`a` [blockSize][mr], `b` [blockSize][nr]) and scales:
/// an exact integer dot product rounded once, or the IEEE double evaluation
/// where an element or scale is NaN or Inf (the reference's two cases).
void addExactFP8BlockTerms(const double *a, const double *b, int mr, int nr,
                           int64_t blockSize, const double *sa,
                           const double *sb, float *total);

/// Runs the FP8 kernel of `kernel`'s instruction set on a pair that
/// isPackedGemmSupported accepts.
Status runPackedFP8Gemm(const GemmOperand &a, const GemmOperand &b,
                        const float *acc, float *c, GemmKernel kernel);

void microKernelFP8Portable(const FP8TileTask &task);
inline constexpr int kFP8PortableMR = 4, kFP8PortableNR = 8;
#if defined(__x86_64__)
void microKernelFP8AVX2(const FP8TileTask &task);
inline constexpr int kFP8AVX2MR = 6, kFP8AVX2NR = 8;
void microKernelFP8AVX512(const FP8TileTask &task);
inline constexpr int kFP8AVX512MR = 12, kFP8AVX512NR = 16;
#endif

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
