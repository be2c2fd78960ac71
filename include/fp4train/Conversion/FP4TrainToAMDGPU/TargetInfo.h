//===- TargetInfo.h - What a block-scaled GEMM kernel needs -----*- C++ -*-===//
//
// The target-specific part of the block-scaled GEMM kernel builder: the MMA
// instruction, its per-lane operand and accumulator layouts, and the
// subgroup size. The builder (tiling, LDS staging, K loop, bounds, epilogue)
// only talks to this interface, so that a later NVVM lowering can reuse it by
// providing its own implementation.
//
//===----------------------------------------------------------------------===//

#ifndef FP4TRAIN_CONVERSION_FP4TRAINTOAMDGPU_TARGETINFO_H
#define FP4TRAIN_CONVERSION_FP4TRAINTOAMDGPU_TARGETINFO_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/Value.h"

#include <utility>

namespace mlir {
namespace fp4train {

/// One block-scaled MMA instruction as seen by the kernel builder:
/// `D[m x n] = C + sum_k A[m x k] * B[k x n]`, operands blocked along K in
/// blocks of `blockSize` elements with one scale per (row, block).
///
/// Operand layout contract: each lane holds exactly one K block (all
/// `blockSize` elements) of one row of A (resp. one column of B, i.e. one row
/// of the K-major B^T), together with that block's scale. The builder stages
/// K-major tiles, so a lane's fragment is one contiguous read.
class BlockScaledMMATargetInfo {
public:
  virtual ~BlockScaledMMATargetInfo() = default;

  /// Lanes per subgroup (wave).
  virtual int64_t getSubgroupSize() const = 0;
  /// The instruction's M, N and K.
  virtual int64_t getM() const = 0;
  virtual int64_t getN() const = 0;
  virtual int64_t getK() const = 0;
  /// Elements per scale block along K.
  virtual int64_t getBlockSize() const { return 32; }

  /// (row of A, or row of B^T, within the instruction tile; K block within
  /// the instruction's K) of the fragment held by `lane`.
  virtual std::pair<Value, Value> getOperandPosition(OpBuilder &b,
                                                     Location loc,
                                                     Value lane) const = 0;
  /// Number of f32 accumulator values each lane holds.
  virtual int64_t getAccumulatorLength() const = 0;
  /// (row, column) in the instruction tile of accumulator value `index` of
  /// `lane`.
  virtual std::pair<Value, Value>
  getAccumulatorPosition(OpBuilder &b, Location loc, Value lane,
                         int64_t index) const = 0;

  /// Emits one MMA: `a`/`b` are the lane's fragments (vectors of
  /// `getBlockSize()` narrow floats), `scaleA`/`scaleB` its block scales,
  /// `acc` the accumulator vector. Returns the new accumulator.
  virtual Value buildMMA(OpBuilder &b, Location loc, Value a, Value scaleA,
                         Value b_, Value scaleB, Value acc) const = 0;
};

} // namespace fp4train
} // namespace mlir

#endif // FP4TRAIN_CONVERSION_FP4TRAINTOAMDGPU_TARGETINFO_H
