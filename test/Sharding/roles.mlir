// Role inference sees through sharding annotations and the collectives
// written in a step ([ROLE1]-[ROLE6], docs/sharding.md): a data-parallel
// linear layer whose weight is annotated (replicated, then sharded along
// `out` for its Dgrad) and whose gradient is all-reduced in the graph.
// RUN: fp4-opt %s -fp4train-annotate-roles | FileCheck %s

#mk = affine_map<(m, n, k) -> (m, k)>
#nk = affine_map<(m, n, k) -> (n, k)>
#km = affine_map<(m, n, k) -> (k, m)>
#kn = affine_map<(m, n, k) -> (k, n)>
#mn = affine_map<(m, n, k) -> (m, n)>
shard.grid @grid(shape = 2)

// CHECK-LABEL: func @data_parallel
func.func @data_parallel(%x: tensor<32x64xf32>, %w: tensor<16x64xf32> {fp4train.param},
                         %dy: tensor<32x16xf32>)
    -> (tensor<32x16xf32>, tensor<32x64xf32>, tensor<16x64xf32>) {
  %dp = shard.sharding @grid split_axes = [[0]] : !shard.sharding
  %rep = shard.sharding @grid split_axes = [[]] : !shard.sharding
  %xs = shard.shard %x to %dp annotate_for_users : tensor<32x64xf32>
  %ws = shard.shard %w to %rep : tensor<16x64xf32>
  %wr = shard.shard %ws to %rep annotate_for_users : tensor<16x64xf32>
  %dys = shard.shard %dy to %dp annotate_for_users : tensor<32x16xf32>
  %c0 = arith.constant 0.0 : f32
  %e_y = tensor.empty() : tensor<32x16xf32>
  %z_y = linalg.fill ins(%c0 : f32) outs(%e_y : tensor<32x16xf32>) -> tensor<32x16xf32>
  // CHECK: linalg.matmul {{.*}}{fp4train.role = #fp4train.role<fprop, weight = 1, operand = 1, contracted = 1>}
  %y = linalg.matmul indexing_maps = [#mk, #nk, #mn]
      ins(%xs, %wr : tensor<32x64xf32>, tensor<16x64xf32>) outs(%z_y : tensor<32x16xf32>) -> tensor<32x16xf32>
  %e_dx = tensor.empty() : tensor<32x64xf32>
  %z_dx = linalg.fill ins(%c0 : f32) outs(%e_dx : tensor<32x64xf32>) -> tensor<32x64xf32>
  // The weight through a collective that splits its rows.
  %wslice = shard.all_slice %wr on @grid grid_axes = [0] slice_axis = 0 : tensor<16x64xf32> -> tensor<8x64xf32>
  %wg = shard.all_gather %wslice on @grid grid_axes = [0] gather_axis = 0 : tensor<8x64xf32> -> tensor<16x64xf32>
  // CHECK: linalg.matmul {fp4train.role = #fp4train.role<dgrad, weight = 1, operand = 1, contracted = 0>}
  %dx = linalg.matmul ins(%dys, %wg : tensor<32x16xf32>, tensor<16x64xf32>) outs(%z_dx : tensor<32x64xf32>) -> tensor<32x64xf32>
  %e_dw = tensor.empty() : tensor<16x64xf32>
  %z_dw = linalg.fill ins(%c0 : f32) outs(%e_dw : tensor<16x64xf32>) -> tensor<16x64xf32>
  // CHECK: linalg.matmul {{.*}}{fp4train.role = #fp4train.role<wgrad, weight = 1, operand = 0>}
  %dw = linalg.matmul indexing_maps = [#km, #kn, #mn]
      ins(%dys, %xs : tensor<32x16xf32>, tensor<32x64xf32>) outs(%z_dw : tensor<16x64xf32>) -> tensor<16x64xf32>
  // The gradient, summed over the data-parallel processes in the graph.
  %dwr = shard.all_reduce %dw on @grid grid_axes = [0] : tensor<16x64xf32> -> tensor<16x64xf32>
  return %y, %dx, %dwr : tensor<32x16xf32>, tensor<32x64xf32>, tensor<16x64xf32>
}
