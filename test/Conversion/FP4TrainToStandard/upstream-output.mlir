// fp4train-expand leaves upstream IR only: what upstream's mlir-opt parses
// without the fp4train dialect. A contraction the recipe kept in high
// precision (a router's) loses the fp4train.role attribute role inference
// gave it; attributes of other dialects stay.
// RUN: fp4-opt %s --fp4train-expand | FileCheck %s
// RUN: fp4-opt %s --fp4train-expand | mlir-opt | FileCheck %s

// CHECK-LABEL: func.func @kept_router(
// CHECK: linalg.matmul {keep = "mine"}
// CHECK-NOT: fp4train
func.func @kept_router(%x: tensor<8x32xf32>, %w: tensor<32x4xf32>,
                       %acc: tensor<8x4xf32>) -> tensor<8x4xf32> {
  %r = linalg.matmul {fp4train.role = #fp4train.role<fprop, weight = 1, operand = 1, contracted = 0>, keep = "mine"}
      ins(%x, %w : tensor<8x32xf32>, tensor<32x4xf32>)
      outs(%acc : tensor<8x4xf32>) -> tensor<8x4xf32>
  return %r : tensor<8x4xf32>
}
