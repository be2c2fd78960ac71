//===- Philox.cpp - Counter-based random words for stochastic rounding ----===//
//
// Single calls go through Random123's reference Philox4x32-10. The bulk fill
// behind [SR1] runs the same rounds on many consecutive counters at once, lane
// by lane, so the loop vectorizes (the 32x32->64 products become AVX2
// `vpmuludq`); PhiloxTest checks it against the reference.
//
//===----------------------------------------------------------------------===//

#include "fp4train/Numerics/Philox.h"

#include "Simd.h"

#include <Random123/philox.h>

#include <algorithm>

namespace fp4train::numerics {

std::array<uint32_t, 4> philox4x32_10(const std::array<uint32_t, 4> &counter,
                                      const std::array<uint32_t, 2> &key) {
  r123::Philox4x32_R<10> generator;
  r123::Philox4x32_R<10>::ctr_type c = {
      {counter[0], counter[1], counter[2], counter[3]}};
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

/// Number of counters the bulk generator advances together: four AVX2
/// registers per counter word, enough independent multiplies to hide their
/// latency. 16 needs the fewest instructions per word (8 and 32 need more).
static constexpr int kPhiloxLanes = 16;

/// Random123's Philox4x32-10 on the counters {lo32(c), hi32(c), 0, 0} for
/// c = counter + l, l < kPhiloxLanes (mod 2^64), with key {lo32(key),
/// hi32(key)}; writes the four result words of lane l to out[4l..4l+3].
/// Same rounds, constants and key schedule as r123::Philox4x32_R<10>: round
/// 0 uses the key as given, every later round the key bumped by (W0, W1).
static inline FP4TRAIN_ALWAYS_INLINE void
philoxLanes(uint64_t counter, uint64_t key, uint32_t *out) {
  constexpr uint64_t M0 = PHILOX_M4x32_0, M1 = PHILOX_M4x32_1;
  constexpr uint32_t W0 = PHILOX_W32_0, W1 = PHILOX_W32_1;
  // Each 32-bit word lives in the low half of a 64-bit lane, where the
  // products need it, so the rounds need no conversions between lane widths.
  // High halves are don't-care: the multiplies read the low halves only and
  // the outputs are truncated, so no round spends an operation clearing them.
  uint64_t c0[kPhiloxLanes], c1[kPhiloxLanes], c2[kPhiloxLanes],
      c3[kPhiloxLanes];
  for (int l = 0; l < kPhiloxLanes; ++l) {
    c0[l] = uint32_t(counter + l);
    c1[l] = (counter + l) >> 32;
    c2[l] = 0;
    c3[l] = 0;
  }
  uint64_t k0 = uint32_t(key), k1 = key >> 32;
  for (int round = 0; round < 10; ++round) {
    for (int l = 0; l < kPhiloxLanes; ++l) {
      // The casts make these 32x32->64 multiplies (one vpmuludq each).
      uint64_t p0 = M0 * uint32_t(c0[l]);
      uint64_t p1 = M1 * uint32_t(c2[l]);
      uint64_t next0 = (p1 >> 32) ^ c1[l] ^ k0;
      uint64_t next2 = (p0 >> 32) ^ c3[l] ^ k1;
      c1[l] = p1;
      c3[l] = p0;
      c0[l] = next0;
      c2[l] = next2;
    }
    k0 += W0;
    k1 += W1;
  }
  for (int l = 0; l < kPhiloxLanes; ++l) {
    out[4 * l] = uint32_t(c0[l]);
    out[4 * l + 1] = uint32_t(c1[l]);
    out[4 * l + 2] = uint32_t(c2[l]);
    out[4 * l + 3] = uint32_t(c3[l]);
  }
}

FP4TRAIN_HOT_CLONES
void fillStochasticRoundingWords(uint64_t seed, uint64_t firstIndex,
                                 int64_t count, uint32_t *out) {
  constexpr int64_t Batch = 4 * kPhiloxLanes;
  uint64_t index = firstIndex;
  // [SR1] A first index inside a group of four starts with a partial counter.
  for (; count > 0 && (index & 3); --count, ++index)
    *out++ = stochasticRoundingWord(seed, index);
  for (; count >= Batch; count -= Batch, index += Batch, out += Batch)
    philoxLanes(index >> 2, seed, out);
  if (count > 0) {
    uint32_t words[Batch];
    philoxLanes(index >> 2, seed, words);
    std::copy(words, words + count, out);
  }
}

} // namespace fp4train::numerics
