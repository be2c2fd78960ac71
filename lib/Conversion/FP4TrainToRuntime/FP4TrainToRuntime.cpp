//===- FP4TrainToRuntime.cpp - The fp4train-to-runtime pass ---------------===//
//
// Every compute op becomes one call of a runtime entry point
// (fp4train/Runtime/Runtime.h) on memrefs:
//
//   operand tensors --bufferization.to_buffer read_only--> memref (any
//   strides) --memref.cast--> memref<*xT>; each result is a fresh
//   memref.alloc, filled by the call, and returned to a tensor with
//   bufferization.to_tensor restrict writable.
//
// `restrict` is sound because the allocation has no other tensor view, and
// it lets one-shot bufferization reuse the buffer in place. The operands are
// read-only, so bufferization never needs to copy them for the call.
//
//===----------------------------------------------------------------------===//

#include "fp4train/Conversion/FP4TrainToRuntime/FP4TrainToRuntime.h"

#include "fp4train/Conversion/FP4TrainToStandard/FP4TrainToStandard.h"
#include "fp4train/Dialect/FP4Train/IR/FP4TrainOps.h"
#include "fp4train/Numerics/Hadamard.h"
#include "fp4train/Runtime/Runtime.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Pass/Pass.h"

namespace mlir::fp4train {
#define GEN_PASS_DECL_FP4TRAINTORUNTIME
#define GEN_PASS_DEF_FP4TRAINTORUNTIME
#include "fp4train/Conversion/Passes.h.inc"
} // namespace mlir::fp4train

using namespace mlir;
using namespace mlir::fp4train;
namespace numerics = ::fp4train::numerics;
namespace rt = ::fp4train::runtime;

namespace {

/// How the runtime describes a block-scaled type: the arguments `format`,
/// `blockSize`, `axis` and the layout bits of `flags`.
struct RuntimeLayout {
  int32_t format;
  int64_t blockSize;
  int64_t axis;
  int32_t flags;
};

} // namespace

static RuntimeLayout getRuntimeLayout(ScaledTensorType type) {
  RuntimeLayout layout;
  bool e4m3Scales = isa<Float8E4M3FNType>(type.getScaleType());
  Type element = type.getElementType();
  if (isa<Float4E2M1FNType>(element))
    layout.format = e4m3Scales ? FP4TRAIN_RT_NVFP4 : FP4TRAIN_RT_MXFP4;
  else if (isa<Float8E4M3FNType>(element))
    layout.format = FP4TRAIN_RT_MXFP8_E4M3;
  else
    layout.format = FP4TRAIN_RT_MXFP8_E5M2;
  SmallVector<int64_t> blocked = type.getBlockedDims();
  layout.blockSize = *llvm::max_element(type.getBlockShape());
  layout.axis = blocked.empty() ? type.getRank() - 1 : blocked.front();
  layout.flags = 0;
  if (type.is2DBlocked())
    layout.flags |= FP4TRAIN_RT_TWO_D;
  if (e4m3Scales && !type.getHasGlobalScale())
    layout.flags |= FP4TRAIN_RT_NO_GLOBAL;
  return layout;
}

/// Whether the numerics library accepts `type`'s layout; reports on `op`.
static LogicalResult checkLayout(Operation *op, ScaledTensorType type) {
  RuntimeLayout layout = getRuntimeLayout(type);
  if (type.is2DBlocked() &&
      type.getBlockedDims() !=
          SmallVector<int64_t>{type.getRank() - 2, type.getRank() - 1})
    return op->emitOpError("the runtime tiles the last two dimensions only, "
                           "got ")
           << type;
  numerics::Expected<numerics::QuantConfig> config = numerics::validateConfig(
      std::vector<int64_t>(type.getShape().begin(), type.getShape().end()),
      rt::makeQuantConfig(layout.format, layout.blockSize, layout.axis,
                          layout.flags, 0, 0.0f));
  if (!config)
    return op->emitOpError("the runtime cannot handle ")
           << type << ": " << config.error().message;
  return success();
}

LogicalResult mlir::fp4train::verifyRuntimeSupport(ModuleOp module) {
  WalkResult result = module.walk([](Operation *op) -> WalkResult {
    LogicalResult ok = success();
    if (auto quantize = dyn_cast<QuantizeOp>(op))
      ok = checkLayout(op, quantize.getResult().getType());
    else if (auto dequantize = dyn_cast<DequantizeOp>(op))
      ok = checkLayout(op, dequantize.getInput().getType());
    else if (auto matmul = dyn_cast<ScaledMatmulOp>(op))
      ok = succeeded(checkLayout(op, matmul.getLhs().getType()))
               ? checkLayout(op, matmul.getRhs().getType())
               : failure();
    else if (auto hadamard = dyn_cast<HadamardOp>(op);
             hadamard &&
             !numerics::isValidHadamardSize(hadamard.getRotation().getSize()))
      ok = op->emitOpError("the runtime has no Hadamard rotation of size ")
           << hadamard.getRotation().getSize();
    return failed(ok) ? WalkResult::interrupt() : WalkResult::advance();
  });
  return failure(result.wasInterrupted());
}

//===----------------------------------------------------------------------===//
// Building blocks
//===----------------------------------------------------------------------===//

/// Converts the elements of a tensor between f32 and bf16/f16 (extf or
/// truncf, elementwise).
static Value convertElements(OpBuilder &b, Location loc, Value input,
                             Type elementType) {
  auto type = cast<RankedTensorType>(input.getType());
  if (type.getElementType() == elementType)
    return input;
  bool extend = elementType.getIntOrFloatBitWidth() >
                type.getElementType().getIntOrFloatBitWidth();
  auto map = AffineMap::getMultiDimIdentityMap(type.getRank(), b.getContext());
  Value init = tensor::EmptyOp::create(b, loc, type.getShape(), elementType);
  return linalg::GenericOp::create(
             b, loc, init.getType(), input, init, {map, map},
             SmallVector<utils::IteratorType>(type.getRank(),
                                              utils::IteratorType::parallel),
             [&](OpBuilder &b, Location loc, ValueRange args) {
               Value converted =
                   extend
                       ? arith::ExtFOp::create(b, loc, elementType, args[0])
                             .getResult()
                       : arith::TruncFOp::create(b, loc, elementType, args[0])
                             .getResult();
               linalg::YieldOp::create(b, loc, converted);
             })
      .getResult(0);
}

/// `tensor` as an unranked memref argument of a call that only reads it.
static Value toUnrankedBuffer(OpBuilder &b, Location loc, Value tensor) {
  auto type = cast<RankedTensorType>(tensor.getType());
  // A fully dynamic strided layout accepts whatever buffer bufferization
  // picks (a slice, a transposed view) without a copy; the runtime reads
  // strides from the descriptor.
  SmallVector<int64_t> strides(type.getRank(), ShapedType::kDynamic);
  auto layout =
      StridedLayoutAttr::get(b.getContext(), ShapedType::kDynamic, strides);
  auto memrefType =
      MemRefType::get(type.getShape(), type.getElementType(), layout);
  Value buffer = bufferization::ToBufferOp::create(b, loc, memrefType, tensor,
                                                   /*read_only=*/true);
  return memref::CastOp::create(
      b, loc, mlir::UnrankedMemRefType::get(type.getElementType(), 0), buffer);
}

namespace {

/// A result buffer of a runtime call.
struct ResultBuffer {
  Value buffer;
  Value unranked;

  ResultBuffer(OpBuilder &b, Location loc, ArrayRef<int64_t> shape,
               Type elementType) {
    auto type = MemRefType::get(shape, elementType);
    buffer = memref::AllocOp::create(b, loc, type);
    unranked = memref::CastOp::create(
        b, loc, mlir::UnrankedMemRefType::get(elementType, 0), buffer);
  }

  /// The buffer as a tensor, once the call has written it.
  Value toTensor(OpBuilder &b, Location loc) const {
    auto type = cast<MemRefType>(buffer.getType());
    return bufferization::ToTensorOp::create(
        b, loc, RankedTensorType::get(type.getShape(), type.getElementType()),
        buffer, /*restrict=*/true, /*writable=*/true);
  }
};

/// Scalar arguments of a call.
struct Scalars {
  OpBuilder &b;
  Location loc;

  Value i32(int32_t value) {
    return arith::ConstantIntOp::create(b, loc, b.getI32Type(), value);
  }
  Value i64(int64_t value) {
    return arith::ConstantIntOp::create(b, loc, b.getI64Type(), value);
  }
  Value f32(float value) {
    return arith::ConstantFloatOp::create(b, loc, b.getF32Type(),
                                          APFloat(value));
  }
};

} // namespace

/// Calls runtime function `name`, declaring it (private, with the C
/// interface) in the enclosing module on first use.
static func::CallOp callRuntime(OpBuilder &b, Operation *anchor, StringRef name,
                                ValueRange args, TypeRange results) {
  auto module = anchor->getParentOfType<ModuleOp>();
  auto function = module.lookupSymbol<func::FuncOp>(name);
  if (!function) {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(module.getBody());
    function = func::FuncOp::create(
        b, module.getLoc(), name, b.getFunctionType(TypeRange(args), results));
    function.setPrivate();
    function->setAttr(LLVM::LLVMDialect::getEmitCWrapperAttrName(),
                      b.getUnitAttr());
  }
  return func::CallOp::create(b, anchor->getLoc(), function, args);
}

//===----------------------------------------------------------------------===//
// Patterns
//===----------------------------------------------------------------------===//

namespace {

struct QuantizeOpLowering : public OpConversionPattern<QuantizeOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(QuantizeOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    ScaledTensorType type = op.getResult().getType();
    RuntimeLayout layout = getRuntimeLayout(type);
    int32_t flags = layout.flags;
    if (op.getScaleMode() == ScaleMode::rceil)
      flags |= FP4TRAIN_RT_RCEIL;
    if (op.getRounding() == RoundingMode::stochastic)
      flags |= FP4TRAIN_RT_STOCHASTIC;
    if (adaptor.getAmax())
      flags |= FP4TRAIN_RT_SUPPLIED_AMAX;

    Scalars s{rewriter, loc};
    Value input = convertElements(rewriter, loc, adaptor.getInput(),
                                  rewriter.getF32Type());
    ResultBuffer codes(rewriter, loc, getStoredCodesType(type).getShape(),
                       rewriter.getI8Type());
    ResultBuffer scales(rewriter, loc, type.getScalesShape(),
                        rewriter.getI8Type());
    Value seed = adaptor.getSeed() ? adaptor.getSeed() : s.i64(0);
    Value amax = adaptor.getAmax() ? adaptor.getAmax() : s.f32(0.0f);
    // [SH3] A part passes its origin and the logical shape.
    SmallVector<Value> part;
    if (std::optional<ArrayRef<int64_t>> logicalShape = op.getLogicalShape()) {
      for (Value offset : adaptor.getOrigin())
        part.push_back(arith::IndexCastOp::create(
            rewriter, loc, rewriter.getI64Type(), offset));
      for (int64_t size : *logicalShape)
        part.push_back(s.i64(size));
    }
    Value partTensor = tensor::FromElementsOp::create(
        rewriter, loc,
        RankedTensorType::get({int64_t(part.size())}, rewriter.getI64Type()),
        part);
    func::CallOp call =
        callRuntime(rewriter, op, rt::kQuantizeFunction,
                    {toUnrankedBuffer(rewriter, loc, input), codes.unranked,
                     scales.unranked, s.i32(layout.format),
                     s.i64(layout.blockSize), s.i64(layout.axis), s.i32(flags),
                     seed, amax, toUnrankedBuffer(rewriter, loc, partTensor)},
                    rewriter.getF32Type());

    SmallVector<Value> results = {codes.toTensor(rewriter, loc),
                                  scales.toTensor(rewriter, loc)};
    if (type.getHasGlobalScale())
      results.push_back(call.getResult(0));
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
    ScaledTensorType type = op.getInput().getType();
    RuntimeLayout layout = getRuntimeLayout(type);
    ValueRange parts = adaptor.getInput();
    Scalars s{rewriter, loc};
    ResultBuffer values(rewriter, loc, type.getShape(), rewriter.getF32Type());
    callRuntime(rewriter, op, rt::kDequantizeFunction,
                {toUnrankedBuffer(rewriter, loc, parts[0]),
                 toUnrankedBuffer(rewriter, loc, parts[1]), values.unranked,
                 s.i32(layout.format), s.i64(layout.blockSize),
                 s.i64(layout.axis), s.i32(layout.flags),
                 type.getHasGlobalScale() ? parts[2] : s.f32(1.0f)},
                {});
    rewriter.replaceOp(
        op, convertElements(rewriter, loc, values.toTensor(rewriter, loc),
                            op.getResult().getType().getElementType()));
    return success();
  }
};

struct HadamardOpLowering : public OpConversionPattern<HadamardOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(HadamardOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    HadamardAttr rotation = op.getRotation();
    auto type = cast<RankedTensorType>(op.getInput().getType());
    Scalars s{rewriter, loc};

    // A vector spelled out in the attribute travels as a constant; the
    // library's own vectors (none, the default fixed one, random) are
    // chosen by mode, so the call passes an empty one.
    int32_t mode = FP4TRAIN_RT_SIGNS_NONE;
    SmallVector<float> signs;
    switch (rotation.getSigns()) {
    case HadamardSigns::none:
      break;
    case HadamardSigns::fixed:
      mode = FP4TRAIN_RT_SIGNS_FIXED;
      for (int32_t sign : rotation.getSignVector())
        signs.push_back(float(sign));
      if (!signs.empty())
        mode = FP4TRAIN_RT_SIGNS_EXPLICIT;
      break;
    case HadamardSigns::random:
      mode = FP4TRAIN_RT_SIGNS_RANDOM;
      break;
    }
    auto signType =
        RankedTensorType::get({int64_t(signs.size())}, rewriter.getF32Type());
    Value signTensor = arith::ConstantOp::create(
        rewriter, loc,
        DenseElementsAttr::get(signType, ArrayRef<float>(signs)));

    ResultBuffer result(rewriter, loc, type.getShape(), rewriter.getF32Type());
    callRuntime(rewriter, op, rt::kHadamardFunction,
                {toUnrankedBuffer(rewriter, loc, adaptor.getInput()),
                 result.unranked, toUnrankedBuffer(rewriter, loc, signTensor),
                 s.i64(rotation.getSize()), s.i64(op.getDim()), s.i32(mode),
                 adaptor.getSeed() ? adaptor.getSeed() : s.i64(0),
                 adaptor.getStep() ? adaptor.getStep() : s.i64(0),
                 s.i32(op.getInverse() ? 1 : 0)},
                {});
    rewriter.replaceOp(op, result.toTensor(rewriter, loc));
    return success();
  }
};

struct ScaledMatmulOpLowering : public OpConversionPattern<ScaledMatmulOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(ScaledMatmulOp op, OneToNOpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    ScaledTensorType lhsType = op.getLhs().getType();
    ScaledTensorType rhsType = op.getRhs().getType();
    RuntimeLayout lhs = getRuntimeLayout(lhsType);
    RuntimeLayout rhs = getRuntimeLayout(rhsType);
    ValueRange lhsParts = adaptor.getLhs(), rhsParts = adaptor.getRhs();
    Value acc = adaptor.getAcc().front();
    auto accType = cast<RankedTensorType>(acc.getType());
    Scalars s{rewriter, loc};
    auto globalDecode = [&](ValueRange parts) {
      return parts.size() == 3 ? parts[2] : s.f32(1.0f);
    };
    // The runtime's g is the product of the two factors it is given: alpha
    // ([TE2]) times 1 is alpha, exactly.
    Value lhsFactor = globalDecode(lhsParts),
          rhsFactor = globalDecode(rhsParts);
    if (!adaptor.getAlpha().empty()) {
      lhsFactor = adaptor.getAlpha().front();
      rhsFactor = s.f32(1.0f);
    }

    ResultBuffer result(rewriter, loc, accType.getShape(),
                        rewriter.getF32Type());
    callRuntime(rewriter, op, rt::kScaledMatmulFunction,
                {toUnrankedBuffer(rewriter, loc, lhsParts[0]),
                 toUnrankedBuffer(rewriter, loc, lhsParts[1]),
                 toUnrankedBuffer(rewriter, loc, rhsParts[0]),
                 toUnrankedBuffer(rewriter, loc, rhsParts[1]),
                 toUnrankedBuffer(rewriter, loc, acc), result.unranked,
                 s.i32(lhs.format), s.i32(lhs.flags), lhsFactor,
                 s.i32(rhs.format), s.i32(rhs.flags), rhsFactor,
                 s.i64(lhsType.getBlockShape().back())},
                {});
    rewriter.replaceOp(op, result.toTensor(rewriter, loc));
    return success();
  }
};

} // namespace

void mlir::fp4train::populateFP4TrainToRuntimeConversionPatterns(
    TypeConverter &converter, RewritePatternSet &patterns) {
  patterns.add<QuantizeOpLowering, DequantizeOpLowering, HadamardOpLowering,
               ScaledMatmulOpLowering>(converter, patterns.getContext());
  // Under the shared type conversion, pack, unpack and transpose are the
  // same rewrites as in the expansion.
  populateLayoutOpLoweringPatterns(converter, patterns);
}

//===----------------------------------------------------------------------===//
// Pass
//===----------------------------------------------------------------------===//

namespace {

struct FP4TrainToRuntimePass
    : public mlir::fp4train::impl::FP4TrainToRuntimeBase<
          FP4TrainToRuntimePass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (failed(verifyRuntimeSupport(module)))
      return signalPassFailure();

    MLIRContext *ctx = &getContext();
    FP4TrainTypeConverter converter;
    ConversionTarget target(*ctx);
    target.addLegalDialect<
        arith::ArithDialect, bufferization::BufferizationDialect,
        linalg::LinalgDialect, memref::MemRefDialect, tensor::TensorDialect>();
    RewritePatternSet patterns(ctx);
    populateFP4TrainToRuntimeConversionPatterns(converter, patterns);
    populateFP4TrainTypeConversionBoundaries(converter, target, patterns);
    if (failed(applyPartialConversion(module, target, std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
