// RUN: fp4-opt %s --fp4train-gpu-device-memory --split-input-file --verify-diagnostics

// A kernel operand that views a strided function argument: gpu.alloc cannot
// make a twin of that type.

module attributes {gpu.container_module} {
  gpu.module @k {
    gpu.func @k(%a: memref<16xf32, strided<[2]>>) kernel {
      gpu.return
    }
  }
  func.func @strided(%a: memref<16xf32, strided<[2]>>) {
    %c1 = arith.constant 1 : index
    // expected-error @below {{a kernel operand views buffer of type 'memref<16xf32, strided<[2]>>', which has no device twin: fp4train-gpu-device-memory needs an identity layout in the default memory space}}
    gpu.launch_func @k::@k blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%a : memref<16xf32, strided<[2]>>)
    return
  }
}

// -----

// A buffer in another memory space.

module attributes {gpu.container_module} {
  gpu.module @k {
    gpu.func @k(%a: memref<16xf32, 1>) kernel {
      gpu.return
    }
  }
  func.func @space(%a: memref<16xf32, 1>) {
    %c1 = arith.constant 1 : index
    // expected-error @below {{which has no device twin}}
    gpu.launch_func @k::@k blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%a : memref<16xf32, 1>)
    return
  }
}
