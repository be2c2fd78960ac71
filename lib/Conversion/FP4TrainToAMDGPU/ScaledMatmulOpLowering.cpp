//===- ScaledMatmulOpLowering.cpp - scaled_matmul to a gfx950 kernel ------===//
//
// fp4train.scaled_matmul with MX operands becomes the shared GEMM skeleton's
// kernel (FP4TrainGPUCommon/GemmKernel.h) on amdgpu.scaled_mfma: 256
// threads = 4 waves in a 2x2 grid, each owning 2x2 (32x32x64) or 2x2 / 4x4
// (16x16x128) MFMA tiles, so a workgroup computes 128x128 or 64x64 of C
// (docs/amdgpu.md has the picture). Each lane reads its operand fragment
// (one 32-element block: 16 bytes of FP4 or 32 bytes of FP8) and that
// block's scale byte from LDS (ScaledMfma.cpp). With the bf16 epilogue, B^T
// rows are fetched in a permuted order so that a lane's two N tiles hold
// adjacent columns: each lane converts a pair with one truncf and stores
// one 32-bit word.
//
//===----------------------------------------------------------------------===//

#include "CDNA4TargetInfo.h"

#include "fp4train/Conversion/FP4TrainGPUCommon/KernelBuilders.h"
#include "fp4train/Conversion/FP4TrainToAMDGPU/FP4TrainToAMDGPU.h"
#include "fp4train/Dialect/FP4Train/IR/FP4TrainOps.h"

using namespace mlir;
using namespace mlir::fp4train;

ScaledMFMAConfig
mlir::fp4train::selectScaledMFMAConfig(const ScaledMFMAOptions &options,
                                       int64_t batch, int64_t m, int64_t n) {
  // Compute units of an MI355X: below one 128x128 workgroup per CU, the
  // 4x finer 64x64 grid of the 16x16x128 form keeps more CUs busy and wastes
  // less on partial edge tiles. Above, 128x128 tiles give each wave 4x more
  // MFMAs per K step to hide the staging behind (docs/amdgpu.md).
  constexpr int64_t kComputeUnits = 256;
  int64_t tiles128 =
      batch * llvm::divideCeil(m, 128) * llvm::divideCeil(n, 128);
  bool large = tiles128 >= kComputeUnits;
  ScaledMFMAConfig config;
  if (options.kind)
    config.kind = *options.kind;
  else if (options.tile)
    config.kind = *options.tile == 64 || !large ? ScaledMFMAKind::M16N16K128
                                                : ScaledMFMAKind::M32N32K64;
  else
    config.kind =
        large ? ScaledMFMAKind::M32N32K64 : ScaledMFMAKind::M16N16K128;
  if (options.tile)
    config.tile = *options.tile;
  else
    config.tile = config.kind == ScaledMFMAKind::M32N32K64 || large ? 128 : 64;
  return config;
}

namespace {

struct ScaledMatmulOpLowering : public OpConversionPattern<ScaledMatmulOp> {
  ScaledMatmulOpLowering(TypeConverter &converter, MLIRContext *context,
                         const GPUTarget &target, ScaledMFMAOptions mfma)
      : OpConversionPattern(converter, context, /*benefit=*/2), target(target),
        mfma(mfma) {}

  LogicalResult
  matchAndRewrite(ScaledMatmulOp op, OneToNOpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    // checkFP4TrainAMDGPUSupport reports these with a message first.
    if (target.mma != GPUMMAKind::ScaledMFMA)
      return rewriter.notifyMatchFailure(op, "chip has no scaled MFMA");
    for (ScaledTensorType type : {op.getLhs().getType(), op.getRhs().getType()})
      if (!isa<Float8E8M0FNUType>(type.getScaleType()) ||
          type.getHasGlobalScale() || type.is2DBlocked())
        return rewriter.notifyMatchFailure(op, "not an MX operand");

    auto accType = cast<RankedTensorType>(op.getAcc().getType());
    ArrayRef<int64_t> shape = accType.getShape();
    int64_t batch = 1;
    for (int64_t d : shape.drop_back(2))
      batch *= d;
    ScaledMFMAConfig config = selectScaledMFMAConfig(
        mfma, batch, shape[shape.size() - 2], shape.back());
    CDNA4TargetInfo info(target);
    ScaledMfmaTargetInfo mfmaInfo(info, config);
    return lowerScaledMatmulToKernel(op, adaptor.getLhs(), adaptor.getRhs(),
                                     adaptor.getAcc().front(), mfmaInfo,
                                     rewriter);
  }

  const GPUTarget &target;
  ScaledMFMAOptions mfma;
};

} // namespace

void mlir::fp4train::populateFP4TrainToAMDGPUConversionPatterns(
    TypeConverter &converter, RewritePatternSet &patterns,
    const GPUTarget &target, ScaledMFMAOptions mfma) {
  patterns.add<ScaledMatmulOpLowering>(converter, patterns.getContext(), target,
                                       mfma);
  populateFP4TrainQuantizeToAMDGPUPatterns(converter, patterns, target);
  if (target.mma == GPUMMAKind::ScaledMFMA)
    populateHadamardKernelPatterns(converter, patterns);
}

LogicalResult mlir::fp4train::checkFP4TrainAMDGPUSupport(
    Operation *root, const GPUTarget &target, ScaledMFMAOptions mfma) {
  bool ok = true;
  CDNA4TargetInfo info(target);
  root->walk([&](ScaledMatmulOp op) {
    if (target.mma != GPUMMAKind::ScaledMFMA) {
      op.emitOpError("needs gfx950 (CDNA4): chip ")
          << target.name
          << " has no block-scaled MFMA (v_mfma_scale_f32_*_f8f6f4)";
      ok = false;
      return;
    }
    for (ScaledTensorType type :
         {op.getLhs().getType(), op.getRhs().getType()}) {
      if (type.getFormat() != Format::nvfp4)
        continue;
      op.emitOpError("has an NVFP4 operand ")
          << type << ", which " << target.name
          << " cannot run natively: its scaled MFMA takes E8M0 scales of "
             "32-element blocks, not NVFP4's E4M3 scales of 16-element "
             "blocks; use an MX recipe (mxfp4, mxfp8) for gfx950";
      ok = false;
      return;
    }
    ArrayRef<int64_t> shape = op.getAcc().getType().getShape();
    int64_t batch = 1;
    for (int64_t d : shape.drop_back(2))
      batch *= d;
    ScaledMfmaTargetInfo mfmaInfo(
        info, selectScaledMFMAConfig(mfma, batch, shape[shape.size() - 2],
                                     shape.back()));
    ok &= succeeded(checkScaledMatmulKernelGrid(op, mfmaInfo));
  });
  return success(ok);
}
