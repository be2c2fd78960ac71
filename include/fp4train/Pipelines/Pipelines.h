//===- Pipelines.h - fp4train pass pipelines --------------------*- C++ -*-===//
//
// Registered pipelines that take a training step in linalg on tensors
// through role inference and recipe-driven quantization (and, in later
// stages, down to a target).
//
//===----------------------------------------------------------------------===//

#ifndef FP4TRAIN_PIPELINES_PIPELINES_H
#define FP4TRAIN_PIPELINES_PIPELINES_H

#include "mlir/Pass/PassOptions.h"

#include <string>

namespace mlir {
class OpPassManager;

namespace fp4train {

/// Options of fp4train-quantize-pipeline: every option of
/// fp4train-annotate-roles and fp4train-quantize-matmuls.
struct QuantizePipelineOptions
    : public PassPipelineOptions<QuantizePipelineOptions> {
  Option<std::string> recipe{
      *this, "recipe",
      llvm::cl::desc("recipe preset name or #fp4train.recipe attribute")};
  ListOption<unsigned> params{
      *this, "params",
      llvm::cl::desc("argument indices of the parameters, in addition to "
                     "those marked {fp4train.param}")};
  Option<std::string> weightLayout{
      *this, "weight-layout",
      llvm::cl::desc("layout of weight matrices: out-in (PyTorch) or in-out "
                     "(JAX)"),
      llvm::cl::init("out-in")};
  Option<int> stochasticRounding{
      *this, "stochastic-rounding",
      llvm::cl::desc("1: round dY stochastically, 0: round to nearest even"),
      llvm::cl::init(-1)};
  Option<int> hadamard{*this, "hadamard",
                       llvm::cl::desc("Wgrad Hadamard size (0 disables it)"),
                       llvm::cl::init(-1)};
  Option<std::string> hadamardSigns{
      *this, "hadamard-signs",
      llvm::cl::desc("Wgrad Hadamard signs: none, fixed or random")};
  Option<std::string> scaleMode{
      *this, "scale-mode",
      llvm::cl::desc("scale mode of MX operands: floor or rceil")};
  Option<int> weights2d{
      *this, "weights-2d",
      llvm::cl::desc("1: 16x16 weight blocks shared by Fprop and Dgrad"),
      llvm::cl::init(-1)};
  Option<int> keepFirst{
      *this, "keep-first",
      llvm::cl::desc("number of leading linear layers kept in high precision"),
      llvm::cl::init(-1)};
  Option<int> keepLast{
      *this, "keep-last",
      llvm::cl::desc("number of trailing linear layers kept in high "
                     "precision"),
      llvm::cl::init(-1)};
  Option<int> stepArg{
      *this, "step-arg",
      llvm::cl::desc("index of the function argument holding the training "
                     "step"),
      llvm::cl::init(-1)};
  Option<bool> pad{*this, "pad",
                   llvm::cl::desc("zero-pad dimensions that are not a "
                                  "multiple of the block"),
                   llvm::cl::init(true)};
  Option<std::string> report{
      *this, "report",
      llvm::cl::desc("write the JSON quantization report to this file ('-' "
                     "for stdout)")};
};

/// Role inference, quantization of the Fprop/Dgrad/Wgrad contractions, and
/// cleanup (canonicalization and CSE, which also merges the two
/// quantizations of a 2-D-blocked weight).
void buildQuantizePipeline(OpPassManager &pm,
                           const QuantizePipelineOptions &options);

/// Options of fp4train-cpu-pipeline: every option of
/// fp4train-quantize-pipeline, and how results are returned.
struct CPUPipelineOptions : public QuantizePipelineOptions {
  Option<bool> outParams{
      *this, "out-params",
      llvm::cl::desc("return results through caller-allocated memref "
                     "arguments (buffer-results-to-out-params), the "
                     "convention of C callers and ExecutionEngine tests"),
      llvm::cl::init(false)};
};

/// The quantize pipeline, then the exact CPU expansion (fp4train-expand),
/// one-shot bufferization, buffer deallocation and lowering to the LLVM
/// dialect: the result runs under mlir-runner and MLIR's ExecutionEngine.
void buildCPUPipeline(OpPassManager &pm, const CPUPipelineOptions &options);

/// The part of the CPU pipeline after quantization: expansion,
/// bufferization and lowering to the LLVM dialect, for modules that already
/// hold fp4train ops.
void buildCPULoweringPipeline(OpPassManager &pm, bool outParams);

/// Registers the fp4train pipelines with the global pass registry.
void registerPipelines();

} // namespace fp4train
} // namespace mlir

#endif // FP4TRAIN_PIPELINES_PIPELINES_H
