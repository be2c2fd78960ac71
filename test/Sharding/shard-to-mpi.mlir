// fp4train-shard-to-mpi: shard.all_gather as a bitwise-or all-reduce of
// each process's shard placed in zeros [SH7], and the collectives MLIR 22
// cannot lower.
// RUN: fp4-opt %s --split-input-file --verify-diagnostics --fp4train-shard-to-mpi | FileCheck %s

shard.grid @g(shape = 2x2)

// CHECK-LABEL: func.func @gather(
// CHECK-SAME: %[[X:.*]]: tensor<4x8xf32>) -> tensor<4x16xf32>
// CHECK-DAG: %[[ZEROS:.*]] = arith.constant dense<0> : tensor<4x16xi32>
// CHECK-DAG: %[[BITS:.*]] = arith.bitcast %[[X]] : tensor<4x8xf32> to tensor<4x8xi32>
// CHECK: %[[PLACED:.*]] = tensor.insert_slice %[[BITS]] into %[[ZEROS]][0, %{{.*}}] [4, 8] [1, 1] : tensor<4x8xi32> into tensor<4x16xi32>
// CHECK: mpi.allreduce({{.*}}, MPI_BOR, %{{.*}}) : memref<64xi32>, memref<64xi32>
// CHECK: arith.bitcast %{{.*}} : tensor<4x16xi32> to tensor<4x16xf32>
func.func @gather(%x: tensor<4x8xf32>) -> tensor<4x16xf32> {
  %g = shard.all_gather %x on @g grid_axes = [1] gather_axis = 1 : tensor<4x8xf32> -> tensor<4x16xf32>
  return %g : tensor<4x16xf32>
}

// -----

shard.grid @g(shape = 2)

// [SH9] Booleans travel as bytes: MPI has no 1-bit type.
// CHECK-LABEL: func.func @gather_bits(
// CHECK: %[[BYTES:.*]] = arith.extui %{{.*}} : tensor<4xi1> to tensor<4xi8>
// CHECK: tensor.insert_slice %[[BYTES]] into %{{.*}} : tensor<4xi8> into tensor<8xi8>
// CHECK: mpi.allreduce({{.*}}, MPI_BOR, %{{.*}}) : memref<8xi8>, memref<8xi8>
// CHECK: arith.trunci %{{.*}} : tensor<8xi8> to tensor<8xi1>
func.func @gather_bits(%x: tensor<4xi1>) -> tensor<8xi1> {
  %g = shard.all_gather %x on @g grid_axes = [0] gather_axis = 0 : tensor<4xi1> -> tensor<8xi1>
  return %g : tensor<8xi1>
}

// -----

shard.grid @g(shape = 2)

// CHECK-LABEL: func.func @any_bits(
// CHECK: arith.extui %{{.*}} : tensor<4xi1> to tensor<4xi8>
// CHECK: mpi.allreduce({{.*}}, MPI_BOR, %{{.*}}) : memref<4xi8>, memref<4xi8>
// CHECK: arith.trunci %{{.*}} : tensor<4xi8> to tensor<4xi1>
func.func @any_bits(%x: tensor<4xi1>) -> tensor<4xi1> {
  %r = shard.all_reduce %x on @g grid_axes = [0] reduction = bitwise_or : tensor<4xi1> -> tensor<4xi1>
  return %r : tensor<4xi1>
}

// -----

shard.grid @g(shape = 2)

func.func @gather_nibbles(%x: tensor<4xi4>) -> tensor<8xi4> {
  // expected-error @below {{gathers elements of type 'i4', which have no MPI integer type of their width}}
  %g = shard.all_gather %x on @g grid_axes = [0] gather_axis = 0 : tensor<4xi4> -> tensor<8xi4>
  return %g : tensor<8xi4>
}

// -----

shard.grid @g(shape = 2)

func.func @generic_reduction(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @below {{reduces by 'generic', which MLIR 22's MPI lowering has no MPI operation for}}
  %r = shard.all_reduce %x on @g grid_axes = [0] reduction = generic : tensor<4xf32> -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

shard.grid @g(shape = 2)

func.func @scatter(%x: tensor<8xf32>) -> tensor<4xf32> {
  // expected-error @below {{has no MPI lowering in MLIR 22}}
  %r = shard.reduce_scatter %x on @g grid_axes = [0] scatter_axis = 0 : tensor<8xf32> -> tensor<4xf32>
  return %r : tensor<4xf32>
}
