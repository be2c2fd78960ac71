// RUN: fp4-opt %s --fp4train-expand | FileCheck %s

// [H1] fixed signs (TransformerEngine's vector for 16), then butterflies
// h = 1, 2, 4, 8 on a [n/2h, 2, h] view, then f32(1/4).
// CHECK-LABEL: func.func @fixed16
// CHECK-DAG: arith.constant dense<[1.000000e+00, 1.000000e+00, 1.000000e+00, -1.000000e+00, 1.000000e+00, -1.000000e+00, -1.000000e+00, -1.000000e+00, -1.000000e+00, -1.000000e+00, -1.000000e+00, 1.000000e+00, -1.000000e+00, 1.000000e+00, -1.000000e+00, -1.000000e+00]> : tensor<16xf32>
// CHECK: tensor.expand_shape {{.*}} output_shape [2, 2, 16]
// CHECK: tensor.expand_shape {{.*}} output_shape [2, 2, 8, 2, 1]
// CHECK: tensor.expand_shape {{.*}} output_shape [2, 2, 4, 2, 2]
// CHECK: tensor.expand_shape {{.*}} output_shape [2, 2, 2, 2, 4]
// CHECK: tensor.expand_shape {{.*}} output_shape [2, 2, 1, 2, 8]
// CHECK: arith.constant 2.500000e-01 : f32
// CHECK-NOT: fp4train
func.func @fixed16(%x: tensor<2x32xf32>) -> tensor<2x32xf32> {
  %y = fp4train.hadamard %x with #fp4train.hadamard<16, fixed> along 1 : tensor<2x32xf32>
  return %y : tensor<2x32xf32>
}

// Random signs are drawn by Philox in IR; the inverse applies them last.
// CHECK-LABEL: func.func @random_inverse
// CHECK: linalg.generic {{.*}} outs({{.*}} : tensor<32xf32>)
// CHECK: arith.mului_extended
// CHECK: arith.constant 0.176776692 : f32
// CHECK: linalg.generic {{.*}} ins({{.*}}, {{.*}} : tensor<1x32x2xf32>, tensor<32xf32>)
func.func @random_inverse(%x: tensor<32x2xf32>, %seed: i64, %step: i64) -> tensor<32x2xf32> {
  %y = fp4train.hadamard %x with #fp4train.hadamard<32, random> along 0 seed(%seed) step(%step) inverse : tensor<32x2xf32>
  return %y : tensor<32x2xf32>
}
