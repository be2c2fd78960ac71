//===- TrainStepBenchmark.cpp - Cost of a quantized training step ---------===//
//
// One call of a training step compiled with fp4train-cpu-pipeline
// (numerics=runtime), under f32 and under each recipe, in the same process:
// run.sh reports each recipe's time per step as a ratio to the f32 step of
// the same model (issue target: at most 1.5x). The step is
// FP4TRAIN_BENCH_STEP (default: the bundled GPT example); its parameters
// are small random values and its data arguments random token ids (or
// values), so every recipe does the same work on the same inputs. Steps are
// compiled with the JIT's default bounds checks ([IDX1]); the `unchecked`
// variants of f32 and nvfp4 turn them off, so that run.sh shows what the
// checks cost.
//
//===----------------------------------------------------------------------===//

#include "fp4train/InitFP4Train.h"
#include "fp4train/Pipelines/Pipelines.h"
#include "fp4train/Runtime/JitFunction.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/raw_ostream.h"

#include <benchmark/benchmark.h>

#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

using namespace mlir;
using namespace mlir::fp4train;

namespace {

const char *getStepPath() {
  const char *path = std::getenv("FP4TRAIN_BENCH_STEP");
  return path ? path : FP4TRAIN_SOURCE_DIR "/examples/gpt_train_step.mlir";
}

/// The compiled step of one recipe with its argument and result buffers.
struct CompiledStep {
  std::unique_ptr<JitFunction> jit;
  std::vector<std::vector<uint32_t>> buffers, results;
  std::vector<const void *> args;
  std::vector<void *> outs;
  float rate = 0;
  int64_t step = 0;
  int64_t tokens = 0;
};

std::unique_ptr<CompiledStep> compileStep(const std::string &recipe,
                                          bool checkIndices) {
  static MLIRContext *context = [] {
    DialectRegistry registry;
    registerAllDialects(registry);
    return new MLIRContext(registry);
  }();
  OwningOpRef<ModuleOp> module =
      parseSourceFile<ModuleOp>(getStepPath(), context);
  if (!module)
    return nullptr;
  auto compiled = std::make_unique<CompiledStep>();
  auto jit = JitFunction::compile(
      *module, "train_step",
      [&](OpPassManager &pm) {
        CPUPipelineOptions options;
        options.recipe = recipe;
        options.outParams = true;
        options.numerics = CPUNumerics::Runtime;
        buildCPUPipeline(pm, options);
      },
      JitOptions{checkIndices});
  if (!jit) {
    llvm::errs() << recipe << ": " << llvm::toString(jit.takeError()) << "\n";
    return nullptr;
  }
  compiled->jit = std::move(*jit);
  std::mt19937 rng(7);
  std::normal_distribution<float> normal(0.0f, 0.05f);
  std::uniform_int_distribution<int32_t> token(0, 255);
  bool firstData = true;
  for (const JitValue &value : compiled->jit->getArguments()) {
    if (value.kind == JitValue::Kind::F32) {
      compiled->args.push_back(&compiled->rate);
      continue;
    }
    if (value.kind == JitValue::Kind::I64) {
      compiled->args.push_back(&compiled->step);
      continue;
    }
    std::vector<uint32_t> &buffer =
        compiled->buffers.emplace_back(value.getNumElements());
    for (uint32_t &word : buffer) {
      float x =
          value.isParam ? normal(rng) + (value.shape.size() == 1) : normal(rng);
      if (value.isInt32)
        word = uint32_t(token(rng));
      else
        std::memcpy(&word, &x, 4);
    }
    if (!value.isParam && firstData) {
      compiled->tokens = value.isInt32         ? value.getNumElements()
                         : value.shape.empty() ? 1
                                               : value.shape[0];
      firstData = false;
    }
    compiled->args.push_back(buffer.data());
  }
  for (const JitValue &value : compiled->jit->getResults()) {
    // Results are f32 tensors (loss and gradients) or i32; one word each.
    std::vector<uint32_t> &buffer =
        compiled->results.emplace_back(value.getNumElements());
    compiled->outs.push_back(buffer.data());
  }
  return compiled;
}

void BM_TrainStep(benchmark::State &state, const std::string &recipe,
                  bool checkIndices) {
  std::string label = recipe + (checkIndices ? "" : " unchecked");
  static std::vector<std::pair<std::string, std::unique_ptr<CompiledStep>>>
      cache;
  CompiledStep *step = nullptr;
  for (auto &[name, compiled] : cache)
    if (name == label)
      step = compiled.get();
  if (!step) {
    cache.emplace_back(label, compileStep(recipe, checkIndices));
    step = cache.back().second.get();
  }
  if (!step) {
    state.SkipWithError("the step does not compile");
    return;
  }
  for (auto _ : state) {
    llvm::cantFail(step->jit->call(step->args, step->outs));
    benchmark::ClobberMemory();
  }
  state.SetLabel(label);
  state.counters["tokens/s"] = benchmark::Counter(
      double(step->tokens), benchmark::Counter::kIsIterationInvariantRate);
}

// f32 ("none") first: run.sh divides by it.
const char *const kRecipes[] = {"none",           "mxfp8",
                                "mxfp4",          "mxfp4-fprop-dgrad",
                                "mxfp4-hadamard", "mxfp4-random-hadamard",
                                "mxfp4-sr",       "nvfp4"};

[[maybe_unused]] const bool registered = [] {
  auto add = [](const char *recipe, bool checkIndices) {
    benchmark::RegisterBenchmark(
        (std::string("BM_TrainStep/") + recipe +
         (checkIndices ? "" : "/unchecked"))
            .c_str(),
        [recipe, checkIndices](benchmark::State &state) {
          BM_TrainStep(state, recipe, checkIndices);
        })
        ->Unit(benchmark::kMillisecond)
        ->UseRealTime();
  };
  for (const char *recipe : kRecipes)
    add(recipe, /*checkIndices=*/true);
  for (const char *recipe : {"none", "nvfp4"})
    add(recipe, /*checkIndices=*/false);
  return true;
}();

} // namespace

BENCHMARK_MAIN();
