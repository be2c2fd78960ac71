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

// -----

// An asynchronous launch (after gpu-async-region): the pass's copies are
// synchronous and would not be ordered against it.

module attributes {gpu.container_module} {
  gpu.module @k {
    gpu.func @k(%a: memref<16xf32>) kernel {
      gpu.return
    }
  }
  func.func @async(%a: memref<16xf32>) {
    %c1 = arith.constant 1 : index
    %t = gpu.wait async
    // expected-error @below {{'gpu.launch_func' op is asynchronous: fp4train-gpu-device-memory places synchronous copies around synchronous launches (run it before gpu-async-region)}}
    %t2 = gpu.launch_func async [%t] @k::@k blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%a : memref<16xf32>)
    gpu.wait [%t2]
    return
  }
}
