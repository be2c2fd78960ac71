//===- ContractionLayout.h - K-major views of contraction operands -*- C++
//-*-===//
//
// Block-scaled GEMMs consume operands as `[batch..., rows, K]` (both blocked
// along the last dimension). These helpers move a linalg contraction's
// operands into that layout and its result back, with the linalg and tensor
// ops that later passes fold and fuse (transpose, broadcast, collapse/expand
// shape, pad, extract_slice).
//
//===----------------------------------------------------------------------===//

#ifndef FP4TRAIN_DIALECT_FP4TRAIN_TRANSFORMS_CONTRACTIONLAYOUT_H
#define FP4TRAIN_DIALECT_FP4TRAIN_TRANSFORMS_CONTRACTIONLAYOUT_H

#include "mlir/IR/AffineMap.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Value.h"
#include "llvm/ADT/ArrayRef.h"

namespace mlir {
namespace fp4train {

/// Iteration dimensions of a contraction grouped the way a GEMM sees one
/// operand: batch dimensions (kept), then two groups collapsed into one
/// dimension each (rows, then the inner dimension).
struct DimGroups {
  llvm::ArrayRef<unsigned> batch;
  llvm::ArrayRef<unsigned> rows;
  llvm::ArrayRef<unsigned> inner;
};

/// Returns `value`, read through the projected permutation `map` of a loop
/// nest with static `loopRanges`, as a tensor `[batch..., rows, inner]`:
/// transposed into group order, broadcast along batch dimensions it does
/// not index, and collapsed per group. `rows` and `inner` must be nonempty.
Value toGroupedLayout(OpBuilder &b, Location loc, Value value, AffineMap map,
                      llvm::ArrayRef<int64_t> loopRanges,
                      const DimGroups &groups);

/// The inverse of toGroupedLayout for a result indexed by the projected
/// permutation `map`: expands `[batch..., rows, inner]` and transposes it to
/// `map`'s dimension order.
Value fromGroupedLayout(OpBuilder &b, Location loc, Value value, AffineMap map,
                        llvm::ArrayRef<int64_t> loopRanges,
                        const DimGroups &groups);

/// Returns `value` zero-padded at the high end of `dim` to `size`.
Value padDimWithZeros(OpBuilder &b, Location loc, Value value, int64_t dim,
                      int64_t size);

/// Returns the leading `shape` of `value` (an extract_slice at offset zero),
/// or `value` when it already has that shape.
Value sliceToShape(OpBuilder &b, Location loc, Value value,
                   llvm::ArrayRef<int64_t> shape);

/// Returns `value` with its trailing two dimensions swapped.
Value transposeLastTwo(OpBuilder &b, Location loc, Value value);

/// Returns `value` with its element type converted to `elementType` by
/// arith.extf / arith.truncf on the tensor, or `value` when it matches.
Value castElements(OpBuilder &b, Location loc, Value value, Type elementType);

/// [NV1] The tensor amax of `value` as the quantize op computes it, as its
/// f32 bit pattern in a `tensor<i32>`: the integer max of the sign-cleared
/// f32 bit patterns (NaN > Inf > finite), exact and order independent. A
/// reduction over every dimension whose combiner is a max, so partitioning
/// it all-reduces the partial maxima.
Value buildTensorAmaxBits(OpBuilder &b, Location loc, Value value);

} // namespace fp4train
} // namespace mlir

#endif // FP4TRAIN_DIALECT_FP4TRAIN_TRANSFORMS_CONTRACTIONLAYOUT_H
