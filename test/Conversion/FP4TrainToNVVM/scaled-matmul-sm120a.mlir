// RUN: fp4-opt %s --fp4train-to-nvvm="chip=sm_120a" --split-input-file | FileCheck %s

!a = !fp4train.scaled<256x512xf4E2M1FN, block = [1, 32], scale = f8E8M0FNU>
!b = !fp4train.scaled<128x512xf4E2M1FN, block = [1, 32], scale = f8E8M0FNU>

// MXFP4: 128x128 tiles on a 1x2x1 grid of 256 threads (8 warps), K in 4
// steps of 128, two k64 mma.sync per staged step, each of the 16 instruction
// tiles of a warp fed by four A words, two B words and one scale word per
// operand from shared memory; byte-id 0 then 2 picks the step's blocks.
// CHECK-LABEL: func.func @mxfp4
// CHECK:       gpu.launch blocks(%{{.*}}, %{{.*}}, %{{.*}}) in (%{{.*}} = %c1{{.*}}, %{{.*}} = %c2{{.*}}, %{{.*}} = %c1{{.*}}) threads(%{{.*}}, %{{.*}}, %{{.*}}) in (%{{.*}} = %c256
// CHECK-SAME:    workgroup(%[[SMEM:.*]] : memref<43008xi8, #gpu.address_space<workgroup>>)
// The stored codes ([PK1]) go to shared memory unchanged.
// CHECK:         %[[CHUNK:.*]] = vector.load %{{.*}} {alignment = 16 : i64} : memref<1x256x256xi8>, vector<16xi8>
// CHECK-NOT:     vector.shuffle
// CHECK:         vector.store %[[CHUNK]], %[[SMEM]]
// CHECK:         gpu.barrier
// The K loop runs two steps per iteration (buffer 0, then buffer 1).
// CHECK:         scf.for %{{.*}} = %c0{{.*}} to %c2{{.*}} step %c2{{.*}} iter_args({{.*}}) -> (vector<4xf32>, vector<4xf32>
// CHECK:           vector.load %[[SMEM]][%{{.*}}] {alignment = 4 : i64} : memref<43008xi8, #gpu.address_space<workgroup>>, vector<4xi8>
// CHECK:           vector.bitcast %{{.*}} : vector<4xi8> to vector<1xi32>
// CHECK-COUNT-16:  nvvm.mma.block_scale A[%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}] B[%{{.*}}, %{{.*}}] C[%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}] scaleA[%{{.*}}, %c0_i16{{[_0-9]*}}, %c0_i16{{[_0-9]*}}] scaleB[%{{.*}}, %c0_i16{{[_0-9]*}}, %c0_i16{{[_0-9]*}}] {blockScaleFormat = #nvvm.block_scale_format<ue8m0>, kind = #nvvm.block_scale_kind<mxf4>, multiplicandAPtxType = #nvvm.mma_type<e2m1>, multiplicandBPtxType = #nvvm.mma_type<e2m1>, scaleVecSize = #nvvm.scale_vec_size<x2>, shape = #nvvm.shape<m = 16, n = 8, k = 64>} : (i32, i32, f32) -> !llvm.struct<(f32, f32, f32, f32)>
// CHECK-COUNT-16:  nvvm.mma.block_scale {{.*}} scaleA[%{{.*}}, %c2_i16{{[_0-9]*}}, %c0_i16{{[_0-9]*}}] scaleB[%{{.*}}, %c2_i16{{[_0-9]*}}, %c0_i16{{[_0-9]*}}]
// CHECK:           gpu.barrier
// CHECK-COUNT-32:  nvvm.mma.block_scale
// CHECK:           gpu.barrier
// CHECK:           scf.yield {{.*}} : vector<4xf32>, vector<4xf32>
// The odd step out (step 2) and the last step, peeled.
// CHECK-COUNT-32:  nvvm.mma.block_scale
// CHECK:         gpu.barrier
// CHECK-COUNT-32:  nvvm.mma.block_scale
// CHECK-NOT:     scf.if
// CHECK:         arith.addf
// CHECK:         memref.store
// CHECK:         gpu.terminator
func.func @mxfp4(%a: !a, %b: !b, %acc: tensor<256x128xf32>) -> tensor<256x128xf32> {
  %c = fp4train.scaled_matmul %a, %b, %acc : !a, !b, tensor<256x128xf32>
  return %c : tensor<256x128xf32>
}

// -----

// NVFP4 with a 16x16-blocked (weight) operand: UE4M3 scales of 16-element
// blocks (8 per staged row and step: word 0 for the first k64 instruction,
// word 1 for the second, byte-id 0), the B scale row of a staged row is its
// row / 16, and the epilogue multiplies T by g = S_dec,a * S_dec,b (computed
// once on the host) before adding acc. Ragged M (100) and K (160, 10
// blocks: per-byte scale loads) are guarded.
!a = !fp4train.scaled<100x160xf4E2M1FN, block = [1, 16], scale = f8E4M3FN, global>
!b = !fp4train.scaled<128x160xf4E2M1FN, block = [16, 16], scale = f8E4M3FN, global>
// CHECK-LABEL: func.func @nvfp4
// CHECK-SAME:    (%{{.*}}: tensor<100x80xi8>, %{{.*}}: tensor<100x10xi8>, %[[GA:.*]]: f32, %{{.*}}: tensor<128x80xi8>, %{{.*}}: tensor<8x10xi8>, %[[GB:.*]]: f32,
// CHECK:       %[[G:.*]] = arith.mulf %[[GA]], %[[GB]] : f32
// CHECK:       gpu.launch
// CHECK:         arith.divui %{{.*}}, %c16
// CHECK:         memref.load %{{.*}} : memref<1x8x10xi8>
// Two K steps, no loop: step 0 (prefetching step 1), then step 1.
// CHECK-NOT:     scf.for
// CHECK-COUNT-16:  nvvm.mma.block_scale {{.*}} scaleA[%{{.*}}, %c0_i16{{[_0-9]*}}, %c0_i16{{[_0-9]*}}] scaleB[%{{.*}}, %c0_i16{{[_0-9]*}}, %c0_i16{{[_0-9]*}}] {blockScaleFormat = #nvvm.block_scale_format<ue4m3>, kind = #nvvm.block_scale_kind<mxf4nvf4>, {{.*}}scaleVecSize = #nvvm.scale_vec_size<x4>
// CHECK:         gpu.barrier
// CHECK-COUNT-32:  nvvm.mma.block_scale
// CHECK:         scf.if
// CHECK:           %[[OLD:.*]] = memref.load
// CHECK:           %[[GT:.*]] = arith.mulf %[[G]], %{{.*}} : f32
// CHECK:           arith.addf %[[OLD]], %[[GT]] : f32
func.func @nvfp4(%a: !a, %b: !b, %acc: tensor<100x128xf32>) -> tensor<100x128xf32> {
  %c = fp4train.scaled_matmul %a, %b, %acc : !a, !b, tensor<100x128xf32>
  return %c : tensor<100x128xf32>
}

// -----

// [TE2] An alpha is the epilogue's g: the global decode scales are not
// multiplied.
!a = !fp4train.scaled<100x160xf4E2M1FN, block = [1, 16], scale = f8E4M3FN, global>
!b = !fp4train.scaled<128x160xf4E2M1FN, block = [16, 16], scale = f8E4M3FN, global>
// CHECK-LABEL: func.func @nvfp4_alpha
// CHECK-SAME:    (%{{.*}}: tensor<100x80xi8>, %{{.*}}: tensor<100x10xi8>, %[[GA:.*]]: f32, %{{.*}}: tensor<128x80xi8>, %{{.*}}: tensor<8x10xi8>, %[[GB:.*]]: f32, %{{.*}}: tensor<100x128xf32>, %[[ALPHA:[^:]*]]: f32)
// CHECK-NOT:   arith.mulf %[[GA]], %[[GB]]
// CHECK:       gpu.launch
// CHECK:         scf.if
// CHECK:           %[[GT:.*]] = arith.mulf %[[ALPHA]], %{{.*}} : f32
// CHECK-NEXT:      arith.addf %{{.*}}, %[[GT]] : f32
func.func @nvfp4_alpha(%a: !a, %b: !b, %acc: tensor<100x128xf32>, %alpha: f32) -> tensor<100x128xf32> {
  %c = fp4train.scaled_matmul %a, %b, %acc alpha(%alpha) : !a, !b, tensor<100x128xf32>
  return %c : tensor<100x128xf32>
}

// -----

// MXFP8 (E4M3 x E5M2) on m16n8k32 kind::mxf8f6f4 with scale_vec::1X: four
// instructions per staged step, byte-id 0..3 selecting the block.
!a = !fp4train.scaled<128x256xf8E4M3FN, block = [1, 32], scale = f8E8M0FNU>
!b = !fp4train.scaled<128x256xf8E5M2, block = [1, 32], scale = f8E8M0FNU>
// CHECK-LABEL: func.func @mxfp8
// CHECK-COUNT-16:  nvvm.mma.block_scale {{.*}} scaleA[%{{.*}}, %c0_i16{{[_0-9]*}}, %c0_i16{{[_0-9]*}}] {{.*}} {blockScaleFormat = #nvvm.block_scale_format<ue8m0>, kind = #nvvm.block_scale_kind<mxf8f6f4>, multiplicandAPtxType = #nvvm.mma_type<e4m3>, multiplicandBPtxType = #nvvm.mma_type<e5m2>, scaleVecSize = #nvvm.scale_vec_size<x1>, shape = #nvvm.shape<m = 16, n = 8, k = 32>}
// CHECK-COUNT-16:  nvvm.mma.block_scale {{.*}} scaleA[%{{.*}}, %c1_i16{{[_0-9]*}}, %c0_i16{{[_0-9]*}}]
// CHECK-COUNT-16:  nvvm.mma.block_scale {{.*}} scaleA[%{{.*}}, %c2_i16{{[_0-9]*}}, %c0_i16{{[_0-9]*}}]
// CHECK-COUNT-16:  nvvm.mma.block_scale {{.*}} scaleA[%{{.*}}, %c3_i16{{[_0-9]*}}, %c0_i16{{[_0-9]*}}]
func.func @mxfp8(%a: !a, %b: !b, %acc: tensor<128x128xf32>) -> tensor<128x128xf32> {
  %c = fp4train.scaled_matmul %a, %b, %acc : !a, !b, tensor<128x128xf32>
  return %c : tensor<128x128xf32>
}

// -----

// The bf16 epilogue: accumulator values 0/1 and 2/3 of a lane are adjacent
// columns, so each pair is one f32x2 load of acc, one add, one truncf to
// vector<2xbf16> and one 32-bit store; the truncation is replaced.
!a = !fp4train.scaled<128x128xf4E2M1FN, block = [1, 32], scale = f8E8M0FNU>
// CHECK-LABEL: func.func @bf16
// CHECK:       memref.alloc() {alignment = 64 : i64} : memref<1x128x128xbf16>
// CHECK:       gpu.launch
// CHECK:         vector.load %{{.*}} {alignment = 8 : i64} : memref<1x128x128xf32>, vector<2xf32>
// CHECK:         arith.addf %{{.*}} : vector<2xf32>
// CHECK:         arith.truncf %{{.*}} : vector<2xf32> to vector<2xbf16>
// CHECK:         vector.store %{{.*}} {alignment = 4 : i64} : memref<1x128x128xbf16>, vector<2xbf16>
// CHECK-NOT:   arith.truncf {{.*}} : tensor
// CHECK:       return %{{.*}} : tensor<128x128xbf16>
func.func @bf16(%a: !a, %b: !a, %acc: tensor<128x128xf32>) -> tensor<128x128xbf16> {
  %c = fp4train.scaled_matmul %a, %b, %acc : !a, !a, tensor<128x128xf32>
  %t = arith.truncf %c : tensor<128x128xf32> to tensor<128x128xbf16>
  return %t : tensor<128x128xbf16>
}
