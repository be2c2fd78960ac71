// The tcgen05 GEMM kernel of sm_100a (NVVM ops) and sm_103a (the same
// intrinsics through llvm.call_intrinsic, [PTX1] in docs/nvvm.md).
// RUN: fp4-opt %s --fp4train-to-nvvm="chip=sm_100a" --split-input-file | FileCheck %s --check-prefixes=CHECK,SM100
// RUN: fp4-opt %s --fp4train-to-nvvm="chip=sm_103a" --split-input-file | FileCheck %s --check-prefixes=CHECK,SM103

!a = !fp4train.scaled<256x512xf4E2M1FN, block = [1, 16], scale = f8E4M3FN, global>
!b = !fp4train.scaled<128x512xf4E2M1FN, block = [1, 16], scale = f8E4M3FN, global>

// NVFP4: 128x128 tiles; the 2 tiles on a persistent grid of min(2, 148)
// workgroups of 288 threads (producers, the MMA thread's warp, the
// epilogue); 4 stages of 36 KiB (two 16 KiB tiles, 4 + 4 scale atoms of 512
// bytes) behind 1 KiB of alignment slack in dynamic shared memory; K = 512
// in 2 stages of 256.
// Rows of 256 code bytes: A's and B^T's codes come by TMA ([TMA1]), through
// tensor maps the host makes before the launch: box 1 x 128 rows x 128
// bytes, landing 128-byte swizzled, out-of-range elements zero-filled; the
// kernel gets each as a pointer.
// CHECK-LABEL: func.func @nvfp4
// CHECK:       %[[G:.*]] = arith.mulf
// CHECK:       memref.cast %{{.*}} : memref<1x256x256xi8> to memref<*xi8>
// CHECK:       %[[MAP_A:.*]] = nvgpu.tma.create.descriptor %{{.*}} box[%c1{{.*}}, %c128{{.*}}, %c128{{.*}}] : memref<*xi8> -> <tensor = memref<1x128x128xi8, #gpu.address_space<workgroup>>, swizzle = swizzle_128b, l2promo = l2promo_256b, oob = zero, interleave = none>
// CHECK:       %[[PTR_A:.*]] = builtin.unrealized_conversion_cast %[[MAP_A]] : {{.*}} to !llvm.ptr
// CHECK:       memref.cast %{{.*}} : memref<1x128x256xi8> to memref<*xi8>
// CHECK:       %[[MAP_B:.*]] = nvgpu.tma.create.descriptor
// CHECK:       %[[PTR_B:.*]] = builtin.unrealized_conversion_cast %[[MAP_B]]
// CHECK:       gpu.launch blocks(%[[WG:.*]], %{{.*}}, %{{.*}}) in (%{{.*}} = %c2{{.*}}, %{{.*}} = %c1{{.*}}, %{{.*}} = %c1{{.*}}) threads(%[[TID:.*]], %{{.*}}, %{{.*}}) in (%{{.*}} = %c288{{.*}}, %{{.*}} = %c1{{.*}}, %{{.*}} = %c1{{.*}}) dynamic_shared_memory_size %c148584_i32
// The workgroup's tiles: (2 + 2 - 1 - w) / 2.
// CHECK:         %[[ITEMS:.*]] = arith.divui %{{.*}}, %c2
// CHECK:         %[[SMEM:.*]] = gpu.dynamic_shared_memory : memref<?xi8, #gpu.address_space<workgroup>>
// CHECK:         memref.extract_aligned_pointer_as_index %[[SMEM]]
// The scales' global base pointers (A's first; 16 blocks per row, a
// multiple of 4: each row's 4-block words are aligned).
// CHECK:         memref.extract_aligned_pointer_as_index %{{.*}} : memref<1x256x32xi8>
// CHECK:         %[[SCALES_A:.*]] = llvm.addrspacecast %{{.*}} : !llvm.ptr to !llvm.ptr<1>
// Thread 0: full barriers count the 128 producers, empty ones the commit;
// per accumulator, full counts the commit and empty the 128 epilogue
// threads.
// CHECK-COUNT-4: nvvm.mbarrier.init %{{.*}}, %c128_i32{{.*}} : !llvm.ptr<3>, i32
// CHECK:         nvvm.mbarrier.init %{{.*}}, %c1_i32{{.*}} : !llvm.ptr<3>, i32
// CHECK:         nvvm.mbarrier.init %{{.*}}, %c1_i32{{.*}} : !llvm.ptr<3>, i32
// CHECK:         nvvm.mbarrier.init %{{.*}}, %c128_i32{{.*}} : !llvm.ptr<3>, i32
// CHECK:         nvvm.mbarrier.init %{{.*}}, %c1_i32{{.*}} : !llvm.ptr<3>, i32
// CHECK:         nvvm.mbarrier.init %{{.*}}, %c128_i32{{.*}} : !llvm.ptr<3>, i32
// CHECK:         nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
// Two 128-column accumulators and the scale atoms: 512 TMEM columns.
// SM100:         nvvm.tcgen05.alloc %{{.*}}, %c512_i32 : !llvm.ptr<3>, i32
// SM100-NEXT:    nvvm.tcgen05.relinquish_alloc_permit
// SM103:         llvm.call_intrinsic "llvm.nvvm.tcgen05.alloc.shared.cg1"(%{{.*}}, %c512_i32) : (!llvm.ptr<3>, i32) -> ()
// SM103-NEXT:    llvm.call_intrinsic "llvm.nvvm.tcgen05.relinq.alloc.permit.cg1"()
// CHECK:         gpu.barrier
// CHECK:         %[[TMEM:.*]] = llvm.load %{{.*}} : !llvm.ptr<3> -> i32
// Producers, per tile of the workgroup and K step: wait for the stage;
// thread 0 expects the stage's 32768 code bytes on its full barrier and
// issues the two TMA loads (box at K byte 128 k, the tile's first row, the
// batch entry); every producer copies its row's 4 scale words per operand
// by cp.async (4 bytes from getelementptrs off the scales' base); step s
// is published after the copies of step s + 2 are issued.
// CHECK:         scf.if %{{.*}} {
// CHECK:           scf.for %{{.*}} = %c0{{.*}} to %[[ITEMS]] step %c1
// CHECK:             scf.for %{{.*}} = %c0{{.*}} to %c2{{.*}} step %c1
// CHECK:               nvvm.mbarrier.try_wait.parity
// CHECK:               scf.if %{{.*}} {
// CHECK:                 nvvm.mbarrier.expect_tx %[[FULL:.*]], %c32768_i32 : !llvm.ptr<3>, i32
// CHECK:                 nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.*}}, %[[PTR_A]], %[[FULL]], box[%{{.*}}, %{{.*}}, %{{.*}}] {isCTAOnly = true} : !llvm.ptr<3>, !llvm.ptr
// CHECK:                 nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.*}}, %[[PTR_B]], %[[FULL]], box[%{{.*}}, %{{.*}}, %{{.*}}] {isCTAOnly = true} : !llvm.ptr<3>, !llvm.ptr
// CHECK:               }
// CHECK:               %[[SRC:.*]] = llvm.getelementptr %[[SCALES_A]][%{{.*}}] : (!llvm.ptr<1>, i64) -> !llvm.ptr<1>, i8
// CHECK:               nvvm.cp.async.shared.global %{{.*}}, %[[SRC]], 4, cache = ca : !llvm.ptr<3>, !llvm.ptr<1>
// CHECK-COUNT-7:       nvvm.cp.async.shared.global %{{.*}}, %{{.*}}, 4, cache = ca : !llvm.ptr<3>, !llvm.ptr<1>
// CHECK-NOT:           nvvm.cp.async.shared.global
// CHECK:               nvvm.cp.async.commit.group
// CHECK:               nvvm.cp.async.wait.group 2
// CHECK:               nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
// CHECK:               nvvm.mbarrier.arrive %{{.*}} : !llvm.ptr<3> -> i64
// The epilogue (threads 160-287), per tile: wait for accumulator i % 2,
// 4 loads of 32 of its columns, g * T + acc in groups of 4, then free it.
// CHECK:         } else {
// CHECK:           scf.if %{{.*}} {
// CHECK:             scf.for %{{.*}} = %c0{{.*}} to %[[ITEMS]] step %c1
// CHECK:               nvvm.mbarrier.try_wait.parity
// CHECK:               scf.for %{{.*}} = %c0{{.*}} to %c128{{.*}} step %c32
// CHECK:                 nvvm.bar.warp.sync %c-1_i32
// SM100:                 nvvm.tcgen05.ld %{{.*}} {shape = #nvvm.tcgen05_ldst_shape<shape_32x32b>} : vector<32xi32>
// SM100-NEXT:            nvvm.tcgen05.wait <load>
// SM103:                 llvm.call_intrinsic "llvm.nvvm.tcgen05.ld.32x32b.x32"(%{{.*}}, %false{{.*}}) : (!llvm.ptr<6>, i1) -> vector<32xi32>
// SM103-NEXT:            llvm.call_intrinsic "llvm.nvvm.tcgen05.wait.ld"()
// CHECK:                 vector.bitcast %{{.*}} : vector<32xi32> to vector<32xf32>
// CHECK:                 vector.load %{{.*}} {alignment = 16 : i64} : memref<1x256x128xf32>, vector<4xf32>
// CHECK:                 vector.broadcast %[[G]] : f32 to vector<4xf32>
// CHECK:                 arith.mulf
// CHECK:                 arith.addf
// CHECK:                 vector.store %{{.*}} {alignment = 16 : i64} : memref<1x256x128xf32>, vector<4xf32>
// CHECK:               }
// SM100:               nvvm.tcgen05.fence <before>
// CHECK:               nvvm.mbarrier.arrive %{{.*}} : !llvm.ptr<3> -> i64
// The MMA thread, per tile: wait until the epilogue has freed accumulator
// i % 2 (from the third tile on), then per stage 8 scale copies and 4 MMAs
// of K = 64 at 32 bytes apart in the swizzled rows, all with instruction
// descriptor 0x08200480 (E2M1 x E2M1, UE4M3, N = 128, M = 128, scale
// factor id 0); after the tile's last stage a commit to the accumulator's
// full barrier.
// CHECK:           } else {
// CHECK:             scf.if %{{.*}} {
// CHECK:               scf.for %{{.*}} = %c0{{.*}} to %[[ITEMS]] step %c1
// CHECK:                 arith.cmpi uge, %{{.*}}, %c2
// CHECK:                 scf.if
// CHECK:                   nvvm.mbarrier.try_wait.parity
// CHECK:                 scf.for
// CHECK:                   nvvm.mbarrier.try_wait.parity
// Descriptors: the stage's start-address field plus a constant (the fields
// and the 16-byte units into the stage): A's first scale atom at byte 32768
// (no swizzle, SBO 128: 0x400000080001 + 2048), the first MMA's A at 0
// (128-byte swizzle, SBO 1024: 0x4000404000010000).
// CHECK:                   %[[START:.*]] = arith.index_castui %{{.*}} : index to i64
// CHECK:                   arith.addi %[[START]], %c70403103983616_i64
// SM100-COUNT-8:           nvvm.tcgen05.cp %{{.*}}, %{{.*}} {multicast = #nvvm.tcgen05_cp_multicast<warpx4>, shape = #nvvm.tcgen05_cp_shape<shape_32x128b>}
// SM103-COUNT-8:           llvm.call_intrinsic "llvm.nvvm.tcgen05.cp.32x128b_warpx4.cg1"(%{{.*}}, %{{.*}}) : (!llvm.ptr<6>, i64) -> ()
// CHECK:                   arith.addi %[[START]], %c4611756662049538048_i64
// SM100:                   nvvm.tcgen05.mma.block_scale %{{.*}}, %{{.*}}, %{{.*}}, %c136316032_i32{{.*}} {blockScale = #nvvm.tcgen05_mma_block_scale<block16>, ctaGroup = #nvvm.cta_group<cta_1>, kind = #nvvm.block_scale_kind<mxf4nvf4>} : (!llvm.ptr<6>, i64, i64, i32, i1, !llvm.ptr<6>, !llvm.ptr<6>)
// SM100-COUNT-3:           nvvm.tcgen05.mma.block_scale {{.*}} %c136316032_i32
// SM100:                   nvvm.tcgen05.commit %{{.*}} : !llvm.ptr<3>
// SM103:                   llvm.call_intrinsic "llvm.nvvm.tcgen05.mma.shared.mxf4nvf4.block_scale.block16"(%{{.*}}, %{{.*}}, %{{.*}}, %c136316032_i32{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %c1_i32{{.*}}, %c0_i32{{.*}}) : (!llvm.ptr<6>, i64, i64, i32, i1, !llvm.ptr<6>, !llvm.ptr<6>, i32, i32) -> ()
// SM103-COUNT-3:           llvm.call_intrinsic "llvm.nvvm.tcgen05.mma.shared.mxf4nvf4.block_scale.block16"
// SM103:                   llvm.call_intrinsic "llvm.nvvm.tcgen05.commit.shared.cg1"
// CHECK:                 }
// SM100:                 nvvm.tcgen05.commit
// SM103:                 llvm.call_intrinsic "llvm.nvvm.tcgen05.commit.shared.cg1"
// CHECK:         gpu.barrier
// SM100:         nvvm.tcgen05.dealloc %{{.*}}, %c512_i32{{.*}} : !llvm.ptr<6>, i32
// SM103:         llvm.call_intrinsic "llvm.nvvm.tcgen05.dealloc.cg1"
func.func @nvfp4(%a: !a, %b: !b, %acc: tensor<256x128xf32>) -> tensor<256x128xf32> {
  %c = fp4train.scaled_matmul %a, %b, %acc : !a, !b, tensor<256x128xf32>
  return %c : tensor<256x128xf32>
}

// -----

!a = !fp4train.scaled<100x320xf4E2M1FN, block = [1, 32], scale = f8E8M0FNU>
!b = !fp4train.scaled<130x320xf4E2M1FN, block = [1, 32], scale = f8E8M0FNU>

// MXFP4, ragged M, N and K: rows past 100 / 130 and K past 320 (of two
// stages of 256) stage zeros (TMA fills the box past the tensor); 10 scale
// blocks per row are not a multiple of 4, so they load one by one, through
// registers. kind::mxf4nvf4 block32 (UE8M0,
// 0x08A00480 / 0x48A004A0: scale factor id 0, then 2 for the second k64 of
// each 4-block word); odd N stores one f32 at a time.
// CHECK-LABEL: func.func @mxfp4_ragged
// CHECK-COUNT-2: nvgpu.tma.create.descriptor
// CHECK:       gpu.launch blocks({{.*}}) in (%{{.*}} = %c2{{.*}}, %{{.*}} = %c1{{.*}}, %{{.*}} = %c1{{.*}}) threads({{.*}}) in (%{{.*}} = %c288{{.*}}, {{.*}}) dynamic_shared_memory_size %c140392_i32
// CHECK:         nvvm.cp.async.bulk.tensor.shared.cluster.global
// CHECK:         arith.cmpi ult, %{{.*}}, %c100
// CHECK:         memref.load %{{.*}} : memref<1x100x10xi8>
// CHECK:         memref.store %{{.*}} : memref<1x100x130xf32>
// SM100:         nvvm.tcgen05.mma.block_scale {{.*}} %c144704640_i32{{.*}} {blockScale = #nvvm.tcgen05_mma_block_scale<block32>, ctaGroup = #nvvm.cta_group<cta_1>, kind = #nvvm.block_scale_kind<mxf4nvf4>}
// SM100:         nvvm.tcgen05.mma.block_scale {{.*}} %c1218446496_i32{{.*}} {blockScale = #nvvm.tcgen05_mma_block_scale<block32>
// SM103:         llvm.call_intrinsic "llvm.nvvm.tcgen05.mma.shared.mxf4nvf4.block_scale.block32"({{.*}}%c144704640_i32
// SM103:         llvm.call_intrinsic "llvm.nvvm.tcgen05.mma.shared.mxf4nvf4.block_scale.block32"({{.*}}%c1218446496_i32
func.func @mxfp4_ragged(%a: !a, %b: !b, %acc: tensor<100x130xf32>) -> tensor<100x130xf32> {
  %c = fp4train.scaled_matmul %a, %b, %acc : !a, !b, tensor<100x130xf32>
  return %c : tensor<100x130xf32>
}

// -----

!a = !fp4train.scaled<2x128x256xf8E4M3FN, block = [1, 1, 32], scale = f8E8M0FNU>
!b = !fp4train.scaled<2x256x256xf8E5M2, block = [1, 1, 32], scale = f8E8M0FNU>

// MXFP8 (E4M3 x E5M2, a batch of 2): kind::mxf8f6f4 block32 with K = 32 per
// MMA, 4 per stage of 128, one scale atom per operand and stage, scale
// factor ids 0..3 (0x08A00400, 0x28A00410, 0x48A00420, 0x68A00430); the
// bf16 truncation of the result is fused into the epilogue. The codes come
// by TMA, each row's 4 scale blocks of a stage by one cp.async of 4 bytes
// per operand; one commit group per stage, and step s published
// (wait_group 2, proxy fence, arrive) after the copies of step s + 2 are
// issued, across the tiles of the workgroup (4 on a grid of 4: one each);
// the last two steps are published after the loop, once every copy has
// landed.
// CHECK-LABEL: func.func @mxfp8_bf16
// CHECK:       gpu.launch blocks({{.*}}) in (%{{.*}} = %c4{{.*}}, %{{.*}} = %c1{{.*}}, %{{.*}} = %c1{{.*}}) threads({{.*}}) in (%{{.*}} = %c288{{.*}}, {{.*}}) dynamic_shared_memory_size %c136296_i32
// CHECK:         memref.extract_aligned_pointer_as_index %{{.*}} : memref<2x128x8xi8>
// CHECK:         memref.extract_aligned_pointer_as_index %{{.*}} : memref<2x256x8xi8>
// CHECK:         scf.for %{{.*}} = %c0{{.*}} to %{{.*}} step %c1
// CHECK:           scf.for %{{.*}} = %c0{{.*}} to %c2{{.*}} step %c1
// CHECK-COUNT-2:     nvvm.cp.async.bulk.tensor.shared.cluster.global
// CHECK-COUNT-2:     nvvm.cp.async.shared.global %{{.*}}, %{{.*}}, 4, cache = ca : !llvm.ptr<3>, !llvm.ptr<1>
// CHECK:             nvvm.cp.async.commit.group
// CHECK:             nvvm.cp.async.wait.group 2
// CHECK:             arith.subi %{{.*}}, %c2
// CHECK:             nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
// CHECK:             nvvm.mbarrier.arrive
// CHECK:         arith.maxsi
// CHECK:         nvvm.cp.async.wait.group 0
// CHECK:         scf.for
// CHECK:           nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
// CHECK:           nvvm.mbarrier.arrive
// CHECK-NOT:     vector.shuffle %{{.*}}, %{{.*}} [0, 2, 4
// CHECK:         arith.truncf %{{.*}} : vector<4xf32> to vector<4xbf16>
// CHECK:         vector.store %{{.*}} {alignment = 8 : i64} : memref<2x128x256xbf16>, vector<4xbf16>
// SM100-COUNT-2: nvvm.tcgen05.cp
// SM100:         nvvm.tcgen05.mma.block_scale {{.*}} %c144704512_i32{{.*}} {blockScale = #nvvm.tcgen05_mma_block_scale<block32>, ctaGroup = #nvvm.cta_group<cta_1>, kind = #nvvm.block_scale_kind<mxf8f6f4>}
// SM100:         nvvm.tcgen05.mma.block_scale {{.*}} %c681575440_i32
// SM100:         nvvm.tcgen05.mma.block_scale {{.*}} %c1218446368_i32
// SM100:         nvvm.tcgen05.mma.block_scale {{.*}} %c1755317296_i32
// SM103-COUNT-2: llvm.call_intrinsic "llvm.nvvm.tcgen05.cp.32x128b_warpx4.cg1"
// SM103:         llvm.call_intrinsic "llvm.nvvm.tcgen05.mma.shared.mxf8f6f4.block_scale.block32"({{.*}}%c144704512_i32
// CHECK-NOT:     fp4train.
func.func @mxfp8_bf16(%a: !a, %b: !b, %acc: tensor<2x128x256xf32>) -> tensor<2x128x256xbf16> {
  %c = fp4train.scaled_matmul %a, %b, %acc : !a, !b, tensor<2x128x256xf32>
  %t = arith.truncf %c : tensor<2x128x256xf32> to tensor<2x128x256xbf16>
  return %t : tensor<2x128x256xbf16>
}

// -----

!a = !fp4train.scaled<64x256xf4E2M1FN, block = [1, 16], scale = f8E4M3FN, global>
!w = !fp4train.scaled<96x256xf4E2M1FN, block = [16, 16], scale = f8E4M3FN, global>

// NVFP4 with 16x16 weight blocks: B^T row r reads scale row r / 16 (of 6);
// rows past 96 copy 0 bytes (zero-filled).
// CHECK-LABEL: func.func @nvfp4_2d
// CHECK:         memref.extract_aligned_pointer_as_index %{{.*}} : memref<1x6x16xi8>
// CHECK:         arith.cmpi ult, %{{.*}}, %c96
// CHECK:         arith.minui %{{.*}}, %c95
// CHECK:         arith.divui %{{.*}}, %c16
// CHECK:         arith.select %{{.*}}, %c4_i32{{.*}}, %c0_i32
// CHECK:         nvvm.cp.async.shared.global %{{.*}}, %{{.*}}, 4, cache = ca, %{{.*}} : !llvm.ptr<3>, !llvm.ptr<1>, i32
func.func @nvfp4_2d(%a: !a, %w: !w, %acc: tensor<64x96xf32>) -> tensor<64x96xf32> {
  %c = fp4train.scaled_matmul %a, %w, %acc : !a, !w, tensor<64x96xf32>
  return %c : tensor<64x96xf32>
}

// -----

!a = !fp4train.scaled<128x256xf4E2M1FN, block = [1, 32], scale = f8E8M0FNU>

// A zero-filled accumulator (what the quantize pipeline gives every GEMM)
// is not read: the epilogue adds the fill value, so the kernel does not take
// the buffer (and the device-memory pass copies nothing for it). An
// argument accumulator is loaded.
// CHECK-LABEL: func.func @filled_accumulator
// CHECK:         %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK:         gpu.launch
// CHECK-NOT:       vector.load %{{.*}} : memref<1x128x128xf32>, vector<{{[0-9]+}}xf32>
// CHECK:           %[[SPLAT:.*]] = vector.broadcast %[[ZERO]] : f32 to vector<{{[0-9]+}}xf32>
// CHECK:           arith.addf %[[SPLAT]], %{{.*}} : vector<{{[0-9]+}}xf32>
// CHECK:         gpu.terminator
func.func @filled_accumulator(%a: !a, %b: !a) -> tensor<128x128xf32> {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<128x128xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%empty : tensor<128x128xf32>) -> tensor<128x128xf32>
  %c = fp4train.scaled_matmul %a, %b, %acc : !a, !a, tensor<128x128xf32>
  return %c : tensor<128x128xf32>
}

// CHECK-LABEL: func.func @argument_accumulator
// CHECK:         gpu.launch
// CHECK:           vector.load %{{.*}} : memref<1x128x128xf32>, vector<{{[0-9]+}}xf32>
func.func @argument_accumulator(%a: !a, %b: !a, %acc: tensor<128x128xf32>) -> tensor<128x128xf32> {
  %c = fp4train.scaled_matmul %a, %b, %acc : !a, !a, tensor<128x128xf32>
  return %c : tensor<128x128xf32>
}

// -----

!a = !fp4train.scaled<64x144xf4E2M1FN, block = [1, 16], scale = f8E4M3FN, global>

// K = 144 = 16 (mod 32): E2M1 rows of 72 stored bytes are not 16-byte
// multiples ([PK1]), so each 16-byte smem chunk takes two 8-byte copies
// (cp.async.ca: .cg copies 16 bytes only).
// CHECK-LABEL: func.func @nvfp4_rows_of_72_bytes
// CHECK:         nvvm.cp.async.shared.global %{{.*}}, %{{.*}}, 8, cache = ca, %{{.*}} : !llvm.ptr<3>, !llvm.ptr<1>, i32
// CHECK-NOT:     cache = cg
func.func @nvfp4_rows_of_72_bytes(%a: !a, %b: !a, %acc: tensor<64x64xf32>) -> tensor<64x64xf32> {
  %c = fp4train.scaled_matmul %a, %b, %acc : !a, !a, tensor<64x64xf32>
  return %c : tensor<64x64xf32>
}
