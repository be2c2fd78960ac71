//===- ExecutionEngine.cpp - C API: JIT-compile and call a function -------===//

#include "fp4train-c/ExecutionEngine.h"

#include "Diagnostics.h"
#include "Pipeline.h"

#include "fp4train/Runtime/JitFunction.h"

#include "mlir/CAPI/IR.h"
#include "mlir/CAPI/Support.h"
#include "mlir/IR/BuiltinOps.h"

#include <regex>

using namespace mlir;
using namespace mlir::fp4train;

static JitFunction *unwrap(FP4TrainJit jit) {
  return static_cast<JitFunction *>(jit.ptr);
}

/// `pipeline` with `out-params=true` added to a fp4train-cpu-pipeline that
/// does not set it: the JIT calls functions with out-parameters.
static std::string withOutParams(llvm::StringRef pipeline) {
  std::string text = pipeline.str();
  if (text.find("out-params") != std::string::npos)
    return text;
  static const std::regex withOptions("fp4train-cpu-pipeline\\s*\\{");
  static const std::regex bare("fp4train-cpu-pipeline(?!\\s*\\{)");
  if (std::regex_search(text, withOptions))
    return std::regex_replace(text, withOptions,
                              "fp4train-cpu-pipeline{out-params=true ");
  return std::regex_replace(text, bare,
                            "fp4train-cpu-pipeline{out-params=true}");
}

FP4TrainJit fp4trainJitCreate(MlirModule module, MlirStringRef function,
                              MlirStringRef pipeline,
                              MlirStringCallback onError, void *userData) {
  return fp4trainJitCreateWithOptions(module, function, pipeline,
                                      fp4trainJitOptionsGetDefault(), onError,
                                      userData);
}

FP4TrainJit
fp4trainJitCreateWithOptions(MlirModule module, MlirStringRef function,
                             MlirStringRef pipeline, FP4TrainJitOptions options,
                             MlirStringCallback onError, void *userData) {
  ModuleOp original = unwrap(module);
  MLIRContext *context = original.getContext();
  capi::DiagnosticCapture capture(context);
  FailureOr<OpPassManager> parsed =
      capi::parsePipeline(withOutParams(unwrap(pipeline)), capture.stream());
  if (failed(parsed)) {
    capture.report(onError, userData, "invalid pass pipeline");
    return {nullptr};
  }
  OwningOpRef<ModuleOp> copy = original.clone();
  llvm::Expected<std::unique_ptr<JitFunction>> jit = JitFunction::compile(
      *copy, unwrap(function), [&](OpPassManager &pm) { pm = *parsed; },
      JitOptions{options.checkIndices});
  if (!jit) {
    capi::reportError(onError, userData, llvm::toString(jit.takeError()));
    return {nullptr};
  }
  return {jit->release()};
}

void fp4trainJitDestroy(FP4TrainJit jit) { delete unwrap(jit); }

intptr_t fp4trainJitGetNumArguments(FP4TrainJit jit) {
  return unwrap(jit)->getArguments().size();
}

intptr_t fp4trainJitGetNumResults(FP4TrainJit jit) {
  return unwrap(jit)->getResults().size();
}

static FP4TrainJitValue wrap(const JitValue &value) {
  FP4TrainJitKind kind = FP4TrainJitTensor;
  if (value.kind == JitValue::Kind::F32)
    kind = FP4TrainJitF32;
  else if (value.kind == JitValue::Kind::I64)
    kind = FP4TrainJitI64;
  return {kind,
          static_cast<intptr_t>(value.shape.size()),
          value.shape.data(),
          value.elementBytes,
          value.isParam,
          value.isInt32};
}

FP4TrainJitValue fp4trainJitGetArgument(FP4TrainJit jit, intptr_t pos) {
  return wrap(unwrap(jit)->getArguments()[pos]);
}

FP4TrainJitValue fp4trainJitGetResult(FP4TrainJit jit, intptr_t pos) {
  return wrap(unwrap(jit)->getResults()[pos]);
}

MlirLogicalResult fp4trainJitCall(FP4TrainJit jit, const void *const *args,
                                  void *const *results,
                                  MlirStringCallback onError, void *userData) {
  JitFunction *function = unwrap(jit);
  if (llvm::Error error = function->call(
          llvm::ArrayRef(args, function->getArguments().size()),
          llvm::ArrayRef(results, function->getResults().size()))) {
    capi::reportError(onError, userData, llvm::toString(std::move(error)));
    return mlirLogicalResultFailure();
  }
  return mlirLogicalResultSuccess();
}
