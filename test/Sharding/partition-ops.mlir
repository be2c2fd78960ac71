// Partitioning the other fp4train ops and the reshapes of framework graphs
// (docs/sharding.md).
// RUN: fp4-opt %s --pass-pipeline="builtin.module(func.func(sharding-propagation,shard-partition))" \
// RUN:   | FileCheck %s

shard.grid @grid(shape = 2)

// A batch split of the rows goes through expand_shape to the major
// dimension of the group and back; a rotation along an unsplit dimension
// stays local.
// CHECK-LABEL: func.func @reshape(
// CHECK-SAME: %[[X:.*]]: tensor<4x64xf32>) -> tensor<4x64xf32>
// CHECK: %[[E:.*]] = tensor.expand_shape %[[X]] {{\[\[}}0, 1], [2]] output_shape [1, 4, 64] : tensor<4x64xf32> into tensor<1x4x64xf32>
// CHECK: %[[R:.*]] = fp4train.hadamard %[[E]] with #fp4train.hadamard<32, fixed> along 2 : tensor<1x4x64xf32>
// CHECK: %[[C:.*]] = tensor.collapse_shape %[[R]] {{\[\[}}0, 1], [2]] : tensor<1x4x64xf32> into tensor<4x64xf32>
// CHECK: return %[[C]]
func.func @reshape(%x: tensor<8x64xf32>) -> tensor<8x64xf32> {
  %s = shard.sharding @grid split_axes = [[0]] : !shard.sharding
  %x0 = shard.shard %x to %s annotate_for_users : tensor<8x64xf32>
  %e = tensor.expand_shape %x0 [[0, 1], [2]] output_shape [2, 4, 64] : tensor<8x64xf32> into tensor<2x4x64xf32>
  %r = fp4train.hadamard %e with #fp4train.hadamard<32, fixed> along 2 : tensor<2x4x64xf32>
  %c = tensor.collapse_shape %r [[0, 1], [2]] : tensor<2x4x64xf32> into tensor<8x64xf32>
  return %c : tensor<8x64xf32>
}

// A 2-D-blocked NVFP4 weight split by rows of tiles: the whole weight's
// amax [SH2], stochastic rounding at the shard's rows [SH3]; its transposed
// view, its dequantized values and its parts keep the split.
// CHECK-LABEL: func.func @weight(
// CHECK-SAME: %[[W:.*]]: tensor<16x64xf32>, %[[SEED:.*]]: i64) -> (tensor<64x16xf32>, tensor<16x64xf4E2M1FN>, tensor<1x4xf8E4M3FN>)
// CHECK: %[[MAX:.*]] = shard.all_reduce %{{.*}} on @grid grid_axes = [0] reduction = max
// CHECK: %[[AMAX:.*]] = arith.bitcast %{{.*}} : i32 to f32
// CHECK: %[[RANK:.*]] = shard.process_multi_index on @grid axes = [0] : index
// CHECK: %[[ROW:.*]] = arith.muli %[[RANK]], %{{.*}} : index
// CHECK: %[[Q:.*]] = fp4train.quantize %[[W]] rounding = stochastic seed(%[[SEED]]) amax(%[[AMAX]]) at(%[[ROW]], %{{.*}}) of [32, 64] : tensor<16x64xf32> -> !fp4train.scaled<16x64xf4E2M1FN, block = [16, 16], scale = f8E4M3FN, global>
// CHECK: %[[T:.*]] = fp4train.transpose %[[Q]] : {{.*}} -> !fp4train.scaled<64x16xf4E2M1FN, block = [16, 16], scale = f8E4M3FN, global>
// CHECK: %[[D:.*]] = fp4train.dequantize %[[T]] : {{.*}} -> tensor<64x16xf32>
// CHECK: %[[V:.*]], %[[S:.*]], %{{.*}} = fp4train.unpack %[[Q]]
// CHECK: return %[[D]], %[[V]], %[[S]] : tensor<64x16xf32>, tensor<16x64xf4E2M1FN>, tensor<1x4xf8E4M3FN>
func.func @weight(%w: tensor<32x64xf32>, %seed: i64) -> (tensor<64x32xf32>, tensor<32x64xf4E2M1FN>, tensor<2x4xf8E4M3FN>) {
  %s = shard.sharding @grid split_axes = [[0]] : !shard.sharding
  %w0 = shard.shard %w to %s annotate_for_users : tensor<32x64xf32>
  %q = fp4train.quantize %w0 rounding = stochastic seed(%seed) : tensor<32x64xf32> -> !fp4train.scaled<32x64xf4E2M1FN, block = [16, 16], scale = f8E4M3FN, global>
  %t = fp4train.transpose %q : !fp4train.scaled<32x64xf4E2M1FN, block = [16, 16], scale = f8E4M3FN, global> -> !fp4train.scaled<64x32xf4E2M1FN, block = [16, 16], scale = f8E4M3FN, global>
  %d = fp4train.dequantize %t : !fp4train.scaled<64x32xf4E2M1FN, block = [16, 16], scale = f8E4M3FN, global> -> tensor<64x32xf32>
  %v, %sc, %g = fp4train.unpack %q : !fp4train.scaled<32x64xf4E2M1FN, block = [16, 16], scale = f8E4M3FN, global>
  return %d, %v, %sc : tensor<64x32xf32>, tensor<32x64xf4E2M1FN>, tensor<2x4xf8E4M3FN>
}
