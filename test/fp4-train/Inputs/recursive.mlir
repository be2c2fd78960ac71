// A step that calls itself.
func.func @train_step(%x: tensor<4x16xf32>, %t: tensor<4x16xf32>,
                      %w: tensor<16x16xf32> {fp4train.param})
    -> (tensor<f32>, tensor<16x16xf32>) {
  %l, %g = func.call @train_step(%x, %t, %w)
      : (tensor<4x16xf32>, tensor<4x16xf32>, tensor<16x16xf32>) -> (tensor<f32>, tensor<16x16xf32>)
  return %l, %g : tensor<f32>, tensor<16x16xf32>
}
