//===- Utils.cpp - Shared helpers of the fp4train expansion ---------------===//

#include "Utils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace mlir::fp4train;

BlockedView::BlockedView(ArrayRef<int64_t> shape, ArrayRef<int64_t> blockShape)
    : shape(shape) {
  for (auto [size, block] : llvm::zip_equal(shape, blockShape)) {
    ReassociationIndices group;
    group.push_back(expandedShape.size());
    if (block == 1) {
      expandedShape.push_back(size);
      isInner.push_back(false);
    } else {
      group.push_back(expandedShape.size() + 1);
      expandedShape.append({size / block, block});
      isInner.append({false, true});
    }
    reassociation.push_back(group);
  }
}

SmallVector<int64_t> BlockedView::getBlockShape() const {
  SmallVector<int64_t> result;
  for (auto [size, inner] : llvm::zip_equal(expandedShape, isInner))
    if (!inner)
      result.push_back(size);
  return result;
}

AffineMap BlockedView::getElementMap(MLIRContext *context) const {
  return AffineMap::getMultiDimIdentityMap(getExpandedRank(), context);
}

AffineMap BlockedView::getBlockMap(MLIRContext *context) const {
  SmallVector<AffineExpr> results;
  for (auto [dim, inner] : llvm::enumerate(isInner))
    if (!inner)
      results.push_back(getAffineDimExpr(dim, context));
  return AffineMap::get(getExpandedRank(), 0, results, context);
}

SmallVector<utils::IteratorType>
BlockedView::getIteratorTypes(utils::IteratorType innerKind) const {
  SmallVector<utils::IteratorType> result;
  for (bool inner : isInner)
    result.push_back(inner ? innerKind : utils::IteratorType::parallel);
  return result;
}

Value BlockedView::expand(OpBuilder &b, Location loc, Value tensor) const {
  auto type = cast<RankedTensorType>(tensor.getType());
  if (expandedShape.size() == shape.size())
    return tensor;
  return tensor::ExpandShapeOp::create(
      b, loc, RankedTensorType::get(expandedShape, type.getElementType()),
      tensor, reassociation);
}

Value BlockedView::collapse(OpBuilder &b, Location loc, Value tensor) const {
  auto type = cast<RankedTensorType>(tensor.getType());
  if (expandedShape.size() == shape.size())
    return tensor;
  return tensor::CollapseShapeOp::create(
      b, loc, RankedTensorType::get(shape, type.getElementType()), tensor,
      reassociation);
}

Value mlir::fp4train::createEmpty(OpBuilder &b, Location loc,
                                  ArrayRef<int64_t> shape, Type elementType) {
  return tensor::EmptyOp::create(b, loc, shape, elementType);
}

Value mlir::fp4train::createFilled(OpBuilder &b, Location loc,
                                   ArrayRef<int64_t> shape, TypedAttr value) {
  Value empty = createEmpty(b, loc, shape, value.getType());
  Value constant = arith::ConstantOp::create(b, loc, value);
  return linalg::FillOp::create(b, loc, constant, empty).getResult(0);
}

Value mlir::fp4train::buildLinearIndex(OpBuilder &b, Location loc,
                                       ArrayRef<int64_t> shape) {
  Value linear;
  for (auto [dim, size] : llvm::enumerate(shape)) {
    Value index = linalg::IndexOp::create(b, loc, dim);
    Value value = arith::IndexCastOp::create(b, loc, b.getI64Type(), index);
    if (!linear) {
      linear = value;
      continue;
    }
    Value stride = arith::ConstantIntOp::create(b, loc, b.getI64Type(), size);
    linear = arith::AddIOp::create(
        b, loc, arith::MulIOp::create(b, loc, linear, stride), value);
  }
  return linear;
}
