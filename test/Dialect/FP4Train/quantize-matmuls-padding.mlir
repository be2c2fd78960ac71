// RUN: fp4-opt %s --fp4train-quantize-pipeline="recipe=nvfp4" | FileCheck %s

// K = 40 and a 24-row weight under 16x16 blocks: both are zero-padded to
// whole blocks (48 and 32), which leaves the product unchanged, and the
// result is sliced back to 8x24.
// CHECK-LABEL: func @padded
// CHECK-SAME: (%[[X:.*]]: tensor<8x40xf32>, %[[W:.*]]: tensor<24x40xf32> {fp4train.param}, %[[INIT:.*]]: tensor<8x24xf32>)
// CHECK: %[[PX:.*]] = tensor.pad %[[X]] low[0, 0] high[0, 8]
// CHECK: tensor<8x40xf32> to tensor<8x48xf32>
// CHECK: %[[PW:.*]] = tensor.pad %[[W]] low[0, 0] high[8, 8]
// CHECK: tensor<24x40xf32> to tensor<32x48xf32>
// CHECK: %[[QX:.*]] = fp4train.quantize %[[PX]] : tensor<8x48xf32> -> !fp4train.scaled<8x48xf4E2M1FN, block = [1, 16], scale = f8E4M3FN, global>
// CHECK: %[[QW:.*]] = fp4train.quantize %[[PW]] : tensor<32x48xf32> -> !fp4train.scaled<32x48xf4E2M1FN, block = [16, 16], scale = f8E4M3FN, global>
// CHECK: %[[PACC:.*]] = tensor.pad %[[INIT]] low[0, 0] high[0, 8]
// CHECK: tensor<8x24xf32> to tensor<8x32xf32>
// CHECK: %[[C:.*]] = fp4train.scaled_matmul %[[QX]], %[[QW]], %[[PACC]]
// CHECK: %[[S:.*]] = tensor.extract_slice %[[C]][0, 0] [8, 24] [1, 1] : tensor<8x32xf32> to tensor<8x24xf32>
// CHECK: return %[[S]]
func.func @padded(%x: tensor<8x40xf32>, %w: tensor<24x40xf32> {fp4train.param},
                  %init: tensor<8x24xf32>) -> tensor<8x24xf32> {
  %y = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>,
                                      affine_map<(m, n, k) -> (n, k)>,
                                      affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %w : tensor<8x40xf32>, tensor<24x40xf32>) outs(%init : tensor<8x24xf32>) -> tensor<8x24xf32>
  return %y : tensor<8x24xf32>
}

// bf16 graphs: a [B, T, in] activation against a shared weight in a
// generic contraction with bf16 operands and an f32 init; the activation's
// batch and token dimensions become the GEMM rows.
#x3 = affine_map<(b, t, o, i) -> (b, t, i)>
#w2 = affine_map<(b, t, o, i) -> (o, i)>
#y3 = affine_map<(b, t, o, i) -> (b, t, o)>
// CHECK-LABEL: func @batched_tokens
// CHECK: %[[XC:.*]] = tensor.collapse_shape %arg0 {{\[}}[0, 1], [2]] : tensor<2x8x32xbf16> into tensor<16x32xbf16>
// CHECK: %[[QX:.*]] = fp4train.quantize %[[XC]] : tensor<16x32xbf16>
// CHECK: %[[QW:.*]] = fp4train.quantize %arg1 : tensor<16x32xbf16> -> !fp4train.scaled<16x32xf4E2M1FN, block = [16, 16]
// CHECK: %[[Y:.*]] = fp4train.scaled_matmul %[[QX]], %[[QW]], %{{.*}} : {{.*}}, tensor<16x16xf32>
// CHECK: %[[YE:.*]] = tensor.expand_shape %[[Y]] {{\[}}[0, 1], [2]] output_shape [2, 8, 16] : tensor<16x16xf32> into tensor<2x8x16xf32>
// CHECK: return %[[YE]]
func.func @batched_tokens(%x: tensor<2x8x32xbf16>, %w: tensor<16x32xbf16> {fp4train.param},
                          %init: tensor<2x8x16xf32>) -> tensor<2x8x16xf32> {
  %y = linalg.generic {indexing_maps = [#x3, #w2, #y3],
                       iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%x, %w : tensor<2x8x32xbf16>, tensor<16x32xbf16>) outs(%init : tensor<2x8x16xf32>) {
  ^bb0(%a: bf16, %b: bf16, %acc: f32):
    %ae = arith.extf %a : bf16 to f32
    %be = arith.extf %b : bf16 to f32
    %p = arith.mulf %ae, %be : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<2x8x16xf32>
  return %y : tensor<2x8x16xf32>
}

// A Wgrad over [B, T] activations contracts two dimensions: both become the
// K dimension of the block-scaled GEMM (K = B*T = 32). W is a weight because
// the layer's Fprop reads it.
#dy3 = affine_map<(o, i, b, t) -> (b, t, o)>
#xk3 = affine_map<(o, i, b, t) -> (b, t, i)>
#dw2 = affine_map<(o, i, b, t) -> (o, i)>
// CHECK-LABEL: func @wgrad_over_tokens
// CHECK: %[[DYT:.*]] = linalg.transpose ins(%arg0 : tensor<2x16x32xf32>) outs(%{{.*}} : tensor<32x2x16xf32>) permutation = [2, 0, 1]
// CHECK: %[[DYK:.*]] = tensor.collapse_shape %[[DYT]] {{\[}}[0], [1, 2]] : tensor<32x2x16xf32> into tensor<32x32xf32>
// CHECK: %[[XT:.*]] = linalg.transpose ins(%arg1 : tensor<2x16x48xf32>) outs(%{{.*}} : tensor<48x2x16xf32>) permutation = [2, 0, 1]
// CHECK: %[[XK:.*]] = tensor.collapse_shape %[[XT]] {{\[}}[0], [1, 2]] : tensor<48x2x16xf32> into tensor<48x32xf32>
// CHECK-DAG: fp4train.hadamard %[[DYK]] with #fp4train.hadamard<16, random> along 1
// CHECK-DAG: fp4train.hadamard %[[XK]] with #fp4train.hadamard<16, random> along 1
// CHECK: fp4train.scaled_matmul {{.*}}, tensor<32x48xf32>
func.func @wgrad_over_tokens(%dy: tensor<2x16x32xf32>, %x: tensor<2x16x48xf32>,
                             %w: tensor<32x48xf32> {fp4train.param},
                             %init: tensor<32x48xf32>, %y0: tensor<2x16x32xf32>)
    -> (tensor<32x48xf32>, tensor<2x16x32xf32>) {
  %dw = linalg.generic {indexing_maps = [#dy3, #xk3, #dw2],
                        iterator_types = ["parallel", "parallel", "reduction", "reduction"]}
      ins(%dy, %x : tensor<2x16x32xf32>, tensor<2x16x48xf32>) outs(%init : tensor<32x48xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<32x48xf32>
  %y = linalg.generic {indexing_maps = [#x3, #w2, #y3],
                       iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%x, %w : tensor<2x16x48xf32>, tensor<32x48xf32>) outs(%y0 : tensor<2x16x32xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<2x16x32xf32>
  return %dw, %y : tensor<32x48xf32>, tensor<2x16x32xf32>
}
