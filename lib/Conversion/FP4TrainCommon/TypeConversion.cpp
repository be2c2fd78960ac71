//===- TypeConversion.cpp - The 1:N type conversion of fp4train -----------===//
//
// The type converter every fp4train lowering uses and the boundary patterns
// that carry it through functions, calls, returns and scf regions.
//
//===----------------------------------------------------------------------===//

#include "fp4train/Conversion/FP4TrainCommon/TypeConversion.h"

#include "fp4train/Dialect/FP4Train/IR/FP4TrainDialect.h"
#include "fp4train/Dialect/FP4Train/IR/FP4TrainTypes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Func/Transforms/FuncConversions.h"
#include "mlir/Dialect/SCF/Transforms/Patterns.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

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
  Value bits = width == 8
                   ? from
                   : arith::TruncIOp::create(
                         b, loc, withElement(b.getIntegerType(width)), from);
  return arith::BitcastOp::create(b, loc, to, bits);
}

FP4TrainTypeConverter::FP4TrainTypeConverter() {
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
