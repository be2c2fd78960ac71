//===- SM90TargetInfo.h - sm_89/sm_90a FP8 mma.sync -------------*- C++ -*-===//

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
  /// shfl.sync.bfly.b32 over the whole warp.
  Value buildShuffleXor(OpBuilder &b, Location loc, Value value,
                        int64_t laneMask) const override;
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
                           Value chunk, ValueRange table = {}) const override;
  void buildStepMMAs(OpBuilder &b, Location loc, const StagedTiles &tiles,
                     Value buffer, Value lane, Value rowA, Value rowB,
                     MutableArrayRef<Value> accs) const override;
};

/// [WG1] sm_90a: one wgmma.mma_async.m64n128k32 per 32-element block and
/// warpgroup, from shared memory through matrix descriptors (the staged
/// tiles in the 128-byte swizzle), D = P without accumulation, then the
/// same E8M0 scaling on the ordinary cores as the mma.sync kernel (the
/// wgmma D fragment of a warp is the m16n8 C fragment of its 16 rows for
/// each 8 columns). Two warpgroups per 128 x 128 tile. E8M0 formats only
/// (MXFP4, MXFP8, their mixes): NVFP4's 16-element blocks have no wgmma K.
class WgmmaFP8TargetInfo : public MmaSyncFP8TargetInfo {
public:
  using MmaSyncFP8TargetInfo::MmaSyncFP8TargetInfo;

  int64_t getM() const override { return 64; }
  int64_t getN() const override { return 128; }
  int64_t getK() const override { return 32; }
  GemmTiling getTiling() const override { return {2, 1, 1, 1}; }
  int64_t getSubgroupThreads() const override { return 128; }
  int64_t getAccumulatorLength() const override { return 64; }
  std::pair<Value, Value> getAccumulatorPosition(OpBuilder &b, Location loc,
                                                 Value lane,
                                                 int64_t index) const override;
  bool stagesSwizzledRows() const override { return true; }
  void buildStagingFence(OpBuilder &b, Location loc) const override;
  /// [WG2] MXFP4 x MXFP4: B^T's scales folded into its E4M3 staging.
  std::optional<ScaleFold>
  getScaleFold(const StagedTiles &tiles) const override;
  /// [WG5] The staged tiles of operands written as E4M3 ([WG4]) come by
  /// TMA (cp.async.bulk.tensor, 128-byte swizzle), completing on an
  /// mbarrier per buffer.
  bool copiesStagedTiles() const override { return true; }
  Value buildTileMap(OpBuilder &b, Location loc, Value codes,
                     int64_t boxRows) const override;
  void buildTileBarrierInit(OpBuilder &b, Location loc, Value memory,
                            Value offset) const override;
  void buildTileCopies(OpBuilder &b, Location loc, Value memory, Value barrier,
                       int64_t bytes, ArrayRef<TileCopy> copies) const override;
  void buildTileWait(OpBuilder &b, Location loc, Value memory, Value barrier,
                     Value parity) const override;
  void buildStepMMAs(OpBuilder &b, Location loc, const StagedTiles &tiles,
                     Value buffer, Value lane, Value rowA, Value rowB,
                     MutableArrayRef<Value> accs) const override;
};

/// [WG3] sm_90a NVFP4: one wgmma.mma_async.m64n128k16 f16 per 16-element
/// block and warpgroup on operands staged as f16 values E2M1 x UE4M3 (the
/// block scale applied as the codes are staged: exact in f16), so the
/// tensor core gives the block term sa·sb·P itself (exact f32, [GEMM1])
/// and T + term is one f32 add per accumulator. The staged rows are 256
/// bytes, two 128-byte swizzled tiles along K; no scale rows are staged.
class WgmmaF16TargetInfo : public WgmmaFP8TargetInfo {
public:
  using WgmmaFP8TargetInfo::WgmmaFP8TargetInfo;

  int64_t getK() const override { return 16; }
  /// E2M1 is staged as f16 values times their block scale.
  Type getStagedElementType(Type element) const override;
  bool stagesScaledValues() const override { return true; }
  Value convertStagedCodes(OpBuilder &b, Location loc, Type element,
                           Value chunk, ValueRange scales = {}) const override;
  std::optional<ScaleFold> getScaleFold(const StagedTiles &) const override {
    return std::nullopt;
  }
  void buildStepMMAs(OpBuilder &b, Location loc, const StagedTiles &tiles,
                     Value buffer, Value lane, Value rowA, Value rowB,
                     MutableArrayRef<Value> accs) const override;
};

/// True when the sm_90a wgmma kernel takes `lhs` x `rhs`: 32-element blocks
/// with E8M0 scales.
bool isWgmmaScaledMatmul(ScaledTensorType lhs, ScaledTensorType rhs);
/// True when the sm_90a f16 wgmma kernel ([WG3]) takes `lhs` x `rhs`:
/// NVFP4 (E2M1 in 16-element blocks with E4M3 scales, 1-D or 16 x 16).
bool isWgmmaF16ScaledMatmul(ScaledTensorType lhs, ScaledTensorType rhs);

} // namespace mlir::fp4train

#endif // FP4TRAIN_LIB_CONVERSION_FP4TRAINTONVVM_SM90TARGETINFO_H
