//===- Hadamard.cpp - Randomized Hadamard rotations ([H1]) ----------------===//

#include "fp4train/Numerics/Hadamard.h"

#include "BlockLayout.h"
#include "fp4train/Numerics/Parallel.h"
#include "fp4train/Numerics/Philox.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <string>

namespace fp4train::numerics {

static constexpr std::string_view kSignsNames[] = {"none", "fixed", "random"};

std::string_view getHadamardSignsName(HadamardSigns signs) {
  return kSignsNames[unsigned(signs)];
}

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
      words = philox4x32_10({uint32_t(step), uint32_t(step >> 32),
                             uint32_t(j >> 7), 1u},
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

void hadamardRotateBlock(float *x, const float *signs, int64_t n,
                         bool inverse) {
  // [H1] Signs multiply exactly; the normalization is one rounded multiply.
  const float norm = float(1.0 / std::sqrt(double(n)));
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
                std::vector<float> block(n);
                for (int64_t b = begin; b < end; ++b) {
                  if (layout.isContiguous()) {
                    hadamardRotateBlock(data + b * n, signs.data(), n, inverse);
                    continue;
                  }
                  layout.forEachElement(b, [&](int64_t k, int64_t offset) {
                    block[k] = data[offset];
                  });
                  hadamardRotateBlock(block.data(), signs.data(), n, inverse);
                  layout.forEachElement(b, [&](int64_t k, int64_t offset) {
                    data[offset] = block[k];
                  });
                }
              });
  return Success{};
}

} // namespace fp4train::numerics
