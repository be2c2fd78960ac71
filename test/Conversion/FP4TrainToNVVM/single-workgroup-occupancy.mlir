// RUN: fp4-opt %s --fp4train-single-workgroup-occupancy | FileCheck %s

// A kernel launched with more than half of 228 KiB (116736 bytes) of
// dynamic shared memory fits once per SM: it gets nvvm.minctasm = 1
// ([PTX7]). Half or less, or a size that is not a constant: left alone.
// CHECK-LABEL: gpu.module @kernels
// CHECK: gpu.func @big() kernel attributes {nvvm.minctasm = 1 : i32}
// CHECK: gpu.func @half() kernel {
// CHECK: gpu.func @dynamic() kernel {
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @big() kernel {
      gpu.return
    }
    gpu.func @half() kernel {
      gpu.return
    }
    gpu.func @dynamic() kernel {
      gpu.return
    }
  }
  func.func @host(%bytes: i32) {
    %c1 = arith.constant 1 : index
    %big = arith.constant 116737 : i32
    %half = arith.constant 116736 : i32
    gpu.launch_func @kernels::@big blocks in (%c1, %c1, %c1)
        threads in (%c1, %c1, %c1) dynamic_shared_memory_size %big
    gpu.launch_func @kernels::@half blocks in (%c1, %c1, %c1)
        threads in (%c1, %c1, %c1) dynamic_shared_memory_size %half
    gpu.launch_func @kernels::@dynamic blocks in (%c1, %c1, %c1)
        threads in (%c1, %c1, %c1) dynamic_shared_memory_size %bytes
    return
  }
}
