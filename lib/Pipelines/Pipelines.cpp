//===- Pipelines.cpp - fp4train pass pipelines ----------------------------===//

#include "fp4train/Pipelines/Pipelines.h"

#include "fp4train/Conversion/FP4TrainToNVVM/FP4TrainToNVVM.h"
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
#include "mlir/Conversion/GPUToNVVM/GPUToNVVMPass.h"
#include "mlir/Conversion/GPUToROCDL/GPUToROCDLPass.h"
#include "mlir/Conversion/NVVMToLLVM/NVVMToLLVM.h"
#include "mlir/Conversion/IndexToLLVM/IndexToLLVM.h"
#include "mlir/Conversion/MathToLLVM/MathToLLVM.h"
#include "mlir/Conversion/MathToLibm/MathToLibm.h"
#include "mlir/Conversion/MemRefToLLVM/MemRefToLLVM.h"
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

#include "mlir/IR/Matchers.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Process.h"
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

/// Refuses modules that already hold outlined GPU code. The GPU pipelines
/// outline, serialize and launch the kernels they create; a gpu.module,
/// gpu.launch_func or gpu.binary of the input (a nested
/// `gpu.container_module` that launches its own kernel) would go through
/// kernel outlining, device memory and gpu-to-llvm as if it were theirs,
/// and upstream gpu-to-llvm fails on it with invalid IR. A user's own
/// gpu.launch region is supported: it is outlined with the others.
struct CheckNoOutlinedGPUCodePass
    : public PassWrapper<CheckNoOutlinedGPUCodePass, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(CheckNoOutlinedGPUCodePass)

  StringRef getArgument() const final {
    return "fp4train-check-no-outlined-gpu-code";
  }
  StringRef getDescription() const final {
    return "Reject inputs of the GPU pipelines that already hold gpu.module, "
           "gpu.launch_func or gpu.binary ops";
  }

  void runOnOperation() override {
    WalkResult result = getOperation().walk([](Operation *op) {
      if (!isa<gpu::GPUModuleOp, gpu::LaunchFuncOp, gpu::BinaryOp>(op))
        return WalkResult::advance();
      op->emitOpError("in the input of a GPU pipeline is not supported: the "
                      "pipelines outline and launch only the kernels they "
                      "create (give GPU code as gpu.launch regions, or "
                      "compile outlined GPU code on its own)");
      return WalkResult::interrupt();
    });
    if (result.wasInterrupted())
      signalPassFailure();
  }
};

/// Rejects device symbols the NVPTX and AMDGPU assembly printers cannot
/// write. Neither quotes names, and both end the process (`LLVM ERROR:
/// Symbol name with unsupported characters`) on a name such as the
/// `up/../x_kernel` that kernel outlining derives from a host function
/// `@"up/../x"`. Letters, digits, `_`, `$` and `.` (not first) are what
/// both accept.
struct CheckDeviceSymbolNamesPass
    : public PassWrapper<CheckDeviceSymbolNamesPass,
                         OperationPass<gpu::GPUModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(CheckDeviceSymbolNamesPass)

  StringRef getArgument() const final {
    return "fp4train-check-device-symbol-names";
  }
  StringRef getDescription() const final {
    return "Reject device symbols that the GPU assembly printers cannot write";
  }

  static bool isWritable(StringRef name) {
    auto plain = [](char c) {
      return llvm::isAlnum(c) || c == '_' || c == '$';
    };
    return !name.empty() && !llvm::isDigit(name.front()) &&
           plain(name.front()) &&
           llvm::all_of(name, [&](char c) { return plain(c) || c == '.'; });
  }

  void runOnOperation() override {
    getOperation().walk([&](SymbolOpInterface symbol) {
      if (symbol == getOperation() || isWritable(symbol.getName()))
        return;
      symbol->emitOpError("has the device symbol name '")
          << symbol.getName()
          << "', which the GPU assembly printers cannot write: device "
             "symbols take letters, digits, '_', '$' and '.' (rename the "
             "function the kernel is outlined from)";
      signalPassFailure();
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
  quantize.roles = llvm::to_vector(options.roles);
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
  pm.addPass(createSCFToControlFlowPass());
  pm.addPass(createConvertVectorToLLVMPass());
  addHostLoweringToLLVM(pm, /*gpuLaunches=*/false);
}

void mlir::fp4train::buildCPUPipeline(OpPassManager &pm,
                                      const CPUPipelineOptions &options) {
  buildQuantizePipeline(pm, options);
  buildCPULoweringPipeline(pm, options.outParams, options.numerics);
}

/// The GPU front half shared by the ROCm and CUDA pipelines: quantization,
/// the target's conversion pass (`toGPU`: kernels for what the chip runs,
/// fp4train-expand for the rest), bufferization and kernel outlining.
static void addGPUFrontHalf(OpPassManager &pm,
                            const QuantizePipelineOptions &options,
                            std::unique_ptr<Pass> toGPU) {
  pm.addPass(std::make_unique<CheckNoOutlinedGPUCodePass>());
  buildQuantizePipeline(pm, options);
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
/// gpu.launch_func -> runtime calls, then serialization of the device code.
static void addGPUBackHalfEpilogue(OpPassManager &pm, StringRef format,
                                   StringRef toolkit = "") {
  addHostLoweringToLLVM(pm, /*gpuLaunches=*/true);
  pm.addNestedPass<gpu::GPUModuleOp>(
      std::make_unique<CheckDeviceSymbolNamesPass>());
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
  toROCDL.chipset = options.chip;
  pm.addNestedPass<gpu::GPUModuleOp>(createConvertAMDGPUToROCDLPass(toROCDL));
}

void mlir::fp4train::buildROCmPipeline(OpPassManager &pm,
                                       const ROCmPipelineOptions &options) {
  buildROCmKernelPipeline(pm, options);
  addGPUBackHalfPrologue(pm, options.memory);

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

namespace {

/// Sets `nvvm.minctasm = 1` (PTX `.minnctapersm 1`) on every kernel launched
/// with more dynamic shared memory than half of the largest NVIDIA SM's
/// 228 KiB: one workgroup per SM is all that fits, so ptxas may give each
/// thread the registers that occupancy no longer needs. Without the hint
/// ptxas caps such kernels near 64 registers and spills (the tcgen05 GEMM
/// with ragged M, N and K; docs/nvvm.md).
struct SingleWorkgroupOccupancyPass
    : public PassWrapper<SingleWorkgroupOccupancyPass,
                         OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(SingleWorkgroupOccupancyPass)

  StringRef getArgument() const final {
    return "fp4train-single-workgroup-occupancy";
  }
  StringRef getDescription() const final {
    return "Mark kernels whose dynamic shared memory allows one workgroup "
           "per SM with nvvm.minctasm = 1";
  }

  void runOnOperation() override {
    constexpr int64_t kHalfSharedMemoryPerSM = 228 * 1024 / 2;
    ModuleOp module = getOperation();
    module.walk([&](gpu::LaunchFuncOp launch) {
      Value size = launch.getDynamicSharedMemorySize();
      APInt bytes;
      if (!size || !matchPattern(size, m_ConstantInt(&bytes)) ||
          bytes.getSExtValue() <= kHalfSharedMemoryPerSM)
        return;
      if (auto kernel = SymbolTable::lookupNearestSymbolFrom<gpu::GPUFuncOp>(
              launch, launch.getKernel()))
        kernel->setAttr("nvvm.minctasm",
                        IntegerAttr::get(IntegerType::get(&getContext(), 32), 1));
    });
  }
};

} // namespace

void mlir::fp4train::buildCUDAKernelPipeline(
    OpPassManager &pm, const CUDAPipelineOptions &options) {
  FP4TrainToNVVMOptions nvvm;
  nvvm.chip = options.chip;
  nvvm.sr = options.sr;
  addGPUFrontHalf(pm, options, createFP4TrainToNVVM(nvvm));
  pm.addPass(std::make_unique<SingleWorkgroupOccupancyPass>());
}

namespace {

/// Fails on any call of a libdevice function (`__nv_*`) in a GPU module:
/// fp4train kernels use no math library, and with format=isa a missing
/// libdevice would otherwise leave a silent `.extern .func __nv_*` in the
/// PTX (NVVM.md trap 4).
struct CheckNoLibdevicePass
    : public PassWrapper<CheckNoLibdevicePass, OperationPass<gpu::GPUModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(CheckNoLibdevicePass)

  StringRef getArgument() const final { return "fp4train-check-no-libdevice"; }
  StringRef getDescription() const final {
    return "Reject GPU modules that call libdevice (__nv_*) functions";
  }

  void runOnOperation() override {
    getOperation().walk([&](LLVM::LLVMFuncOp function) {
      if (function.isExternal() && function.getName().starts_with("__nv_")) {
        function.emitError("kernel code references libdevice function ")
            << function.getName()
            << ": fp4train kernels must not call math library functions";
        signalPassFailure();
      }
    });
  }
};

/// For format=bin: finds the ptxas that gpu-module-to-binary will run
/// (`toolkit`/bin/ptxas, the toolkit being the option, else $CUDA_ROOT,
/// $CUDA_HOME, $CUDA_PATH, else /usr/local/cuda) and fails with a message
/// saying so when it is missing, instead of upstream's late error.
struct CheckPtxasPass
    : public PassWrapper<CheckPtxasPass, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(CheckPtxasPass)

  explicit CheckPtxasPass(std::string toolkit) : toolkit(std::move(toolkit)) {}
  StringRef getArgument() const final { return "fp4train-check-ptxas"; }
  StringRef getDescription() const final {
    return "Fail early when format=bin has no ptxas to run";
  }

  void runOnOperation() override {
    std::string ptxas = toolkit + "/bin/ptxas";
    if (!llvm::sys::fs::can_execute(ptxas)) {
      getOperation().emitError(
          "format=bin needs ptxas from the CUDA toolkit: ")
          << ptxas
          << " is not an executable; set toolkit= or $CUDA_ROOT, or use "
             "format=isa for PTX";
      signalPassFailure();
    }
  }

  std::string toolkit;
};

/// The CUDA toolkit of format=bin (see CheckPtxasPass).
static std::string getCUDAToolkit(StringRef option) {
  if (!option.empty())
    return option.str();
  for (const char *variable : {"CUDA_ROOT", "CUDA_HOME", "CUDA_PATH"})
    if (std::optional<std::string> value =
            llvm::sys::Process::GetEnv(variable))
      if (!value->empty())
        return *value;
  return "/usr/local/cuda";
}

} // namespace

void mlir::fp4train::buildCUDAPipeline(OpPassManager &pm,
                                       const CUDAPipelineOptions &options) {
  buildCUDAKernelPipeline(pm, options);
  addGPUBackHalfPrologue(pm, options.memory);

  // Device code: gpu/arith/vector/memref -> LLVM + NVVM.
  pm.addNestedPass<gpu::GPUModuleOp>(createConvertGpuOpsToNVVMOps());
  pm.addNestedPass<gpu::GPUModuleOp>(createConvertNVVMToLLVMPass());
  pm.addNestedPass<gpu::GPUModuleOp>(createReconcileUnrealizedCastsPass());
  pm.addNestedPass<gpu::GPUModuleOp>(std::make_unique<CheckNoLibdevicePass>());
  GpuNVVMAttachTargetOptions attach;
  attach.chip = options.chip;
  std::optional<NVVMChip> chip = NVVMChip::parse(options.chip);
  // An invalid chip has failed in fp4train-to-nvvm already.
  attach.features = chip ? chip->getPTXFeature() : "";
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
    toolkit = getCUDAToolkit(options.toolkit);
    pm.addPass(std::make_unique<CheckPtxasPass>(toolkit));
    break;
  case CUDAFormat::LLVM:
    format = "llvm";
    break;
  }
  addGPUBackHalfEpilogue(pm, format, toolkit);
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
static void registerModulePipeline(
    StringRef argument, StringRef description,
    void (*build)(OpPassManager &, const Options &)) {
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
      "ops to NVIDIA kernels (sm_120a, sm_121a, sm_100a, sm_103a, sm_90a, "
      "sm_89; other fp4train ops expanded on the "
      "host), and serialize the device code (isa = PTX, bin = cubin, llvm) "
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
