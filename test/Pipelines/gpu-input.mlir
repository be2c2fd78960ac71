// Inputs that already hold outlined GPU code: a nested gpu.container_module
// launching its own kernel went through outlining and device memory as if
// the pipeline had made it, and upstream gpu-to-llvm failed on it with
// invalid IR ("got 5 kernel operands but expected 1"). The GPU pipelines
// refuse it up front, naming the op (docs/robustness.md).
//
// RUN: not fp4-opt %s --split-input-file --fp4train-cuda-pipeline="recipe=nvfp4 chip=sm_100a format=isa" 2>&1 | FileCheck %s
// RUN: not fp4-opt %s --split-input-file --fp4train-cuda-kernel-pipeline="recipe=nvfp4 chip=sm_120a" 2>&1 | FileCheck %s
// RUN: not fp4-opt %s --split-input-file --fp4train-rocm-pipeline="recipe=mxfp4 format=isa" 2>&1 | FileCheck %s
// RUN: not fp4-opt %s --split-input-file --fp4train-rocm-kernel-pipeline="recipe=mxfp4" 2>&1 | FileCheck %s

// CHECK: error: 'gpu.module' op in the input of a GPU pipeline is not supported: the pipelines outline and launch only the kernels they create
module {
  module attributes {gpu.container_module} {
    gpu.module @kernels {
      gpu.func @scale(%a: memref<4xf32>) kernel {
        gpu.return
      }
    }
    func.func @run(%a: memref<4xf32>) {
      %c1 = arith.constant 1 : index
      gpu.launch_func @kernels::@scale blocks in (%c1, %c1, %c1)
          threads in (%c1, %c1, %c1) args(%a : memref<4xf32>)
      return
    }
  }
}

// -----

// A launch of a kernel defined elsewhere (an external gpu.binary).
// CHECK: error: 'gpu.binary' op in the input of a GPU pipeline is not supported
module attributes {gpu.container_module} {
  gpu.binary @blob [#gpu.object<#nvvm.target, "">]
  func.func @run() {
    return
  }
}
