//===- Pipelines.cpp - fp4train pass pipelines ----------------------------===//

#include "fp4train/Pipelines/Pipelines.h"

#include "fp4train/Conversion/Passes.h"
#include "fp4train/Dialect/FP4Train/IR/FP4TrainDialect.h"
#include "fp4train/Dialect/FP4Train/Transforms/Passes.h"

#include "mlir/Conversion/AMDGPUToROCDL/AMDGPUToROCDL.h"
#include "mlir/Conversion/AffineToStandard/AffineToStandard.h"
#include "mlir/Conversion/ArithToLLVM/ArithToLLVM.h"
#include "mlir/Conversion/BufferizationToMemRef/BufferizationToMemRef.h"
#include "mlir/Conversion/ControlFlowToLLVM/ControlFlowToLLVM.h"
#include "mlir/Conversion/FuncToLLVM/ConvertFuncToLLVMPass.h"
#include "mlir/Conversion/GPUCommon/GPUCommonPass.h"
#include "mlir/Conversion/GPUToROCDL/GPUToROCDLPass.h"
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
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;
using namespace mlir::fp4train;

namespace {

/// Drops the {fp4train.param} argument markers. They serve role inference
/// only; the dialect verifies that they sit on tensors or memrefs, which the
/// arguments stop being once functions are lowered to the LLVM dialect.
struct DropParamMarkersPass
    : public PassWrapper<DropParamMarkersPass, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(DropParamMarkersPass)

  StringRef getArgument() const final { return "fp4train-drop-param-markers"; }
  StringRef getDescription() const final {
    return "Remove {fp4train.param} argument attributes before LLVM lowering";
  }

  void runOnOperation() override {
    getOperation().walk([](func::FuncOp function) {
      for (unsigned i = 0, e = function.getNumArguments(); i < e; ++i)
        function.removeArgAttr(i, FP4TrainDialect::kParamAttrName);
    });
  }
};

} // namespace

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

/// Lowers bufferized host code (memref, arith, math, index, func, cf; and
/// gpu.launch_func when `gpuLaunches`) to the LLVM dialect. Shared by the CPU
/// and ROCm pipelines so both hosts lower the same way.
static void addHostLoweringToLLVM(OpPassManager &pm, bool gpuLaunches) {
  pm.addPass(memref::createExpandStridedMetadataPass());
  pm.addPass(createLowerAffinePass());
  pm.addPass(arith::createArithExpandOpsPass());
  pm.addPass(std::make_unique<DropParamMarkersPass>());
  pm.addPass(createFinalizeMemRefToLLVMConversionPass());
  // math-to-llvm first: libm has no rsqrtf (STYLE.md, known traps).
  pm.addPass(createConvertMathToLLVMPass());
  pm.addPass(createConvertMathToLibmPass());
  pm.addPass(createArithToLLVMConversionPass());
  pm.addPass(createConvertIndexToLLVMPass());
  if (gpuLaunches)
    pm.addPass(createGpuToLLVMConversionPass());
  pm.addPass(createConvertFuncToLLVMPass());
  pm.addPass(createConvertControlFlowToLLVMPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
}

void mlir::fp4train::buildCPULoweringPipeline(OpPassManager &pm,
                                              bool outParams,
                                              CPUNumerics numerics) {
  if (numerics == CPUNumerics::Runtime) {
    // Straight into bufferization: each call reads its operands through a
    // bufferization.to_buffer placed right before it, and one-shot
    // bufferization models the read at that position. CSE would merge the
    // to_buffer ops of one tensor read by several calls into the first, and
    // canonicalization would fold to_buffer(to_tensor) away, hiding later
    // reads from the analysis, which could then reuse the buffer in place.
    pm.addPass(createFP4TrainToRuntime());
  } else {
    pm.addPass(createFP4TrainExpand());
    pm.addPass(createCanonicalizerPass());
    pm.addPass(createCSEPass());
  }
  // bf16 contractions leave arith.extf / arith.truncf on tensors around the
  // GEMM, which one-shot bufferization cannot handle: make them
  // linalg.generic ops.
  pm.addPass(createConvertElementwiseToLinalgPass());

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
  addHostLoweringToLLVM(pm, /*gpuLaunches=*/false);
}

void mlir::fp4train::buildCPUPipeline(OpPassManager &pm,
                                      const CPUPipelineOptions &options) {
  buildQuantizePipeline(pm, options);
  buildCPULoweringPipeline(pm, options.outParams, options.numerics);
}

void mlir::fp4train::buildROCmKernelPipeline(
    OpPassManager &pm, const ROCmPipelineOptions &options) {
  buildQuantizePipeline(pm, options);

  // GEMMs and the quantize ops of isQuantizeOnGPU become gfx950 kernels;
  // every other fp4train op gets fp4train-expand's exact patterns in the
  // same conversion and runs on the host.
  FP4TrainToAMDGPUOptions amdgpu;
  amdgpu.chip = options.chip;
  amdgpu.mfma = options.mfma;
  pm.addPass(createFP4TrainToAMDGPU(amdgpu));
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  // bf16 contractions leave arith.extf / arith.truncf on tensors around the
  // GEMM (the truncf only when the bf16 epilogue could not take it), which
  // one-shot bufferization cannot handle: make them linalg.generic ops.
  pm.addPass(createConvertElementwiseToLinalgPass());

  bufferization::OneShotBufferizePassOptions bufferize;
  bufferize.bufferizeFunctionBoundaries = true;
  bufferize.functionBoundaryTypeConversion =
      bufferization::LayoutMapOption::IdentityLayoutMap;
  pm.addPass(bufferization::createOneShotBufferizePass(bufferize));
  // Canonicalization hoisted the kernels' constants to the host function:
  // sink them back so that they do not become kernel arguments.
  pm.addNestedPass<func::FuncOp>(createGpuLaunchSinkIndexComputationsPass());
  pm.addPass(createGpuKernelOutliningPass());

  // Device code: amdgpu -> rocdl; the rest of the kernel stays on
  // arith/vector/memref/scf until buildROCmPipeline lowers it.
  ConvertAMDGPUToROCDLPassOptions toROCDL;
  toROCDL.chipset = options.chip;
  pm.addNestedPass<gpu::GPUModuleOp>(createConvertAMDGPUToROCDLPass(toROCDL));
}

void mlir::fp4train::buildROCmPipeline(OpPassManager &pm,
                                       const ROCmPipelineOptions &options) {
  buildROCmKernelPipeline(pm, options);

  // After outlining: deallocation cannot look into gpu.launch bodies, and
  // sees gpu.launch_func as a use of its buffers through the memory effects
  // model registered with the dialects
  // (registerGPULaunchFuncMemoryEffectsModel).
  bufferization::buildBufferDeallocationPipeline(pm);
  pm.addPass(createConvertBufferizationToMemRefPass());
  pm.addNestedPass<func::FuncOp>(createConvertLinalgToLoopsPass());
  pm.addPass(createSCFToControlFlowPass());

  // Device code: gpu/arith/vector/memref -> LLVM.
  ConvertGpuOpsToROCDLOpsOptions gpuToROCDL;
  gpuToROCDL.chipset = options.chip;
  gpuToROCDL.runtime = gpu::amd::Runtime::HIP;
  pm.addNestedPass<gpu::GPUModuleOp>(
      createConvertGpuOpsToROCDLOps(gpuToROCDL));
  GpuROCDLAttachTargetOptions attach;
  attach.chip = options.chip;
  attach.optLevel = 3;
  pm.addPass(createGpuROCDLAttachTarget(attach));

  // Host code, as in the CPU pipeline, plus gpu.launch_func -> runtime calls.
  addHostLoweringToLLVM(pm, /*gpuLaunches=*/true);

  GpuModuleToBinaryPassOptions binary;
  switch (options.format) {
  case ROCmFormat::ISA:
    binary.compilationTarget = "isa";
    break;
  case ROCmFormat::Binary:
    binary.compilationTarget = "bin";
    break;
  case ROCmFormat::LLVM:
    binary.compilationTarget = "llvm";
    break;
  }
  pm.addPass(createGpuModuleToBinaryPass(binary));
}

void mlir::fp4train::registerPipelines() {
  PassPipelineRegistration<ROCmPipelineOptions>(
      "fp4train-rocm-pipeline",
      "Quantize by a recipe, lower block-scaled GEMMs to gfx950 scaled-MFMA "
      "kernels (other fp4train ops expanded on the host), and serialize the "
      "device code (isa, bin or llvm) with host code in the LLVM dialect",
      buildROCmPipeline);
  PassPipelineRegistration<ROCmPipelineOptions>(
      "fp4train-rocm-kernel-pipeline",
      "The first half of fp4train-rocm-pipeline: gfx950 kernels with "
      "structured control flow and ROCDL scaled-MFMA/conversion intrinsics, "
      "host code on memrefs (the form the gfx950 emulator executes)",
      buildROCmKernelPipeline);
  PassPipelineRegistration<CPUPipelineOptions>(
      "fp4train-cpu-pipeline",
      "Quantize by a recipe, expand fp4train exactly (numerics=ir) or call "
      "the runtime library (numerics=runtime), bufferize and lower to the "
      "LLVM dialect for mlir-runner and the ExecutionEngine",
      buildCPUPipeline);
  PassPipelineRegistration<QuantizePipelineOptions>(
      "fp4train-quantize-pipeline",
      "Annotate roles, quantize Fprop/Dgrad/Wgrad contractions by a recipe, "
      "and clean up",
      buildQuantizePipeline);
}
