// RUN: fp4-opt %s --fp4train-merge-identical-kernels | FileCheck %s

// [KRN1] @step_kernel_0 is @step_kernel under other names (its own, and
// its function's): its launch goes to @step_kernel and the copy is erased.
// @step_kernel_1 differs in one constant and stays, and @named_elsewhere,
// a copy that a non-launch op still names, stays too.

// CHECK-LABEL: func.func @step
// CHECK:         gpu.launch_func @step_kernel::@step_kernel blocks
// CHECK:         gpu.launch_func @step_kernel::@step_kernel blocks
// CHECK:         gpu.launch_func @step_kernel_1::@step_kernel blocks
// CHECK:         gpu.launch_func @step_kernel::@step_kernel blocks
// CHECK:       gpu.module @step_kernel
// CHECK-NOT:   gpu.module @step_kernel_0
// CHECK:       gpu.module @step_kernel_1
// CHECK:       gpu.module @named_elsewhere

module attributes {gpu.container_module} {
  func.func @step(%buffer: memref<64xf32>) {
    %c1 = arith.constant 1 : index
    %c64 = arith.constant 64 : index
    gpu.launch_func @step_kernel::@step_kernel blocks in (%c1, %c1, %c1) threads in (%c64, %c1, %c1) args(%buffer : memref<64xf32>)
    gpu.launch_func @step_kernel_0::@renamed blocks in (%c1, %c1, %c1) threads in (%c64, %c1, %c1) args(%buffer : memref<64xf32>)
    gpu.launch_func @step_kernel_1::@step_kernel blocks in (%c1, %c1, %c1) threads in (%c64, %c1, %c1) args(%buffer : memref<64xf32>)
    gpu.launch_func @named_elsewhere::@step_kernel blocks in (%c1, %c1, %c1) threads in (%c64, %c1, %c1) args(%buffer : memref<64xf32>)
    return
  }
  func.func private @keeps(%m: memref<64xf32>) attributes {keeps = @named_elsewhere}
  gpu.module @step_kernel {
    gpu.func @step_kernel(%buffer: memref<64xf32>) kernel {
      %i = gpu.thread_id x
      %v = memref.load %buffer[%i] : memref<64xf32>
      %two = arith.constant 2.0 : f32
      %w = arith.mulf %v, %two : f32
      memref.store %w, %buffer[%i] : memref<64xf32>
      gpu.return
    }
  }
  gpu.module @step_kernel_0 {
    gpu.func @renamed(%buffer: memref<64xf32>) kernel {
      %i = gpu.thread_id x
      %v = memref.load %buffer[%i] : memref<64xf32>
      %two = arith.constant 2.0 : f32
      %w = arith.mulf %v, %two : f32
      memref.store %w, %buffer[%i] : memref<64xf32>
      gpu.return
    }
  }
  gpu.module @step_kernel_1 {
    gpu.func @step_kernel(%buffer: memref<64xf32>) kernel {
      %i = gpu.thread_id x
      %v = memref.load %buffer[%i] : memref<64xf32>
      %three = arith.constant 3.0 : f32
      %w = arith.mulf %v, %three : f32
      memref.store %w, %buffer[%i] : memref<64xf32>
      gpu.return
    }
  }
  gpu.module @named_elsewhere {
    gpu.func @step_kernel(%buffer: memref<64xf32>) kernel {
      %i = gpu.thread_id x
      %v = memref.load %buffer[%i] : memref<64xf32>
      %two = arith.constant 2.0 : f32
      %w = arith.mulf %v, %two : f32
      memref.store %w, %buffer[%i] : memref<64xf32>
      gpu.return
    }
  }
}
