//===- Parallel.cpp - Deterministic static parallel-for -------------------===//

#include "fp4train/Numerics/Parallel.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <thread>
#include <vector>

namespace fp4train::numerics {

static unsigned defaultNumThreads() {
  if (const char *env = std::getenv("FP4TRAIN_NUM_THREADS")) {
    char *end = nullptr;
    long value = std::strtol(env, &end, 10);
    if (end != env && *end == '\0' && value > 0 && value <= 4096)
      return unsigned(value);
  }
  return std::max(1u, std::thread::hardware_concurrency());
}

static std::atomic<unsigned> &threadSetting() {
  static std::atomic<unsigned> setting{defaultNumThreads()};
  return setting;
}

unsigned getNumThreads() { return threadSetting().load(); }

void setNumThreads(unsigned count) {
  threadSetting().store(count ? count : defaultNumThreads());
}

void parallelFor(int64_t size, int64_t grain,
                 const std::function<void(int64_t, int64_t)> &body) {
  if (size <= 0)
    return;
  grain = std::max<int64_t>(grain, 1);
  int64_t numGrains = (size + grain - 1) / grain;
  int64_t numRanges = std::min<int64_t>(getNumThreads(), numGrains);
  if (numRanges <= 1) {
    body(0, size);
    return;
  }
  auto boundary = [&](int64_t range) {
    return std::min(size, numGrains * range / numRanges * grain);
  };
  std::vector<std::thread> workers;
  workers.reserve(numRanges - 1);
  for (int64_t range = 1; range < numRanges; ++range)
    workers.emplace_back(body, boundary(range), boundary(range + 1));
  body(0, boundary(1));
  for (std::thread &worker : workers)
    worker.join();
}

} // namespace fp4train::numerics
