// RUN: fp4-opt %s --fp4train-expand | FileCheck %s

// [MX1] MXFP4 along the last dimension: block amax as an integer max of the
// magnitude bits, then scale codes and factors, then element codes.
// CHECK-LABEL: func.func @mxfp4
// CHECK-SAME: (%[[X:.*]]: tensor<4x64xf32>) -> (tensor<4x64xi8>, tensor<4x2xi8>)
// CHECK: %[[XE:.*]] = tensor.expand_shape %[[X]] {{\[\[}}0], [1, 2]] output_shape [4, 2, 32]
// CHECK: %[[AMAX:.*]] = linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "reduction"]{{.*}} ins(%[[XE]] : tensor<4x2x32xf32>) outs({{.*}} : tensor<4x2xi32>)
// CHECK: arith.maxui
// CHECK: %[[SCALES:.*]]:2 = linalg.generic {{.*}} ins(%[[AMAX]] : tensor<4x2xi32>) outs({{.*}}, {{.*}} : tensor<4x2xi8>, tensor<4x2xf32>)
// CHECK: %[[CODES:.*]] = linalg.generic {{.*}} ins(%[[XE]], %[[SCALES]]#0, %[[SCALES]]#1 : tensor<4x2x32xf32>, tensor<4x2xi8>, tensor<4x2xf32>) outs({{.*}} : tensor<4x2x32xi8>)
// CHECK: %[[FLAT:.*]] = tensor.collapse_shape %[[CODES]] {{\[\[}}0], [1, 2]]
// [PK1] The codes are stored two per byte (and unpack loads them again).
// CHECK: tensor.expand_shape %[[FLAT]] {{\[\[}}0], [1, 2]] output_shape [4, 32, 2]
// CHECK: linalg.generic {{.*}} outs({{.*}} : tensor<4x32xi8>)
// CHECK: return %{{.*}}, %[[SCALES]]#0 : tensor<4x64xi8>, tensor<4x2xi8>
// CHECK-NOT: fp4train
func.func @mxfp4(%x: tensor<4x64xf32>) -> (tensor<4x64xf4E2M1FN>, tensor<4x2xf8E8M0FNU>) {
  %q = fp4train.quantize %x : tensor<4x64xf32> -> !fp4train.scaled<4x64xf4E2M1FN, block = [1, 32], scale = f8E8M0FNU>
  %v, %s = fp4train.unpack %q : !fp4train.scaled<4x64xf4E2M1FN, block = [1, 32], scale = f8E8M0FNU>
  return %v, %s : tensor<4x64xf4E2M1FN>, tensor<4x2xf8E8M0FNU>
}

// [NV1] with a computed tensor amax and [SR1] stochastic rounding: Philox's
// multiplies appear in IR.
// CHECK-LABEL: func.func @nvfp4_sr
// CHECK-SAME: -> (tensor<32x16xi8>, tensor<2x2xi8>, f32)
// CHECK: tensor.expand_shape {{.*}} output_shape [2, 16, 2, 16]
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "reduction", "parallel", "reduction"]
// CHECK: linalg.generic {{.*}}iterator_types = ["reduction", "reduction"]{{.*}} outs({{.*}} : tensor<i32>)
// CHECK: arith.divf
// CHECK: arith.minimumf
// CHECK: arith.mului_extended
// CHECK-NOT: fp4train
func.func @nvfp4_sr(%x: tensor<32x32xf32>, %seed: i64) -> !fp4train.scaled<32x32xf4E2M1FN, block = [16, 16], scale = f8E4M3FN, global> {
  %q = fp4train.quantize %x rounding = stochastic seed(%seed) : tensor<32x32xf32> -> !fp4train.scaled<32x32xf4E2M1FN, block = [16, 16], scale = f8E4M3FN, global>
  return %q : !fp4train.scaled<32x32xf4E2M1FN, block = [16, 16], scale = f8E4M3FN, global>
}

// Dequantize of a function argument: the argument becomes three.
// CHECK-LABEL: func.func @dequantize
// CHECK-SAME: (%[[V:.*]]: tensor<64x2xi8>, %[[S:.*]]: tensor<4x4xi8>, %[[G:.*]]: f32) -> tensor<64x4xbf16>
// CHECK: linalg.generic {{.*}} ins(%[[V]] : tensor<64x2xi8>) outs({{.*}} : tensor<64x2x2xi8>)
// CHECK: linalg.generic {{.*}} ins({{.*}}, %[[S]] : tensor<4x16x4xi8>, tensor<4x4xi8>)
// CHECK: arith.mulf
// CHECK: arith.mulf {{.*}}, %[[G]]
// CHECK: arith.truncf {{.*}} : f32 to bf16
func.func @dequantize(%q: !fp4train.scaled<64x4xf4E2M1FN, block = [16, 1], scale = f8E4M3FN, global>) -> tensor<64x4xbf16> {
  %y = fp4train.dequantize %q : !fp4train.scaled<64x4xf4E2M1FN, block = [16, 1], scale = f8E4M3FN, global> -> tensor<64x4xbf16>
  return %y : tensor<64x4xbf16>
}
