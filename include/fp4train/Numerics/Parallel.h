//===- Parallel.h - Deterministic static parallel-for ----------*- C++ -*-===//
//
// The library parallelizes over independent output elements only (blocks,
// rows, Hadamard groups), so a static split of the iteration space over
// std::threads gives bit-identical results for any thread count. Reductions
// are limited to exactly associative operations (integer max).
//
//===----------------------------------------------------------------------===//

#ifndef FP4TRAIN_NUMERICS_PARALLEL_H
#define FP4TRAIN_NUMERICS_PARALLEL_H

#include <cstdint>
#include <functional>

namespace fp4train::numerics {

/// Number of threads parallelFor uses. Initially the value of the environment
/// variable FP4TRAIN_NUM_THREADS when it is a positive integer, else the
/// hardware concurrency.
unsigned getNumThreads();

/// Sets the thread count; 0 restores the initial value.
void setNumThreads(unsigned count);

/// Calls `body(begin, end)` on disjoint ranges that cover [0, size), one range
/// per thread, each boundary a multiple of `grain` (except `size`). Returns
/// when all calls have finished. Runs inline when one range suffices.
void parallelFor(int64_t size, int64_t grain,
                 const std::function<void(int64_t, int64_t)> &body);

} // namespace fp4train::numerics

#endif // FP4TRAIN_NUMERICS_PARALLEL_H
