// fp4train-shard-step splits the batch arguments of a training step over a
// data-parallel grid; its errors.
// RUN: fp4-opt %s --split-input-file --fp4train-shard-step=dp=2 | FileCheck %s
// RUN: fp4-opt %s --split-input-file --fp4train-shard-step=dp=1 | FileCheck %s --check-prefix=ONE
// RUN: not fp4-opt %s --split-input-file --fp4train-shard-step=dp=3 2>&1 | FileCheck %s --check-prefix=THREE
// RUN: not fp4-opt %s --split-input-file --fp4train-shard-step=dp=0 2>&1 | FileCheck %s --check-prefix=ZERO

// CHECK: shard.grid @dp(shape = 2)
// CHECK-LABEL: func.func @step(
// CHECK-NEXT: %[[S:.*]] = shard.sharding @dp split_axes = {{\[\[}}0]] : !shard.sharding
// CHECK-NEXT: %[[X:.*]] = shard.shard %arg0 to %[[S]] annotate_for_users : tensor<64x32xf32>
// CHECK-NEXT: %[[T:.*]] = shard.shard %arg2 to %[[S]] annotate_for_users : tensor<64x16xf32>
// CHECK-NOT: shard.shard
// CHECK: linalg.matmul {{.*}}ins(%[[X]], %arg1 :
// ONE-NOT: shard.
// The parameter (and the scalar) stay unannotated: fp4train-partition
// replicates them.
// THREE: cannot split argument 0 ('tensor<64x32xf32>') along its first dimension into 3 equal parts (fp4train-shard-step dp=3)
// ZERO: dp must be at least 1, got 0
#mk = affine_map<(m, n, k) -> (m, k)>
#nk = affine_map<(m, n, k) -> (n, k)>
#mn = affine_map<(m, n, k) -> (m, n)>
func.func @step(%x: tensor<64x32xf32>, %w: tensor<16x32xf32> {fp4train.param},
                %t: tensor<64x16xf32>, %lr: f32) -> tensor<64x16xf32> {
  %c0 = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<64x16xf32>
  %z = linalg.fill ins(%c0 : f32) outs(%e : tensor<64x16xf32>) -> tensor<64x16xf32>
  %y = linalg.matmul indexing_maps = [#mk, #nk, #mn]
      ins(%x, %w : tensor<64x32xf32>, tensor<16x32xf32>) outs(%z : tensor<64x16xf32>) -> tensor<64x16xf32>
  %d = linalg.sub ins(%y, %t : tensor<64x16xf32>, tensor<64x16xf32>) outs(%e : tensor<64x16xf32>) -> tensor<64x16xf32>
  return %d : tensor<64x16xf32>
}
