//===- Simd.h - Per-ISA clones and portable vectors ------------*- C++ -*-===//
//
// Private to the numerics library. The hot loops are compiled once per
// instruction set and selected at load time (FP4TRAIN_HOT_CLONES), so the
// portable build still runs 8-wide integer compares, variable shifts and
// 32x32->64 multiplies where the CPU has AVX2. Where the loop vectorizer
// cannot find the data movement on its own (reductions across blocks,
// butterflies inside a vector) the code uses GCC/Clang vector extensions
// rather than intrinsics: one source, lowered by each clone to its own ISA.
//
// None of this changes a result: vector lanes perform exactly the f32 and
// integer operations of the scalar recipes in docs/numerics.md.
//
//===----------------------------------------------------------------------===//

#ifndef FP4TRAIN_LIB_NUMERICS_SIMD_H
#define FP4TRAIN_LIB_NUMERICS_SIMD_H

#include <cstdint>
#include <cstring>

#if defined(__x86_64__) && (defined(__clang__) || defined(__GNUC__))
#define FP4TRAIN_HOT_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define FP4TRAIN_HOT_CLONES
#endif
#define FP4TRAIN_ALWAYS_INLINE __attribute__((always_inline))
#if defined(__clang__)
#define FP4TRAIN_NO_VECTORIZE _Pragma("clang loop vectorize(disable)")
#else
#define FP4TRAIN_NO_VECTORIZE
#endif

namespace fp4train::numerics::simd {

/// Eight 32-bit lanes: one AVX2 register, two SSE registers.
typedef uint32_t U32x8 __attribute__((vector_size(32)));
typedef float F32x8 __attribute__((vector_size(32)));

/// Unaligned load and store of a vector.
template <typename Vec>
inline FP4TRAIN_ALWAYS_INLINE Vec load(const void *source) {
  Vec value;
  std::memcpy(&value, source, sizeof(Vec));
  return value;
}
template <typename Vec>
inline FP4TRAIN_ALWAYS_INLINE void store(void *target, Vec value) {
  std::memcpy(target, &value, sizeof(Vec));
}

/// Lane-wise unsigned maximum.
inline FP4TRAIN_ALWAYS_INLINE U32x8 max(U32x8 a, U32x8 b) {
  return a > b ? a : b;
}

} // namespace fp4train::numerics::simd

#endif // FP4TRAIN_LIB_NUMERICS_SIMD_H
