// RUN: fp4-opt %s --fp4train-to-nvvm="chip=sm_90a" --split-input-file --verify-diagnostics | FileCheck %s

// [WG4] sm_90a's MXFP4 GEMM first writes its operands as E4M3, one
// workgroup per tile of 128 rows and K step of 128, the K steps in the
// grid's y (at most 65535): K = 65536 * 128 is one step too many.
!a = !fp4train.scaled<128x8388608xf4E2M1FN, block = [1, 32], scale = f8E8M0FNU>
func.func @k_steps(%a: !a, %b: !a, %acc: tensor<128x128xf32>) -> tensor<128x128xf32> {
  // expected-error@+1 {{'fp4train.scaled_matmul' op needs 65536 K steps of 128 in the grid of the kernels that stage its operands on sm_90a, past the launch limit (65535 in y)}}
  %c = fp4train.scaled_matmul %a, %b, %acc : !a, !a, tensor<128x128xf32>
  return %c : tensor<128x128xf32>
}

// -----

// One step fewer is a launch (MXFP8 stages its operands as they are: no
// staging kernels, no limit on K steps).
!a = !fp4train.scaled<128x8388480xf4E2M1FN, block = [1, 32], scale = f8E8M0FNU>
!b = !fp4train.scaled<128x8388608xf8E4M3FN, block = [1, 32], scale = f8E8M0FNU>
// CHECK-LABEL: func.func @k_steps_fit
// CHECK:         gpu.launch blocks({{.*}}) in ({{.*}} = %c1{{.*}}, {{.*}} = %c65535{{.*}}, {{.*}} = %c1{{.*}})
// CHECK:         gpu.launch blocks({{.*}}) in ({{.*}} = %c1{{.*}}, {{.*}} = %c65535{{.*}}, {{.*}} = %c1{{.*}})
// CHECK:         gpu.launch
// CHECK-LABEL: func.func @mxfp8_k_steps
// CHECK:         gpu.launch
// CHECK-NOT:     gpu.launch
func.func @k_steps_fit(%a: !a, %b: !a, %acc: tensor<128x128xf32>) -> tensor<128x128xf32> {
  %c = fp4train.scaled_matmul %a, %b, %acc : !a, !a, tensor<128x128xf32>
  return %c : tensor<128x128xf32>
}
func.func @mxfp8_k_steps(%a: !b, %b: !b, %acc: tensor<128x128xf32>) -> tensor<128x128xf32> {
  %c = fp4train.scaled_matmul %a, %b, %acc : !b, !b, tensor<128x128xf32>
  return %c : tensor<128x128xf32>
}
