//===- QuantizeOpLowering.cpp - Expand quantize and dequantize ------------===//
//
// fp4train.quantize becomes four linalg.generic ops on the blocked view of
// the input (each blocked dimension split in [D/B, B], see Utils.h):
//
//   1. block amax: integer max of the f32 magnitude bits over each block
//      (exact, NaN > Inf > finite, as `absMax`);
//   2. [NV1] only: amax_tensor (the max of the block amaxes, or the `amax`
//      operand) and the global encode/decode scales, on scalars;
//   3. per block: the scale code and the f32 factor that maps the block into
//      the element range ([MX1]/[MX2]/[MX3] or [NV1]);
//   4. per element: one f32 product, then RNE-satfinite or [SR1] encoding;
//      the codes are then stored as [PK1] says (E2M1 two per byte).
//
// fp4train.dequantize is one elementwise linalg.generic on the same view.
//
//===----------------------------------------------------------------------===//

#include "Utils.h"
#include "fp4train/Conversion/FP4TrainCommon/Codecs.h"

#include "fp4train/Conversion/FP4TrainToStandard/FP4TrainToStandard.h"
#include "fp4train/Dialect/FP4Train/IR/FP4TrainOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace mlir::fp4train;
namespace numerics = ::fp4train::numerics;

/// True for NVFP4 (E4M3 block scales, [NV1]); false for the MX formats.
static bool hasE4M3Scales(ScaledTensorType type) {
  return isa<Float8E4M3FNType>(type.getScaleType());
}

/// Extends a bf16/f16 tensor to f32 (exact), elementwise.
static Value extendToF32(OpBuilder &b, Location loc, Value input) {
  auto type = cast<RankedTensorType>(input.getType());
  if (type.getElementType().isF32())
    return input;
  auto map = AffineMap::getMultiDimIdentityMap(type.getRank(), b.getContext());
  Value init = createEmpty(b, loc, type.getShape(), b.getF32Type());
  return linalg::GenericOp::create(
             b, loc, init.getType(), input, init, {map, map},
             SmallVector<utils::IteratorType>(type.getRank(),
                                              utils::IteratorType::parallel),
             [](OpBuilder &b, Location loc, ValueRange args) {
               Value ext =
                   arith::ExtFOp::create(b, loc, b.getF32Type(), args[0]);
               linalg::YieldOp::create(b, loc, ext);
             })
      .getResult(0);
}

/// Block amax as magnitude bits (i32), one per block.
static Value buildBlockAbsMax(OpBuilder &b, Location loc,
                              const BlockedView &view, Value x) {
  MLIRContext *ctx = b.getContext();
  Value init =
      createFilled(b, loc, view.getBlockShape(), b.getI32IntegerAttr(0));
  return linalg::GenericOp::create(
             b, loc, init.getType(), x, init,
             {view.getElementMap(ctx), view.getBlockMap(ctx)},
             view.getIteratorTypes(utils::IteratorType::reduction),
             [](OpBuilder &b, Location loc, ValueRange args) {
               ImplicitLocOpBuilder ib(loc, b);
               Value bits = codecs::magnitudeBits(ib, args[0]);
               Value max = arith::MaxUIOp::create(ib, args[1], bits);
               linalg::YieldOp::create(ib, max);
             })
      .getResult(0);
}

/// [NV1] amax_tensor: the max of the block amaxes (exact, NaN-propagating,
/// the same as the max over all elements).
static Value buildTensorAbsMax(OpBuilder &b, Location loc, Value blockAmax) {
  auto type = cast<RankedTensorType>(blockAmax.getType());
  MLIRContext *ctx = b.getContext();
  Value init = createFilled(b, loc, {}, b.getI32IntegerAttr(0));
  Value reduced =
      linalg::GenericOp::create(
          b, loc, init.getType(), blockAmax, init,
          {AffineMap::getMultiDimIdentityMap(type.getRank(), ctx),
           AffineMap::get(type.getRank(), 0, {}, ctx)},
          SmallVector<utils::IteratorType>(type.getRank(),
                                           utils::IteratorType::reduction),
          [](OpBuilder &b, Location loc, ValueRange args) {
            Value max = arith::MaxUIOp::create(b, loc, args[1], args[0]);
            linalg::YieldOp::create(b, loc, max);
          })
          .getResult(0);
  Value bits = tensor::ExtractOp::create(b, loc, reduced, ValueRange{});
  return arith::BitcastOp::create(b, loc, b.getF32Type(), bits);
}

/// [SH3] The row-major position in the logical tensor of the current element
/// of a linalg.generic over `view` (a part of the logical tensor starting at
/// `origin`): `base + sum_e index_e * stride_e`, where `base` is the origin's
/// position and an expanded dimension's stride is the logical stride of its
/// dimension, times the block size for the outer dimension of a blocked one.
/// Returns the (i64) base, built before the generic.
static Value buildPartBase(ImplicitLocOpBuilder &b, ValueRange origin,
                           ArrayRef<int64_t> logicalStrides) {
  Value base = arith::ConstantIntOp::create(b, b.getI64Type(), 0);
  for (auto [offset, stride] : llvm::zip_equal(origin, logicalStrides)) {
    Value term = arith::MulIOp::create(
        b, arith::IndexCastOp::create(b, b.getI64Type(), offset),
        arith::ConstantIntOp::create(b, b.getI64Type(), stride));
    base = arith::AddIOp::create(b, base, term);
  }
  return base;
}

static Value buildPartIndex(OpBuilder &b, Location loc, const BlockedView &view,
                            ArrayRef<int64_t> logicalStrides, Value base) {
  Value position = base;
  for (auto [dim, group] : llvm::enumerate(view.reassociation)) {
    int64_t stride = logicalStrides[dim];
    for (int64_t expanded : llvm::reverse(group)) {
      Value index = arith::IndexCastOp::create(
          b, loc, b.getI64Type(), linalg::IndexOp::create(b, loc, expanded));
      Value term = arith::MulIOp::create(
          b, loc, index,
          arith::ConstantIntOp::create(b, loc, b.getI64Type(), stride));
      position = arith::AddIOp::create(b, loc, position, term);
      stride *= view.expandedShape[expanded];
    }
  }
  return position;
}

namespace {

struct QuantizeOpLowering : public OpConversionPattern<QuantizeOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(QuantizeOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MLIRContext *ctx = rewriter.getContext();
    ScaledTensorType type = op.getResult().getType();
    BlockedView view(type.getShape(), type.getBlockShape());
    bool isNV = hasE4M3Scales(type);
    bool rceil = op.getScaleMode() == ScaleMode::rceil;
    bool stochastic = op.getRounding() == RoundingMode::stochastic;
    const numerics::MiniFloatFormat &element =
        codecs::getMiniFloatFormat(type.getElementType());

    Value x = view.expand(rewriter, loc,
                          extendToF32(rewriter, loc, adaptor.getInput()));
    Value blockAmax = buildBlockAbsMax(rewriter, loc, view, x);

    // [NV1] Global scales. Without a global scale in the type, the decode
    // has no S_dec, so the encode uses none either: S_enc = S_dec = 1.
    Value globalEncode, globalDecode;
    if (isNV) {
      ImplicitLocOpBuilder ib(loc, rewriter);
      if (type.getHasGlobalScale()) {
        Value amax = adaptor.getAmax()
                         ? adaptor.getAmax()
                         : buildTensorAbsMax(rewriter, loc, blockAmax);
        std::tie(globalEncode, globalDecode) =
            codecs::nvfp4GlobalScale(ib, amax);
      } else {
        globalEncode = globalDecode = codecs::f32Const(ib, 1.0f);
      }
    }

    // Per block: the scale code and the factor into the element range.
    SmallVector<int64_t> blockShape = view.getBlockShape();
    auto blockIdentity =
        AffineMap::getMultiDimIdentityMap(blockShape.size(), ctx);
    Value scaleInit =
        createEmpty(rewriter, loc, blockShape, rewriter.getI8Type());
    Value factorInit =
        createEmpty(rewriter, loc, blockShape, rewriter.getF32Type());
    auto scaleOp = linalg::GenericOp::create(
        rewriter, loc, TypeRange{scaleInit.getType(), factorInit.getType()},
        blockAmax, ValueRange{scaleInit, factorInit},
        {blockIdentity, blockIdentity, blockIdentity},
        SmallVector<utils::IteratorType>(blockShape.size(),
                                         utils::IteratorType::parallel),
        [&](OpBuilder &b, Location loc, ValueRange args) {
          ImplicitLocOpBuilder ib(loc, b);
          Value amax = codecs::f32FromBits(ib, args[0]);
          Value code, factor;
          if (isNV) {
            code = codecs::nvfp4BlockScaleCode(ib, amax, globalEncode);
            factor = codecs::nvfp4ElementScale(ib, code, globalDecode);
          } else {
            code = codecs::mxScaleCode(ib, amax, element, rceil);
            factor = codecs::inverseE8M0(ib, code);
          }
          linalg::YieldOp::create(ib, ValueRange{code, factor});
        });
    Value scales = scaleOp.getResult(0);
    Value factors = scaleOp.getResult(1);

    // Per element: x · factor, rounded. [SR1] indexes the random word by the
    // row-major position in the input, which the expanded view preserves.
    Value seed = adaptor.getSeed();
    SmallVector<int64_t> logicalStrides;
    Value partBase;
    if (stochastic && op.isPart()) {
      ArrayRef<int64_t> logicalShape = *op.getLogicalShape();
      logicalStrides.assign(logicalShape.size(), 1);
      for (int64_t dim = int64_t(logicalShape.size()) - 2; dim >= 0; --dim)
        logicalStrides[dim] = logicalStrides[dim + 1] * logicalShape[dim + 1];
      ImplicitLocOpBuilder ib(loc, rewriter);
      partBase = buildPartBase(ib, adaptor.getOrigin(), logicalStrides);
    }
    AffineMap elementMap = view.getElementMap(ctx);
    AffineMap blockMap = view.getBlockMap(ctx);
    Value codeInit =
        createEmpty(rewriter, loc, view.expandedShape, rewriter.getI8Type());
    Value codes =
        linalg::GenericOp::create(
            rewriter, loc, codeInit.getType(), ValueRange{x, scales, factors},
            codeInit, {elementMap, blockMap, blockMap, elementMap},
            view.getIteratorTypes(utils::IteratorType::parallel),
            [&](OpBuilder &b, Location loc, ValueRange args) {
              ImplicitLocOpBuilder ib(loc, b);
              Value v = arith::MulFOp::create(ib, args[0], args[2]);
              Value code;
              if (stochastic) {
                Value index =
                    partBase
                        ? buildPartIndex(b, loc, view, logicalStrides, partBase)
                        : buildLinearIndex(b, loc, view.expandedShape);
                Value word = codecs::stochasticRoundingWord(ib, seed, index);
                code = codecs::encodeE2M1Stochastic(ib, v, word);
              } else {
                code = codecs::encodeRNESat(ib, v, element);
              }
              if (!isNV) {
                // [MX3] A NaN-scaled block decodes to NaN through its scale;
                // its element codes are defined as 0.
                Value nanScale = arith::CmpIOp::create(
                    ib, arith::CmpIPredicate::eq, args[1],
                    arith::ConstantIntOp::create(ib, ib.getI8Type(), -1));
                code = arith::SelectOp::create(
                    ib, nanScale,
                    arith::ConstantIntOp::create(ib, ib.getI8Type(), 0), code);
              }
              linalg::YieldOp::create(ib, code);
            })
            .getResult(0);
    codes = buildStoreCodes(rewriter, loc, type.getElementType(),
                            view.collapse(rewriter, loc, codes));

    SmallVector<Value> results = {codes, scales};
    if (type.getHasGlobalScale())
      results.push_back(globalDecode);
    rewriter.replaceOpWithMultiple(op, {results});
    return success();
  }
};

struct DequantizeOpLowering : public OpConversionPattern<DequantizeOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(DequantizeOp op, OneToNOpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MLIRContext *ctx = rewriter.getContext();
    ScaledTensorType type = op.getInput().getType();
    Type resultElement = op.getResult().getType().getElementType();
    BlockedView view(type.getShape(), type.getBlockShape());
    bool isNV = hasE4M3Scales(type);
    const numerics::MiniFloatFormat &element =
        codecs::getMiniFloatFormat(type.getElementType());
    ValueRange parts = adaptor.getInput();
    Value globalDecode = type.getHasGlobalScale() ? parts[2] : Value();

    Value codes =
        view.expand(rewriter, loc,
                    buildLoadCodes(rewriter, loc, type.getElementType(),
                                   parts[0], type.getShape()));
    Value init = createEmpty(rewriter, loc, view.expandedShape, resultElement);
    AffineMap elementMap = view.getElementMap(ctx);
    Value values =
        linalg::GenericOp::create(
            rewriter, loc, init.getType(), ValueRange{codes, parts[1]}, init,
            {elementMap, view.getBlockMap(ctx), elementMap},
            view.getIteratorTypes(utils::IteratorType::parallel),
            [&](OpBuilder &b, Location loc, ValueRange args) {
              ImplicitLocOpBuilder ib(loc, b);
              Value value = codecs::decodeMiniFloat(ib, args[0], element);
              if (isNV) {
                // [NV1] (e2m1 · s_blk) · S_dec, left to right.
                value = arith::MulFOp::create(
                    ib, value,
                    codecs::decodeMiniFloat(ib, args[1], numerics::kE4M3FN));
                if (globalDecode)
                  value = arith::MulFOp::create(ib, value, globalDecode);
              } else {
                // [MX1] One exact product; a 0xFF scale gives NaN [MX3].
                value = arith::MulFOp::create(ib, value,
                                              codecs::decodeE8M0(ib, args[1]));
              }
              if (!resultElement.isF32())
                value = arith::TruncFOp::create(ib, resultElement, value);
              linalg::YieldOp::create(ib, value);
            })
            .getResult(0);
    rewriter.replaceOp(op, view.collapse(rewriter, loc, values));
    return success();
  }
};

} // namespace

void mlir::fp4train::populateQuantizeOpLoweringPatterns(
    TypeConverter &converter, RewritePatternSet &patterns) {
  patterns.add<QuantizeOpLowering, DequantizeOpLowering>(converter,
                                                         patterns.getContext());
}
