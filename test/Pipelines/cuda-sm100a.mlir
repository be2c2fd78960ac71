// The CUDA pipeline from a training graph on tensors to sm_100a and
// sm_103a PTX (llc only): the quantize kernels convert with cvt.rn.satfinite,
// each GEMM kernel allocates tensor memory, copies the scales with
// tcgen05.cp, issues the recipe's block-scaled tcgen05.mma on mbarriers and
// reads the accumulator back with tcgen05.ld; no kernel references
// libdevice. Both chips get the same kernels (sm_103a through
// llvm.call_intrinsic, [PTX1] in docs/nvvm.md) at PTX 8.8 ([PTX2]).
//
// RUN: fp4-opt %s --fp4train-cuda-pipeline="recipe=mxfp4 chip=sm_100a format=isa" | FileCheck %s --check-prefixes=MXFP4,SM100
// RUN: fp4-opt %s --fp4train-cuda-pipeline="recipe=mxfp4 chip=sm_103a format=isa" | FileCheck %s --check-prefixes=MXFP4,SM103
// RUN: fp4-opt %s --fp4train-cuda-pipeline="recipe=nvfp4 chip=sm_100a format=isa" | FileCheck %s --check-prefix=NVFP4
// RUN: fp4-opt %s --fp4train-cuda-pipeline="recipe=nvfp4 chip=sm_103a format=isa" | FileCheck %s --check-prefix=NVFP4
// RUN: fp4-opt %s --fp4train-cuda-pipeline="recipe=mxfp8 chip=sm_100a format=isa" | FileCheck %s --check-prefix=MXFP8
// RUN: fp4-opt %s --fp4train-cuda-pipeline="recipe=mxfp8 chip=sm_103a format=isa" | FileCheck %s --check-prefix=MXFP8
// RUN: fp4-opt %s --fp4train-cuda-pipeline="recipe=mxfp4 chip=sm_100a format=llvm" | FileCheck %s --check-prefix=LLVM
// RUN: fp4-opt %s --fp4train-cuda-kernel-pipeline="recipe=nvfp4 chip=sm_100a" | FileCheck %s --check-prefix=KERNEL

// With mxfp4, two RNE quantize kernels (X, W), then the GEMM on
// kind::mxf4nvf4 block32 with UE8M0 scales, launched with 288 threads
// (producers, the MMA thread's warp, the epilogue) and 137 KiB of dynamic
// shared memory.
// MXFP4:     llvm.func @fprop
// MXFP4:       gpu.launch_func <%{{.*}} : !llvm.ptr> @fprop_kernel::@fprop_kernel
// MXFP4:       gpu.launch_func <%{{.*}} : !llvm.ptr> @fprop_kernel_0::@fprop_kernel
// The GEMM's codes come by TMA ([TMA1]): the host encodes a tensor map of
// each operand's codes (from its device twin) and passes it as a pointer.
// MXFP4:       %[[MAP_A:.*]] = llvm.call @mgpuTensorMapEncodeTiledMemref(
// MXFP4:       %[[MAP_B:.*]] = llvm.call @mgpuTensorMapEncodeTiledMemref(
// MXFP4:       gpu.launch_func <%{{.*}} : !llvm.ptr> @fprop_kernel_1::@fprop_kernel blocks in (%{{.*}}, %{{.*}}, %{{.*}}) threads in (%{{.*}}, %{{.*}}, %{{.*}}) : i64 dynamic_shared_memory_size %{{.*}} args({{.*}}%[[MAP_A]] : !llvm.ptr, %[[MAP_B]] : !llvm.ptr
// SM100:     gpu.binary @fprop_kernel  [#gpu.object<#nvvm.target<O = 3, chip = "sm_100a", features = "+ptx88">
// SM100-SAME:  .version 8.8{{\\0A}}.target sm_100a
// SM103:     gpu.binary @fprop_kernel  [#gpu.object<#nvvm.target<O = 3, chip = "sm_103a", features = "+ptx88">
// SM103-SAME:  .version 8.8{{\\0A}}.target sm_103a
// MXFP4-SAME:  cvt.rn.satfinite.e2m1x2.f32
// MXFP4-NOT:   .extern
// MXFP4:     gpu.binary @fprop_kernel_1
// MXFP4-SAME:  .maxntid 288, 1, 1{{\\0A}}.minnctapersm 1
// MXFP4-SAME:  mbarrier.init.shared.b64
// MXFP4-SAME:  tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32
// MXFP4-SAME:  tcgen05.relinquish_alloc_permit.cta_group::1.sync.aligned
// MXFP4-SAME:  mbarrier.expect_tx.relaxed.cta.shared.b64
// MXFP4-SAME:  cp.async.bulk.tensor.3d.shared::cta.global.tile.mbarrier::complete_tx::bytes
// MXFP4-SAME:  mbarrier.arrive.shared.b64
// MXFP4-SAME:  tcgen05.ld.sync.aligned.32x32b.x32.b32
// MXFP4-SAME:  tcgen05.wait::ld.sync.aligned
// MXFP4-SAME:  mbarrier.try_wait.parity.shared.b64
// MXFP4-SAME:  tcgen05.cp.cta_group::1.32x128b.warpx4
// MXFP4-SAME:  tcgen05.mma.cta_group::1.kind::mxf4nvf4.block_scale.block32
// MXFP4-SAME:  tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64
// MXFP4-SAME:  tcgen05.dealloc.cta_group::1.sync.aligned.b32
// MXFP4-NOT:   .extern

// With nvfp4, the activation's amax and quantize kernels, the weight's
// (16x16 blocks), then the GEMM on kind::mxf4nvf4 block16 (UE4M3).
// NVFP4:     gpu.binary @fprop_kernel_0
// NVFP4-SAME:  cvt.rn.satfinite.e2m1x2.f32
// NVFP4:     gpu.binary @fprop_kernel_3
// NVFP4-SAME:  tcgen05.cp.cta_group::1.32x128b.warpx4
// NVFP4-SAME:  tcgen05.mma.cta_group::1.kind::mxf4nvf4.block_scale.block16
// NVFP4-NOT:   .extern

// With mxfp8 (K = 512 in 4 stages of 128), E4M3 on kind::mxf8f6f4: the
// producers load the codes by TMA, copy the scales with cp.async and
// publish a stage two stages later; the MMA thread waits on each stage,
// copies the scales to tensor memory, issues the MMAs and commits (LLVM
// unrolls the 4 steps of the one tile; the roles' code comes in no fixed
// order).
// MXFP8:     gpu.binary @fprop_kernel
// MXFP8-SAME:  cvt.rn.satfinite.e4m3x2.f32
// MXFP8:     gpu.binary @fprop_kernel_1
// MXFP8-DAG:   cp.async.bulk.tensor.3d{{.*}}cp.async.ca.shared.global{{.*}}cp.async.commit_group
// MXFP8-DAG:   cp.async.wait_group {{(\\09)?}}2
// MXFP8-DAG:   mbarrier.try_wait.parity{{.*}}tcgen05.cp.cta_group::1.32x128b.warpx4{{.*}}tcgen05.mma.cta_group::1.kind::mxf8f6f4.block_scale.block32{{.*}}tcgen05.commit
// MXFP8-NOT:   .extern

// LLVM:      gpu.binary @fprop_kernel_1
// LLVM-SAME:   llvm.nvvm.tcgen05.mma.shared.mxf4nvf4.block_scale.block32

// The emulator's form: host code on memrefs, kernels with structured
// control flow and the NVVM ops.
// Its 145 KiB of dynamic shared memory leave room for one workgroup per SM:
// the kernel says so (nvvm.minctasm), and ptxas does not cap its registers.
// KERNEL:    gpu.module @fprop_kernel_3
// KERNEL:      gpu.func @fprop_kernel({{.*}}) kernel attributes {{{.*}}nvvm.minctasm = 1 : i32
// KERNEL:      gpu.dynamic_shared_memory
// KERNEL:      nvvm.tcgen05.alloc
// KERNEL:      scf.for
// KERNEL:        nvvm.tcgen05.mma.block_scale

#mk = affine_map<(m, n, k) -> (m, k)>
#nk = affine_map<(m, n, k) -> (n, k)>
#mn = affine_map<(m, n, k) -> (m, n)>
func.func @fprop(%x: tensor<1024x512xf32>,
                 %w: tensor<768x512xf32> {fp4train.param}) -> tensor<1024x768xf32> {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<1024x768xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%empty : tensor<1024x768xf32>) -> tensor<1024x768xf32>
  %y = linalg.matmul indexing_maps = [#mk, #nk, #mn]
      ins(%x, %w : tensor<1024x512xf32>, tensor<768x512xf32>)
      outs(%acc : tensor<1024x768xf32>) -> tensor<1024x768xf32>
  return %y : tensor<1024x768xf32>
}
