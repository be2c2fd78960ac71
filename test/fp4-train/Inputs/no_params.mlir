// A step whose arguments are not marked {fp4train.param}.
func.func @train_step(%x: tensor<4x16xf32>, %t: tensor<4x16xf32>, %w: tensor<16x16xf32>)
    -> (tensor<f32>, tensor<16x16xf32>) {
  %e = tensor.empty() : tensor<f32>
  return %e, %w : tensor<f32>, tensor<16x16xf32>
}
