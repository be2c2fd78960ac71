// [PAIR1] gemm-cta-pair: the tcgen05 GEMM on CTA pairs. Clusters of two
// workgroups compute 256 x 128 tiles of C: each stages 128 rows of A and
// 64 rows of B^T (a 64-row TMA box), both allocate tensor memory together,
// the even CTA issues the pair's M = 256 MMAs (idesc M >> 7 = 2 at bits
// 27-28, N >> 3 = 16 at bits 17-22) and commits them to both CTAs'
// mbarriers; the odd CTA's producers and epilogue arrive on the even CTA's
// mbarriers (mapa), its TMA loads signal them (.cta_group::2). The grid is
// two workgroups per pair tile (or gemm-workgroups rounded down to even),
// and the kernel pipeline records the cluster on the kernel.
// RUN: fp4-opt %s --fp4train-to-nvvm="chip=sm_100a gemm-cta-pair=1" | FileCheck %s --check-prefix=SM100
// RUN: fp4-opt %s --fp4train-to-nvvm="chip=sm_103a gemm-cta-pair=1 gemm-workgroups=5" | FileCheck %s --check-prefix=SM103
// RUN: fp4-opt %s --fp4train-cuda-kernel-pipeline="recipe=none chip=sm_100a gemm-cta-pair=1" | FileCheck %s --check-prefix=PIPELINE
// RUN: not fp4-opt %s --fp4train-to-nvvm="chip=sm_120a gemm-cta-pair=1" 2>&1 | FileCheck %s --check-prefix=SM120
// RUN: not fp4-opt %s --fp4train-to-nvvm="chip=sm_100a gemm-cta-pair=1 gemm-workgroups=1" 2>&1 | FileCheck %s --check-prefix=ONE

// SM120: error: fp4train-to-nvvm: gemm-cta-pair puts the tcgen05 GEMM (sm_100a, sm_103a) on CTA pairs; sm_120a has no cta_group::2 MMA
// ONE: error: fp4train-to-nvvm: gemm-cta-pair needs at least two workgroups (one CTA pair); gemm-workgroups is 1

// 2 x 3 pair tiles (M = 300 in 256-row tiles, N = 260 in 128-column ones).
// SM100-LABEL: func.func @six_pair_tiles
// SM100:         nvgpu.tma.create.descriptor {{.*}} box[%{{.*}}, %c128, %{{.*}}]
// SM100:         nvgpu.tma.create.descriptor {{.*}} box[%{{.*}}, %c64, %{{.*}}]
// SM100:         gpu.launch clusters({{.*}}) in (%{{.*}} = %c2, %{{.*}} = %c1, %{{.*}} = %c1) blocks({{.*}}) in (%{{.*}} = %c12,
// SM100:           nvvm.tcgen05.alloc %{{.*}}, %c512_i32 {group = #nvvm.cta_group<cta_2>}
// SM100:           nvvm.tcgen05.relinquish_alloc_permit {group = #nvvm.cta_group<cta_2>}
// SM100:           nvvm.cluster.arrive {aligned}
// SM100-NEXT:      nvvm.cluster.wait {aligned}
// SM100:           nvvm.mapa %{{.*}}, %c0_i32{{.*}} : !llvm.ptr<3> -> !llvm.ptr<7>
// SM100:           nvvm.cp.async.bulk.tensor.shared.cluster.global {{.*}} {group = #nvvm.cta_group<cta_2>} : !llvm.ptr<7>, !llvm.ptr
// SM100:           nvvm.mbarrier.arrive %{{.*}} {scope = #nvvm.mem_scope<cluster>} : !llvm.ptr<7>
// SM100:           nvvm.tcgen05.cp {{.*}} {group = #nvvm.cta_group<cta_2>, multicast = #nvvm.tcgen05_cp_multicast<warpx4>, shape = #nvvm.tcgen05_cp_shape<shape_32x128b>}
// SM100:           nvvm.tcgen05.mma.block_scale %{{.*}}, %{{.*}}, %{{.*}}, %c270533760_i32, {{.*}}ctaGroup = #nvvm.cta_group<cta_2>
// SM100:           nvvm.tcgen05.commit %{{.*}}, multicast_mask = %c3_i16{{.*}} {group = #nvvm.cta_group<cta_2>} : !llvm.ptr<3>, i16
// SM100:           nvvm.cluster.arrive {aligned}
// SM100-NEXT:      nvvm.cluster.wait {aligned}
// SM100:           nvvm.tcgen05.dealloc %{{.*}}, %c512_i32 {group = #nvvm.cta_group<cta_2>}

// sm_103a calls the .cg2 intrinsics; 5 workgroups make 2 pairs.
// SM103-LABEL: func.func @six_pair_tiles
// SM103:         gpu.launch clusters({{.*}}) in (%{{.*}} = %c2, %{{.*}} = %c1, %{{.*}} = %c1) blocks({{.*}}) in (%{{.*}} = %c4,
// SM103:           llvm.call_intrinsic "llvm.nvvm.tcgen05.alloc.shared.cg2"
// SM103:           llvm.call_intrinsic "llvm.nvvm.tcgen05.relinq.alloc.permit.cg2"
// SM103:           llvm.call_intrinsic "llvm.nvvm.tcgen05.cp.32x128b_warpx4.cg2"
// SM103:           llvm.call_intrinsic "llvm.nvvm.tcgen05.mma.shared.mxf4nvf4.block_scale.block16"({{.*}}, %c2_i32{{.*}}, %c0_i32{{.*}})
// SM103:           llvm.call_intrinsic "llvm.nvvm.tcgen05.commit.mc.shared.cg2"
// SM103:           llvm.call_intrinsic "llvm.nvvm.tcgen05.dealloc.cg2"

// PIPELINE-LABEL: func.func @six_pair_tiles
// PIPELINE:         gpu.launch_func @six_pair_tiles_kernel::@six_pair_tiles_kernel clusters in (%c2, %c1, %c1) blocks in (%c12, %c1, %c1)
// PIPELINE:       gpu.func @six_pair_tiles_kernel({{.*}}) kernel attributes {{{.*}}known_cluster_size = array<i32: 2, 1, 1>
!a = !fp4train.scaled<300x256xf4E2M1FN, block = [1, 16], scale = f8E4M3FN>
!b = !fp4train.scaled<260x256xf4E2M1FN, block = [1, 16], scale = f8E4M3FN>
func.func @six_pair_tiles(%a: !a, %b: !b, %acc: tensor<300x260xf32>) -> tensor<300x260xf32> {
  %c = fp4train.scaled_matmul %a, %b, %acc : !a, !b, tensor<300x260xf32>
  return %c : tensor<300x260xf32>
}
