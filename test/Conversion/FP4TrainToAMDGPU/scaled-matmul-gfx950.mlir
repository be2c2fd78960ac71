// RUN: fp4-opt %s --fp4train-to-amdgpu --split-input-file | FileCheck %s
// RUN: fp4-opt %s --fp4train-to-amdgpu="mfma=32x32x64" --split-input-file | FileCheck %s --check-prefix=M32
// RUN: fp4-opt %s --fp4train-to-amdgpu="mfma=16x16x128 tile=128" --split-input-file | FileCheck %s --check-prefix=T128
// RUN: fp4-opt %s --fp4train-to-amdgpu="tile=128" --split-input-file | FileCheck %s --check-prefix=T128

!a = !fp4train.scaled<256x512xf4E2M1FN, block = [1, 32], scale = f8E8M0FNU>
!b = !fp4train.scaled<128x512xf4E2M1FN, block = [1, 32], scale = f8E8M0FNU>

// A small MXFP4 GEMM: the auto rule picks 16x16x128 on 64x64 tiles, a 2x4x1
// grid of 256 threads. Tile multiples: no bounds checks.
// CHECK-LABEL: func.func @mxfp4
// CHECK-SAME:    (%[[A:.*]]: tensor<256x256xi8>, %[[SA:.*]]: tensor<256x16xi8>, %[[B:.*]]: tensor<128x256xi8>, %[[SB:.*]]: tensor<128x16xi8>, %[[ACC:.*]]: tensor<256x128xf32>)
// CHECK-DAG:   %[[AE:.*]] = tensor.expand_shape %[[A]] {{\[}}[0, 1], [2]] output_shape [1, 256, 256]
// CHECK-DAG:   bufferization.to_buffer %[[AE]] read_only : tensor<1x256x256xi8> to memref<1x256x256xi8>
// CHECK-DAG:   bufferization.to_buffer %{{.*}} read_only : tensor<1x128x16xi8> to memref<1x128x16xi8>
// CHECK-DAG:   bufferization.to_buffer %{{.*}} read_only : tensor<1x256x128xf32> to memref<1x256x128xf32>
// CHECK:       %[[OUT:.*]] = memref.alloc() {alignment = 64 : i64} : memref<1x256x128xf32>
// CHECK:       gpu.launch blocks(%{{.*}}, %{{.*}}, %{{.*}}) in (%{{.*}} = %c2, %{{.*}} = %c4, %{{.*}} = %c1{{.*}}) threads(%[[TID:.*]], %{{.*}}, %{{.*}}) in (%{{.*}} = %c256
// CHECK-SAME:    workgroup(%[[LDS:.*]] : memref<{{[0-9]+}}xi8, #gpu.address_space<workgroup>>)
// Prologue: 16-byte global loads of codes, stored two E2M1 per byte
// ([PK1]), and stored into LDS as they are: no repacking.
// CHECK:         %[[CHUNK:.*]] = vector.load %{{.*}} {alignment = 16 : i64} : memref<1x256x256xi8>, vector<16xi8>
// CHECK:         vector.load %{{.*}} {alignment = 4 : i64} : memref<1x256x16xi8>, vector<4xi8>
// CHECK-NOT:     vector.shuffle
// CHECK:         vector.store %[[CHUNK]], %[[LDS]][%{{.*}}] {alignment = 16 : i64} : memref<{{[0-9]+}}xi8, #gpu.address_space<workgroup>>, vector<16xi8>
// CHECK:         gpu.barrier
// Double-buffered K loop (4 steps): prefetch, compute, stage into the other
// buffer; two steps per iteration, buffer 0 then buffer 1.
// CHECK:         %{{.*}}:4 = scf.for %{{.*}} = %c0{{.*}} to %c2{{.*}} step %c2{{.*}} iter_args(%{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}) -> (vector<4xf32>, vector<4xf32>, vector<4xf32>, vector<4xf32>)
// CHECK:           vector.load %{{.*}} : memref<1x256x256xi8>, vector<16xi8>
// The lane's scale (block L / 16), zero-extended into its scale VGPR, then
// its fragments.
// CHECK:           memref.load %[[LDS]]
// CHECK:           arith.extui %{{.*}} : i8 to i32
// CHECK:           vector.bitcast %{{.*}} : vector<1xi32> to vector<4xf8E8M0FNU>
// CHECK:           vector.load %[[LDS]][%{{.*}}] {alignment = 16 : i64} : {{.*}}, vector<16xi8>
// CHECK:           vector.bitcast %{{.*}} : vector<16xi8> to vector<32xf4E2M1FN>
// CHECK:           amdgpu.scaled_mfma 16x16x128 (%{{.*}}[0] * %{{.*}}) * (%{{.*}}[0] * %{{.*}}) + %{{.*}} : vector<4xf8E8M0FNU>, vector<32xf4E2M1FN>, vector<4xf8E8M0FNU>, vector<32xf4E2M1FN>, vector<4xf32>
// CHECK:           gpu.barrier
// CHECK:           amdgpu.scaled_mfma 16x16x128
// CHECK:           gpu.barrier
// CHECK:           scf.yield
// The odd step out (step 2, buffer 0) and the last step peeled, then the
// epilogue C = acc + T.
// CHECK:         amdgpu.scaled_mfma 16x16x128
// CHECK:         gpu.barrier
// CHECK:         amdgpu.scaled_mfma 16x16x128
// CHECK-NOT:     scf.if
// CHECK:         memref.load %{{.*}} : memref<1x256x128xf32>
// CHECK:         arith.addf
// CHECK:         memref.store %{{.*}}, %[[OUT]]
// CHECK:         gpu.terminator
// CHECK:       %[[T:.*]] = bufferization.to_tensor %[[OUT]] restrict writable
// CHECK:       %[[R:.*]] = tensor.collapse_shape %[[T]]
// CHECK:       return %[[R]] : tensor<256x128xf32>

// M32-LABEL: func.func @mxfp4
// M32:         gpu.launch blocks({{.*}}) in (%{{.*}} = %c1{{.*}}, %{{.*}} = %c2{{.*}}, %{{.*}} = %c1{{.*}}) threads
// A staged scale row holds blocks [0, 2, 1, 3] of its K step.
// M32:         vector.shuffle %{{.*}}, %{{.*}} [0, 2, 1, 3] : vector<4xi8>, vector<4xi8>
// M32:         scf.for
// A lane's two blocks of a K step (L / 32 and L / 32 + 2) are staged next to
// each other, one 16-bit load per row; MFMA k of the step picks byte k.
// M32:           vector.load %{{.*}} {alignment = 2 : i64} : memref<{{[0-9]+}}xi8, #gpu.address_space<workgroup>>, vector<2xi8>
// M32:           vector.bitcast %{{.*}} : vector<2xi8> to vector<1xi16>
// M32-COUNT-4:   amdgpu.scaled_mfma 32x32x64 (%{{.*}}[0] * {{.*}} : vector<4xf8E8M0FNU>, vector<32xf4E2M1FN>, vector<4xf8E8M0FNU>, vector<32xf4E2M1FN>, vector<16xf32>
// M32-COUNT-4:   amdgpu.scaled_mfma 32x32x64 (%{{.*}}[1] * {{.*}} : vector<4xf8E8M0FNU>, vector<32xf4E2M1FN>, vector<4xf8E8M0FNU>, vector<32xf4E2M1FN>, vector<16xf32>
// M32:           scf.yield
// 16x16x128 on 128x128 tiles (forced, or chosen by tile=128 for a GEMM below
// one 128x128 tile per compute unit): a 1x2 grid, 4x4 instructions per wave
// and K step, each lane's scale one byte per row.
// T128-LABEL: func.func @mxfp4
// T128:         gpu.launch blocks({{.*}}) in (%{{.*}} = %c1{{.*}}, %{{.*}} = %c2{{.*}}, %{{.*}} = %c1{{.*}}) threads
// T128:         scf.for
// T128-COUNT-8:   memref.load %{{.*}} : memref<43008xi8, #gpu.address_space<workgroup>>
// T128-COUNT-16:  amdgpu.scaled_mfma 16x16x128 (%{{.*}}[0] * {{.*}} : vector<4xf8E8M0FNU>, vector<32xf4E2M1FN>, vector<4xf8E8M0FNU>, vector<32xf4E2M1FN>, vector<4xf32>
// T128:           scf.yield
func.func @mxfp4(%a: !a, %b: !b, %acc: tensor<256x128xf32>) -> tensor<256x128xf32> {
  %c = fp4train.scaled_matmul %a, %b, %acc : !a, !b, tensor<256x128xf32>
  return %c : tensor<256x128xf32>
}

// -----

// Mixed MXFP4 x MXFP8 with M, N and K not multiples of the tile (K is still
// whole blocks): guarded loads and stores, per-byte scale loads (K/32 = 10
// is not a multiple of 4), FP8 fragments of 32 bytes.
!a = !fp4train.scaled<200x320xf4E2M1FN, block = [1, 32], scale = f8E8M0FNU>
!b = !fp4train.scaled<96x320xf8E4M3FN, block = [1, 32], scale = f8E8M0FNU>
// CHECK-LABEL: func.func @ragged
// CHECK:         gpu.launch blocks({{.*}}) in (%{{.*}} = %c2{{.*}}, %{{.*}} = %c4{{.*}}, %{{.*}} = %c1{{.*}})
// CHECK:         arith.cmpi ult, %{{.*}}, %c200
// CHECK:         scf.if %{{.*}} -> (vector<16xi8>)
// CHECK:           vector.load {{.*}} : memref<1x200x160xi8>, vector<16xi8>
// CHECK:         } else {
// CHECK:           arith.constant dense<0> : vector<16xi8>
// CHECK:         memref.load {{.*}} : memref<1x200x10xi8>
// CHECK:         vector.from_elements {{.*}} : vector<4xi8>
// CHECK:         scf.for
// CHECK:           vector.load %{{.*}} {alignment = 16 : i64} : {{.*}}, vector<32xi8>
// CHECK:           vector.bitcast %{{.*}} : vector<32xi8> to vector<32xf8E4M3FN>
// CHECK:           amdgpu.scaled_mfma 16x16x128 {{.*}} : vector<4xf8E8M0FNU>, vector<32xf4E2M1FN>, vector<4xf8E8M0FNU>, vector<32xf8E4M3FN>, vector<4xf32>
// CHECK:         scf.if
// CHECK:           memref.store
func.func @ragged(%a: !a, %b: !b, %acc: tensor<200x96xf32>) -> tensor<200x96xf32> {
  %c = fp4train.scaled_matmul %a, %b, %acc : !a, !b, tensor<200x96xf32>
  return %c : tensor<200x96xf32>
}

// -----

// Batch dimensions collapse into the grid's z dimension.
!a = !fp4train.scaled<2x3x64x128xf8E5M2, block = [1, 1, 1, 32], scale = f8E8M0FNU>
!b = !fp4train.scaled<2x3x64x128xf8E4M3FN, block = [1, 1, 1, 32], scale = f8E8M0FNU>
// CHECK-LABEL: func.func @batched
// CHECK:         tensor.collapse_shape %{{.*}} {{\[}}[0, 1], [2], [3]] : tensor<2x3x64x128xi8> into tensor<6x64x128xi8>
// CHECK:         gpu.launch blocks({{.*}}) in (%{{.*}} = %c1{{.*}}, %{{.*}} = %c1{{.*}}, %{{.*}} = %c6{{.*}})
// CHECK:           amdgpu.scaled_mfma 16x16x128 {{.*}} : vector<4xf8E8M0FNU>, vector<32xf8E5M2>, vector<4xf8E8M0FNU>, vector<32xf8E4M3FN>, vector<4xf32>
// CHECK:         tensor.expand_shape %{{.*}} {{\[}}[0, 1], [2], [3]] output_shape [2, 3, 64, 64] : tensor<6x64x64xf32> into tensor<2x3x64x64xf32>
func.func @batched(%a: !a, %b: !b, %acc: tensor<2x3x64x64xf32>) -> tensor<2x3x64x64xf32> {
  %c = fp4train.scaled_matmul %a, %b, %acc : !a, !b, tensor<2x3x64x64xf32>
  return %c : tensor<2x3x64x64xf32>
}

// -----

// Large GEMMs (at least 256 workgroups of 128x128) use 32x32x64.
!a = !fp4train.scaled<2048x256xf4E2M1FN, block = [1, 32], scale = f8E8M0FNU>
!b = !fp4train.scaled<2048x256xf4E2M1FN, block = [1, 32], scale = f8E8M0FNU>
// CHECK-LABEL: func.func @large
// CHECK:         gpu.launch blocks({{.*}}) in (%{{.*}} = %c16{{.*}}, %{{.*}} = %c16{{.*}}, %{{.*}} = %c1{{.*}})
// CHECK:           amdgpu.scaled_mfma 32x32x64 {{.*}} vector<16xf32>
func.func @large(%a: !a, %b: !b, %acc: tensor<2048x2048xf32>) -> tensor<2048x2048xf32> {
  %c = fp4train.scaled_matmul %a, %b, %acc : !a, !b, tensor<2048x2048xf32>
  return %c : tensor<2048x2048xf32>
}

// -----

// Quantize ops: MX blocked along the last dimension (RNE, or SR to E2M1)
// become kernels (quantize-gfx950.mlir), the other ops (here a dequantize)
// are expanded on the host in the same conversion; no fp4train op or type
// is left.
// CHECK-LABEL: func.func @with_quantize
// CHECK-NOT:     fp4train.
// CHECK:         gpu.launch
// CHECK:           amdgpu.packed_scaled_trunc
// CHECK:         gpu.launch
// CHECK:           rocdl.cvt.scalef32.sr.pk.fp4.f32
// CHECK:         gpu.launch
// CHECK:           amdgpu.scaled_mfma
// CHECK:         linalg.generic
// CHECK-NOT:     fp4train.
func.func @with_quantize(%x: tensor<64x64xf32>, %w: tensor<64x64xf32>,
                         %acc: tensor<64x64xf32>, %seed: i64)
    -> (tensor<64x64xf32>, tensor<64x64xf32>) {
  %qx = fp4train.quantize %x : tensor<64x64xf32>
      -> !fp4train.scaled<64x64xf4E2M1FN, block = [1, 32], scale = f8E8M0FNU>
  %qw = fp4train.quantize %w rounding = stochastic seed(%seed) : tensor<64x64xf32>
      -> !fp4train.scaled<64x64xf4E2M1FN, block = [1, 32], scale = f8E8M0FNU>
  %c = fp4train.scaled_matmul %qx, %qw, %acc
      : !fp4train.scaled<64x64xf4E2M1FN, block = [1, 32], scale = f8E8M0FNU>,
        !fp4train.scaled<64x64xf4E2M1FN, block = [1, 32], scale = f8E8M0FNU>,
        tensor<64x64xf32>
  %dw = fp4train.dequantize %qw
      : !fp4train.scaled<64x64xf4E2M1FN, block = [1, 32], scale = f8E8M0FNU>
      -> tensor<64x64xf32>
  return %c, %dw : tensor<64x64xf32>, tensor<64x64xf32>
}
