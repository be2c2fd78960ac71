//===- CDNA4TargetInfo.h - gfx950 scaled MFMA layouts -----------*- C++ -*-===//

#ifndef FP4TRAIN_LIB_CONVERSION_FP4TRAINTOAMDGPU_CDNA4TARGETINFO_H
#define FP4TRAIN_LIB_CONVERSION_FP4TRAINTOAMDGPU_CDNA4TARGETINFO_H

#include "fp4train/Conversion/FP4TrainToAMDGPU/FP4TrainToAMDGPU.h"
#include "fp4train/Conversion/FP4TrainToAMDGPU/TargetInfo.h"

namespace mlir::fp4train {

/// v_mfma_scale_f32_{32x32x64,16x16x128}_f8f6f4 on a 64-lane gfx950 wave,
/// emitted as amdgpu.scaled_mfma.
class CDNA4ScaledMFMATargetInfo : public BlockScaledMMATargetInfo {
public:
  explicit CDNA4ScaledMFMATargetInfo(ScaledMFMAKind kind) : kind(kind) {}

  int64_t getSubgroupSize() const override { return 64; }
  int64_t getM() const override { return is32() ? 32 : 16; }
  int64_t getN() const override { return getM(); }
  int64_t getK() const override { return is32() ? 64 : 128; }

  std::pair<Value, Value> getOperandPosition(OpBuilder &b, Location loc,
                                             Value lane) const override;
  int64_t getAccumulatorLength() const override { return is32() ? 16 : 4; }
  std::pair<Value, Value> getAccumulatorPosition(OpBuilder &b, Location loc,
                                                 Value lane,
                                                 int64_t index) const override;
  Value buildMMA(OpBuilder &b, Location loc, Value a, Value scaleA, Value b_,
                 Value scaleB, Value acc) const override;

private:
  bool is32() const { return kind == ScaledMFMAKind::M32N32K64; }
  ScaledMFMAKind kind;
};

} // namespace mlir::fp4train

#endif // FP4TRAIN_LIB_CONVERSION_FP4TRAINTOAMDGPU_CDNA4TARGETINFO_H
