// [TE2] TransformerEngine's GEMM factor. With gemm-alpha=amax every GEMM of
// two NVFP4 operands computes each operand's tensor amax once (the [NV1]
// integer max of the sign-cleared bits), gives it to the quantize op, and
// multiplies the product by amax_a * amax_b * f32(1 / 7225344) in place of
// the operands' global decode scales.
// RUN: fp4-opt %s --fp4train-quantize-pipeline="recipe=nvfp4 gemm-alpha=amax report=%t.json" \
// RUN:   | FileCheck %s --check-prefixes=CHECK,AMAX
// RUN: FileCheck %s --check-prefix=REPORT < %t.json
// RUN: fp4-opt %s --fp4train-quantize-pipeline="recipe=nvfp4" \
// RUN:   | FileCheck %s --check-prefixes=CHECK,SCALES
// RUN: fp4-opt %s --fp4train-quantize-pipeline="recipe=nvfp4 gemm-alpha=scales" \
// RUN:   | FileCheck %s --check-prefixes=CHECK,SCALES
// A recipe written out says the same.
// RUN: fp4-opt %s --fp4train-quantize-pipeline='recipe={#fp4train.recipe<name = "te", fprop = <lhs = <format = nvfp4>, rhs = <format = nvfp4>, alpha = amax>, roles = [fprop]>}' \
// RUN:   | FileCheck %s --check-prefixes=CHECK,AMAX
// Formats without a tensor amax cannot have it.
// RUN: not fp4-opt %s --fp4train-quantize-pipeline="recipe=mxfp4 gemm-alpha=amax" 2>&1 \
// RUN:   | FileCheck %s --check-prefix=NONVFP4
// RUN: not fp4-opt %s --fp4train-quantize-pipeline='recipe={#fp4train.recipe<name = "bad", fprop = <lhs = <format = mxfp4>, rhs = <format = mxfp4>, alpha = amax>, roles = [fprop]>}' 2>&1 \
// RUN:   | FileCheck %s --check-prefix=VERIFY
// RUN: not fp4-opt %s --fp4train-quantize-pipeline="recipe=nvfp4 gemm-alpha=te" 2>&1 \
// RUN:   | FileCheck %s --check-prefix=VALUE

// CHECK-LABEL: func @fprop
// AMAX:      %[[XBITS:.*]] = linalg.generic {{.*}}iterator_types = ["reduction", "reduction"]{{.*}} ins(%[[X:.*]] : tensor<32x64xf32>) outs(%{{.*}} : tensor<i32>)
// AMAX:        arith.bitcast %{{.*}} : f32 to i32
// AMAX:        arith.andi %{{.*}}, %{{.*}} : i32
// AMAX:        arith.maxui
// AMAX:      %[[XWORD:.*]] = tensor.extract %[[XBITS]][] : tensor<i32>
// AMAX:      %[[XAMAX:.*]] = arith.bitcast %[[XWORD]] : i32 to f32
// AMAX:      %[[QX:.*]] = fp4train.quantize %[[X]] amax(%[[XAMAX]])
// AMAX:      %[[WAMAX:.*]] = arith.bitcast %{{.*}} : i32 to f32
// AMAX:      %[[QW:.*]] = fp4train.quantize %{{.*}} amax(%[[WAMAX]])
// AMAX:      %[[PRODUCT:.*]] = arith.mulf %[[XAMAX]], %[[WAMAX]] : f32
// AMAX:      %[[ALPHA:.*]] = arith.mulf %[[PRODUCT]], %{{.*}} : f32
// AMAX:      fp4train.scaled_matmul %[[QX]], %[[QW]], %{{.*}} alpha(%[[ALPHA]])
// SCALES-NOT: amax(
// SCALES:    fp4train.scaled_matmul %{{[^ ]*}}, %{{[^ ]*}}, %{{[^ ]*}} :
func.func @fprop(%x: tensor<32x64xf32>, %w: tensor<48x64xf32> {fp4train.param},
                 %y0: tensor<32x48xf32>) -> tensor<32x48xf32> {
  %y = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>,
                                      affine_map<(m, n, k) -> (n, k)>,
                                      affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %w : tensor<32x64xf32>, tensor<48x64xf32>)
      outs(%y0 : tensor<32x48xf32>) -> tensor<32x48xf32>
  return %y : tensor<32x48xf32>
}

// REPORT: "alpha": "amax"
// NONVFP4: error: gemm-alpha=amax needs a GEMM with two nvfp4 operands, but recipe 'mxfp4' has none
// VERIFY: alpha = amax needs two nvfp4 operands (a tensor amax each), got mxfp4 and mxfp4
// VALUE: 'te'
