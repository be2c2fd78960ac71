//===- HadamardKernel.h - The Hadamard kernel's builder ----------*- C++
//-*-===//
//
// The pieces of the Hadamard kernel (HadamardKernel.cpp) that the fused
// rotate-then-quantize kernels (HadamardQuantizeKernel.cpp) reuse: the view
// of a rotation as [outer, rows, n, inner], its launch, and the builder whose
// rotate() leaves every lane's rotated elements in registers ([H1], the
// operation order of the numerics library) for either the plain kernel's
// stores or the quantize stage of a fused kernel. Internal to
// FP4TrainGPUCommon.
//
//===----------------------------------------------------------------------===//

#ifndef FP4TRAIN_LIB_CONVERSION_FP4TRAINGPUCOMMON_HADAMARDKERNEL_H
#define FP4TRAIN_LIB_CONVERSION_FP4TRAINGPUCOMMON_HADAMARDKERNEL_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/Builders.h"

#include <optional>

namespace mlir::fp4train {
class HadamardOp;

namespace hadamard_kernel {

/// Threads per workgroup, and elements of a block each lane holds.
inline constexpr int64_t kThreads = 256;
inline constexpr int64_t kPerLane = 16;
/// Shared-memory row of one lane's 16 values, padded by one f32: with an odd
/// stride the lanes of a subgroup writing one column hit distinct banks.
inline constexpr int64_t kRowStride = kPerLane + 1;

/// How a rotation maps onto the kernel.
struct HadamardShape {
  int64_t n;
  /// The tensor as [outer, rows = D/n, n, inner].
  int64_t outer, rows, inner;
  int64_t numElements;

  /// Lanes per block, blocks per workgroup.
  int64_t lanesPerBlock() const { return n / kPerLane; }
  int64_t blocksPerGroup() const { return kThreads / lanesPerBlock(); }
  bool contiguous() const { return inner == 1; }
  /// Blocks along the lanes of the grid: all blocks (contiguous) or the
  /// inner positions of one (outer, row) (strided).
  int64_t laneBlocks() const { return contiguous() ? outer * rows : inner; }
  int64_t groupsX() const {
    return llvm::divideCeil(laneBlocks(), blocksPerGroup());
  }
  /// f32 words of the phase-2 exchange buffer (0: no exchange, n = 16).
  int64_t exchangeWords() const {
    return lanesPerBlock() > 1 ? kThreads * kRowStride : 0;
  }
};

std::optional<HadamardShape> getHadamardShape(HadamardOp op);

/// The rotation's sign vector (null for `none`) as a read-only buffer, built
/// by the expansion's buildHadamardSigns.
Value getSignsBuffer(OpBuilder &b, Location loc, HadamardOp op, Value seed,
                     Value step);

/// The launch of a rotation kernel of `shape` (grid and thread shape of the
/// table in docs/amdgpu.md, "Hadamard kernel") with one f32 workgroup buffer
/// of `sharedWords` (none when 0), then `extraShared` buffers.
gpu::LaunchOp createHadamardLaunch(OpBuilder &b, Location loc,
                                   const HadamardShape &shape,
                                   int64_t sharedWords,
                                   TypeRange extraShared = {});

/// The Hadamard kernel of `op` (of isHadamardKernelShape) on its converted
/// operands; returns the rotated tensor.
Value buildHadamardKernel(OpBuilder &b, Location loc, HadamardOp op,
                          Value input, Value seed, Value step);

/// The rotated elements of one lane, in registers.
struct RotatedLane {
  /// Register r = i * run + lo holds element runStarts[i] + lo of the
  /// lane's block.
  SmallVector<Value> x;
  SmallVector<Value> runStarts;
  int64_t run;
  /// The lane's block within its workgroup and the linear thread id.
  Value groupBlock, tid;
  /// Offset of element 0 of the lane's block in the tensor (the block's
  /// element k lies at base + k * inner).
  Value base;
  /// Whether the lane's block exists (null when every lane's does): lanes
  /// past the end compute the last block and must not store.
  Value inRange;
};

/// Builds the Hadamard kernel's body on an f32 tensor or (in fused kernels)
/// the bf16/f16 tensor that is extended to it.
class HadamardKernelBuilder {
public:
  HadamardKernelBuilder(OpBuilder &b, Location loc, const HadamardShape &shape,
                        Value input, Value signs, bool inverse)
      : b(b), loc(loc), s(shape), input(input), signs(signs), inverse(inverse) {
  }

  /// The Hadamard kernel: rotate(), then the stores to `output`.
  void build(gpu::LaunchOp launch, Value output);
  /// The lane's loads and the whole [H1] rotation (phase-2 exchange through
  /// the launch's first workgroup buffer), ending with the lane's rotated
  /// elements in registers.
  RotatedLane rotate(gpu::LaunchOp launch);

  /// Elements [offset, offset + count) of a 1-D memref as f32 scalars (a
  /// bf16/f16 memref's extended, exactly), read with vector loads of up to 4
  /// elements (declared naturally aligned when `aligned`: the data buffers,
  /// whose offsets are multiples of the width).
  SmallVector<Value> loadRun(Value memref, Value offset, int64_t count,
                             bool aligned);
  /// Stores `values` at [offset, ...) of `memref`, vectors of up to 4
  /// (declared naturally aligned when `aligned`).
  void storeRun(ArrayRef<Value> values, Value memref, Value offset,
                bool aligned);

  /// One element of a memref, as an f32.
  Value load(Value memref, Value offset);
  /// `v` (f32 or a vector of them) extended to f32.
  Value toF32(Value v);
  Value index(int64_t v);
  /// x + y and x * c, folding constants.
  Value add(Value x, Value y);
  Value mul(Value x, int64_t c);

private:
  /// The element k (an index) of the lane's block in the input/output.
  Value elementOffset(Value k);
  /// `stages` butterfly stages on the lane's registers `x`: stage t pairs
  /// registers r and r + (registerStride << t), the element pair
  /// (i, i + h) of the transform's next stage h.
  void butterflies(SmallVectorImpl<Value> &x, int64_t registerStride,
                   int64_t stages);

  OpBuilder &b;
  Location loc;
  const HadamardShape &s;
  Value input, signs;
  bool inverse;
  Value base;
};

} // namespace hadamard_kernel
} // namespace mlir::fp4train

#endif // FP4TRAIN_LIB_CONVERSION_FP4TRAINGPUCOMMON_HADAMARDKERNEL_H
