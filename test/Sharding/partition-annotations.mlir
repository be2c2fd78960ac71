// [SH8] fp4train-partition refuses annotations that MLIR 22's partition
// cannot honour exactly, before upstream code reads them: grids with an
// axis of no process or more processes than int64 holds (a division by
// zero in shardShapedType), split axes outside the grid, and splits the
// grid does not divide (rows dropped, exit status 0).
// RUN: fp4-opt %s --split-input-file --verify-diagnostics --fp4train-partition \
// RUN:   | FileCheck %s

shard.grid @grid(shape = 0)

func.func @grid_axis_of_size_0(%x: tensor<16x64xf32>) -> tensor<16x64xf32> {
  // expected-error @below {{'shard.sharding' op splits over grid @grid, whose axis 0 has size 0: every grid axis needs at least one process}}
  %s = shard.sharding @grid split_axes = [[0]] : !shard.sharding
  %x0 = shard.shard %x to %s annotate_for_users : tensor<16x64xf32>
  %e = tensor.empty() : tensor<16x64xf32>
  %r = linalg.add ins(%x0, %x0 : tensor<16x64xf32>, tensor<16x64xf32>) outs(%e : tensor<16x64xf32>) -> tensor<16x64xf32>
  return %r : tensor<16x64xf32>
}

// -----

// 2^32 x 2^32 processes: the product wraps to 0 in int64.
shard.grid @grid(shape = 4294967296x4294967296)

func.func @grid_product_wraps(%x: tensor<16x64xf32>) -> tensor<16x64xf32> {
  // expected-error @below {{'shard.sharding' op splits over grid @grid, whose axes multiply past 2^63 processes}}
  %s = shard.sharding @grid split_axes = [[0, 1]] : !shard.sharding
  %x0 = shard.shard %x to %s annotate_for_users : tensor<16x64xf32>
  %e = tensor.empty() : tensor<16x64xf32>
  %r = linalg.add ins(%x0, %x0 : tensor<16x64xf32>, tensor<16x64xf32>) outs(%e : tensor<16x64xf32>) -> tensor<16x64xf32>
  return %r : tensor<16x64xf32>
}

// -----

shard.grid @grid(shape = 2)

func.func @split_axis_outside_grid(%x: tensor<16x64xf32>) -> tensor<16x64xf32> {
  %s = shard.sharding @grid split_axes = [[1]] : !shard.sharding
  // expected-error @below {{'shard.shard' op splits dimension 0 along axis 1 of grid @grid, which has 1 axis}}
  %x0 = shard.shard %x to %s annotate_for_users : tensor<16x64xf32>
  %e = tensor.empty() : tensor<16x64xf32>
  %r = linalg.add ins(%x0, %x0 : tensor<16x64xf32>, tensor<16x64xf32>) outs(%e : tensor<16x64xf32>) -> tensor<16x64xf32>
  return %r : tensor<16x64xf32>
}

// -----

shard.grid @grid(shape = 2)

func.func @more_splits_than_dimensions(%x: tensor<16x64xf32>) -> tensor<16x64xf32> {
  %s = shard.sharding @grid split_axes = [[], [], [0]] : !shard.sharding
  // expected-error @below {{'shard.shard' op splits 3 dimensions of a rank-2 tensor}}
  %x0 = shard.shard %x to %s annotate_for_users : tensor<16x64xf32>
  %e = tensor.empty() : tensor<16x64xf32>
  %r = linalg.add ins(%x0, %x0 : tensor<16x64xf32>, tensor<16x64xf32>) outs(%e : tensor<16x64xf32>) -> tensor<16x64xf32>
  return %r : tensor<16x64xf32>
}

// -----

shard.grid @grid(shape = 3)

// 16 rows over 3 processes: MLIR 22 would give each 5 and drop one.
func.func @rows_16_over_3(%x: tensor<16x64xf32>) -> tensor<16x64xf32> {
  %s = shard.sharding @grid split_axes = [[0]] : !shard.sharding
  // expected-error @below {{'shard.shard' op cannot split dimension 0 (size 16) into 3 equal shards along grid axes [[0]] of @grid}}
  %x0 = shard.shard %x to %s annotate_for_users : tensor<16x64xf32>
  %e = tensor.empty() : tensor<16x64xf32>
  %r = linalg.add ins(%x0, %x0 : tensor<16x64xf32>, tensor<16x64xf32>) outs(%e : tensor<16x64xf32>) -> tensor<16x64xf32>
  return %r : tensor<16x64xf32>
}

// -----

shard.grid @grid(shape = 2)

// One row over 2 processes: shards of no rows.
func.func @row_1_over_2(%x: tensor<1x64xf32>) -> tensor<1x64xf32> {
  %s = shard.sharding @grid split_axes = [[0]] : !shard.sharding
  // expected-error @below {{'shard.shard' op cannot split dimension 0 (size 1) into 2 equal shards along grid axes [[0]] of @grid}}
  %x0 = shard.shard %x to %s annotate_for_users : tensor<1x64xf32>
  %e = tensor.empty() : tensor<1x64xf32>
  %r = linalg.add ins(%x0, %x0 : tensor<1x64xf32>, tensor<1x64xf32>) outs(%e : tensor<1x64xf32>) -> tensor<1x64xf32>
  return %r : tensor<1x64xf32>
}

// -----

shard.grid @grid(shape = 4294967296)

func.func @rows_16_over_2_pow_32(%x: tensor<16x64xf32>) -> tensor<16x64xf32> {
  %s = shard.sharding @grid split_axes = [[0]] : !shard.sharding
  // expected-error @below {{'shard.shard' op cannot split dimension 0 (size 16) into 4294967296 equal shards along grid axes [[0]] of @grid}}
  %x0 = shard.shard %x to %s annotate_for_users : tensor<16x64xf32>
  %e = tensor.empty() : tensor<16x64xf32>
  %r = linalg.add ins(%x0, %x0 : tensor<16x64xf32>, tensor<16x64xf32>) outs(%e : tensor<16x64xf32>) -> tensor<16x64xf32>
  return %r : tensor<16x64xf32>
}

// -----

shard.grid @grid(shape = 2x3)

// Both axes over one dimension: 6 processes, 48 rows, shards of 8.
// CHECK-LABEL: func.func @rows_48_over_2x3(
// CHECK-SAME: tensor<8x64xf32>) -> tensor<8x64xf32>
func.func @rows_48_over_2x3(%x: tensor<48x64xf32>) -> tensor<48x64xf32> {
  %s = shard.sharding @grid split_axes = [[0, 1]] : !shard.sharding
  %x0 = shard.shard %x to %s annotate_for_users : tensor<48x64xf32>
  %e = tensor.empty() : tensor<48x64xf32>
  %r = linalg.add ins(%x0, %x0 : tensor<48x64xf32>, tensor<48x64xf32>) outs(%e : tensor<48x64xf32>) -> tensor<48x64xf32>
  return %r : tensor<48x64xf32>
}
