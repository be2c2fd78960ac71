//===- GPUConversion.cpp - The conversion every GPU target pass runs ------===//

#include "fp4train/Conversion/FP4TrainGPUCommon/KernelBuilders.h"

#include "fp4train/Conversion/FP4TrainToStandard/FP4TrainToStandard.h"
#include "fp4train/Dialect/FP4Train/IR/FP4TrainDialect.h"
#include "fp4train/Numerics/ElementCount.h"

#include "mlir/IR/BuiltinTypes.h"

using namespace mlir;
using namespace mlir::fp4train;

/// The kernels flatten, tile and allocate the tensors of the fp4train ops
/// they take, and size all of that in int64 (memref and tensor shapes, byte
/// counts of device buffers). A tensor whose element or byte count int64
/// cannot hold (a matmul with two dimensions near 2^32) would wrap around
/// into an invalid reshape or a small allocation: it is an error here, with
/// the count computed by the numerics library's checked helper.
static LogicalResult checkRepresentableSizes(Operation *root) {
  WalkResult result = root->walk([](Operation *op) {
    if (!isa<FP4TrainDialect>(op->getDialect()))
      return WalkResult::advance();
    for (Type type : llvm::concat<const Type>(op->getOperandTypes(),
                                              op->getResultTypes())) {
      auto shaped = dyn_cast<ShapedType>(type);
      if (!shaped || !shaped.hasStaticShape())
        continue;
      Type element = shaped.getElementType();
      unsigned bits =
          element.isIntOrFloat() ? element.getIntOrFloatBitWidth() : 64;
      SmallVector<int64_t> sizes(shaped.getShape());
      sizes.push_back(std::max<int64_t>(1, (bits + 7) / 8));
      if (!::fp4train::checkedNumElements(sizes)) {
        op->emitOpError("operates on ")
            << type
            << ", whose size in bytes does not fit in int64: GPU kernels "
               "cannot address it";
        return WalkResult::interrupt();
      }
    }
    return WalkResult::advance();
  });
  return failure(result.wasInterrupted());
}

LogicalResult mlir::fp4train::applyFP4TrainGPUConversion(
    Operation *root,
    function_ref<void(TypeConverter &, RewritePatternSet &)> populateKernels) {
  if (failed(checkRepresentableSizes(root)))
    return failure();
  MLIRContext *ctx = root->getContext();
  FP4TrainTypeConverter converter;
  ConversionTarget target(*ctx);
  target.markUnknownOpDynamicallyLegal([](Operation *) { return true; });
  RewritePatternSet patterns(ctx);
  populateKernels(converter, patterns);
  populateFP4TrainToStandardConversionPatterns(converter, patterns);
  populateFP4TrainTypeConversionBoundaries(converter, target, patterns);
  return applyPartialConversion(root, target, std::move(patterns));
}
