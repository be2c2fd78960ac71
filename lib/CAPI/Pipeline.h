//===- Pipeline.h - Textual pipelines of the C API --------------*- C++ -*-===//

#ifndef FP4TRAIN_LIB_CAPI_PIPELINE_H
#define FP4TRAIN_LIB_CAPI_PIPELINE_H

#include "mlir/Pass/PassManager.h"
#include "llvm/Support/raw_ostream.h"

namespace mlir::fp4train::capi {

/// Parses `text`, with or without the `builtin.module(...)` wrapper, into a
/// pass manager anchored on builtin.module; errors go to `errors`.
FailureOr<OpPassManager> parsePipeline(llvm::StringRef text,
                                       llvm::raw_ostream &errors);

} // namespace mlir::fp4train::capi

#endif // FP4TRAIN_LIB_CAPI_PIPELINE_H
