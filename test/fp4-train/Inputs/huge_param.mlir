// A step whose parameter (2^20 x 2^20 f32, 4 TiB) no host can allocate.
func.func @train_step(%x: tensor<4x16xf32>, %t: tensor<4x16xf32>,
                      %w: tensor<1048576x1048576xf32> {fp4train.param})
    -> (tensor<f32>, tensor<1048576x1048576xf32>) {
  %e = tensor.empty() : tensor<f32>
  return %e, %w : tensor<f32>, tensor<1048576x1048576xf32>
}
