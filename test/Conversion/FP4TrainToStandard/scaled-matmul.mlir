// RUN: fp4-opt %s --fp4train-expand | FileCheck %s

// [GEMM1] for MXFP4 x MXFP4: integer block products (i32 for E2M1 pairs),
// then one rounding per block term, summed over K blocks, then acc + T.
// CHECK-LABEL: func.func @mxfp4
// CHECK: %[[P:.*]] = linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "parallel", "reduction"]{{.*}} outs({{.*}} : tensor<8x6x3xi32>)
// CHECK: arith.muli {{.*}} : i32
// CHECK: %[[T:.*]] = linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "reduction"]{{.*}} ins(%[[P]], {{.*}}, {{.*}} : tensor<8x6x3xi32>, tensor<8x3xi8>, tensor<6x3xi8>) outs({{.*}} : tensor<8x6xf32>)
// CHECK: math.ctlz {{.*}} : i64
// CHECK: arith.truncf {{.*}} : f64 to f32
// CHECK: linalg.generic {{.*}} ins(%{{.*}}, %[[T]] : tensor<8x6xf32>, tensor<8x6xf32>)
// CHECK-NOT: fp4train
func.func @mxfp4(%a: !fp4train.scaled<8x96xf4E2M1FN, block = [1, 32], scale = f8E8M0FNU>,
                 %b: !fp4train.scaled<6x96xf4E2M1FN, block = [1, 32], scale = f8E8M0FNU>,
                 %acc: tensor<8x6xf32>) -> tensor<8x6xf32> {
  %c = fp4train.scaled_matmul %a, %b, %acc : !fp4train.scaled<8x96xf4E2M1FN, block = [1, 32], scale = f8E8M0FNU>, !fp4train.scaled<6x96xf4E2M1FN, block = [1, 32], scale = f8E8M0FNU>, tensor<8x6xf32>
  return %c : tensor<8x6xf32>
}

// E5M2 pairs need i128 products, and FP8 elements an f32 side sum for the
// IEEE evaluation of NaN/Inf blocks.
// CHECK-LABEL: func.func @e5m2
// CHECK: linalg.generic {{.*}} outs({{.*}}, {{.*}} : tensor<2x4x2xi128>, tensor<2x4x2xf32>)
// CHECK: math.absf
func.func @e5m2(%a: !fp4train.scaled<2x64xf8E5M2, block = [1, 32], scale = f8E8M0FNU>,
                %b: !fp4train.scaled<4x64xf8E5M2, block = [1, 32], scale = f8E8M0FNU>,
                %acc: tensor<2x4xf32>) -> tensor<2x4xf32> {
  %c = fp4train.scaled_matmul %a, %b, %acc : !fp4train.scaled<2x64xf8E5M2, block = [1, 32], scale = f8E8M0FNU>, !fp4train.scaled<4x64xf8E5M2, block = [1, 32], scale = f8E8M0FNU>, tensor<2x4xf32>
  return %c : tensor<2x4xf32>
}

// A 16x16-blocked NVFP4 weight: its [N/16, K/16] scales are repeated per
// row; the global decode scales multiply T once.
// CHECK-LABEL: func.func @nvfp4_2d
// CHECK-SAME: %[[GA:[^:]*]]: f32, %{{.*}}: tensor<32x32xi8>, %{{.*}}: tensor<2x4xi8>, %[[GB:[^:]*]]: f32
// CHECK: linalg.generic {{.*}} ins(%{{.*}} : tensor<2x4xi8>) outs(%{{.*}} : tensor<2x16x4xi8>)
// CHECK: tensor.collapse_shape {{.*}} into tensor<32x4xi8>
// CHECK: arith.mulf %[[GA]], %[[GB]] : f32
func.func @nvfp4_2d(%a: !fp4train.scaled<8x64xf4E2M1FN, block = [1, 16], scale = f8E4M3FN, global>,
                    %b: !fp4train.scaled<32x64xf4E2M1FN, block = [16, 16], scale = f8E4M3FN, global>,
                    %acc: tensor<8x32xf32>) -> tensor<8x32xf32> {
  %c = fp4train.scaled_matmul %a, %b, %acc : !fp4train.scaled<8x64xf4E2M1FN, block = [1, 16], scale = f8E4M3FN, global>, !fp4train.scaled<32x64xf4E2M1FN, block = [16, 16], scale = f8E4M3FN, global>, tensor<8x32xf32>
  return %c : tensor<8x32xf32>
}

// [TE2] An alpha replaces g whole: it multiplies T, and the global decode
// scales are not read.
// CHECK-LABEL: func.func @nvfp4_alpha
// CHECK-SAME: %[[GA:[^:]*]]: f32, %{{.*}}: tensor<32x32xi8>, %{{.*}}: tensor<2x4xi8>, %[[GB:[^:]*]]: f32, %{{.*}}: tensor<8x32xf32>, %[[ALPHA:[^:]*]]: f32) -> tensor<8x32xf32>
// CHECK-NOT: arith.mulf %[[GA]], %[[GB]]
// CHECK: ^bb0(%[[ACC:.*]]: f32, %[[TERM:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[SCALED:.*]] = arith.mulf %[[ALPHA]], %[[TERM]] : f32
// CHECK-NEXT: arith.addf %[[ACC]], %[[SCALED]] : f32
func.func @nvfp4_alpha(%a: !fp4train.scaled<8x64xf4E2M1FN, block = [1, 16], scale = f8E4M3FN, global>,
                       %b: !fp4train.scaled<32x64xf4E2M1FN, block = [16, 16], scale = f8E4M3FN, global>,
                       %acc: tensor<8x32xf32>, %alpha: f32) -> tensor<8x32xf32> {
  %c = fp4train.scaled_matmul %a, %b, %acc alpha(%alpha) : !fp4train.scaled<8x64xf4E2M1FN, block = [1, 16], scale = f8E4M3FN, global>, !fp4train.scaled<32x64xf4E2M1FN, block = [16, 16], scale = f8E4M3FN, global>, tensor<8x32xf32>
  return %c : tensor<8x32xf32>
}
