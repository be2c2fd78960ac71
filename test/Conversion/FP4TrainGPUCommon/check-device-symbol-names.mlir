// RUN: fp4-opt %s --split-input-file --verify-diagnostics --pass-pipeline="builtin.module(gpu.module(fp4train-check-device-symbol-names))" | FileCheck %s

// Letters, digits (not first), '_', '$' and '.' (not first) are accepted.
// CHECK-LABEL: gpu.module @kernels
// CHECK: gpu.func @step_kernel.0
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @step_kernel.0() kernel {
      gpu.return
    }
    gpu.func @"$helper_1"() {
      gpu.return
    }
  }
}

// -----

module attributes {gpu.container_module} {
  gpu.module @kernels {
    // expected-error @below {{'gpu.func' op has the device symbol name 'up/../x_kernel', which the GPU assembly printers cannot write}}
    gpu.func @"up/../x_kernel"() kernel {
      gpu.return
    }
  }
}

// -----

module attributes {gpu.container_module} {
  gpu.module @kernels {
    // expected-error @below {{has the device symbol name '0k'}}
    gpu.func @"0k"() kernel {
      gpu.return
    }
    // expected-error @below {{has the device symbol name '.k'}}
    gpu.func @".k"() kernel {
      gpu.return
    }
  }
}
