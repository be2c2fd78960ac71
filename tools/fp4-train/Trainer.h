//===- Trainer.h - The training state of one fp4-train run ------*- C++ -*-===//
//
// Parameters, optimizer moments and the learning-rate schedule of one run of
// a compiled step function, and the calls that train and validate it.
//
//===----------------------------------------------------------------------===//

#ifndef FP4TRAIN_TOOLS_FP4TRAIN_TRAINER_H
#define FP4TRAIN_TOOLS_FP4TRAIN_TRAINER_H

#include "Failure.h"
#include "Tasks.h"

#include "fp4train/Numerics/Files.h"

#include "fp4train/Runtime/JitFunction.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace fp4train::train {

class Processes;

/// How the step function is called, read from its signature.
struct StepSignature {
  std::vector<size_t> params;
  size_t input = 0, target = 0;
  std::optional<size_t> learningRate, step;
  /// Results are updated parameters (SGD in the graph) rather than
  /// gradients.
  bool updatesInGraph = false;
  bool hasAttention = false;
  /// Input and target are i32 token ids (a language model) rather than f32
  /// tensors [rows, width].
  bool tokens = false;
  /// The number of token ids the step can look up (its vocabulary): the
  /// smallest extent of a tensor dimension that the input's or the
  /// target's ids index, when the step indexes one with them.
  std::optional<int64_t> vocabulary;
  /// Initial value of each 1-D parameter: 1 for multiplicative gains (norm
  /// weights), 0 for additive biases.
  std::vector<float> vectorInit;
};

enum class Schedule {
  Constant,
  /// Linear warm-up, then cosine decay to 10% of the rate at the horizon
  /// (and 10% past it).
  Cosine,
};

struct TrainOptions {
  bool adam = false;
  double lr = 0;
  Schedule schedule = Schedule::Constant;
  int64_t warmup = 0;
  int64_t horizon = 0;
  /// Global gradient-norm clipping threshold; 0 disables it.
  double clip = 0;
  /// Seed of the initialization.
  uint64_t seed = 1;
};

/// The learning rate of step `step` (0-based) under `options`.
double getLearningRate(const TrainOptions &options, int64_t step);

class Trainer {
public:
  /// `processes` says which shards of the parameters and the batches this
  /// process holds: the trainer draws them whole, as one process would,
  /// and keeps its shards.
  Trainer(mlir::fp4train::JitFunction &jit, const StepSignature &signature,
          const TrainOptions &options, const Processes &processes);

  /// Calls `jit` from now on: a step of the same function compiled under
  /// another recipe (same arguments and results); the parameters and the
  /// optimizer's moments stay. `eval`, when set, computes validate()'s
  /// losses ([EVAL1]): a function of the step's arguments returning its
  /// loss alone.
  void setFunction(mlir::fp4train::JitFunction &jit,
                   mlir::fp4train::JitFunction *eval);

  /// Runs step `step` on the task's batch, updates the parameters and
  /// returns the loss.
  double step(const Task &task, int64_t step);

  /// The mean loss over the task's held-out batches (the step function's
  /// loss result; its gradients are discarded, the parameters unchanged).
  double validate(const Task &task, int64_t step);

  /// Calls the step once on `step`'s batch and returns its arguments
  /// (`directory`/argN.npy) and results (`directory`/resultN.npy) as files
  /// for the caller to write with the run's other outputs, all or none.
  /// Collective in a sharded run: the root gets the files, whole tensors
  /// in the unsharded layout; the other processes none.
  std::vector<::fp4train::numerics::OutputFile>
  dump(const Task &task, int64_t step, const std::string &directory);

private:
  /// Calls the step function on the current input and target; returns the
  /// loss, and the parameter results are in `outs`. The pointers it passed
  /// stay in callArgs / callResults (the scalars are members).
  float call(int64_t step, float rate);
  /// Points callArgs at the parameters, the current input and target, the
  /// rate and the step.
  void setCallArgs(int64_t step, float rate);
  /// Calls @eval_loss on the current input and target; returns the loss.
  float callEval(int64_t step);
  /// Fills the input and target with this process's shards of what `draw`
  /// writes (a whole batch, in the task's layout).
  template <typename Draw> void load(Draw draw);
  void update(size_t i, int64_t t, double rate, float gradScale);
  void *inputData() {
    return signature.tokens ? (void *)tokenInput.data() : floatInput.data();
  }
  void *targetData() {
    return signature.tokens ? (void *)tokenTarget.data() : floatTarget.data();
  }

  mlir::fp4train::JitFunction *jit;
  mlir::fp4train::JitFunction *eval = nullptr;
  const StepSignature &signature;
  TrainOptions options;
  const Processes &processes;
  std::vector<std::vector<float>> params, outs, first, second;
  std::vector<float> floatInput, floatTarget;
  std::vector<int32_t> tokenInput, tokenTarget;
  /// A whole batch (sharded runs), before each process takes its shard.
  std::vector<uint8_t> wholeInput, wholeTarget;
  float callRate = 0, callLoss = 0;
  int64_t callStep = 0;
  std::vector<const void *> callArgs;
  std::vector<void *> callResults;
};

} // namespace fp4train::train

#endif // FP4TRAIN_TOOLS_FP4TRAIN_TRAINER_H
