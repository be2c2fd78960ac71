// Two linear layers whose every GEMM dimension is off the block grid:
// X [20, 40] -> W1 [24, 40] -> W2 [12, 24], MSE loss, SGD in the graph.
// K is 40 (Fprop 1), 24 (Fprop 2), 12 (Dgrad), 20 (both Wgrads): the quantize
// pass zero-pads every one of them.
#mk = affine_map<(m, n, k) -> (m, k)>
#nk = affine_map<(m, n, k) -> (n, k)>
#km = affine_map<(m, n, k) -> (k, m)>
#kn = affine_map<(m, n, k) -> (k, n)>
#mn = affine_map<(m, n, k) -> (m, n)>
#id = affine_map<(i, j) -> (i, j)>
#scalar = affine_map<(i, j) -> ()>

func.func @train_step(%x: tensor<20x40xf32>, %t: tensor<20x12xf32>,
                      %w1: tensor<24x40xf32> {fp4train.param},
                      %w2: tensor<12x24xf32> {fp4train.param},
                      %lr: f32, %step: i64)
    -> (tensor<f32>, tensor<24x40xf32>, tensor<12x24xf32>) {
  %zero = arith.constant 0.0 : f32
  // Fprop: H = X . W1^T, Y = H . W2^T.
  %eh = tensor.empty() : tensor<20x24xf32>
  %zh = linalg.fill ins(%zero : f32) outs(%eh : tensor<20x24xf32>) -> tensor<20x24xf32>
  %h = linalg.matmul indexing_maps = [#mk, #nk, #mn]
      ins(%x, %w1 : tensor<20x40xf32>, tensor<24x40xf32>) outs(%zh : tensor<20x24xf32>) -> tensor<20x24xf32>
  %ey = tensor.empty() : tensor<20x12xf32>
  %zy = linalg.fill ins(%zero : f32) outs(%ey : tensor<20x12xf32>) -> tensor<20x12xf32>
  %y = linalg.matmul indexing_maps = [#mk, #nk, #mn]
      ins(%h, %w2 : tensor<20x24xf32>, tensor<12x24xf32>) outs(%zy : tensor<20x12xf32>) -> tensor<20x12xf32>
  // loss = mean((Y - T)^2); dY = 2 (Y - T) / 240.
  %scale = arith.constant 0.00833333377 : f32
  %mean = arith.constant 0.00416666688 : f32
  %dy = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%y, %t : tensor<20x12xf32>, tensor<20x12xf32>) outs(%ey : tensor<20x12xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %d = arith.subf %a, %b : f32
    %g = arith.mulf %d, %scale : f32
    linalg.yield %g : f32
  } -> tensor<20x12xf32>
  %el = tensor.empty() : tensor<f32>
  %zl = linalg.fill ins(%zero : f32) outs(%el : tensor<f32>) -> tensor<f32>
  %loss = linalg.generic {indexing_maps = [#id, #id, #scalar], iterator_types = ["reduction", "reduction"]}
      ins(%y, %t : tensor<20x12xf32>, tensor<20x12xf32>) outs(%zl : tensor<f32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %d = arith.subf %a, %b : f32
    %s = arith.mulf %d, %d : f32
    %m = arith.mulf %s, %mean : f32
    %r = arith.addf %acc, %m : f32
    linalg.yield %r : f32
  } -> tensor<f32>
  // Wgrad: dW2 = dY^T . H. Dgrad: dH = dY . W2. Wgrad: dW1 = dH^T . X.
  %ew2 = tensor.empty() : tensor<12x24xf32>
  %zw2 = linalg.fill ins(%zero : f32) outs(%ew2 : tensor<12x24xf32>) -> tensor<12x24xf32>
  %dw2 = linalg.matmul indexing_maps = [#km, #kn, #mn]
      ins(%dy, %h : tensor<20x12xf32>, tensor<20x24xf32>) outs(%zw2 : tensor<12x24xf32>) -> tensor<12x24xf32>
  %dh = linalg.matmul ins(%dy, %w2 : tensor<20x12xf32>, tensor<12x24xf32>)
      outs(%zh : tensor<20x24xf32>) -> tensor<20x24xf32>
  %ew1 = tensor.empty() : tensor<24x40xf32>
  %zw1 = linalg.fill ins(%zero : f32) outs(%ew1 : tensor<24x40xf32>) -> tensor<24x40xf32>
  %dw1 = linalg.matmul indexing_maps = [#km, #kn, #mn]
      ins(%dh, %x : tensor<20x24xf32>, tensor<20x40xf32>) outs(%zw1 : tensor<24x40xf32>) -> tensor<24x40xf32>
  // SGD.
  %nw1 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%w1, %dw1 : tensor<24x40xf32>, tensor<24x40xf32>) outs(%ew1 : tensor<24x40xf32>) {
  ^bb0(%w: f32, %g: f32, %o: f32):
    %u = arith.mulf %g, %lr : f32
    %n = arith.subf %w, %u : f32
    linalg.yield %n : f32
  } -> tensor<24x40xf32>
  %nw2 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%w2, %dw2 : tensor<12x24xf32>, tensor<12x24xf32>) outs(%ew2 : tensor<12x24xf32>) {
  ^bb0(%w: f32, %g: f32, %o: f32):
    %u = arith.mulf %g, %lr : f32
    %n = arith.subf %w, %u : f32
    linalg.yield %n : f32
  } -> tensor<12x24xf32>
  return %loss, %nw1, %nw2 : tensor<f32>, tensor<24x40xf32>, tensor<12x24xf32>
}
