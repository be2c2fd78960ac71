// A step with a dynamically shaped input: the host cannot size it.
func.func @train_step(%x: tensor<?x16xf32>, %t: tensor<4x16xf32>,
                      %w: tensor<16x16xf32> {fp4train.param}) -> (tensor<f32>, tensor<16x16xf32>) {
  %e = tensor.empty() : tensor<f32>
  return %e, %w : tensor<f32>, tensor<16x16xf32>
}
