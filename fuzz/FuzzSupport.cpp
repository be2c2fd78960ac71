//===- FuzzSupport.cpp - What the MLIR fuzzers share ----------------------===//

#include "FuzzSupport.h"

#include "fp4train/InitFP4Train.h"

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdio>
#include <cstdlib>

using namespace mlir;

namespace mlir::fp4train::fuzz {

const DialectRegistry &getRegistry() {
  static const DialectRegistry *registry = [] {
    auto *result = new DialectRegistry;
    fp4train::registerAllDialects(*result);
    fp4train::registerAllPasses();
    return result;
  }();
  return *registry;
}

FuzzContext::FuzzContext()
    : context(getRegistry(), MLIRContext::Threading::DISABLED) {
  handler = std::make_unique<ScopedDiagnosticHandler>(
      &context, [this](Diagnostic &diagnostic) {
        numErrors += diagnostic.getSeverity() == DiagnosticSeverity::Error;
        return success();
      });
}

void checkFailureReported(bool failed, const FuzzContext &context,
                          llvm::StringRef what) {
  if (!failed || context.getNumErrors() != 0)
    return;
  std::fprintf(stderr, "fuzzer finding: %.*s failed without an error\n",
               int(what.size()), what.data());
  std::abort();
}

bool runPipeline(FuzzContext &context, ModuleOp module,
                 llvm::StringRef pipeline) {
  PassManager pm(&context.get(), ModuleOp::getOperationName());
  std::string error;
  llvm::raw_string_ostream errorStream(error);
  if (failed(parsePassPipeline(pipeline, pm, errorStream))) {
    std::fprintf(stderr, "fuzzer setup: pipeline '%.*s' does not parse: %s\n",
                 int(pipeline.size()), pipeline.data(), error.c_str());
    std::abort();
  }
  context.resetErrors();
  bool ok = succeeded(pm.run(module));
  checkFailureReported(!ok, context, pipeline);
  return ok;
}

} // namespace mlir::fp4train::fuzz

/// libFuzzer's (and ReplayMain's) start-up hook for both MLIR fuzzers: the
/// registry and the pass registrations, once, before the first input.
extern "C" int LLVMFuzzerInitialize(int *, char ***) {
  (void)mlir::fp4train::fuzz::getRegistry();
  return 0;
}
