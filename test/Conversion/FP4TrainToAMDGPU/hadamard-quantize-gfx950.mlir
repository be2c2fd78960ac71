// RUN: fp4-opt %s --fp4train-to-amdgpu --split-input-file | FileCheck %s

// The Wgrad operand of recipe=mxfp4-hadamard (32-point fixed rotation along
// the last dimension, then MXFP4 blocks of 32 along it): one kernel. It
// reads the rotation's input, rotates as the Hadamard kernel does (two
// lanes per block, the exchange through LDS), stages the rotated blocks in
// LDS rows of 32 + 4 f32 (128 blocks of the 4096 elements of a workgroup,
// 4608 f32), and threads 0..127 quantize one block each with the scaled
// conversions; no f32 buffer is allocated for the rotation.
// CHECK-LABEL: func.func @wgrad_mxfp4
// CHECK-SAME:    (%[[X:.*]]: tensor<32x64xf32>) -> (tensor<32x32xi8>, tensor<32x2xi8>)
// CHECK:         %[[FLAT:.*]] = tensor.collapse_shape %[[X]] {{\[}}[0, 1]] : tensor<32x64xf32> into tensor<2048xf32>
// CHECK:         %[[IN:.*]] = bufferization.to_buffer %[[FLAT]] read_only : tensor<2048xf32> to memref<2048xf32>
// CHECK:         %[[SIGNS:.*]] = bufferization.to_buffer %{{.*}} read_only : tensor<32xf32> to memref<32xf32>
// CHECK-NOT:     memref<2048xf32>
// CHECK:         %[[CODES:.*]] = memref.alloc() {alignment = 64 : i64} : memref<1024xi8>
// CHECK:         %[[SCALES:.*]] = memref.alloc() {alignment = 64 : i64} : memref<64xi8>
// CHECK:         gpu.launch blocks(%[[BX:.*]], %{{.*}}, %{{.*}}) in (%{{.*}} = %c1{{.*}}, %{{.*}} = %c1{{.*}}, %{{.*}} = %c1{{.*}}) threads(%{{.*}}, %{{.*}}, %{{.*}}) in (%{{.*}} = %c2{{.*}}, %{{.*}} = %c128{{.*}}, %{{.*}} = %c1{{.*}}) workgroup(%[[LDS:.*]] : memref<4608xf32, #gpu.address_space<workgroup>>) {
// CHECK-COUNT-4:   vector.load %[[IN]][%{{.*}}] {alignment = 16 : i64} : memref<2048xf32>, vector<4xf32>
// CHECK-COUNT-4:   vector.load %[[SIGNS]]
// The exchange of the rotation, then (after its reads) the staging.
// CHECK:           gpu.barrier
// CHECK:           gpu.barrier
// CHECK-COUNT-4:   vector.store %{{.*}}, %[[LDS]][%{{.*}}] : memref<4608xf32, #gpu.address_space<workgroup>>, vector<4xf32>
// CHECK:           gpu.barrier
// CHECK:           %[[T:.*]] = arith.cmpi ult, %{{.*}}, %c128{{.*}} : index
// CHECK:           %[[B:.*]] = arith.cmpi ult, %{{.*}}, %c64{{.*}} : index
// CHECK:           %[[G:.*]] = arith.andi %[[T]], %[[B]] : i1
// CHECK:           scf.if %[[G]] {
// CHECK-COUNT-8:     vector.load %[[LDS]][%{{.*}}] : memref<4608xf32, #gpu.address_space<workgroup>>, vector<4xf32>
// CHECK-COUNT-16:    amdgpu.packed_scaled_trunc
// CHECK-NOT:         amdgpu.packed_scaled_trunc
// CHECK:             vector.store %{{.*}}, %[[CODES]][%{{.*}}] {alignment = 16 : i64} : memref<1024xi8>, vector<16xi8>
// CHECK-NOT:         vector.store %{{.*}}, %[[CODES]]
// CHECK:             memref.store %{{.*}}, %[[SCALES]][%{{.*}}] : memref<64xi8>
// CHECK:         gpu.terminator
// CHECK-NOT:     gpu.launch
// CHECK:         return
func.func @wgrad_mxfp4(%x: tensor<32x64xf32>)
    -> !fp4train.scaled<32x64xf4E2M1FN, block = [1, 32], scale = f8E8M0FNU> {
  %r = fp4train.hadamard %x with #fp4train.hadamard<32, fixed> along 1 : tensor<32x64xf32>
  %q = fp4train.quantize %r : tensor<32x64xf32>
      -> !fp4train.scaled<32x64xf4E2M1FN, block = [1, 32], scale = f8E8M0FNU>
  return %q : !fp4train.scaled<32x64xf4E2M1FN, block = [1, 32], scale = f8E8M0FNU>
}

// -----

// n = 16 < B = 32, random signs (the host's Philox sign vector), [SR1]
// stochastic rounding, from bf16 through arith.extf: one kernel reading the
// bf16 tensor (extended in registers), no exchange (one lane per rotation
// block), so the staging has the only barrier; the SR conversions take the
// seed as a kernel operand.
// CHECK-LABEL: func.func @sr_n16_bf16
// CHECK-SAME:    (%[[X:.*]]: tensor<64x128xbf16>, %{{.*}}: i64, %{{.*}}: i64, %[[SEED:.*]]: i64)
// CHECK:         %[[FLAT:.*]] = tensor.collapse_shape %[[X]] {{\[}}[0, 1]] : tensor<64x128xbf16> into tensor<8192xbf16>
// CHECK:         %[[IN:.*]] = bufferization.to_buffer %[[FLAT]] read_only : tensor<8192xbf16> to memref<8192xbf16>
// CHECK:         linalg.generic
// CHECK:         gpu.launch {{.*}} threads(%{{.*}}, %{{.*}}, %{{.*}}) in (%{{.*}} = %c256{{.*}}, %{{.*}} = %c1{{.*}}, %{{.*}} = %c1{{.*}}) workgroup(%[[LDS:.*]] : memref<4608xf32, #gpu.address_space<workgroup>>) {
// CHECK:           %[[V:.*]] = vector.load %[[IN]][%{{.*}}] {alignment = 8 : i64} : memref<8192xbf16>, vector<4xbf16>
// CHECK:           arith.extf %[[V]] : vector<4xbf16> to vector<4xf32>
// CHECK-COUNT-3:   vector.load %[[IN]]
// CHECK:           vector.store %{{.*}}, %[[LDS]]
// CHECK:           gpu.barrier
// CHECK-NOT:       gpu.barrier
// CHECK:           arith.trunci %[[SEED]] : i64 to i32
// CHECK:           rocdl.cvt.scalef32.sr.pk.fp4.f32
// CHECK:         gpu.terminator
// CHECK-NOT:     gpu.launch
// CHECK:         return
func.func @sr_n16_bf16(%x: tensor<64x128xbf16>, %hseed: i64, %step: i64, %seed: i64)
    -> !fp4train.scaled<64x128xf4E2M1FN, block = [1, 32], scale = f8E8M0FNU> {
  %e = arith.extf %x : tensor<64x128xbf16> to tensor<64x128xf32>
  %r = fp4train.hadamard %e with #fp4train.hadamard<16, random> along 1 seed(%hseed) step(%step) : tensor<64x128xf32>
  %q = fp4train.quantize %r rounding = stochastic seed(%seed) : tensor<64x128xf32>
      -> !fp4train.scaled<64x128xf4E2M1FN, block = [1, 32], scale = f8E8M0FNU>
  return %q : !fp4train.scaled<64x128xf4E2M1FN, block = [1, 32], scale = f8E8M0FNU>
}

// -----

// The rotation has another use (it is returned): its Hadamard kernel stays
// for that use and writes the f32 buffer; the quantize is still fused and
// reads the rotation's input, not that buffer.
// CHECK-LABEL: func.func @other_use
// CHECK:         %[[IN:.*]] = bufferization.to_buffer %{{.*}} read_only : tensor<8192xf32> to memref<8192xf32>
// CHECK:         %[[ROT:.*]] = memref.alloc() {alignment = 64 : i64} : memref<8192xf32>
// CHECK:         gpu.launch
// CHECK:           vector.store %{{.*}}, %[[ROT]]
// CHECK:         gpu.terminator
// CHECK:         %[[IN2:.*]] = bufferization.to_buffer %{{.*}} read_only : tensor<8192xf32> to memref<8192xf32>
// CHECK:         gpu.launch {{.*}} workgroup(%{{.*}} : memref<4608xf32, #gpu.address_space<workgroup>>) {
// CHECK-NOT:       %[[ROT]]{{(\[| )}}
// CHECK:           vector.load %[[IN2]]
// CHECK-NOT:       %[[ROT]]{{(\[| )}}
// CHECK:           amdgpu.packed_scaled_trunc
// CHECK-NOT:       %[[ROT]]{{(\[| )}}
// CHECK:         gpu.terminator
// CHECK-NOT:     gpu.launch
// CHECK:         bufferization.to_tensor %[[ROT]]
func.func @other_use(%x: tensor<64x128xf32>)
    -> (!fp4train.scaled<64x128xf8E4M3FN, block = [1, 32], scale = f8E8M0FNU>, tensor<64x128xf32>) {
  %r = fp4train.hadamard %x with #fp4train.hadamard<64, fixed> along 1 : tensor<64x128xf32>
  %q = fp4train.quantize %r : tensor<64x128xf32>
      -> !fp4train.scaled<64x128xf8E4M3FN, block = [1, 32], scale = f8E8M0FNU>
  return %q, %r : !fp4train.scaled<64x128xf8E4M3FN, block = [1, 32], scale = f8E8M0FNU>, tensor<64x128xf32>
}

// -----

// Fallback: a rotation along another dimension than the quantize's blocks
// keeps the two kernels (the Hadamard kernel's strided form, then the
// quantize kernel reading its result).
// CHECK-LABEL: func.func @fallback_other_dim
// CHECK:         %[[ROT:.*]] = memref.alloc() {alignment = 64 : i64} : memref<8192xf32>
// CHECK:         gpu.launch
// CHECK:         gpu.terminator
// CHECK:         %[[T:.*]] = bufferization.to_tensor %[[ROT]] restrict writable
// CHECK:         %[[R:.*]] = tensor.expand_shape %[[T]]
// CHECK:         %[[R2:.*]] = tensor.collapse_shape %[[R]]
// CHECK:         %[[QIN:.*]] = bufferization.to_buffer %[[R2]] read_only
// CHECK:         gpu.launch
// CHECK:           vector.load %[[QIN]]
// CHECK:         gpu.terminator
// CHECK-NOT:     gpu.launch
func.func @fallback_other_dim(%x: tensor<64x128xf32>)
    -> !fp4train.scaled<64x128xf4E2M1FN, block = [1, 32], scale = f8E8M0FNU> {
  %r = fp4train.hadamard %x with #fp4train.hadamard<32, fixed> along 0 : tensor<64x128xf32>
  %q = fp4train.quantize %r : tensor<64x128xf32>
      -> !fp4train.scaled<64x128xf4E2M1FN, block = [1, 32], scale = f8E8M0FNU>
  return %q : !fp4train.scaled<64x128xf4E2M1FN, block = [1, 32], scale = f8E8M0FNU>
}

// -----

// Fallback: gfx950 quantizes NVFP4 on the host (no E4M3-scaled conversion),
// so the rotation stays the Hadamard kernel and the quantize the host
// expansion, as without fusion.
// CHECK-LABEL: func.func @fallback_nvfp4
// CHECK:         gpu.launch
// CHECK:         gpu.terminator
// CHECK-NOT:     gpu.launch
// CHECK:         linalg.generic
func.func @fallback_nvfp4(%x: tensor<32x64xf32>, %hseed: i64, %step: i64)
    -> !fp4train.scaled<32x64xf4E2M1FN, block = [1, 16], scale = f8E4M3FN, global> {
  %r = fp4train.hadamard %x with #fp4train.hadamard<16, random> along 1 seed(%hseed) step(%step) : tensor<32x64xf32>
  %q = fp4train.quantize %r : tensor<32x64xf32>
      -> !fp4train.scaled<32x64xf4E2M1FN, block = [1, 16], scale = f8E4M3FN, global>
  return %q : !fp4train.scaled<32x64xf4E2M1FN, block = [1, 16], scale = f8E4M3FN, global>
}
