//===- MmaSyncTargetInfo.h - The warp-level mma.sync GEMM tiling -*- C++
//-*-===//
//
// The warp-level m16n8 mma.sync tiling the sm_120a and sm_90a GEMMs share:
// 8 warps in a 2 (M) x 4 (N) grid, each 4 x 4 instruction tiles of 16 x 8,
// f32 C/D four per lane with values 2p, 2p + 1 in adjacent columns.
//
//===----------------------------------------------------------------------===//

#ifndef FP4TRAIN_LIB_CONVERSION_FP4TRAINTONVVM_MMASYNCTARGETINFO_H
#define FP4TRAIN_LIB_CONVERSION_FP4TRAINTONVVM_MMASYNCTARGETINFO_H

#include "fp4train/Conversion/FP4TrainGPUCommon/GemmKernel.h"
#include "fp4train/Conversion/FP4TrainGPUCommon/TargetInfoBase.h"

namespace mlir::fp4train {

/// A GEMM on m16n8 mma.sync tiles (see the file comment); the target gives
/// K and the MMAs of a staged step.
class MmaSyncTargetInfo : public BlockScaledMMATargetInfo {
public:
  explicit MmaSyncTargetInfo(const TargetInfoBase &target) : target(target) {}

  const TargetInfoBase &getTarget() const override { return target; }
  int64_t getM() const override { return 16; }
  int64_t getN() const override { return 8; }
  GemmTiling getTiling() const override { return {2, 4, 4, 4}; }
  int64_t getAccumulatorLength() const override { return 4; }
  std::pair<Value, Value> getAccumulatorPosition(OpBuilder &b, Location loc,
                                                 Value lane,
                                                 int64_t index) const override;
  bool hasAdjacentColumnPairs() const override { return true; }

private:
  const TargetInfoBase &target;
};

} // namespace mlir::fp4train

#endif // FP4TRAIN_LIB_CONVERSION_FP4TRAINTONVVM_MMASYNCTARGETINFO_H
