//===- Trainer.cpp - The training state of one fp4-train run --------------===//

#include "Trainer.h"

#include "Processes.h"

#include "fp4train/Numerics/Npy.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/FileSystem.h"

#include "llvm/Support/raw_ostream.h"

#include <cassert>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>

using namespace fp4train::train;
using mlir::fp4train::JitFunction;
using mlir::fp4train::JitValue;

double fp4train::train::getLearningRate(const TrainOptions &options,
                                        int64_t step) {
  if (options.schedule == Schedule::Constant)
    return options.lr;
  double rate = options.lr;
  if (step < options.warmup)
    rate *= double(step + 1) / double(options.warmup);
  // Cosine from the end of the warm-up to the horizon, from 1 to 0.1.
  constexpr double kFloor = 0.1;
  int64_t decaySteps = std::max<int64_t>(1, options.horizon - options.warmup);
  double progress =
      std::clamp(double(step - options.warmup) / double(decaySteps), 0.0, 1.0);
  return rate * (kFloor + (1 - kFloor) * 0.5 * (1 + std::cos(M_PI * progress)));
}

Trainer::Trainer(JitFunction &jit, const StepSignature &signature,
                 const TrainOptions &options, const Processes &processes)
    : jit(&jit), signature(signature), options(options), processes(processes) {
  const mlir::fp4train::StepLayout *layout = processes.getLayout();
  std::mt19937_64 rng(options.seed);
  for (auto [i, index] : llvm::enumerate(signature.params)) {
    const JitValue &value = this->jit->getArguments()[index];
    // Drawn whole, in the order one process draws them, then sharded.
    std::vector<int64_t> shape =
        layout ? layout->arguments[index].globalShape : value.shape;
    int64_t elements = 1;
    for (int64_t extent : shape)
      elements *= extent;
    std::vector<float> whole(elements);
    if (shape.size() >= 2) {
      // Glorot: the same for [out, in] and [in, out] layouts; expert
      // weights [E, out, in] are E such matrices.
      float fanSum = float(shape[shape.size() - 2] + shape.back());
      std::normal_distribution<float> normal(0.0f, std::sqrt(2.0f / fanSum));
      for (float &x : whole)
        x = normal(rng);
    } else {
      std::fill(whole.begin(), whole.end(), signature.vectorInit[i]);
    }
    std::vector<float> &p = params.emplace_back(value.getNumElements());
    if (layout)
      processes.takeShard(layout->arguments[index], whole.data(), p.data(),
                          sizeof(float));
    else
      p = std::move(whole);
    outs.emplace_back(value.getNumElements());
    if (options.adam) {
      first.emplace_back(p.size(), 0.0f);
      second.emplace_back(p.size(), 0.0f);
    }
  }
  auto args = this->jit->getArguments();
  int64_t inputs = args[signature.input].getNumElements();
  int64_t targets = args[signature.target].getNumElements();
  if (signature.tokens) {
    tokenInput.resize(inputs);
    tokenTarget.resize(targets);
  } else {
    floatInput.resize(inputs);
    floatTarget.resize(targets);
  }
  if (layout) {
    auto wholeBytes = [&](size_t index) {
      int64_t elements = 1;
      for (int64_t extent : layout->arguments[index].globalShape)
        elements *= extent;
      return size_t(elements) * 4;
    };
    wholeInput.resize(wholeBytes(signature.input));
    wholeTarget.resize(wholeBytes(signature.target));
  }
}

template <typename Draw> void Trainer::load(Draw draw) {
  const mlir::fp4train::StepLayout *layout = processes.getLayout();
  if (!layout) {
    draw(inputData(), targetData());
    return;
  }
  // Every process draws the whole batch, so N processes see the batches of
  // one; f32 values and i32 token ids are 4 bytes.
  draw(wholeInput.data(), wholeTarget.data());
  processes.takeShard(layout->arguments[signature.input], wholeInput.data(),
                      inputData(), 4);
  processes.takeShard(layout->arguments[signature.target], wholeTarget.data(),
                      targetData(), 4);
}

void Trainer::setFunction(JitFunction &next, JitFunction *nextEval) {
  // Another recipe of the same step: the buffers stay valid.
  assert(next.getArguments().size() == jit->getArguments().size() &&
         next.getResults().size() == jit->getResults().size());
  assert(!nextEval ||
         nextEval->getArguments().size() == next.getArguments().size());
  jit = &next;
  eval = nextEval;
}

void Trainer::setCallArgs(int64_t step, float rate) {
  callRate = rate;
  callStep = step;
  callArgs.assign(jit->getArguments().size(), nullptr);
  for (auto [i, index] : llvm::enumerate(signature.params))
    callArgs[index] = params[i].data();
  callArgs[signature.input] = inputData();
  callArgs[signature.target] = targetData();
  if (signature.learningRate)
    callArgs[*signature.learningRate] = &callRate;
  if (signature.step)
    callArgs[*signature.step] = &callStep;
}

float Trainer::callEval(int64_t step) {
  // @eval_loss takes the step's arguments ([EVAL1]).
  setCallArgs(step, 0.0f);
  std::vector<void *> results = {&callLoss};
  if (llvm::Error error = eval->call(callArgs, results))
    fail(llvm::toString(std::move(error)));
  return callLoss;
}

float Trainer::call(int64_t step, float rate) {
  setCallArgs(step, rate);
  callResults = {&callLoss};
  for (std::vector<float> &out : outs)
    callResults.push_back(out.data());
  // [IDX1] A token id or target out of range: a one-line error.
  if (llvm::Error error = jit->call(callArgs, callResults))
    fail(llvm::toString(std::move(error)));
  return callLoss;
}

double Trainer::step(const Task &task, int64_t step) {
  load([&](void *input, void *target) { task.getBatch(step, input, target); });
  double rate = getLearningRate(options, step);
  float loss = call(step, float(rate));
  if (signature.updatesInGraph) {
    params.swap(outs);
    return loss;
  }
  // [global-norm clipping] scale every gradient by clip / ‖g‖ when the norm
  // exceeds the threshold.
  float gradScale = 1.0f;
  if (options.clip > 0) {
    // The norm of the whole gradient: each process sums its shards, each
    // counted once over the processes that hold a copy of it.
    const mlir::fp4train::StepLayout *layout = processes.getLayout();
    double sumSquares = 0;
    for (auto [i, g] : llvm::enumerate(outs)) {
      double shard = 0;
      for (float x : g)
        shard += double(x) * x;
      sumSquares += layout
                        ? shard / double(layout->results[i + 1].getReplication(
                                      layout->gridShape))
                        : shard;
    }
    double norm = std::sqrt(processes.sum(sumSquares));
    if (norm > options.clip)
      gradScale = float(options.clip / norm);
  }
  for (size_t i = 0; i < params.size(); ++i)
    update(i, step + 1, rate, gradScale);
  return loss;
}

double Trainer::validate(const Task &task, int64_t step) {
  int64_t batches = task.getNumValidationBatches();
  double sum = 0;
  for (int64_t b = 0; b < batches; ++b) {
    load([&](void *input, void *target) {
      task.getValidationBatch(b, input, target);
    });
    // In-graph SGD with a zero rate leaves `outs` equal to the parameters;
    // either way they are overwritten by the next step.
    sum += eval ? callEval(step) : call(step, 0.0f);
  }
  return batches ? sum / double(batches) : NAN;
}

std::vector<::fp4train::numerics::OutputFile>
Trainer::dump(const Task &task, int64_t step, const std::string &directory) {
  load([&](void *input, void *target) { task.getBatch(step, input, target); });
  call(step, float(getLearningRate(options, step)));
  // What the call read and wrote, still in place.
  llvm::ArrayRef<const void *> args = callArgs;
  llvm::ArrayRef<void *> results = callResults;
  namespace numerics = ::fp4train::numerics;
  std::vector<numerics::OutputFile> files;
  const mlir::fp4train::StepLayout *layout = processes.getLayout();
  auto add = [&](const std::string &name, const JitValue &value,
                 const void *data,
                 const mlir::fp4train::BoundaryLayout *whole) {
    float scalar = 0;
    if (value.kind == JitValue::Kind::F32)
      scalar = *static_cast<const float *>(data);
    else if (value.kind == JitValue::Kind::I64)
      scalar = float(*static_cast<const int64_t *>(data));
    if (value.kind != JitValue::Kind::Tensor)
      data = &scalar;
    // A sharded run writes the whole tensor, gathered on the root.
    std::vector<uint8_t> gathered;
    std::vector<int64_t> shape = value.shape;
    if (whole && value.kind == JitValue::Kind::Tensor) {
      gathered = processes.gather(*whole, data, value.elementBytes);
      data = gathered.data();
      shape = whole->globalShape;
    }
    if (!processes.isRoot())
      return;
    numerics::NpyDType type = value.elementBytes == 1
                                  ? numerics::NpyDType::UInt8
                              : value.isInt32 ? numerics::NpyDType::Int32
                                              : numerics::NpyDType::Float32;
    files.push_back({directory + "/" + name + ".npy",
                     numerics::serializeNpy(type, shape, data)});
  };
  for (auto [i, value] : llvm::enumerate(jit->getArguments()))
    add("arg" + std::to_string(i), value, args[i],
        layout ? &layout->arguments[i] : nullptr);
  for (auto [j, value] : llvm::enumerate(jit->getResults()))
    add("result" + std::to_string(j), value, results[j],
        layout ? &layout->results[j] : nullptr);
  return files;
}

void Trainer::update(size_t i, int64_t t, double rate, float gradScale) {
  std::vector<float> &p = params[i];
  const std::vector<float> &g = outs[i];
  if (!options.adam) {
    for (size_t j = 0; j < p.size(); ++j)
      p[j] -= float(rate) * (g[j] * gradScale);
    return;
  }
  const double beta1 = 0.9, beta2 = 0.999, epsilon = 1e-8;
  double c1 = 1 - std::pow(beta1, double(t)),
         c2 = 1 - std::pow(beta2, double(t));
  for (size_t j = 0; j < p.size(); ++j) {
    float gj = g[j] * gradScale;
    first[i][j] = float(beta1 * first[i][j] + (1 - beta1) * gj);
    second[i][j] = float(beta2 * second[i][j] + (1 - beta2) * double(gj) * gj);
    double m = first[i][j] / c1, v = second[i][j] / c2;
    p[j] -= float(rate * m / (std::sqrt(v) + epsilon));
  }
}
