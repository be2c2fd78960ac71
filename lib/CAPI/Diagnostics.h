//===- Diagnostics.h - Diagnostics of a C API call as text ------*- C++ -*-===//
//
// Every C API entry point that runs MLIR code collects the diagnostics it
// produces (instead of letting the context print them) and hands them to the
// caller's callback as text: embedders show them, Python raises them.
//
//===----------------------------------------------------------------------===//

#ifndef FP4TRAIN_LIB_CAPI_DIAGNOSTICS_H
#define FP4TRAIN_LIB_CAPI_DIAGNOSTICS_H

#include "mlir-c/Support.h"
#include "mlir/IR/Diagnostics.h"
#include "llvm/Support/raw_ostream.h"

#include <string>

namespace mlir::fp4train::capi {

/// Collects the diagnostics reported in `context` while alive, one
/// `loc: severity: message` line per diagnostic and attached note.
class DiagnosticCapture {
public:
  explicit DiagnosticCapture(MLIRContext *context);

  /// Text to report besides the diagnostics (a pipeline parser's message).
  llvm::raw_ostream &stream() { return os; }

  /// Passes what was collected (or `fallback` when nothing was) to `callback`
  /// if it is not null.
  void report(MlirStringCallback callback, void *userData,
              llvm::StringRef fallback = "failed");

private:
  std::string text;
  llvm::raw_string_ostream os{text};
  ScopedDiagnosticHandler handler;
};

/// Passes `message` to `callback` if it is not null.
void reportError(MlirStringCallback callback, void *userData,
                 llvm::StringRef message);

} // namespace mlir::fp4train::capi

#endif // FP4TRAIN_LIB_CAPI_DIAGNOSTICS_H
