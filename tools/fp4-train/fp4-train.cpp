//===- fp4-train.cpp - Train a step function under fp4train recipes -------===//
//
// Compiles a training-step function with fp4train-cpu-pipeline under a
// recipe, JITs it, and trains on deterministic data:
//
//   fp4-train STEP.mlir [--recipe R | --compare R1,R2,...] [--steps N]
//             [--optimizer sgd|adam] [--lr X] [--out DIR] ...
//
// The step function (default @train_step) takes its parameters (arguments
// marked {fp4train.param}), an input and a target tensor of the same number
// of rows, optionally an f32 learning rate and an i64 step; it returns the
// loss (a 0-d tensor) followed by one tensor per parameter. With a learning
// rate argument those are the updated parameters (SGD inside the graph);
// without, they are gradients, and the host applies SGD or Adam.
//
// --compare runs each recipe from the same initialization on the same
// batches and prints final loss, gap against f32 and token overhead (see
// Report.h), and writes losses.csv and loss_curves.svg into --out.
// Every failure is one line on stderr and exit status 1.
//
//===----------------------------------------------------------------------===//

#include "Report.h"
#include "Tasks.h"

#include "fp4train/Dialect/FP4Train/IR/FP4TrainRecipes.h"
#include "fp4train/InitFP4Train.h"
#include "fp4train/Numerics/Files.h"
#include "fp4train/Numerics/Npy.h"
#include "fp4train/Numerics/Parallel.h"
#include "fp4train/Pipelines/Pipelines.h"
#include "fp4train/Runtime/JitFunction.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/SourceMgr.h"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <functional>
#include <random>

using namespace mlir;
using namespace mlir::fp4train;
using namespace ::fp4train::train;
namespace cl = llvm::cl;

static cl::OptionCategory category("fp4-train options");
static cl::opt<std::string> inputFile(cl::Positional, cl::Required,
                                      cl::desc("<training step .mlir>"),
                                      cl::cat(category));
static cl::opt<std::string> functionName("function", cl::init("train_step"),
                                         cl::desc("the step function"),
                                         cl::cat(category));
static cl::opt<std::string>
    recipe("recipe", cl::init("nvfp4"),
           cl::desc("recipe of a single run (f32 = no quantization)"),
           cl::cat(category));
static cl::opt<std::string>
    compare("compare",
            cl::desc("comma-separated recipes to compare from the same seed "
                     "(e.g. f32,mxfp8,mxfp4,mxfp4-hadamard,"
                     "mxfp4-random-hadamard,mxfp4-sr,nvfp4)"),
            cl::cat(category));
static cl::opt<int64_t> steps("steps", cl::init(0),
                              cl::desc("training steps (0: the model's "
                                       "default)"),
                              cl::cat(category));
static cl::opt<std::string> optimizer("optimizer", cl::init("auto"),
                                      cl::desc("sgd or adam (auto: sgd for "
                                               "in-graph updates, adam "
                                               "otherwise)"),
                                      cl::cat(category));
static cl::opt<double> learningRate("lr", cl::init(0),
                                    cl::desc("learning rate (0: the "
                                             "optimizer's default)"),
                                    cl::cat(category));
static cl::opt<uint64_t> seed("seed", cl::init(1),
                              cl::desc("seed of the data and the "
                                       "initialization"),
                              cl::cat(category));
static cl::opt<std::string> task("task", cl::init("auto"),
                                 cl::desc("teacher, text, or auto (text for "
                                          "steps with attention)"),
                                 cl::cat(category));
static cl::opt<std::string>
    corpus("corpus", cl::init("/usr/share/common-licenses/GPL-3"),
           cl::desc("text of the text task"), cl::cat(category));
static cl::opt<std::string> numerics("numerics", cl::init("runtime"),
                                     cl::desc("ir or runtime: how fp4train "
                                              "ops execute (bit-identical)"),
                                     cl::cat(category));
static cl::opt<unsigned>
    threads("num-threads", cl::init(1),
            cl::desc("threads of the numerics library (results do not "
                     "depend on it; the example models are too small to "
                     "gain from more than 1)"),
            cl::cat(category));
static cl::opt<std::string> outDir("out", cl::desc("directory for losses.csv "
                                                   "and loss_curves.svg"),
                                   cl::cat(category));
static cl::opt<std::string> dumpStep(
    "dump-first-step",
    cl::desc("directory to write the first step's arguments (argN.npy) and "
             "results (resultN.npy) to, for checking other hosts of the "
             "compiled step (the Python package) against this one"),
    cl::cat(category));
static cl::opt<int> keepFirst("keep-first", cl::init(-1),
                              cl::desc("leading linear layers kept in high "
                                       "precision"),
                              cl::cat(category));
static cl::opt<int> keepLast("keep-last", cl::init(-1),
                             cl::desc("trailing linear layers kept in high "
                                      "precision"),
                             cl::cat(category));
static cl::opt<int> stepArg("step-arg", cl::init(-1),
                            cl::desc("index of the step argument (default: "
                                     "the i64 argument)"),
                            cl::cat(category));
static cl::opt<std::string> weightLayout("weight-layout", cl::init("out-in"),
                                         cl::desc("out-in or in-out"),
                                         cl::cat(category));
static cl::opt<int> stochasticRounding("stochastic-rounding", cl::init(-1),
                                       cl::desc("recipe override: 0 or 1"),
                                       cl::cat(category));
static cl::opt<int> hadamard("hadamard", cl::init(-1),
                             cl::desc("recipe override: Wgrad Hadamard size"),
                             cl::cat(category));
static cl::opt<std::string> hadamardSigns("hadamard-signs",
                                          cl::desc("recipe override: none, "
                                                   "fixed or random"),
                                          cl::cat(category));
static cl::opt<std::string> scaleMode("scale-mode",
                                      cl::desc("recipe override: floor or "
                                               "rceil"),
                                      cl::cat(category));

namespace {

[[noreturn]] void fail(const llvm::Twine &message) {
  llvm::errs() << "fp4-train: error: " << message << "\n";
  std::exit(1);
}

/// How the step function is called, read from its signature.
struct StepSignature {
  std::vector<size_t> params;
  size_t input = 0, target = 0;
  std::optional<size_t> learningRate, step;
  /// Results are updated parameters (SGD in the graph) rather than
  /// gradients.
  bool updatesInGraph = false;
  bool hasAttention = false;
  /// Initial value of each 1-D parameter: 1 for multiplicative gains (norm
  /// weights), 0 for additive biases.
  std::vector<float> vectorInit;
};

/// Whether a 1-D parameter scales something (a norm gain) rather than
/// shifting it (a bias): some linalg body multiplies by it.
bool isMultiplicative(BlockArgument param) {
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
  if (data.size() != 2 || args[data[0]].shape.size() != 2 ||
      args[data[1]].shape.size() != 2 ||
      args[data[0]].shape[0] != args[data[1]].shape[0])
    fail(where + " must take, besides its parameters, an input and a target "
                 "tensor [rows, width] with the same rows");
  s.input = data[0];
  s.target = data[1];
  auto results = jit.getResults();
  bool shapesMatch = results.size() == s.params.size() + 1 &&
                     results[0].shape.empty();
  for (size_t i = 0; shapesMatch && i < s.params.size(); ++i)
    shapesMatch = results[i + 1].shape == args[s.params[i]].shape;
  if (!shapesMatch)
    fail(where + " must return the loss (tensor<f32>) and one tensor per "
                 "parameter, with the parameter's shape");
  s.updatesInGraph = s.learningRate.has_value();
  function.walk([&](linalg::BatchMatmulOp) { s.hasAttention = true; });
  return s;
}

/// Fails unless the host buffers of a run (parameters, their results and
/// Adam's two moments, the batch) fit in the machine's memory: an allocation
/// past it would end the process in std::bad_alloc.
void checkHostMemory(const JitFunction &jit, const StepSignature &signature,
                     bool adam) {
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

/// The training state of one run: parameters and optimizer moments.
class Trainer {
public:
  Trainer(JitFunction &jit, const StepSignature &signature,
          bool adam, double lr)
      : jit(jit), signature(signature), adam(adam), lr(lr) {
    std::mt19937_64 rng(seed);
    for (auto [i, index] : llvm::enumerate(signature.params)) {
      const JitValue &value = jit.getArguments()[index];
      std::vector<float> &p = params.emplace_back(value.getNumElements());
      if (value.shape.size() >= 2) {
        // Glorot: the same for [out, in] and [in, out] layouts.
        float fanSum = float(value.shape[0] + value.shape[1]);
        std::normal_distribution<float> normal(0.0f,
                                               std::sqrt(2.0f / fanSum));
        for (float &x : p)
          x = normal(rng);
      } else {
        std::fill(p.begin(), p.end(), signature.vectorInit[i]);
      }
      outs.emplace_back(value.getNumElements());
      if (adam) {
        first.emplace_back(p.size(), 0.0f);
        second.emplace_back(p.size(), 0.0f);
      }
    }
    auto args = jit.getArguments();
    input.resize(args[signature.input].getNumElements());
    target.resize(args[signature.target].getNumElements());
  }

  /// Runs step `step` on the task's batch and returns the loss.
  double step(const Task &task, int64_t step) {
    task.getBatch(step, input.data(), target.data());
    std::vector<const void *> args(jit.getArguments().size());
    for (auto [i, index] : llvm::enumerate(signature.params))
      args[index] = params[i].data();
    args[signature.input] = input.data();
    args[signature.target] = target.data();
    float rate = float(lr);
    int64_t stepValue = step;
    if (signature.learningRate)
      args[*signature.learningRate] = &rate;
    if (signature.step)
      args[*signature.step] = &stepValue;
    float loss = 0;
    std::vector<void *> results = {&loss};
    for (std::vector<float> &out : outs)
      results.push_back(out.data());
    jit.call(args, results);
    if (step == 0 && !dumpStep.empty())
      dump(args, results);
    if (signature.updatesInGraph) {
      params.swap(outs);
    } else {
      for (size_t i = 0; i < params.size(); ++i)
        update(i, step + 1);
    }
    return loss;
  }

private:
  /// Writes what one call took and returned as .npy files (scalars as
  /// 0-d float32 arrays).
  void dump(llvm::ArrayRef<const void *> args, llvm::ArrayRef<void *> results) {
    if (std::error_code error = llvm::sys::fs::create_directories(dumpStep))
      fail("cannot create '" + dumpStep + "': " + error.message());
    auto write = [&](const std::string &name, const JitValue &value,
                     const void *data) {
      float scalar = 0;
      if (value.kind == JitValue::Kind::F32)
        scalar = *static_cast<const float *>(data);
      else if (value.kind == JitValue::Kind::I64)
        scalar = float(*static_cast<const int64_t *>(data));
      if (value.kind != JitValue::Kind::Tensor)
        data = &scalar;
      ::fp4train::numerics::Status status = ::fp4train::numerics::writeNpy(
          dumpStep + "/" + name + ".npy",
          value.elementBytes == 1 ? ::fp4train::numerics::NpyDType::UInt8
                                  : ::fp4train::numerics::NpyDType::Float32,
          value.shape, data);
      if (!status)
        fail(status.error().message);
    };
    for (auto [i, value] : llvm::enumerate(jit.getArguments()))
      write("arg" + std::to_string(i), value, args[i]);
    for (auto [j, value] : llvm::enumerate(jit.getResults()))
      write("result" + std::to_string(j), value, results[j]);
  }

  void update(size_t i, int64_t t) {
    std::vector<float> &p = params[i];
    const std::vector<float> &g = outs[i];
    if (!adam) {
      for (size_t j = 0; j < p.size(); ++j)
        p[j] -= float(lr) * g[j];
      return;
    }
    const double beta1 = 0.9, beta2 = 0.999, epsilon = 1e-8;
    double c1 = 1 - std::pow(beta1, double(t)),
           c2 = 1 - std::pow(beta2, double(t));
    for (size_t j = 0; j < p.size(); ++j) {
      first[i][j] = float(beta1 * first[i][j] + (1 - beta1) * g[j]);
      second[i][j] =
          float(beta2 * second[i][j] + (1 - beta2) * double(g[j]) * g[j]);
      double m = first[i][j] / c1, v = second[i][j] / c2;
      p[j] -= float(lr * m / (std::sqrt(v) + epsilon));
    }
  }

  JitFunction &jit;
  const StepSignature &signature;
  bool adam;
  double lr;
  std::vector<std::vector<float>> params, outs, first, second;
  std::vector<float> input, target;
};

/// The quantize recipe a command-line recipe name stands for.
std::string pipelineRecipe(llvm::StringRef name) {
  return name == "f32" ? "none" : name.str();
}

void checkRecipe(llvm::StringRef name) {
  if (name.starts_with("#") || name == "f32" ||
      llvm::is_contained(getRecipePresetNames(), name))
    return;
  fail("unknown recipe '" + name + "' (expected f32, " +
       llvm::join(getRecipePresetNames(), ", ") +
       ", or a #fp4train.recipe attribute)");
}

/// Compiles a fresh copy of `module` under `recipeName`.
std::unique_ptr<JitFunction> compileFor(ModuleOp module,
                                        llvm::StringRef recipeName,
                                        int resolvedStepArg,
                                        CPUNumerics path) {
  OwningOpRef<ModuleOp> copy = module.clone();
  auto jit = JitFunction::compile(*copy, functionName, [&](OpPassManager &pm) {
    CPUPipelineOptions options;
    options.recipe = pipelineRecipe(recipeName);
    options.stepArg = resolvedStepArg;
    options.keepFirst = keepFirst;
    options.keepLast = keepLast;
    options.weightLayout = weightLayout;
    options.stochasticRounding = stochasticRounding;
    options.hadamard = hadamard;
    options.hadamardSigns = hadamardSigns;
    options.scaleMode = scaleMode;
    options.outParams = true;
    options.numerics = path;
    buildCPUPipeline(pm, options);
  });
  if (!jit)
    fail(recipeName + ": " + llvm::toString(jit.takeError()));
  return std::move(*jit);
}

/// Trains one recipe for `horizon` steps, then on past it (up to `limit`)
/// while its moving mean is above `target`.
Run train(ModuleOp module, llvm::StringRef recipeName, const Task &task,
          int resolvedStepArg, CPUNumerics path, bool adam, double lr,
          int64_t horizon, int64_t limit, int64_t window,
          std::optional<double> target) {
  auto start = std::chrono::steady_clock::now();
  std::unique_ptr<JitFunction> jit =
      compileFor(module, recipeName, resolvedStepArg, path);
  auto function = module.lookupSymbol<func::FuncOp>(functionName);
  StepSignature signature = readSignature(function, *jit);
  checkHostMemory(*jit, signature, adam);
  Trainer trainer(*jit, signature, adam, lr);
  Run run;
  run.recipe = recipeName.str();
  run.steps = horizon;
  bool progress = llvm::sys::Process::StandardErrIsDisplayed();
  auto lastReport = start;
  for (int64_t s = 0; s < limit; ++s) {
    if (s >= horizon &&
        (!target || windowMean(run.losses, s, window) <= *target))
      break;
    double loss = trainer.step(task, s);
    if (!std::isfinite(loss))
      fail(recipeName + ": the loss is not finite at step " +
           llvm::Twine(s));
    run.losses.push_back(loss);
    auto now = std::chrono::steady_clock::now();
    if (progress && (now - lastReport > std::chrono::milliseconds(200) ||
                     s + 1 == horizon)) {
      double elapsed = std::chrono::duration<double>(now - start).count();
      std::fprintf(stderr, "\r%-22s step %6lld/%lld  loss %.5f  %.0f steps/s ",
                   run.recipe.c_str(), (long long)(s + 1),
                   (long long)horizon, windowMean(run.losses, s + 1, window),
                   double(s + 1) / elapsed);
      lastReport = now;
    }
  }
  if (progress)
    std::fprintf(stderr, "\n");
  run.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                              start)
                    .count();
  return run;
}

/// The contents of a regular input file; /dev/zero, a FIFO or a file larger
/// than the machine's memory is an error, not an endless read.
std::unique_ptr<llvm::MemoryBuffer> readInputFile(const std::string &path) {
  ::fp4train::numerics::Expected<std::vector<uint8_t>> contents =
      ::fp4train::numerics::readFile(path);
  if (!contents)
    fail(contents.error().message);
  return llvm::MemoryBuffer::getMemBufferCopy(
      llvm::StringRef(reinterpret_cast<const char *>(contents->data()),
                      contents->size()),
      path);
}

/// The first function on a call cycle reachable from `function`, if any.
/// Every call of a step runs to completion, so a step that reaches itself
/// again recurses until the stack overflows (SIGSEGV in the JIT code).
std::optional<std::string> findRecursion(ModuleOp module,
                                         func::FuncOp function) {
  llvm::StringMap<bool> onPath; // true while on the DFS path
  std::function<std::optional<std::string>(func::FuncOp)> visit =
      [&](func::FuncOp f) -> std::optional<std::string> {
    auto [it, inserted] = onPath.try_emplace(f.getName(), true);
    if (!inserted)
      return it->second ? std::optional<std::string>(f.getName().str())
                        : std::nullopt;
    std::optional<std::string> found;
    f.walk([&](func::CallOp call) {
      if (auto callee = module.lookupSymbol<func::FuncOp>(call.getCallee()))
        found = visit(callee);
      return found ? WalkResult::interrupt() : WalkResult::advance();
    });
    onPath[f.getName()] = false;
    return found;
  };
  return visit(function);
}

OwningOpRef<ModuleOp> parseInput(MLIRContext &context) {
  llvm::SourceMgr sources;
  sources.AddNewSourceBuffer(readInputFile(inputFile), llvm::SMLoc());
  std::string message;
  ScopedDiagnosticHandler handler(&context, [&](Diagnostic &diagnostic) {
    if (message.empty()) {
      llvm::raw_string_ostream os(message);
      if (auto loc = dyn_cast<FileLineColLoc>(diagnostic.getLocation()))
        os << loc.getFilename().getValue() << ":" << loc.getLine() << ":"
           << loc.getColumn() << ": ";
      os << diagnostic;
    }
    return success();
  });
  OwningOpRef<ModuleOp> module =
      parseSourceFile<ModuleOp>(sources, &context);
  if (!module)
    fail(message);
  auto function = module->lookupSymbol<func::FuncOp>(functionName);
  if (!function || function.isExternal())
    fail("no function @" + functionName + " in '" + inputFile + "'");
  if (std::optional<std::string> cycle = findRecursion(*module, function))
    fail("@" + functionName + " is recursive (@" + *cycle +
         " calls itself): a training step must run to completion");
  return module;
}

} // namespace

int main(int argc, char **argv) {
  cl::HideUnrelatedOptions(category);
  cl::ParseCommandLineOptions(
      argc, argv,
      "fp4-train: train a step function under fp4train recipes on the CPU\n");

  if (steps < 0)
    fail("--steps must be positive");
  if (learningRate < 0)
    fail("--lr must be positive");
  if (optimizer != "auto" && optimizer != "sgd" && optimizer != "adam")
    fail("unknown optimizer '" + optimizer + "' (expected sgd or adam)");
  if (numerics != "ir" && numerics != "runtime")
    fail("unknown numerics '" + numerics + "' (expected ir or runtime)");
  if (task != "auto" && task != "teacher" && task != "text")
    fail("unknown task '" + task + "' (expected teacher, text or auto)");
  if (threads == 0)
    fail("--num-threads must be positive");
  ::fp4train::numerics::setNumThreads(threads);

  std::vector<std::string> recipes;
  if (!compare.empty()) {
    llvm::SmallVector<llvm::StringRef> names;
    llvm::StringRef(compare).split(names, ',', -1, false);
    for (llvm::StringRef name : names)
      recipes.push_back(name.trim().str());
    if (!llvm::is_contained(recipes, "f32"))
      fail("--compare needs f32 among its recipes (the reference run)");
  } else {
    recipes.push_back(recipe);
  }
  for (const std::string &name : recipes)
    checkRecipe(name);

  DialectRegistry registry;
  registerAllDialects(registry);
  MLIRContext context(registry);
  OwningOpRef<ModuleOp> module = parseInput(context);
  auto function = module->lookupSymbol<func::FuncOp>(functionName);

  int resolvedStepArg = stepArg;
  for (auto [index, type] : llvm::enumerate(function.getArgumentTypes()))
    if (resolvedStepArg < 0 && (type.isInteger(64) || type.isIndex()))
      resolvedStepArg = int(index);

  CPUNumerics path =
      numerics == "ir" ? CPUNumerics::IR : CPUNumerics::Runtime;
  std::unique_ptr<JitFunction> first =
      compileFor(*module, recipes.front(), resolvedStepArg, path);
  StepSignature signature = readSignature(function, *first);
  std::vector<int64_t> inputShape = first->getArguments()[signature.input].shape;
  std::vector<int64_t> targetShape =
      first->getArguments()[signature.target].shape;
  first.reset();

  bool adam = optimizer == "adam" ||
              (optimizer == "auto" && !signature.updatesInGraph);
  if (adam && signature.updatesInGraph)
    fail("@" + functionName +
         " updates its parameters in the graph (it takes a learning rate), "
         "which is SGD; --optimizer adam needs a step that returns "
         "gradients");
  double lr = learningRate ? double(learningRate) : adam ? 3e-3 : 0.1;

  bool text = task == "text" || (task == "auto" && signature.hasAttention);
  std::unique_ptr<Task> data;
  if (text) {
    if (inputShape[1] != targetShape[1])
      fail("the text task needs input and target of the same width");
    std::unique_ptr<llvm::MemoryBuffer> file = readInputFile(corpus);
    if (int64_t(file->getBufferSize()) < inputShape[0] + 2)
      fail("the corpus '" + corpus + "' is shorter than one step's window");
    data = createTextTask(file->getBuffer().str(), inputShape[0],
                          inputShape[1], seed);
  } else {
    data = createTeacherTask(inputShape[0], inputShape[1], targetShape[1],
                             seed);
  }

  // Defaults measured to keep the full 7-recipe --compare within 10 minutes
  // on 2 cores (docs/training.md).
  int64_t horizon = steps ? int64_t(steps) : text ? 3000 : 10000;
  int64_t window = std::max<int64_t>(10, horizon / 10);
  std::printf("# %s @%s: %s; %s lr %g; %lld steps; numerics=%s\n",
              inputFile.c_str(), functionName.c_str(),
              data->describe().c_str(), adam ? "adam" : "sgd", lr,
              (long long)horizon, numerics.c_str());

  std::vector<Run> runs;
  std::optional<double> target;
  auto f32 = llvm::find(recipes, "f32");
  if (f32 != recipes.end()) {
    // The reference runs first: the others continue past the horizon while
    // they have not reached its final loss (up to 50% more steps).
    std::rotate(recipes.begin(), f32, f32 + 1);
  }
  for (const std::string &name : recipes) {
    int64_t limit = target ? horizon + horizon / 2 : horizon;
    runs.push_back(train(*module, name, *data, resolvedStepArg, path, adam, lr,
                         horizon, limit, window, target));
    if (name == "f32")
      target = windowMean(runs.back().losses, horizon, window);
  }

  if (!compare.empty()) {
    printComparison(runs, 0, window, inputShape[0]);
  } else {
    const Run &run = runs.front();
    std::printf("recipe %s: final loss %.6f (mean of the last %lld steps), "
                "first-window loss %.6f, %.1f s\n",
                run.recipe.c_str(), windowMean(run.losses, horizon, window),
                (long long)window, windowMean(run.losses, window, window),
                run.seconds);
  }
  if (!outDir.empty()) {
    if (std::error_code error = llvm::sys::fs::create_directories(outDir))
      fail("cannot create '" + outDir + "': " + error.message());
    std::string csv = outDir + "/losses.csv", svg = outDir + "/loss_curves.svg";
    auto bytes = [](const std::string &text) {
      return std::vector<uint8_t>(text.begin(), text.end());
    };
    // Both files or neither, every write checked.
    ::fp4train::numerics::Status status = ::fp4train::numerics::writeFiles(
        {{csv, bytes(renderCsv(runs))},
         {svg, bytes(renderSvg(runs, window,
                               inputFile + " @" + functionName + ": " +
                                   data->describe()))}});
    if (!status)
      fail(status.error().message);
    std::printf("wrote %s and %s\n", csv.c_str(), svg.c_str());
  }
  return 0;
}
