//===- FP4TrainOps.td - fp4train operations ----------------*- tablegen -*-===//

#ifndef FP4TRAIN_DIALECT_FP4TRAIN_IR_FP4TRAINOPS_TD
#define FP4TRAIN_DIALECT_FP4TRAIN_IR_FP4TRAINOPS_TD

include "fp4train/Dialect/FP4Train/IR/FP4TrainAttrs.td"
include "fp4train/Dialect/FP4Train/IR/FP4TrainDialect.td"
include "fp4train/Dialect/FP4Train/IR/FP4TrainTypes.td"
include "mlir/IR/CommonAttrConstraints.td"
include "mlir/IR/CommonTypeConstraints.td"
include "mlir/IR/OpBase.td"
include "mlir/IR/Properties.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

class FP4Train_Op<string mnemonic, list<Trait> traits = []>
    : Op<FP4Train_Dialect, mnemonic, traits>;

def FP4Train_ScaledTensor : Type<CPred<"::llvm::isa<::mlir::fp4train::ScaledTensorType>($_self)">,
    "block-scaled tensor", "::mlir::fp4train::ScaledTensorType">;

/// High-precision tensors that quantize reads and dequantize writes.
def FP4Train_WideFloatTensor : RankedTensorOf<[F32, BF16, F16]>;

/// An enum property that the generic form spells as its dialect attribute
/// (`#fp4train.rounding<stochastic>`), not as a bare integer.
class FP4Train_EnumProp<EnumInfo info, Attr attrForm>
    : EnumPropWithAttrForm<info, attrForm> {
  let storeInCustomAttribute = 1;
}

def FP4Train_RoundingModeProp : DefaultValuedProp<
    FP4Train_EnumProp<FP4Train_RoundingMode, FP4Train_RoundingModeAttr>,
    "::mlir::fp4train::RoundingMode::nearest_even">;
def FP4Train_ScaleModeProp : DefaultValuedProp<
    FP4Train_EnumProp<FP4Train_ScaleMode, FP4Train_ScaleModeAttr>,
    "::mlir::fp4train::ScaleMode::floor">;

//===----------------------------------------------------------------------===//
// QuantizeOp
//===----------------------------------------------------------------------===//

def FP4Train_QuantizeOp : FP4Train_Op<"quantize",
    [Pure, AttrSizedOperandSegments]> {
  let summary = "quantize a tensor into a block-scaled tensor";
  let description = [{
    Quantizes `input` into the block-scaled format of the result type. The
    input and result shapes are equal; blocks run along the blocked
    dimensions of the result type, which must be whole multiples of the block
    (pad first, see `!fp4train.scaled`).

    - MX formats (E8M0 scales): the block scale follows `scale_mode`:
      `floor` [MX1] or `rceil` [MX2]; a block holding NaN or Inf gets the NaN
      scale [MX3].
    - NVFP4 (E4M3 scales): two-level scaling [NV1]. The per-tensor amax is
      the optional `amax` operand (delayed scaling) or, when absent, computed
      from `input`. `amax` requires a result type with a global scale, and
      `scale_mode` does not apply.
    - Elements are rounded to nearest-even with saturation to the finite
      range, or stochastically [SR1]. Stochastic rounding needs the `seed`
      operand: the rounding of each element is a pure function of
      (seed, value, linear element position), so the op stays `Pure`.
      Stochastic rounding is defined for E2M1 elements only.

    A bf16 or f16 input is first extended to f32 (exactly).

    `at(origin...) of logical_shape` says that `input` is one part (a shard)
    of a larger logical tensor, starting at `origin` in it [SH3]: stochastic
    rounding then indexes each element by its position in the logical
    tensor, so the parts of a tensor quantize to the codes of the whole
    tensor however it is split. Nothing else depends on the position (blocks
    lie inside the part, see [SH1]; a computed amax is that of `input`, so a
    sharded NVFP4 quantize passes the logical tensor's amax instead [SH2]).

    Example:

    ```mlir
    %q = fp4train.quantize %x
        : tensor<64x128xf32> -> !fp4train.scaled<64x128xf4E2M1FN, block = [1, 32], scale = f8E8M0FNU>
    %g = fp4train.quantize %dy rounding = stochastic seed(%seed) amax(%amax)
        : tensor<64x128xf32> -> !fp4train.scaled<64x128xf4E2M1FN, block = [1, 16], scale = f8E4M3FN, global>
    %p = fp4train.quantize %dy_part rounding = stochastic seed(%seed)
        at(%row, %c0) of [256, 128]
        : tensor<64x128xf32> -> !fp4train.scaled<64x128xf4E2M1FN, block = [1, 32], scale = f8E8M0FNU>
    ```
  }];
  let arguments = (ins
    FP4Train_WideFloatTensor:$input,
    Optional<I64>:$seed,
    Optional<F32>:$amax,
    Variadic<Index>:$origin,
    OptionalAttr<DenseI64ArrayAttr>:$logical_shape,
    FP4Train_RoundingModeProp:$rounding,
    FP4Train_ScaleModeProp:$scale_mode
  );
  let results = (outs FP4Train_ScaledTensor:$result);
  let assemblyFormat = [{
    $input (`rounding` `=` $rounding^)? (`scale_mode` `=` $scale_mode^)?
    (`seed` `(` $seed^ `)`)? (`amax` `(` $amax^ `)`)?
    (`at` `(` $origin^ `)` `of` $logical_shape)?
    attr-dict `:` type($input) `->` qualified(type($result))
  }];
  let extraClassDeclaration = [{
    /// [SH3] Whether the input is a part of a larger logical tensor.
    bool isPart() { return getLogicalShape().has_value(); }
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// DequantizeOp
//===----------------------------------------------------------------------===//

def FP4Train_DequantizeOp : FP4Train_Op<"dequantize", [Pure]> {
  let summary = "decode a block-scaled tensor to a float tensor";
  let description = [{
    Returns `element * block_scale [* global_scale]` for every element,
    computed in f32 ([MX1], [NV1]) and then rounded to the result element
    type (exact for f32). Blocks whose scale is NaN decode to NaN [MX3].

    `dequantize(quantize(x))` is *not* folded to `x`: quantization loses
    information, and that loss is exactly what this dialect models.

    Example:

    ```mlir
    %x = fp4train.dequantize %q
        : !fp4train.scaled<64x128xf4E2M1FN, block = [1, 32], scale = f8E8M0FNU> -> tensor<64x128xf32>
    ```
  }];
  let arguments = (ins FP4Train_ScaledTensor:$input);
  let results = (outs FP4Train_WideFloatTensor:$result);
  let assemblyFormat = [{
    $input attr-dict `:` qualified(type($input)) `->` type($result)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// HadamardOp
//===----------------------------------------------------------------------===//

def FP4Train_HadamardOp : FP4Train_Op<"hadamard",
    [Pure, AttrSizedOperandSegments, AllTypesMatch<["input", "result"]>]> {
  let summary = "rotate consecutive blocks of a tensor by a Hadamard matrix";
  let description = [{
    Applies the rotation `rotation` [H1] to consecutive blocks of
    `rotation.size` elements along dimension `dim`:
    `y_block = x_block . (diag(s) . H_n / sqrt(n))`. With `inverse` the
    transposed rotation `(diag(s) . H_n / sqrt(n))^T` is applied instead,
    which undoes the forward rotation in exact arithmetic.

    The size of `dim` must be a multiple of `rotation.size`. A rotation with
    `random` signs draws its sign vector from Philox(`seed`, `step`), so it
    takes both operands; other rotations take neither.

    The arithmetic is f32 in the butterfly order of the numerics library, so
    that every backend produces the same bits. A forward rotation followed by
    its inverse is not folded: in f32 it is not the identity.

    Example:

    ```mlir
    %r = fp4train.hadamard %x with #fp4train.hadamard<16, fixed> along 1
        : tensor<64x128xf32>
    %s = fp4train.hadamard %dy with #fp4train.hadamard<16, random> along 0
        seed(%seed) step(%step) : tensor<256x64xf32>
    ```
  }];
  let arguments = (ins
    RankedTensorOf<[F32]>:$input,
    ConfinedAttr<I64Attr, [IntNonNegative]>:$dim,
    FP4Train_HadamardAttr:$rotation,
    Optional<I64>:$seed,
    Optional<I64>:$step,
    UnitProp:$inverse
  );
  let results = (outs RankedTensorOf<[F32]>:$result);
  let assemblyFormat = [{
    $input `with` qualified($rotation) `along` $dim
    (`seed` `(` $seed^ `)`)? (`step` `(` $step^ `)`)? (`inverse` $inverse^)?
    attr-dict `:` type($input)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// ScaledMatmulOp
//===----------------------------------------------------------------------===//

def FP4Train_ScaledMatmulOp : FP4Train_Op<"scaled_matmul",
    [Pure, AllTypesMatch<["acc", "result"]>]> {
  let summary = "block-scaled matrix product with f32 accumulation";
  let description = [{
    Computes `result = acc + g * (lhs . rhs^T)` per [GEMM1], where `lhs` is
    `[batch..., M, K]`, `rhs` is `[batch..., N, K]` and `acc` and the result
    are `[batch..., M, N]` in f32. Both operands are blocked along their
    contraction (last) dimension with the same block size along K, so that
    each pair of blocks contributes one exact block dot product:

    ```
    P[i,j,b] = sum_{k in b} a[i,k] * b[j,k]                 (exact)
    T[i,j]   = sum_b f32(sa[i,b] * sb[j,b] * P[i,j,b])     (f32, blocks in K order)
    C[i,j]   = acc[i,j] + f32(g * T[i,j])
    ```

    `g` is the product of the operands' global decode scales (1 for an
    operand without one), or the f32 `alpha` operand when one is given:
    a caller that derives the factor otherwise supplies it, as
    TransformerEngine's NVFP4 GEMMs take `alpha = amax_a * amax_b /
    (6 * 6 * 448 * 448)` instead of `S_dec,a * S_dec,b` ([TE2]). `alpha`
    replaces `g` whole; the operands' global scales are then not read. An operand may use 16x16 blocks (a 2-D-blocked
    NVFP4 weight); its block scale for row `j` and K block `b` is that of the
    tile holding them. The operands' formats may differ (e.g. an MXFP8
    activation gradient with an MXFP4 weight); the K block may not.

    Both operands are "K-major" (`rhs` is transposed): this is the layout the
    block-scaled MMA instructions of every target consume, and it makes the
    blocked dimension the same (the last) for both.

    Example:

    ```mlir
    %c = fp4train.scaled_matmul %a, %b, %acc
        : !fp4train.scaled<128x256xf4E2M1FN, block = [1, 32], scale = f8E8M0FNU>,
          !fp4train.scaled<64x256xf4E2M1FN, block = [1, 32], scale = f8E8M0FNU>,
          tensor<128x64xf32>
    // TransformerEngine's factor in place of the global scales' product.
    %d = fp4train.scaled_matmul %x, %w, %acc2 alpha(%alpha)
        : !fp4train.scaled<128x256xf4E2M1FN, block = [1, 16], scale = f8E4M3FN, global>,
          !fp4train.scaled<64x256xf4E2M1FN, block = [16, 16], scale = f8E4M3FN, global>,
          tensor<128x64xf32>
    ```
  }];
  let arguments = (ins
    FP4Train_ScaledTensor:$lhs,
    FP4Train_ScaledTensor:$rhs,
    RankedTensorOf<[F32]>:$acc,
    Optional<F32>:$alpha
  );
  let results = (outs RankedTensorOf<[F32]>:$result);
  let assemblyFormat = [{
    $lhs `,` $rhs `,` $acc (`alpha` `(` $alpha^ `)`)? attr-dict `:`
    qualified(type($lhs)) `,` qualified(type($rhs)) `,` type($acc)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// PackOp / UnpackOp
//===----------------------------------------------------------------------===//

def FP4Train_PackOp : FP4Train_Op<"pack", [Pure]> {
  let summary = "assemble a block-scaled tensor from elements and scales";
  let description = [{
    Builds a block-scaled tensor from its element codes (`values`, a tensor
    of the element type with the logical shape), its block scales (`scales`,
    a tensor of the scale type with shape `shape / block`) and, when the
    result type has one, its f32 global decode scale `S_dec` [NV1].

    `pack(unpack(%q))` folds to `%q`.

    Example:

    ```mlir
    %q = fp4train.pack %v, %s, %g : tensor<32x64xf4E2M1FN>, tensor<2x4xf8E4M3FN>
        -> !fp4train.scaled<32x64xf4E2M1FN, block = [16, 16], scale = f8E4M3FN, global>
    ```
  }];
  let arguments = (ins
    AnyRankedTensor:$values,
    AnyRankedTensor:$scales,
    Optional<F32>:$global_scale
  );
  let results = (outs FP4Train_ScaledTensor:$result);
  let assemblyFormat = [{
    $values `,` $scales (`,` $global_scale^)? attr-dict `:` type($values) `,`
    type($scales) `->` qualified(type($result))
  }];
  let hasVerifier = 1;
  let hasFolder = 1;
}

def FP4Train_UnpackOp : FP4Train_Op<"unpack",
    [Pure, DeclareOpInterfaceMethods<InferTypeOpInterface>]> {
  let summary = "split a block-scaled tensor into elements and scales";
  let description = [{
    The inverse of `fp4train.pack`: returns the element codes, the block
    scales and, when the type has one, the f32 global decode scale. The
    result types follow from the operand type.

    `unpack(pack(%v, %s[, %g]))` folds to `%v, %s[, %g]`.

    Example:

    ```mlir
    %v, %s = fp4train.unpack %q
        : !fp4train.scaled<64x128xf4E2M1FN, block = [1, 32], scale = f8E8M0FNU>
    ```
  }];
  let arguments = (ins FP4Train_ScaledTensor:$input);
  let results = (outs
    AnyRankedTensor:$values,
    AnyRankedTensor:$scales,
    Optional<F32>:$global_scale
  );
  let assemblyFormat = "$input attr-dict `:` qualified(type($input))";
  let builders = [
    // The parts of `input`'s type: its values, its scales and, when it has
    // one, its global scale.
    OpBuilder<(ins "::mlir::Value":$input), [{
      auto type = ::llvm::cast<ScaledTensorType>(input.getType());
      $_state.addOperands(input);
      $_state.addTypes({type.getValuesTensorType(), type.getScalesTensorType()});
      if (type.getHasGlobalScale())
        $_state.addTypes($_builder.getF32Type());
    }]>
  ];
  let hasFolder = 1;
}

//===----------------------------------------------------------------------===//
// TransposeOp
//===----------------------------------------------------------------------===//

def FP4Train_TransposeOp : FP4Train_Op<"transpose", [Pure]> {
  let summary = "transposed view of a 2-D-blocked tensor";
  let description = [{
    Swaps the two blocked dimensions of a tensor quantized in 16x16 blocks,
    without re-quantizing: every 16x16 tile and its scale stay the same, so
    the transposed value is exactly representable in the same format. This
    is what lets one 2-D-quantized weight feed both Fprop (`W`, blocked along
    `in`) and Dgrad (`W^T`, blocked along `out`) [NV1].

    A 1-D-blocked tensor has no such view: transposing it would leave it
    blocked along the wrong dimension, so it must be re-quantized instead.

    `transpose(transpose(%q))` folds to `%q`.

    Example:

    ```mlir
    %wt = fp4train.transpose %w
        : !fp4train.scaled<64x128xf4E2M1FN, block = [16, 16], scale = f8E4M3FN, global>
       -> !fp4train.scaled<128x64xf4E2M1FN, block = [16, 16], scale = f8E4M3FN, global>
    ```
  }];
  let arguments = (ins FP4Train_ScaledTensor:$input);
  let results = (outs FP4Train_ScaledTensor:$result);
  let assemblyFormat = [{
    $input attr-dict `:` qualified(type($input)) `->` qualified(type($result))
  }];
  let hasVerifier = 1;
  let hasFolder = 1;
}

#endif // FP4TRAIN_DIALECT_FP4TRAIN_IR_FP4TRAINOPS_TD
