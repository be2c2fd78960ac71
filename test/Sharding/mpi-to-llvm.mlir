// fp4train-mpi-to-llvm: MPICH's ABI unless the module names another MPI,
// one cached communicator per MPI_Comm_split call site [SH6], and an error
// for the mpi ops MLIR 22 cannot lower.
// RUN: fp4-opt %s --split-input-file --verify-diagnostics --fp4train-mpi-to-llvm | FileCheck %s

// CHECK: module attributes {dlti.map = #dlti.map<"MPI:Implementation" = "MPICH">}
// CHECK-LABEL: func.func @two_reductions(
// CHECK: %[[C0:.*]] = llvm.mlir.addressof @__fp4train_comm_0 :
// CHECK: %[[R0:.*]] = llvm.mlir.addressof @__fp4train_comm_0_ready :
// CHECK: llvm.call @__fp4train_comm_split_cached({{.*}}, %[[C0]], %[[R0]])
// CHECK: llvm.call @MPI_Allreduce
// CHECK: llvm.mlir.addressof @__fp4train_comm_1 :
// CHECK: llvm.call @__fp4train_comm_split_cached(
// CHECK: llvm.call @MPI_Allreduce
// CHECK-DAG: llvm.mlir.global internal @__fp4train_comm_0(#llvm.zero) {{.*}} : i32
// CHECK-DAG: llvm.mlir.global internal @__fp4train_comm_0_ready(0 : i8) {{.*}} : i8
// CHECK-DAG: llvm.mlir.global internal @__fp4train_comm_1(#llvm.zero) {{.*}} : i32
// The cache: a split only while the call site has no communicator, kept only
// when MPI_Comm_split succeeded.
// CHECK-LABEL: llvm.func internal @__fp4train_comm_split_cached(
// CHECK-SAME: %[[WORLD:[^:]*]]: i32, %[[COLOR:[^:]*]]: i32, %[[KEY:[^:]*]]: i32, %[[OUT:[^:]*]]: !llvm.ptr, %[[CACHE:[^:]*]]: !llvm.ptr, %[[READY:[^:]*]]: !llvm.ptr) -> i32
// CHECK: %[[FLAG:.*]] = llvm.load %[[READY]] : !llvm.ptr -> i8
// CHECK: %[[MADE:.*]] = llvm.icmp "ne" %[[FLAG]]
// CHECK: llvm.cond_br %[[MADE]], ^[[HIT:.*]], ^[[MISS:.*]]
// CHECK: ^[[HIT]]:
// CHECK: %[[OLD:.*]] = llvm.load %[[CACHE]] : !llvm.ptr -> i32
// CHECK: llvm.store %[[OLD]], %[[OUT]]
// CHECK: ^[[MISS]]:
// CHECK: %[[CODE:.*]] = llvm.call @MPI_Comm_split(%[[WORLD]], %[[COLOR]], %[[KEY]], %[[OUT]])
// CHECK: llvm.cond_br {{.*}}, ^[[KEEP:.*]], ^[[DONE:.*]]
// CHECK: ^[[KEEP]]:
// CHECK: llvm.store {{.*}}, %[[CACHE]]
// CHECK: llvm.store {{.*}}, %[[READY]]
// CHECK: ^[[DONE]]:
// CHECK: llvm.return %[[CODE]] : i32
func.func @two_reductions(%color: i32, %key: i32, %m: memref<4xf32>) {
  %world = mpi.comm_world : !mpi.comm
  %first = mpi.comm_split(%world, %color, %key) : !mpi.comm
  mpi.allreduce(%m, %m, MPI_SUM, %first) : memref<4xf32>, memref<4xf32>
  %second = mpi.comm_split(%world, %color, %key) : !mpi.comm
  mpi.allreduce(%m, %m, MPI_MAX, %second) : memref<4xf32>, memref<4xf32>
  return
}

// -----

// A module that names its MPI keeps it.
// CHECK: module attributes {dlti.map = #dlti.map<"MPI:Implementation" = "OpenMPI">}
// CHECK: llvm.mlir.addressof @ompi_mpi_comm_world
module attributes {dlti.map = #dlti.map<"MPI:Implementation" = "OpenMPI">} {
  func.func @rank() -> i32 {
    %world = mpi.comm_world : !mpi.comm
    %rank = mpi.comm_rank(%world) : i32
    return %rank : i32
  }
}

// -----

// An mpi op MLIR 22 does not lower: an error, not unreconciled casts.
func.func @size() -> i32 {
  %comm = mpi.comm_world : !mpi.comm
  // expected-error @below {{has no LLVM lowering in MLIR 22}}
  %size = mpi.comm_size(%comm) : i32
  return %size : i32
}
