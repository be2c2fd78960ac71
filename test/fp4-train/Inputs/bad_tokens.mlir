// Token ids in, but an f32 target: neither a language model nor a regression.
func.func @train_step(%w: tensor<16x16xf32> {fp4train.param},
                      %tokens: tensor<4x8xi32>, %target: tensor<4x8xf32>)
    -> (tensor<f32>, tensor<16x16xf32>) {
  %e = tensor.empty() : tensor<f32>
  return %e, %w : tensor<f32>, tensor<16x16xf32>
}
