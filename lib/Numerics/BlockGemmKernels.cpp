//===- BlockGemmKernels.cpp - Packed int8 [GEMM1] kernels -----------------===//
//
// The driver of the packed kernels (layout in PackedGemm.h): both operands
// are packed once into int8 tiles, then every MR × NR output tile runs one
// micro-kernel over all of K. The micro-kernel computes each block's exact
// integer dot products in registers and folds the block terms into the tile's
// f32 totals before it moves to the next block, so every output sees its terms
// in increasing K order, as [GEMM1] requires; the integer products themselves
// are exact, so the ISA's summation order inside a block does not matter.
// Threads take disjoint sets of output tiles, so results do not depend on the
// thread count.
//
//===----------------------------------------------------------------------===//

#include "PackedGemm.h"

#include "fp4train/Numerics/Parallel.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

namespace fp4train::numerics {

using namespace packed;

std::string_view getGemmKernelName(GemmKernel kernel) {
  switch (kernel) {
  case GemmKernel::Reference:
    return "reference";
  case GemmKernel::Portable:
    return "portable";
  case GemmKernel::AVX2:
    return "avx2";
  case GemmKernel::AVX512VNNI:
    return "avx512-vnni";
  }
  return "?";
}

bool isGemmKernelAvailable(GemmKernel kernel) {
  switch (kernel) {
  case GemmKernel::Reference:
  case GemmKernel::Portable:
    return true;
#if defined(__x86_64__)
  case GemmKernel::AVX2:
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  case GemmKernel::AVX512VNNI:
    return __builtin_cpu_supports("avx512f") &&
           __builtin_cpu_supports("avx512bw") &&
           __builtin_cpu_supports("avx512vnni");
#else
  default:
    return false;
#endif
  }
  return false;
}

GemmKernel getDefaultGemmKernel() {
  static const GemmKernel best = [] {
    for (GemmKernel kernel : {GemmKernel::AVX512VNNI, GemmKernel::AVX2})
      if (isGemmKernelAvailable(kernel))
        return kernel;
    return GemmKernel::Portable;
  }();
  return best;
}

bool isPackedGemmSupported(const GemmOperand &a, const GemmOperand &b) {
  if (a.k != b.k || a.blockSize != b.blockSize || a.blockSize <= 0 ||
      a.k % a.blockSize != 0)
    return false;
  // Blocks of at most 128 keep the int16 lanes of the AVX2 kernel and the
  // int16 corrections exact (PackedGemm.h); the kernels consume K in groups
  // of 4.
  if (a.elementType == ElementType::E2M1 && b.elementType == ElementType::E2M1)
    return a.blockSize % 4 == 0 && a.blockSize <= 128;
  // The FP8 kernels evaluate blocks in double, which is exact for power-of-
  // two scales (PackedGemm.h); blocks of at most 2^16 keep the exactness
  // check's arithmetic small.
  auto isFP8 = [](const GemmOperand &op) {
    return (op.elementType == ElementType::E4M3FN ||
            op.elementType == ElementType::E5M2) &&
           op.scaleType == ScaleType::E8M0;
  };
  return isFP8(a) && isFP8(b) && a.blockSize <= 65536;
}

namespace {

/// An operand in the layout of PackedGemm.h.
struct PackedOperand {
  int64_t tiles = 0;
  CacheAlignedArray<uint8_t> codes;
  CacheAlignedArray<float> scales;
  CacheAlignedArray<int16_t> corrections;
  std::vector<ExponentRange> ranges;
};

/// Packs `op` into tiles of `tileRows` rows: A operands (`isA`) get the
/// unsigned offset, B operands the per-block corrections that undo it.
void packOperand(const GemmOperand &op, int tileRows, bool isA,
                 PackedOperand &out) {
  int64_t k = op.k, kBlocks = k / op.blockSize, kGroups = k / 4;
  int64_t groupsPerBlock = op.blockSize / 4;
  out.tiles = (op.rows + tileRows - 1) / tileRows;
  out.codes.resize(out.tiles * tileRows * k);
  out.scales.resize(out.tiles * kBlocks * tileRows);
  out.corrections.resize(isA ? 0 : out.tiles * kBlocks * tileRows * 2);
  out.ranges.resize(out.tiles * kBlocks);

  const uint8_t offset = isA ? kOffset : 0;
  uint8_t table[16];
  for (int code = 0; code < 16; ++code)
    table[code] = uint8_t(int(2.0f * decodeE2M1(uint8_t(code))) + offset);
  auto *translateCodes = translateCodesPortable;
#if defined(__x86_64__)
  if (isGemmKernelAvailable(GemmKernel::AVX2))
    translateCodes = translateCodesAVX2;
#endif

  parallelFor(out.tiles, 1, [&](int64_t begin, int64_t end) {
    // The tile's rows, translated, before they are interleaved.
    std::vector<uint8_t> rows(tileRows * k);
    for (int64_t tile = begin; tile < end; ++tile) {
      uint8_t *codes = out.codes.data() + tile * tileRows * k;
      float *scales = out.scales.data() + tile * kBlocks * tileRows;
      int16_t *corrections =
          isA ? nullptr
              : out.corrections.data() + tile * kBlocks * tileRows * 2;
      for (int r = 0; r < tileRows; ++r) {
        int64_t row = tile * tileRows + r;
        if (row < op.rows)
          translateCodes(op.codes + row * k, k, table, rows.data() + r * k);
        else // Zero elements: the padding contributes nothing.
          std::memset(rows.data() + r * k, offset, k);
      }
      // Sequential stores; the reads are tileRows sequential streams.
      for (int64_t g = 0; g < kGroups; ++g)
        for (int r = 0; r < tileRows; ++r)
          std::memcpy(codes + (g * tileRows + r) * 4, &rows[r * k + g * 4], 4);
      for (int r = 0; r < tileRows; ++r) {
        int64_t row = tile * tileRows + r;
        const uint8_t *scaleCodes =
            row < op.rows
                ? op.scales + row / op.scaleRowGroup * op.scaleRowStride
                : nullptr;
        for (int64_t kb = 0; kb < kBlocks; ++kb) {
          float scale = 0.0f;
          if (scaleCodes)
            scale = op.scaleType == ScaleType::E8M0
                        ? decodeE8M0(scaleCodes[kb])
                        : decodeE4M3FN(scaleCodes[kb]);
          // Exact: the smallest scale, 2^-127, halves to an f32 subnormal.
          scales[kb * tileRows + r] = 0.5f * scale;
          if (isA)
            continue;
          // At most 12 · 12 · 64 in magnitude: int16 holds it.
          int32_t low = 0, high = 0;
          const int8_t *values = reinterpret_cast<const int8_t *>(
              &rows[r * k + kb * op.blockSize]);
          for (int64_t g = 0; g < groupsPerBlock; ++g) {
            low += values[4 * g] + values[4 * g + 1];
            high += values[4 * g + 2] + values[4 * g + 3];
          }
          corrections[(kb * tileRows + r) * 2] = int16_t(-kOffset * low);
          corrections[(kb * tileRows + r) * 2 + 1] = int16_t(-kOffset * high);
        }
      }
      for (int64_t kb = 0; kb < kBlocks; ++kb) {
        ExponentRange range;
        bool any = false;
        for (int r = 0; r < tileRows; ++r) {
          float h = scales[kb * tileRows + r];
          if (h == 0.0f || !std::isfinite(h))
            continue;
          // ilogb, from the bits where h is normal (all but E8M0's two
          // smallest scales).
          uint32_t biased = floatToBits(h) >> 23 & 0xFF;
          int16_t exponent =
              int16_t(biased ? int(biased) - 127 : std::ilogb(h));
          range.min = any ? std::min(range.min, exponent) : exponent;
          range.max = any ? std::max(range.max, exponent) : exponent;
          any = true;
        }
        out.ranges[tile * kBlocks + kb] = range;
      }
    }
  });
}

struct KernelShape {
  int mr, nr;
  void (*run)(const TileTask &);
};

KernelShape getKernelShape(GemmKernel kernel) {
  switch (kernel) {
#if defined(__x86_64__)
  case GemmKernel::AVX2:
    return {kAVX2MR, kAVX2NR, microKernelAVX2};
  case GemmKernel::AVX512VNNI:
    return {kAVX512MR, kAVX512NR, microKernelAVX512VNNI};
#endif
  default:
    return {kPortableMR, kPortableNR, microKernelPortable};
  }
}

/// Bytes of A (one chunk of row tiles) kept in L2 while every B tile passes.
constexpr int64_t kChunkBytes = 192 * 1024;

} // namespace

void packed::translateCodesPortable(const uint8_t *codes, int64_t count,
                                    const uint8_t table[16], uint8_t *out) {
  for (int64_t i = 0; i < count; ++i)
    out[i] = table[codes[i] & 0xF];
}

void packed::microKernelPortable(const TileTask &task) {
  constexpr int MR = kPortableMR, NR = kPortableNR;
  const uint8_t *a = task.a;
  const int8_t *b = reinterpret_cast<const int8_t *>(task.b);
  std::fill(task.total, task.total + MR * NR, 0.0f);
  for (int64_t kb = 0; kb < task.kBlocks; ++kb) {
    int32_t p[MR * NR];
    for (int i = 0; i < MR; ++i)
      for (int j = 0; j < NR; ++j)
        p[i * NR + j] = task.correctionB[(kb * NR + j) * 2] +
                        task.correctionB[(kb * NR + j) * 2 + 1];
    for (int64_t g = 0; g < task.groupsPerBlock; ++g, a += MR * 4, b += NR * 4)
      for (int i = 0; i < MR; ++i)
        for (int j = 0; j < NR; ++j)
          for (int t = 0; t < 4; ++t)
            p[i * NR + j] += int32_t(a[i * 4 + t]) * int32_t(b[j * 4 + t]);
    addExactBlockTerms(p, task.scaleA + kb * MR, task.scaleB + kb * NR, MR, NR,
                       task.total);
  }
}

void packed::storeOutputTile(int64_t m, int64_t n, int mr, int nr,
                             int64_t tileA, int64_t tileB, float g,
                             const float *acc, float *c, const float *total) {
  // C = acc + f32(g · T), as the reference does it.
  int64_t rows = std::min<int64_t>(mr, m - tileA * mr);
  int64_t cols = std::min<int64_t>(nr, n - tileB * nr);
  for (int64_t r = 0; r < rows; ++r) {
    int64_t offset = (tileA * mr + r) * n + tileB * nr;
    for (int64_t j = 0; j < cols; ++j) {
      float base = acc ? acc[offset + j] : 0.0f;
      c[offset + j] = base + g * total[r * nr + j];
    }
  }
}

void packed::forEachOutputTile(
    int64_t m, int64_t n, int mr, int nr, int64_t tilesA, int64_t tilesB,
    int64_t aTileBytes, float g, const float *acc, float *c,
    const std::function<void(int64_t, int64_t, float *)> &runTile) {
  int64_t chunkTiles =
      std::max<int64_t>(1, kChunkBytes / std::max<int64_t>(aTileBytes, 1));
  int64_t chunks = (tilesA + chunkTiles - 1) / chunkTiles;
  // Work items are (chunk of A tiles, B tile) pairs, chunk-major, so a thread
  // sweeps all B tiles past one L2-resident chunk of A.
  parallelFor(chunks * tilesB, 1, [&](int64_t begin, int64_t end) {
    CacheAlignedArray<float> totalStorage;
    totalStorage.resize(mr * nr);
    float *total = totalStorage.data();
    for (int64_t item = begin; item < end; ++item) {
      int64_t chunk = item / tilesB, tileB = item % tilesB;
      int64_t lastA = std::min(tilesA, (chunk + 1) * chunkTiles);
      for (int64_t tileA = chunk * chunkTiles; tileA < lastA; ++tileA) {
        runTile(tileA, tileB, total);
        storeOutputTile(m, n, mr, nr, tileA, tileB, g, acc, c, total);
      }
    }
  });
}

Status packed::runPackedGemm(const GemmOperand &a, const GemmOperand &b,
                             const float *acc, float *c, GemmKernel kernel) {
  if (a.elementType != ElementType::E2M1)
    return runPackedFP8Gemm(a, b, acc, c, kernel);
  KernelShape shape = getKernelShape(kernel);
  const int mr = shape.mr, nr = shape.nr;
  // Reused across calls, so that repeated products (training steps,
  // benchmarks) do not pay for fresh pages. The worker threads must see the
  // caller's buffers, hence the references: a thread_local named inside the
  // lambda would be the worker's own, empty one.
  thread_local PackedOperand scratchA, scratchB;
  PackedOperand &packedA = scratchA, &packedB = scratchB;
  packOperand(a, mr, /*isA=*/true, packedA);
  packOperand(b, nr, /*isA=*/false, packedB);

  int64_t k = a.k, kBlocks = k / a.blockSize;
  forEachOutputTile(a.rows, b.rows, mr, nr, packedA.tiles, packedB.tiles,
                    mr * k, a.globalDecodeScale * b.globalDecodeScale, acc, c,
                    [&](int64_t tileA, int64_t tileB, float *total) {
                      TileTask task;
                      task.a = packedA.codes.data() + tileA * mr * k;
                      task.b = packedB.codes.data() + tileB * nr * k;
                      task.scaleA =
                          packedA.scales.data() + tileA * kBlocks * mr;
                      task.scaleB =
                          packedB.scales.data() + tileB * kBlocks * nr;
                      task.correctionB =
                          packedB.corrections.data() + tileB * kBlocks * nr * 2;
                      task.rangeA = packedA.ranges.data() + tileA * kBlocks;
                      task.rangeB = packedB.ranges.data() + tileB * kBlocks;
                      task.kBlocks = kBlocks;
                      task.groupsPerBlock = a.blockSize / 4;
                      task.total = total;
                      shape.run(task);
                    });
  return Success{};
}

} // namespace fp4train::numerics
