//===- ScaledMatmulOpLowering.cpp - Expand scaled_matmul ([GEMM1]) --------===//
//
// [GEMM1] in four linalg.generic ops over [batch..., M, N, K blocks, k]:
//
//   1. decode: each element code to its exact value · 2^fractionBits as an
//      integer (and, for FP8 elements, which have NaN/Inf, to f32 too);
//   2. block products: P[i,j,b] = sum_k a[i,b,k] · b[j,b,k] in integers
//      (i32 for E2M1 pairs, i128 for E5M2 pairs, i64 otherwise: wide enough
//      for every sum, as in the reference);
//   3. T[i,j] = sum_b f32(sa · sb · P): each term is the exact integer
//      P · mantissa(sa) · mantissa(sb) times a power of two, rounded to f32
//      once (`roundScaledIntegerToFloat`); terms are added in f32 from +0 in
//      increasing b, the iteration order of the reduction;
//   4. C = acc + f32(g · T).
//
// A block pair with a NaN/Inf element or a NaN scale contributes the IEEE
// evaluation of its term instead, as the reference does. Such a term is
// always NaN or ±Inf: its value is that of the f32 sum of f32 products (no
// finite partial sum of FP8 products can overflow f32) times sa, times sb,
// and the sum itself tells whether an element was NaN or Inf.
//
//===----------------------------------------------------------------------===//

#include "Utils.h"
#include "fp4train/Conversion/FP4TrainCommon/Codecs.h"

#include "fp4train/Conversion/FP4TrainToStandard/FP4TrainToStandard.h"
#include "fp4train/Dialect/FP4Train/IR/FP4TrainOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

#include <cmath>

using namespace mlir;
using namespace mlir::fp4train;
namespace numerics = ::fp4train::numerics;

static SmallVector<utils::IteratorType> parallel(int64_t rank) {
  return SmallVector<utils::IteratorType>(rank, utils::IteratorType::parallel);
}

/// Map from `numDims` loop dimensions to the listed ones.
static AffineMap dimsMap(MLIRContext *ctx, int64_t numDims,
                         ArrayRef<int64_t> dims) {
  SmallVector<AffineExpr> results;
  for (int64_t d : dims)
    results.push_back(getAffineDimExpr(d, ctx));
  return AffineMap::get(numDims, 0, results, ctx);
}

namespace {

/// One converted operand and what its format implies.
struct Operand {
  ScaledTensorType type;
  Value codes, scales, globalDecode;
  const numerics::MiniFloatFormat *element;
  bool isNV;

  /// [PK1] The stored codes are read back one per element.
  Operand(OpBuilder &b, Location loc, ScaledTensorType type, ValueRange parts)
      : type(type), codes(buildLoadCodes(b, loc, type.getElementType(),
                                         parts[0], type.getShape())),
        scales(parts[1]), globalDecode(parts.size() == 3 ? parts[2] : Value()),
        element(&codecs::getMiniFloatFormat(type.getElementType())),
        isNV(isa<Float8E4M3FNType>(type.getScaleType())) {}

  bool hasSpecials() const { return element != &numerics::kE2M1; }
};

/// Scales per (row, K block): a 16x16-blocked operand's [rows/16, K/16]
/// scales are repeated for the 16 rows of each tile.
static Value buildRowScales(OpBuilder &b, Location loc, const Operand &op) {
  auto type = cast<RankedTensorType>(op.scales.getType());
  if (!op.type.is2DBlocked())
    return op.scales;
  int64_t rank = type.getRank();
  SmallVector<int64_t> shape(type.getShape());
  shape.insert(shape.begin() + rank - 1, 16);
  MLIRContext *ctx = b.getContext();
  SmallVector<int64_t> inputDims = llvm::to_vector(llvm::seq<int64_t>(0, rank));
  inputDims.back() = rank; // skip the row-in-tile dimension
  Value init = createEmpty(b, loc, shape, b.getI8Type());
  Value repeated = linalg::GenericOp::create(
                       b, loc, init.getType(), op.scales, init,
                       {dimsMap(ctx, rank + 1, inputDims),
                        AffineMap::getMultiDimIdentityMap(rank + 1, ctx)},
                       parallel(rank + 1),
                       [](OpBuilder &b, Location loc, ValueRange args) {
                         linalg::YieldOp::create(b, loc, args[0]);
                       })
                       .getResult(0);
  SmallVector<ReassociationIndices> reassociation;
  for (int64_t d = 0; d < rank - 2; ++d)
    reassociation.push_back({d});
  reassociation.push_back({rank - 2, rank - 1});
  reassociation.push_back({rank});
  SmallVector<int64_t> rowShape(type.getShape());
  rowShape[rank - 2] *= 16;
  return tensor::CollapseShapeOp::create(
      b, loc, RankedTensorType::get(rowShape, b.getI8Type()), repeated,
      reassociation);
}

/// Elementwise decode of the codes, expanded to [batch..., rows, KB, block].
static Value buildDecoded(OpBuilder &b, Location loc, const Operand &op,
                          Type elementType, bool toFloat) {
  auto type = cast<RankedTensorType>(op.codes.getType());
  int64_t rank = type.getRank();
  auto identity = AffineMap::getMultiDimIdentityMap(rank, b.getContext());
  Value init = createEmpty(b, loc, type.getShape(), elementType);
  Value decoded =
      linalg::GenericOp::create(
          b, loc, init.getType(), op.codes, init, {identity, identity},
          parallel(rank),
          [&](OpBuilder &b, Location loc, ValueRange args) {
            ImplicitLocOpBuilder ib(loc, b);
            Value value =
                toFloat ? codecs::decodeMiniFloat(ib, args[0], *op.element)
                        : codecs::elementToScaledInteger(
                              ib, args[0], *op.element, elementType);
            linalg::YieldOp::create(ib, value);
          })
          .getResult(0);
  SmallVector<int64_t> blockShape(rank, 1);
  blockShape.back() = op.type.getBlockShape().back();
  return BlockedView(type.getShape(), blockShape).expand(b, loc, decoded);
}

/// A block scale as (finite, integer mantissa, exponent, f32 value):
/// E8M0 is 1 · 2^(c - 127), E4M3 its exact value · 2^9 times 2^-9.
struct DecodedScale {
  Value finite, mantissa, exponent, value;
};

static DecodedScale decodeScale(ImplicitLocOpBuilder &b, const Operand &op,
                                Value code, Type intType) {
  DecodedScale s;
  if (op.isNV) {
    s.value = codecs::decodeMiniFloat(b, code, numerics::kE4M3FN);
    s.finite =
        arith::CmpFOp::create(b, arith::CmpFPredicate::ORD, s.value, s.value);
    s.mantissa =
        codecs::elementToScaledInteger(b, code, numerics::kE4M3FN, intType);
    s.exponent = codecs::i32Const(
        b, uint32_t(-codecs::getFractionBits(numerics::kE4M3FN)));
    return s;
  }
  s.value = codecs::decodeE8M0(b, code);
  s.finite =
      arith::CmpIOp::create(b, arith::CmpIPredicate::ne, code,
                            arith::ConstantIntOp::create(b, b.getI8Type(), -1));
  s.exponent =
      arith::SubIOp::create(b, arith::ExtUIOp::create(b, b.getI32Type(), code),
                            codecs::i32Const(b, 127));
  return s;
}

struct ScaledMatmulOpLowering : public OpConversionPattern<ScaledMatmulOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(ScaledMatmulOp op, OneToNOpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MLIRContext *ctx = rewriter.getContext();
    Operand lhs(rewriter, loc, op.getLhs().getType(), adaptor.getLhs());
    Operand rhs(rewriter, loc, op.getRhs().getType(), adaptor.getRhs());
    Value acc = adaptor.getAcc().front();
    auto accType = cast<RankedTensorType>(acc.getType());
    int64_t rank = accType.getRank();
    int64_t batch = rank - 2;

    // Integer widths that hold every block sum exactly (see the file
    // comment), and the term width once NVFP4 scale mantissas (< 2^18)
    // multiply in.
    bool bothE2M1 = !lhs.hasSpecials() && !rhs.hasSpecials();
    bool bothE5M2 =
        lhs.element == &numerics::kE5M2 && rhs.element == &numerics::kE5M2;
    Type productType = rewriter.getIntegerType(bothE2M1   ? 32
                                               : bothE5M2 ? 128
                                                          : 64);
    Type termType = rewriter.getIntegerType(bothE5M2 ? 128 : 64);
    bool withFloats = lhs.hasSpecials() || rhs.hasSpecials();

    Value lhsScales = buildRowScales(rewriter, loc, lhs);
    Value rhsScales = buildRowScales(rewriter, loc, rhs);

    // Loop dimensions: batch..., i, j, kb, k.
    int64_t i = batch, j = batch + 1, kb = batch + 2, k = batch + 3;
    int64_t numDims = batch + 4;
    SmallVector<int64_t> batchDims =
        llvm::to_vector(llvm::seq<int64_t>(0, batch));
    auto with = [&](ArrayRef<int64_t> dims) {
      SmallVector<int64_t> all(batchDims);
      all.append(dims.begin(), dims.end());
      return all;
    };

    // 2. Exact block products (and, with FP8 elements, their f32 versions).
    SmallVector<int64_t> productShape(accType.getShape());
    int64_t kBlocks =
        cast<RankedTensorType>(lhsScales.getType()).getShape().back();
    productShape.push_back(kBlocks);
    SmallVector<Value> inputs = {
        buildDecoded(rewriter, loc, lhs, productType, false),
        buildDecoded(rewriter, loc, rhs, productType, false)};
    SmallVector<Value> inits = {createFilled(
        rewriter, loc, productShape, rewriter.getIntegerAttr(productType, 0))};
    SmallVector<AffineMap> maps = {dimsMap(ctx, numDims, with({i, kb, k})),
                                   dimsMap(ctx, numDims, with({j, kb, k}))};
    if (withFloats) {
      inputs.push_back(
          buildDecoded(rewriter, loc, lhs, rewriter.getF32Type(), true));
      inputs.push_back(
          buildDecoded(rewriter, loc, rhs, rewriter.getF32Type(), true));
      maps.append({maps[0], maps[1]});
      inits.push_back(createFilled(rewriter, loc, productShape,
                                   rewriter.getF32FloatAttr(0.0f)));
    }
    AffineMap productMap = dimsMap(ctx, numDims, with({i, j, kb}));
    maps.append(inits.size(), productMap);
    SmallVector<utils::IteratorType> iterators = parallel(numDims);
    iterators[k] = utils::IteratorType::reduction;
    auto products = linalg::GenericOp::create(
        rewriter, loc, ValueRange(inits).getTypes(), inputs, inits, maps,
        iterators, [&](OpBuilder &b, Location loc, ValueRange args) {
          SmallVector<Value> sums = {arith::AddIOp::create(
              b, loc, args[withFloats ? 4 : 2],
              arith::MulIOp::create(b, loc, args[0], args[1]))};
          if (withFloats)
            sums.push_back(arith::AddFOp::create(
                b, loc, args[5],
                arith::MulFOp::create(b, loc, args[2], args[3])));
          linalg::YieldOp::create(b, loc, sums);
        });

    // 3. T = sum over K blocks of the once-rounded terms.
    int64_t termDims = batch + 3;
    inputs = {products.getResult(0)};
    maps = {AffineMap::getMultiDimIdentityMap(termDims, ctx)};
    if (withFloats) {
      inputs.push_back(products.getResult(1));
      maps.push_back(maps[0]);
    }
    inputs.append({lhsScales, rhsScales});
    maps.append({dimsMap(ctx, termDims, with({i, kb})),
                 dimsMap(ctx, termDims, with({j, kb})),
                 dimsMap(ctx, termDims, with({i, j}))});
    Value totalInit = createFilled(rewriter, loc, accType.getShape(),
                                   rewriter.getF32FloatAttr(0.0f));
    iterators = parallel(termDims);
    iterators[kb] = utils::IteratorType::reduction;
    int fractionBits = codecs::getFractionBits(*lhs.element) +
                       codecs::getFractionBits(*rhs.element);
    Value total =
        linalg::GenericOp::create(
            rewriter, loc, accType, inputs, totalInit, maps, iterators,
            [&](OpBuilder &b, Location loc, ValueRange args) {
              ImplicitLocOpBuilder ib(loc, b);
              Value product = args[0];
              Value floatProduct = withFloats ? args[1] : Value();
              ValueRange rest = args.drop_front(withFloats ? 2 : 1);
              DecodedScale sa = decodeScale(ib, lhs, rest[0], termType);
              DecodedScale sb = decodeScale(ib, rhs, rest[1], termType);

              // The exact term, rounded once.
              Value integer = product;
              if (productType != termType)
                integer = arith::ExtSIOp::create(ib, termType, integer);
              if (sa.mantissa)
                integer = arith::MulIOp::create(ib, integer, sa.mantissa);
              if (sb.mantissa)
                integer = arith::MulIOp::create(ib, integer, sb.mantissa);
              Value exponent = arith::SubIOp::create(
                  ib, arith::AddIOp::create(ib, sa.exponent, sb.exponent),
                  codecs::i32Const(ib, fractionBits));
              Value term =
                  codecs::roundScaledIntegerToFloat(ib, integer, exponent);

              // The IEEE term of a pair with NaN/Inf somewhere.
              Value finite = arith::AndIOp::create(ib, sa.finite, sb.finite);
              Value special;
              if (withFloats) {
                Value magnitude = math::AbsFOp::create(ib, floatProduct);
                Value finiteSum = arith::CmpFOp::create(
                    ib, arith::CmpFPredicate::OLT, magnitude,
                    codecs::f32Const(ib, INFINITY));
                finite = arith::AndIOp::create(ib, finite, finiteSum);
                special = arith::MulFOp::create(
                    ib, arith::MulFOp::create(ib, floatProduct, sa.value),
                    sb.value);
              } else {
                special = codecs::f32Const(ib, NAN);
              }
              term = arith::SelectOp::create(ib, finite, term, special);
              linalg::YieldOp::create(
                  ib, arith::AddFOp::create(ib, args.back(), term).getResult());
            })
            .getResult(0);

    // 4. C = acc + f32(g · T), g = S_dec,a · S_dec,b (1 when absent), or
    // the op's alpha ([TE2]).
    Value g = lhs.globalDecode;
    if (!adaptor.getAlpha().empty())
      g = adaptor.getAlpha().front();
    else if (rhs.globalDecode)
      g = g ? arith::MulFOp::create(rewriter, loc, g, rhs.globalDecode)
                  .getResult()
            : rhs.globalDecode;
    auto identity = AffineMap::getMultiDimIdentityMap(rank, ctx);
    Value init =
        createEmpty(rewriter, loc, accType.getShape(), rewriter.getF32Type());
    Value result =
        linalg::GenericOp::create(
            rewriter, loc, accType, ValueRange{acc, total}, init,
            {identity, identity, identity}, parallel(rank),
            [&](OpBuilder &b, Location loc, ValueRange args) {
              Value scaled = args[1];
              if (g)
                scaled = arith::MulFOp::create(b, loc, g, scaled);
              linalg::YieldOp::create(
                  b, loc,
                  arith::AddFOp::create(b, loc, args[0], scaled).getResult());
            })
            .getResult(0);
    rewriter.replaceOp(op, result);
    return success();
  }
};

} // namespace

void mlir::fp4train::populateScaledMatmulOpLoweringPatterns(
    TypeConverter &converter, RewritePatternSet &patterns) {
  patterns.add<ScaledMatmulOpLowering>(converter, patterns.getContext());
}
