//===- Passes.td - fp4train conversion passes --------------*- tablegen -*-===//

#ifndef FP4TRAIN_CONVERSION_PASSES_TD
#define FP4TRAIN_CONVERSION_PASSES_TD

include "mlir/Pass/PassBase.td"

def FP4TrainExpand : Pass<"fp4train-expand", "ModuleOp"> {
  let summary = "Expand fp4train ops and types into exact upstream tensor code";
  let description = [{
    Lowers every fp4train op and type to `arith`, `math`, `linalg` and
    `tensor` ops on tensors, bit-identical to the numerics library
    (DESIGN.md §2, docs/numerics.md). Afterwards the module holds no fp4train
    op or type, calls nothing at run time, and any upstream pipeline
    (bufferization, loops or vectors, LLVM) can take it on.

    `!fp4train.scaled<...>` values become, 1:N, an `i8` tensor of element
    codes, an `i8` tensor of block-scale codes and (with a global scale) an
    `f32` decode scale, through function signatures, calls and returns too.
    Tensors of the narrow float types (what `fp4train.unpack` returns) become
    `i8` tensors of their codes.

    - `quantize`: block amax as an integer max of magnitude bits; [MX1]
      floor / [MX2] rceil scales from exponent bits, [MX3] NaN blocks; [NV1]
      two-level scales with the tensor amax computed or supplied; RNE with
      satfinite, or [SR1] stochastic rounding with Philox4x32-10 in IR;
    - `dequantize`: exact decode and one f32 product ([MX1]) or two ([NV1]);
    - `hadamard`: [H1] butterflies in the library's order, signs `none`,
      `fixed` (a constant) or `random` (Philox in IR), and `inverse`;
    - `scaled_matmul`: [GEMM1] with exact integer block products, each block
      term rounded once to f32, summed over K blocks in increasing order;
    - `transpose`: `linalg.transpose` of codes and scales; `pack`/`unpack`
      disappear.

    Example:

    ```mlir
    // Before
    %q = fp4train.quantize %x : tensor<4x64xf32>
        -> !fp4train.scaled<4x64xf4E2M1FN, block = [1, 32], scale = f8E8M0FNU>
    %y = fp4train.dequantize %q : !fp4train.scaled<...> -> tensor<4x64xf32>
    // After
    %amax = linalg.generic ... // tensor<4x2xi32>: magnitude bits per block
    %scales = linalg.generic ... // tensor<4x2xi8>, tensor<4x2xf32>
    %codes = linalg.generic ... // tensor<4x2x32xi8>
    %y = linalg.generic ... // tensor<4x2x32xf32>
    ```
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::linalg::LinalgDialect",
    "::mlir::math::MathDialect",
    "::mlir::tensor::TensorDialect"
  ];
}

#endif // FP4TRAIN_CONVERSION_PASSES_TD
