// The GPU pipelines partition a sharded step as the CPU pipeline does and
// compile it for every chip: per-process kernels of the shards' shapes, the
// collectives on the host as MPI calls (docs/sharding.md). Nothing here runs
// on a GPU. gfx950 takes the MX steps below (it runs no NVFP4); the NVIDIA
// chips also the NVFP4 step of mpi-run.mlir, with its all-reduced amax.
// RUN: fp4-opt %s --fp4train-rocm-pipeline="recipe=none chip=gfx950 format=isa" | FileCheck %s
// RUN: fp4-opt %S/mpi-run.mlir --fp4train-cuda-pipeline="recipe=none chip=sm_120a format=isa" | FileCheck %s
// RUN: fp4-opt %S/mpi-run.mlir --fp4train-cuda-pipeline="recipe=none chip=sm_100a format=isa" | FileCheck %s
// RUN: fp4-opt %S/mpi-run.mlir --fp4train-cuda-pipeline="recipe=none chip=sm_90a format=isa" | FileCheck %s
// RUN: fp4-opt %S/mpi-run.mlir --fp4train-cuda-pipeline="recipe=none chip=sm_103a format=isa" | FileCheck %s
// RUN: fp4-opt %S/mpi-run.mlir --fp4train-cuda-pipeline="recipe=none chip=sm_89 format=isa" | FileCheck %s

// CHECK-NOT: shard.
// CHECK-DAG: llvm.func @MPI_Allreduce(
// CHECK-DAG: llvm.func @MPI_Comm_rank(
// CHECK-DAG: gpu.binary @
// CHECK-DAG: llvm.func @k_split(
// CHECK-DAG: llvm.func @m_split(

!a = !fp4train.scaled<64x64xf4E2M1FN, block = [1, 32], scale = f8E8M0FNU>
!b = !fp4train.scaled<32x64xf4E2M1FN, block = [1, 32], scale = f8E8M0FNU>
shard.grid @grid(shape = 2)

func.func @k_split(%a: tensor<64x64xf32>, %b: tensor<32x64xf32>,
                   %acc: tensor<64x32xf32>, %seed: i64) -> tensor<64x32xf32> {
  %s = shard.sharding @grid split_axes = [[], [0]] : !shard.sharding
  %a0 = shard.shard %a to %s annotate_for_users : tensor<64x64xf32>
  %b0 = shard.shard %b to %s annotate_for_users : tensor<32x64xf32>
  %qa = fp4train.quantize %a0 rounding = stochastic seed(%seed) : tensor<64x64xf32> -> !a
  %qb = fp4train.quantize %b0 : tensor<32x64xf32> -> !b
  %c = fp4train.scaled_matmul %qa, %qb, %acc : !a, !b, tensor<64x32xf32>
  return %c : tensor<64x32xf32>
}

func.func @m_split(%a: tensor<64x64xf32>, %b: tensor<32x64xf32>,
                   %acc: tensor<64x32xf32>) -> tensor<64x32xf32> {
  %s = shard.sharding @grid split_axes = [[0]] : !shard.sharding
  %r = shard.sharding @grid split_axes = [[]] : !shard.sharding
  %a0 = shard.shard %a to %s annotate_for_users : tensor<64x64xf32>
  %b0 = shard.shard %b to %r annotate_for_users : tensor<32x64xf32>
  %acc0 = shard.shard %acc to %s annotate_for_users : tensor<64x32xf32>
  %qa = fp4train.quantize %a0 : tensor<64x64xf32> -> !a
  %qb = fp4train.quantize %b0 : tensor<32x64xf32> -> !b
  %c = fp4train.scaled_matmul %qa, %qb, %acc0 : !a, !b, tensor<64x32xf32>
  %c0 = shard.shard %c to %s : tensor<64x32xf32>
  return %c0 : tensor<64x32xf32>
}
