//===- ContractionLayout.cpp - K-major views of contraction operands ------===//

#include "fp4train/Dialect/FP4Train/Transforms/ContractionLayout.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tensor/Utils/Utils.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/Sequence.h"

using namespace mlir;
using namespace mlir::fp4train;

static SmallVector<unsigned> groupOrder(const DimGroups &groups) {
  SmallVector<unsigned> order(groups.batch);
  llvm::append_range(order, groups.rows);
  llvm::append_range(order, groups.inner);
  return order;
}

/// Reassociation that keeps every batch dimension and merges each of the
/// two trailing groups into one dimension.
static SmallVector<ReassociationIndices>
groupReassociation(const DimGroups &groups) {
  SmallVector<ReassociationIndices> reassociation;
  int64_t next = 0;
  for (size_t i = 0; i < groups.batch.size(); ++i)
    reassociation.push_back({next++});
  for (ArrayRef<unsigned> group : {groups.rows, groups.inner}) {
    ReassociationIndices indices;
    for (size_t i = 0; i < group.size(); ++i)
      indices.push_back(next++);
    reassociation.push_back(indices);
  }
  return reassociation;
}

static SmallVector<int64_t> shapeOf(ArrayRef<unsigned> dims,
                                    ArrayRef<int64_t> loopRanges) {
  return llvm::map_to_vector(dims, [&](unsigned d) { return loopRanges[d]; });
}

static Value createTranspose(OpBuilder &b, Location loc, Value value,
                             ArrayRef<int64_t> permutation) {
  if (llvm::equal(permutation, llvm::seq<int64_t>(0, permutation.size())))
    return value;
  auto type = cast<RankedTensorType>(value.getType());
  SmallVector<int64_t> shape = llvm::map_to_vector(
      permutation, [&](int64_t p) { return type.getDimSize(p); });
  Value init = tensor::EmptyOp::create(b, loc, shape, type.getElementType());
  return linalg::TransposeOp::create(b, loc, value, init, permutation)
      ->getResult(0);
}

Value mlir::fp4train::toGroupedLayout(OpBuilder &b, Location loc, Value value,
                                      AffineMap map,
                                      ArrayRef<int64_t> loopRanges,
                                      const DimGroups &groups) {
  SmallVector<unsigned> order = groupOrder(groups);
  // Transpose the dimensions `value` has into group order.
  SmallVector<int64_t> permutation, missing;
  for (auto [position, dim] : llvm::enumerate(order)) {
    std::optional<unsigned> result =
        map.getResultPosition(b.getAffineDimExpr(dim));
    if (result)
      permutation.push_back(*result);
    else
      missing.push_back(position);
  }
  value = createTranspose(b, loc, value, permutation);

  // Materialize the batch dimensions it is broadcast along.
  if (!missing.empty()) {
    auto type = cast<RankedTensorType>(value.getType());
    Value init = tensor::EmptyOp::create(b, loc, shapeOf(order, loopRanges),
                                         type.getElementType());
    value =
        linalg::BroadcastOp::create(b, loc, value, init, missing)->getResult(0);
  }

  if (groups.rows.size() == 1 && groups.inner.size() == 1)
    return value;
  return tensor::CollapseShapeOp::create(b, loc, value,
                                         groupReassociation(groups));
}

Value mlir::fp4train::fromGroupedLayout(OpBuilder &b, Location loc, Value value,
                                        AffineMap map,
                                        ArrayRef<int64_t> loopRanges,
                                        const DimGroups &groups) {
  SmallVector<unsigned> order = groupOrder(groups);
  auto type = cast<RankedTensorType>(value.getType());
  if (groups.rows.size() != 1 || groups.inner.size() != 1) {
    auto expandedType = RankedTensorType::get(shapeOf(order, loopRanges),
                                              type.getElementType());
    value = tensor::ExpandShapeOp::create(b, loc, expandedType, value,
                                          groupReassociation(groups));
  }
  // Result dimension r of `map` is iteration dimension map[r]; find it in
  // group order.
  SmallVector<int64_t> permutation;
  for (unsigned r = 0, e = map.getNumResults(); r < e; ++r)
    permutation.push_back(llvm::find(order, map.getDimPosition(r)) -
                          order.begin());
  return createTranspose(b, loc, value, permutation);
}

Value mlir::fp4train::padDimWithZeros(OpBuilder &b, Location loc, Value value,
                                      int64_t dim, int64_t size) {
  auto type = cast<RankedTensorType>(value.getType());
  if (type.getDimSize(dim) == size)
    return value;
  SmallVector<int64_t> shape(type.getShape());
  shape[dim] = size;
  Value zero =
      arith::ConstantOp::create(b, loc, b.getZeroAttr(type.getElementType()));
  return tensor::createPadHighOp(type.clone(shape), value, zero,
                                 /*nofold=*/false, loc, b);
}

Value mlir::fp4train::sliceToShape(OpBuilder &b, Location loc, Value value,
                                   ArrayRef<int64_t> shape) {
  auto type = cast<RankedTensorType>(value.getType());
  if (type.getShape() == shape)
    return value;
  SmallVector<OpFoldResult> offsets(shape.size(), b.getIndexAttr(0));
  SmallVector<OpFoldResult> strides(shape.size(), b.getIndexAttr(1));
  SmallVector<OpFoldResult> sizes = llvm::map_to_vector(
      shape, [&](int64_t s) -> OpFoldResult { return b.getIndexAttr(s); });
  return tensor::ExtractSliceOp::create(b, loc, value, offsets, sizes, strides);
}

Value mlir::fp4train::transposeLastTwo(OpBuilder &b, Location loc,
                                       Value value) {
  int64_t rank = cast<RankedTensorType>(value.getType()).getRank();
  SmallVector<int64_t> permutation =
      llvm::to_vector(llvm::seq<int64_t>(0, rank));
  std::swap(permutation[rank - 2], permutation[rank - 1]);
  return createTranspose(b, loc, value, permutation);
}

Value mlir::fp4train::castElements(OpBuilder &b, Location loc, Value value,
                                   Type elementType) {
  auto type = cast<RankedTensorType>(value.getType());
  Type from = type.getElementType();
  if (from == elementType)
    return value;
  Type target = type.clone(elementType);
  if (from.getIntOrFloatBitWidth() < elementType.getIntOrFloatBitWidth())
    return arith::ExtFOp::create(b, loc, target, value);
  return arith::TruncFOp::create(b, loc, target, value);
}

Value mlir::fp4train::buildTensorAmaxBits(OpBuilder &b, Location loc,
                                          Value value) {
  value = castElements(b, loc, value, b.getF32Type());
  auto type = cast<RankedTensorType>(value.getType());
  Type i32 = b.getI32Type();
  Value zero = arith::ConstantOp::create(b, loc, b.getI32IntegerAttr(0));
  Value init =
      linalg::FillOp::create(
          b, loc, zero,
          tensor::EmptyOp::create(b, loc, ArrayRef<int64_t>{}, i32).getResult())
          .getResult(0);
  MLIRContext *ctx = b.getContext();
  int64_t rank = type.getRank();
  SmallVector<AffineMap> maps = {AffineMap::getMultiDimIdentityMap(rank, ctx),
                                 AffineMap::get(rank, 0, ctx)};
  SmallVector<utils::IteratorType> iterators(rank,
                                             utils::IteratorType::reduction);
  return linalg::GenericOp::create(
             b, loc, init.getType(), value, init, maps, iterators,
             [&](OpBuilder &nb, Location nl, ValueRange args) {
               Value word = arith::BitcastOp::create(nb, nl, i32, args[0]);
               Value magnitude = arith::AndIOp::create(
                   nb, nl, word,
                   arith::ConstantOp::create(nb, nl,
                                             nb.getI32IntegerAttr(0x7fffffff)));
               linalg::YieldOp::create(
                   nb, nl,
                   arith::MaxUIOp::create(nb, nl, args[1], magnitude)
                       .getResult());
             })
      .getResult(0);
}
