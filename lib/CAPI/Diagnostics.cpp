//===- Diagnostics.cpp - Diagnostics of a C API call as text --------------===//

#include "Diagnostics.h"

#include "mlir/CAPI/Support.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Location.h"

using namespace mlir;
using namespace mlir::fp4train::capi;

static void printLocation(llvm::raw_ostream &os, Location loc) {
  if (auto file = dyn_cast<FileLineColLoc>(loc)) {
    os << file.getFilename().getValue() << ":" << file.getLine() << ":"
       << file.getColumn();
    return;
  }
  if (auto name = dyn_cast<NameLoc>(loc)) {
    printLocation(os, name.getChildLoc());
    return;
  }
  if (auto fused = dyn_cast<FusedLoc>(loc)) {
    if (!fused.getLocations().empty()) {
      printLocation(os, fused.getLocations().front());
      return;
    }
  }
  os << loc;
}

static llvm::StringRef getSeverityName(DiagnosticSeverity severity) {
  switch (severity) {
  case DiagnosticSeverity::Error:
    return "error";
  case DiagnosticSeverity::Warning:
    return "warning";
  case DiagnosticSeverity::Note:
    return "note";
  case DiagnosticSeverity::Remark:
    return "remark";
  }
  return "error";
}

static void printDiagnostic(llvm::raw_ostream &os, Diagnostic &diagnostic) {
  // An unknown location says nothing; leave it out.
  if (!isa<UnknownLoc>(diagnostic.getLocation())) {
    printLocation(os, diagnostic.getLocation());
    os << ": ";
  }
  os << getSeverityName(diagnostic.getSeverity()) << ": " << diagnostic.str()
     << "\n";
  for (Diagnostic &note : diagnostic.getNotes())
    printDiagnostic(os, note);
}

DiagnosticCapture::DiagnosticCapture(MLIRContext *context)
    : handler(context, [this](Diagnostic &diagnostic) {
        printDiagnostic(os, diagnostic);
        return success();
      }) {}

void DiagnosticCapture::report(MlirStringCallback callback, void *userData,
                               llvm::StringRef fallback) {
  llvm::StringRef message = llvm::StringRef(text).rtrim();
  reportError(callback, userData, message.empty() ? fallback : message);
}

void mlir::fp4train::capi::reportError(MlirStringCallback callback,
                                       void *userData,
                                       llvm::StringRef message) {
  if (callback)
    callback(wrap(message), userData);
}
