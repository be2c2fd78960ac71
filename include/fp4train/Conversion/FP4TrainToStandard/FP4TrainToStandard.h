//===- FP4TrainToStandard.h - Expand fp4train to upstream ops ---*- C++ -*-===//
//
// The exact CPU expansion (fp4train-expand, docs/passes.md): every fp4train
// op and type becomes arith/math/linalg/tensor ops on tensors, bit-identical
// to the numerics library ([CHK2] in docs/semantics.md, docs/numerics.md).
//
//===----------------------------------------------------------------------===//

#ifndef FP4TRAIN_CONVERSION_FP4TRAINTOSTANDARD_FP4TRAINTOSTANDARD_H
#define FP4TRAIN_CONVERSION_FP4TRAINTOSTANDARD_FP4TRAINTOSTANDARD_H

#include "fp4train/Conversion/FP4TrainCommon/TypeConversion.h"

#include "mlir/Transforms/DialectConversion.h"

namespace mlir {
namespace fp4train {
class HadamardAttr;

/// Patterns lowering every fp4train op (quantize, dequantize, hadamard,
/// scaled_matmul, transpose, pack, unpack) to arith, math, linalg and tensor.
void populateFP4TrainToStandardConversionPatterns(TypeConverter &converter,
                                                  RewritePatternSet &patterns);

/// [H1] The sign vector of `rotation` as a `tensor<n x f32>` of +-1, or a
/// null Value for `none` signs (all +1, whose multiply is the identity):
/// the attribute's vector or the library's default one for `fixed` (a
/// constant), Philox(`seed`, `step`) for `random` (a linalg.generic). The
/// expansion and the gfx950 Hadamard kernel (which reads it as a buffer)
/// share it, so their signs cannot differ.
Value buildHadamardSigns(OpBuilder &b, Location loc, HadamardAttr rotation,
                         Value seed, Value step);

// One entry point per op family (one file each).
void populateQuantizeOpLoweringPatterns(TypeConverter &converter,
                                        RewritePatternSet &patterns);
void populateHadamardOpLoweringPatterns(TypeConverter &converter,
                                        RewritePatternSet &patterns);
void populateScaledMatmulOpLoweringPatterns(TypeConverter &converter,
                                            RewritePatternSet &patterns);
void populateLayoutOpLoweringPatterns(TypeConverter &converter,
                                      RewritePatternSet &patterns);

} // namespace fp4train
} // namespace mlir

#endif // FP4TRAIN_CONVERSION_FP4TRAINTOSTANDARD_FP4TRAINTOSTANDARD_H
