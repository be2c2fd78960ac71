//===- GPUConversion.cpp - The conversion every GPU target pass runs ------===//

#include "fp4train/Conversion/FP4TrainGPUCommon/KernelBuilders.h"

#include "fp4train/Conversion/FP4TrainToStandard/FP4TrainToStandard.h"

using namespace mlir;
using namespace mlir::fp4train;

LogicalResult mlir::fp4train::applyFP4TrainGPUConversion(
    Operation *root,
    function_ref<void(TypeConverter &, RewritePatternSet &)> populateKernels) {
  MLIRContext *ctx = root->getContext();
  FP4TrainToStandardTypeConverter converter;
  ConversionTarget target(*ctx);
  target.markUnknownOpDynamicallyLegal([](Operation *) { return true; });
  RewritePatternSet patterns(ctx);
  populateKernels(converter, patterns);
  populateFP4TrainToStandardConversionPatterns(converter, patterns);
  populateFP4TrainTypeConversionBoundaries(converter, target, patterns);
  return applyPartialConversion(root, target, std::move(patterns));
}
