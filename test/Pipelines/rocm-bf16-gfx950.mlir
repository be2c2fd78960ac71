// The ROCm pipeline on a bf16 contraction: fp4train-quantize-matmuls
// accumulates in f32 and truncates the GEMM's result to bf16 (arith.truncf
// on the tensor), which the GEMM kernel takes over (the bf16 epilogue of
// docs/amdgpu.md): after the 32x32x64 main loop, each pair of adjacent
// columns is one v_pk_add_f32, one v_cvt_pk_bf16_f32 and one
// global_store_dword, and the kernel uses no scratch. The two quantize
// kernels read bf16 (@fprop_kernel, @fprop_kernel_0); the GEMM is
// @fprop_kernel_1.
//
// RUN: fp4-opt %s --fp4train-rocm-pipeline="recipe=mxfp4 chip=gfx950 format=isa" | FileCheck %s
// The CPU pipeline takes the same graph (the bf16 casts become linalg ops
// before bufferization):
// RUN: fp4-opt %s --fp4train-cpu-pipeline="recipe=mxfp4" | FileCheck %s --check-prefix=CPU
// CPU:       llvm.func @fprop
// CPU-NOT:   arith.extf {{.*}}tensor

// CHECK:     llvm.func @fprop
// CHECK:       gpu.launch_func <%{{.*}} : !llvm.ptr> @fprop_kernel_1::@fprop_kernel
// CHECK:     gpu.binary @fprop_kernel_1
// CHECK-SAME:  [[LOOP:\.LBB[0-9]+_[0-9]+]]:{{.*}}v_mfma_scale_f32_32x32x64_f8f6f4{{.*}}s_{{c?branch[a-z_0-9]*}} [[LOOP]]{{\\0A}}
// CHECK-SAME:  v_pk_add_f32
// CHECK-SAME:  v_cvt_pk_bf16_f32
// CHECK-SAME:  global_store_dword v
// CHECK-SAME:  .private_segment_fixed_size: 0

#mk = affine_map<(m, n, k) -> (m, k)>
#nk = affine_map<(m, n, k) -> (n, k)>
#mn = affine_map<(m, n, k) -> (m, n)>
func.func @fprop(%x: tensor<2048x2048xbf16>,
                 %w: tensor<2048x2048xbf16> {fp4train.param}) -> tensor<2048x2048xbf16> {
  %zero = arith.constant 0.0 : bf16
  %empty = tensor.empty() : tensor<2048x2048xbf16>
  %acc = linalg.fill ins(%zero : bf16) outs(%empty : tensor<2048x2048xbf16>) -> tensor<2048x2048xbf16>
  %y = linalg.matmul indexing_maps = [#mk, #nk, #mn]
      ins(%x, %w : tensor<2048x2048xbf16>, tensor<2048x2048xbf16>)
      outs(%acc : tensor<2048x2048xbf16>) -> tensor<2048x2048xbf16>
  return %y : tensor<2048x2048xbf16>
}
