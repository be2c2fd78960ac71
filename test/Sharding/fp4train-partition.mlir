// fp4train-partition on what training steps hold besides the fp4train ops:
// scalars computed outside the linalg ops, a scatter-add split along its
// reduction, the process's types recorded for the host, and the reduction
// MLIR 22's partition cannot split (docs/sharding.md).
// RUN: fp4-opt %s --split-input-file --verify-diagnostics --fp4train-partition | FileCheck %s

shard.grid @dp(shape = 2)

// The seed of a stochastic quantize derived from the step: scalar arith ops
// are replicated; the quantize indexes [SR1] at the process's rows [SH3].
// CHECK-LABEL: func.func @seed_from_step(
// CHECK-SAME: %[[X:.*]]: tensor<16x32xf32>, %[[STEP:.*]]: i64) -> tensor<16x32xf32>
// CHECK-SAME: fp4train.process_type = (tensor<16x32xf32>, i64) -> tensor<16x32xf32>
// CHECK: %[[SHIFTED:.*]] = arith.shli %[[STEP]]
// CHECK: %[[SEED:.*]] = arith.addi %[[SHIFTED]]
// CHECK: fp4train.quantize %[[X]] rounding = stochastic seed(%[[SEED]]) at({{.*}}) of [32, 32]
func.func @seed_from_step(%x: tensor<32x32xf32>, %step: i64) -> tensor<32x32xf32> {
  %s = shard.sharding @dp split_axes = [[0]] : !shard.sharding
  %x0 = shard.shard %x to %s annotate_for_users : tensor<32x32xf32>
  %c32 = arith.constant 32 : i64
  %c6 = arith.constant 6 : i64
  %shifted = arith.shli %step, %c32 : i64
  %seed = arith.addi %shifted, %c6 : i64
  %q = fp4train.quantize %x0 rounding = stochastic seed(%seed) : tensor<32x32xf32>
      -> !fp4train.scaled<32x32xf4E2M1FN, block = [1, 32], scale = f8E8M0FNU>
  %d = fp4train.dequantize %q : !fp4train.scaled<32x32xf4E2M1FN, block = [1, 32], scale = f8E8M0FNU> -> tensor<32x32xf32>
  %r = shard.shard %d to %s : tensor<32x32xf32>
  return %r : tensor<32x32xf32>
}

// -----

shard.grid @dp(shape = 2)

// An embedding's gradient with the tokens split: each process scatter-adds
// its tokens, masked by -0.0 (the exact identity of addf: the bits of the
// unsplit sum of each token's rows), then the partial tables are summed.
// CHECK-LABEL: func.func @embedding_gradient(
// CHECK-SAME: %[[TOKENS:.*]]: tensor<4xi32>, %[[DY:.*]]: tensor<4x8xf32>
// The table's row index reads a constant iota [SH10].
// CHECK: %[[ROWS:.*]] = arith.constant dense<[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15]> : tensor<16xi64>
// CHECK: %[[PARTIAL:.*]] = linalg.generic
// CHECK-SAME: ins(%[[TOKENS]], %[[DY]], %[[ROWS]] : tensor<4xi32>, tensor<4x8xf32>, tensor<16xi64>)
// CHECK: ^bb0(%[[TOKEN:.*]]: i32, %[[G:.*]]: f32, %[[ROW:.*]]: i64, %[[OUT:.*]]: f32):
// CHECK: %[[HIT:.*]] = arith.cmpi eq
// CHECK: %[[MASKED:.*]] = arith.select %[[HIT]], %[[G]], %{{.*}} : f32
// CHECK: %[[SUM:.*]] = arith.addf %[[OUT]], %[[MASKED]] : f32
// CHECK: linalg.yield %[[SUM]] : f32
// CHECK: shard.all_reduce %[[PARTIAL]] on @dp grid_axes = [0] : tensor<16x8xf32> -> tensor<16x8xf32>
func.func @embedding_gradient(%tokens: tensor<8xi32>, %dy: tensor<8x8xf32>) -> tensor<16x8xf32> {
  %s = shard.sharding @dp split_axes = [[0]] : !shard.sharding
  %t0 = shard.shard %tokens to %s annotate_for_users : tensor<8xi32>
  %dy0 = shard.shard %dy to %s annotate_for_users : tensor<8x8xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<16x8xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<16x8xf32>) -> tensor<16x8xf32>
  %g = linalg.generic {
      indexing_maps = [affine_map<(v, d, t) -> (t)>, affine_map<(v, d, t) -> (t, d)>,
                       affine_map<(v, d, t) -> (v, d)>],
      iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%t0, %dy0 : tensor<8xi32>, tensor<8x8xf32>) outs(%z : tensor<16x8xf32>) {
  ^bb0(%token: i32, %grad: f32, %out: f32):
    %v = linalg.index 0 : index
    %id = arith.index_cast %token : i32 to index
    %hit = arith.cmpi eq, %id, %v : index
    %sum = arith.addf %out, %grad : f32
    %r = arith.select %hit, %sum, %out : f32
    linalg.yield %r : f32
  } -> tensor<16x8xf32>
  return %g : tensor<16x8xf32>
}

// -----

shard.grid @dp(shape = 2)

// A running difference has no neutral element: its reduction cannot be
// split (MLIR 22 would read an empty optional and abort).
func.func @unsplittable_reduction(%x: tensor<8x4xf32>) -> tensor<4xf32> {
  %s = shard.sharding @dp split_axes = [[0]] : !shard.sharding
  %x0 = shard.shard %x to %s annotate_for_users : tensor<8x4xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  // expected-error @below {{splits its reduction loop 1 across processes, which MLIR 22's partition implements only for one init combined by one op with a neutral element}}
  %d = linalg.generic {
      indexing_maps = [affine_map<(i, r) -> (r, i)>, affine_map<(i, r) -> (i)>],
      iterator_types = ["parallel", "reduction"]}
      ins(%x0 : tensor<8x4xf32>) outs(%z : tensor<4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = arith.subf %out, %in : f32
    linalg.yield %r : f32
  } -> tensor<4xf32>
  return %d : tensor<4xf32>
}

// -----

shard.grid @dp(shape = ?)

// A grid of unknown shape: no static shard types, and MLIR 22's MPI
// lowering cannot index its processes.
func.func @dynamic_grid(%x: tensor<8x4xf32>) -> tensor<8x4xf32> {
  // expected-error @below {{splits over grid @dp, whose shape is not static: fp4train partitions over grids of static shape}}
  %s = shard.sharding @dp split_axes = [[0]] : !shard.sharding
  %x0 = shard.shard %x to %s annotate_for_users : tensor<8x4xf32>
  %e = tensor.empty() : tensor<8x4xf32>
  %r = linalg.add ins(%x0, %x0 : tensor<8x4xf32>, tensor<8x4xf32>) outs(%e : tensor<8x4xf32>) -> tensor<8x4xf32>
  return %r : tensor<8x4xf32>
}

// -----

shard.grid @tp(shape = 2)

// A row-parallel layer whose activation is quantized whole (as after a
// gather): its tiles along K are sliced locally, codes and block scales
// (no communication), then the partial products are all-reduced [SH5].
!x = !fp4train.scaled<16x64xf4E2M1FN, block = [1, 32], scale = f8E8M0FNU>
!w = !fp4train.scaled<8x64xf4E2M1FN, block = [1, 32], scale = f8E8M0FNU>
// CHECK-LABEL: func.func @whole_activation(
// CHECK: %[[QX:.*]] = fp4train.quantize %{{.*}} : tensor<16x64xf32> -> !fp4train.scaled<16x64xf4E2M1FN
// CHECK: %[[V:.*]], %[[S:.*]] = fp4train.unpack %[[QX]]
// CHECK: %[[VS:.*]] = tensor.extract_slice %[[V]][%{{.*}}, %{{.*}}] [16, 32] [1, 1]
// CHECK: %[[SS:.*]] = tensor.extract_slice %[[S]][%{{.*}}, %{{.*}}] [16, 1] [1, 1]
// CHECK: %[[TILES:.*]] = fp4train.pack %[[VS]], %[[SS]] : tensor<16x32xf4E2M1FN>, tensor<16x1xf8E8M0FNU> -> !fp4train.scaled<16x32xf4E2M1FN
// CHECK: fp4train.scaled_matmul %[[TILES]], %{{.*}}, %{{.*}} : !fp4train.scaled<16x32xf4E2M1FN
// CHECK: shard.all_reduce
func.func @whole_activation(%x: tensor<16x64xf32>, %w: tensor<8x64xf32>, %acc: tensor<16x8xf32>) -> tensor<16x8xf32> {
  %r = shard.sharding @tp split_axes = [[]] : !shard.sharding
  %k = shard.sharding @tp split_axes = [[], [0]] : !shard.sharding
  %x0 = shard.shard %x to %r annotate_for_users : tensor<16x64xf32>
  %w0 = shard.shard %w to %k annotate_for_users : tensor<8x64xf32>
  %qx = fp4train.quantize %x0 : tensor<16x64xf32> -> !x
  %qw = fp4train.quantize %w0 : tensor<8x64xf32> -> !w
  %c = fp4train.scaled_matmul %qx, %qw, %acc : !x, !w, tensor<16x8xf32>
  return %c : tensor<16x8xf32>
}

// -----

shard.grid @dp(shape = 2)

// [SH4] A gathered tensor that only feeds a quantize: each process
// quantizes its rows (the whole tensor's amax [SH2], its positions [SH3])
// and the codes (a byte each) and block scales are gathered instead of the
// f32 rows, then packed whole.
!n = !fp4train.scaled<16x64xf4E2M1FN, block = [1, 16], scale = f8E4M3FN, global>
// CHECK-LABEL: func.func @quantized_gather(
// CHECK-SAME: %[[X:.*]]: tensor<8x64xf32>
// CHECK: shard.all_reduce {{.*}} reduction = {{ *}}max
// CHECK: %[[Q:.*]] = fp4train.quantize %[[X]] rounding = stochastic seed(%{{.*}}) amax(%{{.*}}) at(%{{.*}}, %{{.*}}) of [16, 64] : tensor<8x64xf32> -> !fp4train.scaled<8x64xf4E2M1FN
// CHECK: %[[V:.*]], %[[S:.*]], %[[G:.*]] = fp4train.unpack %[[Q]]
// CHECK: %[[BITS:.*]] = arith.bitcast %[[V]] : tensor<8x64xf4E2M1FN> to tensor<8x64xi4>
// CHECK: %[[BYTES:.*]] = arith.extui %[[BITS]] : tensor<8x64xi4> to tensor<8x64xi8>
// CHECK: %[[CODES:.*]] = shard.all_gather %[[BYTES]] on @dp grid_axes = [0] gather_axis = 0 : tensor<8x64xi8> -> tensor<16x64xi8>
// CHECK: %[[NARROW:.*]] = arith.trunci %[[CODES]] : tensor<16x64xi8> to tensor<16x64xi4>
// CHECK: %[[WHOLEV:.*]] = arith.bitcast %[[NARROW]] : tensor<16x64xi4> to tensor<16x64xf4E2M1FN>
// CHECK: %[[WHOLES:.*]] = shard.all_gather %[[S]] on @dp grid_axes = [0] gather_axis = 0 : tensor<8x4xf8E4M3FN> -> tensor<16x4xf8E4M3FN>
// CHECK: fp4train.pack %[[WHOLEV]], %[[WHOLES]], %[[G]] : tensor<16x64xf4E2M1FN>, tensor<16x4xf8E4M3FN> -> !fp4train.scaled<16x64xf4E2M1FN
// CHECK-NOT: tensor<16x64xf32> -> tensor<16x64xf32>
func.func @quantized_gather(%x: tensor<16x64xf32>, %seed: i64) -> tensor<16x64xf32> {
  %s = shard.sharding @dp split_axes = [[0]] : !shard.sharding
  %r = shard.sharding @dp split_axes = [[]] : !shard.sharding
  %x0 = shard.shard %x to %s : tensor<16x64xf32>
  %x1 = shard.shard %x0 to %r annotate_for_users : tensor<16x64xf32>
  %q = fp4train.quantize %x1 rounding = stochastic seed(%seed) : tensor<16x64xf32> -> !n
  %d = fp4train.dequantize %q : !n -> tensor<16x64xf32>
  return %d : tensor<16x64xf32>
}
