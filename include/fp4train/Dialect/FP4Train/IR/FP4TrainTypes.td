//===- FP4TrainTypes.td - fp4train types -------------------*- tablegen -*-===//

#ifndef FP4TRAIN_DIALECT_FP4TRAIN_IR_FP4TRAINTYPES_TD
#define FP4TRAIN_DIALECT_FP4TRAIN_IR_FP4TRAINTYPES_TD

include "fp4train/Dialect/FP4Train/IR/FP4TrainDialect.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/BuiltinTypeInterfaces.td"

def FP4Train_ScaledTensorType : TypeDef<FP4Train_Dialect, "ScaledTensor"> {
  let mnemonic = "scaled";
  let summary = "a block-scaled tensor: elements, block scales, global scale";
  let description = [{
    A tensor whose value is `element * block_scale [* global_scale]`: every
    element is stored in a narrow float format and every block of elements
    shares one scale. The type carries the logical shape, the element type,
    the block shape, the scale type and whether a per-tensor f32 global scale
    (the decode scale `S_dec` of [NV1]) is present.

    The block shape has one entry per dimension; an entry of 1 means the
    dimension is not blocked. Only the formats of the design document are
    admitted:

    | element           | scale      | block                          | global   |
    |-------------------|------------|--------------------------------|----------|
    | f4E2M1FN          | f8E8M0FNU  | 32 along one dimension         | no       |
    | f4E2M1FN          | f8E4M3FN   | 16 along one, or 16x16 on two  | optional |
    | f8E4M3FN, f8E5M2  | f8E8M0FNU  | 32 along one dimension         | no       |

    Shapes are static. **Every blocked dimension must be a multiple of its
    block size**: the type never describes a partial block. Producers whose
    data does not fill whole blocks pad with zeros first (zero padding along
    the contraction dimension does not change a product); `fp4train.quantize`
    therefore rejects a tensor whose blocked dimension is not a multiple of
    the block. The scales form a tensor of shape `shape / block`.

    Example:

    ```mlir
    !fp4train.scaled<128x64xf4E2M1FN, block = [1, 32], scale = f8E8M0FNU>
    !fp4train.scaled<256x128xf4E2M1FN, block = [16, 16], scale = f8E4M3FN, global>
    !fp4train.scaled<4x32x64xf8E5M2, block = [1, 1, 32], scale = f8E8M0FNU>
    ```
  }];
  let parameters = (ins
    ArrayRefParameter<"int64_t">:$shape,
    "::mlir::Type":$elementType,
    ArrayRefParameter<"int64_t">:$blockShape,
    "::mlir::Type":$scaleType,
    "bool":$hasGlobalScale
  );
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let builders = [
    TypeBuilderWithInferredContext<(ins
        "::llvm::ArrayRef<int64_t>":$shape, "::mlir::Type":$elementType,
        "::llvm::ArrayRef<int64_t>":$blockShape, "::mlir::Type":$scaleType,
        CArg<"bool", "false">:$hasGlobalScale), [{
      return $_get(elementType.getContext(), shape, elementType, blockShape,
                   scaleType, hasGlobalScale);
    }]>
  ];
  let extraClassDeclaration = [{
    int64_t getRank() const { return getShape().size(); }
    int64_t getNumElements() const;

    /// Dimensions whose block size is greater than 1, in increasing order.
    ::llvm::SmallVector<int64_t> getBlockedDims() const;
    /// Returns true for 16x16 (two-dimensional) blocks.
    bool is2DBlocked() const { return getBlockedDims().size() == 2; }
    /// Number of elements in one block.
    int64_t getBlockNumElements() const;

    /// Shape of the scale tensor: `shape / blockShape`.
    ::llvm::SmallVector<int64_t> getScalesShape() const;
    /// `tensor<shape x elementType>`: the element codes as a tensor.
    ::mlir::RankedTensorType getValuesTensorType() const;
    /// `tensor<scalesShape x scaleType>`: the block scales as a tensor.
    ::mlir::RankedTensorType getScalesTensorType() const;

    /// The format preset this type belongs to.
    Format getFormat() const;

    /// Returns the scaled tensor type of `format` for `shape`, blocked along
    /// `dim` (and along `dim2` too for 2-D NVFP4 blocks, when given).
    static ScaledTensorType
    getForFormat(::mlir::MLIRContext *context, Format format,
                 ::llvm::ArrayRef<int64_t> shape, int64_t dim,
                 std::optional<int64_t> dim2 = std::nullopt,
                 bool hasGlobalScale = false);
  }];
}

#endif // FP4TRAIN_DIALECT_FP4TRAIN_IR_FP4TRAINTYPES_TD
