// The ROCm pipeline from a training graph on tensors to gfx950 assembly:
// each GEMM kernel's main loop holds the block-scaled MFMA of the form the
// documented rule picks, and no kernel uses scratch (no spills). The two MX
// quantize ops (RNE, blocks along K) are kernels too, outlined first; the
// two have the same shape, so both launch @fprop_kernel ([KRN1]: the copy
// @fprop_kernel_0 is merged away); the GEMM is @fprop_kernel_1.
//
// RUN: fp4-opt %s --fp4train-rocm-pipeline="recipe=mxfp4 chip=gfx950 format=isa" | FileCheck %s --check-prefix=ISA32
// RUN: fp4-opt %fp4train_src/examples/mlp_train_step.mlir --fp4train-rocm-pipeline="recipe=mxfp4 format=isa" | FileCheck %s --check-prefix=ISA16
// RUN: fp4-opt %s --fp4train-rocm-pipeline="recipe=mxfp4 mfma=16x16x128 format=isa" | FileCheck %s --check-prefix=ISA16L
// RUN: fp4-opt %s --fp4train-rocm-pipeline="recipe=mxfp8 mfma=16x16x128 format=llvm weight-layout=out-in" | FileCheck %s --check-prefix=LLVM
// RUN: fp4-opt %s --fp4train-rocm-pipeline="recipe=mxfp4 format=llvm" | FileCheck %s --check-prefix=DEVICE
// RUN: fp4-opt %s --fp4train-rocm-pipeline="recipe=mxfp4 format=llvm memory=unified" | FileCheck %s --check-prefix=UNIFIED
// RUN: not fp4-opt %s --fp4train-rocm-pipeline="recipe=mxfp4 memory=xnack" 2>&1 | FileCheck %s --check-prefix=BADMEMORY
// RUN: not fp4-opt %s --fp4train-rocm-pipeline="recipe=nvfp4" 2>&1 | FileCheck %s --check-prefix=NVFP4
// RUN: not fp4-opt %s --fp4train-rocm-pipeline="recipe=mxfp4 chip=gfx942" 2>&1 | FileCheck %s --check-prefix=GFX942

// memory=device (the default): the kernels get device buffers. The input
// and the weight are copied in, the quantized codes and scales stay on the
// device between the quantize kernels and the GEMM, and only the result is
// copied back; memory=unified hands the kernels the host's buffers.
// DEVICE:      llvm.func @fprop
// DEVICE:        llvm.call @mgpuMemAlloc
// DEVICE:        llvm.call @mgpuMemcpy
// DEVICE:        gpu.launch_func <%{{.*}} : !llvm.ptr> @fprop_kernel::@fprop_kernel
// DEVICE:        llvm.call @mgpuMemcpy
// DEVICE:        gpu.launch_func <%{{.*}} : !llvm.ptr> @fprop_kernel::@fprop_kernel
// DEVICE-NOT:    llvm.call @mgpuMemcpy
// DEVICE:        gpu.launch_func <%{{.*}} : !llvm.ptr> @fprop_kernel_1::@fprop_kernel
// DEVICE:        llvm.call @mgpuMemcpy
// DEVICE-NOT:    llvm.call @mgpuMemcpy
// DEVICE:        llvm.call @mgpuMemFree
// DEVICE:        llvm.return
// UNIFIED-NOT:   mgpuMem
// UNIFIED:       gpu.launch_func @fprop_kernel::@fprop_kernel
// UNIFIED-NOT:   mgpuMem
// BADMEMORY:     for the --memory option: 'xnack' is not one of device, unified

// 2048x2048 outputs make 256 workgroups of 128x128: 32x32x64.
// ISA32:     llvm.func @fprop
// ISA32:       gpu.launch_func <%{{.*}} : !llvm.ptr> @fprop_kernel::@fprop_kernel blocks in
// ISA32:       gpu.launch_func <%{{.*}} : !llvm.ptr> @fprop_kernel::@fprop_kernel blocks in
// ISA32:       gpu.launch_func <%{{.*}} : !llvm.ptr> @fprop_kernel_1::@fprop_kernel blocks in (%{{.*}}, %{{.*}}, %{{.*}}) threads in (%{{.*}}, %{{.*}}, %{{.*}}) : i64
// ISA32:     gpu.binary @fprop_kernel
// ISA32-SAME:  v_cvt_scalef32_pk_fp4_f32
// ISA32-SAME:  .private_segment_fixed_size: 0
// ISA32-NOT: gpu.binary @fprop_kernel_0
// ISA32:     gpu.binary @fprop_kernel_1
// ISA32-SAME:  [[LOOP:\.LBB[0-9]+_[0-9]+]]:{{.*}}v_mfma_scale_f32_32x32x64_f8f6f4{{.*}}s_{{c?branch[a-z_0-9]*}} [[LOOP]]{{\\0A}}
// ISA32-SAME:  .private_segment_fixed_size: 0
// ISA32-NOT:   v_mfma_scale_f32_16x16x128_f8f6f4

// The MLP's GEMMs are small (and K fits one or two steps, so there is no
// loop): 16x16x128 in every kernel, none with scratch. Its quantize ops (RNE,
// blocks along K) are kernels on v_cvt_scalef32_pk_fp4_f32, two before each
// GEMM.
// ISA16:     gpu.binary @train_step_kernel {{.*}}v_cvt_scalef32_pk_fp4_f32
// ISA16-NOT:   .private_segment_fixed_size: {{[1-9]}}
// ISA16-NOT:   v_mfma_scale_f32_32x32x64_f8f6f4
// ISA16:     gpu.binary @train_step_kernel_1 {{.*}}v_mfma_scale_f32_16x16x128_f8f6f4
// ISA16-NOT:   .private_segment_fixed_size: {{[1-9]}}
// ISA16-NOT:   v_mfma_scale_f32_32x32x64_f8f6f4

// The same GEMM forced to 16x16x128: the form in the main loop.
// ISA16L:     gpu.binary @fprop_kernel_1
// ISA16L-SAME:  [[LOOP:\.LBB[0-9]+_[0-9]+]]:{{.*}}v_mfma_scale_f32_16x16x128_f8f6f4{{.*}}s_{{c?branch[a-z_0-9]*}} [[LOOP]]{{\\0A}}
// ISA16L-SAME:  .private_segment_fixed_size: 0

// LLVM:      gpu.binary @fprop_kernel
// LLVM-SAME:   llvm.amdgcn.cvt.scalef32.pk.fp8.f32
// LLVM:      gpu.binary @fprop_kernel_1
// LLVM-SAME:   llvm.amdgcn.mfma.scale.f32.16x16x128.f8f6f4

// NVFP4: error: 'fp4train.scaled_matmul' op has an NVFP4 operand {{.*}} which gfx950 cannot run natively
// GFX942: for the --chip option: 'gfx942' is not one of gfx950

#mk = affine_map<(m, n, k) -> (m, k)>
#nk = affine_map<(m, n, k) -> (n, k)>
#mn = affine_map<(m, n, k) -> (m, n)>
func.func @fprop(%x: tensor<2048x2048xf32>,
                 %w: tensor<2048x2048xf32> {fp4train.param}) -> tensor<2048x2048xf32> {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<2048x2048xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%empty : tensor<2048x2048xf32>) -> tensor<2048x2048xf32>
  %y = linalg.matmul indexing_maps = [#mk, #nk, #mn]
      ins(%x, %w : tensor<2048x2048xf32>, tensor<2048x2048xf32>)
      outs(%acc : tensor<2048x2048xf32>) -> tensor<2048x2048xf32>
  return %y : tensor<2048x2048xf32>
}
