// RUN: fp4-opt %s -split-input-file -fp4train-annotate-roles | FileCheck %s
// RUN: fp4-opt %s -split-input-file -fp4train-annotate-roles="report=- report-format=table" -o /dev/null \
// RUN:   | FileCheck %s --check-prefix=TABLE
// RUN: fp4-opt %s -split-input-file -fp4train-annotate-roles="weight-layout=in-out" \
// RUN:   | FileCheck %s --check-prefix=JAX

// [ROLE7] Expert weights [E, out, in] in batched contractions: each of W1
// and W2 gets Fprop, Dgrad (W2 only: W1 reads the dispatched tokens, which
// are data) and Wgrad, batched over the 4 experts.

// Expert MLPs on dispatched tokens (test/Pipelines/Inputs/moe_experts.mlir):
// E = 4 experts, C = 32 slots each, D = 64, F = 128. W1 : [E, F, D],
// W2 : [E, D, F] (PyTorch layout per expert).
// TABLE: #  role   param  block  op                   m    n    k    batch
// TABLE-NEXT: 1  fprop  2  -  linalg.batch_matmul  32   128  64   4
// TABLE-NEXT: 2  fprop  3  -  linalg.batch_matmul  32   64   128  4
// TABLE-NEXT: 3  wgrad  3  -  linalg.batch_matmul  64   128  32   4
// TABLE-NEXT: 4  dgrad  3  -  linalg.batch_matmul  32   128  64   4
// TABLE-NEXT: 5  wgrad  2  -  linalg.batch_matmul  128  64   32   4
// CHECK-LABEL: func @train_step
// CHECK: linalg.batch_matmul {{.*}}{fp4train.role = #fp4train.role<fprop, weight = 2, operand = 1, contracted = 2>}
// CHECK: linalg.batch_matmul {{.*}}{fp4train.role = #fp4train.role<fprop, weight = 3, operand = 1, contracted = 2>}
// CHECK: linalg.batch_matmul {{.*}}{fp4train.role = #fp4train.role<wgrad, weight = 3, operand = 0>}
// CHECK: linalg.batch_matmul {{.*}}{fp4train.role = #fp4train.role<dgrad, weight = 3, operand = 1, contracted = 1>}
// CHECK: linalg.batch_matmul {{.*}}{fp4train.role = #fp4train.role<wgrad, weight = 2, operand = 0>}
#bcd = affine_map<(e, c, d) -> (e, c, d)>
#scalar3 = affine_map<(e, c, d) -> ()>
func.func @train_step(%xe: tensor<4x32x64xf32>, %target: tensor<4x32x64xf32>,
                      %w1: tensor<4x128x64xf32> {fp4train.param},
                      %w2: tensor<4x64x128xf32> {fp4train.param}, %step: i64)
    -> (tensor<f32>, tensor<4x128x64xf32>, tensor<4x64x128xf32>) {
  %zero = arith.constant 0.0 : f32
  %scale = arith.constant 0.0001220703125 : f32
  %e_h = tensor.empty() : tensor<4x32x128xf32>
  %z_h = linalg.fill ins(%zero : f32) outs(%e_h : tensor<4x32x128xf32>) -> tensor<4x32x128xf32>
  %e_y = tensor.empty() : tensor<4x32x64xf32>
  %z_y = linalg.fill ins(%zero : f32) outs(%e_y : tensor<4x32x64xf32>) -> tensor<4x32x64xf32>
  // H = Xe · W1ᵀ per expert
  %h = linalg.batch_matmul
      indexing_maps = [affine_map<(e, m, n, k) -> (e, m, k)>,
                       affine_map<(e, m, n, k) -> (e, n, k)>,
                       affine_map<(e, m, n, k) -> (e, m, n)>]
      ins(%xe, %w1 : tensor<4x32x64xf32>, tensor<4x128x64xf32>)
      outs(%z_h : tensor<4x32x128xf32>) -> tensor<4x32x128xf32>
  // Y = H · W2ᵀ per expert
  %y = linalg.batch_matmul
      indexing_maps = [affine_map<(e, m, n, k) -> (e, m, k)>,
                       affine_map<(e, m, n, k) -> (e, n, k)>,
                       affine_map<(e, m, n, k) -> (e, m, n)>]
      ins(%h, %w2 : tensor<4x32x128xf32>, tensor<4x64x128xf32>)
      outs(%z_y : tensor<4x32x64xf32>) -> tensor<4x32x64xf32>
  // dY = (Y - T) · 2/N, loss = Σ (Y - T)² / N
  %dy = linalg.generic {indexing_maps = [#bcd, #bcd, #bcd], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%y, %target : tensor<4x32x64xf32>, tensor<4x32x64xf32>) outs(%e_y : tensor<4x32x64xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %d = arith.subf %a, %b : f32
    %two = arith.constant 2.0 : f32
    %t = arith.mulf %d, %two : f32
    %g = arith.mulf %t, %scale : f32
    linalg.yield %g : f32
  } -> tensor<4x32x64xf32>
  %l0 = tensor.empty() : tensor<f32>
  %lz = linalg.fill ins(%zero : f32) outs(%l0 : tensor<f32>) -> tensor<f32>
  %loss = linalg.generic {indexing_maps = [#bcd, #bcd, #scalar3], iterator_types = ["reduction", "reduction", "reduction"]}
      ins(%y, %target : tensor<4x32x64xf32>, tensor<4x32x64xf32>) outs(%lz : tensor<f32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %d = arith.subf %a, %b : f32
    %sq = arith.mulf %d, %d : f32
    %s = arith.mulf %sq, %scale : f32
    %r = arith.addf %acc, %s : f32
    linalg.yield %r : f32
  } -> tensor<f32>
  // dW2 = dYᵀ · H per expert: [E, D, F]
  %e_w2 = tensor.empty() : tensor<4x64x128xf32>
  %z_w2 = linalg.fill ins(%zero : f32) outs(%e_w2 : tensor<4x64x128xf32>) -> tensor<4x64x128xf32>
  %dw2 = linalg.batch_matmul
      indexing_maps = [affine_map<(e, m, n, k) -> (e, k, m)>,
                       affine_map<(e, m, n, k) -> (e, k, n)>,
                       affine_map<(e, m, n, k) -> (e, m, n)>]
      ins(%dy, %h : tensor<4x32x64xf32>, tensor<4x32x128xf32>)
      outs(%z_w2 : tensor<4x64x128xf32>) -> tensor<4x64x128xf32>
  // dH = dY · W2 per expert: [E, C, F]
  %dh = linalg.batch_matmul
      ins(%dy, %w2 : tensor<4x32x64xf32>, tensor<4x64x128xf32>)
      outs(%z_h : tensor<4x32x128xf32>) -> tensor<4x32x128xf32>
  // dW1 = dHᵀ · Xe per expert: [E, F, D]
  %e_w1 = tensor.empty() : tensor<4x128x64xf32>
  %z_w1 = linalg.fill ins(%zero : f32) outs(%e_w1 : tensor<4x128x64xf32>) -> tensor<4x128x64xf32>
  %dw1 = linalg.batch_matmul
      indexing_maps = [affine_map<(e, m, n, k) -> (e, k, m)>,
                       affine_map<(e, m, n, k) -> (e, k, n)>,
                       affine_map<(e, m, n, k) -> (e, m, n)>]
      ins(%dh, %xe : tensor<4x32x128xf32>, tensor<4x32x64xf32>)
      outs(%z_w1 : tensor<4x128x64xf32>) -> tensor<4x128x64xf32>
  return %loss, %dw1, %dw2 : tensor<f32>, tensor<4x128x64xf32>, tensor<4x64x128xf32>
}

// -----

// JAX layout, [E, in, out]: the forward contracts the weight's dimension 1,
// which is `in` with weight-layout=in-out and `out` (a Dgrad) without.
// TABLE: #  role
// TABLE-NEXT: 1  dgrad  1  -  linalg.generic  8  16  4  2
// CHECK-LABEL: func @experts_in_out
// CHECK: linalg.generic {{.*}}fp4train.role = #fp4train.role<dgrad, weight = 1, operand = 1, contracted = 1>
// JAX-LABEL: func @experts_in_out
// JAX: linalg.generic {{.*}}fp4train.role = #fp4train.role<fprop, weight = 1, operand = 1, contracted = 1>
func.func @experts_in_out(%x: tensor<2x8x4xf32>, %w: tensor<2x4x16xf32> {fp4train.param},
                          %acc: tensor<2x8x16xf32>) -> tensor<2x8x16xf32> {
  %y = linalg.generic {
      indexing_maps = [affine_map<(e, m, n, k) -> (e, m, k)>,
                       affine_map<(e, m, n, k) -> (e, k, n)>,
                       affine_map<(e, m, n, k) -> (e, m, n)>],
      iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%x, %w : tensor<2x8x4xf32>, tensor<2x4x16xf32>) outs(%acc : tensor<2x8x16xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %c, %p : f32
    linalg.yield %s : f32
  } -> tensor<2x8x16xf32>
  return %y : tensor<2x8x16xf32>
}

// -----

// A rank-3 parameter whose first dimension is not a batch loop (here an M
// dimension) is no weight: the contraction is `other`.
// TABLE: #  role
// TABLE-NEXT: 1  other  -  -  linalg.generic
// CHECK-LABEL: func @not_experts
// CHECK-NOT: fp4train.role
func.func @not_experts(%p: tensor<2x8x4xf32> {fp4train.param}, %w: tensor<16x4xf32>,
                       %acc: tensor<2x8x16xf32>) -> tensor<2x8x16xf32> {
  %y = linalg.generic {
      indexing_maps = [affine_map<(m0, m1, n, k) -> (m0, m1, k)>,
                       affine_map<(m0, m1, n, k) -> (n, k)>,
                       affine_map<(m0, m1, n, k) -> (m0, m1, n)>],
      iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%p, %w : tensor<2x8x4xf32>, tensor<16x4xf32>) outs(%acc : tensor<2x8x16xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %q = arith.mulf %a, %b : f32
    %s = arith.addf %c, %q : f32
    linalg.yield %s : f32
  } -> tensor<2x8x16xf32>
  return %y : tensor<2x8x16xf32>
}
