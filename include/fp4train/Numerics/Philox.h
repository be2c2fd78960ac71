//===- Philox.h - Counter-based random words for stochastic rounding -*- C++
//-*-===//
//
// Philox4x32-10 (Salmon et al., SC'11) taken from Random123's reference
// implementation, and the project's fixed mapping from (seed, element index)
// to one 32-bit random word ([SR1]). Every backend (this library, the MLIR CPU
// expansion, GPU kernels) derives its stochastic-rounding bits from these
// functions, so the result of SR depends only on (seed, value, position).
//
//===----------------------------------------------------------------------===//

#ifndef FP4TRAIN_NUMERICS_PHILOX_H
#define FP4TRAIN_NUMERICS_PHILOX_H

#include <array>
#include <cstdint>

namespace fp4train::numerics {

/// Philox4x32-10 on a full 128-bit counter and 64-bit key (word 0 first),
/// exactly Random123's `r123::Philox4x32_R<10>`.
std::array<uint32_t, 4> philox4x32_10(const std::array<uint32_t, 4> &counter,
                                      const std::array<uint32_t, 2> &key);

/// Philox4x32-10 with counter = {lo32(counter), hi32(counter), 0, 0} and
/// key = {lo32(key), hi32(key)}.
std::array<uint32_t, 4> philox4x32_10(uint64_t counter, uint64_t key);

/// [SR1] The random word of the element at row-major linear index `index`
/// of the tensor being quantized: word (index & 3) of
/// philox4x32_10(counter = index >> 2, key = seed). Four consecutive elements
/// share one Philox call.
uint32_t stochasticRoundingWord(uint64_t seed, uint64_t index);

/// Fills out[0..count) with stochasticRoundingWord(seed, firstIndex + j),
/// one Philox call per four elements, computed for 16 counters at a time
/// (vectorized; bit-identical to the Random123 reference). firstIndex + count
/// must not exceed 2^64.
void fillStochasticRoundingWords(uint64_t seed, uint64_t firstIndex,
                                 int64_t count, uint32_t *out);

} // namespace fp4train::numerics

#endif // FP4TRAIN_NUMERICS_PHILOX_H
