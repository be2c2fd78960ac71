// A step whose parameter's element count (2^32 x 2^32) overflows int64: the
// host must not wrap it to a small buffer the JIT code then reads in full.
func.func @train_step(%x: tensor<4x16xf32>, %t: tensor<4x16xf32>,
                      %w: tensor<4294967296x4294967296xf32> {fp4train.param})
    -> (tensor<f32>, tensor<4294967296x4294967296xf32>) {
  %e = tensor.empty() : tensor<f32>
  return %e, %w : tensor<f32>, tensor<4294967296x4294967296xf32>
}
