// The expert half of a mixture-of-experts MLP, as a training step: the
// tokens a router dispatched to each of E = 4 experts (C = 32 slots each,
// width D = 64) go through that expert's W1 : [F = 128, D] and W2 : [D, F]
// (PyTorch layout per expert, stacked [E, out, in]) as batched GEMMs;
// the loss is a mean squared error against a target per slot. Role
// inference gives W1 Fprop and Wgrad (its input is data) and W2 Fprop,
// Dgrad and Wgrad, batched over the experts ([ROLE7]).
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
