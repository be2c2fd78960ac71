//===- ParallelTest.cpp - Deterministic parallel-for tests ----------------===//

#include "fp4train/Numerics/Parallel.h"

#include "gtest/gtest.h"

#include <atomic>
#include <mutex>
#include <set>
#include <thread>
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

TEST(Parallel, RangesRunOnSeveralThreads) {
  unsigned saved = getNumThreads();
  setNumThreads(4);
  std::mutex mutex;
  std::set<std::thread::id> threads;
  // Repeated calls reuse the pool's threads.
  for (int call = 0; call < 100; ++call)
    parallelFor(4, 1, [&](int64_t, int64_t) {
      std::lock_guard<std::mutex> lock(mutex);
      threads.insert(std::this_thread::get_id());
    });
  EXPECT_GE(threads.size(), 2u);
  EXPECT_LE(threads.size(), 4u);
  setNumThreads(saved);
}

TEST(Parallel, NestedCallsRunInline) {
  unsigned saved = getNumThreads();
  setNumThreads(3);
  std::vector<std::atomic<int>> hits(30 * 40);
  parallelFor(30, 1, [&](int64_t begin, int64_t end) {
    for (int64_t row = begin; row < end; ++row) {
      std::thread::id outer = std::this_thread::get_id();
      parallelFor(40, 1, [&](int64_t b, int64_t e) {
        EXPECT_EQ(std::this_thread::get_id(), outer);
        for (int64_t i = b; i < e; ++i)
          ++hits[row * 40 + i];
      });
    }
  });
  for (auto &hit : hits)
    EXPECT_EQ(hit.load(), 1);
  setNumThreads(saved);
}

TEST(Parallel, ConcurrentCallersEachCoverTheirRange) {
  // Runs of fp4-train call from several threads at once: a call that finds
  // the pool busy runs on its own thread, and every call still covers its
  // range exactly once.
  unsigned saved = getNumThreads();
  setNumThreads(2);
  constexpr int kCallers = 4, kCalls = 200, kSize = 257;
  std::vector<std::vector<int>> hits(kCallers, std::vector<int>(kSize));
  std::vector<std::thread> callers;
  for (int caller = 0; caller < kCallers; ++caller)
    callers.emplace_back([&, caller] {
      for (int call = 0; call < kCalls; ++call)
        parallelFor(kSize, 1, [&](int64_t begin, int64_t end) {
          for (int64_t i = begin; i < end; ++i)
            ++hits[caller][i];
        });
    });
  for (std::thread &caller : callers)
    caller.join();
  for (const std::vector<int> &row : hits)
    for (int hit : row)
      EXPECT_EQ(hit, kCalls);
  setNumThreads(saved);
}

TEST(Parallel, EmptyRangeDoesNothing) {
  bool called = false;
  parallelFor(0, 1, [&](int64_t, int64_t) { called = true; });
  EXPECT_FALSE(called);
}

} // namespace
