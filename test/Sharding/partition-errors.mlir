// What partitioning a quantized step refuses, each with the op, the grid
// axes and the sizes named (docs/sharding.md).
// RUN: fp4-opt %s --split-input-file --verify-diagnostics \
// RUN:   --pass-pipeline="builtin.module(func.func(sharding-propagation,shard-partition))"

shard.grid @grid(shape = 2)

// [SH1] Two shards of 48 would cut the 32-element MX blocks.
func.func @misaligned_block_split(%x: tensor<16x96xf32>) -> tensor<16x96xf32> {
  %s = shard.sharding @grid split_axes = [[], [0]] : !shard.sharding
  %x0 = shard.shard %x to %s annotate_for_users : tensor<16x96xf32>
  // expected-error @below {{cannot split dimension 1 (size 96) into 2 shards of 48 along grid axes [[0]] of @grid: a shard must hold whole blocks of 32 [SH1]}}
  %q = fp4train.quantize %x0 : tensor<16x96xf32>
      -> !fp4train.scaled<16x96xf4E2M1FN, block = [1, 32], scale = f8E8M0FNU>
  %d = fp4train.dequantize %q : !fp4train.scaled<16x96xf4E2M1FN, block = [1, 32], scale = f8E8M0FNU> -> tensor<16x96xf32>
  return %d : tensor<16x96xf32>
}

// -----

shard.grid @grid(shape = 2)

// [SH1] 2-D weight tiles are 16x16: 8 rows per shard cut them.
func.func @misaligned_tile_split(%w: tensor<16x64xf32>) -> tensor<16x64xf32> {
  %s = shard.sharding @grid split_axes = [[0]] : !shard.sharding
  %w0 = shard.shard %w to %s annotate_for_users : tensor<16x64xf32>
  // expected-error @below {{cannot split dimension 0 (size 16) into 2 shards of 8 along grid axes [[0]] of @grid: a shard must hold whole blocks of 16 [SH1]}}
  %q = fp4train.quantize %w0 : tensor<16x64xf32>
      -> !fp4train.scaled<16x64xf4E2M1FN, block = [16, 16], scale = f8E4M3FN, global>
  %d = fp4train.dequantize %q : !fp4train.scaled<16x64xf4E2M1FN, block = [16, 16], scale = f8E4M3FN, global> -> tensor<16x64xf32>
  return %d : tensor<16x64xf32>
}

// -----

shard.grid @grid(shape = 3)

// The grid does not divide the dimension: refused at the annotation,
// before upstream's partition would drop the remainder.
func.func @uneven_split(%x: tensor<16x64xf32>) -> tensor<16x64xf32> {
  %s = shard.sharding @grid split_axes = [[0]] : !shard.sharding
  // expected-error @below {{'shard.shard' op cannot split dimension 0 (size 16) into 3 equal shards along grid axes [[0]] of @grid}}
  %x0 = shard.shard %x to %s annotate_for_users : tensor<16x64xf32>
  %q = fp4train.quantize %x0 : tensor<16x64xf32>
      -> !fp4train.scaled<16x64xf4E2M1FN, block = [1, 32], scale = f8E8M0FNU>
  %d = fp4train.dequantize %q : !fp4train.scaled<16x64xf4E2M1FN, block = [1, 32], scale = f8E8M0FNU> -> tensor<16x64xf32>
  return %d : tensor<16x64xf32>
}

// -----

shard.grid @grid(shape = 4)

// [SH1] A rotation block of 32 would span two shards of 16.
func.func @split_rotation(%x: tensor<4x64xf32>) -> tensor<4x64xf32> {
  %s = shard.sharding @grid split_axes = [[], [0]] : !shard.sharding
  %x0 = shard.shard %x to %s annotate_for_users : tensor<4x64xf32>
  // expected-error @below {{cannot split dimension 1 (size 64) into 4 shards of 16 along grid axes [[0]] of @grid: a shard must hold whole rotations of 32 [SH1]}}
  %r = fp4train.hadamard %x0 with #fp4train.hadamard<32, fixed> along 1 : tensor<4x64xf32>
  return %r : tensor<4x64xf32>
}

