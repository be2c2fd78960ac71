// The CUDA pipeline from a training graph on tensors to sm_120a PTX: each
// GEMM kernel's main loop holds the block-scaled mma.sync of the recipe's
// format, quantize kernels convert with cvt.rn.satfinite, and no kernel
// references libdevice. Outlined kernels are numbered in program order.
//
// RUN: fp4-opt %s --fp4train-cuda-pipeline="recipe=mxfp4 chip=sm_120a format=isa" | FileCheck %s --check-prefix=MXFP4
// RUN: fp4-opt %s --fp4train-cuda-pipeline="recipe=nvfp4 format=isa" | FileCheck %s --check-prefix=NVFP4
// RUN: fp4-opt %s --fp4train-cuda-pipeline="recipe=mxfp8 format=isa" | FileCheck %s --check-prefix=MXFP8
// RUN: fp4-opt %s --fp4train-cuda-pipeline="recipe=mxfp4 format=llvm" | FileCheck %s --check-prefix=LLVM
// RUN: fp4-opt %s --fp4train-cuda-pipeline="recipe=mxfp4 chip=sm_121a" | FileCheck %s --check-prefix=SM121
// RUN: fp4-opt %s --fp4train-cuda-kernel-pipeline="recipe=mxfp4" | FileCheck %s --check-prefix=KERNEL
// RUN: not fp4-opt %s --fp4train-cuda-pipeline="recipe=mxfp4 chip=sm_80" 2>&1 | FileCheck %s --check-prefix=SM80
// RUN: not fp4-opt %s --fp4train-cuda-pipeline="recipe=mxfp4 format=bin toolkit=%t.no-cuda" 2>&1 | FileCheck %s --check-prefix=NOPTXAS

// With mxfp4, two RNE quantize kernels (X, W), then the GEMM.
// MXFP4:     llvm.func @fprop
// MXFP4:       gpu.launch_func <%{{.*}} : !llvm.ptr> @fprop_kernel::@fprop_kernel
// MXFP4:       gpu.launch_func <%{{.*}} : !llvm.ptr> @fprop_kernel_0::@fprop_kernel
// MXFP4:       gpu.launch_func <%{{.*}} : !llvm.ptr> @fprop_kernel_1::@fprop_kernel blocks in (%{{.*}}, %{{.*}}, %{{.*}}) threads in (%{{.*}}, %{{.*}}, %{{.*}}) : i64
// MXFP4:     gpu.binary @fprop_kernel  [#gpu.object<#nvvm.target<O = 3, chip = "sm_120a", features = "+ptx87">
// MXFP4-SAME:  .version 8.7{{\\0A}}.target sm_120a
// MXFP4-SAME:  cvt.rn.satfinite.e2m1x2.f32
// MXFP4-NOT:   .extern
// MXFP4:     gpu.binary @fprop_kernel_1
// MXFP4-SAME:  [[LOOP:\$L__BB[0-9_]+]]:{{.*}}mma.sync.aligned.m16n8k64.row.col.kind::mxf4.block_scale.scale_vec::2X.f32.e2m1.e2m1.f32.ue8m0{{.*}}bra {{(\\09)?}}[[LOOP]];
// MXFP4-NOT:   .extern

// With nvfp4, the activation's amax reduction and quantize kernels, the
// weight's (16x16 blocks: the amax reduction and the band kernel, which
// also synchronizes), then the GEMM on kind::mxf4nvf4 with UE4M3 scales.
// NVFP4:     gpu.binary @fprop_kernel
// NVFP4-SAME:  bar.sync
// NVFP4:     gpu.binary @fprop_kernel_0
// NVFP4-SAME:  cvt.rn.satfinite.e2m1x2.f32
// NVFP4:     gpu.binary @fprop_kernel_2
// NVFP4-SAME:  bar.sync
// NVFP4-SAME:  cvt.rn.satfinite.e2m1x2.f32
// NVFP4:     gpu.binary @fprop_kernel_3
// NVFP4-SAME:  [[LOOP:\$L__BB[0-9_]+]]:{{.*}}mma.sync.aligned.m16n8k64.row.col.kind::mxf4nvf4.block_scale.scale_vec::4X.f32.e2m1.e2m1.f32.ue4m3{{.*}}bra {{(\\09)?}}[[LOOP]];

// With mxfp8, E4M3 on m16n8k32 kind::mxf8f6f4.
// MXFP8:     gpu.binary @fprop_kernel
// MXFP8-SAME:  cvt.rn.satfinite.e4m3x2.f32
// MXFP8:     gpu.binary @fprop_kernel_1
// MXFP8-SAME:  [[LOOP:\$L__BB[0-9_]+]]:{{.*}}mma.sync.aligned.m16n8k32.row.col.kind::mxf8f6f4.block_scale.scale_vec::1X.f32.e4m3.e4m3.f32.ue8m0{{.*}}bra {{(\\09)?}}[[LOOP]];

// sm_121a (DGX Spark) has the same instructions and needs PTX 8.8.
// SM121:     gpu.binary @fprop_kernel_1  [#gpu.object<#nvvm.target<O = 3, chip = "sm_121a", features = "+ptx88">
// SM121-SAME:  .version 8.8{{\\0A}}.target sm_121a
// SM121-SAME:  mma.sync.aligned.m16n8k64.row.col.kind::mxf4.block_scale

// LLVM:      gpu.binary @fprop_kernel_1
// LLVM-SAME:   llvm.nvvm.mma.block.scale.m16n8k64.row.col.mxf4.scale.2x.f32.e2m1.e2m1.f32.ue8m0

// The emulator's form: host code on memrefs, kernels with structured
// control flow and the NVVM ops.
// KERNEL:    func.func @fprop
// KERNEL:      gpu.launch_func @fprop_kernel_1::@fprop_kernel
// KERNEL:    gpu.module @fprop_kernel_1
// KERNEL:      scf.for
// KERNEL:        nvvm.mma.block_scale

// SM80: for the --chip option: 'sm_80' is not one of sm_89, sm_90a, sm_100a, sm_103a, sm_120a, sm_121a
// NOPTXAS: error: format=bin needs ptxas from the CUDA toolkit: {{.*}}no-cuda/bin/ptxas is not an executable; set toolkit= or $CUDA_ROOT, or use format=isa for PTX

#mk = affine_map<(m, n, k) -> (m, k)>
#nk = affine_map<(m, n, k) -> (n, k)>
#mn = affine_map<(m, n, k) -> (m, n)>
func.func @fprop(%x: tensor<1024x1024xf32>,
                 %w: tensor<768x1024xf32> {fp4train.param}) -> tensor<1024x768xf32> {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<1024x768xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%empty : tensor<1024x768xf32>) -> tensor<1024x768xf32>
  %y = linalg.matmul indexing_maps = [#mk, #nk, #mn]
      ins(%x, %w : tensor<1024x1024xf32>, tensor<768x1024xf32>)
      outs(%acc : tensor<1024x768xf32>) -> tensor<1024x768xf32>
  return %y : tensor<1024x768xf32>
}
