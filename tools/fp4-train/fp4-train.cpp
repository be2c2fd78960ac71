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

#include "Processes.h"
#include "Report.h"
#include "Session.h"
#include "Tasks.h"
#include "Trainer.h"

#include "fp4train/Dialect/FP4Train/IR/FP4TrainDialect.h"
#include "fp4train/Dialect/FP4Train/IR/FP4TrainRecipes.h"
#include "fp4train/InitFP4Train.h"
#include "fp4train/Numerics/Files.h"
#include "fp4train/Numerics/Npy.h"
#include "fp4train/Numerics/Parallel.h"
#include "fp4train/ParseModule.h"
#include "fp4train/Pipelines/Pipelines.h"
#include "fp4train/Runtime/JitFunction.h"
#include "fp4train/Sharding/Layout.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/xxhash.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <map>
#include <mutex>
#include <thread>

#include <fcntl.h>
#include <unistd.h>

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
                                 cl::desc("teacher, text, lm or auto (lm for "
                                          "steps taking token ids, text for "
                                          "steps with attention)"),
                                 cl::cat(category));
static cl::opt<std::string>
    seeds("seeds",
          cl::desc("comma-separated seeds: every recipe runs from each "
                   "(default: --seed); the table gives mean ± std"),
          cl::cat(category));
static cl::opt<unsigned> jobs("jobs", cl::init(0),
                              cl::desc("runs trained at once (0: one per "
                                       "core)"),
                              cl::cat(category));
static cl::opt<std::string>
    schedule("schedule", cl::init("auto"),
             cl::desc("learning-rate schedule: constant, or cosine (linear "
                      "warm-up, cosine decay to 10%); auto: cosine for "
                      "language models"),
             cl::cat(category));
static cl::opt<int64_t> warmup("warmup", cl::init(-1),
                               cl::desc("warm-up steps of the cosine "
                                        "schedule (-1: 5% of the steps)"),
                               cl::cat(category));
static cl::opt<double> clip("clip", cl::init(-1),
                            cl::desc("clip the global gradient norm to this "
                                     "(0: off; -1: 1 for language models, "
                                     "off otherwise)"),
                            cl::cat(category));
static cl::opt<int64_t> evalEvery("eval-every", cl::init(0),
                                  cl::desc("held-out loss every N steps "
                                           "(language models; 0: steps/20)"),
                                  cl::cat(category));
static cl::opt<int64_t> evalBatches("eval-batches", cl::init(4),
                                    cl::desc("held-out batches per "
                                             "evaluation"),
                                    cl::cat(category));
static cl::opt<std::string>
    corpus("corpus",
           cl::desc("text of the text and lm tasks: a file, or a directory "
                    "whose regular files are read in name order (default: "
                    "/usr/share/common-licenses/GPL-3 for text, the "
                    "directory /usr/share/common-licenses for lm)"),
           cl::cat(category));
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
static cl::opt<std::string> outDir("out",
                                   cl::desc("directory for losses.csv "
                                            "and loss_curves.svg"),
                                   cl::cat(category));
static cl::opt<std::string> dumpStep(
    "dump-first-step",
    cl::desc("directory to write the first step's arguments (argN.npy) and "
             "results (resultN.npy) to (the first recipe and seed), for "
             "checking other hosts of the compiled step (the Python "
             "package) against this one"),
    cl::cat(category));
static cl::opt<int> stepArg("step-arg", cl::init(-1),
                            cl::desc("index of the step argument (default: "
                                     "the i64 argument)"),
                            cl::cat(category));
static cl::opt<std::string> weightLayout("weight-layout", cl::init("out-in"),
                                         cl::desc("out-in or in-out"),
                                         cl::cat(category));
static cl::opt<std::string> evalFunction(
    "eval-function", cl::init("eval_loss"),
    cl::desc("the forward-only loss function that computes held-out losses "
             "when the step's module has it ([EVAL1]; language models, "
             "unsharded steps; else, or when empty, the step computes them)"),
    cl::cat(category));
static cl::opt<double> switchAt(
    "switch-at", cl::init(0),
    cl::desc("from this fraction of the steps on (0 < F < 1), the "
             "--switch-roles run in high precision: a second compiled step, "
             "the optimizer state carried over ([SW1], docs/training.md)"),
    cl::cat(category));
static cl::opt<std::string>
    switchRoles("switch-roles", cl::init("fprop"),
                cl::desc("comma-separated roles --switch-at moves to high "
                         "precision (fprop, dgrad, wgrad)"),
                cl::cat(category));
static cl::opt<std::string> quantizeReports(
    "quantize-reports",
    cl::desc("directory for the quantization report (a table) of each "
             "compiled step: <recipe>.txt, and <recipe>.switched.txt for the "
             "step --switch-at moves to"),
    cl::cat(category));
/// --stochastic-rounding, --hadamard, ...: the recipe overrides ([RO1]).
static RecipeOverrideOptions recipeOverrides(category);
static cl::opt<bool> checkIndices(
    "check-indices", cl::init(true),
    cl::desc("bounds-check the step's data-dependent indices (token ids, "
             "targets): an id out of range is an error, not a wild read "
             "([IDX1], docs/robustness.md); =false for speed"),
    cl::cat(category));

namespace {

/// Fails unless `name` is a recipe the quantize pass takes (f32 is `none`).
void checkRecipe(MLIRContext &context, llvm::StringRef name) {
  std::string message;
  ScopedDiagnosticHandler handler(&context, [&](Diagnostic &diagnostic) {
    message = diagnostic.str();
    return success();
  });
  if (!parseRecipe(UnknownLoc::get(&context), name))
    fail(message + "; or f32 (no quantization)");
}

/// A file name for the report of `recipeName`: the name itself when it is
/// a preset's (letters, digits, '-', '_'), else "recipe" (a recipe spelled
/// as an attribute holds '/', '<' and more).
std::string getReportName(llvm::StringRef recipeName) {
  bool plain = !recipeName.empty() && llvm::all_of(recipeName, [](char c) {
    return llvm::isAlnum(c) || c == '-' || c == '_';
  });
  return plain ? recipeName.str() : "recipe";
}

/// The roles of `recipeName` (with the tool's overrides) that a switch to
/// high precision of `switched` leaves quantized ([SW1]).
unsigned getRolesAfterSwitch(MLIRContext &context, llvm::StringRef recipeName,
                             unsigned switched) {
  RecipeAttr recipe = parseRecipe(UnknownLoc::get(&context), recipeName);
  if (recipe)
    recipe =
        recipeOverrides.getValue().apply(UnknownLoc::get(&context), recipe);
  unsigned remaining = 0;
  for (Role role : {Role::fprop, Role::dgrad, Role::wgrad})
    if (recipe && recipe.getForRole(role) && !(switched & roleBit(role)))
      remaining |= roleBit(role);
  return remaining;
}

/// Compiles function `entry` (the step or @eval_loss) of a fresh copy of
/// `module` under `recipeName`; `roles`, when set, replaces the roles it
/// quantizes (0: none, the step of f32). `report` names the file for the
/// quantization report (empty: none).
std::unique_ptr<JitFunction>
compileFor(ModuleOp module, llvm::StringRef entry, llvm::StringRef recipeName,
           int resolvedStepArg, CPUNumerics path,
           std::optional<unsigned> roles = std::nullopt,
           const std::string &report = "") {
  OwningOpRef<ModuleOp> copy = module.clone();
  // The other entry point is not compiled along.
  for (llvm::StringRef other :
       {functionName.getValue(), evalFunction.getValue()})
    if (other != entry)
      if (Operation *function = copy->lookupSymbol(other))
        function->erase();
  // The f32 reference quantizes nothing, whatever the overrides.
  bool quantized = recipeName != "f32" && roles != 0u;
  auto jit = JitFunction::compile(
      *copy, entry,
      [&](OpPassManager &pm) {
        CPUPipelineOptions options;
        options.recipe = quantized ? recipeName.str() : "none";
        options.stepArg = resolvedStepArg;
        options.weightLayout = weightLayout;
        if (quantized) {
          RecipeOverrides overrides = recipeOverrides.getValue();
          if (roles)
            overrides.roles = RoleSet{*roles};
          options.overrides.setValue(overrides);
        }
        options.outParams = true;
        options.numerics = path;
        options.report = report;
        options.reportFormat = ReportFormat::Table;
        buildCPUPipeline(pm, options);
      },
      JitOptions{checkIndices});
  if (!jit)
    fail(recipeName + ": " + llvm::toString(jit.takeError()));
  return std::move(*jit);
}

/// Fails unless `eval` takes the arguments of `step` and returns its loss
/// alone ([EVAL1]).
void checkEvalSignature(const JitFunction &step, const JitFunction &eval) {
  auto same = [](const JitValue &a, const JitValue &b) {
    return a.kind == b.kind && a.shape == b.shape &&
           a.elementBytes == b.elementBytes && a.isInt32 == b.isInt32;
  };
  bool ok = eval.getArguments().size() == step.getArguments().size() &&
            llvm::all_of_zip(eval.getArguments(), step.getArguments(), same) &&
            eval.getResults().size() == 1 &&
            same(eval.getResults()[0], step.getResults()[0]);
  if (!ok)
    fail("@" + evalFunction + " must take the arguments of @" + functionName +
         " and return its loss alone");
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

/// The text of `path`: a regular file, or the regular files (not links) of
/// a directory concatenated in name order.
std::unique_ptr<llvm::MemoryBuffer> readCorpus(const std::string &path) {
  if (!llvm::sys::fs::is_directory(path))
    return readInputFile(path);
  std::vector<std::string> files;
  std::error_code error;
  for (llvm::sys::fs::directory_iterator it(path, error, false), end;
       it != end && !error; it.increment(error))
    if (it->type() == llvm::sys::fs::file_type::regular_file)
      files.push_back(it->path());
  if (error)
    fail("cannot read the directory '" + path + "': " + error.message());
  if (files.empty())
    fail("the corpus directory '" + path + "' has no regular files");
  llvm::sort(files);
  std::string text;
  for (const std::string &file : files)
    text += readInputFile(file)->getBuffer();
  return llvm::MemoryBuffer::getMemBufferCopy(text, path);
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

/// What every process of a sharded run must share: the step (its bytes,
/// wherever each process reads them from) and the command line's options.
uint64_t getRunFingerprint(int argc, char **argv) {
  std::string text = readInputFile(inputFile)->getBuffer().str();
  for (int i = 1; i < argc; ++i)
    if (argv[i] != inputFile.getValue())
      text += '\0' + std::string(argv[i]);
  return llvm::xxh3_64bits(text);
}

/// The number of processes mpiexec started this one among: MPICH's and
/// Open MPI's launchers say so in the environment (1 when none did).
int64_t getNumLaunchedProcesses() {
  for (const char *name : {"PMI_SIZE", "OMPI_COMM_WORLD_SIZE"})
    if (const char *value = std::getenv(name)) {
      int64_t size = 0;
      if (!llvm::StringRef(value).getAsInteger(10, size))
        return size;
    }
  return 1;
}

OwningOpRef<ModuleOp> parseInput(MLIRContext &context) {
  std::unique_ptr<llvm::MemoryBuffer> input = readInputFile(inputFile);
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
      parseModule(input->getBuffer(), inputFile, &context);
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

/// The positive integers of a comma-separated list, or nothing.
std::optional<std::vector<uint64_t>> parseSeeds(llvm::StringRef text) {
  llvm::SmallVector<llvm::StringRef> items;
  text.split(items, ',', -1, false);
  std::vector<uint64_t> seeds;
  for (llvm::StringRef item : items) {
    uint64_t value;
    if (item.trim().getAsInteger(10, value) || llvm::is_contained(seeds, value))
      return std::nullopt;
    seeds.push_back(value);
  }
  if (seeds.empty())
    return std::nullopt;
  return seeds;
}

/// Runs `jobs` (indices into `runs`) on up to `threads` threads.
void runAll(Session &session,
            const std::map<uint64_t, std::unique_ptr<Task>> &tasks,
            std::vector<Run> &runs, const std::vector<size_t> &jobs,
            const std::map<uint64_t, double> &targets, unsigned threads) {
  std::mutex next;
  size_t cursor = 0;
  auto worker = [&]() {
    while (true) {
      size_t job;
      {
        std::lock_guard<std::mutex> lock(next);
        if (cursor == jobs.size())
          return;
        job = jobs[cursor++];
      }
      Run &run = runs[job];
      auto target = targets.find(run.seed);
      run = train(session, *tasks.at(run.seed), run.recipe, run.seed,
                  target == targets.end() ? std::nullopt
                                          : std::optional(target->second));
    }
  };
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < std::min<size_t>(threads, jobs.size()); ++t)
    pool.emplace_back(worker);
  worker();
  for (std::thread &thread : pool)
    thread.join();
}

/// How the step is split over a grid of processes, or nothing for an
/// unsharded step; fails where the step cannot be partitioned.
std::optional<StepLayout> readLayout(MLIRContext &context,
                                     func::FuncOp function) {
  std::string message;
  ScopedDiagnosticHandler handler(&context, [&](Diagnostic &diagnostic) {
    if (message.empty())
      message = diagnostic.str();
    return success();
  });
  FailureOr<std::optional<StepLayout>> layout = getStepLayout(function);
  if (failed(layout))
    fail("@" + functionName + " cannot be partitioned: " + message);
  return *layout;
}

/// Fails unless the compiled step takes and returns the shards `layout`
/// describes: the trainer hands out and gathers shards by it.
void checkShards(const StepLayout &layout, const JitFunction &jit) {
  auto check = [&](llvm::ArrayRef<BoundaryLayout> expected,
                   llvm::ArrayRef<JitValue> actual, const char *what) {
    for (auto [index, pair] : llvm::enumerate(llvm::zip(expected, actual))) {
      auto &[value, compiled] = pair;
      if (compiled.kind == JitValue::Kind::Tensor &&
          value.getShardShape(layout.gridShape) != compiled.shape)
        fail("@" + functionName + " " + what + " " + llvm::Twine(index) +
             ": the partitioned step's shard differs from its layout on "
             "grid @" +
             layout.grid);
    }
  };
  check(layout.arguments, jit.getArguments(), "argument");
  check(layout.results, jit.getResults(), "result");
  // Result k + 1 updates (or is the gradient of) the k-th parameter: the
  // trainer applies it to the parameter's shard.
  size_t result = 1;
  for (auto [index, value] : llvm::enumerate(jit.getArguments())) {
    if (!value.isParam)
      continue;
    if (result < layout.results.size() &&
        layout.results[result].splitAxes != layout.arguments[index].splitAxes)
      fail("@" + functionName + " result " + llvm::Twine(result) +
           " is split differently on grid @" + layout.grid +
           " from the parameter it belongs to, argument " + llvm::Twine(index) +
           ": split a layer's parameters alike "
           "(a column-parallel layer's bias with its weight)");
    ++result;
  }
}

/// Points standard output at /dev/null: the processes of a sharded run but
/// the root print nothing (their errors still reach standard error).
void silenceStandardOutput() {
  std::fflush(stdout);
  int null = ::open("/dev/null", O_WRONLY);
  if (null >= 0) {
    ::dup2(null, STDOUT_FILENO);
    ::close(null);
  }
}

} // namespace

/// Fails unless `value` of option `name` lies in [lo, hi].
template <typename T>
static void checkRange(llvm::StringRef name, T value, T lo, T hi) {
  if (value < lo || value > hi)
    fail("--" + name + " must lie in [" + llvm::Twine(lo) + ", " +
         llvm::Twine(hi) + "], not " + llvm::Twine(value));
}

/// Every numeric option is range-checked before anything is read or
/// allocated from it (docs/robustness.md): the bounds are far above what a
/// CPU run can use, and keep every count the trainer derives from them
/// (step numbers, held-out windows, offsets into the corpus) within int64.
static void checkOptionRanges() {
  constexpr int64_t kMaxSteps = 1'000'000'000;
  constexpr int64_t kMaxEvalBatches = 1'000'000;
  constexpr unsigned kMaxThreads = 1024;
  checkRange<int64_t>("steps", steps, 0, kMaxSteps);
  checkRange<int64_t>("warmup", warmup, -1, kMaxSteps);
  checkRange<int64_t>("eval-every", evalEvery, 0, kMaxSteps);
  checkRange<int64_t>("eval-batches", evalBatches, 1, kMaxEvalBatches);
  checkRange<unsigned>("jobs", jobs, 0, kMaxThreads);
  checkRange<unsigned>("num-threads", threads, 1, kMaxThreads);
  checkRange<int>("step-arg", stepArg, -1, 1 << 20);
  if (!std::isfinite(learningRate) || learningRate < 0)
    fail("--lr must be a finite number, not negative");
  if (!std::isfinite(clip) || (clip < 0 && clip != -1))
    fail("--clip must be a finite number, not negative (or -1)");
  if (optimizer != "auto" && optimizer != "sgd" && optimizer != "adam")
    fail("unknown optimizer '" + optimizer + "' (expected sgd or adam)");
  if (numerics != "ir" && numerics != "runtime")
    fail("unknown numerics '" + numerics + "' (expected ir or runtime)");
  if (task != "auto" && task != "teacher" && task != "text" && task != "lm")
    fail("unknown task '" + task + "' (expected teacher, text, lm or auto)");
  if (schedule != "auto" && schedule != "constant" && schedule != "cosine")
    fail("unknown schedule '" + schedule +
         "' (expected constant, cosine or auto)");
  if (!std::isfinite(switchAt) || switchAt < 0 || switchAt >= 1 ||
      (switchAt.getNumOccurrences() && switchAt == 0))
    fail("--switch-at must lie in (0, 1), the fraction of the steps after "
         "which the switched roles run in high precision");
  if (switchRoles.getNumOccurrences() && !switchAt.getNumOccurrences())
    fail("--switch-roles needs --switch-at");
}

/// The roles of --switch-roles as role bits.
static unsigned parseSwitchRoles() {
  unsigned bits = 0;
  llvm::SmallVector<llvm::StringRef> names;
  llvm::StringRef(switchRoles).split(names, ',', -1, false);
  for (llvm::StringRef name : names) {
    std::optional<Role> role = symbolizeRole(name.trim());
    if (!role)
      fail("--switch-roles: unknown role '" + name.trim() +
           "' (expected fprop, dgrad or wgrad)");
    if (bits & roleBit(*role))
      fail("--switch-roles names " + name.trim() + " twice");
    bits |= roleBit(*role);
  }
  if (!bits)
    fail("--switch-roles names no role");
  return bits;
}

int main(int argc, char **argv) {
  cl::HideUnrelatedOptions(category);
  cl::ParseCommandLineOptions(
      argc, argv,
      "fp4-train: train a step function under fp4train recipes on the CPU\n");

  checkOptionRanges();
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
  DialectRegistry registry;
  registerAllDialects(registry);
  MLIRContext context(registry);
  // Recipes are attributes of the dialect.
  context.loadDialect<FP4TrainDialect>();
  for (const std::string &name : recipes)
    checkRecipe(context, name);
  unsigned switched = switchAt.getNumOccurrences() ? parseSwitchRoles() : 0;
  std::vector<uint64_t> seedList = {seed};
  if (!seeds.empty()) {
    std::optional<std::vector<uint64_t>> parsed = parseSeeds(seeds);
    if (!parsed)
      fail("--seeds must be a comma-separated list of distinct integers");
    seedList = *parsed;
  }

  OwningOpRef<ModuleOp> module = parseInput(context);
  auto function = module->lookupSymbol<func::FuncOp>(functionName);
  // A step with a shard.grid runs as one process of mpiexec
  // (docs/sharding.md); MPI starts before the step is compiled.
  std::unique_ptr<Processes> processes = std::make_unique<Processes>();
  if (std::optional<StepLayout> layout = readLayout(context, function)) {
    processes = Processes::startMPI(*layout);
    processes->checkSameRun(getRunFingerprint(argc, argv));
    // The root reports for all.
    if (!processes->isRoot())
      silenceStandardOutput();
  } else if (int64_t launched = getNumLaunchedProcesses(); launched > 1) {
    fail("@" + functionName + " has no shard.grid, but mpiexec started " +
         llvm::Twine(launched) +
         " processes: each would train the whole step alone (shard it, "
         "docs/sharding.md, or run one process)");
  }
  const StepLayout *layout = processes->getLayout();
  // The output directories are made before any step runs, so a run that
  // cannot write its outputs ends at once, on every process alike.
  std::optional<std::string> directoryError;
  if (processes->isRoot())
    for (const std::string &directory :
         {dumpStep.getValue(), outDir.getValue(), quantizeReports.getValue()})
      if (!directory.empty() && !directoryError) {
        if (std::error_code error =
                llvm::sys::fs::create_directories(directory))
          directoryError =
              "cannot create '" + directory + "': " + error.message();
        // create_directories takes an existing file for the directory.
        else if (!llvm::sys::fs::is_directory(directory))
          directoryError =
              "cannot create '" + directory + "': a file of that name exists";
      }
  processes->failIfAny(directoryError);

  int resolvedStepArg = stepArg;
  for (auto [index, type] : llvm::enumerate(function.getArgumentTypes()))
    if (resolvedStepArg < 0 && (type.isInteger(64) || type.isIndex()))
      resolvedStepArg = int(index);

  CPUNumerics path = numerics == "ir" ? CPUNumerics::IR : CPUNumerics::Runtime;
  // The first recipe's step tells how to call it; the runs reuse it.
  // The root writes the quantization report of each compiled step.
  auto reportPath = [&](llvm::StringRef recipeName, bool afterSwitch) {
    if (quantizeReports.empty() || !processes->isRoot())
      return std::string();
    return quantizeReports + "/" + getReportName(recipeName) +
           (afterSwitch ? ".switched" : "") + ".txt";
  };
  std::shared_ptr<JitFunction> first =
      compileFor(*module, functionName, recipes.front(), resolvedStepArg, path,
                 std::nullopt, reportPath(recipes.front(), false));
  if (layout)
    checkShards(*layout, *first);
  StepSignature signature = readSignature(function, *first);
  // The tasks draw whole batches: each process then takes its shard.
  std::vector<int64_t> inputShape =
      layout ? layout->arguments[signature.input].globalShape
             : first->getArguments()[signature.input].shape;
  std::vector<int64_t> targetShape =
      layout ? layout->arguments[signature.target].globalShape
             : first->getArguments()[signature.target].shape;

  bool adam =
      optimizer == "adam" || (optimizer == "auto" && !signature.updatesInGraph);
  if (adam && signature.updatesInGraph)
    fail("@" + functionName +
         " updates its parameters in the graph (it takes a learning rate), "
         "which is SGD; --optimizer adam needs a step that returns "
         "gradients");
  double lr = learningRate ? double(learningRate) : adam ? 3e-3 : 0.1;

  std::string kind = task;
  if (kind == "auto")
    kind = signature.tokens         ? "lm"
           : signature.hasAttention ? "text"
                                    : "teacher";
  if ((kind == "lm") != signature.tokens)
    fail(signature.tokens
             ? "@" + functionName + " takes token ids: the task is lm"
             : "the lm task needs a step that takes i32 token ids");
  bool lm = kind == "lm";
  if (seedList.size() > 1 && !lm)
    fail("--seeds needs a task with a validation split (lm)");
  std::unique_ptr<llvm::MemoryBuffer> text;
  std::string corpusPath = corpus;
  if (corpusPath.empty())
    corpusPath =
        lm ? "/usr/share/common-licenses" : "/usr/share/common-licenses/GPL-3";
  if (kind != "teacher")
    text = readCorpus(corpusPath);
  // Language models: [batch, length] token windows, a tenth of the corpus
  // held out.
  int64_t batch = inputShape.size() == 2 ? inputShape[0] : 1;
  int64_t length = inputShape.back();
  constexpr double kHeldOut = 0.1;
  if (lm && int64_t(text->getBufferSize()) < 20 * (length + 2))
    fail("the corpus '" + corpusPath +
         "' is too short: a language model needs "
         "20 windows of " +
         llvm::Twine(length + 2) + " bytes (" + llvm::Twine(20 * (length + 2)) +
         " bytes), it has " + llvm::Twine(text->getBufferSize()));
  // The language model's tokens are the corpus's bytes: a byte past the
  // step's vocabulary would be looked up outside its tables. Every process
  // of a sharded run finds it at the same point.
  if (lm && signature.vocabulary && *signature.vocabulary < 256) {
    llvm::StringRef bytes = text->getBuffer();
    auto outside = llvm::find_if(
        bytes, [&](char c) { return uint8_t(c) >= *signature.vocabulary; });
    std::optional<std::string> vocabularyError;
    if (outside != bytes.end())
      vocabularyError =
          ("the corpus '" + corpusPath + "' holds byte " +
           llvm::Twine(unsigned(uint8_t(*outside))) + " at offset " +
           llvm::Twine(uint64_t(outside - bytes.begin())) +
           ", outside the vocabulary of @" + functionName + " (" +
           llvm::Twine(*signature.vocabulary) + " token ids, the bytes 0-" +
           llvm::Twine(*signature.vocabulary - 1) +
           "): the lm task's tokens are the corpus's bytes, so its step needs "
           "a vocabulary of 256, or a corpus within its range")
              .str();
    processes->failIfAny(vocabularyError);
  }
  if (kind == "text") {
    if (inputShape[1] != targetShape[1])
      fail("the text task needs input and target of the same width");
    if (int64_t(text->getBufferSize()) < inputShape[0] + 2)
      fail("the corpus '" + corpusPath + "' is shorter than one step's window");
  }
  std::map<uint64_t, std::unique_ptr<Task>> tasks;
  for (uint64_t s : seedList) {
    if (lm)
      tasks[s] = createLanguageModelTask(text->getBuffer().str(), batch, length,
                                         evalBatches, kHeldOut, s);
    else if (kind == "text")
      tasks[s] = createTextTask(text->getBuffer().str(), inputShape[0],
                                inputShape[1], s);
    else
      tasks[s] =
          createTeacherTask(inputShape[0], inputShape[1], targetShape[1], s);
  }

  Session session;
  // [EVAL1] Held-out losses from the forward-only function, where there is
  // one: an explicit --eval-function must exist.
  bool useEval = false;
  if (evalFunction.empty())
    useEval = false; // --eval-function= : the step computes them.
  else if (module->lookupSymbol<func::FuncOp>(evalFunction))
    useEval = lm && !layout;
  else if (evalFunction.getNumOccurrences())
    fail("the module has no function @" + evalFunction + " (--eval-function)");
  auto compileRecipe = [&](llvm::StringRef recipe,
                           std::optional<unsigned> roles,
                           bool afterSwitch) -> CompiledStep {
    CompiledStep compiled;
    compiled.step = compileFor(*module, functionName, recipe, resolvedStepArg,
                               path, roles, reportPath(recipe, afterSwitch));
    if (useEval) {
      compiled.eval = compileFor(*module, evalFunction, recipe, resolvedStepArg,
                                 path, roles);
      checkEvalSignature(*compiled.step, *compiled.eval);
    }
    return compiled;
  };
  CompiledStep &firstCompiled = session.compiled[recipes.front()];
  firstCompiled.step = std::move(first);
  if (useEval) {
    firstCompiled.eval = compileFor(*module, evalFunction, recipes.front(),
                                    resolvedStepArg, path);
    checkEvalSignature(*firstCompiled.step, *firstCompiled.eval);
  }
  session.module = *module;
  session.functionName = functionName;
  session.processes = processes.get();
  session.compile = [&](llvm::StringRef recipe) {
    return compileRecipe(recipe, std::nullopt, /*afterSwitch=*/false);
  };
  session.dumpDirectory = dumpStep;
  // Defaults measured to keep the full 7-recipe --compare of the regression
  // examples within 10 minutes on 2 cores, and the 8-recipe GPT table within
  // 5 minutes per seed (docs/training.md, docs/ablation.md).
  session.horizon = steps            ? int64_t(steps)
                    : lm             ? 1000
                    : kind == "text" ? 3000
                                     : 10000;
  session.window = std::max<int64_t>(10, session.horizon / 10);
  if (switched) {
    session.switchStep = std::max<int64_t>(
        1, int64_t(std::llround(switchAt * double(session.horizon))));
    if (*session.switchStep >= session.horizon)
      fail("--switch-at " + llvm::formatv("{0}", double(switchAt)).str() +
           " of " + llvm::Twine(session.horizon) +
           " steps switches at the last step or later: no step would run "
           "with the switched roles");
    session.compileSwitched = [&](llvm::StringRef recipe) {
      return compileRecipe(recipe,
                           getRolesAfterSwitch(context, recipe, switched),
                           /*afterSwitch=*/true);
    };
  }

  session.evalEvery = evalEvery ? int64_t(evalEvery)
                                : std::max<int64_t>(1, session.horizon / 20);
  session.tokensPerStep = lm ? batch * length : inputShape[0];
  session.labelsWithSeed = seedList.size() > 1;
  session.dumpRecipe = recipes.front();
  session.dumpSeed = seedList.front();
  TrainOptions &options = session.options;
  options.adam = adam;
  options.lr = lr;
  options.horizon = session.horizon;
  options.schedule = schedule == "cosine" || (schedule == "auto" && lm)
                         ? Schedule::Cosine
                         : Schedule::Constant;
  options.warmup = warmup >= 0 ? int64_t(warmup) : session.horizon / 20;
  options.clip = clip >= 0 ? double(clip) : lm ? 1.0 : 0.0;
  if (options.clip > 0 && signature.updatesInGraph)
    fail("--clip needs a step that returns gradients; @" + functionName +
         " updates its parameters in the graph");

  std::printf(
      "# %s @%s: %s; %s lr %g%s; %lld steps; numerics=%s\n", inputFile.c_str(),
      functionName.c_str(), tasks.begin()->second->describe().c_str(),
      adam ? "adam" : "sgd", lr,
      options.schedule == Schedule::Cosine
          ? (" (warm-up " + std::to_string(options.warmup) + ", cosine to 10%)")
                .c_str()
          : "",
      (long long)session.horizon, numerics.c_str());
  if (options.clip > 0 || lm)
    std::printf(
        "# gradient clipping %g; held-out loss every %lld steps on "
        "%lld batches%s; seeds %s\n",
        options.clip, (long long)session.evalEvery, (long long)evalBatches,
        useEval ? (" by @" + evalFunction).c_str() : "",
        llvm::join(llvm::map_range(
                       seedList, [](uint64_t s) { return std::to_string(s); }),
                   ",")
            .c_str());

  if (session.switchStep)
    std::printf("# +switch: from step %lld on (--switch-at %g), %s run in "
                "high precision\n",
                (long long)*session.switchStep, double(switchAt),
                switchRoles.c_str());

  // The reference runs first: the others continue past the horizon while
  // they have not reached its final loss (up to 50% more steps).
  auto f32 = llvm::find(recipes, "f32");
  if (f32 != recipes.end())
    std::rotate(recipes.begin(), f32, f32 + 1);
  std::vector<Run> runs;
  std::vector<size_t> referenceJobs, otherJobs;
  for (const std::string &name : recipes)
    for (uint64_t s : seedList) {
      (name == "f32" ? referenceJobs : otherJobs).push_back(runs.size());
      Run &run = runs.emplace_back();
      run.recipe = name;
      run.seed = s;
    }
  // The processes of a sharded step run their collectives in one order:
  // their runs train one after another.
  unsigned threadCount =
      layout ? 1u
      : jobs ? unsigned(jobs)
             : std::max(1u, std::thread::hardware_concurrency() / threads);
  session.limit = session.horizon;
  if (lm) {
    // Language models are compared on their held-out curves within the
    // horizon (Report.h): no run continues, so all train at once.
    std::vector<size_t> all = referenceJobs;
    all.insert(all.end(), otherJobs.begin(), otherJobs.end());
    runAll(session, tasks, runs, all, {}, threadCount);
  } else {
    // The others continue past the horizon, up to 1.5x, while their moving
    // mean is above the f32 run's final one.
    runAll(session, tasks, runs, referenceJobs, {}, threadCount);
    std::map<uint64_t, double> targets;
    for (size_t job : referenceJobs)
      targets[runs[job].seed] =
          windowMean(runs[job].losses, session.horizon, session.window);
    if (!referenceJobs.empty())
      session.limit = session.horizon + session.horizon / 2;
    runAll(session, tasks, runs, otherJobs, targets, threadCount);
  }

  if (lm) {
    if (!compare.empty()) {
      printValidationComparison(runs, session.tokensPerStep);
    } else {
      const Run &run = runs.front();
      double final = run.validation.back().second;
      std::printf("recipe %s: final held-out loss %.6f (%.4f bits/byte), "
                  "first held-out loss %.6f, final training loss %.6f (mean "
                  "of the last %lld steps), %.1f s\n",
                  run.getRecipeLabel().c_str(), final, final / std::log(2.0),
                  run.validation.front().second,
                  windowMean(run.losses, session.horizon, session.window),
                  (long long)session.window, run.seconds);
    }
  } else if (!compare.empty()) {
    printComparison(runs, 0, session.window, session.tokensPerStep);
  } else {
    const Run &run = runs.front();
    std::printf("recipe %s: final loss %.6f (mean of the last %lld steps), "
                "first-window loss %.6f, %.1f s\n",
                run.getRecipeLabel().c_str(),
                windowMean(run.losses, session.horizon, session.window),
                (long long)session.window,
                windowMean(run.losses, session.window, session.window),
                run.seconds);
  }
  // The outputs of the run are one set: the first step's dump and the loss
  // curves are all written, every write checked, or none is.
  std::vector<::fp4train::numerics::OutputFile> outputs =
      std::move(session.dumped);
  std::string csv = outDir + "/losses.csv", svg = outDir + "/loss_curves.svg";
  if (!outDir.empty()) {
    auto bytes = [](const std::string &text) {
      return std::vector<uint8_t>(text.begin(), text.end());
    };
    outputs.push_back({csv, bytes(renderCsv(runs, session.labelsWithSeed))});
    outputs.push_back(
        {svg, bytes(renderSvg(runs, session.window,
                              inputFile + " @" + functionName + ": " +
                                  tasks.begin()->second->describe()))});
  }
  // The root writes the outputs of a sharded run (its dump is gathered)
  // into the directories it made before training.
  if (!processes->isRoot())
    return 0;
  ::fp4train::numerics::Status status =
      ::fp4train::numerics::writeFiles(outputs);
  if (!status)
    fail(status.error().message);
  if (!outDir.empty())
    std::printf("wrote %s and %s\n", csv.c_str(), svg.c_str());
  return 0;
}
