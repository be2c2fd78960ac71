// RUN: fp4-opt %s --fp4train-to-nvvm="chip=sm_120a" --split-input-file | FileCheck %s
// Every NVIDIA chip with quantize kernels fuses the same way.
// RUN: fp4-opt %s --fp4train-to-nvvm="chip=sm_100a" --split-input-file | FileCheck %s
// RUN: fp4-opt %s --fp4train-to-nvvm="chip=sm_90a" --split-input-file | FileCheck %s

// The Wgrad operand of recipe=nvfp4 (RHT-16 with random signs along the
// last dimension, SR, amax_tensor computed): the rotation is computed twice
// and never stored. First a rotate + amax kernel (one lane per 16-element
// rotation block, the lane's magnitude bits reduced in shared memory to one
// word per workgroup), the host's max and [NV1] global scales, then the
// rotate + quantize kernel, where a lane's 16 rotated registers are its
// NVFP4 block (no shared memory, no barrier).
// CHECK-LABEL: func.func @wgrad_nvfp4
// CHECK-SAME:    (%[[X:.*]]: tensor<32x64xf32>, %{{.*}}: i64, %{{.*}}: i64, %[[SEED:.*]]: i64)
// CHECK:         %[[FLAT:.*]] = tensor.collapse_shape %[[X]] {{\[}}[0, 1]] : tensor<32x64xf32> into tensor<2048xf32>
// CHECK:         %[[IN:.*]] = bufferization.to_buffer %[[FLAT]] read_only : tensor<2048xf32> to memref<2048xf32>
// CHECK:         linalg.generic
// CHECK:         %[[SIGNS:.*]] = bufferization.to_buffer %{{.*}} read_only : tensor<16xf32> to memref<16xf32>
// CHECK-NOT:     memref<2048xf32>
// CHECK:         %[[PARTIAL:.*]] = memref.alloc() {alignment = 64 : i64} : memref<1xi32>
// CHECK:         gpu.launch {{.*}} threads(%[[TX:.*]], %{{.*}}, %{{.*}}) in (%{{.*}} = %c256{{.*}}, %{{.*}} = %c1{{.*}}, %{{.*}} = %c1{{.*}}) workgroup(%[[RED:.*]] : memref<256xi32, #gpu.address_space<workgroup>>) {
// CHECK-COUNT-4:   vector.load %[[IN]][%{{.*}}] {alignment = 16 : i64} : memref<2048xf32>, vector<4xf32>
// CHECK-COUNT-4:   vector.load %[[SIGNS]]
// CHECK:           arith.maxui %{{.*}} : vector<4xi32>
// CHECK:           memref.store %{{.*}}, %[[RED]][%[[TX]]]
// CHECK:           gpu.barrier
// CHECK:           memref.store %{{.*}}, %[[PARTIAL]][%{{.*}}] : memref<1xi32>
// CHECK:         gpu.terminator
// CHECK:         %[[P:.*]] = bufferization.to_tensor %[[PARTIAL]]
// CHECK:         linalg.generic {{.*}} ins(%[[P]] : tensor<1xi32>)
// CHECK:         %[[CODES:.*]] = memref.alloc() {alignment = 64 : i64} : memref<1024xi8>
// CHECK:         %[[SCALES:.*]] = memref.alloc() {alignment = 64 : i64} : memref<128xi8>
// CHECK:         gpu.launch {{.*}} threads({{.*}}) in (%{{.*}} = %c256{{.*}}, %{{.*}} = %c1{{.*}}, %{{.*}} = %c1{{.*}}) {
// CHECK-COUNT-4:   vector.load %[[IN]][%{{.*}}] {alignment = 16 : i64} : memref<2048xf32>, vector<4xf32>
// CHECK-NOT:       gpu.barrier
// CHECK:           arith.trunci %[[SEED]] : i64 to i32
// CHECK-NOT:       gpu.barrier
// CHECK:           vector.store %{{.*}}, %[[CODES]][%{{.*}}] {alignment = 8 : i64} : memref<1024xi8>, vector<8xi8>
// CHECK:           memref.store %{{.*}}, %[[SCALES]][%{{.*}}] : memref<128xi8>
// CHECK:         gpu.terminator
// CHECK-NOT:     gpu.launch
// CHECK:         return
func.func @wgrad_nvfp4(%x: tensor<32x64xf32>, %hseed: i64, %step: i64, %seed: i64)
    -> !fp4train.scaled<32x64xf4E2M1FN, block = [1, 16], scale = f8E4M3FN, global> {
  %r = fp4train.hadamard %x with #fp4train.hadamard<16, random> along 1 seed(%hseed) step(%step) : tensor<32x64xf32>
  %q = fp4train.quantize %r rounding = stochastic seed(%seed) : tensor<32x64xf32>
      -> !fp4train.scaled<32x64xf4E2M1FN, block = [1, 16], scale = f8E4M3FN, global>
  return %q : !fp4train.scaled<32x64xf4E2M1FN, block = [1, 16], scale = f8E4M3FN, global>
}

// -----

// n = 64 > B = 16 with a supplied amax (delayed scaling): one kernel; the
// rotated blocks are staged in rows of 16 + 4 f32 (256 blocks, 5120 f32)
// after the exchange, and all 256 threads quantize one block each.
// CHECK-LABEL: func.func @nvfp4_n64
// CHECK:         gpu.launch {{.*}} threads(%{{.*}}, %{{.*}}, %{{.*}}) in (%{{.*}} = %c4{{.*}}, %{{.*}} = %c64{{.*}}, %{{.*}} = %c1{{.*}}) workgroup(%[[LDS:.*]] : memref<5120xf32, #gpu.address_space<workgroup>>) {
// CHECK:           gpu.barrier
// CHECK:           gpu.barrier
// CHECK:           vector.store %{{.*}}, %[[LDS]]
// CHECK:           gpu.barrier
// CHECK-NOT:       scf.if
// CHECK-COUNT-4:   vector.load %[[LDS]][%{{.*}}] : memref<5120xf32, #gpu.address_space<workgroup>>, vector<4xf32>
// CHECK:         gpu.terminator
// CHECK-NOT:     gpu.launch
// CHECK:         return
func.func @nvfp4_n64(%x: tensor<64x256xf32>, %amax: f32)
    -> !fp4train.scaled<64x256xf4E2M1FN, block = [1, 16], scale = f8E4M3FN, global> {
  %r = fp4train.hadamard %x with #fp4train.hadamard<64, fixed> along 1 : tensor<64x256xf32>
  %q = fp4train.quantize %r amax(%amax) : tensor<64x256xf32>
      -> !fp4train.scaled<64x256xf4E2M1FN, block = [1, 16], scale = f8E4M3FN, global>
  return %q : !fp4train.scaled<64x256xf4E2M1FN, block = [1, 16], scale = f8E4M3FN, global>
}

// -----

// A batch and MXFP4 after a 256-point rotation: one kernel.
// CHECK-LABEL: func.func @mxfp4_batch_n256
// CHECK:         gpu.launch {{.*}} workgroup(%{{.*}} : memref<4608xf32, #gpu.address_space<workgroup>>) {
// CHECK:         gpu.terminator
// CHECK-NOT:     gpu.launch
// CHECK:         return
func.func @mxfp4_batch_n256(%x: tensor<2x8x512xf32>)
    -> !fp4train.scaled<2x8x512xf4E2M1FN, block = [1, 1, 32], scale = f8E8M0FNU> {
  %r = fp4train.hadamard %x with #fp4train.hadamard<256, fixed> along 2 : tensor<2x8x512xf32>
  %q = fp4train.quantize %r : tensor<2x8x512xf32>
      -> !fp4train.scaled<2x8x512xf4E2M1FN, block = [1, 1, 32], scale = f8E8M0FNU>
  return %q : !fp4train.scaled<2x8x512xf4E2M1FN, block = [1, 1, 32], scale = f8E8M0FNU>
}

// -----

// Fallback: 16x16 NVFP4 blocks (the weight layout) keep the two kernels:
// the Hadamard kernel's result feeds the 2-D quantize kernel.
// CHECK-LABEL: func.func @fallback_2d
// CHECK:         %[[ROT:.*]] = memref.alloc() {alignment = 64 : i64} : memref<2048xf32>
// CHECK:         gpu.launch
// CHECK:         gpu.terminator
// CHECK:         bufferization.to_tensor %[[ROT]]
// CHECK:         gpu.launch
// CHECK:         gpu.terminator
// CHECK:         gpu.launch
// CHECK:         gpu.terminator
// CHECK-NOT:     gpu.launch
// CHECK:         return
func.func @fallback_2d(%x: tensor<32x64xf32>)
    -> !fp4train.scaled<32x64xf4E2M1FN, block = [16, 16], scale = f8E4M3FN, global> {
  %r = fp4train.hadamard %x with #fp4train.hadamard<16, fixed> along 1 : tensor<32x64xf32>
  %q = fp4train.quantize %r : tensor<32x64xf32>
      -> !fp4train.scaled<32x64xf4E2M1FN, block = [16, 16], scale = f8E4M3FN, global>
  return %q : !fp4train.scaled<32x64xf4E2M1FN, block = [16, 16], scale = f8E4M3FN, global>
}
