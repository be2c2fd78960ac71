//===- HadamardOpLowering.cpp - Expand hadamard ---------------------------===//
//
// [H1] on the view that splits the rotated dimension in [D/n, n]: the sign
// multiply, then log2(n) butterfly stages h = 1, 2, ..., n/2 in that order,
// then the multiply by f32(1/sqrt(n)) (the inverse applies the signs last).
// Stage h views the n axis as [n/2h, 2, h]: element (a, 0, c) becomes
// x[a,0,c] + x[a,1,c] and (a, 1, c) becomes x[a,0,c] - x[a,1,c], exactly the
// library's pair (x[i] + x[i+h], x[i] - x[i+h]) with i = 2ha + c, so every
// f32 operation matches `hadamardRotateBlock` one for one.
//
//===----------------------------------------------------------------------===//

#include "Utils.h"
#include "fp4train/Conversion/FP4TrainCommon/Codecs.h"

#include "fp4train/Conversion/FP4TrainToStandard/FP4TrainToStandard.h"
#include "fp4train/Dialect/FP4Train/IR/FP4TrainOps.h"
#include "fp4train/Numerics/Hadamard.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

#include <cmath>

using namespace mlir;
using namespace mlir::fp4train;
namespace numerics = ::fp4train::numerics;

/// All-parallel iterators.
static SmallVector<utils::IteratorType> parallel(int64_t rank) {
  return SmallVector<utils::IteratorType>(rank, utils::IteratorType::parallel);
}

Value mlir::fp4train::buildHadamardSigns(OpBuilder &b, Location loc,
                                         HadamardAttr rotation, Value seed,
                                         Value step) {
  int64_t n = rotation.getSize();
  auto type = RankedTensorType::get({n}, b.getF32Type());
  switch (rotation.getSigns()) {
  case HadamardSigns::none:
    return Value();
  case HadamardSigns::fixed: {
    // The attribute's vector, or the library's default fixed vector for n
    // (TransformerEngine's for 16, the documented seed otherwise).
    std::vector<float> signs;
    if (!rotation.getSignVector().empty())
      for (int32_t s : rotation.getSignVector())
        signs.push_back(float(s));
    else
      signs = numerics::getHadamardSigns(n, numerics::HadamardSigns::Fixed);
    return arith::ConstantOp::create(
        b, loc, DenseElementsAttr::get(type, ArrayRef<float>(signs)));
  }
  case HadamardSigns::random: {
    // Re-drawn from Philox(seed, step) at each application.
    Value init = createEmpty(b, loc, {n}, b.getF32Type());
    auto map = AffineMap::getMultiDimIdentityMap(1, b.getContext());
    return linalg::GenericOp::create(
               b, loc, type, ValueRange{}, init, {map}, parallel(1),
               [&](OpBuilder &b, Location loc, ValueRange) {
                 ImplicitLocOpBuilder ib(loc, b);
                 Value j = linalg::IndexOp::create(ib, 0);
                 linalg::YieldOp::create(
                     ib, codecs::randomHadamardSign(ib, seed, step, j));
               })
        .getResult(0);
  }
  }
  llvm_unreachable("unknown sign mode");
}

/// x · s along expanded dimension `axis` (exact: s is ±1).
static Value multiplySigns(OpBuilder &b, Location loc, Value x, Value signs,
                           int64_t axis) {
  auto type = cast<RankedTensorType>(x.getType());
  MLIRContext *ctx = b.getContext();
  auto identity = AffineMap::getMultiDimIdentityMap(type.getRank(), ctx);
  auto signMap =
      AffineMap::get(type.getRank(), 0, getAffineDimExpr(axis, ctx), ctx);
  Value init = createEmpty(b, loc, type.getShape(), b.getF32Type());
  return linalg::GenericOp::create(
             b, loc, type, ValueRange{x, signs}, init,
             {identity, signMap, identity}, parallel(type.getRank()),
             [](OpBuilder &b, Location loc, ValueRange args) {
               linalg::YieldOp::create(
                   b, loc,
                   arith::MulFOp::create(b, loc, args[0], args[1]).getResult());
             })
      .getResult(0);
}

/// x · f32(1/sqrt(n)), one rounded multiply per element.
static Value multiplyNorm(OpBuilder &b, Location loc, Value x, int64_t n) {
  auto type = cast<RankedTensorType>(x.getType());
  auto identity =
      AffineMap::getMultiDimIdentityMap(type.getRank(), b.getContext());
  Value norm = arith::ConstantFloatOp::create(
      b, loc, b.getF32Type(), APFloat(float(1.0 / std::sqrt(double(n)))));
  Value init = createEmpty(b, loc, type.getShape(), b.getF32Type());
  return linalg::GenericOp::create(
             b, loc, type, x, init, {identity, identity},
             parallel(type.getRank()),
             [&](OpBuilder &b, Location loc, ValueRange args) {
               linalg::YieldOp::create(
                   b, loc,
                   arith::MulFOp::create(b, loc, args[0], norm).getResult());
             })
      .getResult(0);
}

/// Butterfly stage h on expanded dimension `axis` (of size n).
static Value butterflyStage(OpBuilder &b, Location loc, Value x, int64_t axis,
                            int64_t h) {
  auto type = cast<RankedTensorType>(x.getType());
  MLIRContext *ctx = b.getContext();
  // Split the n axis in [n/2h, 2, h].
  SmallVector<int64_t> shape(type.getShape());
  shape[axis] = type.getDimSize(axis) / (2 * h);
  shape.insert(shape.begin() + axis + 1, {2, h});
  SmallVector<ReassociationIndices> reassociation;
  for (int64_t d = 0, e = 0; d < type.getRank(); ++d) {
    ReassociationIndices group = {e++};
    if (d == axis)
      group.append({e++, e++});
    reassociation.push_back(group);
  }
  auto expandedType = RankedTensorType::get(shape, b.getF32Type());
  Value expanded =
      tensor::ExpandShapeOp::create(b, loc, expandedType, x, reassociation);
  int64_t rank = shape.size();
  auto identity = AffineMap::getMultiDimIdentityMap(rank, ctx);
  auto half = [&](int64_t which) {
    SmallVector<AffineExpr> results;
    for (int64_t d = 0; d < rank; ++d)
      results.push_back(d == axis + 1 ? getAffineConstantExpr(which, ctx)
                                      : getAffineDimExpr(d, ctx));
    return AffineMap::get(rank, 0, results, ctx);
  };
  Value init = createEmpty(b, loc, shape, b.getF32Type());
  Value stage =
      linalg::GenericOp::create(
          b, loc, expandedType, ValueRange{expanded, expanded}, init,
          {half(0), half(1), identity}, parallel(rank),
          [&](OpBuilder &b, Location loc, ValueRange args) {
            Value index = linalg::IndexOp::create(b, loc, axis + 1);
            Value first = arith::CmpIOp::create(
                b, loc, arith::CmpIPredicate::eq, index,
                arith::ConstantIndexOp::create(b, loc, 0));
            Value sum = arith::AddFOp::create(b, loc, args[0], args[1]);
            Value difference = arith::SubFOp::create(b, loc, args[0], args[1]);
            linalg::YieldOp::create(
                b, loc,
                arith::SelectOp::create(b, loc, first, sum, difference)
                    .getResult());
          })
          .getResult(0);
  return tensor::CollapseShapeOp::create(b, loc, type, stage, reassociation);
}

namespace {

struct HadamardOpLowering : public OpConversionPattern<HadamardOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(HadamardOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    HadamardAttr rotation = op.getRotation();
    int64_t n = rotation.getSize();
    int64_t dim = op.getDim();
    auto type = cast<RankedTensorType>(op.getInput().getType());
    SmallVector<int64_t> blockShape(type.getRank(), 1);
    blockShape[dim] = n;
    BlockedView view(type.getShape(), blockShape);
    int64_t axis = view.reassociation[dim].back();

    Value signs = buildHadamardSigns(rewriter, loc, rotation, adaptor.getSeed(),
                                     adaptor.getStep());
    Value x = view.expand(rewriter, loc, adaptor.getInput());
    bool inverse = op.getInverse();
    if (signs && !inverse)
      x = multiplySigns(rewriter, loc, x, signs, axis);
    for (int64_t h = 1; h < n; h *= 2)
      x = butterflyStage(rewriter, loc, x, axis, h);
    x = multiplyNorm(rewriter, loc, x, n);
    if (signs && inverse)
      x = multiplySigns(rewriter, loc, x, signs, axis);
    rewriter.replaceOp(op, view.collapse(rewriter, loc, x));
    return success();
  }
};

} // namespace

void mlir::fp4train::populateHadamardOpLoweringPatterns(
    TypeConverter &converter, RewritePatternSet &patterns) {
  patterns.add<HadamardOpLowering>(converter, patterns.getContext());
}
