// RUN: fp4-opt %s -canonicalize -split-input-file | FileCheck %s

!w = !fp4train.scaled<64x128xf4E2M1FN, block = [16, 16], scale = f8E4M3FN, global>
!wt = !fp4train.scaled<128x64xf4E2M1FN, block = [16, 16], scale = f8E4M3FN, global>

// CHECK-LABEL: func @transpose_transpose
// CHECK-SAME: (%[[W:.*]]: !fp4train.scaled
// CHECK-NOT: fp4train.transpose
// CHECK: return %[[W]]
func.func @transpose_transpose(%w: !w) -> !w {
  %0 = fp4train.transpose %w : !w -> !wt
  %1 = fp4train.transpose %0 : !wt -> !w
  return %1 : !w
}

// -----

!q = !fp4train.scaled<32x64xf4E2M1FN, block = [16, 16], scale = f8E4M3FN, global>

// CHECK-LABEL: func @unpack_pack
// CHECK-SAME: (%[[V:.*]]: tensor<32x64xf4E2M1FN>, %[[S:.*]]: tensor<2x4xf8E4M3FN>, %[[G:.*]]: f32)
// CHECK-NOT: fp4train.{{(un)?pack}}
// CHECK: return %[[V]], %[[S]], %[[G]]
func.func @unpack_pack(%v: tensor<32x64xf4E2M1FN>, %s: tensor<2x4xf8E4M3FN>, %g: f32)
    -> (tensor<32x64xf4E2M1FN>, tensor<2x4xf8E4M3FN>, f32) {
  %0 = fp4train.pack %v, %s, %g : tensor<32x64xf4E2M1FN>, tensor<2x4xf8E4M3FN> -> !q
  %1:3 = fp4train.unpack %0 : !q
  return %1#0, %1#1, %1#2 : tensor<32x64xf4E2M1FN>, tensor<2x4xf8E4M3FN>, f32
}

// -----

!q = !fp4train.scaled<32x64xf4E2M1FN, block = [1, 32], scale = f8E8M0FNU>

// CHECK-LABEL: func @pack_unpack
// CHECK-SAME: (%[[Q:.*]]: !fp4train.scaled
// CHECK-NOT: fp4train.{{(un)?pack}}
// CHECK: return %[[Q]]
func.func @pack_unpack(%q: !q) -> !q {
  %v, %s = fp4train.unpack %q : !q
  %0 = fp4train.pack %v, %s : tensor<32x64xf4E2M1FN>, tensor<32x2xf8E8M0FNU> -> !q
  return %0 : !q
}

// -----

!q = !fp4train.scaled<32x64xf4E2M1FN, block = [1, 32], scale = f8E8M0FNU>

// Scales from another tensor: a genuinely new value, kept.
// CHECK-LABEL: func @pack_unpack_mixed
// CHECK: fp4train.unpack
// CHECK: fp4train.unpack
// CHECK: fp4train.pack
func.func @pack_unpack_mixed(%a: !q, %b: !q) -> !q {
  %va, %sa = fp4train.unpack %a : !q
  %vb, %sb = fp4train.unpack %b : !q
  %0 = fp4train.pack %va, %sb : tensor<32x64xf4E2M1FN>, tensor<32x2xf8E8M0FNU> -> !q
  return %0 : !q
}

// -----

!q = !fp4train.scaled<32x64xf4E2M1FN, block = [1, 32], scale = f8E8M0FNU>

// Quantization loses information: dequantize(quantize(x)) is not x.
// CHECK-LABEL: func @dequantize_quantize
// CHECK: fp4train.quantize
// CHECK: fp4train.dequantize
func.func @dequantize_quantize(%x: tensor<32x64xf32>) -> tensor<32x64xf32> {
  %0 = fp4train.quantize %x : tensor<32x64xf32> -> !q
  %1 = fp4train.dequantize %0 : !q -> tensor<32x64xf32>
  return %1 : tensor<32x64xf32>
}

// -----

// In f32 a rotation followed by its inverse is not the identity.
// CHECK-LABEL: func @hadamard_inverse
// CHECK: fp4train.hadamard
// CHECK: fp4train.hadamard {{.*}} inverse
func.func @hadamard_inverse(%x: tensor<32x64xf32>) -> tensor<32x64xf32> {
  %0 = fp4train.hadamard %x with #fp4train.hadamard<16, fixed> along 1 : tensor<32x64xf32>
  %1 = fp4train.hadamard %0 with #fp4train.hadamard<16, fixed> along 1 inverse : tensor<32x64xf32>
  return %1 : tensor<32x64xf32>
}

// -----

!q = !fp4train.scaled<32x64xf4E2M1FN, block = [1, 32], scale = f8E8M0FNU>

// Pure ops with unused results disappear.
// CHECK-LABEL: func @dead
// CHECK-NEXT: return
func.func @dead(%x: tensor<32x64xf32>, %seed: i64) {
  %0 = fp4train.quantize %x rounding = stochastic seed(%seed) : tensor<32x64xf32> -> !q
  return
}
