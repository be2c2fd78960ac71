//===- SM90TargetInfo.h - sm_89/sm_90a primitives and FP8 mma.sync -*- C++
//-*-===//

#ifndef FP4TRAIN_LIB_CONVERSION_FP4TRAINTONVVM_SM90TARGETINFO_H
#define FP4TRAIN_LIB_CONVERSION_FP4TRAINTONVVM_SM90TARGETINFO_H

#include "MmaSyncTargetInfo.h"

namespace mlir::fp4train {

/// The primitives of a chip with FP8 but no FP4 hardware (sm_89, sm_90a):
/// cvt.rn.satfinite.e4m3x2.f32 for the RNE E4M3
/// encode; E2M1 and E5M2 codes and [SR1] take the shared integer recipes.
class SM90TargetInfo : public TargetInfoBase {
public:
  using TargetInfoBase::TargetInfoBase;
  std::optional<SmallVector<Value>>
  buildConvertRNE(ImplicitLocOpBuilder &b, Type element,
                  const ScaledBlock &block) const override;
};

/// Block-scaled GEMM on the FP8 tensor cores without block scaling:
/// `mma.sync.aligned.m16n8k32.row.col.f32.{e4m3,e5m2}.{e4m3,e5m2}.f32` with
/// C = 0 gives one block's P (E2M1 codes widened to E4M3 as they are
/// staged; 16-element NVFP4 blocks take m16n8k16), and each block's
/// f32(sa·sb·P) is added to the f32
/// accumulators in increasing K order ([GEMM1]: one fma where the term is an
/// exact f32, which a warp-uniform vote establishes per K step for E8M0
/// scales, else three products and an add); 8 warps in a 2x4 grid with
/// 4x4 instruction tiles each: 128x128 workgroup tiles. MmaSyncFP8.cpp has
/// the layouts and the exactness argument.
class MmaSyncFP8TargetInfo : public MmaSyncTargetInfo {
public:
  explicit MmaSyncFP8TargetInfo(const SM90TargetInfo &target)
      : MmaSyncTargetInfo(target) {}

  /// The K of the m16n8k32 form; NVFP4's blocks take m16n8k16.
  int64_t getK() const override { return 32; }
  /// E2M1 is staged as E4M3 (the tensor cores take no FP4): widened once
  /// per workgroup as the codes go to shared memory.
  Type getStagedElementType(Type element) const override;
  Value convertStagedCodes(OpBuilder &b, Location loc, Type element,
                           Value chunk) const override;
  void buildStepMMAs(OpBuilder &b, Location loc, const StagedTiles &tiles,
                     Value buffer, Value lane, Value rowA, Value rowB,
                     MutableArrayRef<Value> accs) const override;
};

} // namespace mlir::fp4train

#endif // FP4TRAIN_LIB_CONVERSION_FP4TRAINTONVVM_SM90TARGETINFO_H
