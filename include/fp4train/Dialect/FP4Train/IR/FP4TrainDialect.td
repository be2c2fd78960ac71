//===- FP4TrainDialect.td - fp4train dialect definition ----*- tablegen -*-===//

#ifndef FP4TRAIN_DIALECT_FP4TRAIN_IR_FP4TRAINDIALECT_TD
#define FP4TRAIN_DIALECT_FP4TRAIN_IR_FP4TRAINDIALECT_TD

include "mlir/IR/DialectBase.td"

def FP4Train_Dialect : Dialect {
  let name = "fp4train";
  let cppNamespace = "::mlir::fp4train";
  let summary = "Block-scaled low-precision types and ops for 4-bit training";
  let description = [{
    The `fp4train` dialect models the numerics of block-scaled training:
    block-scaled tensors (MXFP4, NVFP4, MXFP8), their quantization with
    round-to-nearest-even or stochastic rounding, Hadamard rotations, and the
    block-scaled matrix product that consumes them.

    The semantics of every op are the normative rules of the project's design
    document (labels such as `[MX1]`, `[NV1]`, `[SR1]`, `[H1]` and `[GEMM1]`
    are cited in op descriptions). Each op has exactly one meaning, shared by
    the CPU expansion, the GPU lowerings and the numerics library; lowerings
    may choose *how* to compute it, never *what* it computes.

    The dialect also defines two discardable attributes used on upstream IR:

    - `fp4train.param` (unit) on a function argument marks a trainable
      parameter;
    - `fp4train.role` (`#fp4train.role<...>`) on a contraction states its
      role in the training step (Fprop, Dgrad or Wgrad) and wins over
      inference.
  }];
  let useDefaultAttributePrinterParser = 1;
  let useDefaultTypePrinterParser = 1;
  let hasOperationAttrVerify = 1;
  let hasRegionArgAttrVerify = 1;
  let hasConstantMaterializer = 0;
  let extraClassDeclaration = [{
    /// Name of the unit attribute that marks a function argument as a
    /// trainable parameter.
    static constexpr ::llvm::StringLiteral kParamAttrName = "fp4train.param";
    /// Name of the integer attribute that places a parameter in a decoder
    /// block (0, 1, ...), which keep-first-blocks / keep-last-blocks count.
    static constexpr ::llvm::StringLiteral kBlockAttrName = "fp4train.block";
    /// Name of the unit attribute that marks a parameter as a
    /// mixture-of-experts router, whose GEMMs recipes keep in high
    /// precision unless quantize_router is set.
    static constexpr ::llvm::StringLiteral kRouterAttrName = "fp4train.router";
    /// Name of the discardable attribute that pins a contraction's role.
    static constexpr ::llvm::StringLiteral kRoleAttrName = "fp4train.role";
    /// Name of the module attribute in which fp4train-check-indices lists
    /// the accesses it guards ([IDX1]): an array of strings, by site number.
    static constexpr ::llvm::StringLiteral kIndexChecksAttrName =
        "fp4train.index_checks";
    /// Name of the function attribute in which fp4train-partition records
    /// the type of one process's program (its shards' types): the host
    /// calls the lowered function with buffers of those shapes.
    static constexpr ::llvm::StringLiteral kProcessTypeAttrName =
        "fp4train.process_type";

  private:
    void registerAttributes();
    void registerTypes();

  public:
  }];
}

#endif // FP4TRAIN_DIALECT_FP4TRAIN_IR_FP4TRAINDIALECT_TD
