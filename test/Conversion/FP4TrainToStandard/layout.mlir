// RUN: fp4-opt %s --fp4train-expand | FileCheck %s

// pack/unpack vanish under the 1:N conversion; the transposed view
// transposes codes and scales and keeps the global scale.
// CHECK-LABEL: func.func @transpose
// CHECK-SAME: (%[[V:.*]]: tensor<32x64xi8>, %[[S:.*]]: tensor<2x4xi8>, %[[G:.*]]: f32)
// CHECK: %[[VT:.*]] = linalg.transpose ins(%[[V]] : tensor<32x64xi8>) outs({{.*}} : tensor<64x32xi8>) permutation = [1, 0]
// CHECK: %[[ST:.*]] = linalg.transpose ins(%[[S]] : tensor<2x4xi8>) outs({{.*}} : tensor<4x2xi8>) permutation = [1, 0]
// CHECK: return %[[VT]], %[[ST]], %[[G]]
func.func @transpose(%v: tensor<32x64xf4E2M1FN>, %s: tensor<2x4xf8E4M3FN>, %g: f32)
    -> (tensor<64x32xf4E2M1FN>, tensor<4x2xf8E4M3FN>, f32) {
  %q = fp4train.pack %v, %s, %g : tensor<32x64xf4E2M1FN>, tensor<2x4xf8E4M3FN> -> !fp4train.scaled<32x64xf4E2M1FN, block = [16, 16], scale = f8E4M3FN, global>
  %t = fp4train.transpose %q : !fp4train.scaled<32x64xf4E2M1FN, block = [16, 16], scale = f8E4M3FN, global> -> !fp4train.scaled<64x32xf4E2M1FN, block = [16, 16], scale = f8E4M3FN, global>
  %tv, %ts, %tg = fp4train.unpack %t : !fp4train.scaled<64x32xf4E2M1FN, block = [16, 16], scale = f8E4M3FN, global>
  return %tv, %ts, %tg : tensor<64x32xf4E2M1FN>, tensor<4x2xf8E4M3FN>, f32
}

// Calls carry the three parts.
// CHECK-LABEL: func.func @caller
// CHECK: %[[R:.*]]:3 = call @callee(%{{.*}}, %{{.*}}, %{{.*}}) : (tensor<16x16xi8>, tensor<1x1xi8>, f32) -> (tensor<16x16xi8>, tensor<1x1xi8>, f32)
func.func private @callee(!fp4train.scaled<16x16xf4E2M1FN, block = [16, 16], scale = f8E4M3FN, global>) -> !fp4train.scaled<16x16xf4E2M1FN, block = [16, 16], scale = f8E4M3FN, global>
func.func @caller(%q: !fp4train.scaled<16x16xf4E2M1FN, block = [16, 16], scale = f8E4M3FN, global>) -> !fp4train.scaled<16x16xf4E2M1FN, block = [16, 16], scale = f8E4M3FN, global> {
  %r = call @callee(%q) : (!fp4train.scaled<16x16xf4E2M1FN, block = [16, 16], scale = f8E4M3FN, global>) -> !fp4train.scaled<16x16xf4E2M1FN, block = [16, 16], scale = f8E4M3FN, global>
  return %r : !fp4train.scaled<16x16xf4E2M1FN, block = [16, 16], scale = f8E4M3FN, global>
}
