//===- CodeStorage.cpp - [PK1] stored element codes on tensors ------------===//
//
// The tensor form of fp4train/Numerics/Storage.h: E2M1 codes two per byte
// along the last dimension, element 2j of a row in the low nibble of byte j.
// Both directions go through the view [..., n/2, 2] of a row (a row of odd
// length is padded with one zero code first), so the pack is one
// linalg.generic reading the pair's two codes with constant indices and the
// unpack one linalg.generic writing them.
//
//===----------------------------------------------------------------------===//

#include "fp4train/Conversion/FP4TrainCommon/TypeConversion.h"

#include "fp4train/Dialect/FP4Train/IR/FP4TrainTypes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace mlir::fp4train;

bool mlir::fp4train::isPackedStorage(Type element) {
  return isa<Float4E2M1FNType>(element);
}

/// The shape of the stored codes of a tensor of `shape`.
static SmallVector<int64_t> getStoredShape(Type element,
                                           ArrayRef<int64_t> shape) {
  SmallVector<int64_t> stored(shape);
  if (isPackedStorage(element) && !stored.empty())
    stored.back() = llvm::divideCeil(stored.back(), 2);
  return stored;
}

/// Reassociation of [..., m, 2] onto [..., 2m]: every dimension alone but
/// the last two, which merge.
static SmallVector<ReassociationIndices> getPairReassociation(int64_t rank) {
  SmallVector<ReassociationIndices> groups;
  for (int64_t d = 0; d + 1 < rank; ++d)
    groups.push_back({d});
  groups.push_back({rank - 1, rank});
  return groups;
}

RankedTensorType mlir::fp4train::getStoredCodesType(ScaledTensorType type) {
  return RankedTensorType::get(
      getStoredShape(type.getElementType(), type.getShape()),
      IntegerType::get(type.getContext(), 8));
}

Value mlir::fp4train::buildStoreCodes(OpBuilder &b, Location loc, Type element,
                                      Value codes) {
  auto type = cast<RankedTensorType>(codes.getType());
  if (!isPackedStorage(element) || type.getRank() == 0)
    return codes;
  int64_t rank = type.getRank();
  SmallVector<int64_t> shape(type.getShape());
  if (shape.back() % 2) {
    // An odd row ends in a zero high nibble.
    SmallVector<OpFoldResult> low(rank, b.getIndexAttr(0));
    SmallVector<OpFoldResult> high(rank, b.getIndexAttr(0));
    high.back() = b.getIndexAttr(1);
    ++shape.back();
    codes = tensor::PadOp::create(
        b, loc, RankedTensorType::get(shape, type.getElementType()), codes, low,
        high, Value(arith::ConstantIntOp::create(b, loc, b.getI8Type(), 0)));
  }
  SmallVector<int64_t> pairs(shape);
  pairs.back() /= 2;
  SmallVector<int64_t> pairShape(pairs);
  pairShape.push_back(2);
  Value pairView = tensor::ExpandShapeOp::create(
      b, loc, RankedTensorType::get(pairShape, b.getI8Type()), codes,
      getPairReassociation(rank));

  MLIRContext *ctx = b.getContext();
  SmallVector<AffineExpr> low, high;
  for (int64_t d = 0; d < rank; ++d) {
    low.push_back(getAffineDimExpr(d, ctx));
    high.push_back(getAffineDimExpr(d, ctx));
  }
  low.push_back(getAffineConstantExpr(0, ctx));
  high.push_back(getAffineConstantExpr(1, ctx));
  AffineMap identity = AffineMap::getMultiDimIdentityMap(rank, ctx);
  Value init = tensor::EmptyOp::create(b, loc, pairs, b.getI8Type());
  return linalg::GenericOp::create(
             b, loc, init.getType(), ValueRange{pairView, pairView}, init,
             {AffineMap::get(rank, 0, low, ctx),
              AffineMap::get(rank, 0, high, ctx), identity},
             SmallVector<utils::IteratorType>(rank,
                                              utils::IteratorType::parallel),
             [](OpBuilder &b, Location loc, ValueRange args) {
               Type i8 = b.getI8Type();
               Value lowNibble = arith::AndIOp::create(
                   b, loc, args[0],
                   arith::ConstantIntOp::create(b, loc, i8, 0x0F));
               Value highNibble = arith::ShLIOp::create(
                   b, loc, args[1],
                   arith::ConstantIntOp::create(b, loc, i8, 4));
               linalg::YieldOp::create(
                   b, loc,
                   arith::OrIOp::create(b, loc, lowNibble, highNibble)
                       .getResult());
             })
      .getResult(0);
}

Value mlir::fp4train::buildLoadCodes(OpBuilder &b, Location loc, Type element,
                                     Value stored, ArrayRef<int64_t> shape) {
  auto type = cast<RankedTensorType>(stored.getType());
  if (!isPackedStorage(element) || type.getRank() == 0)
    return stored;
  int64_t rank = type.getRank();
  MLIRContext *ctx = b.getContext();
  SmallVector<int64_t> pairShape(type.getShape());
  pairShape.push_back(2);
  SmallVector<AffineExpr> byte;
  for (int64_t d = 0; d < rank; ++d)
    byte.push_back(getAffineDimExpr(d, ctx));
  Value init = tensor::EmptyOp::create(b, loc, pairShape, b.getI8Type());
  Value pairs =
      linalg::GenericOp::create(
          b, loc, init.getType(), stored, init,
          {AffineMap::get(rank + 1, 0, byte, ctx),
           AffineMap::getMultiDimIdentityMap(rank + 1, ctx)},
          SmallVector<utils::IteratorType>(rank + 1,
                                           utils::IteratorType::parallel),
          [&](OpBuilder &b, Location loc, ValueRange args) {
            // Code h of the pair: (byte >> 4h) & 0xF.
            Type i8 = b.getI8Type();
            Value h = arith::IndexCastUIOp::create(
                b, loc, i8, linalg::IndexOp::create(b, loc, rank));
            Value shift = arith::ShLIOp::create(
                b, loc, h, arith::ConstantIntOp::create(b, loc, i8, 2));
            Value code = arith::AndIOp::create(
                b, loc, arith::ShRUIOp::create(b, loc, args[0], shift),
                arith::ConstantIntOp::create(b, loc, i8, 0x0F));
            linalg::YieldOp::create(b, loc, code);
          })
          .getResult(0);
  SmallVector<int64_t> evenShape(type.getShape());
  evenShape.back() *= 2;
  Value codes = tensor::CollapseShapeOp::create(
      b, loc, RankedTensorType::get(evenShape, b.getI8Type()), pairs,
      getPairReassociation(rank));
  if (evenShape.back() == shape.back())
    return codes;
  // Drop the padding code of odd rows.
  SmallVector<OpFoldResult> offsets(rank, b.getIndexAttr(0));
  SmallVector<OpFoldResult> sizes, strides(rank, b.getIndexAttr(1));
  for (int64_t size : shape)
    sizes.push_back(b.getIndexAttr(size));
  return tensor::ExtractSliceOp::create(
      b, loc, RankedTensorType::get(shape, b.getI8Type()), codes, offsets,
      sizes, strides);
}
