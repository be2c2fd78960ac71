// The tcgen05 GEMM kernel per format and on a shape ragged in M, N and K
// (cuda-ptxas-sm100a.test): operands already quantized (recipe=none).
!nv = !fp4train.scaled<4096x4096xf4E2M1FN, block = [1, 16], scale = f8E4M3FN, global>
!mx = !fp4train.scaled<4096x4096xf4E2M1FN, block = [1, 32], scale = f8E8M0FNU>
!f8 = !fp4train.scaled<4096x4096xf8E4M3FN, block = [1, 32], scale = f8E8M0FNU>
!ra = !fp4train.scaled<1000x4000xf4E2M1FN, block = [1, 16], scale = f8E4M3FN, global>
!rb = !fp4train.scaled<999x4000xf4E2M1FN, block = [1, 16], scale = f8E4M3FN, global>
func.func @nvfp4(%a: !nv, %b: !nv, %acc: tensor<4096x4096xf32>) -> tensor<4096x4096xf32> {
  %c = fp4train.scaled_matmul %a, %b, %acc : !nv, !nv, tensor<4096x4096xf32>
  return %c : tensor<4096x4096xf32>
}
func.func @mxfp4(%a: !mx, %b: !mx, %acc: tensor<4096x4096xf32>) -> tensor<4096x4096xf32> {
  %c = fp4train.scaled_matmul %a, %b, %acc : !mx, !mx, tensor<4096x4096xf32>
  return %c : tensor<4096x4096xf32>
}
func.func @mxfp8_bf16(%a: !f8, %b: !f8, %acc: tensor<4096x4096xf32>) -> tensor<4096x4096xbf16> {
  %c = fp4train.scaled_matmul %a, %b, %acc : !f8, !f8, tensor<4096x4096xf32>
  %t = arith.truncf %c : tensor<4096x4096xf32> to tensor<4096x4096xbf16>
  return %t : tensor<4096x4096xbf16>
}
func.func @nvfp4_ragged(%a: !ra, %b: !rb, %acc: tensor<1000x999xf32>) -> tensor<1000x999xf32> {
  %c = fp4train.scaled_matmul %a, %b, %acc : !ra, !rb, tensor<1000x999xf32>
  return %c : tensor<1000x999xf32>
}
