//===- SM90TargetInfo.h - sm_89/sm_90a primitives and FP8 mma.sync -*- C++ -*-===//

#ifndef FP4TRAIN_LIB_CONVERSION_FP4TRAINTONVVM_SM90TARGETINFO_H
#define FP4TRAIN_LIB_CONVERSION_FP4TRAINTONVVM_SM90TARGETINFO_H

#include "fp4train/Conversion/FP4TrainGPUCommon/GemmKernel.h"
#include "fp4train/Conversion/FP4TrainGPUCommon/TargetInfoBase.h"

#include <string>

namespace mlir::fp4train {

/// The primitives of a chip with FP8 but no FP4 hardware (sm_89, sm_90,
/// sm_90a): 32-lane warps and cvt.rn.satfinite.e4m3x2.f32 for the RNE E4M3
/// encode; E2M1 and E5M2 codes and [SR1] take the shared integer recipes.
class SM90TargetInfo : public TargetInfoBase {
public:
  explicit SM90TargetInfo(std::string chip) : chip(std::move(chip)) {}
  StringRef getChip() const override { return chip; }
  int64_t getSubgroupSize() const override { return 32; }
  std::optional<SmallVector<Value>>
  buildConvertRNE(ImplicitLocOpBuilder &b, Type element,
                  const ScaledBlock &block) const override;

private:
  std::string chip;
};

/// Block-scaled GEMM on the FP8 tensor cores without block scaling:
/// `mma.sync.aligned.m16n8k32.row.col.f32.{e4m3,e5m2}.{e4m3,e5m2}.f32` with
/// C = 0 gives one block's P (E2M1 codes widened to E4M3 in registers; for
/// 16-element NVFP4 blocks, one MMA per block with the other block's lanes
/// of B zeroed), and each block's f32(sa·sb·P) is added to the f32
/// accumulators in increasing K order ([GEMM1]); 8 warps in a 2x4 grid with
/// 4x4 instruction tiles each: 128x128 workgroup tiles. MmaSyncFP8.cpp has
/// the layouts and the exactness argument.
class MmaSyncFP8TargetInfo : public BlockScaledMMATargetInfo {
public:
  explicit MmaSyncFP8TargetInfo(const SM90TargetInfo &target)
      : target(target) {}

  const TargetInfoBase &getTarget() const override { return target; }
  int64_t getM() const override { return 16; }
  int64_t getN() const override { return 8; }
  int64_t getK() const override { return 32; }
  GemmTiling getTiling() const override { return {2, 4, 4, 4}; }
  int64_t getAccumulatorLength() const override { return 4; }
  std::pair<Value, Value> getAccumulatorPosition(OpBuilder &b, Location loc,
                                                 Value lane,
                                                 int64_t index) const override;
  bool hasAdjacentColumnPairs() const override { return true; }
  void buildStepMMAs(OpBuilder &b, Location loc, const StagedTiles &tiles,
                     Value buffer, Value lane, Value rowA, Value rowB,
                     MutableArrayRef<Value> accs) const override;

private:
  const SM90TargetInfo &target;
};

} // namespace mlir::fp4train

#endif // FP4TRAIN_LIB_CONVERSION_FP4TRAINTONVVM_SM90TARGETINFO_H
