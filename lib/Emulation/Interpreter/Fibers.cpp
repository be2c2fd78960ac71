//===- Fibers.cpp - Cooperative branches of one workgroup -----------------===//
//
// See Fibers.h.
//
//===----------------------------------------------------------------------===//

#include "Fibers.h"

#include <thread>

using namespace mlir;
using namespace mlir::fp4train::emulation::detail;

bool FiberScheduler::isRunnable(unsigned id) const {
  const Fiber &fiber = fibers[id];
  return !fiber.finished && (!fiber.ready || fiber.ready());
}

int FiberScheduler::pickNext(unsigned me) const {
  const unsigned n = fibers.size();
  for (unsigned i = 1; i < n; ++i) {
    const unsigned id = (me + i) % n;
    if (isRunnable(id))
      return static_cast<int>(id);
  }
  return -1;
}

void FiberScheduler::switchTo(std::unique_lock<std::mutex> &lock, unsigned me,
                              int next, bool wait) {
  if (next < 0) {
    // Nobody can run: a deadlock. Wake a waiting fiber (not one joining its
    // children, which are still alive) so that its wait fails.
    deadlock = true;
    for (unsigned id = 0; id < fibers.size(); ++id)
      if (id != me && !fibers[id].finished && !fibers[id].joining) {
        next = static_cast<int>(id);
        break;
      }
  }
  if (next < 0)
    return;
  current = static_cast<unsigned>(next);
  changed.notify_all();
  if (wait)
    changed.wait(lock, [&] { return current == me; });
}

std::vector<LogicalResult> FiberScheduler::spawn(
    const std::vector<std::function<LogicalResult()>> &bodies) {
  std::unique_lock<std::mutex> lock(mutex);
  const unsigned parent = current;
  const unsigned first = fibers.size();
  std::vector<LogicalResult> results(bodies.size(), failure());
  std::vector<std::thread> threads;
  for (unsigned i = 0; i < bodies.size(); ++i)
    fibers.push_back(Fiber());
  for (unsigned i = 0; i < bodies.size(); ++i) {
    const unsigned id = first + i;
    threads.emplace_back([this, id, i, &bodies, &results] {
      {
        std::unique_lock<std::mutex> inner(mutex);
        changed.wait(inner, [&] { return current == id; });
      }
      // Runs alone: every other fiber waits for the baton.
      results[i] = bodies[i]();
      std::unique_lock<std::mutex> inner(mutex);
      fibers[id].finished = true;
      switchTo(inner, id, pickNext(id), /*wait=*/false);
    });
  }
  fibers[parent].joining = true;
  fibers[parent].ready = [this, first, count = bodies.size()] {
    for (unsigned id = first; id < first + count; ++id)
      if (!fibers[id].finished)
        return false;
    return true;
  };
  current = first;
  changed.notify_all();
  changed.wait(lock, [&] { return current == parent; });
  fibers[parent].joining = false;
  fibers[parent].ready = nullptr;
  lock.unlock();
  for (std::thread &thread : threads)
    thread.join();
  // The children's slots stay (ids are positions); they are finished.
  return results;
}

bool FiberScheduler::waitUntil(const std::function<bool()> &ready) {
  std::unique_lock<std::mutex> lock(mutex);
  if (ready())
    return true;
  if (deadlock)
    return false;
  const unsigned me = current;
  fibers[me].ready = ready;
  switchTo(lock, me, pickNext(me), /*wait=*/true);
  fibers[me].ready = nullptr;
  // Woken because `ready` holds, or because of a deadlock.
  return !deadlock && ready();
}
