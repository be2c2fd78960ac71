// fp4train-shard-step splits the batch arguments of a training step over a
// data-parallel grid axis and the parameters tp-split names over a
// tensor-parallel one; its errors.
// RUN: fp4-opt %s --fp4train-shard-step=dp=2 | FileCheck %s
// RUN: fp4-opt %s --fp4train-shard-step=dp=1 | FileCheck %s --check-prefix=ONE
// RUN: fp4-opt %s --fp4train-shard-step="tp=2 tp-split=1:0" | FileCheck %s --check-prefix=TP
// RUN: fp4-opt %s --fp4train-shard-step="dp=2 tp=2 tp-split=1:1" | FileCheck %s --check-prefix=DPTP
// RUN: not fp4-opt %s --fp4train-shard-step=dp=3 2>&1 | FileCheck %s --check-prefix=THREE
// RUN: not fp4-opt %s --fp4train-shard-step=dp=0 2>&1 | FileCheck %s --check-prefix=ZERO
// RUN: not fp4-opt %s --fp4train-shard-step=tp=2 2>&1 | FileCheck %s --check-prefix=NOSPLIT
// RUN: not fp4-opt %s --fp4train-shard-step=tp-split=1:0 2>&1 | FileCheck %s --check-prefix=NOTP
// RUN: not fp4-opt %s --fp4train-shard-step="tp=2 tp-split=1" 2>&1 | FileCheck %s --check-prefix=SYNTAX
// RUN: not fp4-opt %s --fp4train-shard-step="tp=2 tp-split=0:0" 2>&1 | FileCheck %s --check-prefix=NOTPARAM
// RUN: not fp4-opt %s --fp4train-shard-step="tp=2 tp-split=1:2" 2>&1 | FileCheck %s --check-prefix=NODIM
// RUN: not fp4-opt %s --fp4train-shard-step="tp=3 tp-split=1:0" 2>&1 | FileCheck %s --check-prefix=TPDIVIDE

// CHECK: shard.grid @dp(shape = 2)
// CHECK-LABEL: func.func @step(
// CHECK-NEXT: %[[S:.*]] = shard.sharding @dp split_axes = {{\[\[}}0]] : !shard.sharding
// CHECK-NEXT: %[[X:.*]] = shard.shard %arg0 to %[[S]] annotate_for_users : tensor<64x32xf32>
// CHECK-NEXT: %[[S2:.*]] = shard.sharding @dp split_axes = {{\[\[}}0]] : !shard.sharding
// CHECK-NEXT: %[[T:.*]] = shard.shard %arg2 to %[[S2]] annotate_for_users : tensor<64x16xf32>
// CHECK-NOT: shard.shard
// CHECK: linalg.matmul {{.*}}ins(%[[X]], %arg1 :
// The parameter (and the scalar) stay unannotated: fp4train-partition
// replicates them.
// ONE-NOT: shard.

// Tensor parallel: the weight's rows (its output features) split, the
// batch whole.
// TP: shard.grid @tp(shape = 2)
// TP-LABEL: func.func @step(
// TP-NEXT: %[[S:.*]] = shard.sharding @tp split_axes = {{\[\[}}0]] : !shard.sharding
// TP-NEXT: shard.shard %arg1 to %[[S]] annotate_for_users : tensor<16x32xf32>
// TP-NOT: shard.shard
// A step that returns the loss and one tensor per parameter gets each such
// result split like its parameter (@paramstep below).
// TP-LABEL: func.func @paramstep(
// TP: shard.shard %arg1 to {{.*}} annotate_for_users
// TP: %[[R:.*]] = shard.sharding @tp split_axes = {{\[\[}}0]] : !shard.sharding
// TP-NEXT: %[[W:.*]] = shard.shard %{{.*}} to %[[R]] : tensor<16x32xf32>
// TP-NEXT: %[[WHOLE:.*]] = shard.sharding @tp split_axes = {{\[\[}}]] : !shard.sharding
// TP-NEXT: %[[B:.*]] = shard.shard %{{.*}} to %[[WHOLE]] : tensor<16xf32>
// TP-NEXT: return %{{.*}}, %[[W]], %[[B]]

// Both: axis 0 splits the batch, axis 1 the weight's columns.
// DPTP: shard.grid @dp_tp(shape = 2x2)
// DPTP: shard.sharding @dp_tp split_axes = {{\[\[}}0]]
// DPTP-NEXT: shard.shard %arg0
// DPTP-NEXT: shard.sharding @dp_tp split_axes = {{\[\[}}], [1]]
// DPTP-NEXT: shard.shard %arg1
// DPTP-NEXT: shard.sharding @dp_tp split_axes = {{\[\[}}0]]
// DPTP-NEXT: shard.shard %arg2

// THREE: cannot split argument 0 ('tensor<64x32xf32>') along dimension 0 into 3 equal parts (fp4train-shard-step dp=3)
// ZERO: fp4train-shard-step: dp, tp and ep must be at least 1, got dp=0 tp=1 ep=1
// NOSPLIT: fp4train-shard-step: tp=2 needs tp-split, the parameters to split (ARG:DIM)
// NOTP: fp4train-shard-step: tp-split needs tp greater than 1
// SYNTAX: fp4train-shard-step: tp-split entry '1' is not ARG:DIM
// NOTPARAM: fp4train-shard-step: tp-split 0:0 does not name a dimension of a parameter tensor of @step
// NODIM: fp4train-shard-step: tp-split 1:2 does not name a dimension of a parameter tensor of @step
// TPDIVIDE: cannot split argument 1 ('tensor<16x32xf32>') along dimension 0 into 3 equal parts (fp4train-shard-step tp=3)
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

// The loss, then W's gradient and b's: both results are annotated.
func.func @paramstep(%x: tensor<64x32xf32>, %w: tensor<16x32xf32> {fp4train.param},
                     %b: tensor<16xf32> {fp4train.param})
    -> (tensor<f32>, tensor<16x32xf32>, tensor<16xf32>) {
  %c0 = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<f32>
  %loss = linalg.fill ins(%c0 : f32) outs(%e : tensor<f32>) -> tensor<f32>
  %eb = tensor.empty() : tensor<16xf32>
  %db = linalg.fill ins(%c0 : f32) outs(%eb : tensor<16xf32>) -> tensor<16xf32>
  return %loss, %w, %db : tensor<f32>, tensor<16x32xf32>, tensor<16xf32>
}
