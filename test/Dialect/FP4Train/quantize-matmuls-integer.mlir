// RUN: fp4-opt %s --fp4train-quantize-pipeline="recipe=mxfp4 report=%t.json" | FileCheck %s
// RUN: FileCheck %s --check-prefix=REPORT < %t.json

// Contractions the rewrite cannot cast through f32 are left as they are and
// listed as kept in the report, not rewritten into float casts of integer
// tensors (which only the verifier after the pass used to catch).

// CHECK-LABEL: func.func @integer_accumulator
// CHECK-NOT:     fp4train.quantize
// CHECK:         linalg.matmul {{.*}} -> tensor<8x16xi32>
func.func @integer_accumulator(%x: tensor<8x64xf32>,
                               %w: tensor<16x64xf32> {fp4train.param},
                               %init: tensor<8x16xi32>) -> tensor<8x16xi32> {
  %y = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>,
                                      affine_map<(m, n, k) -> (n, k)>,
                                      affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %w : tensor<8x64xf32>, tensor<16x64xf32>) outs(%init : tensor<8x16xi32>) -> tensor<8x16xi32>
  return %y : tensor<8x16xi32>
}

// CHECK-LABEL: func.func @integer_operands
// CHECK-NOT:     fp4train.quantize
// CHECK:         linalg.matmul {{.*}} -> tensor<8x16xi32>
func.func @integer_operands(%x: tensor<8x64xi8>,
                            %w: tensor<16x64xi8> {fp4train.param},
                            %init: tensor<8x16xi32>) -> tensor<8x16xi32> {
  %y = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>,
                                      affine_map<(m, n, k) -> (n, k)>,
                                      affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %w : tensor<8x64xi8>, tensor<16x64xi8>) outs(%init : tensor<8x16xi32>) -> tensor<8x16xi32>
  return %y : tensor<8x16xi32>
}

// REPORT: "kept": "accumulator element type i32 is not f32, bf16 or f16"
// REPORT: "quantized": false
// REPORT: "kept": "operand element type i8 is not f32, bf16 or f16"
// REPORT: "quantized": false
