//===- FP4TrainToAMDGPU.cpp - The fp4train-to-amdgpu pass -----------------===//
//
// Takes the chip's row of the table of targets (fp4train/Target), reports
// every op the chip cannot run with a message naming chip and format, then
// runs one conversion with the 1:N type conversion of fp4train-expand:
// scaled_matmul and the MX quantize ops (RNE, or SR to E2M1) blocked along
// the last dimension (isQuantizeOnGPU) and the static-shaped hadamard ops
// (isHadamardKernelShape) become GPU kernels (a quantize of a rotation along
// its blocks one fused kernel), and the other fp4train ops (other
// quantizes, dequantize, pack/unpack/transpose) get fp4train-expand's exact
// patterns, i.e. they run on the host. One conversion keeps the i8 codes and
// scales flowing between the two without casts back to the narrow float
// types.
//
//===----------------------------------------------------------------------===//

#include "fp4train/Conversion/FP4TrainToAMDGPU/FP4TrainToAMDGPU.h"

#include "fp4train/Conversion/FP4TrainGPUCommon/KernelBuilders.h"

#include "fp4train/Conversion/FP4TrainCommon/TypeConversion.h"
#include "fp4train/Conversion/Passes.h"
#include "fp4train/Dialect/FP4Train/IR/FP4TrainOps.h"

#include "mlir/Dialect/AMDGPU/IR/AMDGPUDialect.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/ROCDLDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

namespace mlir::fp4train {
#define GEN_PASS_DEF_FP4TRAINTOAMDGPU
#include "fp4train/Conversion/Passes.h.inc"
} // namespace mlir::fp4train

using namespace mlir;
using namespace mlir::fp4train;

namespace {

struct FP4TrainToAMDGPUPass
    : public fp4train::impl::FP4TrainToAMDGPUBase<FP4TrainToAMDGPUPass> {
  using Base::Base;

  void runOnOperation() override {
    Operation *root = getOperation();
    const GPUTarget &target = getGPUTarget(chip);
    if (target.vendor != GPUVendor::AMD) {
      root->emitError("fp4train-to-amdgpu: ")
          << target.name << " is not an AMD chip (one of "
          << getGPUChipNames(GPUVendor::AMD) << ")";
      return signalPassFailure();
    }
    ScaledMFMAOptions kind = getScaledMFMAOptions(mfma, tile);
    if (kind.tile == 64 && kind.kind == ScaledMFMAKind::M32N32K64) {
      root->emitError("fp4train-to-amdgpu: tile=64 needs mfma=16x16x128 "
                      "(a 64x64 tile is one 32x32x64 instruction per wave; "
                      "32x32x64 kernels use 128x128 tiles)");
      return signalPassFailure();
    }
    if (failed(checkFP4TrainAMDGPUSupport(root, target, kind)))
      return signalPassFailure();

    // The GPU patterns outrank fp4train-expand's scaled_matmul and quantize
    // patterns; the support check above guarantees the GEMM one applies to
    // every scaled_matmul, the quantize one takes the ops of its rule.
    if (failed(applyFP4TrainGPUConversion(
            root, [&](TypeConverter &converter, RewritePatternSet &patterns) {
              populateFP4TrainToAMDGPUConversionPatterns(converter, patterns,
                                                         target, kind);
            })))
      signalPassFailure();
  }
};

} // namespace
