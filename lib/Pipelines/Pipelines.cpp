//===- Pipelines.cpp - fp4train pass pipelines ----------------------------===//

#include "fp4train/Pipelines/Pipelines.h"

#include "fp4train/Conversion/FP4TrainToNVVM/FP4TrainToNVVM.h"
#include "fp4train/Conversion/Passes.h"
#include "fp4train/Dialect/FP4Train/IR/FP4TrainDialect.h"
#include "fp4train/Dialect/FP4Train/Transforms/Passes.h"
#include "fp4train/Sharding/Passes.h"

#include "mlir/Conversion/AMDGPUToROCDL/AMDGPUToROCDL.h"
#include "mlir/Conversion/AffineToStandard/AffineToStandard.h"
#include "mlir/Conversion/ArithToLLVM/ArithToLLVM.h"
#include "mlir/Conversion/BufferizationToMemRef/BufferizationToMemRef.h"
#include "mlir/Conversion/ControlFlowToLLVM/ControlFlowToLLVM.h"
#include "mlir/Conversion/FuncToLLVM/ConvertFuncToLLVMPass.h"
#include "mlir/Conversion/GPUCommon/GPUCommonPass.h"
#include "mlir/Conversion/GPUToNVVM/GPUToNVVMPass.h"
#include "mlir/Conversion/GPUToROCDL/GPUToROCDLPass.h"
#include "mlir/Conversion/IndexToLLVM/IndexToLLVM.h"
#include "mlir/Conversion/MathToLLVM/MathToLLVM.h"
#include "mlir/Conversion/MathToLibm/MathToLibm.h"
#include "mlir/Conversion/MemRefToLLVM/MemRefToLLVM.h"
#include "mlir/Conversion/NVGPUToNVVM/NVGPUToNVVM.h"
#include "mlir/Conversion/NVVMToLLVM/NVVMToLLVM.h"
#include "mlir/Conversion/ReconcileUnrealizedCasts/ReconcileUnrealizedCasts.h"
#include "mlir/Conversion/SCFToControlFlow/SCFToControlFlow.h"
#include "mlir/Conversion/VectorToLLVM/ConvertVectorToLLVMPass.h"
#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Dialect/Bufferization/Pipelines/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
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
  quantize.stepArg = options.stepArg;
  quantize.pad = options.pad;
  quantize.report = options.report;
  quantize.reportFormat = options.reportFormat;
  pm.addPass(
      createFP4TrainQuantizeMatmuls(quantize, options.overrides.getValue()));

  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
}

/// Lowers bufferized host code (memref, arith, math, index, func, cf; and
/// gpu.launch_func when `gpuLaunches`) to the LLVM dialect. Shared by the CPU
/// pipeline and both GPU pipelines, so every host lowers the same way.
/// `tensorMaps`: the host may encode TMA tensor maps
/// (nvgpu.tma.create.descriptor, lowered to the CUDA runtime wrappers'
/// mgpuTensorMapEncodeTiledMemref while its memref is still one, and freed
/// at the end of their block: fp4train-free-tensor-maps).
static void addHostLoweringToLLVM(OpPassManager &pm, bool gpuLaunches,
                                  bool tensorMaps = false) {
  if (tensorMaps) {
    pm.addPass(createConvertNVGPUToNVVMPass());
    pm.addPass(createFP4TrainFreeTensorMaps());
  }
  pm.addPass(memref::createExpandStridedMetadataPass());
  pm.addPass(createLowerAffinePass());
  pm.addPass(arith::createArithExpandOpsPass());
  pm.addPass(createFP4TrainDropParamMarkers());
  // The MPI calls of a sharded step, ahead of the memrefs they take.
  pm.addPass(createFP4TrainMPIToLLVM());
  pm.addPass(createFinalizeMemRefToLLVMConversionPass());
  // math-to-llvm first: libm has no rsqrtf ([LOW1], docs/semantics.md).
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

void mlir::fp4train::buildCPULoweringPipeline(OpPassManager &pm, bool outParams,
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
  // f32 contractions iterate the result's contiguous dimension innermost,
  // contiguous in their inputs too, for fp4train-vectorize-contractions;
  // every output keeps its order of operations, so no result changes.
  pm.addNestedPass<func::FuncOp>(createFP4TrainInterchangeContractions());

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
  // K-block sum relies on. Contractions become vector loops over
  // independent outputs first (same order per output).
  pm.addNestedPass<func::FuncOp>(createFP4TrainVectorizeContractions());
  pm.addNestedPass<func::FuncOp>(createConvertLinalgToLoopsPass());
  // [JIT1] One function per loop nest: LLVM's loop passes cost time in
  // proportion to the function they run in.
  pm.addPass(createFP4TrainOutlineLoopNests());
  pm.addPass(createSCFToControlFlowPass());
  pm.addPass(createConvertVectorToLLVMPass());
  addHostLoweringToLLVM(pm, /*gpuLaunches=*/false);
}

/// A step with shard annotations becomes one process's program, its
/// collectives MPI calls (docs/sharding.md); a module without any is left
/// unchanged.
static void addPartitionPipeline(OpPassManager &pm) {
  pm.addPass(createFP4TrainPartition());
  pm.addPass(createFP4TrainShardToMPI());
}

void mlir::fp4train::buildCPUPipeline(OpPassManager &pm,
                                      const CPUPipelineOptions &options) {
  buildQuantizePipeline(pm, options);
  addPartitionPipeline(pm);
  buildCPULoweringPipeline(pm, options.outParams, options.numerics);
}

/// The GPU front half shared by the ROCm and CUDA pipelines: quantization,
/// the target's conversion pass (`toGPU`: kernels for what the chip runs,
/// fp4train-expand for the rest), bufferization and kernel outlining.
static void addGPUFrontHalf(OpPassManager &pm,
                            const QuantizePipelineOptions &options,
                            std::unique_ptr<Pass> toGPU) {
  pm.addPass(createFP4TrainCheckNoOutlinedGPUCode());
  buildQuantizePipeline(pm, options);
  // Per-process kernels; the collectives stay on the host as MPI calls.
  addPartitionPipeline(pm);
  pm.addPass(std::move(toGPU));
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
  pm.addPass(createFP4TrainMergeIdenticalKernels());
}

/// The start of the GPU back half shared by both pipelines: buffer
/// deallocation (after outlining: it cannot look into gpu.launch bodies,
/// and sees gpu.launch_func as a use of its buffers through the memory
/// effects model registered with the dialects,
/// registerGPULaunchFuncMemoryEffectsModel) and lowering of the structured
/// host and device code to cf.
static void addGPUBackHalfPrologue(OpPassManager &pm, GPUMemory memory) {
  bufferization::buildBufferDeallocationPipeline(pm);
  pm.addPass(createConvertBufferizationToMemRefPass());
  // Device twins and copies (before linalg-to-loops: the host linalg ops
  // state exactly what they read and write), then async gpu ops with the
  // waits host code needs: gpu-to-llvm lowers gpu.alloc / gpu.memcpy only
  // in their async form.
  if (memory == GPUMemory::Device) {
    pm.addPass(createFP4TrainGPUDeviceMemory());
    pm.addNestedPass<func::FuncOp>(createGpuAsyncRegionPass());
  }
  pm.addNestedPass<func::FuncOp>(createConvertLinalgToLoopsPass());
  pm.addPass(createSCFToControlFlowPass());
}

/// The end of the GPU back half: host code as in the CPU pipeline plus
/// gpu.launch_func -> runtime calls (and, for CUDA, TMA tensor maps ->
/// the runtime's encoder), then serialization of the device code.
static void addGPUBackHalfEpilogue(OpPassManager &pm, StringRef format,
                                   StringRef toolkit = "",
                                   bool tensorMaps = false) {
  addHostLoweringToLLVM(pm, /*gpuLaunches=*/true, tensorMaps);
  pm.addNestedPass<gpu::GPUModuleOp>(createFP4TrainCheckDeviceSymbolNames());
  GpuModuleToBinaryPassOptions binary;
  binary.compilationTarget = format.str();
  binary.toolkitPath = toolkit.str();
  pm.addPass(createGpuModuleToBinaryPass(binary));
}

void mlir::fp4train::buildROCmKernelPipeline(
    OpPassManager &pm, const ROCmPipelineOptions &options) {
  // GEMMs and the quantize ops of isQuantizeOnGPU become gfx950 kernels;
  // every other fp4train op gets fp4train-expand's exact patterns in the
  // same conversion and runs on the host.
  FP4TrainToAMDGPUOptions amdgpu;
  amdgpu.chip = options.chip;
  amdgpu.mfma = options.mfma;
  amdgpu.tile = options.tile;
  addGPUFrontHalf(pm, options, createFP4TrainToAMDGPU(amdgpu));

  // Device code: amdgpu -> rocdl; the rest of the kernel stays on
  // arith/vector/memref/scf until buildROCmPipeline lowers it.
  ConvertAMDGPUToROCDLPassOptions toROCDL;
  toROCDL.chipset = getGPUTarget(options.chip).name;
  pm.addNestedPass<gpu::GPUModuleOp>(createConvertAMDGPUToROCDLPass(toROCDL));
}

void mlir::fp4train::buildROCmPipeline(OpPassManager &pm,
                                       const ROCmPipelineOptions &options) {
  buildROCmKernelPipeline(pm, options);
  addGPUBackHalfPrologue(pm, options.memory);

  // Device code: gpu/arith/vector/memref -> LLVM.
  ConvertGpuOpsToROCDLOpsOptions gpuToROCDL;
  gpuToROCDL.chipset = getGPUTarget(options.chip).name;
  gpuToROCDL.runtime = gpu::amd::Runtime::HIP;
  pm.addNestedPass<gpu::GPUModuleOp>(createConvertGpuOpsToROCDLOps(gpuToROCDL));
  GpuROCDLAttachTargetOptions attach;
  attach.chip = getGPUTarget(options.chip).name;
  attach.optLevel = 3;
  pm.addPass(createGpuROCDLAttachTarget(attach));

  StringRef format;
  switch (options.format) {
  case ROCmFormat::ISA:
    format = "isa";
    break;
  case ROCmFormat::Binary:
    format = "bin";
    break;
  case ROCmFormat::LLVM:
    format = "llvm";
    break;
  }
  addGPUBackHalfEpilogue(pm, format);
}

void mlir::fp4train::buildCUDAKernelPipeline(
    OpPassManager &pm, const CUDAPipelineOptions &options) {
  FP4TrainToNVVMOptions nvvm;
  nvvm.chip = options.chip;
  nvvm.sr = options.sr;
  nvvm.gemmWorkgroups = options.gemmWorkgroups;
  nvvm.gemmCtaPair = options.gemmCtaPair;
  addGPUFrontHalf(pm, options, createFP4TrainToNVVM(nvvm));
  pm.addPass(createFP4TrainSingleWorkgroupOccupancy());
  pm.addPass(createFP4TrainKernelClusterSize());
}

void mlir::fp4train::buildCUDAPipeline(OpPassManager &pm,
                                       const CUDAPipelineOptions &options) {
  buildCUDAKernelPipeline(pm, options);
  addGPUBackHalfPrologue(pm, options.memory);

  // Device code: gpu/arith/vector/memref -> LLVM + NVVM.
  pm.addNestedPass<gpu::GPUModuleOp>(createConvertGpuOpsToNVVMOps());
  pm.addNestedPass<gpu::GPUModuleOp>(createConvertNVVMToLLVMPass());
  pm.addNestedPass<gpu::GPUModuleOp>(createReconcileUnrealizedCastsPass());
  pm.addNestedPass<gpu::GPUModuleOp>(createFP4TrainCheckNoLibdevice());
  const GPUTarget &target = getGPUTarget(options.chip);
  GpuNVVMAttachTargetOptions attach;
  attach.chip = target.name;
  attach.features = target.ptxFeature;
  attach.optLevel = 3;
  pm.addPass(createGpuNVVMAttachTarget(attach));

  StringRef format;
  std::string toolkit;
  switch (options.format) {
  case CUDAFormat::ISA:
    format = "isa";
    break;
  case CUDAFormat::Binary:
    format = "bin";
    toolkit = getCUDAToolkitPath(options.toolkit);
    pm.addPass(createFP4TrainCheckPtxas({toolkit}));
    break;
  case CUDAFormat::LLVM:
    format = "llvm";
    break;
  }
  addGPUBackHalfEpilogue(pm, format, toolkit, /*tensorMaps=*/true);
}

/// Registers a pipeline that only builds on a pass manager anchored on
/// builtin.module. Every fp4train pipeline adds module passes (role
/// annotation, bufferization, gpu-to-llvm), and OpPassManager::addPass ends
/// the process (`LLVM ERROR: Can't add pass ... restricted to
/// 'builtin.module'`) when such a pass is added under another anchor, as in
/// `builtin.module(func.func(fp4train-cpu-pipeline))`. The check runs while
/// the textual pipeline is parsed, so fp4-opt, the C API and Python report
/// it as a pipeline error before anything runs.
template <typename Options>
static void registerModulePipeline(StringRef argument, StringRef description,
                                   void (*build)(OpPassManager &,
                                                 const Options &)) {
  registerPassPipeline(
      argument, description,
      [argument, build](OpPassManager &pm, StringRef text,
                        function_ref<LogicalResult(const Twine &)> error) {
        StringRef anchor = pm.getOpAnchorName();
        if (anchor != ModuleOp::getOperationName())
          return error("'" + argument + "' runs on 'builtin.module' only, " +
                       "not nested under '" + anchor + "'");
        Options options;
        if (failed(options.parseFromString(text)))
          return failure();
        build(pm, options);
        return success();
      },
      [](function_ref<void(const mlir::detail::PassOptions &)> handler) {
        handler(Options());
      });
}

void mlir::fp4train::registerPipelines() {
  registerModulePipeline<ROCmPipelineOptions>(
      "fp4train-rocm-pipeline",
      "Quantize by a recipe, lower block-scaled GEMMs to gfx950 scaled-MFMA "
      "kernels (other fp4train ops expanded on the host), and serialize the "
      "device code (isa, bin or llvm) with host code in the LLVM dialect",
      buildROCmPipeline);
  registerModulePipeline<ROCmPipelineOptions>(
      "fp4train-rocm-kernel-pipeline",
      "The first half of fp4train-rocm-pipeline: gfx950 kernels with "
      "structured control flow and ROCDL scaled-MFMA/conversion intrinsics, "
      "host code on memrefs (the form the gfx950 emulator executes)",
      buildROCmKernelPipeline);
  registerModulePipeline<CUDAPipelineOptions>(
      "fp4train-cuda-pipeline",
      "Quantize by a recipe, lower block-scaled GEMMs, quantize and Hadamard "
      "ops to NVIDIA kernels (other fp4train ops expanded on the host), and "
      "serialize the device code (isa = PTX, bin = cubin, llvm) "
      "with host code in the LLVM dialect",
      buildCUDAPipeline);
  registerModulePipeline<CUDAPipelineOptions>(
      "fp4train-cuda-kernel-pipeline",
      "The first half of fp4train-cuda-pipeline: NVIDIA kernels with "
      "structured control flow and NVVM MMA/conversion ops, host code on "
      "memrefs (the form the warp emulator executes)",
      buildCUDAKernelPipeline);
  registerModulePipeline<CPUPipelineOptions>(
      "fp4train-cpu-pipeline",
      "Quantize by a recipe, expand fp4train exactly (numerics=ir) or call "
      "the runtime library (numerics=runtime), bufferize and lower to the "
      "LLVM dialect for mlir-runner and the ExecutionEngine",
      buildCPUPipeline);
  registerModulePipeline<QuantizePipelineOptions>(
      "fp4train-quantize-pipeline",
      "Annotate roles, quantize Fprop/Dgrad/Wgrad contractions by a recipe, "
      "and clean up",
      buildQuantizePipeline);
}
