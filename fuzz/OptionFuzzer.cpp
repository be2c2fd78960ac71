//===- OptionFuzzer.cpp - Recipe attributes and pass option text ----------===//
//
// Input: one selector byte, then text. Selector 0 parses the text as an
// attribute (a `#fp4train.recipe<...>` or any other of ours), 1 as a type
// (`!fp4train.scaled<...>`): what parses must print and parse back to the
// same uniqued object, and a recipe is then applied by the quantize
// pipeline. Any other selector picks a pass or pipeline and takes the text
// as its option list (`name{<text>}`): option text that parses is run on a
// training step that needs every role. The last selector takes the text as a
// whole pipeline, anchored or nested anywhere (`func.func(...)`, `any(...)`)
// but naming only fp4train passes and pipelines: a pipeline nested where it
// cannot run must be an error, not an LLVM ERROR. A crash, a sanitizer
// report, a failure without an error or a round trip that changes the object
// is a finding.
//
//===----------------------------------------------------------------------===//

#include "FuzzSupport.h"

#include "fp4train/Dialect/FP4Train/IR/FP4TrainAttrs.h"
#include "fp4train/Dialect/FP4Train/IR/FP4TrainDialect.h"

#include "mlir/AsmParser/AsmParser.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdio>
#include <cstdlib>

using namespace mlir;
using namespace mlir::fp4train::fuzz;

namespace {

/// A training step with one Fprop, Dgrad and Wgrad each, small enough to
/// run every pipeline in a few milliseconds.
const char kTrainStep[] = R"mlir(
#x = affine_map<(m, n, k) -> (m, k)>
#w = affine_map<(m, n, k) -> (n, k)>
#y = affine_map<(m, n, k) -> (m, n)>
#dx_w = affine_map<(m, k, n) -> (n, k)>
#dw_x = affine_map<(n, k, m) -> (m, k)>
#dw_dy = affine_map<(n, k, m) -> (m, n)>
func.func @step(%x: tensor<32x64xf32>, %w: tensor<32x64xf32> {fp4train.param},
                %dy: tensor<32x32xf32>)
    -> (tensor<32x32xf32>, tensor<32x64xf32>, tensor<32x64xf32>) {
  %zero = arith.constant 0.0 : f32
  %y0 = tensor.empty() : tensor<32x32xf32>
  %yi = linalg.fill ins(%zero : f32) outs(%y0 : tensor<32x32xf32>) -> tensor<32x32xf32>
  %y = linalg.matmul indexing_maps = [#x, #w, #y]
      ins(%x, %w : tensor<32x64xf32>, tensor<32x64xf32>)
      outs(%yi : tensor<32x32xf32>) -> tensor<32x32xf32>
  %g0 = tensor.empty() : tensor<32x64xf32>
  %gi = linalg.fill ins(%zero : f32) outs(%g0 : tensor<32x64xf32>) -> tensor<32x64xf32>
  %dx = linalg.matmul ins(%dy, %w : tensor<32x32xf32>, tensor<32x64xf32>)
      outs(%gi : tensor<32x64xf32>) -> tensor<32x64xf32>
  %dyt0 = tensor.empty() : tensor<32x32xf32>
  %dyt = linalg.transpose ins(%dy : tensor<32x32xf32>)
      outs(%dyt0 : tensor<32x32xf32>) permutation = [1, 0]
  %dw = linalg.matmul ins(%dyt, %x : tensor<32x32xf32>, tensor<32x64xf32>)
      outs(%gi : tensor<32x64xf32>) -> tensor<32x64xf32>
  return %y, %dx, %dw : tensor<32x32xf32>, tensor<32x64xf32>, tensor<32x64xf32>
}
)mlir";

/// Passes and pipelines whose options the text becomes (selector - 2).
const char *const kOptionTargets[] = {
    "fp4train-quantize-matmuls",
    "fp4train-quantize-pipeline",
    "fp4train-annotate-roles",
    "fp4train-expand",
    "fp4train-to-runtime",
    "fp4train-cpu-pipeline",
    "fp4train-rocm-kernel-pipeline",
    "fp4train-cuda-kernel-pipeline",
    "fp4train-to-amdgpu",
    "fp4train-to-nvvm",
    "fp4train-interchange-contractions",
    "fp4train-vectorize-contractions",
    "fp4train-check-indices",
    "fp4train-gpu-device-memory",
    "fp4train-cuda-pipeline",
    "fp4train-rocm-pipeline",
};

/// The pipelines that end in device binaries: their option text must not
/// ask for format=bin, which launches ptxas or the ROCm linker.
bool serializes(llvm::StringRef target) {
  return target == "fp4train-cuda-pipeline" ||
         target == "fp4train-rocm-pipeline";
}

/// True when `text` can stand between `name{` and `}` without closing the
/// option list early: a stray `}` would end it and let the rest name other
/// (upstream) passes, which is not what this fuzzer is about.
bool isOneOptionList(llvm::StringRef text) {
  int depth = 0;
  for (char c : text) {
    depth += c == '{';
    depth -= c == '}';
    if (depth < 0)
      return false;
  }
  return depth == 0;
}

OwningOpRef<ModuleOp> parseTrainStep(FuzzContext &context) {
  OwningOpRef<ModuleOp> module =
      parseSourceString<ModuleOp>(kTrainStep, ParserConfig(&context.get()));
  if (!module) {
    std::fprintf(stderr, "fuzzer setup: the training step does not parse\n");
    std::abort();
  }
  return module;
}

/// Aborts unless `text`, the printed form of `original`, parses back to it.
template <typename T, typename Parse>
void checkRoundTrip(T original, Parse parse, const char *what) {
  std::string printed;
  llvm::raw_string_ostream os(printed);
  original.print(os);
  T reparsed = parse(printed);
  if (reparsed == original)
    return;
  std::fprintf(stderr,
               "fuzzer finding: the %s printed as '%s' parses back %s\n", what,
               printed.c_str(), reparsed ? "to a different one" : "to nothing");
  std::abort();
}

void fuzzAttribute(FuzzContext &context, llvm::StringRef text) {
  MLIRContext *ctx = &context.get();
  ctx->getOrLoadDialect<fp4train::FP4TrainDialect>();
  size_t numRead = 0;
  Attribute attr = parseAttribute(text, ctx, Type(), &numRead);
  checkFailureReported(!attr, context, "parsing an attribute");
  if (!attr || !isa<fp4train::FP4TrainDialect>(attr.getDialect()))
    return;
  context.resetErrors();
  checkRoundTrip(
      attr, [&](llvm::StringRef s) { return parseAttribute(s, ctx); },
      "attribute");
  if (!isa<fp4train::RecipeAttr>(attr))
    return;
  std::string printed;
  llvm::raw_string_ostream os(printed);
  attr.print(os);
  // The recipe is one option value, in braces, as on fp4-opt's command line.
  if (!isOneOptionList(printed))
    return;
  OwningOpRef<ModuleOp> module = parseTrainStep(context);
  runPipeline(context, *module,
              "fp4train-quantize-pipeline{recipe={" + printed + "}}");
}

void fuzzType(FuzzContext &context, llvm::StringRef text) {
  MLIRContext *ctx = &context.get();
  ctx->getOrLoadDialect<fp4train::FP4TrainDialect>();
  size_t numRead = 0;
  Type type = parseType(text, ctx, &numRead);
  checkFailureReported(!type, context, "parsing a type");
  if (!type || !isa<fp4train::FP4TrainDialect>(type.getDialect()))
    return;
  context.resetErrors();
  checkRoundTrip(
      type, [&](llvm::StringRef s) { return parseType(s, ctx); }, "type");
}

void fuzzOptions(FuzzContext &context, llvm::StringRef target,
                 llvm::StringRef text) {
  if (!isOneOptionList(text) || touchesTheMachine(text) ||
      (serializes(target) && text.contains("bin")))
    return;
  std::string pipeline = (target + "{" + text + "}").str();
  PassManager pm(&context.get(), ModuleOp::getOperationName());
  std::string error;
  llvm::raw_string_ostream errorStream(error);
  if (failed(parsePassPipeline(pipeline, pm, errorStream)))
    return; // Rejected with a message: what a bad option should get.
  OwningOpRef<ModuleOp> module = parseTrainStep(context);
  context.resetErrors();
  bool ok = succeeded(pm.run(*module));
  checkFailureReported(!ok, context, pipeline);
}

void fuzzPipeline(FuzzContext &context, llvm::StringRef text) {
  if (!namesOnlyOurPasses(text) || touchesTheMachine(text) ||
      text.contains("bin"))
    return;
  PassManager pm(&context.get(), ModuleOp::getOperationName());
  std::string error;
  llvm::raw_string_ostream errorStream(error);
  if (failed(parsePassPipeline(text, pm, errorStream)))
    return; // Rejected with a message, nested pipelines included.
  OwningOpRef<ModuleOp> module = parseTrainStep(context);
  context.resetErrors();
  bool ok = succeeded(pm.run(*module));
  checkFailureReported(!ok, context, text);
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size == 0)
    return 0;
  unsigned numTargets = sizeof(kOptionTargets) / sizeof(kOptionTargets[0]);
  unsigned selector = data[0] % (numTargets + 3);
  llvm::StringRef text = asText(data + 1, size - 1);
  FuzzContext context;
  if (selector == 0)
    fuzzAttribute(context, text);
  else if (selector == 1)
    fuzzType(context, text);
  else if (selector == numTargets + 2)
    fuzzPipeline(context, text);
  else
    fuzzOptions(context, kOptionTargets[selector - 2], text);
  return 0;
}
