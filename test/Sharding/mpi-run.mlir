// Sharded quantized steps run on MPI (MPICH) as two processes and compute
// the bits of the unsharded step (docs/sharding.md): the partitioned step
// (fp4train-cpu-pipeline partitions @k_split and @m_split, which hold shard
// annotations) and the driver (Inputs/mpi-driver.mlir: the data, each
// process's slice of it, the unsharded references and the comparison) are
// lowered to LLVM IR and run by lli under mpiexec.
// REQUIRES: mpi
// RUN: fp4-opt %s --fp4train-cpu-pipeline=recipe=none \
// RUN:   | mlir-translate --mlir-to-llvmir -o %t.step.ll
// RUN: fp4-opt %S/Inputs/mpi-driver.mlir --fp4train-cpu-pipeline=recipe=none \
// RUN:   | mlir-translate --mlir-to-llvmir -o %t.driver.ll
// RUN: rm -f %t.out.*
// RUN: %mpiexec -n 2 -outfile-pattern %t.out.%%r lli --dlopen=%mpich_lib \
// RUN:   --dlopen=%mlir_c_runner_utils --extra-module=%t.step.ll %t.driver.ll
// RUN: cat %t.out.0 %t.out.1 | FileCheck %s
// Four processes for a grid of two: the driver refuses.
// RUN: not %mpiexec -n 4 -outfile-pattern %t.out4.%%r lli --dlopen=%mpich_lib \
// RUN:   --dlopen=%mlir_c_runner_utils --extra-module=%t.step.ll %t.driver.ll
// RUN: cat %t.out4.0 | FileCheck %s --check-prefix=WRONG

// Each process prints how many of its results differ from the unsharded
// step's and exits with 1 if any do.
// CHECK: process 0: k_split 0 of 128 differ, m_split 0 of 128 differ, gathered 0 of 128 differ
// CHECK: process 1: k_split 0 of 128 differ, m_split 0 of 128 differ, gathered 0 of 128 differ
// WRONG: mpi-driver: needs 2 processes

!a = !fp4train.scaled<16x64xf4E2M1FN, block = [1, 32], scale = f8E8M0FNU>
!b = !fp4train.scaled<8x64xf4E2M1FN, block = [1, 32], scale = f8E8M0FNU>
!na = !fp4train.scaled<32x64xf4E2M1FN, block = [1, 16], scale = f8E4M3FN, global>
!nb = !fp4train.scaled<8x64xf4E2M1FN, block = [1, 16], scale = f8E4M3FN, global>
shard.grid @grid(shape = 2)

// K split in two: one 32-element block per process [SH3], partial products
// summed by MPI_Allreduce, then the accumulator [SH5]. With two processes
// and MX scales (g = 1) the sum is the unsharded one: T = t0 + t1, then
// acc + T.
func.func @k_split(%a: tensor<16x64xf32>, %b: tensor<8x64xf32>,
                   %acc: tensor<16x8xf32>, %seed: i64) -> tensor<16x8xf32> {
  %s = shard.sharding @grid split_axes = [[], [0]] : !shard.sharding
  %a0 = shard.shard %a to %s annotate_for_users : tensor<16x64xf32>
  %b0 = shard.shard %b to %s annotate_for_users : tensor<8x64xf32>
  %qa = fp4train.quantize %a0 rounding = stochastic seed(%seed) : tensor<16x64xf32> -> !a
  %qb = fp4train.quantize %b0 rounding = stochastic seed(%seed) : tensor<8x64xf32> -> !b
  %c = fp4train.scaled_matmul %qa, %qb, %acc : !a, !b, tensor<16x8xf32>
  return %c : tensor<16x8xf32>
}

func.func @k_reference(%a: tensor<16x64xf32>, %b: tensor<8x64xf32>,
                       %acc: tensor<16x8xf32>, %seed: i64) -> tensor<16x8xf32> {
  %qa = fp4train.quantize %a rounding = stochastic seed(%seed) : tensor<16x64xf32> -> !a
  %qb = fp4train.quantize %b rounding = stochastic seed(%seed) : tensor<8x64xf32> -> !b
  %c = fp4train.scaled_matmul %qa, %qb, %acc : !a, !b, tensor<16x8xf32>
  return %c : tensor<16x8xf32>
}

// M split in two: NVFP4 with the computed amax of the whole tensor [SH2] and
// stochastic rounding at each process's rows [SH3].
func.func @m_split(%a: tensor<32x64xf32>, %b: tensor<8x64xf32>,
                   %acc: tensor<32x8xf32>, %seed: i64) -> tensor<32x8xf32> {
  %s = shard.sharding @grid split_axes = [[0]] : !shard.sharding
  %r = shard.sharding @grid split_axes = [[]] : !shard.sharding
  %a0 = shard.shard %a to %s annotate_for_users : tensor<32x64xf32>
  %b0 = shard.shard %b to %r annotate_for_users : tensor<8x64xf32>
  %acc0 = shard.shard %acc to %s annotate_for_users : tensor<32x8xf32>
  %qa = fp4train.quantize %a0 rounding = stochastic seed(%seed) : tensor<32x64xf32> -> !na
  %qb = fp4train.quantize %b0 : tensor<8x64xf32> -> !nb
  %c = fp4train.scaled_matmul %qa, %qb, %acc0 : !na, !nb, tensor<32x8xf32>
  %c0 = shard.shard %c to %s : tensor<32x8xf32>
  return %c0 : tensor<32x8xf32>
}

func.func @m_reference(%a: tensor<32x64xf32>, %b: tensor<8x64xf32>,
                       %acc: tensor<32x8xf32>, %seed: i64) -> tensor<32x8xf32> {
  %qa = fp4train.quantize %a rounding = stochastic seed(%seed) : tensor<32x64xf32> -> !na
  %qb = fp4train.quantize %b : tensor<8x64xf32> -> !nb
  %c = fp4train.scaled_matmul %qa, %qb, %acc : !na, !nb, tensor<32x8xf32>
  return %c : tensor<32x8xf32>
}

// A row split gathered whole before an NVFP4 stochastic quantize: [SH4]
// quantizes each process's rows (the whole amax, the global positions) and
// gathers codes and scales; the product is the unsharded one's bits.
!ga = !fp4train.scaled<16x64xf4E2M1FN, block = [1, 16], scale = f8E4M3FN, global>
func.func @gathered(%a: tensor<16x64xf32>, %b: tensor<8x64xf32>,
                    %acc: tensor<16x8xf32>, %seed: i64) -> tensor<16x8xf32> {
  %s = shard.sharding @grid split_axes = [[0]] : !shard.sharding
  %r = shard.sharding @grid split_axes = [[]] : !shard.sharding
  %a0 = shard.shard %a to %s : tensor<16x64xf32>
  %a1 = shard.shard %a0 to %r annotate_for_users : tensor<16x64xf32>
  %b0 = shard.shard %b to %r annotate_for_users : tensor<8x64xf32>
  %acc0 = shard.shard %acc to %r annotate_for_users : tensor<16x8xf32>
  %qa = fp4train.quantize %a1 rounding = stochastic seed(%seed) : tensor<16x64xf32> -> !ga
  %qb = fp4train.quantize %b0 : tensor<8x64xf32> -> !nb
  %c = fp4train.scaled_matmul %qa, %qb, %acc0 : !ga, !nb, tensor<16x8xf32>
  %c0 = shard.shard %c to %r : tensor<16x8xf32>
  return %c0 : tensor<16x8xf32>
}

func.func @gathered_reference(%a: tensor<16x64xf32>, %b: tensor<8x64xf32>,
                              %acc: tensor<16x8xf32>, %seed: i64) -> tensor<16x8xf32> {
  %qa = fp4train.quantize %a rounding = stochastic seed(%seed) : tensor<16x64xf32> -> !ga
  %qb = fp4train.quantize %b : tensor<8x64xf32> -> !nb
  %c = fp4train.scaled_matmul %qa, %qb, %acc : !ga, !nb, tensor<16x8xf32>
  return %c : tensor<16x8xf32>
}
