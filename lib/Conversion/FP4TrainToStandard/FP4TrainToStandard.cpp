//===- FP4TrainToStandard.cpp - The fp4train-expand pass ------------------===//
//
// The type conversion, the pattern set and the pass. The op lowerings live
// one family per file (Quantize, Hadamard, ScaledMatmul, Layout).
//
//===----------------------------------------------------------------------===//

#include "fp4train/Conversion/FP4TrainToStandard/FP4TrainToStandard.h"

#include "fp4train/Conversion/Passes.h"
#include "fp4train/Dialect/FP4Train/IR/FP4TrainOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Func/Transforms/FuncConversions.h"
#include "mlir/Dialect/SCF/Transforms/Patterns.h"

namespace mlir::fp4train {
#define GEN_PASS_DEF_FP4TRAINEXPAND
#include "fp4train/Conversion/Passes.h.inc"
} // namespace mlir::fp4train

using namespace mlir;
using namespace mlir::fp4train;

/// The element and scale types of [FMT1] (docs/semantics.md), stored as i8
/// codes.
static bool isNarrowFloat(Type type) {
  return isa<Float4E2M1FNType, Float8E4M3FNType, Float8E5M2Type,
             Float8E8M0FNUType>(type);
}

/// Reinterprets a tensor of codes between i8 and a narrow float type
/// (f4E2M1FN goes through i4, its width), for values that cross from
/// converted to unconverted ops.
static Value castCodes(OpBuilder &b, Location loc, RankedTensorType to,
                       Value from) {
  auto fromType = cast<RankedTensorType>(from.getType());
  Type fromElement = fromType.getElementType();
  Type toElement = to.getElementType();
  auto withElement = [&](Type element) {
    return RankedTensorType::get(to.getShape(), element);
  };
  if (toElement.isInteger(8)) {
    unsigned width = fromElement.getIntOrFloatBitWidth();
    Value bits = arith::BitcastOp::create(
        b, loc, withElement(b.getIntegerType(width)), from);
    return width == 8 ? bits : arith::ExtUIOp::create(b, loc, to, bits);
  }
  unsigned width = toElement.getIntOrFloatBitWidth();
  Value bits = width == 8 ? from
                          : arith::TruncIOp::create(
                                b, loc, withElement(b.getIntegerType(width)),
                                from);
  return arith::BitcastOp::create(b, loc, to, bits);
}

FP4TrainToStandardTypeConverter::FP4TrainToStandardTypeConverter() {
  addConversion([](Type type) { return type; });
  addConversion([](RankedTensorType type) -> Type {
    if (!isNarrowFloat(type.getElementType()))
      return type;
    return RankedTensorType::get(type.getShape(),
                                 IntegerType::get(type.getContext(), 8));
  });
  addConversion([](ScaledTensorType type, SmallVectorImpl<Type> &results) {
    Type i8 = IntegerType::get(type.getContext(), 8);
    results.push_back(getStoredCodesType(type));
    results.push_back(RankedTensorType::get(type.getScalesShape(), i8));
    if (type.getHasGlobalScale())
      results.push_back(Float32Type::get(type.getContext()));
    return success();
  });
  auto materialize = [](OpBuilder &b, Type type, ValueRange inputs,
                        Location loc) -> Value {
    auto tensorType = dyn_cast<RankedTensorType>(type);
    if (!tensorType || inputs.size() != 1 ||
        !isa<RankedTensorType>(inputs[0].getType()))
      return Value();
    return castCodes(b, loc, tensorType, inputs[0]);
  };
  addSourceMaterialization(materialize);
  addTargetMaterialization(materialize);
}

void mlir::fp4train::populateFP4TrainToStandardConversionPatterns(
    TypeConverter &converter, RewritePatternSet &patterns) {
  populateQuantizeOpLoweringPatterns(converter, patterns);
  populateHadamardOpLoweringPatterns(converter, patterns);
  populateScaledMatmulOpLoweringPatterns(converter, patterns);
  populateLayoutOpLoweringPatterns(converter, patterns);
}

void mlir::fp4train::populateFP4TrainTypeConversionBoundaries(
    TypeConverter &converter, ConversionTarget &target,
    RewritePatternSet &patterns) {
  target.addIllegalDialect<FP4TrainDialect>();
  target.addDynamicallyLegalOp<func::FuncOp>([&](func::FuncOp op) {
    return converter.isSignatureLegal(op.getFunctionType()) &&
           converter.isLegal(&op.getBody());
  });
  target.addDynamicallyLegalOp<func::ReturnOp, func::CallOp>(
      [&](Operation *op) { return converter.isLegal(op); });
  populateFunctionOpInterfaceTypeConversionPattern<func::FuncOp>(patterns,
                                                                 converter);
  populateCallOpTypeConversionPattern(patterns, converter);
  populateReturnOpTypeConversionPattern(patterns, converter);
  scf::populateSCFStructuralTypeConversionsAndLegality(converter, patterns,
                                                       target);
}

namespace {

struct FP4TrainExpandPass
    : public fp4train::impl::FP4TrainExpandBase<FP4TrainExpandPass> {
  using Base::Base;

  void runOnOperation() override {
    MLIRContext *ctx = &getContext();
    FP4TrainToStandardTypeConverter converter;
    ConversionTarget target(*ctx);
    target.addLegalDialect<arith::ArithDialect, linalg::LinalgDialect,
                           math::MathDialect, tensor::TensorDialect>();
    RewritePatternSet patterns(ctx);
    populateFP4TrainToStandardConversionPatterns(converter, patterns);
    populateFP4TrainTypeConversionBoundaries(converter, target, patterns);
    if (failed(applyPartialConversion(getOperation(), target,
                                      std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
