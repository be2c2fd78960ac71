//===- FP4TrainToRuntime.h - Lower fp4train ops to runtime calls -*- C++
//-*-===//
//
// The fast CPU path: every fp4train op becomes a call to the C entry points
// of fp4train/Runtime/Runtime.h, which run the numerics library. Block-scaled
// values use the 1:N type conversion of the exact expansion
// (FP4TrainTypeConverter), so the two paths exchange the same i8
// codes, i8 scales and f32 global scale, and agree bit for bit.
//
//===----------------------------------------------------------------------===//

#ifndef FP4TRAIN_CONVERSION_FP4TRAINTORUNTIME_FP4TRAINTORUNTIME_H
#define FP4TRAIN_CONVERSION_FP4TRAINTORUNTIME_FP4TRAINTORUNTIME_H

#include "mlir/Transforms/DialectConversion.h"

namespace mlir {
class ModuleOp;

namespace fp4train {

/// Patterns lowering quantize, dequantize, hadamard and scaled_matmul to
/// runtime calls on memrefs (`bufferization.to_buffer` of the operands, a
/// `memref.alloc` per result, `bufferization.to_tensor` back), and pack,
/// unpack and transpose as the expansion does. The runtime functions are
/// declared in the enclosing module on first use.
void populateFP4TrainToRuntimeConversionPatterns(TypeConverter &converter,
                                                 RewritePatternSet &patterns);

/// Checks that the runtime supports every fp4train op of `module` (the
/// numerics library accepts its format, block and shape), reporting the
/// first unsupported one on the op.
LogicalResult verifyRuntimeSupport(ModuleOp module);

} // namespace fp4train
} // namespace mlir

#endif // FP4TRAIN_CONVERSION_FP4TRAINTORUNTIME_FP4TRAINTORUNTIME_H
