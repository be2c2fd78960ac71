/*===- fp4train-c/ExecutionEngine.h - JIT-compile and call a function -*- C
-*-===*\
|*                                                                            *|
|* Compiles one function of a module (a training step) with a CPU pipeline,  *|
|* JITs it with the fp4train runtime linked in, and calls it on buffers the  *|
|* caller owns. The signature is the function's before lowering: static      *|
|* tensors of f32 (or of one byte per element for i8 and narrow float codes), *|
|* f32 and i64/index scalars.                                                 *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#ifndef FP4TRAIN_C_EXECUTIONENGINE_H
#define FP4TRAIN_C_EXECUTIONENGINE_H

#include "mlir-c/IR.h"
#include "mlir-c/Support.h"

#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// A compiled function. Owned by the caller: fp4trainJitDestroy.
typedef struct FP4TrainJit {
  void *ptr;
} FP4TrainJit;

/// What the host passes for one argument or result.
typedef enum FP4TrainJitKind {
  /// A dense row-major buffer of `elementBytes`-sized elements.
  FP4TrainJitTensor = 0,
  /// A `float`.
  FP4TrainJitF32 = 1,
  /// An `int64_t`.
  FP4TrainJitI64 = 2,
} FP4TrainJitKind;

/// The host view of one argument or result; `shape` (of `rank` entries) lives
/// as long as the FP4TrainJit.
typedef struct FP4TrainJitValue {
  FP4TrainJitKind kind;
  intptr_t rank;
  const int64_t *shape;
  /// 4 for f32 and i32 tensors, 1 for code (i8, f4E2M1FN, f8*) tensors.
  int64_t elementBytes;
  /// Whether the argument carries `{fp4train.param}`.
  bool isParam;
  /// Whether a tensor holds i32 elements (token ids) rather than f32.
  bool isInt32;
} FP4TrainJitValue;

/// How fp4trainJitCreateWithOptions prepares a function.
typedef struct FP4TrainJitOptions {
  /// [IDX1] Bounds-check data-dependent indices (an embedding lookup of
  /// token ids, a gathered target): an index out of range makes
  /// fp4trainJitCall fail with a message instead of reading or writing
  /// outside a buffer. On by default; turn it off only where the inputs are
  /// known to be in range and speed matters.
  bool checkIndices;
} FP4TrainJitOptions;

/// The default options: every check on.
static inline FP4TrainJitOptions fp4trainJitOptionsGetDefault(void) {
  FP4TrainJitOptions options = {true};
  return options;
}

/// Lowers a clone of `module` (the module itself is not changed) with the
/// textual pipeline `pipeline` (as fp4trainModuleRunPipeline takes it) and
/// JITs function `function`. The pipeline must take linalg on tensors to the
/// LLVM dialect returning results through out-parameters: a
/// `fp4train-cpu-pipeline{...}` gets `out-params=true` added when it does not
/// say it; other pipelines must. Returns a null handle on failure, passing the
/// first diagnostic of the failing step to `onError`. Call
/// fp4trainRegisterPasses first.
MLIR_CAPI_EXPORTED FP4TrainJit fp4trainJitCreateWithOptions(
    MlirModule module, MlirStringRef function, MlirStringRef pipeline,
    FP4TrainJitOptions options, MlirStringCallback onError, void *userData);

/// fp4trainJitCreateWithOptions with the default options.
MLIR_CAPI_EXPORTED FP4TrainJit fp4trainJitCreate(MlirModule module,
                                                 MlirStringRef function,
                                                 MlirStringRef pipeline,
                                                 MlirStringCallback onError,
                                                 void *userData);

/// Whether `jit` is null (a failed fp4trainJitCreate).
static inline bool fp4trainJitIsNull(FP4TrainJit jit) { return !jit.ptr; }

/// Frees a compiled function.
MLIR_CAPI_EXPORTED void fp4trainJitDestroy(FP4TrainJit jit);

/// The number of arguments and results of the compiled function.
MLIR_CAPI_EXPORTED intptr_t fp4trainJitGetNumArguments(FP4TrainJit jit);
MLIR_CAPI_EXPORTED intptr_t fp4trainJitGetNumResults(FP4TrainJit jit);

/// Argument / result `pos`.
MLIR_CAPI_EXPORTED FP4TrainJitValue fp4trainJitGetArgument(FP4TrainJit jit,
                                                           intptr_t pos);
MLIR_CAPI_EXPORTED FP4TrainJitValue fp4trainJitGetResult(FP4TrainJit jit,
                                                         intptr_t pos);

/// Calls the function: `args[i]` points to argument i (a tensor buffer, a
/// float or an int64_t, see FP4TrainJitKind), `results[j]` to a buffer of
/// result j's size, which the call fills. Buffers must match the signature;
/// they are not checked. Safe to call from several threads on distinct
/// buffers. Fails, passing the reason to `onError`, when an index check
/// (FP4TrainJitOptions::checkIndices) failed: the results are then
/// unspecified, and no memory outside the buffers was touched.
MLIR_CAPI_EXPORTED MlirLogicalResult fp4trainJitCall(FP4TrainJit jit,
                                                     const void *const *args,
                                                     void *const *results,
                                                     MlirStringCallback onError,
                                                     void *userData);

#ifdef __cplusplus
}
#endif

#endif // FP4TRAIN_C_EXECUTIONENGINE_H
