// RUN: fp4-opt %s -split-input-file -fp4train-annotate-roles | FileCheck %s
// RUN: fp4-opt %s -split-input-file -fp4train-annotate-roles -fp4train-annotate-roles | FileCheck %s
// RUN: fp4-opt %s -split-input-file -fp4train-annotate-roles="report=-" -o /dev/null | FileCheck %s --check-prefix=REPORT

#mk = affine_map<(m, n, k) -> (m, k)>
#nk = affine_map<(m, n, k) -> (n, k)>
#kn = affine_map<(m, n, k) -> (k, n)>
#km = affine_map<(m, n, k) -> (k, m)>
#mn = affine_map<(m, n, k) -> (m, n)>

// One linear layer, PyTorch layout W : [out, in] = [16, 64], with a square
// second weight V : [16, 16] so that shapes alone cannot tell Fprop from
// Dgrad. Forward, backward and the returned gradients.
// CHECK-LABEL: func @linear_pytorch
// REPORT-LABEL: [
func.func @linear_pytorch(%x: tensor<32x64xf32>, %w: tensor<16x64xf32> {fp4train.param},
                          %v: tensor<16x16xf32> {fp4train.param}, %dz: tensor<32x16xf32>)
    -> (tensor<32x64xf32>, tensor<16x64xf32>, tensor<16x16xf32>, tensor<32x16xf32>) {
  %c0 = arith.constant 0.0 : f32
  %e_y = tensor.empty() : tensor<32x16xf32>
  %z_y = linalg.fill ins(%c0 : f32) outs(%e_y : tensor<32x16xf32>) -> tensor<32x16xf32>
  // Y = X . W^T through a transposed indexing map.
  // CHECK: linalg.matmul {{.*}}{fp4train.role = #fp4train.role<fprop, weight = 1, operand = 1, contracted = 1>} ins(%{{.*}}, %{{.*}} : tensor<32x64xf32>, tensor<16x64xf32>)
  // REPORT: "batch": 1,
  // REPORT-NEXT: "block": null,
  // REPORT-NEXT: "k": 64,
  // REPORT-NEXT: "loc": "{{.*}}annotate-roles.mlir:[[@LINE+6]]:{{[0-9]+}}",
  // REPORT-NEXT: "m": 32,
  // REPORT-NEXT: "n": 16,
  // REPORT-NEXT: "op": "linalg.matmul",
  // REPORT-NEXT: "param": 1,
  // REPORT-NEXT: "role": "fprop"
  %y = linalg.matmul indexing_maps = [#mk, #nk, #mn]
      ins(%x, %w : tensor<32x64xf32>, tensor<16x64xf32>) outs(%z_y : tensor<32x16xf32>) -> tensor<32x16xf32>
  // Z = Y . V^T through an explicit transpose: Fprop of the square weight.
  %e_vt = tensor.empty() : tensor<16x16xf32>
  %vt = linalg.transpose ins(%v : tensor<16x16xf32>) outs(%e_vt : tensor<16x16xf32>) permutation = [1, 0]
  // CHECK: linalg.matmul {fp4train.role = #fp4train.role<fprop, weight = 2, operand = 1, contracted = 0>} ins(%{{.*}}, %{{.*}} : tensor<32x16xf32>, tensor<16x16xf32>)
  // REPORT: "param": 2,
  // REPORT-NEXT: "role": "fprop"
  %z = linalg.matmul ins(%y, %vt : tensor<32x16xf32>, tensor<16x16xf32>) outs(%z_y : tensor<32x16xf32>) -> tensor<32x16xf32>

  // dY = dZ . V: contracts V's out dimension: Dgrad.
  // CHECK: linalg.matmul {fp4train.role = #fp4train.role<dgrad, weight = 2, operand = 1, contracted = 0>} ins(%{{.*}}, %{{.*}} : tensor<32x16xf32>, tensor<16x16xf32>)
  // REPORT: "param": 2,
  // REPORT-NEXT: "role": "dgrad"
  %dy = linalg.matmul ins(%dz, %v : tensor<32x16xf32>, tensor<16x16xf32>) outs(%z_y : tensor<32x16xf32>) -> tensor<32x16xf32>
  // dX = dY . W: Dgrad.
  %e_dx = tensor.empty() : tensor<32x64xf32>
  %z_dx = linalg.fill ins(%c0 : f32) outs(%e_dx : tensor<32x64xf32>) -> tensor<32x64xf32>
  // CHECK: linalg.matmul {fp4train.role = #fp4train.role<dgrad, weight = 1, operand = 1, contracted = 0>} ins(%{{.*}}, %{{.*}} : tensor<32x16xf32>, tensor<16x64xf32>)
  // REPORT: "param": 1,
  // REPORT-NEXT: "role": "dgrad"
  %dx = linalg.matmul ins(%dy, %w : tensor<32x16xf32>, tensor<16x64xf32>) outs(%z_dx : tensor<32x64xf32>) -> tensor<32x64xf32>
  // dW = dY^T . X through a transposed map on dY: Wgrad, returned.
  %e_dw = tensor.empty() : tensor<16x64xf32>
  %z_dw = linalg.fill ins(%c0 : f32) outs(%e_dw : tensor<16x64xf32>) -> tensor<16x64xf32>
  // CHECK: linalg.matmul {{.*}}{fp4train.role = #fp4train.role<wgrad, weight = 1, operand = 0>} ins(%{{.*}}, %{{.*}} : tensor<32x16xf32>, tensor<32x64xf32>)
  // REPORT: "batch": 1,
  // REPORT-NEXT: "block": null,
  // REPORT-NEXT: "k": 32,
  // REPORT: "m": 16,
  // REPORT-NEXT: "n": 64,
  // REPORT-NEXT: "op": "linalg.matmul",
  // REPORT-NEXT: "param": 1,
  // REPORT-NEXT: "role": "wgrad"
  %dw = linalg.matmul indexing_maps = [#km, #kn, #mn]
      ins(%dy, %x : tensor<32x16xf32>, tensor<32x64xf32>) outs(%z_dw : tensor<16x64xf32>) -> tensor<16x64xf32>
  // dV = dZ^T . Y: Wgrad; V's shape is unique among the weights: param 2.
  %e_dzt = tensor.empty() : tensor<16x32xf32>
  %dzt = linalg.transpose ins(%dz : tensor<32x16xf32>) outs(%e_dzt : tensor<16x32xf32>) permutation = [1, 0]
  // CHECK: linalg.matmul {fp4train.role = #fp4train.role<wgrad, weight = 2, operand = 0>} ins(%{{.*}}, %{{.*}} : tensor<16x32xf32>, tensor<32x16xf32>)
  // REPORT: "param": 2,
  // REPORT-NEXT: "role": "wgrad"
  %dv = linalg.matmul ins(%dzt, %y : tensor<16x32xf32>, tensor<32x16xf32>) outs(%e_vt : tensor<16x16xf32>) -> tensor<16x16xf32>
  // REPORT: ]
  return %dx, %dw, %dv, %z : tensor<32x64xf32>, tensor<16x64xf32>, tensor<16x16xf32>, tensor<32x16xf32>
}

// -----

// Attention: contractions of activations with activations are left alone.
// CHECK-LABEL: func @attention_is_other
// REPORT-LABEL: [
func.func @attention_is_other(%q: tensor<4x8x16xf32>, %k: tensor<4x8x16xf32>, %v: tensor<4x8x16xf32>)
    -> tensor<4x8x16xf32> {
  %c0 = arith.constant 0.0 : f32
  %e_kt = tensor.empty() : tensor<4x16x8xf32>
  %kt = linalg.transpose ins(%k : tensor<4x8x16xf32>) outs(%e_kt : tensor<4x16x8xf32>) permutation = [0, 2, 1]
  %e_s = tensor.empty() : tensor<4x8x8xf32>
  %z_s = linalg.fill ins(%c0 : f32) outs(%e_s : tensor<4x8x8xf32>) -> tensor<4x8x8xf32>
  // CHECK: linalg.batch_matmul
  // CHECK-NOT: fp4train.role
  // REPORT: "batch": 4,
  // REPORT-NEXT: "block": null,
  // REPORT-NEXT: "k": 16,
  // REPORT: "m": 8,
  // REPORT-NEXT: "n": 8,
  // REPORT-NEXT: "op": "linalg.batch_matmul",
  // REPORT-NEXT: "param": null,
  // REPORT-NEXT: "role": "other"
  %s = linalg.batch_matmul ins(%q, %kt : tensor<4x8x16xf32>, tensor<4x16x8xf32>)
      outs(%z_s : tensor<4x8x8xf32>) -> tensor<4x8x8xf32>
  %e_o = tensor.empty() : tensor<4x8x16xf32>
  %z_o = linalg.fill ins(%c0 : f32) outs(%e_o : tensor<4x8x16xf32>) -> tensor<4x8x16xf32>
  // CHECK: linalg.batch_matmul
  // CHECK-NOT: fp4train.role
  // REPORT: "role": "other"
  %o = linalg.batch_matmul ins(%s, %v : tensor<4x8x8xf32>, tensor<4x8x16xf32>)
      outs(%z_o : tensor<4x8x16xf32>) -> tensor<4x8x16xf32>
  return %o : tensor<4x8x16xf32>
}

// -----

// [B, T, in] activations against a shared weight: batch_matmul with a
// broadcast weight, and a generic contraction; bf16 casts on the weight.
#x3 = affine_map<(b, t, o, i) -> (b, t, i)>
#w2 = affine_map<(b, t, o, i) -> (o, i)>
#y3 = affine_map<(b, t, o, i) -> (b, t, o)>
#id = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-LABEL: func @batched_bf16
func.func @batched_bf16(%x: tensor<2x8x32xbf16>, %w: tensor<16x32xf32> {fp4train.param},
                        %bias: tensor<16xf32> {fp4train.param}) -> (tensor<2x8x16xf32>, tensor<2x8x16xf32>) {
  %c0 = arith.constant 0.0 : f32
  %e_wb = tensor.empty() : tensor<16x32xbf16>
  %wb = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%w : tensor<16x32xf32>) outs(%e_wb : tensor<16x32xbf16>) {
  ^bb0(%in: f32, %out: bf16):
    %t = arith.truncf %in : f32 to bf16
    linalg.yield %t : bf16
  } -> tensor<16x32xbf16>
  %e_y = tensor.empty() : tensor<2x8x16xf32>
  %z_y = linalg.fill ins(%c0 : f32) outs(%e_y : tensor<2x8x16xf32>) -> tensor<2x8x16xf32>
  // CHECK: linalg.generic {{.*}}fp4train.role = #fp4train.role<fprop, weight = 1, operand = 1, contracted = 1>
  %y = linalg.generic {indexing_maps = [#x3, #w2, #y3],
                       iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%x, %wb : tensor<2x8x32xbf16>, tensor<16x32xbf16>) outs(%z_y : tensor<2x8x16xf32>) {
  ^bb0(%a: bf16, %b: bf16, %acc: f32):
    %ae = arith.extf %a : bf16 to f32
    %be = arith.extf %b : bf16 to f32
    %p = arith.mulf %ae, %be : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<2x8x16xf32>
  // Broadcast weight in a batch_matmul, transposed afterwards: Fprop.
  %e_wt = tensor.empty() : tensor<32x16xbf16>
  %wt = linalg.transpose ins(%wb : tensor<16x32xbf16>) outs(%e_wt : tensor<32x16xbf16>) permutation = [1, 0]
  %e_wbb = tensor.empty() : tensor<2x32x16xbf16>
  %wbb = linalg.broadcast ins(%wt : tensor<32x16xbf16>) outs(%e_wbb : tensor<2x32x16xbf16>) dimensions = [0]
  // CHECK: linalg.batch_matmul {{.*}}{fp4train.role = #fp4train.role<fprop, weight = 1, operand = 1, contracted = 1>}
  %y2 = linalg.batch_matmul ins(%x, %wbb : tensor<2x8x32xbf16>, tensor<2x32x16xbf16>)
      outs(%z_y : tensor<2x8x16xf32>) -> tensor<2x8x16xf32>
  return %y, %y2 : tensor<2x8x16xf32>, tensor<2x8x16xf32>
}

// -----

// Biases are parameters but not weights: a contraction with a broadcast bias
// is not Fprop. An SGD update identifies a Wgrad that is not returned.
// CHECK-LABEL: func @sgd_update
func.func @sgd_update(%x: tensor<8x4xf32>, %w: tensor<4x4xf32> {fp4train.param},
                      %b: tensor<4xf32> {fp4train.param}, %dy: tensor<8x4xf32>, %lr: f32)
    -> (tensor<4x4xf32>, tensor<8x4xf32>) {
  %c0 = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x4xf32>
  %z = linalg.fill ins(%c0 : f32) outs(%e : tensor<4x4xf32>) -> tensor<4x4xf32>
  %e_bb = tensor.empty() : tensor<4x4xf32>
  %bb = linalg.broadcast ins(%b : tensor<4xf32>) outs(%e_bb : tensor<4x4xf32>) dimensions = [0]
  %e_xb = tensor.empty() : tensor<8x4xf32>
  // CHECK: linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<8x4xf32>, tensor<4x4xf32>) outs(%{{.*}} : tensor<8x4xf32>) -> tensor<8x4xf32>
  %xb = linalg.matmul ins(%x, %bb : tensor<8x4xf32>, tensor<4x4xf32>) outs(%e_xb : tensor<8x4xf32>) -> tensor<8x4xf32>
  %e_dyt = tensor.empty() : tensor<4x8xf32>
  %dyt = linalg.transpose ins(%dy : tensor<8x4xf32>) outs(%e_dyt : tensor<4x8xf32>) permutation = [1, 0]
  // CHECK: linalg.matmul {{.*}}{fp4train.role = #fp4train.role<wgrad, weight = 1, operand = 0>}
  %dw = linalg.matmul ins(%dyt, %x : tensor<4x8xf32>, tensor<8x4xf32>) outs(%z : tensor<4x4xf32>) -> tensor<4x4xf32>
  %lrs = linalg.fill ins(%lr : f32) outs(%e : tensor<4x4xf32>) -> tensor<4x4xf32>
  %step = linalg.mul ins(%dw, %lrs : tensor<4x4xf32>, tensor<4x4xf32>) outs(%e : tensor<4x4xf32>) -> tensor<4x4xf32>
  %neww = arith.subf %w, %step : tensor<4x4xf32>
  // Keep W a weight: it feeds a contraction.
  // CHECK: linalg.matmul {{.*}}{fp4train.role = #fp4train.role<fprop, weight = 1, operand = 1, contracted = 1>}
  %e2 = tensor.empty() : tensor<8x4xf32>
  %y = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %w : tensor<8x4xf32>, tensor<4x4xf32>) outs(%e2 : tensor<8x4xf32>) -> tensor<8x4xf32>
  return %neww, %xb : tensor<4x4xf32>, tensor<8x4xf32>
}

// -----

// An explicit role wins over inference.
// CHECK-LABEL: func @explicit
func.func @explicit(%x: tensor<8x4xf32>, %w: tensor<4x4xf32> {fp4train.param}) -> tensor<8x4xf32> {
  %e = tensor.empty() : tensor<8x4xf32>
  // CHECK: linalg.matmul {{.*}}{fp4train.role = #fp4train.role<dgrad, weight = 1, operand = 1, contracted = 1>}
  // REPORT: "role": "dgrad"
  %y = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %w : tensor<8x4xf32>, tensor<4x4xf32>) outs(%e : tensor<8x4xf32>)
      {fp4train.role = #fp4train.role<dgrad>} -> tensor<8x4xf32>
  return %y : tensor<8x4xf32>
}
