// One SGD training step of a 3-layer MLP, written by hand in linalg on tensors:
// the model of mlp_train_step.mlir in JAX/Flax layout, where every weight is
// W : [in, out] and a layer computes Y = X · W + b (so Dgrad is dX = dY · Wᵀ
// and Wgrad is dW = Xᵀ · dY).
//
//   X  : [64, 32]   64 tokens of 32 features (the model input)
//   Z1 = X  · W1 + b1     W1 : [32, 64]   H1 = gelu(Z1) : [64, 64]
//   Z2 = H1 · W2 + b2     W2 : [64, 64]   H2 = gelu(Z2) : [64, 64]
//   Y  = H2 · W3 + b3     W3 : [64, 32]   Y : [64, 32]
//   loss = mean((Y − target)²)
//
// followed by the full backward pass and the update W ← W − lr·dW,
// b ← b − lr·db. gelu is the tanh approximation
//   gelu(z)  = ½·z·(1 + tanh(u)),  u = √(2/π)·(z + 0.044715·z³)
//   gelu'(z) = ½·(1 + tanh(u)) + ½·z·(1 − tanh²(u))·√(2/π)·(1 + 3·0.044715·z²)
//
// The eight contractions, in program order:
//   Fprop  Z1 = X · W1
//   Fprop  Z2 = H1 · W2
//   Fprop  Y  = H2 · W3
//   Wgrad  dW3 = H2ᵀ · dY    (H2 read transposed by the matmul's indexing maps)
//   Dgrad  dH2 = dY · W3ᵀ    (indexing maps)
//   Wgrad  dW2 = H1ᵀ · dZ2   (explicit linalg.transpose, then a plain matmul)
//   Dgrad  dH1 = dZ2 · W2ᵀ   (explicit linalg.transpose, then a plain matmul)
//   Wgrad  dW1 = Xᵀ · dZ1    (indexing maps)
// (no Dgrad for layer 1: the model input needs no gradient).
//
// %step is not used by the arithmetic: fp4train-quantize-matmuls derives its
// stochastic-rounding seeds and random Hadamard signs from it.

// C = A · Bᵀ
#a_mk = affine_map<(m, n, k) -> (m, k)>
#b_nk = affine_map<(m, n, k) -> (n, k)>
#c_mn = affine_map<(m, n, k) -> (m, n)>
// C = Aᵀ · B (contraction over the rows of both operands: the tokens)
#a_km = affine_map<(m, n, k) -> (k, m)>
#b_kn = affine_map<(m, n, k) -> (k, n)>
// Elementwise maps over [tokens, features].
#id = affine_map<(t, f) -> (t, f)>
#feat = affine_map<(t, f) -> (f)>
#scalar = affine_map<(t, f) -> ()>
// Elementwise map over a 1-D parameter.
#vec = affine_map<(f) -> (f)>

func.func @train_step(%x: tensor<64x32xf32>, %target: tensor<64x32xf32>,
                      %w1: tensor<32x64xf32> {fp4train.param},
                      %b1: tensor<64xf32> {fp4train.param},
                      %w2: tensor<64x64xf32> {fp4train.param},
                      %b2: tensor<64xf32> {fp4train.param},
                      %w3: tensor<64x32xf32> {fp4train.param},
                      %b3: tensor<32xf32> {fp4train.param},
                      %lr: f32, %step: i64)
    -> (tensor<f32>, tensor<32x64xf32>, tensor<64xf32>, tensor<64x64xf32>,
        tensor<64xf32>, tensor<64x32xf32>, tensor<32xf32>) {
  %zero = arith.constant 0.0 : f32
  %half = arith.constant 0.5 : f32
  %one = arith.constant 1.0 : f32
  %three = arith.constant 3.0 : f32
  %sqrt_2_over_pi = arith.constant 0.7978845608 : f32
  %gelu_cubic = arith.constant 0.044715 : f32
  // 1/N and 2/N for the N = 64·32 = 2048 elements of Y.
  %inv_n = arith.constant 4.8828125e-04 : f32
  %two_over_n = arith.constant 9.765625e-04 : f32

  %empty_64x64 = tensor.empty() : tensor<64x64xf32>
  %empty_64x32 = tensor.empty() : tensor<64x32xf32>
  %empty_32x64 = tensor.empty() : tensor<32x64xf32>
  %empty_64 = tensor.empty() : tensor<64xf32>
  %empty_32 = tensor.empty() : tensor<32xf32>
  %zeros_64x64 = linalg.fill ins(%zero : f32) outs(%empty_64x64 : tensor<64x64xf32>) -> tensor<64x64xf32>
  %zeros_64x32 = linalg.fill ins(%zero : f32) outs(%empty_64x32 : tensor<64x32xf32>) -> tensor<64x32xf32>
  %zeros_32x64 = linalg.fill ins(%zero : f32) outs(%empty_32x64 : tensor<32x64xf32>) -> tensor<32x64xf32>
  %zeros_64 = linalg.fill ins(%zero : f32) outs(%empty_64 : tensor<64xf32>) -> tensor<64xf32>
  %zeros_32 = linalg.fill ins(%zero : f32) outs(%empty_32 : tensor<32xf32>) -> tensor<32xf32>

  // ===================================================================== //
  // Forward
  // ===================================================================== //

  // ---- Layer 1: H1 = gelu(X · W1 + b1) ----
  // Fprop: X · W1
  %x_w1 = linalg.matmul ins(%x, %w1 : tensor<64x32xf32>, tensor<32x64xf32>)
      outs(%zeros_64x64 : tensor<64x64xf32>) -> tensor<64x64xf32>
  %z1 = linalg.generic {indexing_maps = [#id, #feat, #id],
                        iterator_types = ["parallel", "parallel"]}
      ins(%x_w1, %b1 : tensor<64x64xf32>, tensor<64xf32>)
      outs(%empty_64x64 : tensor<64x64xf32>) {
  ^bb0(%v: f32, %b: f32, %out: f32):
    %s = arith.addf %v, %b : f32
    linalg.yield %s : f32
  } -> tensor<64x64xf32>
  %h1 = linalg.generic {indexing_maps = [#id, #id],
                        iterator_types = ["parallel", "parallel"]}
      ins(%z1 : tensor<64x64xf32>) outs(%empty_64x64 : tensor<64x64xf32>) {
  ^bb0(%z: f32, %out: f32):
    %z2 = arith.mulf %z, %z : f32
    %z3 = arith.mulf %z2, %z : f32
    %cz3 = arith.mulf %gelu_cubic, %z3 : f32
    %inner = arith.addf %z, %cz3 : f32
    %u = arith.mulf %sqrt_2_over_pi, %inner : f32
    %t = math.tanh %u : f32
    %one_plus_t = arith.addf %one, %t : f32
    %half_z = arith.mulf %half, %z : f32
    %g = arith.mulf %half_z, %one_plus_t : f32
    linalg.yield %g : f32
  } -> tensor<64x64xf32>

  // ---- Layer 2: H2 = gelu(H1 · W2 + b2) ----
  // Fprop: H1 · W2
  %h1_w2 = linalg.matmul ins(%h1, %w2 : tensor<64x64xf32>, tensor<64x64xf32>)
      outs(%zeros_64x64 : tensor<64x64xf32>) -> tensor<64x64xf32>
  %z2 = linalg.generic {indexing_maps = [#id, #feat, #id],
                        iterator_types = ["parallel", "parallel"]}
      ins(%h1_w2, %b2 : tensor<64x64xf32>, tensor<64xf32>)
      outs(%empty_64x64 : tensor<64x64xf32>) {
  ^bb0(%v: f32, %b: f32, %out: f32):
    %s = arith.addf %v, %b : f32
    linalg.yield %s : f32
  } -> tensor<64x64xf32>
  %h2 = linalg.generic {indexing_maps = [#id, #id],
                        iterator_types = ["parallel", "parallel"]}
      ins(%z2 : tensor<64x64xf32>) outs(%empty_64x64 : tensor<64x64xf32>) {
  ^bb0(%z: f32, %out: f32):
    %z2_ = arith.mulf %z, %z : f32
    %z3 = arith.mulf %z2_, %z : f32
    %cz3 = arith.mulf %gelu_cubic, %z3 : f32
    %inner = arith.addf %z, %cz3 : f32
    %u = arith.mulf %sqrt_2_over_pi, %inner : f32
    %t = math.tanh %u : f32
    %one_plus_t = arith.addf %one, %t : f32
    %half_z = arith.mulf %half, %z : f32
    %g = arith.mulf %half_z, %one_plus_t : f32
    linalg.yield %g : f32
  } -> tensor<64x64xf32>

  // ---- Layer 3 (linear output): Y = H2 · W3 + b3 ----
  // Fprop: H2 · W3
  %h2_w3 = linalg.matmul ins(%h2, %w3 : tensor<64x64xf32>, tensor<64x32xf32>)
      outs(%zeros_64x32 : tensor<64x32xf32>) -> tensor<64x32xf32>
  %y = linalg.generic {indexing_maps = [#id, #feat, #id],
                       iterator_types = ["parallel", "parallel"]}
      ins(%h2_w3, %b3 : tensor<64x32xf32>, tensor<32xf32>)
      outs(%empty_64x32 : tensor<64x32xf32>) {
  ^bb0(%v: f32, %b: f32, %out: f32):
    %s = arith.addf %v, %b : f32
    linalg.yield %s : f32
  } -> tensor<64x32xf32>

  // ---- Loss: mean((Y − target)²) ----
  %loss_init = tensor.empty() : tensor<f32>
  %loss_zero = linalg.fill ins(%zero : f32) outs(%loss_init : tensor<f32>) -> tensor<f32>
  %loss = linalg.generic {indexing_maps = [#id, #id, #scalar],
                          iterator_types = ["reduction", "reduction"]}
      ins(%y, %target : tensor<64x32xf32>, tensor<64x32xf32>)
      outs(%loss_zero : tensor<f32>) {
  ^bb0(%yv: f32, %tv: f32, %acc: f32):
    %d = arith.subf %yv, %tv : f32
    %d2 = arith.mulf %d, %d : f32
    %term = arith.mulf %d2, %inv_n : f32
    %s = arith.addf %acc, %term : f32
    linalg.yield %s : f32
  } -> tensor<f32>

  // ===================================================================== //
  // Backward
  // ===================================================================== //

  // dY = ∂loss/∂Y = 2·(Y − target)/N
  %dy = linalg.generic {indexing_maps = [#id, #id, #id],
                        iterator_types = ["parallel", "parallel"]}
      ins(%y, %target : tensor<64x32xf32>, tensor<64x32xf32>)
      outs(%empty_64x32 : tensor<64x32xf32>) {
  ^bb0(%yv: f32, %tv: f32, %out: f32):
    %d = arith.subf %yv, %tv : f32
    %g = arith.mulf %d, %two_over_n : f32
    linalg.yield %g : f32
  } -> tensor<64x32xf32>

  // ---- Layer 3 ----
  // Wgrad: dW3 = H2ᵀ · dY (contraction over the tokens, by the indexing maps)
  %dw3 = linalg.matmul indexing_maps = [#a_km, #b_kn, #c_mn]
      ins(%h2, %dy : tensor<64x64xf32>, tensor<64x32xf32>)
      outs(%zeros_64x32 : tensor<64x32xf32>) -> tensor<64x32xf32>
  // db3 = Σ_tokens dY
  %db3 = linalg.generic {indexing_maps = [#id, #feat],
                         iterator_types = ["reduction", "parallel"]}
      ins(%dy : tensor<64x32xf32>) outs(%zeros_32 : tensor<32xf32>) {
  ^bb0(%g: f32, %acc: f32):
    %s = arith.addf %acc, %g : f32
    linalg.yield %s : f32
  } -> tensor<32xf32>
  // Dgrad: dH2 = dY · W3ᵀ (W3 transposed by the indexing maps)
  %dh2 = linalg.matmul indexing_maps = [#a_mk, #b_nk, #c_mn]
      ins(%dy, %w3 : tensor<64x32xf32>, tensor<64x32xf32>)
      outs(%zeros_64x64 : tensor<64x64xf32>) -> tensor<64x64xf32>

  // ---- Layer 2 ----
  // dZ2 = dH2 ⊙ gelu'(Z2)
  %dz2 = linalg.generic {indexing_maps = [#id, #id, #id],
                         iterator_types = ["parallel", "parallel"]}
      ins(%dh2, %z2 : tensor<64x64xf32>, tensor<64x64xf32>)
      outs(%empty_64x64 : tensor<64x64xf32>) {
  ^bb0(%g: f32, %z: f32, %out: f32):
    %z2_ = arith.mulf %z, %z : f32
    %z3 = arith.mulf %z2_, %z : f32
    %cz3 = arith.mulf %gelu_cubic, %z3 : f32
    %inner = arith.addf %z, %cz3 : f32
    %u = arith.mulf %sqrt_2_over_pi, %inner : f32
    %t = math.tanh %u : f32
    // ½·(1 + t)
    %one_plus_t = arith.addf %one, %t : f32
    %left = arith.mulf %half, %one_plus_t : f32
    // ½·z·(1 − t²)·√(2/π)·(1 + 3·0.044715·z²)
    %t2 = arith.mulf %t, %t : f32
    %sech2 = arith.subf %one, %t2 : f32
    %c3 = arith.mulf %three, %gelu_cubic : f32
    %c3z2 = arith.mulf %c3, %z2_ : f32
    %du_dz_raw = arith.addf %one, %c3z2 : f32
    %du_dz = arith.mulf %sqrt_2_over_pi, %du_dz_raw : f32
    %half_z = arith.mulf %half, %z : f32
    %right_a = arith.mulf %half_z, %sech2 : f32
    %right = arith.mulf %right_a, %du_dz : f32
    %dgelu = arith.addf %left, %right : f32
    %dz = arith.mulf %g, %dgelu : f32
    linalg.yield %dz : f32
  } -> tensor<64x64xf32>
  // Wgrad: dW2 = H1ᵀ · dZ2 (explicit transpose of H1, then a plain matmul)
  %h1t = linalg.transpose ins(%h1 : tensor<64x64xf32>)
      outs(%empty_64x64 : tensor<64x64xf32>) permutation = [1, 0]
  %dw2 = linalg.matmul ins(%h1t, %dz2 : tensor<64x64xf32>, tensor<64x64xf32>)
      outs(%zeros_64x64 : tensor<64x64xf32>) -> tensor<64x64xf32>
  // db2 = Σ_tokens dZ2
  %db2 = linalg.generic {indexing_maps = [#id, #feat],
                         iterator_types = ["reduction", "parallel"]}
      ins(%dz2 : tensor<64x64xf32>) outs(%zeros_64 : tensor<64xf32>) {
  ^bb0(%g: f32, %acc: f32):
    %s = arith.addf %acc, %g : f32
    linalg.yield %s : f32
  } -> tensor<64xf32>
  // Dgrad: dH1 = dZ2 · W2ᵀ (explicit transpose of W2, then a plain matmul)
  %w2t = linalg.transpose ins(%w2 : tensor<64x64xf32>)
      outs(%empty_64x64 : tensor<64x64xf32>) permutation = [1, 0]
  %dh1 = linalg.matmul ins(%dz2, %w2t : tensor<64x64xf32>, tensor<64x64xf32>)
      outs(%zeros_64x64 : tensor<64x64xf32>) -> tensor<64x64xf32>

  // ---- Layer 1 ----
  // dZ1 = dH1 ⊙ gelu'(Z1)
  %dz1 = linalg.generic {indexing_maps = [#id, #id, #id],
                         iterator_types = ["parallel", "parallel"]}
      ins(%dh1, %z1 : tensor<64x64xf32>, tensor<64x64xf32>)
      outs(%empty_64x64 : tensor<64x64xf32>) {
  ^bb0(%g: f32, %z: f32, %out: f32):
    %z2_ = arith.mulf %z, %z : f32
    %z3 = arith.mulf %z2_, %z : f32
    %cz3 = arith.mulf %gelu_cubic, %z3 : f32
    %inner = arith.addf %z, %cz3 : f32
    %u = arith.mulf %sqrt_2_over_pi, %inner : f32
    %t = math.tanh %u : f32
    // ½·(1 + t)
    %one_plus_t = arith.addf %one, %t : f32
    %left = arith.mulf %half, %one_plus_t : f32
    // ½·z·(1 − t²)·√(2/π)·(1 + 3·0.044715·z²)
    %t2 = arith.mulf %t, %t : f32
    %sech2 = arith.subf %one, %t2 : f32
    %c3 = arith.mulf %three, %gelu_cubic : f32
    %c3z2 = arith.mulf %c3, %z2_ : f32
    %du_dz_raw = arith.addf %one, %c3z2 : f32
    %du_dz = arith.mulf %sqrt_2_over_pi, %du_dz_raw : f32
    %half_z = arith.mulf %half, %z : f32
    %right_a = arith.mulf %half_z, %sech2 : f32
    %right = arith.mulf %right_a, %du_dz : f32
    %dgelu = arith.addf %left, %right : f32
    %dz = arith.mulf %g, %dgelu : f32
    linalg.yield %dz : f32
  } -> tensor<64x64xf32>
  // Wgrad: dW1 = Xᵀ · dZ1 (contraction over the tokens, by the indexing maps)
  %dw1 = linalg.matmul indexing_maps = [#a_km, #b_kn, #c_mn]
      ins(%x, %dz1 : tensor<64x32xf32>, tensor<64x64xf32>)
      outs(%zeros_32x64 : tensor<32x64xf32>) -> tensor<32x64xf32>
  // db1 = Σ_tokens dZ1
  %db1 = linalg.generic {indexing_maps = [#id, #feat],
                         iterator_types = ["reduction", "parallel"]}
      ins(%dz1 : tensor<64x64xf32>) outs(%zeros_64 : tensor<64xf32>) {
  ^bb0(%g: f32, %acc: f32):
    %s = arith.addf %acc, %g : f32
    linalg.yield %s : f32
  } -> tensor<64xf32>

  // ===================================================================== //
  // SGD update: P ← P − lr·dP
  // ===================================================================== //
  %w1_new = linalg.generic {indexing_maps = [#id, #id, #id],
                            iterator_types = ["parallel", "parallel"]}
      ins(%w1, %dw1 : tensor<32x64xf32>, tensor<32x64xf32>)
      outs(%empty_32x64 : tensor<32x64xf32>) {
  ^bb0(%p: f32, %g: f32, %out: f32):
    %delta = arith.mulf %lr, %g : f32
    %p_new = arith.subf %p, %delta : f32
    linalg.yield %p_new : f32
  } -> tensor<32x64xf32>
  %b1_new = linalg.generic {indexing_maps = [#vec, #vec, #vec],
                            iterator_types = ["parallel"]}
      ins(%b1, %db1 : tensor<64xf32>, tensor<64xf32>)
      outs(%empty_64 : tensor<64xf32>) {
  ^bb0(%p: f32, %g: f32, %out: f32):
    %delta = arith.mulf %lr, %g : f32
    %p_new = arith.subf %p, %delta : f32
    linalg.yield %p_new : f32
  } -> tensor<64xf32>
  %w2_new = linalg.generic {indexing_maps = [#id, #id, #id],
                            iterator_types = ["parallel", "parallel"]}
      ins(%w2, %dw2 : tensor<64x64xf32>, tensor<64x64xf32>)
      outs(%empty_64x64 : tensor<64x64xf32>) {
  ^bb0(%p: f32, %g: f32, %out: f32):
    %delta = arith.mulf %lr, %g : f32
    %p_new = arith.subf %p, %delta : f32
    linalg.yield %p_new : f32
  } -> tensor<64x64xf32>
  %b2_new = linalg.generic {indexing_maps = [#vec, #vec, #vec],
                            iterator_types = ["parallel"]}
      ins(%b2, %db2 : tensor<64xf32>, tensor<64xf32>)
      outs(%empty_64 : tensor<64xf32>) {
  ^bb0(%p: f32, %g: f32, %out: f32):
    %delta = arith.mulf %lr, %g : f32
    %p_new = arith.subf %p, %delta : f32
    linalg.yield %p_new : f32
  } -> tensor<64xf32>
  %w3_new = linalg.generic {indexing_maps = [#id, #id, #id],
                            iterator_types = ["parallel", "parallel"]}
      ins(%w3, %dw3 : tensor<64x32xf32>, tensor<64x32xf32>)
      outs(%empty_64x32 : tensor<64x32xf32>) {
  ^bb0(%p: f32, %g: f32, %out: f32):
    %delta = arith.mulf %lr, %g : f32
    %p_new = arith.subf %p, %delta : f32
    linalg.yield %p_new : f32
  } -> tensor<64x32xf32>
  %b3_new = linalg.generic {indexing_maps = [#vec, #vec, #vec],
                            iterator_types = ["parallel"]}
      ins(%b3, %db3 : tensor<32xf32>, tensor<32xf32>)
      outs(%empty_32 : tensor<32xf32>) {
  ^bb0(%p: f32, %g: f32, %out: f32):
    %delta = arith.mulf %lr, %g : f32
    %p_new = arith.subf %p, %delta : f32
    linalg.yield %p_new : f32
  } -> tensor<32xf32>

  return %loss, %w1_new, %b1_new, %w2_new, %b2_new, %w3_new, %b3_new
      : tensor<f32>, tensor<32x64xf32>, tensor<64xf32>, tensor<64x64xf32>,
        tensor<64xf32>, tensor<64x32xf32>, tensor<32xf32>
}
