// Partitioning what framework exports hold besides contractions
// (docs/sharding.md): slices and concatenations (a fused QKV projection
// split into Q, K and V, its gradient concatenated back), and a
// linalg.generic that indexes a unit dimension with a constant (a
// LayerNorm's mean kept as [B, T, 1]). A split of a dimension the op takes
// whole stays local; one of a dimension it reads in part is gathered first.
// RUN: fp4-opt %s --split-input-file --fp4train-partition | FileCheck %s

shard.grid @dp(shape = 2)

// CHECK-LABEL: func.func @qkv_split(
// CHECK-SAME: %[[X:.*]]: tensor<4x48xf32>) -> (tensor<4x16xf32>, tensor<4x48xf32>)
// CHECK: %[[K:.*]] = tensor.extract_slice %[[X]][0, 16] [4, 16] [1, 1] : tensor<4x48xf32> to tensor<4x16xf32>
// CHECK: %[[E:.*]] = tensor.empty() : tensor<4x48xf32>
// CHECK: %[[I:.*]] = tensor.insert_slice %[[K]] into %[[E]][0, 32] [4, 16] [1, 1] : tensor<4x16xf32> into tensor<4x48xf32>
// CHECK-NOT: shard.
// CHECK: return %[[K]], %[[I]]
func.func @qkv_split(%x: tensor<8x48xf32>) -> (tensor<8x16xf32>, tensor<8x48xf32>) {
  %s = shard.sharding @dp split_axes = [[0]] : !shard.sharding
  %x0 = shard.shard %x to %s annotate_for_users : tensor<8x48xf32>
  %k = tensor.extract_slice %x0[0, 16] [8, 16] [1, 1] : tensor<8x48xf32> to tensor<8x16xf32>
  %e = tensor.empty() : tensor<8x48xf32>
  %i = tensor.insert_slice %k into %e[0, 32] [8, 16] [1, 1] : tensor<8x16xf32> into tensor<8x48xf32>
  return %k, %i : tensor<8x16xf32>, tensor<8x48xf32>
}

// -----

shard.grid @dp(shape = 2)

// CHECK-LABEL: func.func @qkv_grad(
// CHECK-SAME: %[[Q:.*]]: tensor<4x16xf32>, %[[K:.*]]: tensor<4x16xf32>, %[[V:.*]]: tensor<4x16xf32>) -> tensor<4x48xf32>
// CHECK: %[[C:.*]] = tensor.concat dim(1) %[[Q]], %[[K]], %[[V]] : (tensor<4x16xf32>, tensor<4x16xf32>, tensor<4x16xf32>) -> tensor<4x48xf32>
// CHECK: return %[[C]]
func.func @qkv_grad(%q: tensor<8x16xf32>, %k: tensor<8x16xf32>, %v: tensor<8x16xf32>) -> tensor<8x48xf32> {
  %s = shard.sharding @dp split_axes = [[0]] : !shard.sharding
  %q0 = shard.shard %q to %s annotate_for_users : tensor<8x16xf32>
  %k0 = shard.shard %k to %s annotate_for_users : tensor<8x16xf32>
  %v0 = shard.shard %v to %s annotate_for_users : tensor<8x16xf32>
  %c = tensor.concat dim(1) %q0, %k0, %v0 : (tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x16xf32>) -> tensor<8x48xf32>
  return %c : tensor<8x48xf32>
}

// -----

shard.grid @dp(shape = 2)

// Concatenated along the split dimension: each process needs the whole of
// every operand, which the partition gathers.
// CHECK-LABEL: func.func @concat_split_dim(
// CHECK-COUNT-2: shard.all_gather
// CHECK: tensor.concat dim(0)
func.func @concat_split_dim(%a: tensor<8x16xf32>, %b: tensor<8x16xf32>) -> tensor<16x16xf32> {
  %s = shard.sharding @dp split_axes = [[0]] : !shard.sharding
  %a0 = shard.shard %a to %s annotate_for_users : tensor<8x16xf32>
  %b0 = shard.shard %b to %s annotate_for_users : tensor<8x16xf32>
  %c = tensor.concat dim(0) %a0, %b0 : (tensor<8x16xf32>, tensor<8x16xf32>) -> tensor<16x16xf32>
  return %c : tensor<16x16xf32>
}

// -----

shard.grid @dp(shape = 2)

// A slice of part of the split dimension: gathered first.
// CHECK-LABEL: func.func @slice_split_dim(
// CHECK-SAME: %{{.*}}: tensor<8x24xf32>) -> tensor<8x16xf32>
// CHECK: shard.all_gather %{{.*}} on @dp grid_axes = [0] gather_axis = 1 : tensor<8x24xf32> -> tensor<8x48xf32>
// CHECK: tensor.extract_slice %{{.*}}[0, 0] [8, 16] [1, 1] : tensor<8x48xf32> to tensor<8x16xf32>
func.func @slice_split_dim(%x: tensor<8x48xf32>) -> tensor<8x16xf32> {
  %s = shard.sharding @dp split_axes = [[], [0]] : !shard.sharding
  %x0 = shard.shard %x to %s annotate_for_users : tensor<8x48xf32>
  %k = tensor.extract_slice %x0[0, 0] [8, 16] [1, 1] : tensor<8x48xf32> to tensor<8x16xf32>
  return %k : tensor<8x16xf32>
}

// -----

shard.grid @dp(shape = 2)

// x - mean(x) over the features, the mean kept as [B, T, 1]: the unit
// dimension goes, the batch split stays local.
#id = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#keep = affine_map<(d0, d1, d2) -> (d0, d1, 0)>
// CHECK-LABEL: func.func @centered(
// CHECK-SAME: %[[X:.*]]: tensor<2x16x64xf32>) -> tensor<2x16x64xf32>
// CHECK-NOT: shard.
// CHECK: linalg.generic {{.*}} ins(%[[X]] : tensor<2x16x64xf32>) outs(%{{.*}} : tensor<2x16xf32>)
// CHECK-NOT: shard.
// CHECK: return
func.func @centered(%x: tensor<4x16x64xf32>) -> tensor<4x16x64xf32> {
  %s = shard.sharding @dp split_axes = [[0]] : !shard.sharding
  %x0 = shard.shard %x to %s annotate_for_users : tensor<4x16x64xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x16x1xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<4x16x1xf32>) -> tensor<4x16x1xf32>
  %sum = linalg.generic {indexing_maps = [#id, #keep], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x0 : tensor<4x16x64xf32>) outs(%z : tensor<4x16x1xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %a = arith.addf %in, %acc : f32
    linalg.yield %a : f32
  } -> tensor<4x16x1xf32>
  %o = tensor.empty() : tensor<4x16x64xf32>
  %c = linalg.generic {indexing_maps = [#id, #keep, #id], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%x0, %sum : tensor<4x16x64xf32>, tensor<4x16x1xf32>) outs(%o : tensor<4x16x64xf32>) {
  ^bb0(%in: f32, %m: f32, %out: f32):
    %d = arith.subf %in, %m : f32
    linalg.yield %d : f32
  } -> tensor<4x16x64xf32>
  return %c : tensor<4x16x64xf32>
}

// -----

shard.grid @dp(shape = 2)

// Softmax's max with its argmax (aten.max.dim), the argmax unused: it is
// annotated as the op's model splits it, and partitioned with the max. The
// body's index of the column loop reads a constant iota instead [SH10].
#in = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
// CHECK-LABEL: func.func @unused_argmax(
// CHECK-SAME: %[[X:.*]]: tensor<4x16xf32>) -> tensor<4xf32>
// CHECK: %[[IOTA:.*]] = arith.constant dense<[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15]> : tensor<16xi64>
// CHECK: %[[M:.*]]:2 = linalg.generic {{.*}} ins(%[[X]], %[[IOTA]] : tensor<4x16xf32>, tensor<16xi64>) outs(%{{.*}}, %{{.*}} : tensor<4xf32>, tensor<4xi64>)
// CHECK-NOT: linalg.index
// CHECK: return %[[M]]#0
func.func @unused_argmax(%x: tensor<8x16xf32>) -> tensor<8xf32> {
  %s = shard.sharding @dp split_axes = [[0]] : !shard.sharding
  %x0 = shard.shard %x to %s annotate_for_users : tensor<8x16xf32>
  %ninf = arith.constant 0xFF800000 : f32
  %zero = arith.constant 0 : i64
  %e = tensor.empty() : tensor<8xf32>
  %m0 = linalg.fill ins(%ninf : f32) outs(%e : tensor<8xf32>) -> tensor<8xf32>
  %ei = tensor.empty() : tensor<8xi64>
  %i0 = linalg.fill ins(%zero : i64) outs(%ei : tensor<8xi64>) -> tensor<8xi64>
  %r:2 = linalg.generic {indexing_maps = [#in, #row, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x0 : tensor<8x16xf32>) outs(%m0, %i0 : tensor<8xf32>, tensor<8xi64>) {
  ^bb0(%v: f32, %m: f32, %i: i64):
    %j = linalg.index 1 : index
    %ji = arith.index_cast %j : index to i64
    %mx = arith.maximumf %v, %m : f32
    %gt = arith.cmpf ogt, %v, %m : f32
    %ni = arith.select %gt, %ji, %i : i64
    linalg.yield %mx, %ni : f32, i64
  } -> (tensor<8xf32>, tensor<8xi64>)
  return %r#0 : tensor<8xf32>
}

// -----

shard.grid @dp(shape = 2)

// A scalar read of a reduction over a split tensor (the tensor amax of
// gemm-alpha=amax): the partial maxima are all-reduced first, so every
// process reads the whole tensor's value.
// CHECK-LABEL: func.func @amax_read(
// CHECK-SAME: %[[X:.*]]: tensor<4x16xi32>) -> i32
// CHECK: %[[LOCAL:.*]] = linalg.generic {{.*}} ins(%[[X]] : tensor<4x16xi32>) outs(%{{.*}} : tensor<i32>)
// CHECK: %[[WHOLE:.*]] = shard.all_reduce %[[LOCAL]] on @dp grid_axes = [0] reduction = max : tensor<i32> -> tensor<i32>
// CHECK: %[[V:.*]] = tensor.extract %[[WHOLE]][] : tensor<i32>
// CHECK: return %[[V]]
func.func @amax_read(%x: tensor<8x16xi32>) -> i32 {
  %s = shard.sharding @dp split_axes = [[0]] : !shard.sharding
  %x0 = shard.shard %x to %s annotate_for_users : tensor<8x16xi32>
  %zero = arith.constant 0 : i32
  %e = tensor.empty() : tensor<i32>
  %init = linalg.fill ins(%zero : i32) outs(%e : tensor<i32>) -> tensor<i32>
  %m = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> ()>],
                       iterator_types = ["reduction", "reduction"]}
      ins(%x0 : tensor<8x16xi32>) outs(%init : tensor<i32>) {
  ^bb0(%a: i32, %acc: i32):
    %r = arith.maxsi %a, %acc : i32
    linalg.yield %r : i32
  } -> tensor<i32>
  %v = tensor.extract %m[] : tensor<i32>
  return %v : i32
}

// -----

shard.grid @dp(shape = 2)

// [SH10] An index of a split loop (an arange over the tokens of a
// data-parallel step) counts from each shard's first global position: the
// body reads a constant iota, kept whole and sliced like the loop's other
// inputs, not linalg.index, which MLIR 22 would leave counting from 0 on
// every process.
// CHECK-LABEL: func.func @positions(
// CHECK-SAME: %[[X:.*]]: tensor<4xf32>) -> tensor<4xf32>
// CHECK: %[[IOTA:.*]] = arith.constant dense<[0, 1, 2, 3, 4, 5, 6, 7]> : tensor<8xi64>
// CHECK: %[[MINE:.*]] = shard.all_slice %[[IOTA]] on @dp grid_axes = [0] slice_axis = 0 : tensor<8xi64> -> tensor<4xi64>
// CHECK: linalg.generic {{.*}} ins(%[[X]], %[[MINE]] : tensor<4xf32>, tensor<4xi64>)
// CHECK-NOT: linalg.index
func.func @positions(%x: tensor<8xf32>) -> tensor<8xf32> {
  %s = shard.sharding @dp split_axes = [[0]] : !shard.sharding
  %x0 = shard.shard %x to %s annotate_for_users : tensor<8xf32>
  %e = tensor.empty() : tensor<8xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>],
                       iterator_types = ["parallel"]}
      ins(%x0 : tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%v: f32, %o: f32):
    %i = linalg.index 0 : index
    %ii = arith.index_cast %i : index to i64
    %f = arith.sitofp %ii : i64 to f32
    %y = arith.addf %v, %f : f32
    linalg.yield %y : f32
  } -> tensor<8xf32>
  %r0 = shard.shard %r to %s : tensor<8xf32>
  return %r0 : tensor<8xf32>
}

// -----

shard.grid @dp(shape = 2)

// [SH10] A gather from a split tensor (rows of the tokens picked by an index
// computed from the data, as torch-mlir lowers index_select): the body reads
// the tensor whole, gathered before the op, since its indices are global.
// CHECK-LABEL: func.func @gather_rows(
// CHECK-SAME: %[[X:.*]]: tensor<4x2xf32>, %[[IDS:.*]]: tensor<4xi64>) -> tensor<4x2xf32>
// CHECK: %[[GATHERED:.*]] = shard.all_gather %[[X]] on @dp grid_axes = [0] gather_axis = 0 : tensor<4x2xf32> -> tensor<8x2xf32>
// CHECK: %[[WHOLE:.*]] = tensor.cast %[[GATHERED]] : tensor<8x2xf32> to tensor<8x2xf32>
// CHECK: linalg.generic
// CHECK: tensor.extract %[[WHOLE]][%{{.*}}, %{{.*}}] : tensor<8x2xf32>
func.func @gather_rows(%x: tensor<8x2xf32>, %ids: tensor<8xi64>) -> tensor<8x2xf32> {
  %s = shard.sharding @dp split_axes = [[0]] : !shard.sharding
  %x0 = shard.shard %x to %s annotate_for_users : tensor<8x2xf32>
  %i0 = shard.shard %ids to %s annotate_for_users : tensor<8xi64>
  %e = tensor.empty() : tensor<8x2xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i)>, affine_map<(i, j) -> (i, j)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%i0 : tensor<8xi64>) outs(%e : tensor<8x2xf32>) {
  ^bb0(%id: i64, %o: f32):
    %row = arith.index_cast %id : i64 to index
    %col = linalg.index 1 : index
    %v = tensor.extract %x0[%row, %col] : tensor<8x2xf32>
    linalg.yield %v : f32
  } -> tensor<8x2xf32>
  %r0 = shard.shard %r to %s : tensor<8x2xf32>
  return %r0 : tensor<8x2xf32>
}

// -----

shard.grid @dp(shape = 2)

// [SH10] A constant of distinct elements (a table torch-mlir froze) used by
// split ops: kept whole on every process and sliced for them. MLIR 22
// partitions splat constants only and fails on this one without a word.
// CHECK-LABEL: func.func @table(
// CHECK: %[[T:.*]] = arith.constant dense<[1.000000e+00, 2.000000e+00, 3.000000e+00, 4.000000e+00]> : tensor<4xf32>
// CHECK: shard.all_slice %[[T]] on @dp grid_axes = [0] slice_axis = 0 : tensor<4xf32> -> tensor<2xf32>
func.func @table(%x: tensor<4xf32>) -> tensor<4xf32> {
  %s = shard.sharding @dp split_axes = [[0]] : !shard.sharding
  %x0 = shard.shard %x to %s annotate_for_users : tensor<4xf32>
  %t = arith.constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>
  %e = tensor.empty() : tensor<4xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>, affine_map<(i) -> (i)>],
                       iterator_types = ["parallel"]}
      ins(%x0, %t : tensor<4xf32>, tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %y = arith.mulf %a, %b : f32
    linalg.yield %y : f32
  } -> tensor<4xf32>
  %r0 = shard.shard %r to %s : tensor<4xf32>
  return %r0 : tensor<4xf32>
}

// -----

shard.grid @dp(shape = 2)

// tensor.pad (the quantize pass pads to whole blocks): a dimension padded
// by nothing stays split, each process padding its rows' columns.
// CHECK-LABEL: func.func @pad_columns(
// CHECK-SAME: %[[X:.*]]: tensor<4x30xf32>) -> tensor<4x32xf32>
// CHECK: %[[P:.*]] = tensor.pad %[[X]] low[0, 0] high[0, 2]
// CHECK: } : tensor<4x30xf32> to tensor<4x32xf32>
// CHECK: return %[[P]]
func.func @pad_columns(%x: tensor<8x30xf32>) -> tensor<8x32xf32> {
  %s = shard.sharding @dp split_axes = [[0]] : !shard.sharding
  %x0 = shard.shard %x to %s annotate_for_users : tensor<8x30xf32>
  %zero = arith.constant 0.0 : f32
  %p = tensor.pad %x0 low[0, 0] high[0, 2] {
  ^bb0(%i: index, %j: index):
    tensor.yield %zero : f32
  } : tensor<8x30xf32> to tensor<8x32xf32>
  %p0 = shard.shard %p to %s : tensor<8x32xf32>
  return %p0 : tensor<8x32xf32>
}

// -----

shard.grid @dp(shape = 2)

// A pad by an amount known only at run time splits nothing: the rows are
// gathered and padded whole.
// CHECK-LABEL: func.func @pad_dynamic(
// CHECK-SAME: %[[X:.*]]: tensor<4x30xf32>, %[[N:.*]]: index) -> tensor<8x?xf32>
// CHECK: %[[WHOLE:.*]] = shard.all_gather %[[X]] on @dp grid_axes = [0] gather_axis = 0 : tensor<4x30xf32> -> tensor<8x30xf32>
// CHECK: tensor.pad %{{.*}} low[0, 0] high[0, %[[N]]]
// CHECK: } : tensor<8x30xf32> to tensor<8x?xf32>
func.func @pad_dynamic(%x: tensor<8x30xf32>, %n: index) -> tensor<8x?xf32> {
  %s = shard.sharding @dp split_axes = [[0]] : !shard.sharding
  %x0 = shard.shard %x to %s annotate_for_users : tensor<8x30xf32>
  %zero = arith.constant 0.0 : f32
  %p = tensor.pad %x0 low[0, 0] high[0, %n] {
  ^bb0(%i: index, %j: index):
    tensor.yield %zero : f32
  } : tensor<8x30xf32> to tensor<8x?xf32>
  return %p : tensor<8x?xf32>
}
