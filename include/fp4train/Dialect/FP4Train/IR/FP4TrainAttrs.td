//===- FP4TrainAttrs.td - fp4train attributes --------------*- tablegen -*-===//

#ifndef FP4TRAIN_DIALECT_FP4TRAIN_IR_FP4TRAINATTRS_TD
#define FP4TRAIN_DIALECT_FP4TRAIN_IR_FP4TRAINATTRS_TD

include "fp4train/Dialect/FP4Train/IR/FP4TrainDialect.td"
include "fp4train/Dialect/FP4Train/IR/FP4TrainEnums.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"

class FP4Train_Attr<string name, string attrMnemonic, list<Trait> traits = []>
    : AttrDef<FP4Train_Dialect, name, traits> {
  let mnemonic = attrMnemonic;
}

class FP4Train_EnumAttr<EnumAttrInfo info, string name>
    : EnumAttr<FP4Train_Dialect, info, name> {
  let assemblyFormat = "`<` $value `>`";
}

//===----------------------------------------------------------------------===//
// Enum attributes
//===----------------------------------------------------------------------===//

def FP4Train_RoundingModeAttr : FP4Train_EnumAttr<FP4Train_RoundingMode, "rounding"> {
  let summary = "rounding mode: `nearest_even` or `stochastic` [SR1]";
}
def FP4Train_ScaleModeAttr : FP4Train_EnumAttr<FP4Train_ScaleMode, "scale_mode"> {
  let summary = "MX scale derivation: `floor` [MX1] or `rceil` [MX2]";
}
def FP4Train_FormatAttr : FP4Train_EnumAttr<FP4Train_Format, "format"> {
  let summary = "block-scaled format preset";
  let description = [{
    Names one row of the format table of the design document:

    | preset       | element   | scale     | block                 | global |
    |--------------|-----------|-----------|-----------------------|--------|
    | `mxfp4`      | f4E2M1FN  | f8E8M0FNU | 32                    | no     |
    | `nvfp4`      | f4E2M1FN  | f8E4M3FN  | 16, or 16x16 (2-D)    | f32    |
    | `mxfp8_e4m3` | f8E4M3FN  | f8E8M0FNU | 32                    | no     |
    | `mxfp8_e5m2` | f8E5M2    | f8E8M0FNU | 32                    | no     |
  }];
}
def FP4Train_RoleAttr : FP4Train_Attr<"Role", "role"> {
  let summary = "role of a contraction: `fprop`, `dgrad` or `wgrad`, and its weight";
  let description = [{
    The training role of a contraction ([ROLE1]-[ROLE6] in
    docs/semantics.md), as the `fp4train.role` attribute of the op. A user
    may write the bare role to force it; `fp4train-annotate-roles` writes
    what role inference found, which is what `fp4train-quantize-matmuls`
    reads:

    - `weight`: the function argument index of the weight the contraction
      reads (Fprop, Dgrad) or whose gradient it computes (Wgrad, when that
      is unambiguous);
    - `operand`: the input operand (0 or 1) that is the weight (Fprop,
      Dgrad) or the output gradient dY (Wgrad);
    - `contracted`: for Fprop and Dgrad, the dimension of that operand the
      contraction sums over (the weight's `in` dimension for Fprop, its
      `out` dimension for Dgrad, as the operand is laid out).

    Example:

    ```mlir
    #fp4train.role<fprop>
    #fp4train.role<dgrad, weight = 3, operand = 1, contracted = 0>
    #fp4train.role<wgrad, weight = 3, operand = 0>
    ```
  }];
  let parameters = (ins
    EnumParameter<FP4Train_Role>:$value,
    OptionalParameter<"std::optional<unsigned>">:$weight,
    OptionalParameter<"std::optional<unsigned>">:$operand,
    OptionalParameter<"std::optional<unsigned>">:$contracted
  );
  let builders = [
    AttrBuilder<(ins "Role":$value), [{
      return $_get($_ctxt, value, std::nullopt, std::nullopt, std::nullopt);
    }]>
  ];
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
}

//===----------------------------------------------------------------------===//
// HadamardAttr
//===----------------------------------------------------------------------===//

def FP4Train_HadamardAttr : FP4Train_Attr<"Hadamard", "hadamard"> {
  let summary = "a block Hadamard rotation [H1]";
  let description = [{
    A rotation by `diag(s) . H_n / sqrt(n)` applied to consecutive blocks of
    `size` elements along one dimension, where `H_n` is the Sylvester-ordered
    Hadamard matrix and `size` is a power of two in [16, 256].

    The sign vector `s` is one of:
    - `none`: all +1;
    - `fixed`: a constant vector. Without `signs = [...]` it is the default
      fixed vector for `size` (for 16, TransformerEngine's
      `+ + + - + - - - - - - + - + - -`; for other sizes the vector drawn once
      from the documented seed of the numerics library). With
      `signs = [...]` it is the given vector of `size` entries, each +1 or -1.
      This is the "deterministic" rotation of the AMD MXFP4 recipe;
    - `random`: re-drawn from Philox(seed, step) at each application, so ops
      using it take a seed and a step operand.

    Example:

    ```mlir
    #fp4train.hadamard<16, fixed>
    #fp4train.hadamard<32, random>
    #fp4train.hadamard<16, fixed, signs = [1, -1, 1, -1, 1, -1, 1, -1,
                                           1, -1, 1, -1, 1, -1, 1, -1]>
    ```
  }];
  let parameters = (ins
    "int64_t":$size,
    EnumParameter<FP4Train_HadamardSigns>:$signs,
    OptionalArrayRefParameter<"int32_t">:$sign_vector
  );
  let assemblyFormat =
      "`<` $size `,` $signs (`,` `signs` `=` `[` $sign_vector^ `]`)? `>`";
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// Returns true when the signs change at each application, so users
    /// need a seed and a step.
    bool isRandom() const { return getSigns() == HadamardSigns::random; }
  }];
}

//===----------------------------------------------------------------------===//
// QuantSpecAttr
//===----------------------------------------------------------------------===//

def FP4Train_QuantSpecAttr : FP4Train_Attr<"QuantSpec", "quant"> {
  let summary = "how one GEMM operand is quantized";
  let description = [{
    A format preset with the rounding and (for MX formats) the scale mode
    used to quantize one operand of a block-scaled GEMM.

    Stochastic rounding [SR1] is defined for E2M1 elements only; `rceil`
    [MX2] applies to E8M0-scaled (MX) formats only.

    Example:

    ```mlir
    #fp4train.quant<format = mxfp4>
    #fp4train.quant<format = nvfp4, rounding = stochastic>
    #fp4train.quant<format = mxfp8_e5m2, scale_mode = rceil>
    ```
  }];
  let parameters = (ins
    EnumParameter<FP4Train_Format>:$format,
    DefaultValuedParameter<"RoundingMode", "RoundingMode::nearest_even">:$rounding,
    DefaultValuedParameter<"ScaleMode", "ScaleMode::floor">:$scale_mode
  );
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

//===----------------------------------------------------------------------===//
// GemmRecipeAttr
//===----------------------------------------------------------------------===//

def FP4Train_GemmRecipeAttr : FP4Train_Attr<"GemmRecipe", "gemm"> {
  let summary = "how the GEMM of one role is quantized";
  let description = [{
    The quantization of both operands of the GEMM of one role, and the
    Hadamard rotation (if any) applied to both operands along the
    contraction dimension [H1].

    `lhs` is the operand whose rows index the result's rows: the activation
    `X` for Fprop, the output gradient `dY` for Dgrad and Wgrad. `rhs` is the
    other one: the weight for Fprop and Dgrad, the activation `X` for Wgrad.

    `hadamard_precision` says what the rotated operands hold before they are
    quantized: `f32` (the default) keeps the f32 result of the rotation
    [H1]; `operand` rounds it (to nearest even) to each operand's own
    element type, as TransformerEngine's random Hadamard transform does on
    bf16 inputs, whose rotation is a bf16 GEMM [H2]. f32 operands are the
    same under both.

    `alpha` says how the factor of the product is derived: `scales` (the
    default) multiplies the operands' global decode scales [GEMM1];
    `amax` computes each operand's tensor amax and gives the
    `scaled_matmul` TransformerEngine's `alpha = amax_a * amax_b /
    (6 * 6 * 448 * 448)` [TE2], for GEMM outputs equal to TE's. `amax`
    needs two NVFP4 operands.

    Example:

    ```mlir
    #fp4train.gemm<lhs = <format = nvfp4, rounding = stochastic>,
                   rhs = <format = nvfp4>, hadamard = <16, random>>
    #fp4train.gemm<lhs = <format = nvfp4>, rhs = <format = nvfp4>,
                   hadamard = <16, fixed>, hadamard_precision = operand>
    #fp4train.gemm<lhs = <format = nvfp4>, rhs = <format = nvfp4>,
                   alpha = amax>
    ```
  }];
  let parameters = (ins
    "QuantSpecAttr":$lhs,
    "QuantSpecAttr":$rhs,
    OptionalParameter<"HadamardAttr">:$hadamard,
    DefaultValuedParameter<"HadamardPrecision", "HadamardPrecision::f32">:
        $hadamard_precision,
    DefaultValuedParameter<"GemmAlpha", "GemmAlpha::scales">:$alpha
  );
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

//===----------------------------------------------------------------------===//
// RecipeAttr
//===----------------------------------------------------------------------===//

// The roles a recipe quantizes: a bit mask over Role (bit r for the role of
// value r), written `[fprop, dgrad]`; omitted when it is every role.
def FP4Train_RoleSetParameter
    : DefaultValuedParameter<"unsigned", "::mlir::fp4train::kAllRoles",
                             "the roles a recipe quantizes"> {
  let parser = "::mlir::fp4train::parseRoleSet($_parser)";
  let printer = "::mlir::fp4train::printRoleSet($_printer, $_self)";
}

def FP4Train_RecipeAttr : FP4Train_Attr<"Recipe", "recipe"> {
  let summary = "a training recipe: the quantization of each role's GEMM";
  let description = [{
    Everything the quantize pass needs to rewrite a training step: one
    `#fp4train.gemm` per role (a missing role stays in high precision),
    whether weights use 16x16 blocks (quantized once, the same value feeding
    Fprop and, transposed, Dgrad), how many linear layers at the start and
    end of the network keep all three GEMMs in high precision, and which
    roles are quantized at all (`roles = [fprop, dgrad]`; default every
    role): the per-role ablation of the MXFP4 paper is the same recipe with
    fewer roles. `keep_first_blocks` / `keep_last_blocks` keep every GEMM of
    the first and last decoder blocks (the parameters' `fp4train.block`);
    the GEMMs of mixture-of-experts routers (`fp4train.router` parameters)
    stay in high precision unless `quantize_router`; an NVFP4 operand of an
    expert contraction (expert weights `[E, out, in]`) has one global scale
    per expert (`per_expert_global_scale`, the default) or one for the
    whole tensor.

    Recipes are data: a new paper's recipe needs no code change. The named
    presets of the design document (`nvfp4`, `mxfp4`, `mxfp4-hadamard`, ...)
    are instances of this attribute.

    Example:

    ```mlir
    #fp4train.recipe<name = "mxfp4-hadamard",
      fprop = <lhs = <format = mxfp4>, rhs = <format = mxfp4>>,
      dgrad = <lhs = <format = mxfp4>, rhs = <format = mxfp4>>,
      wgrad = <lhs = <format = mxfp4>, rhs = <format = mxfp4>,
               hadamard = <32, fixed>>>
    ```
  }];
  let parameters = (ins
    StringRefParameter<"recipe name", "\"\"">:$name,
    OptionalParameter<"GemmRecipeAttr">:$fprop,
    OptionalParameter<"GemmRecipeAttr">:$dgrad,
    OptionalParameter<"GemmRecipeAttr">:$wgrad,
    DefaultValuedParameter<"bool", "false">:$weights_2d,
    DefaultValuedParameter<"unsigned", "0">:$keep_first,
    DefaultValuedParameter<"unsigned", "0">:$keep_last,
    FP4Train_RoleSetParameter:$roles,
    DefaultValuedParameter<"unsigned", "0">:$keep_first_blocks,
    DefaultValuedParameter<"unsigned", "0">:$keep_last_blocks,
    DefaultValuedParameter<"bool", "false">:$quantize_router,
    DefaultValuedParameter<"bool", "true">:$per_expert_global_scale
  );
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// Returns the GEMM recipe of `role`, or null when that role stays in
    /// high precision (no GEMM recipe, or not among `roles`).
    GemmRecipeAttr getForRole(Role role) const;
    /// Whether `roles` names `role`.
    bool hasRole(Role role) const;
  }];
}

#endif // FP4TRAIN_DIALECT_FP4TRAIN_IR_FP4TRAINATTRS_TD
