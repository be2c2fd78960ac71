//===- Fibers.h - Cooperative branches of one workgroup -------------------===//
//
// Private to lib/Emulation/Interpreter. The lockstep executor runs the two
// sides of a divergent scf.if one after the other, which is wrong for
// warp-specialized kernels whose roles hand work to each other through
// mbarriers (producers / MMA issuer / epilogue on sm_100a): the first role
// would wait for a phase only the second completes. On instruction sets
// that ask for it (InstructionSet::runsBranchesConcurrently), each side of a
// divergent scf.if becomes a fiber: an OS thread that runs only while it
// holds the workgroup's baton. A fiber gives the baton away only when it
// blocks (ExecutionContext::waitUntil, e.g. mbarrier.try_wait on a phase
// that has not completed) or finishes, so execution stays deterministic and
// single-threaded, and a kernel whose roles never wait runs exactly as in
// lockstep. When no fiber can run, every waiting one fails (a deadlock).
//
//===----------------------------------------------------------------------===//

#ifndef FP4TRAIN_LIB_EMULATION_INTERPRETER_FIBERS_H
#define FP4TRAIN_LIB_EMULATION_INTERPRETER_FIBERS_H

#include "mlir/Support/LogicalResult.h"

#include <condition_variable>
#include <functional>
#include <mutex>
#include <vector>

namespace mlir::fp4train::emulation::detail {

class FiberScheduler {
public:
  /// Called by the running fiber: runs `bodies` as fibers (the first one
  /// first) and returns their results once every one has finished.
  std::vector<LogicalResult>
  spawn(const std::vector<std::function<LogicalResult()>> &bodies);
  /// Called by the running fiber: returns true once `ready()` holds (other
  /// fibers running meanwhile), false when no fiber can make progress.
  bool waitUntil(const std::function<bool()> &ready);

private:
  struct Fiber {
    /// Null: runnable; else it runs again once this holds.
    std::function<bool()> ready;
    /// Waiting for its children (not woken on a deadlock).
    bool joining = false;
    bool finished = false;
  };
  bool isRunnable(unsigned id) const;
  /// The next runnable fiber after `me` (round robin, `me` excluded), or
  /// -1.
  int pickNext(unsigned me) const;
  /// Hands the baton to `next` and, unless `me` finished, waits for it back.
  void switchTo(std::unique_lock<std::mutex> &lock, unsigned me, int next,
                bool wait);

  std::mutex mutex;
  std::condition_variable changed;
  /// Fiber 0 is the workgroup's own execution.
  std::vector<Fiber> fibers = {Fiber()};
  unsigned current = 0;
  bool deadlock = false;
};

} // namespace mlir::fp4train::emulation::detail

#endif // FP4TRAIN_LIB_EMULATION_INTERPRETER_FIBERS_H
