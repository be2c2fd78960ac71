//===- Session.h - The runs of one fp4-train invocation ---------*- C++ -*-===//
//
// What the runs of one invocation share (the module, its compiled recipes,
// the schedule, the progress line) and the loop that trains one run of a
// recipe and seed: beside Trainer.h, which holds one run's state.
//
//===----------------------------------------------------------------------===//

#ifndef FP4TRAIN_TOOLS_FP4TRAIN_SESSION_H
#define FP4TRAIN_TOOLS_FP4TRAIN_SESSION_H

#include "Processes.h"
#include "Report.h"
#include "Tasks.h"
#include "Trainer.h"

#include "fp4train/Numerics/Files.h"
#include "fp4train/Runtime/JitFunction.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/Support/Process.h"

#include <chrono>
#include <cstdio>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace fp4train::train {

/// How `function` is called, read from its signature and its compiled form:
/// fails (one line, exit 1) when it is not a training step.
StepSignature readSignature(mlir::func::FuncOp function,
                            const mlir::fp4train::JitFunction &jit);

/// Fails unless the host buffers of a run (parameters, their results and
/// Adam's two moments, the batch) fit in the machine's memory: an allocation
/// past it would end the process in std::bad_alloc.
void checkHostMemory(const mlir::fp4train::JitFunction &jit,
                     const StepSignature &signature, bool adam,
                     llvm::StringRef functionName);

/// One line on stderr (when it is a terminal) with the state of every run
/// in progress.
class Progress {
public:
  Progress() : enabled(llvm::sys::Process::StandardErrIsDisplayed()) {}

  void update(const std::string &label, int64_t step, int64_t horizon,
              double loss, double tokensPerSecond) {
    if (!enabled)
      return;
    std::lock_guard<std::mutex> lock(mutex);
    char text[160];
    std::snprintf(text, sizeof(text), "%s %lld/%lld loss %.4f %.0f tok/s",
                  label.c_str(), (long long)step, (long long)horizon, loss,
                  tokensPerSecond);
    active[label] = text;
    auto now = std::chrono::steady_clock::now();
    if (now - lastPrint < std::chrono::milliseconds(200))
      return;
    lastPrint = now;
    print();
  }

  void finish(const std::string &label) {
    if (!enabled)
      return;
    std::lock_guard<std::mutex> lock(mutex);
    active.erase(label);
    print();
  }

private:
  void print() {
    std::string line;
    for (const auto &entry : active)
      line += (line.empty() ? "" : " | ") + entry.second;
    // Clear the previous line, then write this one without a newline.
    std::fprintf(stderr, "\r\033[K%s", line.substr(0, 200).c_str());
    std::fflush(stderr);
  }

  bool enabled;
  std::mutex mutex;
  std::map<std::string, std::string> active;
  std::chrono::steady_clock::time_point lastPrint;
};

/// The compiled functions of one recipe: the training step, and the
/// forward-only loss (@eval_loss, [EVAL1]) where the step has one and the
/// run uses it.
struct CompiledStep {
  std::shared_ptr<mlir::fp4train::JitFunction> step, eval;
};

/// What the runs of one invocation share.
struct Session {
  mlir::ModuleOp module;
  /// The step function's name in `module`.
  std::string functionName;
  /// Compiles the step (and @eval_loss) under a recipe (the tool's pipeline
  /// options).
  std::function<CompiledStep(llvm::StringRef)> compile;
  /// --switch-at ([SW1]): from step `switchStep` on, the runs of every
  /// recipe but f32 call the step `compileSwitched` makes for the recipe,
  /// whose switched roles keep the graph's precision.
  std::optional<int64_t> switchStep;
  std::function<CompiledStep(llvm::StringRef)> compileSwitched;
  TrainOptions options;
  /// This process and the others of a sharded step (one, unsharded).
  const Processes *processes = nullptr;
  int64_t horizon = 0, limit = 0, window = 0, evalEvery = 0;
  int64_t tokensPerStep = 0;
  bool labelsWithSeed = false;
  /// The run whose first step --dump-first-step writes (into
  /// `dumpDirectory`, when set), and its files.
  std::string dumpDirectory;
  std::string dumpRecipe;
  uint64_t dumpSeed = 0;
  std::vector<::fp4train::numerics::OutputFile> dumped;
  /// Compilation and reading the IR are serialized: runs share one
  /// MLIRContext. Training needs neither.
  std::mutex compileMutex;
  /// The compiled step of each recipe, shared by its seeds (calls on
  /// distinct buffers may run concurrently).
  std::map<std::string, CompiledStep> compiled;
  /// The switched step of each recipe, likewise.
  std::map<std::string, CompiledStep> compiledSwitched;
  Progress progress;
};

/// Trains `recipeName` from `seed` for the horizon, then on past it (up to
/// the limit) while it has not reached `target`: the f32 run's final
/// held-out loss where the task has a validation split, else its final
/// moving-mean training loss.
Run train(Session &session, const Task &task, const std::string &recipeName,
          uint64_t seed, std::optional<double> target);

} // namespace fp4train::train

#endif // FP4TRAIN_TOOLS_FP4TRAIN_SESSION_H
