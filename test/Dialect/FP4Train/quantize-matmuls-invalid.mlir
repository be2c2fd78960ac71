// RUN: fp4-opt %s -split-input-file -verify-diagnostics -fp4train-annotate-roles -fp4train-quantize-matmuls="recipe=nvfp4 pad=0"

func.func @dynamic(%x: tensor<?x64xf32>, %w: tensor<16x64xf32> {fp4train.param},
                   %init: tensor<?x16xf32>) -> tensor<?x16xf32> {
  // expected-error @below {{cannot quantize a fprop contraction with dynamic shapes: block scales need static dimensions}}
  %y = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>,
                                      affine_map<(m, n, k) -> (n, k)>,
                                      affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %w : tensor<?x64xf32>, tensor<16x64xf32>) outs(%init : tensor<?x16xf32>) -> tensor<?x16xf32>
  return %y : tensor<?x16xf32>
}

// -----

func.func @k_partial(%x: tensor<8x40xf32>, %w: tensor<16x40xf32> {fp4train.param},
                     %init: tensor<8x16xf32>) -> tensor<8x16xf32> {
  // expected-error @below {{K = 40 is not a multiple of 16 (the K block or Hadamard size of the fprop recipe), and pad=0 forbids zero padding}}
  %y = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>,
                                      affine_map<(m, n, k) -> (n, k)>,
                                      affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %w : tensor<8x40xf32>, tensor<16x40xf32>) outs(%init : tensor<8x16xf32>) -> tensor<8x16xf32>
  return %y : tensor<8x16xf32>
}

// -----

func.func @weight_rows_partial(%x: tensor<8x64xf32>, %w: tensor<24x64xf32> {fp4train.param},
                               %init: tensor<8x24xf32>) -> tensor<8x24xf32> {
  // expected-error @below {{the weight's 24 rows are not a multiple of the 16x16 block, and pad=0 forbids zero padding}}
  %y = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>,
                                      affine_map<(m, n, k) -> (n, k)>,
                                      affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %w : tensor<8x64xf32>, tensor<24x64xf32>) outs(%init : tensor<8x24xf32>) -> tensor<8x24xf32>
  return %y : tensor<8x24xf32>
}

// -----

// [MOE1] Per-expert global scales number the stochastic-rounding seeds of
// each expert slice after the contractions; 2^31 experts would need more
// than the 32 bits under the step.
func.func @too_many_experts(%x: tensor<2147483648x1x16xf32>,
                            %w: tensor<2147483648x16x16xf32> {fp4train.param},
                            %init: tensor<2147483648x1x16xf32>) -> tensor<2147483648x1x16xf32> {
  // expected-error @below {{per-expert global scales for 2147483648 experts in a function of 1 contractions number more stochastic-rounding seeds than fit in 32 bits; use per-expert-global-scale=0}}
  %y = linalg.batch_matmul
      indexing_maps = [affine_map<(e, m, n, k) -> (e, m, k)>,
                       affine_map<(e, m, n, k) -> (e, n, k)>,
                       affine_map<(e, m, n, k) -> (e, m, n)>]
      ins(%x, %w : tensor<2147483648x1x16xf32>, tensor<2147483648x16x16xf32>)
      outs(%init : tensor<2147483648x1x16xf32>) -> tensor<2147483648x1x16xf32>
  return %y : tensor<2147483648x1x16xf32>
}
