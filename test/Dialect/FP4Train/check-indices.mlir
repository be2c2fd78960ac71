// RUN: fp4-opt %s --split-input-file --fp4train-check-indices | FileCheck %s --enable-var-scope
// RUN: fp4-opt %s --split-input-file --fp4train-check-indices --fp4train-cpu-pipeline=recipe=none > /dev/null

// [IDX1] An embedding lookup: the row comes from data, the column from the
// loop. Both indices are checked (unsigned: a negative id is a huge one);
// out of bounds, the read is skipped and the host callback gets the site,
// the first failing dimension, the index and the size.

// CHECK: module attributes {fp4train.index_checks = ["tensor.extract at {{.*}}check-indices.mlir:[[LINE:[0-9]+]]:{{[0-9]+}}"]}
// CHECK-LABEL: func.func @embedding
// CHECK: linalg.generic
// CHECK: ^bb0(%[[ID:.*]]: i32, %{{.*}}: f32):
// CHECK-DAG:   %[[ROW:.*]] = arith.index_cast %[[ID]] : i32 to index
// CHECK-DAG:   %[[COL:.*]] = linalg.index 1 : index
// CHECK-DAG:   %[[C256:.*]] = arith.constant 256 : index
// CHECK-DAG:   %[[C8:.*]] = arith.constant 8 : index
// CHECK:       %[[OK0:.*]] = arith.cmpi ult, %[[ROW]], %[[C256]] : index
// CHECK:       %[[OK1:.*]] = arith.cmpi ult, %[[COL]], %[[C8]] : index
// CHECK:       %[[OK:.*]] = arith.andi %[[OK0]], %[[OK1]] : i1
// CHECK:       %[[V:.*]] = scf.if %[[OK]] -> (f32) {
// CHECK:         %[[E:.*]] = tensor.extract %{{.*}}[%[[ROW]], %[[COL]]] : tensor<256x8xf32>
// CHECK:         scf.yield %[[E]] : f32
// CHECK:       } else {
// CHECK:         func.call @fp4train_rt_index_error(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) : (i64, i64, i64, i64) -> ()
// CHECK:         %[[Z:.*]] = arith.constant 0.000000e+00 : f32
// CHECK:         scf.yield %[[Z]] : f32
// CHECK:       }
// CHECK:       linalg.yield %[[V]] : f32
// CHECK: func.func private @fp4train_rt_index_error(i64, i64, i64, i64)
func.func @embedding(%table: tensor<256x8xf32>, %ids: tensor<4xi32>) -> tensor<4x8xf32> {
  %e = tensor.empty() : tensor<4x8xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i)>, affine_map<(i, j) -> (i, j)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%ids : tensor<4xi32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%id: i32, %out: f32):
    %row = arith.index_cast %id : i32 to index
    %col = linalg.index 1 : index
    %v = tensor.extract %table[%row, %col] : tensor<256x8xf32>
    linalg.yield %v : f32
  } -> tensor<4x8xf32>
  return %r : tensor<4x8xf32>
}

// -----

// Constant indices within static bounds need no check; a dynamic dimension
// is measured with tensor.dim; an insert out of bounds leaves the tensor as
// it was; memref accesses are checked too.

// CHECK-LABEL: func.func @mixed
// CHECK-SAME: (%[[T:.*]]: tensor<4xf32>, %[[D:.*]]: tensor<?xf32>, %[[M:.*]]: memref<4xi8>, %[[I:.*]]: index
// CHECK:       %[[C:.*]] = tensor.extract %[[T]][%{{.*}}] : tensor<4xf32>
// CHECK-NOT:   scf.if
// CHECK:       %[[DIM:.*]] = tensor.dim %[[D]], %{{.*}} : tensor<?xf32>
// CHECK:       arith.cmpi ult, %[[I]], %[[DIM]] : index
// CHECK:       %[[INS:.*]] = scf.if %{{.*}} -> (tensor<?xf32>) {
// CHECK:         tensor.insert
// CHECK:       } else {
// CHECK:         func.call @fp4train_rt_index_error
// CHECK:         scf.yield %[[D]] : tensor<?xf32>
// CHECK:       scf.if %{{.*}} -> (i8) {
// CHECK:         memref.load %[[M]][%[[I]]]
// CHECK:       scf.if %{{.*}} {
// CHECK:         memref.store %{{.*}}, %[[M]][%[[I]]]
// CHECK:       } else {
// CHECK:         func.call @fp4train_rt_index_error
// CHECK:       }
func.func @mixed(%t: tensor<4xf32>, %d: tensor<?xf32>, %m: memref<4xi8>, %i: index) -> (f32, tensor<?xf32>, i8) {
  %c3 = arith.constant 3 : index
  %c = tensor.extract %t[%c3] : tensor<4xf32>
  %ins = tensor.insert %c into %d[%i] : tensor<?xf32>
  %l = memref.load %m[%i] : memref<4xi8>
  memref.store %l, %m[%i] : memref<4xi8>
  return %c, %ins, %l : f32, tensor<?xf32>, i8
}

// -----

// Accesses inside a gpu.launch stay as they are (device code cannot call
// the host), and a function without data-dependent accesses gets no
// declaration and no site table.

// CHECK-NOT: fp4train.index_checks
// CHECK-LABEL: func.func @device
// CHECK-NOT: scf.if
// CHECK-NOT: fp4train_rt_index_error
func.func @device(%m: memref<4xf32>, %i: index) {
  %c1 = arith.constant 1 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    %v = memref.load %m[%i] : memref<4xf32>
    gpu.terminator
  }
  return
}

// -----

// A cf.assert (torch-mlir guards embedding lookups with them) reports its
// failure through the callee with dimension -2 instead of aborting; its
// site names the message and location.

// CHECK: fp4train.index_checks = ["cf.assert \22index must be smaller than dim size\22 at {{.*}}check-indices.mlir:[[#@LINE+12]]:3"]
// CHECK-LABEL: func.func @asserted
// CHECK-NOT:     cf.assert
// CHECK:         %[[TRUE:.*]] = arith.constant true
// CHECK:         %[[FAILED:.*]] = arith.xori %{{.*}}, %[[TRUE]] : i1
// CHECK:         scf.if %[[FAILED]] {
// CHECK:           %[[SITE:.*]] = arith.constant 0 : i64
// CHECK:           %[[ASSERT:.*]] = arith.constant -2 : i64
// CHECK:           func.call @fp4train_rt_index_error(%[[SITE]], %[[ASSERT]], %{{.*}}, %{{.*}})
// CHECK:         }
func.func @asserted(%i: index, %n: index) {
  %ok = arith.cmpi ult, %i, %n : index
  cf.assert %ok, "index must be smaller than dim size"
  return
}
