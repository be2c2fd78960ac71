//===- Philox.cpp - Counter-based random words for stochastic rounding ----===//
//
// Thin wrappers over Random123's reference Philox4x32-10.
//
//===----------------------------------------------------------------------===//

#include "fp4train/Numerics/Philox.h"

#include <Random123/philox.h>

namespace fp4train::numerics {

std::array<uint32_t, 4> philox4x32_10(const std::array<uint32_t, 4> &counter,
                                      const std::array<uint32_t, 2> &key) {
  r123::Philox4x32_R<10> generator;
  r123::Philox4x32_R<10>::ctr_type c = {{counter[0], counter[1], counter[2],
                                         counter[3]}};
  r123::Philox4x32_R<10>::key_type k = {{key[0], key[1]}};
  r123::Philox4x32_R<10>::ctr_type r = generator(c, k);
  return {r[0], r[1], r[2], r[3]};
}

std::array<uint32_t, 4> philox4x32_10(uint64_t counter, uint64_t key) {
  return philox4x32_10({uint32_t(counter), uint32_t(counter >> 32), 0u, 0u},
                       {uint32_t(key), uint32_t(key >> 32)});
}

uint32_t stochasticRoundingWord(uint64_t seed, uint64_t index) {
  return philox4x32_10(index >> 2, seed)[index & 3];
}

void fillStochasticRoundingWords(uint64_t seed, uint64_t firstIndex,
                                 int64_t count, uint32_t *out) {
  uint64_t index = firstIndex;
  uint64_t end = firstIndex + uint64_t(count);
  while (index < end) {
    std::array<uint32_t, 4> words = philox4x32_10(index >> 2, seed);
    for (uint64_t lane = index & 3; lane < 4 && index < end; ++lane, ++index)
      *out++ = words[lane];
  }
}

} // namespace fp4train::numerics
