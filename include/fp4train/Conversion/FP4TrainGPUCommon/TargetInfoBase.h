//===- TargetInfoBase.h - GPU primitives the kernel builders use -*- C++ -*-===//
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

#include "mlir/IR/Builders.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"
#include "mlir/IR/Value.h"

#include <optional>

namespace mlir::fp4train {

/// The primitives of one GPU chip that the shared kernel builders need.
class TargetInfoBase {
public:
  virtual ~TargetInfoBase();

  /// The chip as the user spelled it (gfx950, sm_120a), for diagnostics.
  virtual StringRef getChip() const = 0;
  /// Lanes per subgroup (AMD wave, NVIDIA warp).
  virtual int64_t getSubgroupSize() const = 0;
  /// Number of 4-byte shared-memory banks (row padding is chosen from it).
  virtual int64_t getSharedMemoryBanks() const = 0;

  /// `#gpu.address_space<workgroup>`: shared memory (LDS) buffers.
  Attribute getSharedMemorySpace(MLIRContext *context) const;
  /// A barrier of the whole workgroup (threads and shared memory).
  virtual void buildBarrier(OpBuilder &b, Location loc) const;
  /// Lane within its subgroup, and subgroup within the workgroup, of the
  /// linear thread id `tid` (one-dimensional workgroups).
  Value getLaneId(OpBuilder &b, Location loc, Value tid) const;
  Value getSubgroupId(OpBuilder &b, Location loc, Value tid) const;

  /// The scaled-convert hook of the quantize kernels: the element codes
  /// (i8, one per element, in the low bits) of `scaled`, values already
  /// multiplied by their block's element scale ([MX1] 2^-e, [NV1] enc) and
  /// clamped where the rule clamps, rounded to nearest even with saturation
  /// to the finite range (`codecs::encodeRNESat`). `scaled` holds f32
  /// vectors of 4. Return std::nullopt to let the builder use the exact
  /// integer recipe in software; a target returns hardware conversions only
  /// where they compute the same bits.
  virtual std::optional<SmallVector<Value>>
  buildConvertRNE(ImplicitLocOpBuilder &b, Type element,
                  ArrayRef<Value> scaled) const;
};

} // namespace mlir::fp4train

#endif // FP4TRAIN_CONVERSION_FP4TRAINGPUCOMMON_TARGETINFOBASE_H
