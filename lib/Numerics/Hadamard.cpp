//===- Hadamard.cpp - Randomized Hadamard rotations ([H1]) ----------------===//
//
// hadamardRotateBlock is the scalar statement of the [H1] rounding.
// hadamardRotate runs the same operations with 8-lane vectors and the block
// size fixed at compile time, which is what makes it fast: the scalar loops
// over a runtime n vectorize poorly, and stages h = 1, 2, 4 pair elements
// inside one vector, which needs shuffles no vectorizer finds on its own.
//
//===----------------------------------------------------------------------===//

#include "fp4train/Numerics/Hadamard.h"

#include "BlockLayout.h"
#include "Simd.h"
#include "fp4train/Numerics/Parallel.h"
#include "fp4train/Numerics/Philox.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <string>

namespace fp4train::numerics {

static constexpr std::string_view kSignsNames[] = {"none", "fixed", "random"};

std::optional<HadamardSigns> parseHadamardSigns(std::string_view name) {
  for (unsigned i = 0; i < 3; ++i)
    if (kSignsNames[i] == name)
      return HadamardSigns(i);
  return std::nullopt;
}

bool isValidHadamardSize(int64_t n) {
  return n >= 16 && n <= 256 && (n & (n - 1)) == 0;
}

std::vector<float> randomHadamardSigns(int64_t n, uint64_t seed,
                                       uint64_t step) {
  std::vector<float> signs(n);
  std::array<uint32_t, 4> words;
  for (int64_t j = 0; j < n; ++j) {
    if ((j & 127) == 0)
      words = philox4x32_10(
          {uint32_t(step), uint32_t(step >> 32), uint32_t(j >> 7), 1u},
          {uint32_t(seed), uint32_t(seed >> 32)});
    signs[j] = (words[(j >> 5) & 3] >> (j & 31) & 1u) ? -1.0f : 1.0f;
  }
  return signs;
}

std::vector<float> getHadamardSigns(int64_t n, HadamardSigns signs,
                                    uint64_t seed, uint64_t step) {
  switch (signs) {
  case HadamardSigns::None:
    break;
  case HadamardSigns::Fixed:
    if (n == 16)
      return std::vector<float>(std::begin(kTransformerEngineSigns16),
                                std::end(kTransformerEngineSigns16));
    return randomHadamardSigns(n, kFixedHadamardSeed, 0);
  case HadamardSigns::Random:
    return randomHadamardSigns(n, seed, step);
  }
  return std::vector<float>(n, 1.0f);
}

void walshHadamardTransform(float *x, int64_t n) {
  for (int64_t h = 1; h < n; h *= 2)
    for (int64_t i = 0; i < n; i += 2 * h)
      for (int64_t j = i; j < i + h; ++j) {
        float a = x[j], b = x[j + h];
        x[j] = a + b;
        x[j + h] = a - b;
      }
}

/// [H1] The normalization constant f32(1/sqrt(n)).
static float hadamardNorm(int64_t n) {
  return float(1.0 / std::sqrt(double(n)));
}

void hadamardRotateBlock(float *x, const float *signs, int64_t n,
                         bool inverse) {
  // [H1] Signs multiply exactly; the normalization is one rounded multiply.
  const float norm = hadamardNorm(n);
  if (!inverse)
    for (int64_t j = 0; j < n; ++j)
      x[j] *= signs[j];
  walshHadamardTransform(x, n);
  for (int64_t j = 0; j < n; ++j)
    x[j] *= norm;
  if (inverse)
    for (int64_t j = 0; j < n; ++j)
      x[j] *= signs[j];
}

using simd::F32x8;

/// Stage h < 8 of the transform on the 8 lanes of one vector, h = H: lane i
/// with (i & h) == 0 becomes x[i] + x[i+h] and lane i + h becomes
/// x[i] - x[i+h], the scalar butterfly's two operations on the same operands.
template <int H>
static inline FP4TRAIN_ALWAYS_INLINE F32x8 butterflyLanes(F32x8 x) {
  F32x8 partner = __builtin_shufflevector(x, x, 0 ^ H, 1 ^ H, 2 ^ H, 3 ^ H,
                                          4 ^ H, 5 ^ H, 6 ^ H, 7 ^ H);
  F32x8 sum = x + partner, difference = partner - x;
  // Lanes with bit h set take the difference (index 8 + i of the pair).
  return __builtin_shufflevector(
      sum, difference, (0 & H) ? 8 : 0, (1 & H) ? 9 : 1, (2 & H) ? 10 : 2,
      (3 & H) ? 11 : 3, (4 & H) ? 12 : 4, (5 & H) ? 13 : 5, (6 & H) ? 14 : 6,
      (7 & H) ? 15 : 7);
}

/// hadamardRotateBlock for a compile-time N, bit-identical to it: [H1] signs,
/// then the stages h = 1, 2, 4 (inside each vector) and h = 8, ..., N/2
/// (between vectors) in that order, then the normalization; the inverse
/// applies the signs last.
template <int64_t N>
static inline FP4TRAIN_ALWAYS_INLINE void
rotateBlock(float *data, const F32x8 *signs, F32x8 norm, bool inverse) {
  constexpr int64_t Vectors = N / 8;
  F32x8 x[Vectors];
  for (int64_t v = 0; v < Vectors; ++v)
    x[v] = simd::load<F32x8>(data + 8 * v);
  if (!inverse)
    for (int64_t v = 0; v < Vectors; ++v)
      x[v] *= signs[v];
  for (int64_t v = 0; v < Vectors; ++v)
    x[v] = butterflyLanes<4>(butterflyLanes<2>(butterflyLanes<1>(x[v])));
  // Stage 8h pairs vector v with vector v + h.
  for (int64_t h = 1; h < Vectors; h *= 2)
    for (int64_t v = 0; v < Vectors; ++v)
      if ((v & h) == 0) {
        F32x8 a = x[v], b = x[v + h];
        x[v] = a + b;
        x[v + h] = a - b;
      }
  for (int64_t v = 0; v < Vectors; ++v)
    x[v] *= norm;
  if (inverse)
    for (int64_t v = 0; v < Vectors; ++v)
      x[v] *= signs[v];
  for (int64_t v = 0; v < Vectors; ++v)
    simd::store(data + 8 * v, x[v]);
}

/// Rotates blocks [begin, end) of `layout` in place; contiguous blocks are
/// rotated where they lie, others through a gathered copy.
template <int64_t N>
static void rotateBlocks(float *data, const BlockLayout &layout, int64_t begin,
                         int64_t end, const float *signs, bool inverse) {
  F32x8 norm = F32x8{} + hadamardNorm(N);
  F32x8 signVectors[N / 8];
  for (int64_t v = 0; v < N / 8; ++v)
    signVectors[v] = simd::load<F32x8>(signs + 8 * v);
  if (layout.isContiguous()) {
    for (int64_t b = begin; b < end; ++b)
      rotateBlock<N>(data + b * N, signVectors, norm, inverse);
    return;
  }
  float block[N];
  for (int64_t b = begin; b < end; ++b) {
    layout.forEachElement(
        b, [&](int64_t k, int64_t offset) { block[k] = data[offset]; });
    rotateBlock<N>(block, signVectors, norm, inverse);
    layout.forEachElement(
        b, [&](int64_t k, int64_t offset) { data[offset] = block[k]; });
  }
}

FP4TRAIN_HOT_CLONES
static void rotateBlocks(float *data, const BlockLayout &layout, int64_t n,
                         int64_t begin, int64_t end, const float *signs,
                         bool inverse) {
  switch (n) {
  case 16:
    return rotateBlocks<16>(data, layout, begin, end, signs, inverse);
  case 32:
    return rotateBlocks<32>(data, layout, begin, end, signs, inverse);
  case 64:
    return rotateBlocks<64>(data, layout, begin, end, signs, inverse);
  case 128:
    return rotateBlocks<128>(data, layout, begin, end, signs, inverse);
  default:
    return rotateBlocks<256>(data, layout, begin, end, signs, inverse);
  }
}

Status hadamardRotate(float *data, const std::vector<int64_t> &shape,
                      const HadamardConfig &config, bool inverse) {
  int64_t n = config.size;
  if (!isValidHadamardSize(n))
    return makeError("hadamard size must be a power of two from 16 to 256, "
                     "got " +
                     std::to_string(n));
  int64_t rank = int64_t(shape.size());
  if (config.axis < -rank || config.axis >= rank)
    return makeError("axis " + std::to_string(config.axis) +
                     " is out of range for a rank-" + std::to_string(rank) +
                     " tensor");
  int64_t axis = config.axis < 0 ? config.axis + rank : config.axis;
  if (shape[axis] % n != 0)
    return makeError("dimension " + std::to_string(axis) + " (size " +
                     std::to_string(shape[axis]) +
                     ") is not divisible by the hadamard size " +
                     std::to_string(n));

  std::vector<float> signs =
      getHadamardSigns(n, config.signs, config.seed, config.step);
  BlockLayout layout = makeBlockLayout(shape, axis, n, false);
  parallelFor(layout.numBlocks, std::max<int64_t>(1, 4096 / n),
              [&](int64_t begin, int64_t end) {
                rotateBlocks(data, layout, n, begin, end, signs.data(),
                             inverse);
              });
  return Success{};
}

} // namespace fp4train::numerics
