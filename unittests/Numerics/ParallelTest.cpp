//===- ParallelTest.cpp - Deterministic parallel-for tests ----------------===//

#include "fp4train/Numerics/Parallel.h"

#include "gtest/gtest.h"

#include <atomic>
#include <vector>

using namespace fp4train::numerics;

namespace {

TEST(Parallel, CoversRangeOnceWithGrainAlignedBoundaries) {
  unsigned saved = getNumThreads();
  for (unsigned threads : {1u, 2u, 3u, 7u}) {
    setNumThreads(threads);
    EXPECT_EQ(getNumThreads(), threads);
    std::vector<std::atomic<int>> hits(1001);
    std::atomic<int> calls{0};
    parallelFor(1001, 10, [&](int64_t begin, int64_t end) {
      EXPECT_EQ(begin % 10, 0);
      EXPECT_TRUE(end % 10 == 0 || end == 1001);
      ++calls;
      for (int64_t i = begin; i < end; ++i)
        ++hits[i];
    });
    EXPECT_LE(calls.load(), int(threads));
    for (auto &hit : hits)
      EXPECT_EQ(hit.load(), 1);
  }
  setNumThreads(saved);
}

TEST(Parallel, EmptyRangeDoesNothing) {
  bool called = false;
  parallelFor(0, 1, [&](int64_t, int64_t) { called = true; });
  EXPECT_FALSE(called);
}

} // namespace
