//===- FP4TrainToNVVM.h - Lower fp4train to NVIDIA Blackwell ----*- C++ -*-===//
//
// Lowers fp4train ops to GPU kernels for NVIDIA chips: scaled_matmul to the
// shared GEMM skeleton (FP4TrainGPUCommon/GemmKernel.h) on the warp-level
// block-scaled MMA of sm_120a (`mma.sync.aligned.m16n8k64 ... block_scale`,
// nvvm.mma.block_scale), on the FP8 mma.sync of sm_89 / sm_90a with the
// block scales applied per K block in f32, or to the tcgen05 kernel of
// sm_100a / sm_103a (`tcgen05.mma.cta_group::1 ... block_scale`, tensor
// memory, mbarrier pipeline); quantize and hadamard to the shared kernels
// with the chip's FP4/FP8 conversions. docs/nvvm.md has the fragment and
// scale layouts.
//
//===----------------------------------------------------------------------===//

#ifndef FP4TRAIN_CONVERSION_FP4TRAINTONVVM_FP4TRAINTONVVM_H
#define FP4TRAIN_CONVERSION_FP4TRAINTONVVM_FP4TRAINTONVVM_H

#include "fp4train/Support/EnumOption.h"
#include "fp4train/Target/GPUTarget.h"

#include "mlir/Transforms/DialectConversion.h"
#include "llvm/Support/CommandLine.h"

#include <string>

namespace mlir::fp4train {

/// How the quantize kernels round stochastically.
enum class NVVMStochasticRounding {
  /// [SR1] in software (Philox and the integer recipe): bit for bit the
  /// numerics library's result, on every chip.
  Software,
  /// cvt.rs.satfinite.e2m1x4.f32 (sm_100a / sm_103a) fed the top byte of
  /// each element's [SR1] word: 8 random bits per element, so not [SR1]
  /// (docs/nvvm.md, "sr=hardware").
  Hardware,
};

/// The values of the `sr` option of fp4train-to-nvvm and the CUDA
/// pipelines, defined once.
inline llvm::cl::ValuesClass getNVVMStochasticRoundingValues() {
  return llvm::cl::values(
      clEnumValN(NVVMStochasticRounding::Software, "software",
                 "[SR1] in software, every chip"),
      clEnumValN(NVVMStochasticRounding::Hardware, "hardware",
                 "cvt.rs (sm_100a / sm_103a), not [SR1]"));
}

} // namespace mlir::fp4train

FP4TRAIN_ENUM_OPTION_PARSER(mlir::fp4train::NVVMStochasticRounding)

namespace mlir::fp4train {

/// Adds the patterns lowering fp4train.scaled_matmul (MXFP4, NVFP4 with 1-D
/// or 16x16 blocks, MXFP8) to GPU kernels on `target` (an NVIDIA chip), the
/// quantize ops of isQuantizeKernelShape to the shared quantize kernel, the
/// hadamard ops of isHadamardKernelShape to the shared Hadamard kernel, and a
/// quantize of a hadamard along its blocks to the fused rotate-and-quantize
/// kernel (benefit 3, populateHadamardQuantizeKernelPatterns). `converter` is
/// fp4train-expand's 1:N type conversion. The other patterns have benefit 2,
/// over fp4train-expand's. Ops the chip cannot run are left alone: run
/// checkFP4TrainNVVMSupport first for the diagnostics. `sr` = Hardware
/// needs GPUTarget::hasStochasticE2M1Conversion (the caller checks).
/// `gemmWorkgroups` is the persistent tcgen05 GEMM's grid (0: one per SM of
/// a B200, 148); `gemmCtaPair` puts it on CTA pairs ([PAIR1] in
/// docs/nvvm.md).
void populateFP4TrainToNVVMConversionPatterns(
    TypeConverter &converter, RewritePatternSet &patterns,
    const GPUTarget &target,
    NVVMStochasticRounding sr = NVVMStochasticRounding::Software,
    unsigned gemmWorkgroups = 0, bool gemmCtaPair = false);

/// The CUDA toolkit whose bin/ptxas serializes device code: `option` when
/// given, else $CUDA_ROOT, $CUDA_HOME or $CUDA_PATH, else /usr/local/cuda.
std::string getCUDAToolkitPath(StringRef option);

/// Emits an error naming the chip and the format on every op under `root`
/// that populateFP4TrainToNVVMConversionPatterns cannot lower on `target`.
LogicalResult checkFP4TrainNVVMSupport(Operation *root,
                                       const GPUTarget &target);

} // namespace mlir::fp4train

#endif // FP4TRAIN_CONVERSION_FP4TRAINTONVVM_FP4TRAINTONVVM_H
