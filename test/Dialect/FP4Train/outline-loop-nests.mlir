// RUN: fp4-opt %s --split-input-file --fp4train-outline-loop-nests | FileCheck %s

// [JIT1] Each top-level loop nest becomes a private function called once with
// no_inline: constants are cloned in, other values used from above become
// arguments, and the loops are unchanged.

// CHECK-LABEL: func.func private @step_nest0(
// CHECK-SAME:      %[[A:.*]]: memref<4x8xf32>, %[[S:.*]]: f32, %[[B:.*]]: memref<4x8xf32>)
// CHECK-SAME:      attributes {llvm.linkage = #llvm.linkage<internal>}
// CHECK-DAG:     %[[HALF:.*]] = arith.constant 5.000000e-01 : f32
// CHECK-DAG:     %[[C8:.*]] = arith.constant 8 : index
// CHECK:         scf.for %[[I:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK:           scf.for %[[J:.*]] = %{{.*}} to %[[C8]] step %{{.*}} {
// CHECK:             %[[X:.*]] = memref.load %[[A]][%[[I]], %[[J]]]
// CHECK:             %[[Y:.*]] = arith.mulf %[[X]], %[[HALF]] : f32
// CHECK:             %[[Z:.*]] = arith.addf %[[Y]], %[[S]] : f32
// CHECK:             memref.store %[[Z]], %[[B]][%[[I]], %[[J]]]
// CHECK:         return
// CHECK-LABEL: func.func private @step_nest1(
// CHECK:         scf.parallel
// CHECK-LABEL: func.func @step(
// CHECK-SAME:      %[[A0:.*]]: memref<4x8xf32>, %[[B0:.*]]: memref<4x8xf32>, %[[S0:.*]]: f32)
// CHECK-NOT:     scf.for
// CHECK:         call @step_nest0(%[[A0]], %[[S0]], %[[B0]]) {no_inline}
// CHECK-NEXT:    call @step_nest1(%[[S0]], %[[B0]]) {no_inline}
// CHECK-NEXT:    return
func.func @step(%a: memref<4x8xf32>, %b: memref<4x8xf32>, %s: f32) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %half = arith.constant 0.5 : f32
  scf.for %i = %c0 to %c4 step %c1 {
    scf.for %j = %c0 to %c8 step %c1 {
      %x = memref.load %a[%i, %j] : memref<4x8xf32>
      %y = arith.mulf %x, %half : f32
      %z = arith.addf %y, %s : f32
      memref.store %z, %b[%i, %j] : memref<4x8xf32>
    }
  }
  scf.parallel (%i) = (%c0) to (%c4) step (%c1) {
    memref.store %s, %b[%i, %c0] : memref<4x8xf32>
  }
  return
}

// -----

// A name already taken is skipped; a loop that yields results (a reduction
// carried in registers), a nested loop and a declaration stay as they are.

// CHECK-LABEL: func.func @f_nest0(
// CHECK-LABEL: func.func private @f_nest1(
// CHECK-LABEL: func.func @f(
// CHECK:         %[[SUM:.*]] = scf.for {{.*}} iter_args
// CHECK:         scf.if
// CHECK-NEXT:      scf.for
// CHECK:         call @f_nest1(
// CHECK-LABEL: func.func private @g(
func.func @f_nest0() {
  return
}
func.func @f(%m: memref<8xf32>, %flag: i1) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %zero = arith.constant 0.0 : f32
  %sum = scf.for %i = %c0 to %c8 step %c1 iter_args(%acc = %zero) -> (f32) {
    %x = memref.load %m[%i] : memref<8xf32>
    %next = arith.addf %acc, %x : f32
    scf.yield %next : f32
  }
  scf.if %flag {
    scf.for %i = %c0 to %c8 step %c1 {
      memref.store %zero, %m[%i] : memref<8xf32>
    }
  }
  scf.for %i = %c0 to %c8 step %c1 {
    memref.store %sum, %m[%i] : memref<8xf32>
  }
  return %sum : f32
}
func.func private @g(memref<8xf32>)
