//===- Pipelines.h - fp4train pass pipelines --------------------*- C++ -*-===//
//
// Registered pipelines that take a training step in linalg on tensors
// through role inference and recipe-driven quantization down to a target:
// the CPU (LLVM dialect for the JIT), gfx950 and the NVIDIA chips.
//
//===----------------------------------------------------------------------===//

#ifndef FP4TRAIN_PIPELINES_PIPELINES_H
#define FP4TRAIN_PIPELINES_PIPELINES_H

#include "fp4train/Conversion/FP4TrainToAMDGPU/FP4TrainToAMDGPU.h"
#include "fp4train/Conversion/FP4TrainToNVVM/FP4TrainToNVVM.h"
#include "fp4train/Dialect/FP4Train/Transforms/RecipeOptions.h"
#include "fp4train/Dialect/FP4Train/Transforms/RoleAnalysis.h"
#include "fp4train/Support/EnumOption.h"
#include "fp4train/Target/GPUTarget.h"

#include "mlir/Pass/PassOptions.h"

#include <string>

namespace mlir {
class OpPassManager;

namespace fp4train {

/// How the CPU pipeline executes the fp4train ops.
enum class CPUNumerics {
  /// fp4train-expand: exact upstream IR, no run-time dependency.
  IR,
  /// fp4train-to-runtime: calls into the numerics library through the
  /// runtime entry points of fp4train/Runtime/Runtime.h (faster; the host
  /// must provide those symbols). Bit-identical to IR.
  Runtime,
};

/// Where the kernels of a GPU pipeline find their buffers.
enum class GPUMemory {
  /// Device buffers (gpu.alloc) with copies where host and device code
  /// meet (fp4train-gpu-device-memory): runs on any GPU.
  Device,
  /// The host function's own buffers: needs unified memory (HMM; XNACK on
  /// AMD), saves the copies.
  Unified,
};

/// What gpu-module-to-binary produces for the device code of
/// fp4train-rocm-pipeline.
enum class ROCmFormat {
  /// gfx950 assembly text.
  ISA,
  /// An HSA code object (needs ROCm's ld.lld under $ROCM_PATH/llvm/bin).
  Binary,
  /// LLVM IR of the device module (offload format).
  LLVM,
};

/// What gpu-module-to-binary produces for the device code of
/// fp4train-cuda-pipeline.
enum class CUDAFormat {
  /// PTX text.
  ISA,
  /// A cubin (needs ptxas: `toolkit=`, $CUDA_ROOT, or /usr/local/cuda).
  Binary,
  /// LLVM IR of the device module (offload format).
  LLVM,
};

} // namespace fp4train
} // namespace mlir

FP4TRAIN_ENUM_OPTION_PARSER(mlir::fp4train::CPUNumerics)
FP4TRAIN_ENUM_OPTION_PARSER(mlir::fp4train::GPUMemory)
FP4TRAIN_ENUM_OPTION_PARSER(mlir::fp4train::ROCmFormat)
FP4TRAIN_ENUM_OPTION_PARSER(mlir::fp4train::CUDAFormat)

namespace mlir::fp4train {

/// Options of fp4train-quantize-pipeline: every option of
/// fp4train-annotate-roles and fp4train-quantize-matmuls, the recipe
/// overrides included.
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
  /// stochastic-rounding, hadamard, ...: every recipe override ([RO1]).
  RecipeOverrideOptions overrides{*this};
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
      llvm::cl::desc("write the quantization report to this file ('-' for "
                     "stdout)")};
  Option<ReportFormat> reportFormat{
      *this, "report-format", llvm::cl::desc("format of the report"),
      llvm::cl::init(ReportFormat::JSON), getReportFormatValues()};
};

/// Role inference, quantization of the Fprop/Dgrad/Wgrad contractions, and
/// cleanup (canonicalization and CSE, which also merges the two
/// quantizations of a 2-D-blocked weight).
void buildQuantizePipeline(OpPassManager &pm,
                           const QuantizePipelineOptions &options);

/// Options of fp4train-cpu-pipeline: every option of
/// fp4train-quantize-pipeline, how results are returned, and which numerics
/// path runs the fp4train ops.
struct CPUPipelineOptions : public QuantizePipelineOptions {
  Option<CPUNumerics> numerics{
      *this, "numerics",
      llvm::cl::desc("how fp4train ops execute: exact IR expansion or calls "
                     "to the runtime library"),
      llvm::cl::init(CPUNumerics::IR),
      llvm::cl::values(
          clEnumValN(CPUNumerics::IR, "ir",
                     "fp4train-expand (upstream ops only)"),
          clEnumValN(CPUNumerics::Runtime, "runtime",
                     "fp4train-to-runtime (numerics library calls)"))};
  Option<bool> outParams{
      *this, "out-params",
      llvm::cl::desc("return results through caller-allocated memref "
                     "arguments (buffer-results-to-out-params), the "
                     "convention of C callers and ExecutionEngine tests"),
      llvm::cl::init(false)};
};

/// The quantize pipeline, then the exact CPU expansion (fp4train-expand) or
/// the runtime calls (fp4train-to-runtime), one-shot bufferization, buffer
/// deallocation and lowering to the LLVM dialect: the result runs under
/// mlir-runner and MLIR's ExecutionEngine.
void buildCPUPipeline(OpPassManager &pm, const CPUPipelineOptions &options);

/// The part of the CPU pipeline after quantization: expansion (or runtime
/// calls), bufferization and lowering to the LLVM dialect, for modules that
/// already hold fp4train ops.
void buildCPULoweringPipeline(OpPassManager &pm, bool outParams,
                              CPUNumerics numerics = CPUNumerics::IR);

/// The options every GPU pipeline adds to fp4train-quantize-pipeline's.
struct GPUPipelineOptions : public QuantizePipelineOptions {
  Option<GPUMemory> memory{
      *this, "memory", llvm::cl::desc("where kernels find their buffers"),
      llvm::cl::init(GPUMemory::Device),
      llvm::cl::values(
          clEnumValN(GPUMemory::Device, "device",
                     "device buffers, copies inserted where needed"),
          clEnumValN(GPUMemory::Unified, "unified",
                     "host buffers (unified memory, XNACK/HMM)"))};
};

/// Options of fp4train-rocm-pipeline: every option of
/// fp4train-quantize-pipeline, the memory model, the chip, the device code
/// format and the scaled MFMA choice.
struct ROCmPipelineOptions : public GPUPipelineOptions {
  Option<GPUChip> chip{*this, "chip", llvm::cl::desc("AMD chip"),
                       llvm::cl::init(GPUChip::GFX950),
                       getGPUChipValues(GPUVendor::AMD)};
  Option<ROCmFormat> format{
      *this, "format", llvm::cl::desc("device code format"),
      llvm::cl::init(ROCmFormat::ISA),
      llvm::cl::values(
          clEnumValN(ROCmFormat::ISA, "isa", "assembly text"),
          clEnumValN(ROCmFormat::Binary, "bin", "HSA code object (HSACO)"),
          clEnumValN(ROCmFormat::LLVM, "llvm", "LLVM IR"))};
  Option<MFMAOption> mfma{*this, "mfma", llvm::cl::desc("scaled MFMA form"),
                          llvm::cl::init(MFMAOption::Auto),
                          getMFMAOptionValues()};
  Option<MFMATileOption> tile{
      *this, "tile", llvm::cl::desc("GEMM workgroup tile"),
      llvm::cl::init(MFMATileOption::Auto), getMFMATileOptionValues()};
};

/// The quantize pipeline, then fp4train-to-amdgpu (scaled_matmul as gfx950
/// kernels), fp4train-expand for the fp4train ops that stay on the host,
/// bufferization, kernel outlining, device lowering to ROCDL and host
/// lowering to the LLVM dialect, and gpu-module-to-binary.
void buildROCmPipeline(OpPassManager &pm, const ROCmPipelineOptions &options);

/// The first half of buildROCmPipeline: the quantize pipeline,
/// fp4train-to-amdgpu, bufferization, kernel outlining and, inside the GPU
/// modules, amdgpu -> rocdl. Host code is on memrefs and kernels keep
/// structured control flow, with the scaled MFMAs and conversions as the
/// ROCDL intrinsics the hardware runs: the form the gfx950 emulator
/// (fp4train/Emulation/GPUEmulator.h) executes. buildROCmPipeline continues
/// from exactly this module, so the emulator runs the kernels llc compiles.
/// The `format` option is ignored.
void buildROCmKernelPipeline(OpPassManager &pm,
                             const ROCmPipelineOptions &options);

/// Options of fp4train-cuda-pipeline: every option of
/// fp4train-quantize-pipeline, the chip, the device code format and the
/// CUDA toolkit that `format=bin` takes ptxas from.
struct CUDAPipelineOptions : public GPUPipelineOptions {
  Option<GPUChip> chip{*this, "chip", llvm::cl::desc("NVIDIA chip"),
                       llvm::cl::init(GPUChip::SM120a),
                       getGPUChipValues(GPUVendor::NVIDIA)};
  Option<CUDAFormat> format{
      *this, "format", llvm::cl::desc("device code format"),
      llvm::cl::init(CUDAFormat::ISA),
      llvm::cl::values(
          clEnumValN(CUDAFormat::ISA, "isa", "PTX"),
          clEnumValN(CUDAFormat::Binary, "bin", "cubin (runs ptxas)"),
          clEnumValN(CUDAFormat::LLVM, "llvm", "LLVM IR"))};
  Option<std::string> toolkit{
      *this, "toolkit",
      llvm::cl::desc("CUDA toolkit root holding bin/ptxas (format=bin)")};
  Option<NVVMStochasticRounding> sr{
      *this, "sr",
      llvm::cl::desc("stochastic rounding of the quantize kernels (hardware: "
                     "8 random bits per element, not [SR1])"),
      llvm::cl::init(NVVMStochasticRounding::Software),
      getNVVMStochasticRoundingValues()};
  Option<unsigned> gemmWorkgroups{
      *this, "gemm-workgroups",
      llvm::cl::desc("workgroups of the persistent tcgen05 GEMM (sm_100a, "
                     "sm_103a; 0: 148, one per SM of a B200)"),
      llvm::cl::init(0)};
  Option<bool> gemmCtaPair{
      *this, "gemm-cta-pair",
      llvm::cl::desc("the tcgen05 GEMM on CTA pairs (sm_100a, sm_103a): "
                     "clusters of two workgroups compute 256 x 128 tiles "
                     "with cta_group::2 MMAs"),
      llvm::cl::init(false)};
};

/// The quantize pipeline, then fp4train-to-nvvm (GEMM, quantize and
/// Hadamard kernels; other fp4train ops expanded on the host), the GPU back
/// half shared with the ROCm pipeline, device lowering to NVVM with the
/// chip's PTX version, a check that no kernel calls libdevice, host
/// lowering to the LLVM dialect, and gpu-module-to-binary.
void buildCUDAPipeline(OpPassManager &pm, const CUDAPipelineOptions &options);

/// The first half of buildCUDAPipeline: the module the warp-level emulator
/// (fp4train/Emulation) executes, host code on memrefs and kernels with
/// structured control flow and the NVVM MMA/conversion ops.
/// buildCUDAPipeline continues from exactly this module. The `format` and
/// `toolkit` options are ignored.
void buildCUDAKernelPipeline(OpPassManager &pm,
                             const CUDAPipelineOptions &options);

/// Registers the fp4train pipelines with the global pass registry.
void registerPipelines();

} // namespace mlir::fp4train

#endif // FP4TRAIN_PIPELINES_PIPELINES_H
