// RUN: fp4-opt %s --fp4train-expand | FileCheck %s

// [PK1] A block-scaled tensor's E2M1 codes are stored two per byte along the
// last dimension. pack stores the codes (one generic reading each pair with
// constant indices: element 2j in the low nibble), unpack loads them (one
// generic writing both codes of a byte), and the transposed view transposes
// the loaded codes, stores them again, and keeps scales and global scale.
// CHECK-DAG: #[[$LOW:.*]] = affine_map<(d0, d1) -> (d0, d1, 0)>
// CHECK-DAG: #[[$HIGH:.*]] = affine_map<(d0, d1) -> (d0, d1, 1)>
// CHECK-DAG: #[[$ID2:.*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[$BYTE:.*]] = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-LABEL: func.func @transpose
// CHECK-SAME: (%[[V:.*]]: tensor<32x64xi8>, %[[S:.*]]: tensor<2x4xi8>, %[[G:.*]]: f32) -> (tensor<64x32xi8>, tensor<4x2xi8>, f32)
// CHECK: %[[PAIRS:.*]] = tensor.expand_shape %[[V]] {{\[}}[0], [1, 2]] output_shape [32, 32, 2]
// CHECK: %[[STORED:.*]] = linalg.generic {indexing_maps = [#[[$LOW]], #[[$HIGH]], #[[$ID2]]], {{.*}}} ins(%[[PAIRS]], %[[PAIRS]] : tensor<32x32x2xi8>, tensor<32x32x2xi8>) outs({{.*}} : tensor<32x32xi8>)
// CHECK: ^bb0(%[[LO:.*]]: i8, %[[HI:.*]]: i8, %{{.*}}: i8):
// CHECK:   %[[M:.*]] = arith.andi %[[LO]], %{{.*}} : i8
// CHECK:   %[[SH:.*]] = arith.shli %[[HI]], %{{.*}} : i8
// CHECK:   arith.ori %[[M]], %[[SH]] : i8
// CHECK: %[[LOADED:.*]] = linalg.generic {indexing_maps = [#[[$BYTE]], #{{.*}}], {{.*}}} ins(%[[STORED]] : tensor<32x32xi8>) outs({{.*}} : tensor<32x32x2xi8>)
// CHECK:   %[[H:.*]] = linalg.index 2 : index
// CHECK:   arith.shrui
// CHECK: %[[CODES:.*]] = tensor.collapse_shape %[[LOADED]] {{\[}}[0], [1, 2]] : tensor<32x32x2xi8> into tensor<32x64xi8>
// CHECK: %[[VT:.*]] = linalg.transpose ins(%[[CODES]] : tensor<32x64xi8>) outs({{.*}} : tensor<64x32xi8>) permutation = [1, 0]
// CHECK: tensor.expand_shape %[[VT]] {{\[}}[0], [1, 2]] output_shape [64, 16, 2]
// CHECK: linalg.generic {{.*}} outs({{.*}} : tensor<64x16xi8>)
// CHECK: %[[ST:.*]] = linalg.transpose ins(%[[S]] : tensor<2x4xi8>) outs({{.*}} : tensor<4x2xi8>) permutation = [1, 0]
// CHECK: %[[TV:.*]] = tensor.collapse_shape {{.*}} : tensor<64x16x2xi8> into tensor<64x32xi8>
// CHECK: return %[[TV]], %[[ST]], %[[G]]
func.func @transpose(%v: tensor<32x64xf4E2M1FN>, %s: tensor<2x4xf8E4M3FN>, %g: f32)
    -> (tensor<64x32xf4E2M1FN>, tensor<4x2xf8E4M3FN>, f32) {
  %q = fp4train.pack %v, %s, %g : tensor<32x64xf4E2M1FN>, tensor<2x4xf8E4M3FN> -> !fp4train.scaled<32x64xf4E2M1FN, block = [16, 16], scale = f8E4M3FN, global>
  %t = fp4train.transpose %q : !fp4train.scaled<32x64xf4E2M1FN, block = [16, 16], scale = f8E4M3FN, global> -> !fp4train.scaled<64x32xf4E2M1FN, block = [16, 16], scale = f8E4M3FN, global>
  %tv, %ts, %tg = fp4train.unpack %t : !fp4train.scaled<64x32xf4E2M1FN, block = [16, 16], scale = f8E4M3FN, global>
  return %tv, %ts, %tg : tensor<64x32xf4E2M1FN>, tensor<4x2xf8E4M3FN>, f32
}

// Rows of odd length (blocks along dimension 0) are padded with a zero code
// before packing, and the padding is sliced off when loading.
// CHECK-LABEL: func.func @odd_rows_pack
// CHECK-SAME: (%[[V:.*]]: tensor<32x5xi8>, %{{.*}}: tensor<1x5xi8>) -> (tensor<32x3xi8>, tensor<1x5xi8>)
// CHECK: %[[PAD:.*]] = tensor.pad %[[V]] low[0, 0] high[0, 1]
// CHECK: tensor.yield %c0_i8
// CHECK: tensor.expand_shape %[[PAD]] {{\[}}[0], [1, 2]] output_shape [32, 3, 2] : tensor<32x6xi8> into tensor<32x3x2xi8>
// CHECK: %[[STORED:.*]] = linalg.generic {{.*}} outs({{.*}} : tensor<32x3xi8>)
// CHECK: return %[[STORED]]
func.func @odd_rows_pack(%v: tensor<32x5xf4E2M1FN>, %s: tensor<1x5xf8E8M0FNU>)
    -> !fp4train.scaled<32x5xf4E2M1FN, block = [32, 1], scale = f8E8M0FNU> {
  %q = fp4train.pack %v, %s : tensor<32x5xf4E2M1FN>, tensor<1x5xf8E8M0FNU> -> !fp4train.scaled<32x5xf4E2M1FN, block = [32, 1], scale = f8E8M0FNU>
  return %q : !fp4train.scaled<32x5xf4E2M1FN, block = [32, 1], scale = f8E8M0FNU>
}

// CHECK-LABEL: func.func @odd_rows_unpack
// CHECK-SAME: (%[[STORED:.*]]: tensor<32x3xi8>, %{{.*}}: tensor<1x5xi8>) -> tensor<32x5xi8>
// CHECK: %[[LOADED:.*]] = linalg.generic {{.*}} ins(%[[STORED]] : tensor<32x3xi8>) outs({{.*}} : tensor<32x3x2xi8>)
// CHECK: %[[EVEN:.*]] = tensor.collapse_shape %[[LOADED]] {{.*}} into tensor<32x6xi8>
// CHECK: %[[CODES:.*]] = tensor.extract_slice %[[EVEN]][0, 0] [32, 5] [1, 1] : tensor<32x6xi8> to tensor<32x5xi8>
// CHECK: return %[[CODES]]
func.func @odd_rows_unpack(%q: !fp4train.scaled<32x5xf4E2M1FN, block = [32, 1], scale = f8E8M0FNU>)
    -> tensor<32x5xf4E2M1FN> {
  %v, %s = fp4train.unpack %q : !fp4train.scaled<32x5xf4E2M1FN, block = [32, 1], scale = f8E8M0FNU>
  return %v : tensor<32x5xf4E2M1FN>
}

// FP8 codes are stored one per byte: pack and unpack only forward them.
// CHECK-LABEL: func.func @fp8
// CHECK-SAME: (%[[V:.*]]: tensor<4x32xi8>, %[[S:.*]]: tensor<4x1xi8>)
// CHECK-NEXT: return %[[V]], %[[S]]
func.func @fp8(%v: tensor<4x32xf8E4M3FN>, %s: tensor<4x1xf8E8M0FNU>)
    -> !fp4train.scaled<4x32xf8E4M3FN, block = [1, 32], scale = f8E8M0FNU> {
  %q = fp4train.pack %v, %s : tensor<4x32xf8E4M3FN>, tensor<4x1xf8E8M0FNU> -> !fp4train.scaled<4x32xf8E4M3FN, block = [1, 32], scale = f8E8M0FNU>
  return %q : !fp4train.scaled<4x32xf8E4M3FN, block = [1, 32], scale = f8E8M0FNU>
}

// Calls carry the three parts, the codes in their stored shape.
// CHECK-LABEL: func.func @caller
// CHECK: %[[R:.*]]:3 = call @callee(%{{.*}}, %{{.*}}, %{{.*}}) : (tensor<16x8xi8>, tensor<1x1xi8>, f32) -> (tensor<16x8xi8>, tensor<1x1xi8>, f32)
func.func private @callee(!fp4train.scaled<16x16xf4E2M1FN, block = [16, 16], scale = f8E4M3FN, global>) -> !fp4train.scaled<16x16xf4E2M1FN, block = [16, 16], scale = f8E4M3FN, global>
func.func @caller(%q: !fp4train.scaled<16x16xf4E2M1FN, block = [16, 16], scale = f8E4M3FN, global>) -> !fp4train.scaled<16x16xf4E2M1FN, block = [16, 16], scale = f8E4M3FN, global> {
  %r = call @callee(%q) : (!fp4train.scaled<16x16xf4E2M1FN, block = [16, 16], scale = f8E4M3FN, global>) -> !fp4train.scaled<16x16xf4E2M1FN, block = [16, 16], scale = f8E4M3FN, global>
  return %r : !fp4train.scaled<16x16xf4E2M1FN, block = [16, 16], scale = f8E4M3FN, global>
}
