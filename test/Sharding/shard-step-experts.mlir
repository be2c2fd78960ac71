// fp4train-shard-step ep=N [SH11]: the expert weights (parameters of
// expert contractions: rank 3, batched over their first dimension) split by
// expert; the router and the batch as dp and tp leave them.
// RUN: fp4-opt %s --fp4train-shard-step=ep=2 | FileCheck %s
// RUN: fp4-opt %s --fp4train-shard-step="dp=2 ep=2" | FileCheck %s --check-prefix=DPEP
// RUN: not fp4-opt %s --fp4train-shard-step=ep=3 2>&1 | FileCheck %s --check-prefix=DIVIDE
// RUN: not fp4-opt %s --fp4train-shard-step=ep=0 2>&1 | FileCheck %s --check-prefix=ZERO
// RUN: not fp4-opt %s --fp4train-shard-step="ep=2 tp=2 tp-split=2:0" 2>&1 | FileCheck %s --check-prefix=BOTH
// RUN: not fp4-opt %S/shard-step.mlir --fp4train-shard-step=ep=2 2>&1 | FileCheck %s --check-prefix=NONE

// CHECK: shard.grid @ep(shape = 2)
// CHECK-LABEL: func.func @experts(
// CHECK-NEXT: %[[S:.*]] = shard.sharding @ep split_axes = {{\[\[}}0]] : !shard.sharding
// CHECK-NEXT: shard.shard %arg2 to %[[S]] annotate_for_users : tensor<4x16x32xf32>
// CHECK-NOT: shard.shard %arg
// The gradient of the expert weight comes back split like it; the router's
// whole.
// CHECK: %[[R:.*]] = shard.sharding @ep split_axes = {{\[\[}}]] : !shard.sharding
// CHECK-NEXT: shard.shard %{{.*}} to %[[R]] : tensor<4x32xf32>
// CHECK-NEXT: %[[E:.*]] = shard.sharding @ep split_axes = {{\[\[}}0]] : !shard.sharding
// CHECK-NEXT: shard.shard %{{.*}} to %[[E]] : tensor<4x16x32xf32>

// Axis 0 the data, axis 1 the experts.
// DPEP: shard.grid @dp_ep(shape = 2x2)
// DPEP: shard.sharding @dp_ep split_axes = {{\[\[}}0]]
// DPEP-NEXT: shard.shard %arg0
// DPEP-NEXT: shard.sharding @dp_ep split_axes = {{\[\[}}1]]
// DPEP-NEXT: shard.shard %arg2

// DIVIDE: cannot split argument 2 ('tensor<4x16x32xf32>') along dimension 0 into 3 equal parts (fp4train-shard-step ep=3)
// ZERO: fp4train-shard-step: dp, tp and ep must be at least 1, got dp=1 tp=1 ep=0
// BOTH: fp4train-shard-step: argument 2 of @experts is an expert weight, which ep splits; tp-split names it too
// NONE: fp4train-shard-step: ep=2 splits expert weights, and @step has none (no contraction of a rank-3 parameter batched over its experts)

#tokens = affine_map<(e, c, n, k) -> (e, c, k)>
#weights = affine_map<(e, c, n, k) -> (e, n, k)>
#outs = affine_map<(e, c, n, k) -> (e, c, n)>
// The router's logits (x · Wrᵀ) and the experts' Fprop over their tokens;
// the step returns a loss stand-in and the two parameters' "gradients".
func.func @experts(%x: tensor<8x32xf32>, %router: tensor<4x32xf32> {fp4train.param},
                   %w: tensor<4x16x32xf32> {fp4train.param}, %dispatched: tensor<4x8x32xf32>)
    -> (tensor<f32>, tensor<4x32xf32>, tensor<4x16x32xf32>) {
  %c0 = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x4xf32>
  %z = linalg.fill ins(%c0 : f32) outs(%e : tensor<8x4xf32>) -> tensor<8x4xf32>
  %logits = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %router : tensor<8x32xf32>, tensor<4x32xf32>) outs(%z : tensor<8x4xf32>) -> tensor<8x4xf32>
  %eo = tensor.empty() : tensor<4x8x16xf32>
  %zo = linalg.fill ins(%c0 : f32) outs(%eo : tensor<4x8x16xf32>) -> tensor<4x8x16xf32>
  %y = linalg.generic {indexing_maps = [#tokens, #weights, #outs],
                       iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%dispatched, %w : tensor<4x8x32xf32>, tensor<4x16x32xf32>) outs(%zo : tensor<4x8x16xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<4x8x16xf32>
  %es = tensor.empty() : tensor<f32>
  %zs = linalg.fill ins(%c0 : f32) outs(%es : tensor<f32>) -> tensor<f32>
  %loss = linalg.generic {indexing_maps = [affine_map<(e, c, n) -> (e, c, n)>, affine_map<(e, c, n) -> ()>],
                          iterator_types = ["reduction", "reduction", "reduction"]}
      ins(%y : tensor<4x8x16xf32>) outs(%zs : tensor<f32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.addf %acc, %a : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  return %loss, %router, %w : tensor<f32>, tensor<4x32xf32>, tensor<4x16x32xf32>
}
