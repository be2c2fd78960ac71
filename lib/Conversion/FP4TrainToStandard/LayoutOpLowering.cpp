//===- LayoutOpLowering.cpp - Expand pack, unpack and transpose -----------===//
//
// Under the 1:N type conversion a block-scaled tensor already is its codes,
// scales and global scale, so pack and unpack forward values, converting the
// element codes between one per element (a tensor of the element type) and
// their [PK1] stored form; the transposed view of a 16x16-blocked tensor is
// a transpose of the codes and of the scales (a tile and its scale stay
// together, [NV1]), the codes unpacked around it.
//
//===----------------------------------------------------------------------===//

#include "fp4train/Conversion/FP4TrainToStandard/FP4TrainToStandard.h"
#include "fp4train/Dialect/FP4Train/IR/FP4TrainOps.h"

#include "Utils.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"

using namespace mlir;
using namespace mlir::fp4train;

namespace {

struct PackOpLowering : public OpConversionPattern<PackOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(PackOp op, OneToNOpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    SmallVector<Value> parts;
    for (ValueRange operand : adaptor.getOperands())
      llvm::append_range(parts, operand);
    parts[0] =
        buildStoreCodes(rewriter, op.getLoc(),
                        op.getResult().getType().getElementType(), parts[0]);
    rewriter.replaceOpWithMultiple(op, {parts});
    return success();
  }
};

struct UnpackOpLowering : public OpConversionPattern<UnpackOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(UnpackOp op, OneToNOpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    SmallVector<SmallVector<Value>> results;
    for (Value part : adaptor.getInput())
      results.push_back({part});
    ScaledTensorType type = op.getInput().getType();
    results[0][0] = buildLoadCodes(rewriter, op.getLoc(), type.getElementType(),
                                   results[0][0], type.getShape());
    rewriter.replaceOpWithMultiple(op, results);
    return success();
  }
};

struct TransposeOpLowering : public OpConversionPattern<TransposeOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(TransposeOp op, OneToNOpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    SmallVector<int64_t> dims = op.getInput().getType().getBlockedDims();
    auto transpose = [&](Value tensor) -> Value {
      auto type = cast<RankedTensorType>(tensor.getType());
      SmallVector<int64_t> permutation =
          llvm::to_vector(llvm::seq<int64_t>(0, type.getRank()));
      std::swap(permutation[dims[0]], permutation[dims[1]]);
      SmallVector<int64_t> shape(type.getShape());
      std::swap(shape[dims[0]], shape[dims[1]]);
      Value init = createEmpty(rewriter, loc, shape, type.getElementType());
      return linalg::TransposeOp::create(rewriter, loc, tensor, init,
                                         permutation)
          .getResult()[0];
    };
    ValueRange parts = adaptor.getInput();
    ScaledTensorType type = op.getInput().getType();
    Type element = type.getElementType();
    Value codes =
        buildStoreCodes(rewriter, loc, element,
                        transpose(buildLoadCodes(rewriter, loc, element,
                                                 parts[0], type.getShape())));
    SmallVector<Value> results = {codes, transpose(parts[1])};
    if (parts.size() == 3)
      results.push_back(parts[2]);
    rewriter.replaceOpWithMultiple(op, {results});
    return success();
  }
};

} // namespace

void mlir::fp4train::populateLayoutOpLoweringPatterns(
    TypeConverter &converter, RewritePatternSet &patterns) {
  patterns.add<PackOpLowering, UnpackOpLowering, TransposeOpLowering>(
      converter, patterns.getContext());
}
