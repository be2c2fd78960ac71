//===- BlockGemmFP8.cpp - Packed double kernels for FP8 pairs ([GEMM2]) ---===//
//
// The FP8 (MXFP8) side of the packed kernels: operands are decoded once into
// double tiles, every MR × NR output tile runs one micro-kernel over all of
// K, and each block's dot products accumulate in double, which is exact for
// the block pairs isFastFP8Block admits (the argument is in PackedGemm.h).
// Block terms fold into the tile's f32 totals in increasing K order, as
// [GEMM1] requires. This file holds the packing, the driver, the exact
// fallback and the portable micro-kernel; the x86 micro-kernels live with
// their instruction sets (BlockGemmAVX2.cpp, BlockGemmAVX512.cpp).
//
//===----------------------------------------------------------------------===//

#include "PackedGemm.h"

#include "fp4train/Numerics/Parallel.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace fp4train::numerics {

using namespace packed;

namespace {

/// An operand in the FP8 layout of PackedGemm.h.
struct PackedFP8Operand {
  int64_t tiles = 0;
  CacheAlignedArray<double> values;
  CacheAlignedArray<double> scales;
  std::vector<FP8Range> ranges;
};

/// ilogb of an FP8 element and the exponent of its lowest set bit; for
/// zeros, NaN and Inf, values that leave a block's maximum and minimum
/// unchanged.
constexpr int16_t kNoTop = -1000, kNoBottom = 1000;

void getElementExponents(double x, int16_t &top, int16_t &bottom) {
  if (x == 0.0 || !std::isfinite(x)) {
    top = kNoTop;
    bottom = kNoBottom;
    return;
  }
  top = int16_t(std::ilogb(x));
  // Elements are multiples of 2^-16 below 2^16: the scaled magnitude is an
  // exact integer below 2^32.
  auto scaled = uint64_t(std::fabs(std::ldexp(x, 16)));
  bottom = int16_t(__builtin_ctzll(scaled) - 16);
}

void packFP8Operand(const GemmOperand &op, int tileRows,
                    PackedFP8Operand &out) {
  int64_t k = op.k, kBlocks = k / op.blockSize;
  out.tiles = (op.rows + tileRows - 1) / tileRows;
  out.values.resize(out.tiles * tileRows * k);
  out.scales.resize(out.tiles * kBlocks * tileRows);
  out.ranges.resize(out.tiles * kBlocks);

  double table[256];
  int16_t tops[256], bottoms[256];
  for (int code = 0; code < 256; ++code) {
    table[code] = decodeElement(op.elementType, uint8_t(code));
    getElementExponents(table[code], tops[code], bottoms[code]);
  }

  parallelFor(out.tiles, 1, [&](int64_t begin, int64_t end) {
    std::vector<int16_t> top(kBlocks), bottom(kBlocks);
    for (int64_t tile = begin; tile < end; ++tile) {
      double *values = out.values.data() + tile * tileRows * k;
      double *scales = out.scales.data() + tile * kBlocks * tileRows;
      std::fill(top.begin(), top.end(), kNoTop);
      std::fill(bottom.begin(), bottom.end(), kNoBottom);
      for (int r = 0; r < tileRows; ++r) {
        int64_t row = tile * tileRows + r;
        if (row >= op.rows) { // Zero elements and scales: nothing added.
          for (int64_t l = 0; l < k; ++l)
            values[l * tileRows + r] = 0.0;
          for (int64_t kb = 0; kb < kBlocks; ++kb)
            scales[kb * tileRows + r] = 0.0;
          continue;
        }
        const uint8_t *codes = op.codes + row * k;
        for (int64_t kb = 0; kb < kBlocks; ++kb) {
          int16_t blockTop = top[kb], blockBottom = bottom[kb];
          for (int64_t l = kb * op.blockSize; l < (kb + 1) * op.blockSize;
               ++l) {
            values[l * tileRows + r] = table[codes[l]];
            blockTop = std::max(blockTop, tops[codes[l]]);
            blockBottom = std::min(blockBottom, bottoms[codes[l]]);
          }
          top[kb] = blockTop;
          bottom[kb] = blockBottom;
          uint8_t scale =
              op.scales[row / op.scaleRowGroup * op.scaleRowStride + kb];
          scales[kb * tileRows + r] = decodeE8M0(scale);
        }
      }
      for (int64_t kb = 0; kb < kBlocks; ++kb)
        out.ranges[tile * kBlocks + kb] = {top[kb], bottom[kb],
                                           top[kb] != kNoTop};
    }
  });
}

struct FP8KernelShape {
  int mr, nr;
  void (*run)(const FP8TileTask &);
};

FP8KernelShape getFP8KernelShape(GemmKernel kernel) {
  switch (kernel) {
#if defined(__x86_64__)
  case GemmKernel::AVX2:
    return {kFP8AVX2MR, kFP8AVX2NR, microKernelFP8AVX2};
  case GemmKernel::AVX512VNNI:
    return {kFP8AVX512MR, kFP8AVX512NR, microKernelFP8AVX512};
#endif
  default:
    return {kFP8PortableMR, kFP8PortableNR, microKernelFP8Portable};
  }
}

} // namespace

void packed::addExactFP8BlockTerms(const double *a, const double *b, int mr,
                                   int nr, int64_t blockSize, const double *sa,
                                   const double *sb, float *total) {
  for (int i = 0; i < mr; ++i)
    for (int j = 0; j < nr; ++j) {
      bool finite = std::isfinite(sa[i]) && std::isfinite(sb[j]);
      for (int64_t l = 0; l < blockSize && finite; ++l)
        finite = std::isfinite(a[l * mr + i]) && std::isfinite(b[l * nr + j]);
      float term;
      if (finite) {
        // Elements times 2^16 are integers below 2^32: their products and
        // a block's sum fit in 128 bits.
        __int128 dot = 0;
        for (int64_t l = 0; l < blockSize; ++l)
          dot += __int128(int64_t(std::ldexp(a[l * mr + i], 16))) *
                 int64_t(std::ldexp(b[l * nr + j], 16));
        term = sa[i] == 0.0 || sb[j] == 0.0
                   ? 0.0f
                   : roundScaledIntegerToFloat(dot, std::ilogb(sa[i]) +
                                                        std::ilogb(sb[j]) - 32);
      } else {
        double sum = 0.0;
        for (int64_t l = 0; l < blockSize; ++l)
          sum += a[l * mr + i] * b[l * nr + j];
        term = float(sa[i] * sb[j] * sum);
      }
      total[i * nr + j] += term;
    }
}

void packed::microKernelFP8Portable(const FP8TileTask &task) {
  constexpr int MR = kFP8PortableMR, NR = kFP8PortableNR;
  const double *a = task.a, *b = task.b;
  for (int64_t kb = 0; kb < task.kBlocks; ++kb) {
    const double *sa = task.scaleA + kb * MR, *sb = task.scaleB + kb * NR;
    if (!isFastFP8Block(task.rangeA[kb], task.rangeB[kb], task.blockLog2)) {
      addExactFP8BlockTerms(a, b, MR, NR, task.blockSize, sa, sb, task.total);
      a += task.blockSize * MR;
      b += task.blockSize * NR;
      continue;
    }
    double p[MR * NR] = {};
    for (int64_t l = 0; l < task.blockSize; ++l, a += MR, b += NR)
      for (int i = 0; i < MR; ++i)
        for (int j = 0; j < NR; ++j)
          p[i * NR + j] += a[i] * b[j];
    for (int i = 0; i < MR; ++i)
      for (int j = 0; j < NR; ++j)
        task.total[i * NR + j] += float(p[i * NR + j] * (sa[i] * sb[j]));
  }
}

/// Cache blocking of the FP8 driver: a work item is a chunk of A tiles (about
/// kChunkRows rows) and a chunk of B tiles (about kChunkColumns rows); it
/// runs K in slices of kSliceBlocks blocks, so that the slice of both chunks
/// (≈ 96 and 256 rows × 128 values × 8 bytes) stays in L2 while every tile
/// pair of the item passes, and the item's totals carry the f32 sums from
/// one slice to the next, K order kept.
constexpr int64_t kChunkRows = 96, kChunkColumns = 256, kSliceValues = 128;

Status packed::runPackedFP8Gemm(const GemmOperand &a, const GemmOperand &b,
                                const float *acc, float *c, GemmKernel kernel) {
  FP8KernelShape shape = getFP8KernelShape(kernel);
  const int mr = shape.mr, nr = shape.nr;
  // Reused across calls, as the int8 kernels' scratch (BlockGemmKernels.cpp).
  thread_local PackedFP8Operand scratchA, scratchB;
  PackedFP8Operand &packedA = scratchA, &packedB = scratchB;
  packFP8Operand(a, mr, packedA);
  packFP8Operand(b, nr, packedB);

  int64_t k = a.k, kBlocks = k / a.blockSize;
  int blockLog2 = 0;
  while ((int64_t(1) << blockLog2) < a.blockSize)
    ++blockLog2;
  int64_t tilesA = packedA.tiles, tilesB = packedB.tiles;
  int64_t chunkA = std::max<int64_t>(1, kChunkRows / mr);
  int64_t chunkB = std::max<int64_t>(1, kChunkColumns / nr);
  int64_t sliceBlocks = std::max<int64_t>(1, kSliceValues / a.blockSize);
  int64_t chunksA = (tilesA + chunkA - 1) / chunkA;
  int64_t chunksB = (tilesB + chunkB - 1) / chunkB;
  float g = a.globalDecodeScale * b.globalDecodeScale;

  parallelFor(chunksA * chunksB, 1, [&](int64_t begin, int64_t end) {
    // T of the item's tile pairs, [tileA - firstA][tileB - firstB][mr · nr]:
    // at most chunkA · chunkB tiles, whatever the size of C.
    CacheAlignedArray<float> totals;
    totals.resize(chunkA * chunkB * mr * nr);
    for (int64_t item = begin; item < end; ++item) {
      int64_t firstA = item / chunksB * chunkA,
              firstB = item % chunksB * chunkB;
      int64_t lastA = std::min(tilesA, firstA + chunkA);
      int64_t lastB = std::min(tilesB, firstB + chunkB);
      auto total = [&](int64_t tileA, int64_t tileB) {
        return totals.data() +
               ((tileA - firstA) * chunkB + (tileB - firstB)) * mr * nr;
      };
      for (int64_t tileA = firstA; tileA < lastA; ++tileA)
        for (int64_t tileB = firstB; tileB < lastB; ++tileB)
          std::fill(total(tileA, tileB), total(tileA, tileB) + mr * nr, 0.0f);
      for (int64_t kb = 0; kb < kBlocks; kb += sliceBlocks) {
        int64_t k0 = kb * a.blockSize;
        for (int64_t tileB = firstB; tileB < lastB; ++tileB)
          for (int64_t tileA = firstA; tileA < lastA; ++tileA) {
            FP8TileTask task;
            task.a = packedA.values.data() + (tileA * k + k0) * mr;
            task.b = packedB.values.data() + (tileB * k + k0) * nr;
            task.scaleA = packedA.scales.data() + (tileA * kBlocks + kb) * mr;
            task.scaleB = packedB.scales.data() + (tileB * kBlocks + kb) * nr;
            task.rangeA = packedA.ranges.data() + tileA * kBlocks + kb;
            task.rangeB = packedB.ranges.data() + tileB * kBlocks + kb;
            task.kBlocks = std::min(sliceBlocks, kBlocks - kb);
            task.blockSize = a.blockSize;
            task.blockLog2 = blockLog2;
            task.total = total(tileA, tileB);
            shape.run(task);
          }
      }
      for (int64_t tileA = firstA; tileA < lastA; ++tileA)
        for (int64_t tileB = firstB; tileB < lastB; ++tileB)
          storeOutputTile(a.rows, b.rows, mr, nr, tileA, tileB, g, acc, c,
                          total(tileA, tileB));
    }
  });
  return Success{};
}

} // namespace fp4train::numerics
