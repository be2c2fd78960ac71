//===- ElementCount.h - Overflow-checked element counts ---------*- C++ -*-===//
//
// The one place where a shape's element count is computed. Shapes come from
// user input (IR types, .npy headers, step signatures), so the product of
// their dimensions can exceed int64: every caller that sizes an allocation or
// a loop from a shape goes through checkedNumElements and rejects the shape
// when it returns nothing, instead of wrapping around to a small or negative
// count. Header-only and without LLVM, so the numerics library, the dialect
// and the runtime share it.
//
//===----------------------------------------------------------------------===//

#ifndef FP4TRAIN_NUMERICS_ELEMENTCOUNT_H
#define FP4TRAIN_NUMERICS_ELEMENTCOUNT_H

#include <cstdint>
#include <optional>

namespace fp4train {

/// The product of the dimensions of `shape` (1 for rank 0), or nothing when
/// a dimension is negative (dynamic) or the product overflows int64.
template <typename Shape>
std::optional<int64_t> checkedNumElements(const Shape &shape) {
  int64_t count = 1;
  for (int64_t dim : shape)
    if (dim < 0 || __builtin_mul_overflow(count, dim, &count))
      return std::nullopt;
  return count;
}

} // namespace fp4train

#endif // FP4TRAIN_NUMERICS_ELEMENTCOUNT_H
