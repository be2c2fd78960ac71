//===- FP4TrainToStandard.cpp - The fp4train-expand pass ------------------===//
//
// The pattern set and the pass, on the type conversion of FP4TrainCommon.
// The op lowerings live one family per file (Quantize, Hadamard,
// ScaledMatmul, Layout).
//
//===----------------------------------------------------------------------===//

#include "fp4train/Conversion/FP4TrainToStandard/FP4TrainToStandard.h"

#include "fp4train/Conversion/Passes.h"
#include "fp4train/Dialect/FP4Train/IR/FP4TrainOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

namespace mlir::fp4train {
#define GEN_PASS_DEF_FP4TRAINEXPAND
#include "fp4train/Conversion/Passes.h.inc"
} // namespace mlir::fp4train

using namespace mlir;
using namespace mlir::fp4train;

void mlir::fp4train::populateFP4TrainToStandardConversionPatterns(
    TypeConverter &converter, RewritePatternSet &patterns) {
  populateQuantizeOpLoweringPatterns(converter, patterns);
  populateHadamardOpLoweringPatterns(converter, patterns);
  populateScaledMatmulOpLoweringPatterns(converter, patterns);
  populateLayoutOpLoweringPatterns(converter, patterns);
}

namespace {

struct FP4TrainExpandPass
    : public fp4train::impl::FP4TrainExpandBase<FP4TrainExpandPass> {
  using Base::Base;

  void runOnOperation() override {
    MLIRContext *ctx = &getContext();
    FP4TrainTypeConverter converter;
    ConversionTarget target(*ctx);
    target.addLegalDialect<arith::ArithDialect, linalg::LinalgDialect,
                           math::MathDialect, tensor::TensorDialect>();
    RewritePatternSet patterns(ctx);
    populateFP4TrainToStandardConversionPatterns(converter, patterns);
    populateFP4TrainTypeConversionBoundaries(converter, target, patterns);
    if (failed(applyPartialConversion(getOperation(), target,
                                      std::move(patterns))))
      return signalPassFailure();
    dropFP4TrainAttributes();
  }

  /// Removes the discardable attributes whose values are fp4train's (a
  /// role the recipe kept in high precision, a recipe): the expansion
  /// promises upstream IR, which upstream tools parse without this dialect.
  void dropFP4TrainAttributes() {
    getOperation()->walk([](Operation *op) {
      SmallVector<StringAttr> names;
      for (NamedAttribute attr : op->getDiscardableAttrs())
        if (isa<FP4TrainDialect>(attr.getValue().getDialect()))
          names.push_back(attr.getName());
      for (StringAttr name : names)
        op->removeDiscardableAttr(name);
    });
  }
};

} // namespace
