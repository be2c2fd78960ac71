// An mpi op MLIR 22 does not lower: an error, not unreconciled casts.
func.func @size() -> i32 {
  %comm = mpi.comm_world : !mpi.comm
  // expected-error @below {{has no LLVM lowering in MLIR 22}}
  %size = mpi.comm_size(%comm) : i32
  return %size : i32
}
