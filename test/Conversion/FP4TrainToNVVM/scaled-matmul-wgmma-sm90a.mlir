// [WG1] sm_90a: GEMMs with E8M0 scales (MXFP4, MXFP8, their mixes) run one
// wgmma.mma_async per 32-element block and warpgroup; NVFP4's 16-element
// blocks (no wgmma K of 16 for 8-bit types) one m64n128k16 on f16 values
// that carry their block scales ([WG3]).
// RUN: fp4-opt %s --fp4train-to-nvvm="chip=sm_90a" --split-input-file | FileCheck %s

!a = !fp4train.scaled<128x256xf4E2M1FN, block = [1, 32], scale = f8E8M0FNU>

// MXFP4: [WG4] first one kernel per operand writes its E2M1 codes as E4M3
// (128 threads, one row each, per tile of 128 rows (x) and K step (y)):
// A's by the plain table, B^T's folded: thread 0 stores the fold's tables
// (the E4M3 bytes of the E2M1 magnitudes times 2^-d, d = 0..8, two words
// each), each block's (e, 255 - e) pairs are combined over the warp by shfl.sync.bfly
// 1..16 and over the 4 warps in shared memory after a barrier, thread 0
// writes each block's reference (0xFF: unfolded) and each row's chunk
// takes the table row of its distance (at most 8).
// CHECK-LABEL: func.func @mxfp4
// CHECK:       %[[A8:.*]] = memref.alloc() {alignment = 64 : i64} : memref<1x128x256xi8>
// CHECK:       gpu.launch {{.*}} in ({{.*}} = %c1{{.*}}, {{.*}} = %c2{{.*}}, {{.*}} = %c1{{.*}}) threads({{.*}}) in ({{.*}} = %c128{{.*}}) {
// CHECK-NOT:     gpu.barrier
// CHECK-COUNT-4: vector.store %{{.*}}, %[[A8]][{{.*}}] {alignment = 16 : i64} : memref<1x128x256xi8>, vector<32xi8>
// CHECK:         gpu.terminator
// CHECK:       %[[B8:.*]] = memref.alloc() {alignment = 64 : i64} : memref<1x128x256xi8>
// CHECK:       %[[REFS:.*]] = memref.alloc() {alignment = 64 : i64} : memref<1x1x8xi8>
// CHECK:       gpu.launch {{.*}} threads({{.*}}) in ({{.*}} = %c128{{.*}}) workgroup(%[[FOLD:.*]] : memref<34xi32, #gpu.address_space<workgroup>>) {
// CHECK:         scf.if
// CHECK-NEXT:      arith.constant dense<[1010315264, 1279804480, {{.*}}]> : vector<18xi32>
// CHECK:           vector.store %{{.*}}, %[[FOLD]][%c0] : memref<34xi32, #gpu.address_space<workgroup>>, vector<18xi32>
// CHECK:         nvvm.shfl.sync  bfly %c-1_i32, %{{.*}}, %c1_i32, %c31_i32 : i32 -> i32
// CHECK:         arith.maxui %{{.*}}, %{{.*}} : vector<2xi16>
// CHECK:         nvvm.shfl.sync  bfly {{.*}}, %c16_i32
// CHECK:         gpu.barrier
// CHECK:         arith.minui %{{.*}}, %c8_i32
// CHECK:         memref.store %{{.*}}, %[[REFS]][{{.*}}] : memref<1x1x8xi8>
// CHECK:         nvvm.prmt
// CHECK:         vector.store %{{.*}}, %[[B8]][{{.*}}] {alignment = 16 : i64} : memref<1x128x256xi8>, vector<32xi8>
// CHECK:         gpu.terminator
// [WG5] The host makes a tensor map of each E4M3 operand (boxes of 128
// rows x 128 bytes, 128-byte swizzle, zero fill).
// CHECK:       %[[MAPA:.*]] = nvgpu.tma.create.descriptor %{{.*}} box[%{{.*}}, %c128{{.*}}, %c128{{.*}}] : memref<*xi8> -> <tensor = memref<1x128x128xi8, #gpu.address_space<workgroup>>, swizzle = swizzle_128b, l2promo = l2promo_256b, oob = zero, interleave = none>
// CHECK:       %[[PTRA:.*]] = builtin.unrealized_conversion_cast %[[MAPA]]
// CHECK:       %[[MAPB:.*]] = nvgpu.tma.create.descriptor
// CHECK:       %[[PTRB:.*]] = builtin.unrealized_conversion_cast %[[MAPB]]
// The GEMM: two warpgroups (256 threads) per 128x128 tile, the buffers
// 1024-byte aligned at run time (67 KiB: two 33 KiB stages, 16 bytes of
// references, two 8-byte mbarriers and 1 KiB of slack). Thread 0 initializes
// one mbarrier per buffer (fenced to the asynchronous proxy) and, for each
// K step, expects the stage's 32768 bytes and copies A's and B^T's tiles by
// TMA into the 128-byte swizzle the descriptors describe; the threads stage
// the scale rows of both and thread 0 the step's references, fenced and
// published by the barrier. Each step's copies go out one step ahead; every
// thread waits for its buffer's phase before the MMAs.
// CHECK:       gpu.launch {{.*}} threads({{.*}}) in ({{.*}} = %c256{{.*}}) dynamic_shared_memory_size %c68640_i32 {
// CHECK:         %[[SMEM:.*]] = gpu.dynamic_shared_memory
// CHECK:         memref.extract_aligned_pointer_as_index %[[SMEM]]
// CHECK:         arith.remui %{{.*}}, %c1024
// CHECK:         scf.if
// CHECK:           nvvm.mbarrier.init %{{.*}}, %c1_i32{{.*}} : !llvm.ptr<3>, i32
// CHECK-NEXT:      nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
// CHECK:           nvvm.mbarrier.init
// CHECK:         scf.if
// CHECK:           nvvm.mbarrier.expect_tx %[[BAR:.*]], %c32768_i32 : !llvm.ptr<3>, i32
// CHECK:           nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.*}}, %[[PTRA]], %[[BAR]], box[%{{.*}}, %{{.*}}, %{{.*}}] {isCTAOnly = true} : !llvm.ptr<3>, !llvm.ptr
// CHECK:           nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.*}}, %[[PTRB]], %[[BAR]], box
// CHECK-NEXT:      nvvm.mbarrier.arrive %[[BAR]] : !llvm.ptr<3> -> i64
// CHECK-NOT:     vector.load %[[A8]]
// CHECK-NOT:     vector.load %[[B8]]
// CHECK:         vector.load %[[REFS]]{{.*}} {alignment = 4 : i64} : memref<1x1x8xi8>, vector<4xi8>
// CHECK-NOT:     nvvm.prmt
// CHECK:         nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
// CHECK-NEXT:    gpu.barrier
// CHECK:         nvvm.mbarrier.try_wait.parity %{{.*}}, %{{.*}}, %c10000000_i32 : !llvm.ptr<3>, i32, i32
// CHECK:         %[[ROWS:.*]] = nvvm.vote.sync  all
// CHECK:         %[[DESC_A:.*]] = arith.addi %{{.*}}, %c4611686293305360384_i64
// CHECK:         %[[DESC_B:.*]] = arith.addi %{{.*}}, %c4611686293305360384_i64
// CHECK:         scf.for %{{.*}} = %c0{{.*}} to %c4{{.*}} step %c1{{.*}} iter_args(%{{.*}} = %{{.*}}) -> (vector<64xf32>) {
// CHECK:           %[[A:.*]] = arith.addi %[[DESC_A]], %{{.*}} : i64
// CHECK:           %[[B:.*]] = arith.addi %[[DESC_B]], %{{.*}} : i64
// CHECK:           nvvm.wgmma.fence.aligned
// CHECK:           nvvm.wgmma.mma_async %[[A]], %[[B]], %{{.*}}, <m = 64, n = 128, k = 32>, D[<f32>, <zero>], A[<e4m3>, <one>, <row>], B[<e4m3>, <one>, <col>]
// CHECK-NEXT:      nvvm.wgmma.commit.group.sync.aligned
// CHECK-NEXT:      nvvm.wgmma.wait.group.sync.aligned 0
// CHECK:           %[[FOLDED:.*]] = arith.cmpi ne, %{{.*}}, %c255_i32
// CHECK:           %[[FAST:.*]] = arith.andi %[[FOLDED]], %[[ROWS]] : i1
// CHECK:           scf.if %[[FAST]] -> (vector<64xf32>) {
// CHECK-COUNT-2:     arith.mulf
// CHECK-NOT:         arith.mulf
// CHECK-COUNT-64:    llvm.intr.fma
// CHECK:           } else {
// CHECK:             scf.if %[[FOLDED]] -> (vector<64xf32>) {
// CHECK-NOT:           llvm.intr.fma
// CHECK:               arith.minui %{{.*}}, %c244_i32
// CHECK:               arith.addf
// CHECK:             } else {
// CHECK:               %[[FUSED:.*]] = nvvm.vote.sync  all
// CHECK:               scf.if %[[FUSED]] -> (vector<64xf32>) {
// CHECK-COUNT-64:        llvm.intr.fma
// CHECK:               } else {
// CHECK-NOT:             llvm.intr.fma
// CHECK:                 arith.minui %{{.*}}, %c244_i32
// CHECK:                 arith.addf
func.func @mxfp4(%a: !a, %b: !a, %acc: tensor<128x128xf32>) -> tensor<128x128xf32> {
  %c = fp4train.scaled_matmul %a, %b, %acc : !a, !a, tensor<128x128xf32>
  return %c : tensor<128x128xf32>
}

// -----

!a = !fp4train.scaled<100x96xf8E4M3FN, block = [1, 32], scale = f8E8M0FNU>
!b = !fp4train.scaled<72x96xf8E5M2, block = [1, 32], scale = f8E8M0FNU>

// MXFP8 E4M3 x E5M2, ragged M, N and K (3 of a step's 4 blocks): the codes
// are stored in their staged types, so their tiles come by TMA ([WG5]: the
// maps' zero fill covers the ragged edges) with no kernel before the GEMM
// and no scale fold (E2M1 x E2M1 only).
// CHECK-LABEL: func.func @mxfp8_ragged
// CHECK-NOT:     gpu.launch
// CHECK:         nvgpu.tma.create.descriptor
// CHECK:         nvgpu.tma.create.descriptor
// CHECK:         gpu.launch
// CHECK-NOT:     nvvm.shfl.sync
// CHECK-NOT:     nvvm.prmt
// CHECK:         nvvm.cp.async.bulk.tensor.shared.cluster.global
// CHECK:         nvvm.wgmma.mma_async {{.*}} A[<e4m3>, <one>, <row>], B[<e5m2>, <one>, <col>]
func.func @mxfp8_ragged(%a: !a, %b: !b, %acc: tensor<100x72xf32>) -> tensor<100x72xf32> {
  %c = fp4train.scaled_matmul %a, %b, %acc : !a, !b, tensor<100x72xf32>
  return %c : tensor<100x72xf32>
}

// -----

!a = !fp4train.scaled<128x256xf4E2M1FN, block = [1, 16], scale = f8E4M3FN, global>

// [WG3] NVFP4: each 16-byte chunk of 32 E2M1 codes (two blocks) is staged
// as 32 f16 values times its block's UE4M3 scale: the two blocks' scale
// codes by one 2-byte load and one cvt.rn.f16x2.e4m3x2, each block's
// (s, s) by a shuffle, each code's f16 high byte by the
// widening's lookup on the f16 table (0x3E3C3800 / 0x46444240) and a prmt
// that interleaves zero low bytes (0x1404 / 0x3424), then one packed f16
// multiply per two values; 256-byte rows in two 128-byte swizzled tiles
// along K (129 KiB: two 64 KiB stages and 1 KiB of slack), no scale rows.
// Per block one m64n128k16 f16 with scale-d 0, then one f32 add per
// accumulator: a loop of 4 blocks per 128-byte atom (descriptors: the
// atom's, the second 1024 units = 16 KiB on, plus 2 = 32 bytes per block).
// CHECK-LABEL: func.func @nvfp4
// CHECK:       gpu.launch {{.*}} threads({{.*}}) in ({{.*}} = %c256{{.*}}) dynamic_shared_memory_size %c132096_i32 {
// CHECK:         vector.load %{{.*}} {alignment = 2 : i64} : memref<1x128x16xi8>, vector<2xi8>
// CHECK:         %[[S:.*]] = nvvm.convert.f8x2.to.f16x2 %{{.*}} : vector<2xi8>(f8E4M3FN) -> vector<2xf16>
// CHECK:         %[[S0:.*]] = vector.shuffle %[[S]], %[[S]] [0, 0] : vector<2xf16>, vector<2xf16>
// CHECK:         nvvm.prmt <default> %{{.*}}, %c1044133888_i32, %c1178878528_i32 : i32
// CHECK:         nvvm.prmt <default> %c5124_i32, %{{.*}}, %c0_i32 : i32
// CHECK:         arith.mulf %{{.*}}, %[[S0]] : vector<2xf16>
// CHECK:         nvvm.prmt <default> %c13348_i32, %{{.*}}, %c0_i32 : i32
// CHECK:         vector.store %{{.*}} {alignment = 16 : i64} : memref<?xi8, #gpu.address_space<workgroup>>, vector<16xi8>
// CHECK:         nvvm.fence.proxy
// CHECK-NEXT:    gpu.barrier
// CHECK:         scf.for %{{.*}} = %c0{{.*}} to %c4{{.*}} step %c1{{.*}} iter_args(%{{.*}} = %{{.*}}) -> (vector<64xf32>) {
// CHECK:           arith.muli %{{.*}}, %c2
// CHECK:           nvvm.wgmma.fence.aligned
// CHECK:           nvvm.wgmma.mma_async {{.*}}, <m = 64, n = 128, k = 16>, D[<f32>, <zero>], A[<f16>, <one>, <row>], B[<f16>, <one>, <col>]
// CHECK-NEXT:      nvvm.wgmma.commit.group.sync.aligned
// CHECK-NEXT:      nvvm.wgmma.wait.group.sync.aligned 0
// CHECK-COUNT-64:  arith.addf
// CHECK-NOT:       llvm.intr.fma
// CHECK:           scf.yield
// CHECK:         scf.for %{{.*}} = %c0{{.*}} to %c4{{.*}} step %c1{{.*}} iter_args(%{{.*}} = %{{.*}}) -> (vector<64xf32>) {
// CHECK:           nvvm.wgmma.mma_async {{.*}}, <m = 64, n = 128, k = 16>
// CHECK-NOT:     llvm.call_intrinsic "llvm.nvvm.mma
func.func @nvfp4(%a: !a, %b: !a, %acc: tensor<128x128xf32>) -> tensor<128x128xf32> {
  %c = fp4train.scaled_matmul %a, %b, %acc : !a, !a, tensor<128x128xf32>
  return %c : tensor<128x128xf32>
}
