// shard-partition checks what MLIR 22's pass assumes (it aborts where the
// assumption fails) and reports it instead.
// RUN: fp4-opt %s --split-input-file --verify-diagnostics \
// RUN:   --pass-pipeline="builtin.module(func.func(shard-partition))"

shard.grid @grid(shape = 2x2)

// One resharding step moves, adds or removes one grid axis; [[0]] to [[1]]
// is two.
func.func @two_step_reshard(%x: tensor<16x64xf32>) -> tensor<16x64xf32> {
  %s0 = shard.sharding @grid split_axes = [[0]] : !shard.sharding
  %s1 = shard.sharding @grid split_axes = [[1]] : !shard.sharding
  %x0 = shard.shard %x to %s0 : tensor<16x64xf32>
  // expected-error @below {{reshards @grid [[0], []] into @grid [[1], []], which shard-partition does not implement in one step}}
  %x1 = shard.shard %x0 to %s1 annotate_for_users : tensor<16x64xf32>
  return %x1 : tensor<16x64xf32>
}

// -----

shard.grid @grid(shape = 2)

// Without sharding-propagation an argument lacks its annotation.
// expected-error @below {{has argument 1 without exactly one use, a shard.shard: shard-partition needs every tensor annotated (run sharding-propagation first)}}
func.func @unannotated(%x: tensor<16x64xf32>, %acc: tensor<16x16xf32>) -> tensor<16x16xf32> {
  %s = shard.sharding @grid split_axes = [[0]] : !shard.sharding
  %x0 = shard.shard %x to %s annotate_for_users : tensor<16x64xf32>
  %r = linalg.add ins(%acc, %acc : tensor<16x16xf32>, tensor<16x16xf32>) outs(%acc : tensor<16x16xf32>) -> tensor<16x16xf32>
  return %r : tensor<16x16xf32>
}

// -----

shard.grid @grid(shape = 2)

// Halos: MLIR 22 changes their sizes alone and then gives the users of the
// shard sizes it never set; steps split into equal shards.
func.func @halo_reshard(%x: tensor<16x64xf32>) -> tensor<16x64xf32> {
  %h = shard.sharding @grid split_axes = [[0]] halo_sizes = [1, 1] : !shard.sharding
  %s = shard.sharding @grid split_axes = [[0]] : !shard.sharding
  %x0 = shard.shard %x to %h : tensor<16x64xf32>
  // expected-error @below {{reshards with halos or explicit shard offsets, which fp4train's partition does not support}}
  %x1 = shard.shard %x0 to %s annotate_for_users : tensor<16x64xf32>
  return %x1 : tensor<16x64xf32>
}

// -----

shard.grid @grid(shape = 2)

func.func @halo_operand(%x: tensor<16x64xf32>) -> tensor<16x64xf32> {
  %h = shard.sharding @grid split_axes = [[0]] halo_sizes = [1, 1] : !shard.sharding
  %x0 = shard.shard %x to %h annotate_for_users : tensor<16x64xf32>
  // expected-error @below {{has tensor operand 0 sharded with halos or explicit shard offsets, which shard-partition supports for the shard ops only}}
  %r = linalg.add ins(%x0, %x0 : tensor<16x64xf32>, tensor<16x64xf32>) outs(%x0 : tensor<16x64xf32>) -> tensor<16x64xf32>
  return %r : tensor<16x64xf32>
}

// -----

// [SH8] on annotations written for shard-partition directly.
shard.grid @grid(shape = 0)

func.func @grid_axis_of_size_0(%x: tensor<16x64xf32>) -> tensor<16x64xf32> {
  %s = shard.sharding @grid split_axes = [[0]] : !shard.sharding
  // expected-error @below {{'shard.shard' op splits over grid @grid, whose axis 0 has size 0: every grid axis needs at least one process}}
  %x0 = shard.shard %x to %s annotate_for_users : tensor<16x64xf32>
  return %x0 : tensor<16x64xf32>
}

// -----

shard.grid @grid(shape = 2)

func.func @split_axis_outside_grid(%x: tensor<16x64xf32>) -> tensor<16x64xf32> {
  %s = shard.sharding @grid split_axes = [[1]] : !shard.sharding
  // expected-error @below {{'shard.shard' op splits dimension 0 along axis 1 of grid @grid, which has 1 axis}}
  %x0 = shard.shard %x to %s annotate_for_users : tensor<16x64xf32>
  return %x0 : tensor<16x64xf32>
}

// -----

shard.grid @grid(shape = 3)

func.func @rows_16_over_3(%x: tensor<16x64xf32>) -> tensor<16x64xf32> {
  %s = shard.sharding @grid split_axes = [[0]] : !shard.sharding
  // expected-error @below {{'shard.shard' op cannot split dimension 0 (size 16) into 3 equal shards along grid axes [[0]] of @grid}}
  %x0 = shard.shard %x to %s annotate_for_users : tensor<16x64xf32>
  return %x0 : tensor<16x64xf32>
}

// -----

shard.grid @grid(shape = 2)

// A result nobody annotates: MLIR 22 would read its sharding's grid.
func.func @unannotated_result(%x: tensor<16x64xf32>) -> tensor<16x64xf32> {
  %s = shard.sharding @grid split_axes = [[0]] : !shard.sharding
  %x0 = shard.shard %x to %s annotate_for_users : tensor<16x64xf32>
  %e = tensor.empty() : tensor<16x64xf32>
  %e1 = shard.shard %e to %s annotate_for_users : tensor<16x64xf32>
  // expected-error @below {{'linalg.copy' op has result 0 without a shard.shard annotation: shard-partition needs every tensor annotated}}
  %c = linalg.copy ins(%x0 : tensor<16x64xf32>) outs(%e1 : tensor<16x64xf32>) -> tensor<16x64xf32>
  return %x0 : tensor<16x64xf32>
}
