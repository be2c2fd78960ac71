//===- FuzzSupport.cpp - What the MLIR fuzzers share ----------------------===//

#include "FuzzSupport.h"

#include "fp4train/InitFP4Train.h"

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>

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

llvm::StringRef asText(const uint8_t *data, size_t size) {
  const void *nul = std::memchr(data, 0, size);
  if (nul)
    size = size_t(static_cast<const uint8_t *>(nul) - data);
  return llvm::StringRef(reinterpret_cast<const char *>(data), size);
}

/// True if `text` starts with `= [i, j, ...]` (spaces allowed).
static bool startsWithIntegerList(llvm::StringRef text) {
  text = text.ltrim();
  if (!text.consume_front("="))
    return false;
  text = text.ltrim();
  if (!text.consume_front("["))
    return false;
  text = text.ltrim();
  if (text.consume_front("]"))
    return true;
  while (true) {
    text.consume_front("-");
    size_t digits = text.find_first_not_of("0123456789");
    if (digits == 0 || digits == llvm::StringRef::npos)
      return false;
    text = text.drop_front(digits).ltrim();
    if (text.consume_front("]"))
      return true;
    if (!text.consume_front(","))
      return false;
    text = text.ltrim();
  }
}

bool hasKnownUpstreamParserCrash(llvm::StringRef text) {
  if (text.contains("batch_matmul") && text.contains("xindex>"))
    return true;
  for (llvm::StringRef op : {"linalg.transpose", "linalg.broadcast",
                             "linalg.reduce"}) {
    for (size_t at = text.find(op); at != llvm::StringRef::npos;
         at = text.find(op, at + 1)) {
      // The generic form ("linalg.transpose"(...)) parses its attributes
      // with the generic parser, which is safe.
      if (at > 0 && text[at - 1] == '"')
        continue;
      llvm::StringRef rest = text.drop_front(at + op.size());
      size_t key = std::min(rest.find("permutation"), rest.find("dimensions"));
      if (key == llvm::StringRef::npos)
        continue;
      llvm::StringRef value = rest.drop_front(key);
      value = value.drop_front(value.starts_with("permutation")
                                   ? strlen("permutation")
                                   : strlen("dimensions"));
      if (!startsWithIntegerList(value))
        return true;
    }
  }
  return false;
}

bool touchesTheMachine(llvm::StringRef text) {
  return text.contains("report") || text.contains("toolkit");
}

} // namespace mlir::fp4train::fuzz

/// libFuzzer's (and ReplayMain's) start-up hook for both MLIR fuzzers: the
/// registry and the pass registrations, once, before the first input.
extern "C" int LLVMFuzzerInitialize(int *, char ***) {
  (void)mlir::fp4train::fuzz::getRegistry();
  return 0;
}
