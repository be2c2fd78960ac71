//===- Passes.td - fp4train transformation passes ----------*- tablegen -*-===//

#ifndef FP4TRAIN_DIALECT_FP4TRAIN_TRANSFORMS_PASSES_TD
#define FP4TRAIN_DIALECT_FP4TRAIN_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def FP4TrainAnnotateRoles : Pass<"fp4train-annotate-roles", "ModuleOp"> {
  let summary = "Classify the contractions of a training step as Fprop, Dgrad or Wgrad";
  let description = [{
    Reads training steps written in linalg on tensors (DESIGN.md §4) and
    gives every contraction (`linalg.matmul` with any indexing maps,
    `linalg.batch_matmul`, and `linalg.generic` contractions) a role:

    - parameters are function arguments marked `{fp4train.param}` or listed
      by `params`; the matrix parameters used as a contraction operand are
      the weights;
    - a contraction with a weight operand (seen through transposes, casts,
      reshapes, slices and broadcasts) is **Fprop** when it contracts the
      weight's `in` dimension and **Dgrad** when it contracts its `out`
      dimension (`weight-layout` says which dimension is which);
    - a contraction with no weight operand whose result reaches, through
      layout and elementwise ops, a returned tensor of a weight's shape or
      an elementwise update of a weight, is **Wgrad**;
    - an explicit `fp4train.role` attribute wins; every other contraction
      (attention `Q.K^T`, `P.V`, ...) is `other` and left alone.

    Each classified contraction gets an `fp4train.role` attribute. With
    `report`, a JSON array with one object per contraction in program order
    is written to the file (`-` for stdout):
    `{"loc", "op", "role", "param", "m", "n", "k", "batch"}`, where `param`
    is the weight's argument index (for Wgrad: the weight it updates, when
    that is unambiguous) or null, and sizes are null when dynamic.

    Example (PyTorch layout, `W : [out, in]`):

    ```mlir
    // Before
    %y = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>,
                                        affine_map<(m, n, k) -> (n, k)>,
                                        affine_map<(m, n, k) -> (m, n)>]
        ins(%x, %w : tensor<32x64xf32>, tensor<16x64xf32>) outs(%init : tensor<32x16xf32>)
        -> tensor<32x16xf32>
    // After
    %y = linalg.matmul indexing_maps = [...] ins(%x, %w : ...) outs(%init : ...)
        {fp4train.role = #fp4train.role<fprop>} -> tensor<32x16xf32>
    ```
  }];
  let options = [
    ListOption<"params", "params", "unsigned",
               "argument indices of the parameters, in addition to those "
               "marked {fp4train.param}">,
    Option<"weightLayout", "weight-layout", "std::string", "\"out-in\"",
           "layout of weight matrices: out-in (PyTorch) or in-out (JAX)">,
    Option<"report", "report", "std::string", "\"\"",
           "write the JSON role report to this file ('-' for stdout)">
  ];
  let dependentDialects = ["::mlir::fp4train::FP4TrainDialect"];
}

#endif // FP4TRAIN_DIALECT_FP4TRAIN_TRANSFORMS_PASSES_TD
