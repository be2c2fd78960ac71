// RUN: fp4-opt %s --split-input-file --verify-diagnostics --pass-pipeline="builtin.module(gpu.module(fp4train-check-no-libdevice))" | FileCheck %s

// Other external functions (intrinsics) and defined functions are fine.
// CHECK-LABEL: gpu.module @kernels
module attributes {gpu.container_module} {
  gpu.module @kernels {
    llvm.func @llvm.nvvm.read.ptx.sreg.tid.x() -> i32
    llvm.func @__nv_defined(%x: f32) -> f32 {
      llvm.return %x : f32
    }
  }
}

// -----

// A libdevice declaration is an error ([PTX3]).
module attributes {gpu.container_module} {
  gpu.module @kernels {
    // expected-error @below {{kernel code references libdevice function __nv_expf: fp4train kernels must not call math library functions}}
    llvm.func @__nv_expf(f32) -> f32
  }
}
