// RUN: fp4-opt %s --split-input-file --verify-diagnostics --fp4train-check-no-outlined-gpu-code | FileCheck %s

// A gpu.launch region is the user's own kernel: accepted, unchanged.
// CHECK-LABEL: func.func @launch
// CHECK: gpu.launch
func.func @launch(%n: index) {
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %n, %gy = %n, %gz = %n)
             threads(%tx, %ty, %tz) in (%sx = %n, %sy = %n, %sz = %n) {
    gpu.terminator
  }
  return
}

// -----

module attributes {gpu.container_module} {
  // expected-error @below {{'gpu.module' op in the input of a GPU pipeline is not supported}}
  gpu.module @kernels {
    gpu.func @k() kernel {
      gpu.return
    }
  }
}

// -----

module attributes {gpu.container_module} {
  // expected-error @below {{'gpu.binary' op in the input of a GPU pipeline is not supported}}
  gpu.binary @kernels [#gpu.object<#nvvm.target, "">]
}
