// RUN: fp4-opt %s --fp4train-drop-param-markers | FileCheck %s

// The {fp4train.param} markers go, with the block and router marks that
// need them; other argument attributes stay.
// CHECK-LABEL: func.func @step
// CHECK-SAME: (%{{.*}}: memref<16x64xf32>, %{{.*}}: memref<32x64xf32> {llvm.noalias}, %{{.*}}: i64)
// CHECK-NOT: fp4train.
func.func @step(%w: memref<16x64xf32> {fp4train.param, fp4train.block = 1 : i64, fp4train.router},
                %x: memref<32x64xf32> {llvm.noalias, fp4train.param}, %s: i64) {
  return
}

// CHECK-LABEL: func.func private @external
// CHECK-SAME: (tensor<4xf32>)
func.func private @external(tensor<4xf32> {fp4train.param})
