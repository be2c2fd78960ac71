// A hand-annotated step whose second parameter's result comes back split
// while the parameter is whole (fp4-train-mpi.test).
shard.grid @tp(shape = 2)
func.func @train_step(%x: tensor<4x8xf32>, %t: tensor<4x8xf32>,
                      %w: tensor<16x8xf32> {fp4train.param},
                      %v: tensor<16x8xf32> {fp4train.param})
    -> (tensor<f32>, tensor<16x8xf32>, tensor<16x8xf32>) {
  %s = shard.sharding @tp split_axes = [[0]] : !shard.sharding
  %w0 = shard.shard %w to %s annotate_for_users : tensor<16x8xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<f32>
  %loss = linalg.fill ins(%zero : f32) outs(%e : tensor<f32>) -> tensor<f32>
  return %loss, %w0, %w0 : tensor<f32>, tensor<16x8xf32>, tensor<16x8xf32>
}
