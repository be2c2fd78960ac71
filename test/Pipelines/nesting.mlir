// Every fp4train pipeline adds module passes; nested under another anchor,
// upstream's OpPassManager::addPass ended the process ("LLVM ERROR: Can't
// add pass ... restricted to 'builtin.module'"). Now it is a pipeline error
// naming the pipeline and the anchor (docs/robustness.md).
//
// RUN: not fp4-opt %s --pass-pipeline='builtin.module(func.func(fp4train-quantize-pipeline{recipe=nvfp4}))' 2>&1 | FileCheck %s --check-prefix=QUANTIZE
// RUN: not fp4-opt %s --pass-pipeline='builtin.module(func.func(fp4train-cpu-pipeline{recipe=none}))' 2>&1 | FileCheck %s --check-prefix=CPU
// RUN: not fp4-opt %s --pass-pipeline='builtin.module(func.func(fp4train-rocm-pipeline{recipe=mxfp4}))' 2>&1 | FileCheck %s --check-prefix=ROCM
// RUN: not fp4-opt %s --pass-pipeline='builtin.module(func.func(fp4train-rocm-kernel-pipeline))' 2>&1 | FileCheck %s --check-prefix=ROCM-KERNEL
// RUN: not fp4-opt %s --pass-pipeline='builtin.module(func.func(fp4train-cuda-pipeline{recipe=nvfp4 chip=sm_100a}))' 2>&1 | FileCheck %s --check-prefix=CUDA
// RUN: not fp4-opt %s --pass-pipeline='builtin.module(func.func(fp4train-cuda-kernel-pipeline))' 2>&1 | FileCheck %s --check-prefix=CUDA-KERNEL
// RUN: not fp4-opt %s --pass-pipeline='builtin.module(any(fp4train-cpu-pipeline))' 2>&1 | FileCheck %s --check-prefix=ANY
// RUN: not fp4-opt %s --pass-pipeline='builtin.module(gpu.module(fp4train-cuda-pipeline))' 2>&1 | FileCheck %s --check-prefix=GPU-MODULE
//
// QUANTIZE: error: 'fp4train-quantize-pipeline' runs on 'builtin.module' only, not nested under 'func.func'
// CPU: error: 'fp4train-cpu-pipeline' runs on 'builtin.module' only, not nested under 'func.func'
// ROCM: error: 'fp4train-rocm-pipeline' runs on 'builtin.module' only, not nested under 'func.func'
// ROCM-KERNEL: error: 'fp4train-rocm-kernel-pipeline' runs on 'builtin.module' only, not nested under 'func.func'
// CUDA: error: 'fp4train-cuda-pipeline' runs on 'builtin.module' only, not nested under 'func.func'
// CUDA-KERNEL: error: 'fp4train-cuda-kernel-pipeline' runs on 'builtin.module' only, not nested under 'func.func'
// ANY: error: 'fp4train-cpu-pipeline' runs on 'builtin.module' only, not nested under 'any'
// GPU-MODULE: error: 'fp4train-cuda-pipeline' runs on 'builtin.module' only, not nested under 'gpu.module'
//
// A module nested in the top-level one is a module: the pipeline runs there.
// RUN: fp4-opt %s --pass-pipeline='builtin.module(builtin.module(fp4train-quantize-pipeline{recipe=nvfp4}))' | FileCheck %s --check-prefix=NESTED
// NESTED: fp4train.scaled_matmul

module {
module @inner {
  func.func @train_step(%x: tensor<32x64xf32>, %w: tensor<16x64xf32> {fp4train.param}) -> tensor<32x16xf32> {
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<32x16xf32>
    %init = linalg.fill ins(%zero : f32) outs(%e : tensor<32x16xf32>) -> tensor<32x16xf32>
    %y = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
        ins(%x, %w : tensor<32x64xf32>, tensor<16x64xf32>) outs(%init : tensor<32x16xf32>) -> tensor<32x16xf32>
    return %y : tensor<32x16xf32>
  }
}
}
