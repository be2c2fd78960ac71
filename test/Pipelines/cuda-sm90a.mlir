// The CUDA pipeline from a training graph on tensors to sm_90a (Hopper) PTX:
// the GEMM kernels' main loops hold MMAs without block scaling: one wgmma
// m64n128k32 e4m3 per 32-element block and warpgroup ([WG1]: MXFP4 with
// E2M1 written as E4M3 by prmt in kernels before the GEMM, [WG4], MXFP8)
// with f32 scaling, one wgmma m64n128k16 f16 per NVFP4 16-element block on
// values staged as f16 times their block scale ([WG3]); the quantize kernels encode E2M1 in software
// (no cvt ... e2m1x2 on sm_90) and E4M3 with cvt.rn.satfinite. sm_89 (Ada,
// no wgmma) takes mma.sync m16n8k32 for the MX formats.
//
// RUN: fp4-opt %s --fp4train-cuda-pipeline="recipe=mxfp4 chip=sm_90a format=isa" | FileCheck %s --check-prefix=MXFP4
// RUN: fp4-opt %s --fp4train-cuda-pipeline="recipe=nvfp4 chip=sm_90a format=isa" | FileCheck %s --check-prefix=NVFP4
// RUN: fp4-opt %s --fp4train-cuda-pipeline="recipe=mxfp8 chip=sm_90a format=isa" | FileCheck %s --check-prefix=MXFP8
// RUN: fp4-opt %s --fp4train-cuda-pipeline="recipe=mxfp4 chip=sm_89 format=isa" | FileCheck %s --check-prefix=SM89
// RUN: fp4-opt %s --fp4train-cuda-pipeline="recipe=mxfp4 chip=sm_90a format=llvm" | FileCheck %s --check-prefix=LLVM
// RUN: fp4-opt %s --fp4train-cuda-kernel-pipeline="recipe=mxfp4 chip=sm_90a" | FileCheck %s --check-prefix=KERNEL
//
// The MMAs are in the GEMM's innermost loop, over the scale blocks of a K
// step of 128 (4 MX blocks, 8 NVFP4 blocks): one wgmma per warpgroup and
// block, or one mma.sync per instruction tile (4 x 4) and block. The PTX is
// one line too long for a FileCheck regex across the loop; ptx_report.py
// finds the loop.
// RUN: fp4-opt %s --fp4train-cuda-pipeline="recipe=mxfp4 chip=sm_90a format=isa" -o %t.mxfp4.mlir
// RUN: %python %fp4train_src/scripts/ptx_report.py %t.mxfp4.mlir %t.mxfp4 | FileCheck %s --check-prefix=LOOP-MX
// RUN: fp4-opt %s --fp4train-cuda-pipeline="recipe=nvfp4 chip=sm_90a format=isa" -o %t.nvfp4.mlir
// RUN: %python %fp4train_src/scripts/ptx_report.py %t.nvfp4.mlir %t.nvfp4 | FileCheck %s --check-prefix=LOOP-NV
// LOOP-MX: fprop_kernel_3 gemm 1 x wgmma m64n128k32 e4m3.e4m3 1
// LOOP-NV: fprop_kernel_3 gemm 1 x wgmma m64n128k16 f16.f16 1

// With mxfp4: two software-encoded quantize kernels, the two kernels that
// write the operands as E4M3 (prmt), B^T's scales folded (a shuffle
// reduction, [WG4]), then the GEMM on wgmma m64n128k32 e4m3 x e4m3, its
// operands' tiles loaded by TMA into the 128-byte swizzle, completing on an
// mbarrier per buffer ([WG5]).
// MXFP4:     llvm.func @fprop
// MXFP4:       gpu.launch_func <%{{.*}} : !llvm.ptr> @fprop_kernel::@fprop_kernel
// MXFP4:       gpu.launch_func <%{{.*}} : !llvm.ptr> @fprop_kernel_0::@fprop_kernel
// MXFP4:       gpu.launch_func <%{{.*}} : !llvm.ptr> @fprop_kernel_1::@fprop_kernel
// MXFP4:       gpu.launch_func <%{{.*}} : !llvm.ptr> @fprop_kernel_2::@fprop_kernel
// MXFP4:       gpu.launch_func <%{{.*}} : !llvm.ptr> @fprop_kernel_3::@fprop_kernel blocks in (%{{.*}}, %{{.*}}, %{{.*}}) threads in (%{{.*}}, %{{.*}}, %{{.*}}) : i64
// MXFP4:     gpu.binary @fprop_kernel  [#gpu.object<#nvvm.target<O = 3, chip = "sm_90a", features = "+ptx87">
// MXFP4-SAME:  .version 8.7{{\\0A}}.target sm_90a
// MXFP4-NOT:   cvt.rn.satfinite.e2m1x2
// MXFP4-NOT:   .extern
// MXFP4:     gpu.binary @fprop_kernel_1
// MXFP4-SAME:  prmt.b32
// MXFP4:     gpu.binary @fprop_kernel_2
// MXFP4-SAME:  shfl.sync.bfly.b32
// MXFP4-SAME:  prmt.b32
// MXFP4:     gpu.binary @fprop_kernel_3
// MXFP4-SAME:  mbarrier.init.shared.b64
// MXFP4-SAME:  fence.proxy.async.shared::cta
// MXFP4-SAME:  cp.async.bulk.tensor.3d.shared::cta.global.tile.mbarrier::complete_tx::bytes
// MXFP4-SAME:  mbarrier.try_wait.parity
// MXFP4-SAME:  wgmma.fence.sync.aligned
// MXFP4-SAME:  wgmma.mma_async.sync.aligned.m64n128k32.f32.e4m3.e4m3
// MXFP4-SAME:  wgmma.commit_group.sync.aligned
// MXFP4-SAME:  wgmma.wait_group.sync.aligned
// MXFP4-NOT:   .extern
// MXFP4-NOT:   mul.rn.ftz

// With nvfp4: the amax reductions, the quantize kernels, then the GEMM on
// wgmma m64n128k16 f16 (one per 16-element block and warpgroup), its staged
// values E2M1 x UE4M3 made by the E4M3 decode of the scale and a packed f16
// multiply, and one f32 add per accumulator and block.
// NVFP4:     gpu.binary @fprop_kernel_3
// NVFP4-SAME:  cvt.rn.f16x2.e4m3x2
// NVFP4-SAME:  mul.rn.f16x2
// NVFP4-SAME:  wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16
// NVFP4-NOT:   mma.sync.aligned

// With mxfp8: E4M3 quantized with the hardware conversion, the GEMM on the
// staged FP8 codes.
// MXFP8:     gpu.binary @fprop_kernel
// MXFP8-SAME:  cvt.rn.satfinite.e4m3x2.f32
// MXFP8:     gpu.binary @fprop_kernel_1
// MXFP8-SAME:  wgmma.mma_async.sync.aligned.m64n128k32.f32.e4m3.e4m3

// SM89:      gpu.binary @fprop_kernel_1  [#gpu.object<#nvvm.target<O = 3, chip = "sm_89", features = "+ptx87">
// SM89-SAME:   .target sm_89
// SM89-SAME:   mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32

// LLVM:      gpu.binary @fprop_kernel_3
// LLVM-SAME:   llvm.nvvm.wgmma.commit_group.sync.aligned

// The emulator's form: the NVVM wgmma ops, prmt for the scale factors.
// KERNEL:    func.func @fprop
// KERNEL:      gpu.launch_func @fprop_kernel_3::@fprop_kernel
// KERNEL:    gpu.module @fprop_kernel_3
// KERNEL:      scf.for
// KERNEL:        nvvm.prmt
// KERNEL:        nvvm.wgmma.mma_async


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
