//===- BlackwellTargetInfo.h - Blackwell primitives, mma.sync -*- C++ -*-===//

#ifndef FP4TRAIN_LIB_CONVERSION_FP4TRAINTONVVM_BLACKWELLTARGETINFO_H
#define FP4TRAIN_LIB_CONVERSION_FP4TRAINTONVVM_BLACKWELLTARGETINFO_H

#include "MmaSyncTargetInfo.h"

namespace mlir::fp4train {

/// The primitives of a Blackwell chip (sm_100a, sm_103a, sm_120a, sm_121a):
/// cvt.rn.satfinite.{e2m1x2,e4m3x2}.f32 for the RNE
/// element encode; with `hardwareStochasticRounding` (sm_100a / sm_103a,
/// sr=hardware), cvt.rs.satfinite.e2m1x4.f32 for the stochastic one.
class BlackwellTargetInfo : public TargetInfoBase {
public:
  explicit BlackwellTargetInfo(const GPUTarget &target,
                               bool hardwareStochasticRounding = false)
      : TargetInfoBase(target),
        hardwareStochasticRounding(hardwareStochasticRounding) {}
  std::optional<SmallVector<Value>>
  buildConvertRNE(ImplicitLocOpBuilder &b, Type element,
                  const ScaledBlock &block) const override;
  std::optional<SmallVector<Value>>
  buildConvertStochasticE2M1(ImplicitLocOpBuilder &b, const ScaledBlock &block,
                             ArrayRef<Value> words) const override;

private:
  bool hardwareStochasticRounding;
};

/// The codes of cvt.rn.satfinite.{e2m1x2,e4m3x2}.f32 on the scaled inputs
/// x * factor of `block` (`element` f4E2M1FN or f8E4M3FN) in the form
/// TargetInfoBase::buildConvertRNE returns them: per input vector two
/// e2m1x2 bytes ([PK1] as they come) or four E4M3 codes.
SmallVector<Value>
buildCvtRNSatfinitePairs(ImplicitLocOpBuilder &b, Type element,
                         const TargetInfoBase::ScaledBlock &block);

/// `mma.sync.aligned.m16n8k64.row.col.kind::{mxf4,mxf4nvf4}.block_scale`
/// (E2M1 operands, scale_vec::2X UE8M0 or 4X UE4M3) or
/// `m16n8k32 ... kind::mxf8f6f4.block_scale.scale_vec::1X` (E4M3/E5M2
/// operands, UE8M0), emitted as nvvm.mma.block_scale, by 8 warps in a 2x4
/// grid with 4x4 instruction tiles each: 128x128 workgroup tiles.
class MmaSyncBlockScaleTargetInfo : public MmaSyncTargetInfo {
public:
  MmaSyncBlockScaleTargetInfo(const BlackwellTargetInfo &target, bool fp4)
      : MmaSyncTargetInfo(target), fp4(fp4) {}

  int64_t getK() const override { return fp4 ? 64 : 32; }
  void buildStepMMAs(OpBuilder &b, Location loc, const StagedTiles &tiles,
                     Value buffer, Value lane, Value rowA, Value rowB,
                     MutableArrayRef<Value> accs) const override;

private:
  /// E2M1 operands (m16n8k64), else 8-bit ones (m16n8k32).
  bool fp4;
};

} // namespace mlir::fp4train

#endif // FP4TRAIN_LIB_CONVERSION_FP4TRAINTONVVM_BLACKWELLTARGETINFO_H
