//===- FP4TrainToStandard.h - Expand fp4train to upstream ops ---*- C++ -*-===//
//
// The exact CPU expansion (fp4train-expand, docs/passes.md): every fp4train
// op and type becomes arith/math/linalg/tensor ops on tensors, bit-identical
// to the numerics library ([CHK2] in docs/semantics.md, docs/numerics.md).
//
//===----------------------------------------------------------------------===//

#ifndef FP4TRAIN_CONVERSION_FP4TRAINTOSTANDARD_FP4TRAINTOSTANDARD_H
#define FP4TRAIN_CONVERSION_FP4TRAINTOSTANDARD_FP4TRAINTOSTANDARD_H

#include "mlir/Transforms/DialectConversion.h"

namespace mlir {
namespace fp4train {
class HadamardAttr;
class ScaledTensorType;

/// The type conversion of the expansion:
///  - `!fp4train.scaled<...>` becomes, 1:N, the stored element codes
///    (getStoredCodesType: E2M1 two per byte along the last dimension,
///    [PK1]), the block scale codes (`tensor<shape/block x i8>`) and, when
///    the type has one, the f32 global decode scale;
///  - a tensor of f4E2M1FN, f8E4M3FN, f8E5M2 or f8E8M0FNU (what `unpack`
///    returns and `pack` takes) becomes the i8 tensor of its codes, in the
///    low bits (E2M1: bits 3..0, sign in bit 3), the layout of the numerics
///    library;
///  - every other type is left unchanged.
class FP4TrainToStandardTypeConverter : public TypeConverter {
public:
  FP4TrainToStandardTypeConverter();
};

/// [PK1] Whether codes of `element` are stored two per byte (f4E2M1FN):
/// the MLIR side of numerics::isPackedStorage, for every lowering and
/// kernel builder that lays codes out.
bool isPackedStorage(Type element);

/// [PK1] The stored element codes of `type` (fp4train/Numerics/Storage.h):
/// `tensor<... x ceil(n/2) x i8>` for E2M1 codes two per byte (element 2j
/// in the low nibble of byte j of its row), `tensor<shape x i8>` for FP8.
RankedTensorType getStoredCodesType(ScaledTensorType type);

/// [PK1] `codes` (an i8 tensor of the logical shape, one code per element,
/// E2M1 in bits 3..0) in the stored form of `element`'s codes; the identity
/// for FP8. linalg on tensors.
Value buildStoreCodes(OpBuilder &b, Location loc, Type element, Value codes);
/// [PK1] The inverse: stored codes of `element` back to one i8 per element
/// of `shape` (E2M1 in bits 3..0, bits 7..4 zero).
Value buildLoadCodes(OpBuilder &b, Location loc, Type element, Value stored,
                     ArrayRef<int64_t> shape);

/// Makes the fp4train dialect illegal in `target` and adds the patterns and
/// legality rules that carry `converter` through function signatures, calls,
/// returns and scf regions. Shared by every lowering that uses the type
/// conversion above (fp4train-expand, fp4train-to-runtime).
void populateFP4TrainTypeConversionBoundaries(TypeConverter &converter,
                                              ConversionTarget &target,
                                              RewritePatternSet &patterns);

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
