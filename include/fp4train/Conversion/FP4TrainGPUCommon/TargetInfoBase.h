//===- TargetInfoBase.h - GPU primitives the kernel builders use -*- C++
//-*-===//
//
// The target-neutral GPU kernel builders (block-scaled GEMM skeleton,
// Hadamard, quantize) talk to a chip only through this small interface of
// primitives, the way Triton's TargetInfoBase separates its shared lowering
// from the AMD and NVIDIA backends. What is genuinely per instruction (an
// MMA, its fragment loaders, a hardware conversion) lives with the target:
// FP4TrainToAMDGPU/ScaledMfma*.cpp, FP4TrainToNVVM/MmaSyncBlockScale*.cpp.
//
//===----------------------------------------------------------------------===//

#ifndef FP4TRAIN_CONVERSION_FP4TRAINGPUCOMMON_TARGETINFOBASE_H
#define FP4TRAIN_CONVERSION_FP4TRAINGPUCOMMON_TARGETINFOBASE_H

#include "fp4train/Target/GPUTarget.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"
#include "mlir/IR/Value.h"

#include <optional>

namespace mlir::fp4train {
class QuantizeOp;

/// The primitives of one GPU chip that the shared kernel builders need.
/// What a chip is (its name, subgroup size, limits) comes from its row of
/// the table of targets; a subclass adds the chip's instructions.
class TargetInfoBase {
public:
  explicit TargetInfoBase(const GPUTarget &target) : target(target) {}
  virtual ~TargetInfoBase();

  const GPUTarget &getTarget() const { return target; }
  /// The chip's name (gfx950, sm_120a), for diagnostics.
  StringRef getChip() const { return target.name; }
  /// Lanes per subgroup (AMD wave, NVIDIA warp).
  int64_t getSubgroupSize() const { return target.subgroupSize; }

  /// `#gpu.address_space<workgroup>`: shared memory (LDS) buffers.
  Attribute getSharedMemorySpace(MLIRContext *context) const;
  /// The most shared memory a kernel may declare statically; a kernel that
  /// needs more takes it as the launch's dynamic shared memory (CUDA: 48
  /// KiB, beyond which a launcher opts the kernel in to more, dynamically).
  int64_t getMaxStaticSharedBytes() const {
    return target.maxStaticSharedBytes;
  }
  /// A barrier of the whole workgroup (threads and shared memory).
  virtual void buildBarrier(OpBuilder &b, Location loc) const;
  /// The i32 `value` of lane (own lane ^ `laneMask`) of the subgroup, every
  /// lane taking part: gpu.shuffle xor, or the chip's own instruction.
  virtual Value buildShuffleXor(OpBuilder &b, Location loc, Value value,
                                int64_t laneMask) const;
  /// Lane within its subgroup, and subgroup within the workgroup, of the
  /// linear thread id `tid` (one-dimensional workgroups).
  Value getLaneId(OpBuilder &b, Location loc, Value tid) const;
  Value getSubgroupId(OpBuilder &b, Location loc, Value tid) const;

  /// One quantize block as the scaled-convert hooks see it: its elements
  /// `x` (f32 vectors of 4, in order), the E8M0 code of an MX block (i8;
  /// null for NVFP4), whether [MX1] floor scales may push |x * factor| past
  /// the largest element (RNE and SR then saturate), and `factor()`, which
  /// emits (once) the f32 element scale ([MX1] inverseE8M0(code), [NV1]
  /// enc) for targets that need it.
  struct ScaledBlock {
    ArrayRef<Value> x;
    Value mxScaleCode;
    bool floorScale;
    function_ref<Value()> factor;
  };

  /// The scaled-convert hook of the quantize kernels: the element codes of
  /// the block, those of the library's `encodeRNESat(x * factor)` (one f32
  /// product, then RNE with saturation to the finite range; NaN only occurs
  /// in [MX3] blocks, whose codes the kernel replaces). The result holds,
  /// per input vector, its four codes as the kernel stores them ([PK1]):
  /// FP8 one vector<4xi8>, one code per byte; E2M1 one vector<2xi8>, element
  /// 2j in the low nibble of byte j (packStoredE2M1Quad's layout), so that a
  /// conversion that produces packed nibbles hands them over as they are.
  /// Return std::nullopt to let the builder use the exact integer recipe in
  /// software; a target returns hardware conversions only where they
  /// compute the same bits.
  /// The E2M1 quad codes c0..c3 (i8, bits 3..0) as a vector<2xi8> of [PK1]
  /// bytes: c0 | c1 << 4, c2 | c3 << 4.
  static Value packStoredE2M1Quad(ImplicitLocOpBuilder &b,
                                  ArrayRef<Value> codes);
  virtual std::optional<SmallVector<Value>>
  buildConvertRNE(ImplicitLocOpBuilder &b, Type element,
                  const ScaledBlock &block) const;

  /// The [SR1] hook: the E2M1 codes of the library's
  /// `encodeE2M1Stochastic(x * factor, word)`, element i with `words[i]`
  /// (i32), as for buildConvertRNE. std::nullopt runs that recipe in
  /// software.
  virtual std::optional<SmallVector<Value>>
  buildConvertStochasticE2M1(ImplicitLocOpBuilder &b, const ScaledBlock &block,
                             ArrayRef<Value> words) const;

  /// The library's scaled values x * factor of `block` (vectors of 4 f32).
  static SmallVector<Value> scaleBlock(ImplicitLocOpBuilder &b,
                                       const ScaledBlock &block);

  /// Whether this chip runs `op` (of the shape isQuantizeKernelShape
  /// accepts) as a kernel; the rest stays on the host expansion.
  virtual bool isQuantizeOnTarget(QuantizeOp op) const;

private:
  const GPUTarget &target;
};

} // namespace mlir::fp4train

#endif // FP4TRAIN_CONVERSION_FP4TRAINGPUCOMMON_TARGETINFOBASE_H
