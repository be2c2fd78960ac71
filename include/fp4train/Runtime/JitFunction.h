//===- JitFunction.h - JIT-compile and call one function -------*- C++ -*-===//
//
// Compiles one function of a module (a training step, a test kernel) with a
// CPU pipeline, JITs it with MLIR's ExecutionEngine with the fp4train
// runtime symbols registered, and calls it on host buffers. The signature is
// read before lowering, so callers see tensors and scalars, not memref
// descriptors. Used by fp4-train and by the execution tests.
//
//===----------------------------------------------------------------------===//

#ifndef FP4TRAIN_RUNTIME_JITFUNCTION_H
#define FP4TRAIN_RUNTIME_JITFUNCTION_H

#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace mlir {
class ExecutionEngine;
class OpPassManager;

namespace fp4train {

/// One argument or result of a compiled function, as the host passes it.
struct JitValue {
  enum class Kind {
    /// A statically shaped tensor (rank 0 included): a dense row-major
    /// buffer of f32 or i32 (token ids), or of one byte per element for i8
    /// and for the narrow float types, which the fp4train type conversion
    /// stores as i8 codes.
    Tensor,
    /// An f32 scalar: a float.
    F32,
    /// An i64 or index scalar: an int64_t.
    I64,
  };
  Kind kind;
  std::vector<int64_t> shape;
  /// Tensors: 4 (f32, i32) or 1 (codes).
  int64_t elementBytes = 4;
  /// Tensors: the elements are i32 rather than f32.
  bool isInt32 = false;
  /// Whether the argument is marked {fp4train.param}.
  bool isParam = false;

  int64_t getNumElements() const;
};

/// How JitFunction::compile prepares a function.
struct JitOptions {
  /// [IDX1] Run fp4train-check-indices before the pipeline, so that an
  /// index out of bounds (a token id past the vocabulary) makes call()
  /// return an error instead of reading or writing outside a buffer. Off
  /// only where the inputs are known to be in range and speed matters.
  bool checkIndices = true;
};

class JitFunction {
public:
  /// Lowers `module` in place with the passes `buildPipeline` adds, which
  /// must take a module in linalg on tensors to the LLVM dialect returning
  /// results through out-parameters (CPUPipelineOptions::outParams), and
  /// JITs function `name`. Every argument and result of `name` must be a
  /// JitValue kind. Errors carry the first diagnostic of the failing step.
  static llvm::Expected<std::unique_ptr<JitFunction>>
  compile(ModuleOp module, llvm::StringRef name,
          llvm::function_ref<void(OpPassManager &)> buildPipeline,
          const JitOptions &options = {});

  ~JitFunction();

  llvm::ArrayRef<JitValue> getArguments() const { return arguments; }
  llvm::ArrayRef<JitValue> getResults() const { return results; }

  /// Calls the function: `args[i]` points to argument i's value (a tensor
  /// buffer, a float or an int64_t, see JitValue::Kind), `outs[j]` to a
  /// buffer of result j's size. Fails when a check of
  /// JitOptions::checkIndices failed: the call then ran to its end without
  /// the out-of-bounds accesses, and `outs` hold unspecified values.
  [[nodiscard]] llvm::Error call(llvm::ArrayRef<const void *> args,
                                 llvm::ArrayRef<void *> outs);

private:
  JitFunction() = default;

  std::string name;
  std::vector<JitValue> arguments, results;
  /// The accesses fp4train-check-indices guards, by site number.
  std::vector<std::string> indexSites;
  std::unique_ptr<ExecutionEngine> engine;
  void (*entry)(void **) = nullptr;
};

} // namespace fp4train
} // namespace mlir

#endif // FP4TRAIN_RUNTIME_JITFUNCTION_H
