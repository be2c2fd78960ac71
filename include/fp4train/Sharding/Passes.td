//===- Passes.td - Passes of sharded steps -----------------*- tablegen -*-===//

#ifndef FP4TRAIN_SHARDING_PASSES_TD
#define FP4TRAIN_SHARDING_PASSES_TD

include "mlir/Pass/PassBase.td"

def CheckedPartition
    : InterfacePass<"shard-partition", "mlir::FunctionOpInterface"> {
  let summary = "Partition a function into SPMD form (upstream's "
                "shard-partition, behind the checks it relies on)";
  let description = [{
    Runs MLIR's `shard-partition` on a function whose tensors are fully
    annotated, after checking what MLIR 22's pass assumes without checking
    (it dereferences or asserts on each of these, so a violation is an
    abort there; here it is an error naming the value):

    - every ranked tensor argument of rank > 0 has exactly one use, a
      `shard.shard`;
    - every ranked tensor operand of rank > 0 of an op other than the shard
      ops is the result of a `shard.shard`;
    - each pair of chained `shard.shard` ops reshards in a way the pass
      implements: the same split, both replicated, one grid axis split
      off or gathered at the end of a dimension's axes, the last axis of a
      dimension moved to another, or static halo sizes changed alone.

    fp4-opt registers this pass under upstream's name in place of upstream's
    registration, so `--shard-partition` never aborts on bad input;
    `sharding-propagation` produces input that passes the checks.

    Example:

    ```mlir
    // Before (a 2-way split of K)
    %a0 = shard.shard %a to %s annotate_for_users : tensor<16x64xf32>
    // After
    func.func @f(%a: tensor<16x32xf32>, ...)
    ```
  }];
  let dependentDialects = ["shard::ShardDialect", "tensor::TensorDialect"];
}

def FP4TrainShardStep : Pass<"fp4train-shard-step", "ModuleOp"> {
  let summary = "Annotate training steps for data- and tensor-parallel execution";
  let description = [{
    Splits every training step (a function with `{fp4train.param}`
    arguments) over a grid of processes and adds the grid, one axis per
    kind of parallelism asked for, in the order data, tensor, expert, and
    named after them: `@dp` of shape `dp` (data parallel), `@tp` of shape
    `tp` (tensor parallel), `@ep` of shape `ep` (expert parallel), `@dp_tp`
    of shape `dp x tp` (axis 0 data, axis 1 tensor), `@dp_ep`, ...

    Data parallel (`dp` > 1): each tensor argument that is not a parameter
    (the batch: inputs, targets, token ids) is split along its first
    dimension. Propagation then splits the activations, and the weight
    gradients (Wgrad contracts the split tokens, [SH5]) and the loss come
    out all-reduced.

    Tensor parallel (`tp` > 1): the parameters `tp-split` names, as
    `ARG:DIM` (argument number and dimension), are split along that
    dimension. Megatron's layout splits a column-parallel layer's weight
    along its output features (and its bias with it) and the next,
    row-parallel, layer's weight along its input features: the activations
    between stay split, and the row-parallel product is all-reduced.

    Expert parallel (`ep` > 1, [SH11]): every expert weight (the parameter
    of an expert contraction: rank 3, batched over its first dimension, the
    experts) is split along that dimension, so that each process holds and
    multiplies its experts' weights; the tokens routed to them are sliced
    from the dispatched batch and the experts' outputs gathered for the
    combine. A step without expert weights is an error.

    Parameters `tp-split` does not name stay unannotated, which
    `fp4train-partition` replicates. Errors: `dp`, `tp` or `ep` below 1, a
    dimension the processes do not divide, a `tp-split` entry that is not
    `ARG:DIM` of a parameter tensor, `tp-split` without `tp` > 1 or `tp` > 1
    without `tp-split`, and a module that already has the grid's name.
    `dp=1 tp=1` changes nothing.

    Example:

    ```mlir
    // Before
    func.func @train_step(%x: tensor<64x32xf32>, %w: tensor<16x32xf32> {fp4train.param}, ...)
    // After (dp=2)
    shard.grid @dp(shape = 2)
    func.func @train_step(%x: tensor<64x32xf32>, %w: tensor<16x32xf32> {fp4train.param}, ...) {
      %s = shard.sharding @dp split_axes = [[0]] : !shard.sharding
      %x0 = shard.shard %x to %s annotate_for_users : tensor<64x32xf32>
      ...
    ```
  }];
  let options = [
    Option<"dp", "dp", "int64_t", "1",
           "processes the batch is split across">,
    Option<"tp", "tp", "int64_t", "1",
           "processes the tp-split parameters are split across">,
    ListOption<"tpSplit", "tp-split", "std::string",
               "parameters split across the tp processes, as ARG:DIM">,
    Option<"ep", "ep", "int64_t", "1",
           "processes the expert weights are split across (by expert)">
  ];
  let dependentDialects = ["shard::ShardDialect"];
}

def FP4TrainPartition : Pass<"fp4train-partition", "ModuleOp"> {
  let summary = "Partition every function that holds shard annotations";
  let description = [{
    Runs `sharding-propagation` and then `shard-partition` (the checked one
    above) on each `func.func` that holds a `shard.shard`, and leaves the
    other functions alone. First, a tensor argument without an annotation
    of its own (one use, a `shard.shard`) gets a replicated one that all its
    uses read: what the step does not split is whole on every process (the
    parameters of a data-parallel step, for one). Only annotated functions
    are visited: upstream's propagation needs a sharding model on every op
    of a function, which drivers, initializers and helpers around a step do
    not have. A module without annotations is left
    unchanged. The fp4train ops and the reshapes partition by the rules of
    docs/sharding.md ([SH1]-[SH5]).

    After partitioning, a gather whose only use is a quantize becomes the
    quantize of each process's shard and gathers of its codes and block
    scales ([SH4]), bit for bit the same block-scaled tensor in about a
    quarter of the bytes.

    `report=FILE` (`-` for stdout) writes a JSON array with one object per
    collective the partitioned functions perform, in program order:
    `{"function", "loc", "collective", "grid", "grid_axes", "processes",
    "shape", "element", "bytes"}`, where `shape` and `bytes` are those of
    the buffer each process hands the collective (its shard); the gathers
    of [SH4] add `replaces_bytes`, what the unquantized gather moved.

    Example:

    ```mlir
    // Before: @step holds shard.shard annotations on a 2-process grid,
    // @main calls it.
    func.func @step(%x: tensor<16x64xf32>, ...)
    // After: @step is one process's program; @main is unchanged.
    func.func @step(%x: tensor<8x64xf32>, ...)
    ```
  }];
  let options = [
    Option<"report", "report", "std::string", "\"\"",
           "write the collectives report to this file ('-' for stdout)">
  ];
  let dependentDialects = [
    "arith::ArithDialect", "linalg::LinalgDialect", "shard::ShardDialect",
    "tensor::TensorDialect"
  ];
}

def FP4TrainShardToMPI : Pass<"fp4train-shard-to-mpi", "ModuleOp"> {
  let summary = "Lower a partitioned module's shard ops to MPI";
  let description = [{
    Lowers `shard.all_slice` to each process's slice (upstream's patterns,
    no communication), `shard.all_gather` to a bitwise-or all-reduce of each
    process's shard placed in zeros (bit-exact, [SH7]) and a rank-0
    `shard.all_reduce` to one of a one-element vector, runs upstream's
    `convert-shard-to-mpi`, and removes the `shard.grid` ops nothing refers
    to any more, which have no LLVM translation. A module that uses MPI and
    does not say which implementation's ABI to call gets
    `dlti.map = #dlti.map<"MPI:Implementation" = "MPICH">`, the MPI this
    project runs on. A shard op nothing here lowers (`shard.reduce_scatter`,
    `shard.all_to_all`, ...), an all-reduce by a kind MPI has no operation
    for, or a gather of elements MPI has no integer type for is an error
    naming the op instead of upstream's "failed to legalize" (or its
    `llvm_unreachable`).

    Example:

    ```mlir
    // Before
    %s = shard.all_reduce %p on @grid grid_axes = [0] : tensor<16x8xf32> -> tensor<16x8xf32>
    // After
    mpi.allreduce(%buf, %buf, MPI_SUM, %comm) : memref<128xf32>, memref<128xf32>
    ```
  }];
  let dependentDialects = [
    "bufferization::BufferizationDialect", "DLTIDialect",
    "memref::MemRefDialect", "mpi::MPIDialect"
  ];
}

def FP4TrainMPIToLLVM : Pass<"fp4train-mpi-to-llvm", "ModuleOp"> {
  let summary = "Lower the mpi ops of a module to calls of MPI's C API";
  let description = [{
    MLIR 22's MPI lowering (the `mpi` dialect's ConvertToLLVM interface,
    MPICH's ABI unless the module's `dlti.map` names another) for the host
    lowering of every pipeline: a module without mpi ops is left unchanged,
    where `convert-to-llvm{dialect-filter=mpi}` would fail on a context that
    never loaded the dialect. It runs before `finalize-memref-to-llvm`; the
    casts between the memrefs and the descriptors the calls take are
    reconciled at the end of the lowering.

    Example:

    ```mlir
    // Before
    %rank = mpi.comm_rank(%comm) : i32
    // After
    %r = llvm.call @MPI_Comm_rank(%c, %p) : (i32, !llvm.ptr) -> i32
    ```
  }];
  let dependentDialects = ["DLTIDialect", "LLVM::LLVMDialect"];
}

#endif // FP4TRAIN_SHARDING_PASSES_TD
