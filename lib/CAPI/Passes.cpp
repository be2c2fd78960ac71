//===- Passes.cpp - C API: passes, pipelines and module entry points ------===//

#include "fp4train-c/Passes.h"

#include "Diagnostics.h"
#include "Pipeline.h"

#include "fp4train/Dialect/FP4Train/Transforms/RoleAnalysis.h"
#include "fp4train/InitFP4Train.h"
#include "fp4train/ParseModule.h"

#include "mlir/CAPI/IR.h"
#include "mlir/CAPI/Support.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "llvm/Support/FormatVariadic.h"

#include <cstdio>
#include <mutex>

#include <unistd.h>

using namespace mlir;
using namespace mlir::fp4train;

void fp4trainRegisterPasses(void) {
  static std::once_flag once;
  std::call_once(once, [] { fp4train::registerAllPasses(); });
}

namespace {
/// Redirects file descriptor 2 to a temporary file while alive. Pass option
/// parsers print their errors ("no such option", "Cannot find option named")
/// straight to llvm::errs() instead of the error stream they are given; the
/// C API must return them, not print them. Parsing a pipeline is short and
/// serialized, so the window in which another thread's stderr output would
/// land in the file too is small.
class StderrCapture {
public:
  StderrCapture() {
    std::fflush(stderr);
    llvm::errs().flush();
    file = std::tmpfile();
    saved = file ? ::dup(2) : -1;
    if (saved >= 0)
      ::dup2(::fileno(file), 2);
  }
  /// Restores fd 2 and returns what was written to it.
  std::string finish() {
    std::string text;
    if (saved < 0)
      return text;
    std::fflush(stderr);
    llvm::errs().flush();
    ::dup2(saved, 2);
    ::close(saved);
    saved = -1;
    std::rewind(file);
    char buffer[4096];
    size_t read;
    while ((read = std::fread(buffer, 1, sizeof(buffer), file)) > 0)
      text.append(buffer, read);
    return text;
  }
  ~StderrCapture() {
    finish();
    if (file)
      std::fclose(file);
  }

private:
  std::FILE *file = nullptr;
  int saved = -1;
};
} // namespace

FailureOr<OpPassManager>
mlir::fp4train::capi::parsePipeline(llvm::StringRef text,
                                    llvm::raw_ostream &errors) {
  llvm::StringRef trimmed = text.trim();
  // parsePassPipeline wants the anchor; fp4-opt users often leave it out.
  std::string anchored = trimmed.starts_with("builtin.module(")
                             ? trimmed.str()
                             : "builtin.module(" + trimmed.str() + ")";
  static std::mutex mutex;
  std::lock_guard<std::mutex> lock(mutex);
  StderrCapture capture;
  std::string parserErrors;
  llvm::raw_string_ostream parserStream(parserErrors);
  FailureOr<OpPassManager> result = parsePassPipeline(anchored, parserStream);
  std::string printed = capture.finish();
  // The option parser's own words first: they name the bad option.
  if (failed(result))
    errors << llvm::StringRef(printed).trim() << (printed.empty() ? "" : "\n")
           << parserErrors;
  return result;
}

MlirModule fp4trainModuleCreateParse(MlirContext context, MlirStringRef source,
                                     MlirStringCallback onError,
                                     void *userData) {
  MLIRContext *ctx = unwrap(context);
  capi::DiagnosticCapture capture(ctx);
  OwningOpRef<ModuleOp> module = parseModule(unwrap(source), "<input>", ctx);
  if (!module) {
    capture.report(onError, userData, "cannot parse the module");
    return {nullptr};
  }
  return wrap(module.release());
}

MlirLogicalResult fp4trainModuleRunPipeline(MlirModule module,
                                            MlirStringRef pipeline,
                                            MlirStringCallback onError,
                                            void *userData) {
  ModuleOp op = unwrap(module);
  MLIRContext *ctx = op.getContext();
  capi::DiagnosticCapture capture(ctx);
  FailureOr<OpPassManager> parsed =
      capi::parsePipeline(unwrap(pipeline), capture.stream());
  if (failed(parsed)) {
    capture.report(onError, userData, "invalid pass pipeline");
    return mlirLogicalResultFailure();
  }
  // Anchored on the parsed pipeline's op, never nested inside it: appending
  // `builtin.module(...)` to a module pass manager would run nothing.
  PassManager pm(ctx, parsed->getOpAnchorName());
  static_cast<OpPassManager &>(pm) = std::move(*parsed);
  if (failed(pm.run(op))) {
    capture.report(onError, userData, "the pass pipeline failed");
    return mlirLogicalResultFailure();
  }
  return mlirLogicalResultSuccess();
}

MlirLogicalResult
fp4trainModuleGetRoleReport(MlirModule module, MlirStringRef weightLayout,
                            MlirStringCallback onReport, void *reportUserData,
                            MlirStringCallback onError, void *userData) {
  ModuleOp op = unwrap(module);
  std::optional<WeightLayout> layout = parseWeightLayout(unwrap(weightLayout));
  if (!layout) {
    capi::reportError(onError, userData,
                      "unknown weight layout '" + unwrap(weightLayout).str() +
                          "'; expected 'out-in' or 'in-out'");
    return mlirLogicalResultFailure();
  }
  capi::DiagnosticCapture capture(op.getContext());
  llvm::json::Array report;
  for (auto function : op.getOps<FunctionOpInterface>()) {
    if (function.isExternal())
      continue;
    FailureOr<llvm::SmallVector<ContractionRole>> roles =
        analyzeRoles(function, /*extraParams=*/{}, *layout);
    if (failed(roles)) {
      capture.report(onError, userData, "the role analysis failed");
      return mlirLogicalResultFailure();
    }
    for (const ContractionRole &info : *roles)
      report.push_back(describeRole(info));
  }
  std::string json =
      llvm::formatv("{0}", llvm::json::Value(std::move(report))).str();
  if (onReport)
    onReport(wrap(llvm::StringRef(json)), reportUserData);
  return mlirLogicalResultSuccess();
}
