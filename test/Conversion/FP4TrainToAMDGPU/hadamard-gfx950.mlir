// RUN: fp4-opt %s --fp4train-to-amdgpu --split-input-file | FileCheck %s

// n = 16 along the last dimension, no signs: one lane per block (its 16
// elements as four 16-byte loads), every stage in registers, no LDS. 64x256
// is 1024 blocks, four workgroups of 256 and no bounds check.
// CHECK-LABEL: func.func @h16
// CHECK-SAME:    (%[[X:.*]]: tensor<64x256xf32>) -> tensor<64x256xf32>
// CHECK:         %[[FLAT:.*]] = tensor.collapse_shape %[[X]] {{\[}}[0, 1]] : tensor<64x256xf32> into tensor<16384xf32>
// CHECK:         %[[IN:.*]] = bufferization.to_buffer %[[FLAT]] read_only : tensor<16384xf32> to memref<16384xf32>
// CHECK:         %[[OUT:.*]] = memref.alloc() {alignment = 64 : i64} : memref<16384xf32>
// CHECK-NOT:     bufferization.to_buffer
// CHECK:         gpu.launch blocks(%[[BX:.*]], %{{.*}}, %{{.*}}) in (%{{.*}} = %c4{{.*}}, %{{.*}} = %c1{{.*}}, %{{.*}} = %c1{{.*}}) threads(%[[TX:.*]], %{{.*}}, %{{.*}}) in (%{{.*}} = %c256{{.*}}, %{{.*}} = %c1{{.*}}, %{{.*}} = %c1{{.*}}) {
// CHECK-NOT:       scf.if
// CHECK:           %[[WG:.*]] = arith.muli %[[BX]], %{{.*}} : index
// CHECK:           %[[BLOCK:.*]] = arith.addi %[[WG]], %[[TX]] : index
// CHECK:           %[[BASE:.*]] = arith.muli %[[BLOCK]], %{{.*}} : index
// CHECK:           %[[V0:.*]] = vector.load %[[IN]][%[[BASE]]] {alignment = 16 : i64} : memref<16384xf32>, vector<4xf32>
// CHECK:           %[[E0:.*]] = vector.extract %[[V0]][0]
// CHECK:           %[[E1:.*]] = vector.extract %[[V0]][1]
// CHECK-COUNT-3:   vector.load %[[IN]]
// Stage h = 1 pairs elements (0, 1): sum to the lower, difference to the upper.
// CHECK:           arith.addf %[[E0]], %[[E1]] : f32
// CHECK-NEXT:      arith.subf %[[E0]], %[[E1]] : f32
// CHECK-COUNT-31:  arith.subf
// CHECK-NOT:       arith.subf
// Normalization by f32(1/4), then four 16-byte stores.
// CHECK-COUNT-16:  arith.mulf %{{.*}}, %{{.*}} : f32
// CHECK-NOT:       arith.mulf
// CHECK-NOT:       gpu.barrier
// CHECK-COUNT-4:   vector.store %{{.*}}, %[[OUT]][%{{.*}}] {alignment = 16 : i64} : memref<16384xf32>, vector<4xf32>
// CHECK:           gpu.terminator
// CHECK:         %[[T:.*]] = bufferization.to_tensor %[[OUT]] restrict writable : memref<16384xf32> to tensor<16384xf32>
// CHECK:         %[[R:.*]] = tensor.expand_shape %[[T]] {{\[}}[0, 1]] output_shape [64, 256] : tensor<16384xf32> into tensor<64x256xf32>
// CHECK:         return %[[R]]
func.func @h16(%x: tensor<64x256xf32>) -> tensor<64x256xf32> {
  %r = fp4train.hadamard %x with #fp4train.hadamard<16, none> along 1 : tensor<64x256xf32>
  return %r : tensor<64x256xf32>
}

// -----

// n = 32, fixed signs: the expansion's constant sign vector crosses as a
// read-only buffer and multiplies the elements first. Two lanes per block
// (threads (2, 128)): stages 1..8 in registers, the exchange through LDS
// (256 rows of 16 + 1 f32) and one barrier, then stage 16 in registers.
// CHECK-LABEL: func.func @h32_fixed
// CHECK:         %[[IN:.*]] = bufferization.to_buffer %{{.*}} read_only : tensor<16384xf32> to memref<16384xf32>
// CHECK:         %[[OUT:.*]] = memref.alloc() {alignment = 64 : i64} : memref<16384xf32>
// CHECK:         %[[SIGNS:.*]] = arith.constant dense<{{\[}}1.000000e+00, 1.000000e+00, -1.000000e+00, {{.*}}]> : tensor<32xf32>
// CHECK:         %[[S:.*]] = bufferization.to_buffer %[[SIGNS]] read_only : tensor<32xf32> to memref<32xf32>
// CHECK:         gpu.launch blocks({{.*}}) in (%{{.*}} = %c4{{.*}}, %{{.*}} = %c1{{.*}}, %{{.*}} = %c1{{.*}}) threads(%[[LANE:.*]], %[[BLK:.*]], %{{.*}}) in (%{{.*}} = %c2{{.*}}, %{{.*}} = %c128{{.*}}, %{{.*}} = %c1{{.*}}) workgroup(%[[LDS:.*]] : memref<4352xf32, #gpu.address_space<workgroup>>) {
// CHECK-COUNT-4:   vector.load %[[IN]][%{{.*}}] {alignment = 16 : i64} : memref<16384xf32>, vector<4xf32>
// CHECK-COUNT-4:   vector.load %[[S]][%{{.*}}] : memref<32xf32>, vector<4xf32>
// CHECK-COUNT-16:  arith.mulf
// CHECK:           arith.addf
// CHECK-COUNT-16:  memref.store %{{.*}}, %[[LDS]][%{{.*}}] : memref<4352xf32, #gpu.address_space<workgroup>>
// CHECK-NEXT:      gpu.barrier
// CHECK-COUNT-16:  memref.load %[[LDS]][%{{.*}}] : memref<4352xf32, #gpu.address_space<workgroup>>
// CHECK-COUNT-8:   arith.subf
// CHECK-NOT:       arith.subf
// CHECK:           %[[NORM:.*]] = arith.constant 0.176776692 : f32
// CHECK-COUNT-16:  arith.mulf %{{.*}}, %[[NORM]] : f32
// Runs of 8 consecutive elements per lane: four 16-byte stores.
// CHECK-COUNT-4:   vector.store %{{.*}}, %[[OUT]][%{{.*}}] {alignment = 16 : i64} : memref<16384xf32>, vector<4xf32>
// CHECK:           gpu.terminator
func.func @h32_fixed(%x: tensor<64x256xf32>) -> tensor<64x256xf32> {
  %r = fp4train.hadamard %x with #fp4train.hadamard<32, fixed> along 1 : tensor<64x256xf32>
  return %r : tensor<64x256xf32>
}

// -----

// n = 256 along dimension 0 with random signs: the signs are drawn on the
// host by the expansion's Philox builder. The blocks are strided (inner =
// 40): threads (16 blocks, 16 lanes), consecutive lanes on consecutive inner
// positions, scalar accesses; grid (ceil(40 / 16), 2 block rows, 1). 40 is
// not a multiple of 16: out-of-range lanes read a valid block, take part in
// the barrier and store nothing.
// CHECK-LABEL: func.func @h256_random_dim0
// CHECK-SAME:    (%[[X:.*]]: tensor<512x40xf32>, %[[SEED:.*]]: i64, %[[STEP:.*]]: i64)
// CHECK:         %[[IN:.*]] = bufferization.to_buffer %{{.*}} read_only : tensor<20480xf32> to memref<20480xf32>
// CHECK:         %[[OUT:.*]] = memref.alloc() {alignment = 64 : i64} : memref<20480xf32>
// CHECK:         %[[SIGNS:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<256xf32>)
// CHECK:           arith.mului_extended
// CHECK:         %[[S:.*]] = bufferization.to_buffer %[[SIGNS]] read_only : tensor<256xf32> to memref<256xf32>
// CHECK:         gpu.launch blocks(%[[BX:.*]], %[[BY:.*]], %[[BZ:.*]]) in (%{{.*}} = %c3{{.*}}, %{{.*}} = %c2{{.*}}, %{{.*}} = %c1{{.*}}) threads(%[[TX:.*]], %[[TY:.*]], %{{.*}}) in (%{{.*}} = %c16{{.*}}, %{{.*}} = %c16{{.*}}, %{{.*}} = %c1{{.*}}) workgroup(%[[LDS:.*]] : memref<4352xf32, #gpu.address_space<workgroup>>) {
// CHECK:           %[[I:.*]] = arith.addi %{{.*}}, %[[TX]] : index
// CHECK:           %[[INRANGE:.*]] = arith.cmpi ult, %[[I]], %c40{{.*}} : index
// CHECK:           %[[IC:.*]] = arith.select %[[INRANGE]], %[[I]], %c39{{.*}} : index
// CHECK:           arith.muli %[[BZ]], %c2{{.*}} : index
// CHECK:           %[[ROWS:.*]] = arith.addi %{{.*}}, %[[BY]] : index
// CHECK:           %[[ROWBASE:.*]] = arith.muli %[[ROWS]], %c10240{{.*}} : index
// CHECK:           %[[BASE:.*]] = arith.addi %[[ROWBASE]], %[[IC]] : index
// CHECK-COUNT-16:  memref.load %[[IN]][%{{.*}}] : memref<20480xf32>
// CHECK-COUNT-4:   vector.load %[[S]]
// CHECK-COUNT-16:  arith.mulf
// CHECK-COUNT-16:  memref.store %{{.*}}, %[[LDS]]
// CHECK-NEXT:      gpu.barrier
// CHECK-COUNT-16:  memref.load %[[LDS]]
// Stages 16, 32, 64, 128: 4 x 8 pairs.
// CHECK-COUNT-32:  arith.subf
// CHECK-NOT:       arith.subf
// CHECK:           arith.constant 6.250000e-02 : f32
// CHECK:           scf.if %[[INRANGE]] {
// CHECK-COUNT-16:    memref.store %{{.*}}, %[[OUT]][%{{.*}}] : memref<20480xf32>
// CHECK:           }
// CHECK:           gpu.terminator
func.func @h256_random_dim0(%x: tensor<512x40xf32>, %seed: i64, %step: i64) -> tensor<512x40xf32> {
  %r = fp4train.hadamard %x with #fp4train.hadamard<256, random> along 0 seed(%seed) step(%step) : tensor<512x40xf32>
  return %r : tensor<512x40xf32>
}

// -----

// n = 64, inverse: the signs multiply last, after the normalization (exact
// 1/8). 3x320 is 15 blocks of 4 lanes: one workgroup (64 blocks) with a
// bounds check on the block index.
// CHECK-LABEL: func.func @h64_inverse_tail
// CHECK:         %[[S:.*]] = bufferization.to_buffer %{{.*}} read_only : tensor<64xf32> to memref<64xf32>
// CHECK:         gpu.launch blocks(%[[BX:.*]], %{{.*}}, %{{.*}}) in (%{{.*}} = %c1{{.*}}, %{{.*}} = %c1{{.*}}, %{{.*}} = %c1{{.*}}) threads(%[[LANE:.*]], %[[BLK:.*]], %{{.*}}) in (%{{.*}} = %c4{{.*}}, %{{.*}} = %c64{{.*}}, %{{.*}} = %c1{{.*}}) workgroup(%{{.*}} : memref<4352xf32, #gpu.address_space<workgroup>>) {
// CHECK:           %[[G:.*]] = arith.addi %{{.*}}, %[[BLK]] : index
// CHECK:           %[[INRANGE:.*]] = arith.cmpi ult, %[[G]], %c15{{.*}} : index
// CHECK:           arith.select %[[INRANGE]], %[[G]], %c14{{.*}} : index
// CHECK-NOT:       vector.load %[[S]]
// CHECK:           gpu.barrier
// CHECK:           %[[NORM:.*]] = arith.constant 1.250000e-01 : f32
// CHECK-COUNT-16:  arith.mulf %{{.*}}, %[[NORM]] : f32
// CHECK-COUNT-4:   vector.load %[[S]][%{{.*}}] : memref<64xf32>, vector<4xf32>
// CHECK-COUNT-16:  arith.mulf
// CHECK:           scf.if %[[INRANGE]] {
// CHECK-COUNT-4:     vector.store %{{.*}} {alignment = 16 : i64} : memref<960xf32>, vector<4xf32>
// CHECK:           }
func.func @h64_inverse_tail(%x: tensor<3x320xf32>) -> tensor<3x320xf32> {
  %r = fp4train.hadamard %x with #fp4train.hadamard<64, fixed> along 1 inverse : tensor<3x320xf32>
  return %r : tensor<3x320xf32>
}

// -----

// n = 128 along the middle dimension of a rank-3 tensor: the view
// [outer = 4, rows = 2, 128, inner = 3]; grid (1, 2, 4), threads (32, 4 x 8
// lanes), element k of a block at base + 3 k.
// CHECK-LABEL: func.func @h128_middle
// CHECK:         %[[FLAT:.*]] = tensor.collapse_shape %{{.*}} {{\[}}[0, 1, 2]] : tensor<4x256x3xf32> into tensor<3072xf32>
// CHECK:         gpu.launch blocks(%{{.*}}) in (%{{.*}} = %c1{{.*}}, %{{.*}} = %c2{{.*}}, %{{.*}} = %c4{{.*}}) threads(%{{.*}}) in (%{{.*}} = %c32{{.*}}, %{{.*}} = %c8{{.*}}, %{{.*}} = %c1{{.*}}) workgroup(
// CHECK:           arith.cmpi ult, %{{.*}}, %c3{{.*}} : index
// CHECK:           arith.muli %{{.*}}, %c384{{.*}} : index
// CHECK-COUNT-16:  memref.load %{{.*}} : memref<3072xf32>
// CHECK:           gpu.barrier
// CHECK:           scf.if
// CHECK-COUNT-16:    memref.store %{{.*}} : memref<3072xf32>
// CHECK:         tensor.expand_shape %{{.*}} {{\[}}[0, 1, 2]] output_shape [4, 256, 3] : tensor<3072xf32> into tensor<4x256x3xf32>
func.func @h128_middle(%x: tensor<4x256x3xf32>) -> tensor<4x256x3xf32> {
  %r = fp4train.hadamard %x with #fp4train.hadamard<128, none> along 1 : tensor<4x256x3xf32>
  return %r : tensor<4x256x3xf32>
}
