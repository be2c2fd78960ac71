/*===- fp4train-c/Passes.h - Passes, pipelines and module entry points -*- C
-*-===*\
|*                                                                            *|
|* Registration of fp4train's passes and pipelines, and the operations an     *|
|* embedder runs on a module: parse with captured diagnostics, run a textual  *|
|* pipeline, read the role report. Failures return a failed                   *|
|* MlirLogicalResult (or a null module) and pass the diagnostics text, one    *|
|* `loc: error: message` line per diagnostic and note, to `onError(text,      *|
|* userData)` when `onError` is not null. Nothing is printed.                 *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#ifndef FP4TRAIN_C_PASSES_H
#define FP4TRAIN_C_PASSES_H

#include "mlir-c/IR.h"
#include "mlir-c/Support.h"

#ifdef __cplusplus
extern "C" {
#endif

/// Registers, with MLIR's global pass registry, the fp4train passes
/// (`fp4train-annotate-roles`, `fp4train-quantize-matmuls`, ...), the
/// conversions (`fp4train-expand`, `fp4train-to-runtime`, `fp4train-to-amdgpu`,
/// `fp4train-to-nvvm`), the pipelines (`fp4train-quantize-pipeline`,
/// `fp4train-cpu-pipeline`, `fp4train-rocm-pipeline`, `fp4train-cuda-pipeline`,
/// ...) and the upstream passes they and `fp4-opt` users need. Idempotent and
/// safe to call from several threads.
MLIR_CAPI_EXPORTED void fp4trainRegisterPasses(void);

/// Parses `source` as a module in `context`. Returns a null module on error,
/// with the parser's diagnostics (locations as `<input>:line:col`) passed to
/// `onError`.
MLIR_CAPI_EXPORTED MlirModule
fp4trainModuleCreateParse(MlirContext context, MlirStringRef source,
                          MlirStringCallback onError, void *userData);

/// Runs a textual pass pipeline on `module`, in place. `pipeline` takes the
/// strings `fp4-opt --pass-pipeline` takes, with or without the
/// `builtin.module(...)` wrapper (without it, the text is wrapped, so
/// `fp4train-cpu-pipeline{recipe=nvfp4}` and `func.func(canonicalize)` both
/// work). Call fp4trainRegisterPasses first. Fails on a pipeline that does not
/// parse or a pass that fails; the module is then partially transformed.
MLIR_CAPI_EXPORTED MlirLogicalResult
fp4trainModuleRunPipeline(MlirModule module, MlirStringRef pipeline,
                          MlirStringCallback onError, void *userData);

/// Classifies the contractions of every function with a body of `module`
/// (docs/semantics.md, [ROLE1]-[ROLE7]) without changing it, and passes the
/// report of `fp4train-annotate-roles` to `onReport(json, reportUserData)`: a
/// JSON array of objects with keys `role` (`fprop`, `dgrad`, `wgrad` or
/// `other`), `op`, `param` (argument index or null), `m`, `n`, `k`, `batch`
/// (null when dynamic) and `loc`. `weightLayout` is `out-in` (PyTorch) or
/// `in-out` (JAX). Fails, calling `onError`, on an unknown layout or an
/// analysis error.
MLIR_CAPI_EXPORTED MlirLogicalResult fp4trainModuleGetRoleReport(
    MlirModule module, MlirStringRef weightLayout, MlirStringCallback onReport,
    void *reportUserData, MlirStringCallback onError, void *userData);

#ifdef __cplusplus
}
#endif

#endif // FP4TRAIN_C_PASSES_H
