//===- TypeConversion.h - What every fp4train lowering shares ---*- C++ -*-===//
//
// The foundation of the fp4train lowerings, as upstream's LLVMCommon is of
// the LLVM ones: the 1:N type conversion of `!fp4train.scaled` tensors into
// their stored codes, block scales and global scale, the [PK1] layout of
// stored codes, and the boundary patterns that carry the conversion through
// functions, calls, returns and scf regions. fp4train-expand (CPU),
// fp4train-to-runtime and the GPU conversions (FP4TrainGPUCommon,
// fp4train-to-amdgpu, fp4train-to-nvvm) all build on it; the scalar recipes
// they share are in Codecs.h next to it.
//
//===----------------------------------------------------------------------===//

#ifndef FP4TRAIN_CONVERSION_FP4TRAINCOMMON_TYPECONVERSION_H
#define FP4TRAIN_CONVERSION_FP4TRAINCOMMON_TYPECONVERSION_H

#include "mlir/Transforms/DialectConversion.h"

namespace mlir::fp4train {
class ScaledTensorType;

/// The 1:N type conversion of every fp4train lowering (the expansion, the
/// runtime calls, the GPU kernels):
///  - `!fp4train.scaled<...>` becomes, 1:N, the stored element codes
///    (getStoredCodesType: E2M1 two per byte along the last dimension,
///    [PK1]), the block scale codes (`tensor<shape/block x i8>`) and, when
///    the type has one, the f32 global decode scale;
///  - a tensor of f4E2M1FN, f8E4M3FN, f8E5M2 or f8E8M0FNU (what `unpack`
///    returns and `pack` takes) becomes the i8 tensor of its codes, in the
///    low bits (E2M1: bits 3..0, sign in bit 3), the layout of the numerics
///    library;
///  - every other type is left unchanged.
class FP4TrainTypeConverter : public TypeConverter {
public:
  FP4TrainTypeConverter();
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
/// conversion above (fp4train-expand, fp4train-to-runtime, the GPU
/// conversions).
void populateFP4TrainTypeConversionBoundaries(TypeConverter &converter,
                                              ConversionTarget &target,
                                              RewritePatternSet &patterns);

} // namespace mlir::fp4train

#endif // FP4TRAIN_CONVERSION_FP4TRAINCOMMON_TYPECONVERSION_H
