//===- Utils.h - Shared helpers of the fp4train expansion -------*- C++ -*-===//
//
// Private to FP4TrainToStandard: the view of a blocked tensor in which every
// blocked dimension D (block B) is split into [D/B, B], so that blocks are
// reached with projected-permutation indexing maps only (block-level tensors
// simply drop the inner dimensions), and small builders for linalg on
// tensors.
//
//===----------------------------------------------------------------------===//

#ifndef FP4TRAIN_LIB_CONVERSION_FP4TRAINTOSTANDARD_UTILS_H
#define FP4TRAIN_LIB_CONVERSION_FP4TRAINTOSTANDARD_UTILS_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Utils/ReshapeOpsUtils.h"
#include "mlir/IR/AffineMap.h"
#include "mlir/IR/Builders.h"

namespace mlir::fp4train {

/// A tensor shape with each blocked dimension split in [outer, inner].
struct BlockedView {
  SmallVector<int64_t> shape;
  SmallVector<int64_t> expandedShape;
  /// For each original dimension, its expanded dimensions.
  SmallVector<ReassociationIndices> reassociation;
  /// Expanded dimensions that run inside a block.
  SmallVector<bool> isInner;

  BlockedView(ArrayRef<int64_t> shape, ArrayRef<int64_t> blockShape);

  int64_t getExpandedRank() const { return expandedShape.size(); }
  /// Shape of the block-level tensor (the scales): the outer dimensions.
  SmallVector<int64_t> getBlockShape() const;
  /// Identity over the expanded dimensions.
  AffineMap getElementMap(MLIRContext *context) const;
  /// Expanded dimensions -> block-level dimensions (inner ones dropped).
  AffineMap getBlockMap(MLIRContext *context) const;
  /// parallel for outer dimensions, `innerKind` for inner ones.
  SmallVector<utils::IteratorType>
  getIteratorTypes(utils::IteratorType innerKind) const;

  /// tensor.expand_shape / tensor.collapse_shape between the two views.
  Value expand(OpBuilder &b, Location loc, Value tensor) const;
  Value collapse(OpBuilder &b, Location loc, Value tensor) const;
};

/// `tensor.empty` of a static shape.
Value createEmpty(OpBuilder &b, Location loc, ArrayRef<int64_t> shape,
                  Type elementType);
/// `linalg.fill` of a fresh tensor with a constant.
Value createFilled(OpBuilder &b, Location loc, ArrayRef<int64_t> shape,
                   TypedAttr value);

/// Row-major linear index (i64) of the current iteration point of a
/// linalg.generic over `shape`, from `linalg.index`.
Value buildLinearIndex(OpBuilder &b, Location loc, ArrayRef<int64_t> shape);

} // namespace mlir::fp4train

#endif // FP4TRAIN_LIB_CONVERSION_FP4TRAINTOSTANDARD_UTILS_H
