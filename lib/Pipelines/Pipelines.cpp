//===- Pipelines.cpp - fp4train pass pipelines ----------------------------===//

#include "fp4train/Pipelines/Pipelines.h"

#include "fp4train/Conversion/Passes.h"
#include "fp4train/Dialect/FP4Train/Transforms/Passes.h"

#include "mlir/Conversion/AffineToStandard/AffineToStandard.h"
#include "mlir/Conversion/ArithToLLVM/ArithToLLVM.h"
#include "mlir/Conversion/BufferizationToMemRef/BufferizationToMemRef.h"
#include "mlir/Conversion/ControlFlowToLLVM/ControlFlowToLLVM.h"
#include "mlir/Conversion/FuncToLLVM/ConvertFuncToLLVMPass.h"
#include "mlir/Conversion/IndexToLLVM/IndexToLLVM.h"
#include "mlir/Conversion/MathToLLVM/MathToLLVM.h"
#include "mlir/Conversion/MathToLibm/MathToLibm.h"
#include "mlir/Conversion/MemRefToLLVM/MemRefToLLVM.h"
#include "mlir/Conversion/ReconcileUnrealizedCasts/ReconcileUnrealizedCasts.h"
#include "mlir/Conversion/SCFToControlFlow/SCFToControlFlow.h"
#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Dialect/Bufferization/Pipelines/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;
using namespace mlir::fp4train;

void mlir::fp4train::buildQuantizePipeline(
    OpPassManager &pm, const QuantizePipelineOptions &options) {
  FP4TrainAnnotateRolesOptions annotate;
  annotate.params = llvm::to_vector(options.params);
  annotate.weightLayout = options.weightLayout;
  pm.addPass(createFP4TrainAnnotateRoles(annotate));

  FP4TrainQuantizeMatmulsOptions quantize;
  quantize.recipe = options.recipe;
  quantize.params = llvm::to_vector(options.params);
  quantize.weightLayout = options.weightLayout;
  quantize.stochasticRounding = options.stochasticRounding;
  quantize.hadamard = options.hadamard;
  quantize.hadamardSigns = options.hadamardSigns;
  quantize.scaleMode = options.scaleMode;
  quantize.weights2d = options.weights2d;
  quantize.keepFirst = options.keepFirst;
  quantize.keepLast = options.keepLast;
  quantize.stepArg = options.stepArg;
  quantize.pad = options.pad;
  quantize.report = options.report;
  pm.addPass(createFP4TrainQuantizeMatmuls(quantize));

  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
}

void mlir::fp4train::buildCPULoweringPipeline(OpPassManager &pm,
                                              bool outParams) {
  pm.addPass(createFP4TrainExpand());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());

  bufferization::OneShotBufferizePassOptions bufferize;
  bufferize.bufferizeFunctionBoundaries = true;
  bufferize.functionBoundaryTypeConversion =
      bufferization::LayoutMapOption::IdentityLayoutMap;
  pm.addPass(bufferization::createOneShotBufferizePass(bufferize));
  if (outParams) {
    bufferization::BufferResultsToOutParamsPassOptions results;
    results.modifyPublicFunctions = true;
    pm.addPass(bufferization::createBufferResultsToOutParamsPass(results));
  }
  bufferization::buildBufferDeallocationPipeline(pm);
  pm.addPass(createConvertBufferizationToMemRefPass());

  // Loops keep the iteration order of every reduction, which [GEMM1]'s
  // K-block sum relies on.
  pm.addNestedPass<func::FuncOp>(createConvertLinalgToLoopsPass());
  pm.addPass(createSCFToControlFlowPass());
  pm.addPass(memref::createExpandStridedMetadataPass());
  pm.addPass(createLowerAffinePass());
  pm.addPass(arith::createArithExpandOpsPass());
  pm.addPass(createFinalizeMemRefToLLVMConversionPass());
  // math-to-llvm first: libm has no rsqrtf (STYLE.md, known traps).
  pm.addPass(createConvertMathToLLVMPass());
  pm.addPass(createConvertMathToLibmPass());
  pm.addPass(createArithToLLVMConversionPass());
  pm.addPass(createConvertIndexToLLVMPass());
  pm.addPass(createConvertFuncToLLVMPass());
  pm.addPass(createConvertControlFlowToLLVMPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
}

void mlir::fp4train::buildCPUPipeline(OpPassManager &pm,
                                      const CPUPipelineOptions &options) {
  buildQuantizePipeline(pm, options);
  buildCPULoweringPipeline(pm, options.outParams);
}

void mlir::fp4train::registerPipelines() {
  PassPipelineRegistration<CPUPipelineOptions>(
      "fp4train-cpu-pipeline",
      "Quantize by a recipe, expand fp4train exactly, bufferize and lower to "
      "the LLVM dialect for mlir-runner and the ExecutionEngine",
      buildCPUPipeline);
  PassPipelineRegistration<QuantizePipelineOptions>(
      "fp4train-quantize-pipeline",
      "Annotate roles, quantize Fprop/Dgrad/Wgrad contractions by a recipe, "
      "and clean up",
      buildQuantizePipeline);
}
