//===- Parallel.cpp - Deterministic static parallel-for -------------------===//

#include "fp4train/Numerics/Parallel.h"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdlib>
#include <mutex>
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

namespace {

/// Worker threads that stay alive between parallelFor calls: starting a
/// std::thread per range cost tens of microseconds per call, more than the
/// small products of a training step take. One call at a time owns the pool
/// (`owner`); its ranges 1..n-1 go to workers 0..n-2, range 0 runs on the
/// caller. Workers and caller first spin briefly (a step's calls follow
/// each other closely), then sleep on the condition variables. The pool is
/// never destroyed: its threads may still wait when the process exits.
class ThreadPool {
public:
  static ThreadPool &get() {
    static ThreadPool *pool = new ThreadPool();
    return *pool;
  }

  /// Runs `body` over the `numRanges` ranges given by `boundary`, or returns
  /// false without running anything when another call owns the pool.
  bool tryRun(int64_t numRanges,
              const std::function<int64_t(int64_t)> &boundary,
              const std::function<void(int64_t, int64_t)> &body) {
    std::unique_lock<std::mutex> ownership(owner, std::try_to_lock);
    if (!ownership)
      return false;
    {
      std::lock_guard<std::mutex> lock(mutex);
      while (int64_t(workers.size()) < numRanges - 1)
        workers.emplace_back([this, index = workers.size()] { work(index); });
      job = {&body, &boundary, numRanges};
      pending.store(numRanges - 1);
      generation.fetch_add(1);
    }
    wake.notify_all();
    insideJob = true;
    body(0, boundary(1));
    insideJob = false;
    for (int spin = 0; pending.load() != 0 && spin < kSpins; ++spin)
      pause();
    if (pending.load() != 0) {
      std::unique_lock<std::mutex> lock(mutex);
      done.wait(lock, [&] { return pending.load() == 0; });
    }
    return true;
  }

  /// Set on a thread while it runs a range: a parallelFor inside a body runs
  /// inline instead of waiting for the pool its caller holds.
  static thread_local bool insideJob;

private:
  struct Job {
    const std::function<void(int64_t, int64_t)> *body = nullptr;
    const std::function<int64_t(int64_t)> *boundary = nullptr;
    int64_t numRanges = 0;
  };
  static constexpr int kSpins = 20000;

  static void pause() {
#if defined(__x86_64__)
    __builtin_ia32_pause();
#endif
  }

  void work(size_t index) {
    insideJob = true;
    uint64_t seen = 0;
    for (;;) {
      for (int spin = 0; generation.load() == seen && spin < kSpins; ++spin)
        pause();
      Job current;
      {
        std::unique_lock<std::mutex> lock(mutex);
        wake.wait(lock, [&] { return generation.load() != seen; });
        seen = generation.load();
        current = job;
      }
      int64_t range = int64_t(index) + 1;
      if (range >= current.numRanges)
        continue;
      (*current.body)((*current.boundary)(range),
                      (*current.boundary)(range + 1));
      if (pending.fetch_sub(1) == 1) {
        std::lock_guard<std::mutex> lock(mutex);
        done.notify_one();
      }
    }
  }

  std::mutex owner, mutex;
  std::condition_variable wake, done;
  std::vector<std::thread> workers;
  Job job;
  std::atomic<uint64_t> generation{0};
  std::atomic<int64_t> pending{0};
};

thread_local bool ThreadPool::insideJob = false;

} // namespace

void parallelFor(int64_t size, int64_t grain,
                 const std::function<void(int64_t, int64_t)> &body) {
  if (size <= 0)
    return;
  grain = std::max<int64_t>(grain, 1);
  int64_t numGrains = (size + grain - 1) / grain;
  int64_t numRanges = std::min<int64_t>(getNumThreads(), numGrains);
  std::function<int64_t(int64_t)> boundary = [&](int64_t range) {
    return std::min(size, numGrains * range / numRanges * grain);
  };
  // One range, a call from inside a range, or a pool busy with another
  // caller's call: the caller runs everything. The ranges do not change
  // results (each output is computed by one call of `body`).
  if (numRanges <= 1 || ThreadPool::insideJob ||
      !ThreadPool::get().tryRun(numRanges, boundary, body))
    body(0, size);
}

} // namespace fp4train::numerics
