// fp4train-quantize-matmuls reads the roles fp4train-annotate-roles wrote
// (#fp4train.role with the weight, its operand and contracted dimension)
// and does not run role inference again.
// RUN: fp4-opt %s -split-input-file -fp4train-quantize-matmuls="recipe=mxfp4 report=-" -o /dev/null | FileCheck %s --check-prefix=UNANNOTATED
// RUN: fp4-opt %s -split-input-file -fp4train-quantize-matmuls="recipe=mxfp4" | FileCheck %s --check-prefix=ANNOTATED
// RUN: fp4-opt %s -split-input-file -fp4train-annotate-roles="report=- report-format=table" -o /dev/null | FileCheck %s --check-prefix=TABLE
// RUN: fp4-opt %s -split-input-file --fp4train-quantize-pipeline="recipe=nvfp4 report=- report-format=table" -o /dev/null | FileCheck %s --check-prefix=QTABLE

// Without an annotation, a contraction is "other", even with a marked
// parameter: only the annotation pass infers roles.
// UNANNOTATED: "kept": "role other"
// UNANNOTATED: "param": null
// UNANNOTATED: "role": "other"
// TABLE: #  role   param  block  op             m   n   k   batch  loc
// TABLE-NEXT: 1  fprop  0      -      linalg.matmul  32  16  64  1      {{.*}}quantize-matmuls-annotated.mlir:[[#@LINE+4]]:{{[0-9]+}}
// QTABLE: quantized as
// QTABLE-NEXT: 1  fprop  0      -      linalg.matmul  32  16  64  1      {{.*}}  nvfp4 16 nearest_even | nvfp4 16x16 nearest_even
func.func @unannotated(%w: tensor<16x64xf32> {fp4train.param}, %x: tensor<32x64xf32>, %y: tensor<32x16xf32>) -> tensor<32x16xf32> {
  %0 = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>,
                                      affine_map<(m, n, k) -> (n, k)>,
                                      affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %w : tensor<32x64xf32>, tensor<16x64xf32>) outs(%y : tensor<32x16xf32>) -> tensor<32x16xf32>
  return %0 : tensor<32x16xf32>
}

// -----

// A hand-written annotation is taken as it is: here operand 0 is the
// weight (no {fp4train.param} marker needed), so it is quantized as the
// recipe's rhs (16x16 NVFP4 blocks); fp4train-annotate-roles keeps what it
// says where the analysis finds nothing.
// ANNOTATED-LABEL: func.func @annotated
// ANNOTATED: fp4train.scaled_matmul
// ANNOTATED-NOT: linalg.matmul
// QTABLE: #  role   param  block  op             m   n   k   batch  loc{{ +}}quantized as
// QTABLE-NEXT: 1  fprop  0      -      linalg.matmul  16  32  64  1      {{.*}}  nvfp4 16x16 nearest_even | nvfp4 16 nearest_even
func.func @annotated(%w: tensor<16x64xf32>, %x: tensor<32x64xf32>, %y: tensor<16x32xf32>) -> tensor<16x32xf32> {
  %0 = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>,
                                      affine_map<(m, n, k) -> (n, k)>,
                                      affine_map<(m, n, k) -> (m, n)>]
      ins(%w, %x : tensor<16x64xf32>, tensor<32x64xf32>) outs(%y : tensor<16x32xf32>)
      {fp4train.role = #fp4train.role<fprop, weight = 0, operand = 0, contracted = 1>} -> tensor<16x32xf32>
  return %0 : tensor<16x32xf32>
}
