// One training step (forward, loss and full backward) of a pre-norm decoder
// block, written by hand in linalg on tensors. PyTorch layout: every weight is
// W : [out, in] and a linear layer computes Y = X · Wᵀ.
//
//   X : [T, D] = [32, 64]  32 tokens, model width 64, 4 heads of 16, MLP width 128
//
//   Xn = rmsnorm(X) ⊙ g1                    g1 : [64]
//   Q = Xn · Wqᵀ,  K = Xn · Wkᵀ,  V = Xn · Wvᵀ    Wq, Wk, Wv : [64, 64]
//   per head h:  S = Q_h · K_hᵀ / √16,  causal mask (key j > query i: −inf),
//                P = softmax(S) along the keys,  O_h = P · V_h
//   O = the heads merged back to [32, 64]
//   H = X + O · Woᵀ                          Wo : [64, 64]
//   Hn = rmsnorm(H) ⊙ g2                     g2 : [64]
//   U = Hn · W1ᵀ,  G = gelu(U),  Y = H + G · W2ᵀ    W1 : [128, 64], W2 : [64, 128]
//   loss = mean((Y − target)²)
//
// rmsnorm(x) = x · r,  r = 1/√(mean_d(x²) + 1e-5), per token. gelu is the tanh
// approximation (see mlp_train_step.mlir). The step returns the loss and the
// gradient of every parameter, each with its parameter's shape.
//
// The 25 contractions, in program order (heads are the batch dimension of the
// batch_matmuls):
//   Fprop  Q = Xn · Wqᵀ         (Wq read transposed by the indexing maps)
//   Fprop  K = Xn · Wkᵀ         (indexing maps)
//   Fprop  V = Xn · Wvᵀ         (explicit linalg.transpose of Wv)
//   other  S = Q_h · K_hᵀ       (batch_matmul)
//   other  O_h = P · V_h        (batch_matmul)
//   Fprop  O · Woᵀ              (indexing maps)
//   Fprop  U = Hn · W1ᵀ         (explicit linalg.transpose of W1)
//   Fprop  G · W2ᵀ              (indexing maps)
//   Wgrad  dW2 = dYᵀ · G        (indexing maps)
//   Dgrad  dG = dY · W2
//   Wgrad  dW1 = dUᵀ · Hn       (explicit linalg.transpose of dU)
//   Dgrad  dHn = dU · W1
//   Wgrad  dWo = dHᵀ · O        (indexing maps)
//   Dgrad  dO = dH · Wo
//   other  dP = dO_h · V_hᵀ     (batch_matmul)
//   other  dV_h = Pᵀ · dO_h     (batch_matmul)
//   other  Σ_keys dP ⊙ P        (softmax backward: a linalg.generic row-wise dot
//                                product, which is a contraction too)
//   other  dQ_h = dS · K_h      (batch_matmul)
//   other  dK_h = dSᵀ · Q_h     (batch_matmul)
//   Wgrad  dWq = dQᵀ · Xn       (indexing maps)
//   Wgrad  dWk = dKᵀ · Xn       (indexing maps)
//   Wgrad  dWv = dVᵀ · Xn       (explicit linalg.transpose of dV)
//   Dgrad  dXn = dQ · Wq
//   Dgrad  dXn += dK · Wk       (accumulates into the previous result)
//   Dgrad  dXn += dV · Wv       (accumulates into the previous result)
// (no gradient for the block's input X: it is the model input here).
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
#tok = affine_map<(t, f) -> (t)>
#feat = affine_map<(t, f) -> (f)>
#scalar = affine_map<(t, f) -> ()>
// Elementwise maps over [heads, queries, keys].
#id3 = affine_map<(h, i, j) -> (h, i, j)>
#query = affine_map<(h, i, j) -> (h, i)>
#vec = affine_map<(t) -> (t)>

func.func @train_step(%x: tensor<32x64xf32>, %target: tensor<32x64xf32>,
                      %g1: tensor<64xf32> {fp4train.param},
                      %wq: tensor<64x64xf32> {fp4train.param},
                      %wk: tensor<64x64xf32> {fp4train.param},
                      %wv: tensor<64x64xf32> {fp4train.param},
                      %wo: tensor<64x64xf32> {fp4train.param},
                      %g2: tensor<64xf32> {fp4train.param},
                      %w1: tensor<128x64xf32> {fp4train.param},
                      %w2: tensor<64x128xf32> {fp4train.param},
                      %step: i64)
    -> (tensor<f32>, tensor<64xf32>, tensor<64x64xf32>, tensor<64x64xf32>,
        tensor<64x64xf32>, tensor<64x64xf32>, tensor<64xf32>, tensor<128x64xf32>,
        tensor<64x128xf32>) {
  %zero = arith.constant 0.0 : f32
  %half = arith.constant 0.5 : f32
  %one = arith.constant 1.0 : f32
  %three = arith.constant 3.0 : f32
  %minus_inf = arith.constant 0xFF800000 : f32
  %norm_eps = arith.constant 1.0e-05 : f32
  %inv_d = arith.constant 0.015625 : f32             // 1/D = 1/64
  %inv_sqrt_dh = arith.constant 0.25 : f32           // 1/√16
  %sqrt_2_over_pi = arith.constant 0.7978845608 : f32
  %gelu_cubic = arith.constant 0.044715 : f32
  // 1/N and 2/N for the N = 32·64 = 2048 elements of Y.
  %inv_n = arith.constant 4.8828125e-04 : f32
  %two_over_n = arith.constant 9.765625e-04 : f32

  %empty_32x64 = tensor.empty() : tensor<32x64xf32>
  %empty_64x32 = tensor.empty() : tensor<64x32xf32>
  %empty_64x64 = tensor.empty() : tensor<64x64xf32>
  %empty_32x128 = tensor.empty() : tensor<32x128xf32>
  %empty_128x32 = tensor.empty() : tensor<128x32xf32>
  %empty_128x64 = tensor.empty() : tensor<128x64xf32>
  %empty_64x128 = tensor.empty() : tensor<64x128xf32>
  %empty_32 = tensor.empty() : tensor<32xf32>
  %empty_64 = tensor.empty() : tensor<64xf32>
  %empty_heads = tensor.empty() : tensor<4x32x16xf32>
  %empty_heads_t = tensor.empty() : tensor<4x16x32xf32>
  %empty_tokens_heads = tensor.empty() : tensor<32x4x16xf32>
  %empty_scores = tensor.empty() : tensor<4x32x32xf32>
  %empty_4x32 = tensor.empty() : tensor<4x32xf32>
  %zeros_32x64 = linalg.fill ins(%zero : f32) outs(%empty_32x64 : tensor<32x64xf32>) -> tensor<32x64xf32>
  %zeros_64x64 = linalg.fill ins(%zero : f32) outs(%empty_64x64 : tensor<64x64xf32>) -> tensor<64x64xf32>
  %zeros_32x128 = linalg.fill ins(%zero : f32) outs(%empty_32x128 : tensor<32x128xf32>) -> tensor<32x128xf32>
  %zeros_128x64 = linalg.fill ins(%zero : f32) outs(%empty_128x64 : tensor<128x64xf32>) -> tensor<128x64xf32>
  %zeros_64x128 = linalg.fill ins(%zero : f32) outs(%empty_64x128 : tensor<64x128xf32>) -> tensor<64x128xf32>
  %zeros_32 = linalg.fill ins(%zero : f32) outs(%empty_32 : tensor<32xf32>) -> tensor<32xf32>
  %zeros_64 = linalg.fill ins(%zero : f32) outs(%empty_64 : tensor<64xf32>) -> tensor<64xf32>
  %zeros_heads = linalg.fill ins(%zero : f32) outs(%empty_heads : tensor<4x32x16xf32>) -> tensor<4x32x16xf32>
  %zeros_scores = linalg.fill ins(%zero : f32) outs(%empty_scores : tensor<4x32x32xf32>) -> tensor<4x32x32xf32>
  %zeros_4x32 = linalg.fill ins(%zero : f32) outs(%empty_4x32 : tensor<4x32xf32>) -> tensor<4x32xf32>
  %minus_infs_4x32 = linalg.fill ins(%minus_inf : f32) outs(%empty_4x32 : tensor<4x32xf32>) -> tensor<4x32xf32>

  // ===================================================================== //
  // Forward
  // ===================================================================== //

  // ---- RMSNorm 1: Xn = X · r1 ⊙ g1, r1 = 1/√(mean_d(X²) + ε) ----
  %x_sumsq = linalg.generic {indexing_maps = [#id, #tok],
                             iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<32x64xf32>) outs(%zeros_32 : tensor<32xf32>) {
  ^bb0(%act: f32, %acc: f32):
    %act2 = arith.mulf %act, %act : f32
    %s = arith.addf %acc, %act2 : f32
    linalg.yield %s : f32
  } -> tensor<32xf32>
  %r1 = linalg.generic {indexing_maps = [#vec, #vec], iterator_types = ["parallel"]}
      ins(%x_sumsq : tensor<32xf32>) outs(%empty_32 : tensor<32xf32>) {
  ^bb0(%ss: f32, %out: f32):
    %mean = arith.mulf %ss, %inv_d : f32
    %mean_eps = arith.addf %mean, %norm_eps : f32
    %r = math.rsqrt %mean_eps : f32
    linalg.yield %r : f32
  } -> tensor<32xf32>
  %xn = linalg.generic {indexing_maps = [#id, #tok, #feat, #id],
                        iterator_types = ["parallel", "parallel"]}
      ins(%x, %r1, %g1 : tensor<32x64xf32>, tensor<32xf32>, tensor<64xf32>)
      outs(%empty_32x64 : tensor<32x64xf32>) {
  ^bb0(%act: f32, %r: f32, %g: f32, %out: f32):
    %act_r = arith.mulf %act, %r : f32
    %act_rg = arith.mulf %act_r, %g : f32
    linalg.yield %act_rg : f32
  } -> tensor<32x64xf32>

  // ---- Q, K, V projections ----
  // Fprop: Q = Xn · Wqᵀ (Wq transposed by the indexing maps)
  %q = linalg.matmul indexing_maps = [#a_mk, #b_nk, #c_mn]
      ins(%xn, %wq : tensor<32x64xf32>, tensor<64x64xf32>)
      outs(%zeros_32x64 : tensor<32x64xf32>) -> tensor<32x64xf32>
  // Fprop: K = Xn · Wkᵀ (Wk transposed by the indexing maps)
  %k = linalg.matmul indexing_maps = [#a_mk, #b_nk, #c_mn]
      ins(%xn, %wk : tensor<32x64xf32>, tensor<64x64xf32>)
      outs(%zeros_32x64 : tensor<32x64xf32>) -> tensor<32x64xf32>
  // Fprop: V = Xn · Wvᵀ (explicit transpose of Wv, then a plain matmul)
  %wv_t = linalg.transpose ins(%wv : tensor<64x64xf32>)
      outs(%empty_64x64 : tensor<64x64xf32>) permutation = [1, 0]
  %v = linalg.matmul ins(%xn, %wv_t : tensor<32x64xf32>, tensor<64x64xf32>)
      outs(%zeros_32x64 : tensor<32x64xf32>) -> tensor<32x64xf32>

  // ---- Split heads: [32, 64] → [32, 4, 16] → [4, 32, 16] (Kᵀ: [4, 16, 32]) ----
  %q_split = tensor.expand_shape %q [[0], [1, 2]] output_shape [32, 4, 16]
      : tensor<32x64xf32> into tensor<32x4x16xf32>
  %q_heads = linalg.transpose ins(%q_split : tensor<32x4x16xf32>)
      outs(%empty_heads : tensor<4x32x16xf32>) permutation = [1, 0, 2]
  %k_split = tensor.expand_shape %k [[0], [1, 2]] output_shape [32, 4, 16]
      : tensor<32x64xf32> into tensor<32x4x16xf32>
  %k_heads = linalg.transpose ins(%k_split : tensor<32x4x16xf32>)
      outs(%empty_heads : tensor<4x32x16xf32>) permutation = [1, 0, 2]
  %k_heads_t = linalg.transpose ins(%k_split : tensor<32x4x16xf32>)
      outs(%empty_heads_t : tensor<4x16x32xf32>) permutation = [1, 2, 0]
  %v_split = tensor.expand_shape %v [[0], [1, 2]] output_shape [32, 4, 16]
      : tensor<32x64xf32> into tensor<32x4x16xf32>
  %v_heads = linalg.transpose ins(%v_split : tensor<32x4x16xf32>)
      outs(%empty_heads : tensor<4x32x16xf32>) permutation = [1, 0, 2]

  // ---- Causal softmax attention ----
  // Attention scores: Q_h · K_hᵀ
  %qk = linalg.batch_matmul
      ins(%q_heads, %k_heads_t : tensor<4x32x16xf32>, tensor<4x16x32xf32>)
      outs(%zeros_scores : tensor<4x32x32xf32>) -> tensor<4x32x32xf32>
  // S = Q_h · K_hᵀ / √16, with −inf where the key comes after the query.
  %scores = linalg.generic {indexing_maps = [#id3, #id3],
                            iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%qk : tensor<4x32x32xf32>) outs(%empty_scores : tensor<4x32x32xf32>) {
  ^bb0(%s: f32, %out: f32):
    %i = linalg.index 1 : index
    %j = linalg.index 2 : index
    %future = arith.cmpi ugt, %j, %i : index
    %scaled = arith.mulf %s, %inv_sqrt_dh : f32
    %masked = arith.select %future, %minus_inf, %scaled : f32
    linalg.yield %masked : f32
  } -> tensor<4x32x32xf32>
  // P = softmax(S) along the keys: exp(S − max) / Σ exp(S − max).
  %row_max = linalg.generic {indexing_maps = [#id3, #query],
                             iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%scores : tensor<4x32x32xf32>) outs(%minus_infs_4x32 : tensor<4x32xf32>) {
  ^bb0(%s: f32, %acc: f32):
    %m = arith.maximumf %acc, %s : f32
    linalg.yield %m : f32
  } -> tensor<4x32xf32>
  %exp_scores = linalg.generic {indexing_maps = [#id3, #query, #id3],
                                iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%scores, %row_max : tensor<4x32x32xf32>, tensor<4x32xf32>)
      outs(%empty_scores : tensor<4x32x32xf32>) {
  ^bb0(%s: f32, %m: f32, %out: f32):
    %shifted = arith.subf %s, %m : f32
    %e = math.exp %shifted : f32
    linalg.yield %e : f32
  } -> tensor<4x32x32xf32>
  %row_sum = linalg.generic {indexing_maps = [#id3, #query],
                             iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%exp_scores : tensor<4x32x32xf32>) outs(%zeros_4x32 : tensor<4x32xf32>) {
  ^bb0(%e: f32, %acc: f32):
    %s = arith.addf %acc, %e : f32
    linalg.yield %s : f32
  } -> tensor<4x32xf32>
  %probs = linalg.generic {indexing_maps = [#id3, #query, #id3],
                           iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%exp_scores, %row_sum : tensor<4x32x32xf32>, tensor<4x32xf32>)
      outs(%empty_scores : tensor<4x32x32xf32>) {
  ^bb0(%e: f32, %sum: f32, %out: f32):
    %p = arith.divf %e, %sum : f32
    linalg.yield %p : f32
  } -> tensor<4x32x32xf32>
  // O_h = P · V_h
  %o_heads = linalg.batch_matmul
      ins(%probs, %v_heads : tensor<4x32x32xf32>, tensor<4x32x16xf32>)
      outs(%zeros_heads : tensor<4x32x16xf32>) -> tensor<4x32x16xf32>

  // ---- Merge heads: [4, 32, 16] → [32, 4, 16] → [32, 64] ----
  %o_split = linalg.transpose ins(%o_heads : tensor<4x32x16xf32>)
      outs(%empty_tokens_heads : tensor<32x4x16xf32>) permutation = [1, 0, 2]
  %o = tensor.collapse_shape %o_split [[0], [1, 2]]
      : tensor<32x4x16xf32> into tensor<32x64xf32>

  // ---- Output projection and residual: H = X + O · Woᵀ ----
  // Fprop: O · Woᵀ (Wo transposed by the indexing maps)
  %attn_out = linalg.matmul indexing_maps = [#a_mk, #b_nk, #c_mn]
      ins(%o, %wo : tensor<32x64xf32>, tensor<64x64xf32>)
      outs(%zeros_32x64 : tensor<32x64xf32>) -> tensor<32x64xf32>
  %h = linalg.generic {indexing_maps = [#id, #id, #id],
                       iterator_types = ["parallel", "parallel"]}
      ins(%x, %attn_out : tensor<32x64xf32>, tensor<32x64xf32>)
      outs(%empty_32x64 : tensor<32x64xf32>) {
  ^bb0(%a: f32, %b: f32, %out: f32):
    %s = arith.addf %a, %b : f32
    linalg.yield %s : f32
  } -> tensor<32x64xf32>

  // ---- RMSNorm 2: Hn = H · r2 ⊙ g2 ----
  %h_sumsq = linalg.generic {indexing_maps = [#id, #tok],
                             iterator_types = ["parallel", "reduction"]}
      ins(%h : tensor<32x64xf32>) outs(%zeros_32 : tensor<32xf32>) {
  ^bb0(%act: f32, %acc: f32):
    %act2 = arith.mulf %act, %act : f32
    %s = arith.addf %acc, %act2 : f32
    linalg.yield %s : f32
  } -> tensor<32xf32>
  %r2 = linalg.generic {indexing_maps = [#vec, #vec], iterator_types = ["parallel"]}
      ins(%h_sumsq : tensor<32xf32>) outs(%empty_32 : tensor<32xf32>) {
  ^bb0(%ss: f32, %out: f32):
    %mean = arith.mulf %ss, %inv_d : f32
    %mean_eps = arith.addf %mean, %norm_eps : f32
    %r = math.rsqrt %mean_eps : f32
    linalg.yield %r : f32
  } -> tensor<32xf32>
  %hn = linalg.generic {indexing_maps = [#id, #tok, #feat, #id],
                        iterator_types = ["parallel", "parallel"]}
      ins(%h, %r2, %g2 : tensor<32x64xf32>, tensor<32xf32>, tensor<64xf32>)
      outs(%empty_32x64 : tensor<32x64xf32>) {
  ^bb0(%act: f32, %r: f32, %g: f32, %out: f32):
    %act_r = arith.mulf %act, %r : f32
    %act_rg = arith.mulf %act_r, %g : f32
    linalg.yield %act_rg : f32
  } -> tensor<32x64xf32>

  // ---- MLP and residual: Y = H + gelu(Hn · W1ᵀ) · W2ᵀ ----
  // Fprop: U = Hn · W1ᵀ (explicit transpose of W1, then a plain matmul)
  %w1_t = linalg.transpose ins(%w1 : tensor<128x64xf32>)
      outs(%empty_64x128 : tensor<64x128xf32>) permutation = [1, 0]
  %u = linalg.matmul ins(%hn, %w1_t : tensor<32x64xf32>, tensor<64x128xf32>)
      outs(%zeros_32x128 : tensor<32x128xf32>) -> tensor<32x128xf32>
  %gu = linalg.generic {indexing_maps = [#id, #id],
                        iterator_types = ["parallel", "parallel"]}
      ins(%u : tensor<32x128xf32>) outs(%empty_32x128 : tensor<32x128xf32>) {
  ^bb0(%z: f32, %out: f32):
    %z2 = arith.mulf %z, %z : f32
    %z3 = arith.mulf %z2, %z : f32
    %cz3 = arith.mulf %gelu_cubic, %z3 : f32
    %inner = arith.addf %z, %cz3 : f32
    %arg = arith.mulf %sqrt_2_over_pi, %inner : f32
    %t = math.tanh %arg : f32
    %one_plus_t = arith.addf %one, %t : f32
    %half_z = arith.mulf %half, %z : f32
    %g = arith.mulf %half_z, %one_plus_t : f32
    linalg.yield %g : f32
  } -> tensor<32x128xf32>
  // Fprop: G · W2ᵀ (W2 transposed by the indexing maps)
  %mlp_out = linalg.matmul indexing_maps = [#a_mk, #b_nk, #c_mn]
      ins(%gu, %w2 : tensor<32x128xf32>, tensor<64x128xf32>)
      outs(%zeros_32x64 : tensor<32x64xf32>) -> tensor<32x64xf32>
  %y = linalg.generic {indexing_maps = [#id, #id, #id],
                       iterator_types = ["parallel", "parallel"]}
      ins(%h, %mlp_out : tensor<32x64xf32>, tensor<32x64xf32>)
      outs(%empty_32x64 : tensor<32x64xf32>) {
  ^bb0(%a: f32, %b: f32, %out: f32):
    %s = arith.addf %a, %b : f32
    linalg.yield %s : f32
  } -> tensor<32x64xf32>

  // ---- Loss: mean((Y − target)²) ----
  %loss_init = tensor.empty() : tensor<f32>
  %loss_zero = linalg.fill ins(%zero : f32) outs(%loss_init : tensor<f32>) -> tensor<f32>
  %loss = linalg.generic {indexing_maps = [#id, #id, #scalar],
                          iterator_types = ["reduction", "reduction"]}
      ins(%y, %target : tensor<32x64xf32>, tensor<32x64xf32>)
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

  // dY = ∂loss/∂Y = 2·(Y − target)/N; it is also the gradient of the MLP's
  // output and, through the residual, part of dH.
  %dy = linalg.generic {indexing_maps = [#id, #id, #id],
                        iterator_types = ["parallel", "parallel"]}
      ins(%y, %target : tensor<32x64xf32>, tensor<32x64xf32>)
      outs(%empty_32x64 : tensor<32x64xf32>) {
  ^bb0(%yv: f32, %tv: f32, %out: f32):
    %d = arith.subf %yv, %tv : f32
    %g = arith.mulf %d, %two_over_n : f32
    linalg.yield %g : f32
  } -> tensor<32x64xf32>

  // ---- MLP ----
  // Wgrad: dW2 = dYᵀ · G (contraction over the tokens, by the indexing maps)
  %dw2 = linalg.matmul indexing_maps = [#a_km, #b_kn, #c_mn]
      ins(%dy, %gu : tensor<32x64xf32>, tensor<32x128xf32>)
      outs(%zeros_64x128 : tensor<64x128xf32>) -> tensor<64x128xf32>
  // Dgrad: dG = dY · W2
  %dgu = linalg.matmul ins(%dy, %w2 : tensor<32x64xf32>, tensor<64x128xf32>)
      outs(%zeros_32x128 : tensor<32x128xf32>) -> tensor<32x128xf32>
  // dU = dG ⊙ gelu'(U)
  %du = linalg.generic {indexing_maps = [#id, #id, #id],
                        iterator_types = ["parallel", "parallel"]}
      ins(%dgu, %u : tensor<32x128xf32>, tensor<32x128xf32>)
      outs(%empty_32x128 : tensor<32x128xf32>) {
  ^bb0(%g: f32, %z: f32, %out: f32):
    %z2 = arith.mulf %z, %z : f32
    %z3 = arith.mulf %z2, %z : f32
    %cz3 = arith.mulf %gelu_cubic, %z3 : f32
    %inner = arith.addf %z, %cz3 : f32
    %arg = arith.mulf %sqrt_2_over_pi, %inner : f32
    %t = math.tanh %arg : f32
    // ½·(1 + t)
    %one_plus_t = arith.addf %one, %t : f32
    %left = arith.mulf %half, %one_plus_t : f32
    // ½·z·(1 − t²)·√(2/π)·(1 + 3·0.044715·z²)
    %t2 = arith.mulf %t, %t : f32
    %sech2 = arith.subf %one, %t2 : f32
    %c3 = arith.mulf %three, %gelu_cubic : f32
    %c3z2 = arith.mulf %c3, %z2 : f32
    %darg_raw = arith.addf %one, %c3z2 : f32
    %darg = arith.mulf %sqrt_2_over_pi, %darg_raw : f32
    %half_z = arith.mulf %half, %z : f32
    %right_a = arith.mulf %half_z, %sech2 : f32
    %right = arith.mulf %right_a, %darg : f32
    %dgelu = arith.addf %left, %right : f32
    %dz = arith.mulf %g, %dgelu : f32
    linalg.yield %dz : f32
  } -> tensor<32x128xf32>
  // Wgrad: dW1 = dUᵀ · Hn (explicit transpose of dU, then a plain matmul)
  %du_t = linalg.transpose ins(%du : tensor<32x128xf32>)
      outs(%empty_128x32 : tensor<128x32xf32>) permutation = [1, 0]
  %dw1 = linalg.matmul ins(%du_t, %hn : tensor<128x32xf32>, tensor<32x64xf32>)
      outs(%zeros_128x64 : tensor<128x64xf32>) -> tensor<128x64xf32>
  // Dgrad: dHn = dU · W1
  %dhn = linalg.matmul ins(%du, %w1 : tensor<32x128xf32>, tensor<128x64xf32>)
      outs(%zeros_32x64 : tensor<32x64xf32>) -> tensor<32x64xf32>

  // ---- RMSNorm 2 ----
  // dg2 = Σ_tokens dHn ⊙ H · r2
  %dg2 = linalg.generic {indexing_maps = [#id, #id, #tok, #feat],
                         iterator_types = ["reduction", "parallel"]}
      ins(%dhn, %h, %r2 : tensor<32x64xf32>, tensor<32x64xf32>, tensor<32xf32>)
      outs(%zeros_64 : tensor<64xf32>) {
  ^bb0(%g: f32, %act: f32, %r: f32, %acc: f32):
    %gv = arith.mulf %g, %act : f32
    %gvr = arith.mulf %gv, %r : f32
    %s = arith.addf %acc, %gvr : f32
    linalg.yield %s : f32
  } -> tensor<64xf32>
  // c2 = Σ_d dHn ⊙ g2 ⊙ H, per token
  %c2 = linalg.generic {indexing_maps = [#id, #feat, #id, #tok],
                        iterator_types = ["parallel", "reduction"]}
      ins(%dhn, %g2, %h : tensor<32x64xf32>, tensor<64xf32>, tensor<32x64xf32>)
      outs(%zeros_32 : tensor<32xf32>) {
  ^bb0(%g: f32, %w: f32, %act: f32, %acc: f32):
    %gw = arith.mulf %g, %w : f32
    %gwv = arith.mulf %gw, %act : f32
    %s = arith.addf %acc, %gwv : f32
    linalg.yield %s : f32
  } -> tensor<32xf32>
  // dH = dY (residual) + r2·g2 ⊙ dHn − H·r2³·c2/D
  %dh = linalg.generic {indexing_maps = [#id, #id, #feat, #id, #tok, #tok, #id],
                        iterator_types = ["parallel", "parallel"]}
      ins(%dy, %dhn, %g2, %h, %r2, %c2
          : tensor<32x64xf32>, tensor<32x64xf32>, tensor<64xf32>, tensor<32x64xf32>,
            tensor<32xf32>, tensor<32xf32>)
      outs(%empty_32x64 : tensor<32x64xf32>) {
  ^bb0(%dres: f32, %g: f32, %w: f32, %act: f32, %r: f32, %c: f32, %out: f32):
    %gw = arith.mulf %g, %w : f32
    %direct = arith.mulf %gw, %r : f32
    %r2_ = arith.mulf %r, %r : f32
    %r3 = arith.mulf %r2_, %r : f32
    %act_r3 = arith.mulf %act, %r3 : f32
    %act_r3c = arith.mulf %act_r3, %c : f32
    %through_r = arith.mulf %act_r3c, %inv_d : f32
    %dnorm = arith.subf %direct, %through_r : f32
    %total = arith.addf %dres, %dnorm : f32
    linalg.yield %total : f32
  } -> tensor<32x64xf32>

  // ---- Output projection ----
  // Wgrad: dWo = dHᵀ · O (contraction over the tokens, by the indexing maps)
  %dwo = linalg.matmul indexing_maps = [#a_km, #b_kn, #c_mn]
      ins(%dh, %o : tensor<32x64xf32>, tensor<32x64xf32>)
      outs(%zeros_64x64 : tensor<64x64xf32>) -> tensor<64x64xf32>
  // Dgrad: dO = dH · Wo
  %do = linalg.matmul ins(%dh, %wo : tensor<32x64xf32>, tensor<64x64xf32>)
      outs(%zeros_32x64 : tensor<32x64xf32>) -> tensor<32x64xf32>

  // ---- Attention ----
  %do_split = tensor.expand_shape %do [[0], [1, 2]] output_shape [32, 4, 16]
      : tensor<32x64xf32> into tensor<32x4x16xf32>
  %do_heads = linalg.transpose ins(%do_split : tensor<32x4x16xf32>)
      outs(%empty_heads : tensor<4x32x16xf32>) permutation = [1, 0, 2]
  // dP = dO_h · V_hᵀ
  %v_heads_t = linalg.transpose ins(%v_split : tensor<32x4x16xf32>)
      outs(%empty_heads_t : tensor<4x16x32xf32>) permutation = [1, 2, 0]
  %dprobs = linalg.batch_matmul
      ins(%do_heads, %v_heads_t : tensor<4x32x16xf32>, tensor<4x16x32xf32>)
      outs(%zeros_scores : tensor<4x32x32xf32>) -> tensor<4x32x32xf32>
  // dV_h = Pᵀ · dO_h
  %probs_t = linalg.transpose ins(%probs : tensor<4x32x32xf32>)
      outs(%empty_scores : tensor<4x32x32xf32>) permutation = [0, 2, 1]
  %dv_heads = linalg.batch_matmul
      ins(%probs_t, %do_heads : tensor<4x32x32xf32>, tensor<4x32x16xf32>)
      outs(%zeros_heads : tensor<4x32x16xf32>) -> tensor<4x32x16xf32>
  // Softmax backward, with the 1/√16 of S folded in: the gradient of Q_h · K_hᵀ
  // is dS = P ⊙ (dP − Σ_keys dP ⊙ P) / √16 (zero where masked, as P is).
  %dp_dot_p = linalg.generic {indexing_maps = [#id3, #id3, #query],
                              iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%dprobs, %probs : tensor<4x32x32xf32>, tensor<4x32x32xf32>)
      outs(%zeros_4x32 : tensor<4x32xf32>) {
  ^bb0(%dp: f32, %p: f32, %acc: f32):
    %dpp = arith.mulf %dp, %p : f32
    %s = arith.addf %acc, %dpp : f32
    linalg.yield %s : f32
  } -> tensor<4x32xf32>
  %dscores = linalg.generic {indexing_maps = [#id3, #id3, #query, #id3],
                             iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%dprobs, %probs, %dp_dot_p : tensor<4x32x32xf32>, tensor<4x32x32xf32>, tensor<4x32xf32>)
      outs(%empty_scores : tensor<4x32x32xf32>) {
  ^bb0(%dp: f32, %p: f32, %dot: f32, %out: f32):
    %centered = arith.subf %dp, %dot : f32
    %ds = arith.mulf %p, %centered : f32
    %ds_scaled = arith.mulf %ds, %inv_sqrt_dh : f32
    linalg.yield %ds_scaled : f32
  } -> tensor<4x32x32xf32>
  // dQ_h = dS · K_h
  %dq_heads = linalg.batch_matmul
      ins(%dscores, %k_heads : tensor<4x32x32xf32>, tensor<4x32x16xf32>)
      outs(%zeros_heads : tensor<4x32x16xf32>) -> tensor<4x32x16xf32>
  // dK_h = dSᵀ · Q_h
  %dscores_t = linalg.transpose ins(%dscores : tensor<4x32x32xf32>)
      outs(%empty_scores : tensor<4x32x32xf32>) permutation = [0, 2, 1]
  %dk_heads = linalg.batch_matmul
      ins(%dscores_t, %q_heads : tensor<4x32x32xf32>, tensor<4x32x16xf32>)
      outs(%zeros_heads : tensor<4x32x16xf32>) -> tensor<4x32x16xf32>

  // ---- Merge the heads of dQ, dK, dV: [4, 32, 16] → [32, 64] ----
  %dq_split = linalg.transpose ins(%dq_heads : tensor<4x32x16xf32>)
      outs(%empty_tokens_heads : tensor<32x4x16xf32>) permutation = [1, 0, 2]
  %dq = tensor.collapse_shape %dq_split [[0], [1, 2]]
      : tensor<32x4x16xf32> into tensor<32x64xf32>
  %dk_split = linalg.transpose ins(%dk_heads : tensor<4x32x16xf32>)
      outs(%empty_tokens_heads : tensor<32x4x16xf32>) permutation = [1, 0, 2]
  %dk = tensor.collapse_shape %dk_split [[0], [1, 2]]
      : tensor<32x4x16xf32> into tensor<32x64xf32>
  %dv_split = linalg.transpose ins(%dv_heads : tensor<4x32x16xf32>)
      outs(%empty_tokens_heads : tensor<32x4x16xf32>) permutation = [1, 0, 2]
  %dv = tensor.collapse_shape %dv_split [[0], [1, 2]]
      : tensor<32x4x16xf32> into tensor<32x64xf32>

  // ---- Q, K, V projections ----
  // Wgrad: dWq = dQᵀ · Xn (contraction over the tokens, by the indexing maps)
  %dwq = linalg.matmul indexing_maps = [#a_km, #b_kn, #c_mn]
      ins(%dq, %xn : tensor<32x64xf32>, tensor<32x64xf32>)
      outs(%zeros_64x64 : tensor<64x64xf32>) -> tensor<64x64xf32>
  // Wgrad: dWk = dKᵀ · Xn (contraction over the tokens, by the indexing maps)
  %dwk = linalg.matmul indexing_maps = [#a_km, #b_kn, #c_mn]
      ins(%dk, %xn : tensor<32x64xf32>, tensor<32x64xf32>)
      outs(%zeros_64x64 : tensor<64x64xf32>) -> tensor<64x64xf32>
  // Wgrad: dWv = dVᵀ · Xn (explicit transpose of dV, then a plain matmul)
  %dv_t = linalg.transpose ins(%dv : tensor<32x64xf32>)
      outs(%empty_64x32 : tensor<64x32xf32>) permutation = [1, 0]
  %dwv = linalg.matmul ins(%dv_t, %xn : tensor<64x32xf32>, tensor<32x64xf32>)
      outs(%zeros_64x64 : tensor<64x64xf32>) -> tensor<64x64xf32>
  // Dgrad: dXn = dQ · Wq + dK · Wk + dV · Wv, the last two accumulating into
  // the matmul's output operand.
  %dxn_q = linalg.matmul ins(%dq, %wq : tensor<32x64xf32>, tensor<64x64xf32>)
      outs(%zeros_32x64 : tensor<32x64xf32>) -> tensor<32x64xf32>
  %dxn_qk = linalg.matmul ins(%dk, %wk : tensor<32x64xf32>, tensor<64x64xf32>)
      outs(%dxn_q : tensor<32x64xf32>) -> tensor<32x64xf32>
  %dxn = linalg.matmul ins(%dv, %wv : tensor<32x64xf32>, tensor<64x64xf32>)
      outs(%dxn_qk : tensor<32x64xf32>) -> tensor<32x64xf32>

  // ---- RMSNorm 1 ----
  // dg1 = Σ_tokens dXn ⊙ X · r1
  %dg1 = linalg.generic {indexing_maps = [#id, #id, #tok, #feat],
                         iterator_types = ["reduction", "parallel"]}
      ins(%dxn, %x, %r1 : tensor<32x64xf32>, tensor<32x64xf32>, tensor<32xf32>)
      outs(%zeros_64 : tensor<64xf32>) {
  ^bb0(%g: f32, %act: f32, %r: f32, %acc: f32):
    %gv = arith.mulf %g, %act : f32
    %gvr = arith.mulf %gv, %r : f32
    %s = arith.addf %acc, %gvr : f32
    linalg.yield %s : f32
  } -> tensor<64xf32>

  return %loss, %dg1, %dwq, %dwk, %dwv, %dwo, %dg2, %dw1, %dw2
      : tensor<f32>, tensor<64xf32>, tensor<64x64xf32>, tensor<64x64xf32>,
        tensor<64x64xf32>, tensor<64x64xf32>, tensor<64xf32>, tensor<128x64xf32>,
        tensor<64x128xf32>
}
