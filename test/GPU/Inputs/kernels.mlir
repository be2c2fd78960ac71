func.func @quantize(%x: tensor<64x256xf32>)
    -> !fp4train.scaled<64x256xf4E2M1FN, block = [1, 32], scale = f8E8M0FNU> {
  %q = fp4train.quantize %x : tensor<64x256xf32>
      -> !fp4train.scaled<64x256xf4E2M1FN, block = [1, 32], scale = f8E8M0FNU>
  return %q : !fp4train.scaled<64x256xf4E2M1FN, block = [1, 32], scale = f8E8M0FNU>
}

func.func @gemm(%a: !fp4train.scaled<64x128xf4E2M1FN, block = [1, 32], scale = f8E8M0FNU>, %b: !fp4train.scaled<64x128xf4E2M1FN, block = [1, 32], scale = f8E8M0FNU>, %acc: tensor<64x64xf32>) -> tensor<64x64xf32> {
  %c = fp4train.scaled_matmul %a, %b, %acc : !fp4train.scaled<64x128xf4E2M1FN, block = [1, 32], scale = f8E8M0FNU>, !fp4train.scaled<64x128xf4E2M1FN, block = [1, 32], scale = f8E8M0FNU>, tensor<64x64xf32>
  return %c : tensor<64x64xf32>
}

func.func @gemm_big(%a: !fp4train.scaled<4096x4096xf4E2M1FN, block = [1, 32], scale = f8E8M0FNU>, %b: !fp4train.scaled<4096x4096xf4E2M1FN, block = [1, 32], scale = f8E8M0FNU>, %acc: tensor<4096x4096xf32>) -> tensor<4096x4096xf32> {
  %c = fp4train.scaled_matmul %a, %b, %acc : !fp4train.scaled<4096x4096xf4E2M1FN, block = [1, 32], scale = f8E8M0FNU>, !fp4train.scaled<4096x4096xf4E2M1FN, block = [1, 32], scale = f8E8M0FNU>, tensor<4096x4096xf32>
  return %c : tensor<4096x4096xf32>
}

// MXFP8 operands: 74 KiB of staging, the launch's dynamic shared memory.
func.func @gemm_fp8(%a: !fp4train.scaled<64x128xf8E4M3FN, block = [1, 32], scale = f8E8M0FNU>, %b: !fp4train.scaled<64x128xf8E4M3FN, block = [1, 32], scale = f8E8M0FNU>, %acc: tensor<64x64xf32>) -> tensor<64x64xf32> {
  %c = fp4train.scaled_matmul %a, %b, %acc : !fp4train.scaled<64x128xf8E4M3FN, block = [1, 32], scale = f8E8M0FNU>, !fp4train.scaled<64x128xf8E4M3FN, block = [1, 32], scale = f8E8M0FNU>, tensor<64x64xf32>
  return %c : tensor<64x64xf32>
}
