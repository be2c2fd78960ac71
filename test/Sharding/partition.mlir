// Quantized steps through upstream's sharding-propagation and shard-partition
// with the fp4train models (docs/sharding.md): [SH1]-[SH3] and [SH5].
// RUN: fp4-opt %s --split-input-file \
// RUN:   --pass-pipeline="builtin.module(func.func(sharding-propagation,shard-partition))" \
// RUN:   | FileCheck %s

!mx = !fp4train.scaled<16x64xf4E2M1FN, block = [1, 32], scale = f8E8M0FNU>
!mxb = !fp4train.scaled<8x64xf4E2M1FN, block = [1, 32], scale = f8E8M0FNU>
shard.grid @grid(shape = 2)

// A split along K: each rank quantizes its half of K at its place in the
// whole tensor [SH3], multiplies into zeros, the partial products are summed
// by an all-reduce and the accumulator is added [SH5].
// CHECK-LABEL: func.func @k_split(
// CHECK-SAME: %[[A:.*]]: tensor<16x32xf32>, %[[B:.*]]: tensor<8x32xf32>, %[[ACC:.*]]: tensor<16x8xf32>, %[[SEED:.*]]: i64
// CHECK-DAG: %[[ZERO:.*]] = arith.constant 0 : index
// CHECK-DAG: %[[RANK:.*]] = shard.process_multi_index on @grid axes = [0] : index
// CHECK-DAG: %[[C32:.*]] = arith.constant 32 : index
// CHECK: %[[K0:.*]] = arith.muli %[[RANK]], %[[C32]] : index
// CHECK: %[[QA:.*]] = fp4train.quantize %[[A]] rounding = stochastic seed(%[[SEED]]) at(%[[ZERO]], %[[K0]]) of [16, 64] : tensor<16x32xf32> -> !fp4train.scaled<16x32xf4E2M1FN
// CHECK: %[[QB:.*]] = fp4train.quantize %[[B]] : tensor<8x32xf32> -> !fp4train.scaled<8x32xf4E2M1FN
// CHECK: %[[ZEROS:.*]] = linalg.fill
// CHECK: %[[P:.*]] = fp4train.scaled_matmul %[[QA]], %[[QB]], %[[ZEROS]]
// CHECK: %[[SUM:.*]] = shard.all_reduce %[[P]] on @grid grid_axes = [0] : tensor<16x8xf32> -> tensor<16x8xf32>
// CHECK: linalg.add ins(%[[ACC]], %[[SUM]] : tensor<16x8xf32>, tensor<16x8xf32>)
func.func @k_split(%a: tensor<16x64xf32>, %b: tensor<8x64xf32>,
                   %acc: tensor<16x8xf32>, %seed: i64) -> tensor<16x8xf32> {
  %s = shard.sharding @grid split_axes = [[], [0]] : !shard.sharding
  %a0 = shard.shard %a to %s annotate_for_users : tensor<16x64xf32>
  %b0 = shard.shard %b to %s annotate_for_users : tensor<8x64xf32>
  %qa = fp4train.quantize %a0 rounding = stochastic seed(%seed) : tensor<16x64xf32> -> !mx
  %qb = fp4train.quantize %b0 : tensor<8x64xf32> -> !mxb
  %c = fp4train.scaled_matmul %qa, %qb, %acc : !mx, !mxb, tensor<16x8xf32>
  return %c : tensor<16x8xf32>
}

// -----

!nv = !fp4train.scaled<32x64xf4E2M1FN, block = [1, 16], scale = f8E4M3FN, global>
!nvb = !fp4train.scaled<8x64xf4E2M1FN, block = [1, 16], scale = f8E4M3FN, global>
shard.grid @grid(shape = 2)

// A split along M stays local; NVFP4's computed amax becomes the whole
// tensor's: local amax, all-reduce (max) [SH2]. The replicated operand
// keeps its own.
// CHECK-LABEL: func.func @m_split(
// CHECK-SAME: %[[A:.*]]: tensor<16x64xf32>, %[[B:.*]]: tensor<8x64xf32>, %[[ACC:.*]]: tensor<16x8xf32>
// CHECK: %[[LOCAL:.*]] = linalg.generic
// CHECK: arith.bitcast %{{.*}} : f32 to i32
// CHECK: arith.andi %{{.*}}, %{{.*}} : i32
// CHECK: arith.maxui
// CHECK: %[[VEC:.*]] = tensor.expand_shape %[[LOCAL]] [] output_shape [1] : tensor<i32> into tensor<1xi32>
// CHECK: %[[MAX:.*]] = shard.all_reduce %[[VEC]] on @grid grid_axes = [0] reduction = max : tensor<1xi32> -> tensor<1xi32>
// CHECK: %[[BITS:.*]] = tensor.extract %[[MAX]]
// CHECK: %[[AMAX:.*]] = arith.bitcast %[[BITS]] : i32 to f32
// CHECK: %[[QA:.*]] = fp4train.quantize %[[A]] amax(%[[AMAX]]) : tensor<16x64xf32> -> !fp4train.scaled<16x64xf4E2M1FN
// CHECK: %[[QB:.*]] = fp4train.quantize %[[B]] : tensor<8x64xf32>
// CHECK: %[[C:.*]] = fp4train.scaled_matmul %[[QA]], %[[QB]], %[[ACC]] : !fp4train.scaled<16x64xf4E2M1FN, {{.*}}>, !fp4train.scaled<8x64xf4E2M1FN, {{.*}}>, tensor<16x8xf32>
// CHECK: return %[[C]] : tensor<16x8xf32>
func.func @m_split(%a: tensor<32x64xf32>, %b: tensor<8x64xf32>,
                   %acc: tensor<32x8xf32>) -> tensor<32x8xf32> {
  %s = shard.sharding @grid split_axes = [[0]] : !shard.sharding
  %r = shard.sharding @grid split_axes = [[]] : !shard.sharding
  %a0 = shard.shard %a to %s annotate_for_users : tensor<32x64xf32>
  %b0 = shard.shard %b to %r annotate_for_users : tensor<8x64xf32>
  %qa = fp4train.quantize %a0 : tensor<32x64xf32> -> !nv
  %qb = fp4train.quantize %b0 : tensor<8x64xf32> -> !nvb
  %c = fp4train.scaled_matmul %qa, %qb, %acc : !nv, !nvb, tensor<32x8xf32>
  return %c : tensor<32x8xf32>
}
