//===- Session.cpp - The runs of one fp4-train invocation -----------------===//

#include "Session.h"

#include "fp4train/Numerics/Parallel.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "llvm/ADT/DenseSet.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>

using namespace mlir;
using namespace mlir::fp4train;

namespace fp4train::train {

/// Whether a 1-D parameter scales something (a norm gain) rather than
/// shifting it (a bias): some linalg body multiplies by it.
static bool isMultiplicative(BlockArgument param) {
  for (OpOperand &use : param.getUses()) {
    auto generic = dyn_cast<linalg::GenericOp>(use.getOwner());
    if (!generic)
      continue;
    BlockArgument inner = generic.getMatchingBlockArgument(&use);
    for (Operation *user : inner.getUsers())
      if (isa<arith::MulFOp>(user))
        return true;
  }
  return false;
}

/// The smallest static extent of a tensor dimension that values derived
/// from `ids` (an argument of token ids) index with tensor.extract: what
/// an embedding lookup and the gather of a target's logit read, through
/// linalg bodies, casts, selects and reshapes. Found by structure alone, so
/// it holds for torch-mlir's lowering of aten.embedding as for the
/// generator's steps.
static std::optional<int64_t> findIndexedExtent(Value ids) {
  std::optional<int64_t> extent;
  SmallVector<Value> work = {ids};
  llvm::DenseSet<Value> seen;
  while (!work.empty()) {
    Value value = work.pop_back_val();
    if (!seen.insert(value).second)
      continue;
    for (OpOperand &use : value.getUses()) {
      Operation *user = use.getOwner();
      if (auto extract = dyn_cast<tensor::ExtractOp>(user)) {
        if (&use == &extract.getTensorMutable()) {
          work.push_back(extract.getResult());
          continue;
        }
        RankedTensorType type = extract.getTensor().getType();
        int64_t dim = use.getOperandNumber() - 1;
        if (!type.isDynamicDim(dim))
          extent = std::min(extent.value_or(INT64_MAX), type.getDimSize(dim));
      } else if (auto linalgOp = dyn_cast<linalg::LinalgOp>(user)) {
        if (linalgOp.isDpsInput(&use) && linalgOp.getBlock())
          work.push_back(linalgOp.getMatchingBlockArgument(&use));
      } else if (isa<arith::IndexCastOp, arith::IndexCastUIOp, arith::ExtSIOp,
                     arith::ExtUIOp, arith::SelectOp, tensor::CollapseShapeOp,
                     tensor::ExpandShapeOp, tensor::ExtractSliceOp,
                     shard::ShardOp>(user)) {
        work.push_back(user->getResult(0));
      }
    }
  }
  return extent;
}

StepSignature readSignature(func::FuncOp function, const JitFunction &jit) {
  StepSignature s;
  std::string where = "@" + function.getName().str();
  std::vector<size_t> data;
  for (auto [index, value] : llvm::enumerate(jit.getArguments())) {
    if (value.isParam) {
      s.params.push_back(index);
      s.vectorInit.push_back(
          value.shape.size() == 1 &&
                  isMultiplicative(function.getArgument(index))
              ? 1.0f
              : 0.0f);
    } else if (value.kind == JitValue::Kind::Tensor) {
      data.push_back(index);
    } else if (value.kind == JitValue::Kind::F32) {
      if (s.learningRate)
        fail(where + " takes more than one f32 scalar (the learning rate)");
      s.learningRate = index;
    } else {
      if (s.step)
        fail(where + " takes more than one integer scalar (the step)");
      s.step = index;
    }
  }
  auto args = jit.getArguments();
  if (s.params.empty())
    fail(where + " has no argument marked {fp4train.param}");
  const char *expectedData =
      " must take, besides its parameters, an input and a target: f32 "
      "tensors [rows, width] with the same rows, or i32 token ids [batch, "
      "length] (or [length]) of one shape";
  if (data.size() != 2)
    fail(where + expectedData);
  const JitValue &input = args[data[0]], &target = args[data[1]];
  s.tokens = input.isInt32;
  bool matches =
      s.tokens
          ? target.isInt32 && input.shape == target.shape &&
                (input.shape.size() == 1 || input.shape.size() == 2)
          : input.elementBytes == 4 && !target.isInt32 &&
                target.elementBytes == 4 && input.shape.size() == 2 &&
                target.shape.size() == 2 && input.shape[0] == target.shape[0];
  if (!matches)
    fail(where + expectedData);
  s.input = data[0];
  s.target = data[1];
  auto results = jit.getResults();
  bool shapesMatch =
      results.size() == s.params.size() + 1 && results[0].shape.empty();
  for (size_t i = 0; shapesMatch && i < s.params.size(); ++i)
    shapesMatch = results[i + 1].shape == args[s.params[i]].shape;
  if (!shapesMatch)
    fail(where + " must return the loss (tensor<f32>) and one tensor per "
                 "parameter, with the parameter's shape");
  if (s.tokens) {
    std::optional<int64_t> input =
        findIndexedExtent(function.getArgument(s.input));
    std::optional<int64_t> target =
        findIndexedExtent(function.getArgument(s.target));
    if (input || target)
      s.vocabulary =
          std::min(input.value_or(INT64_MAX), target.value_or(INT64_MAX));
  }
  s.updatesInGraph = s.learningRate.has_value();
  function.walk([&](linalg::BatchMatmulOp) { s.hasAttention = true; });
  return s;
}

void checkHostMemory(const JitFunction &jit, const StepSignature &signature,
                     bool adam, llvm::StringRef functionName) {
  // The counts are checked by JitFunction::compile; the sum in long double
  // cannot overflow.
  long double bytes = 0;
  auto args = jit.getArguments();
  for (size_t index : signature.params)
    bytes += (adam ? 4.0L : 2.0L) * args[index].getNumElements() * 4;
  bytes += 4.0L * args[signature.input].getNumElements() +
           4.0L * args[signature.target].getNumElements();
  uint64_t available = ::fp4train::numerics::getPhysicalMemoryBytes();
  if (available && bytes > (long double)available)
    fail("@" + functionName + " needs " +
         llvm::Twine((unsigned long long)std::min<long double>(bytes, 1e19L)) +
         " bytes of host buffers for its parameters and batch, more than "
         "this machine's " +
         llvm::Twine((unsigned long long)available));
}

Run train(Session &session, const Task &task, const std::string &recipeName,
          uint64_t seed, std::optional<double> target) {
  CompiledStep compiled, switched;
  StepSignature signature;
  {
    std::lock_guard<std::mutex> lock(session.compileMutex);
    CompiledStep &cached = session.compiled[recipeName];
    if (!cached.step)
      cached = session.compile(recipeName);
    compiled = cached;
    if (session.switchStep && recipeName != "f32") {
      CompiledStep &other = session.compiledSwitched[recipeName];
      if (!other.step)
        other = session.compileSwitched(recipeName);
      switched = other;
    }
    auto function =
        session.module.lookupSymbol<func::FuncOp>(session.functionName);
    signature = readSignature(function, *compiled.step);
  }
  JitFunction &jit = *compiled.step;
  checkHostMemory(jit, signature, session.options.adam, session.functionName);
  // Run times are training times: the compilation of a recipe is shared by
  // its seeds (and the first recipe's happened before any run).
  auto start = std::chrono::steady_clock::now();
  TrainOptions options = session.options;
  options.seed = seed;
  Trainer trainer(jit, signature, options, *session.processes);
  if (compiled.eval)
    trainer.setFunction(jit, compiled.eval.get());
  // Written with the run's other outputs, once all runs have succeeded.
  if (!session.dumpDirectory.empty() && recipeName == session.dumpRecipe &&
      seed == session.dumpSeed)
    session.dumped = trainer.dump(task, 0, session.dumpDirectory);

  Run run;
  run.recipe = recipeName;
  run.seed = seed;
  run.steps = session.horizon;
  std::string label = run.getLabel(session.labelsWithSeed);
  bool validated = task.getNumValidationBatches() > 0;
  auto validate = [&](int64_t steps) {
    double loss = trainer.validate(task, steps);
    if (!std::isfinite(loss))
      fail(label + ": the held-out loss is not finite after " +
           llvm::Twine(steps) + " steps");
    run.validation.emplace_back(steps, loss);
    return loss;
  };
  if (validated)
    validate(0);
  auto reached = [&](int64_t steps) {
    if (!target)
      return true;
    if (validated)
      return run.validation.back().first == steps &&
             run.validation.back().second <= *target;
    return windowMean(run.losses, steps, session.window) <= *target;
  };
  for (int64_t s = 0; s < session.limit; ++s) {
    if (s >= session.horizon && reached(s))
      break;
    if (switched.step && s == *session.switchStep) {
      // [SW1] same signature, same buffers: parameters and optimizer
      // moments carry over.
      trainer.setFunction(*switched.step, switched.eval.get());
      run.switchedAt = s;
    }
    double loss = trainer.step(task, s);
    if (!std::isfinite(loss))
      fail(label + ": the loss is not finite at step " + llvm::Twine(s));
    run.losses.push_back(loss);
    int64_t done = s + 1;
    if (validated && (done % session.evalEvery == 0 ||
                      done == session.horizon || done == session.limit))
      validate(done);
    double elapsed =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
            .count();
    session.progress.update(label, done, session.horizon,
                            windowMean(run.losses, done, session.window),
                            double(done * session.tokensPerStep) / elapsed);
  }
  session.progress.finish(label);
  run.seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  return run;
}

} // namespace fp4train::train
