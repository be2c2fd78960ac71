//===- CDNA4TargetInfo.h - gfx950 primitives and scaled MFMAs ---*- C++ -*-===//

#ifndef FP4TRAIN_LIB_CONVERSION_FP4TRAINTOAMDGPU_CDNA4TARGETINFO_H
#define FP4TRAIN_LIB_CONVERSION_FP4TRAINTOAMDGPU_CDNA4TARGETINFO_H

#include "fp4train/Conversion/FP4TrainGPUCommon/GemmKernel.h"
#include "fp4train/Conversion/FP4TrainGPUCommon/TargetInfoBase.h"
#include "fp4train/Conversion/FP4TrainToAMDGPU/FP4TrainToAMDGPU.h"

namespace mlir::fp4train {

/// The primitives of a CDNA4 (gfx950) chip: 64-lane waves, LDS.
class CDNA4TargetInfo : public TargetInfoBase {
public:
  using TargetInfoBase::TargetInfoBase;
  /// v_cvt_scalef32_pk_{fp4,fp8,bf8}_f32 (ScaledConvert.cpp).
  std::optional<SmallVector<Value>>
  buildConvertRNE(ImplicitLocOpBuilder &b, Type element,
                  const ScaledBlock &block) const override;
  /// v_cvt_scalef32_sr_pk_fp4_f32 (ScaledConvert.cpp).
  std::optional<SmallVector<Value>>
  buildConvertStochasticE2M1(ImplicitLocOpBuilder &b, const ScaledBlock &block,
                             ArrayRef<Value> words) const override;
  /// MX formats only: the GEMM cannot take NVFP4 on gfx950, so its
  /// quantization has no kernel either.
  bool isQuantizeOnTarget(QuantizeOp op) const override;
};

/// v_mfma_scale_f32_{32x32x64,16x16x128}_f8f6f4 on 64-lane waves, emitted as
/// amdgpu.scaled_mfma, in a 2x2 grid of waves with config.tile / 2 / M
/// instruction tiles per wave and dimension (128x128 or 64x64 workgroup
/// tiles).
class ScaledMfmaTargetInfo : public BlockScaledMMATargetInfo {
public:
  ScaledMfmaTargetInfo(const CDNA4TargetInfo &target, ScaledMFMAConfig config)
      : target(target), kind(config.kind),
        repeats(config.tile / 2 / (is32() ? 32 : 16)) {}

  const TargetInfoBase &getTarget() const override { return target; }
  int64_t getM() const override { return is32() ? 32 : 16; }
  int64_t getN() const override { return getM(); }
  int64_t getK() const override { return is32() ? 64 : 128; }
  GemmTiling getTiling() const override { return {2, 2, repeats, repeats}; }
  int64_t getAccumulatorLength() const override { return is32() ? 16 : 4; }
  std::pair<Value, Value> getAccumulatorPosition(OpBuilder &b, Location loc,
                                                 Value lane,
                                                 int64_t index) const override;
  bool hasAdjacentColumnPairs() const override { return false; }
  /// 32x32x64: lane L reads blocks L / 32 and L / 32 + 2 of a step, staged
  /// as [0, 2, 1, 3] so that they are one 16-bit load (ScaledMfma.cpp).
  SmallVector<int64_t>
  getStagedScaleOrder(int64_t blocksPerStep) const override;
  void buildStepMMAs(OpBuilder &b, Location loc, const StagedTiles &tiles,
                     Value buffer, Value lane, Value rowA, Value rowB,
                     MutableArrayRef<Value> accs) const override;

private:
  bool is32() const { return kind == ScaledMFMAKind::M32N32K64; }
  const CDNA4TargetInfo &target;
  ScaledMFMAKind kind;
  int64_t repeats;
};

} // namespace mlir::fp4train

#endif // FP4TRAIN_LIB_CONVERSION_FP4TRAINTOAMDGPU_CDNA4TARGETINFO_H
