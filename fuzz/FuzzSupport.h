//===- FuzzSupport.h - What the MLIR fuzzers share --------------*- C++ -*-===//
//
// The fuzzers of this directory drive fp4train the way an embedding compiler
// does: one registry with every dialect and pass fp4-opt has, a fresh
// single-threaded MLIRContext per input, diagnostics collected rather than
// printed. Besides crashes (aborts, sanitizer reports), they check the
// long-lived-host guarantee of docs/robustness.md: a parse, verify or
// pipeline that fails has reported at least one error.
//
//===----------------------------------------------------------------------===//

#ifndef FP4TRAIN_FUZZ_FUZZSUPPORT_H
#define FP4TRAIN_FUZZ_FUZZSUPPORT_H

#include "FuzzText.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/ADT/StringRef.h"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace mlir::fp4train::fuzz {

/// The registry of fp4-opt; registers the passes and pipelines on first use.
const mlir::DialectRegistry &getRegistry();

/// A context for one input: fp4-opt's dialects, no threads (libFuzzer runs
/// one input at a time and a thread pool per input would dominate), and a
/// handler that counts and drops every diagnostic.
class FuzzContext {
public:
  FuzzContext();
  mlir::MLIRContext &get() { return context; }
  /// Errors reported since construction or the last reset.
  unsigned getNumErrors() const { return numErrors; }
  void resetErrors() { numErrors = 0; }

private:
  mlir::MLIRContext context;
  std::unique_ptr<mlir::ScopedDiagnosticHandler> handler;
  unsigned numErrors = 0;
};

/// Aborts (a finding) when `failed` holds but no error was reported: a
/// silent failure breaks the guarantee embedders rely on.
void checkFailureReported(bool failed, const FuzzContext &context,
                          llvm::StringRef what);

/// Runs the textual pass pipeline `pipeline` (passes of builtin.module)
/// on `module`; returns true on success. A pipeline that does not parse is a
/// finding: the fuzzers only use pipelines known to be valid here, except
/// where the option text itself is the input (see parsePipeline).
bool runPipeline(FuzzContext &context, mlir::ModuleOp module,
                 llvm::StringRef pipeline);

} // namespace mlir::fp4train::fuzz

#endif // FP4TRAIN_FUZZ_FUZZSUPPORT_H
