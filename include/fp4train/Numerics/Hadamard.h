//===- Hadamard.h - Randomized Hadamard rotations ([H1]) -------*- C++ -*-===//
//
// y_block = x_block · diag(s) · H_n / √n on consecutive blocks of n elements
// along one dimension, with H_n the Sylvester-ordered Hadamard matrix, computed
// by a fast Walsh–Hadamard transform whose f32 rounding is fixed (see
// walshHadamardTransform) so other implementations can reproduce it bit for
// bit.
//
//===----------------------------------------------------------------------===//

#ifndef FP4TRAIN_NUMERICS_HADAMARD_H
#define FP4TRAIN_NUMERICS_HADAMARD_H

#include "fp4train/Numerics/Error.h"

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

namespace fp4train::numerics {

/// Where the sign vector s of [H1] comes from.
enum class HadamardSigns : uint8_t {
  /// All +1.
  None,
  /// A constant vector: TransformerEngine's for n = 16, otherwise drawn once
  /// with randomHadamardSigns(n, kFixedHadamardSeed, 0).
  Fixed,
  /// randomHadamardSigns(n, seed, step), re-drawn at every training step.
  Random,
};

/// Parses the spellings used by the tools: none, fixed, random.
std::optional<HadamardSigns> parseHadamardSigns(std::string_view name);

/// Philox key of the fixed sign vectors of sizes other than 16 ("FP4T").
inline constexpr uint64_t kFixedHadamardSeed = 0x46503454;

/// TransformerEngine's 16-point sign vector, + + + − + − − − − − − + − + − −.
inline constexpr float kTransformerEngineSigns16[16] = {
    1, 1, 1, -1, 1, -1, -1, -1, -1, -1, -1, 1, -1, 1, -1, -1};

/// Whether n is a supported rotation size (16, 32, 64, 128 or 256).
bool isValidHadamardSize(int64_t n);

/// The random sign vector of size n for (seed, step): s_j = -1 exactly when
/// bit (j & 31) of word ((j >> 5) & 3) of
/// philox4x32_10(counter = {lo32(step), hi32(step), j >> 7, 1},
///               key = {lo32(seed), hi32(seed)})
/// is set. Counter word 3 = 1 keeps this stream disjoint from the [SR1]
/// stream, whose counters have word 3 = 0.
std::vector<float> randomHadamardSigns(int64_t n, uint64_t seed, uint64_t step);

/// The sign vector (±1) of a rotation of size n; seed and step are used by
/// HadamardSigns::Random only.
std::vector<float> getHadamardSigns(int64_t n, HadamardSigns signs,
                                    uint64_t seed = 0, uint64_t step = 0);

/// In-place unnormalized Sylvester Walsh–Hadamard transform of x[0..n), n a
/// power of two. Rounding is fixed: stages h = 1, 2, 4, ..., n/2 in that
/// order; in stage h, for every i with (i & h) == 0, the pair becomes
/// (x[i] + x[i+h], x[i] - x[i+h]), each one f32 add or subtract.
void walshHadamardTransform(float *x, int64_t n);

/// Rotates one block of n elements in place. Forward: x_j *= s_j, then the
/// transform, then every element times the f32 constant f32(1/√n) (a power of
/// two, hence exact, for n = 16, 64, 256). Inverse (the transpose,
/// H_n / √n · diag(s)): the transform, the same multiply, then x_j *= s_j.
void hadamardRotateBlock(float *x, const float *signs, int64_t n, bool inverse);

/// A rotation of a whole tensor.
struct HadamardConfig {
  int64_t size = 16;
  HadamardSigns signs = HadamardSigns::None;
  uint64_t seed = 0;
  uint64_t step = 0;
  /// The rotated dimension; negative values count from the end.
  int64_t axis = -1;
};

/// Rotates every block of `config.size` consecutive elements along
/// `config.axis` of a row-major tensor in place (or applies the inverse),
/// with vectorized kernels that give hadamardRotateBlock's bits on each block.
/// Fails when the size is unsupported, the axis is out of range or the
/// dimension is not divisible by the size.
Status hadamardRotate(float *data, const std::vector<int64_t> &shape,
                      const HadamardConfig &config, bool inverse = false);

} // namespace fp4train::numerics

#endif // FP4TRAIN_NUMERICS_HADAMARD_H
