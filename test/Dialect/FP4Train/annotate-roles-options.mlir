// RUN: fp4-opt %s -fp4train-annotate-roles="weight-layout=in-out params=1" | FileCheck %s
// RUN: fp4-opt %s -fp4train-annotate-roles="params=1" | FileCheck %s --check-prefix=PYTORCH
// RUN: not fp4-opt %s -fp4train-annotate-roles="weight-layout=jax" 2>&1 | FileCheck %s --check-prefix=LAYOUT
// RUN: not fp4-opt %s -fp4train-annotate-roles="params=7" 2>&1 | FileCheck %s --check-prefix=RANGE
// RUN: not fp4-opt %s -fp4train-annotate-roles="params=2" 2>&1 | FileCheck %s --check-prefix=SCALAR
// RUN: not fp4-opt %s -fp4train-annotate-roles="params=x" 2>&1 | FileCheck %s --check-prefix=MALFORMED
// RUN: not fp4-opt %s -fp4train-annotate-roles="report=%t.missing/dir/report.json" 2>&1 | FileCheck %s --check-prefix=REPORT

// LAYOUT: error: unknown weight-layout 'jax'; expected 'out-in' or 'in-out'
// RANGE: error: params option names argument #7, but the function has 3 arguments
// SCALAR: error: params option names argument #2 of type 'f32', but parameters must be ranked tensors
// MALFORMED: for the --params option: 'x' value invalid for uint argument
// REPORT: error: cannot write the report:
// A full device is a diagnostic too, not "LLVM ERROR: IO failure on output
// stream" from the stream's destructor; /dev/full stays in place.
// RUN: not fp4-opt %s -fp4train-annotate-roles="report=/dev/full" 2>&1 | FileCheck %s --check-prefix=FULL
// RUN: not fp4-opt %s --fp4train-quantize-pipeline="recipe=mxfp4 report=/dev/full" 2>&1 | FileCheck %s --check-prefix=FULL
// RUN: test -c /dev/full
// FULL: error: cannot write the report to '/dev/full': No space left on device
// FULL-NOT: LLVM ERROR

// A JAX Dense layer, W : [in, out] = [64, 16], passed by index, not by
// attribute: Y = X . W, dX = dY . W^T, dW = X^T . dY.
// CHECK-LABEL: func @dense_jax
// PYTORCH-LABEL: func @dense_jax
func.func @dense_jax(%x: tensor<32x64xf32>, %w: tensor<64x16xf32>, %lr: f32)
    -> (tensor<32x16xf32>, tensor<32x64xf32>, tensor<64x16xf32>) {
  %e_y = tensor.empty() : tensor<32x16xf32>
  // CHECK: linalg.matmul {fp4train.role = #fp4train.role<fprop, weight = 1, operand = 1, contracted = 0>}
  // PYTORCH: linalg.matmul {fp4train.role = #fp4train.role<dgrad, weight = 1, operand = 1, contracted = 0>}
  %y = linalg.matmul ins(%x, %w : tensor<32x64xf32>, tensor<64x16xf32>)
      outs(%e_y : tensor<32x16xf32>) -> tensor<32x16xf32>
  %e_dx = tensor.empty() : tensor<32x64xf32>
  // CHECK: linalg.matmul indexing_maps = [#{{.*}}, #{{.*}}, #{{.*}}] {fp4train.role = #fp4train.role<dgrad, weight = 1, operand = 1, contracted = 1>}
  // PYTORCH: linalg.matmul indexing_maps = [#{{.*}}, #{{.*}}, #{{.*}}] {fp4train.role = #fp4train.role<fprop, weight = 1, operand = 1, contracted = 1>}
  %dx = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>,
                                       affine_map<(m, n, k) -> (n, k)>,
                                       affine_map<(m, n, k) -> (m, n)>]
      ins(%y, %w : tensor<32x16xf32>, tensor<64x16xf32>)
      outs(%e_dx : tensor<32x64xf32>) -> tensor<32x64xf32>
  %e_dw = tensor.empty() : tensor<64x16xf32>
  // CHECK: linalg.matmul indexing_maps = [#{{.*}}, #{{.*}}, #{{.*}}] {fp4train.role = #fp4train.role<wgrad, weight = 1, operand = 1>}
  // PYTORCH: linalg.matmul indexing_maps = [#{{.*}}, #{{.*}}, #{{.*}}] {fp4train.role = #fp4train.role<wgrad, weight = 1, operand = 0>}
  %dw = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (k, m)>,
                                       affine_map<(m, n, k) -> (k, n)>,
                                       affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %y : tensor<32x64xf32>, tensor<32x16xf32>)
      outs(%e_dw : tensor<64x16xf32>) -> tensor<64x16xf32>
  return %y, %dx, %dw : tensor<32x16xf32>, tensor<32x64xf32>, tensor<64x16xf32>
}
