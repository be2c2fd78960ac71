// The single-kernel cases of make gpu-check (cases.txt): a quantize of each
// scale family and rounding, a Hadamard rotation and a block-scaled GEMM of
// each format at shapes the emulator runs in seconds (check), and the
// same kernels at shapes that measure the device (timing).

func.func @quantize_mxfp4(%x: tensor<512x2048xf32>)
    -> !fp4train.scaled<512x2048xf4E2M1FN, block = [1, 32], scale = f8E8M0FNU> {
  %q = fp4train.quantize %x : tensor<512x2048xf32>
      -> !fp4train.scaled<512x2048xf4E2M1FN, block = [1, 32], scale = f8E8M0FNU>
  return %q : !fp4train.scaled<512x2048xf4E2M1FN, block = [1, 32], scale = f8E8M0FNU>
}

func.func @quantize_nvfp4_sr(%x: tensor<512x2048xf32>, %seed: i64)
    -> !fp4train.scaled<512x2048xf4E2M1FN, block = [1, 16], scale = f8E4M3FN, global> {
  %q = fp4train.quantize %x rounding = stochastic seed(%seed) : tensor<512x2048xf32>
      -> !fp4train.scaled<512x2048xf4E2M1FN, block = [1, 16], scale = f8E4M3FN, global>
  return %q : !fp4train.scaled<512x2048xf4E2M1FN, block = [1, 16], scale = f8E4M3FN, global>
}

func.func @hadamard_32(%x: tensor<512x2048xf32>) -> tensor<512x2048xf32> {
  %r = fp4train.hadamard %x with #fp4train.hadamard<32, fixed> along 1 : tensor<512x2048xf32>
  return %r : tensor<512x2048xf32>
}

func.func @gemm_mxfp4(%a: !fp4train.scaled<256x512xf4E2M1FN, block = [1, 32], scale = f8E8M0FNU>, %b: !fp4train.scaled<256x512xf4E2M1FN, block = [1, 32], scale = f8E8M0FNU>, %acc: tensor<256x256xf32>) -> tensor<256x256xf32> {
  %c = fp4train.scaled_matmul %a, %b, %acc : !fp4train.scaled<256x512xf4E2M1FN, block = [1, 32], scale = f8E8M0FNU>, !fp4train.scaled<256x512xf4E2M1FN, block = [1, 32], scale = f8E8M0FNU>, tensor<256x256xf32>
  return %c : tensor<256x256xf32>
}

func.func @gemm_nvfp4(%a: !fp4train.scaled<256x512xf4E2M1FN, block = [1, 16], scale = f8E4M3FN, global>, %b: !fp4train.scaled<256x512xf4E2M1FN, block = [1, 16], scale = f8E4M3FN, global>, %acc: tensor<256x256xf32>) -> tensor<256x256xf32> {
  %c = fp4train.scaled_matmul %a, %b, %acc : !fp4train.scaled<256x512xf4E2M1FN, block = [1, 16], scale = f8E4M3FN, global>, !fp4train.scaled<256x512xf4E2M1FN, block = [1, 16], scale = f8E4M3FN, global>, tensor<256x256xf32>
  return %c : tensor<256x256xf32>
}

func.func @gemm_mxfp8(%a: !fp4train.scaled<256x512xf8E4M3FN, block = [1, 32], scale = f8E8M0FNU>, %b: !fp4train.scaled<256x512xf8E4M3FN, block = [1, 32], scale = f8E8M0FNU>, %acc: tensor<256x256xf32>) -> tensor<256x256xf32> {
  %c = fp4train.scaled_matmul %a, %b, %acc : !fp4train.scaled<256x512xf8E4M3FN, block = [1, 32], scale = f8E8M0FNU>, !fp4train.scaled<256x512xf8E4M3FN, block = [1, 32], scale = f8E8M0FNU>, tensor<256x256xf32>
  return %c : tensor<256x256xf32>
}

func.func @quantize_mxfp4_large(%x: tensor<8192x8192xf32>)
    -> !fp4train.scaled<8192x8192xf4E2M1FN, block = [1, 32], scale = f8E8M0FNU> {
  %q = fp4train.quantize %x : tensor<8192x8192xf32>
      -> !fp4train.scaled<8192x8192xf4E2M1FN, block = [1, 32], scale = f8E8M0FNU>
  return %q : !fp4train.scaled<8192x8192xf4E2M1FN, block = [1, 32], scale = f8E8M0FNU>
}

// [SR1] is the quantize nearest the issue bound (docs/nvvm.md): NVFP4 with
// a computed amax (the amax pass, then the quantize) and the fused RHT-16 +
// SR quantize of NVFP4's Wgrad operand, with constant seeds as a recipe's
// step has them.
func.func @quantize_nvfp4_sr_large(%x: tensor<8192x8192xf32>)
    -> !fp4train.scaled<8192x8192xf4E2M1FN, block = [1, 16], scale = f8E4M3FN, global> {
  %seed = arith.constant 7 : i64
  %q = fp4train.quantize %x rounding = stochastic seed(%seed) : tensor<8192x8192xf32>
      -> !fp4train.scaled<8192x8192xf4E2M1FN, block = [1, 16], scale = f8E4M3FN, global>
  return %q : !fp4train.scaled<8192x8192xf4E2M1FN, block = [1, 16], scale = f8E4M3FN, global>
}

func.func @wgrad_nvfp4_large(%x: tensor<8192x8192xf32>, %step: i64)
    -> !fp4train.scaled<8192x8192xf4E2M1FN, block = [1, 16], scale = f8E4M3FN, global> {
  %hseed = arith.constant 11 : i64
  %seed = arith.constant 7 : i64
  %r = fp4train.hadamard %x with #fp4train.hadamard<16, random> along 1 seed(%hseed) step(%step) : tensor<8192x8192xf32>
  %q = fp4train.quantize %r rounding = stochastic seed(%seed) : tensor<8192x8192xf32>
      -> !fp4train.scaled<8192x8192xf4E2M1FN, block = [1, 16], scale = f8E4M3FN, global>
  return %q : !fp4train.scaled<8192x8192xf4E2M1FN, block = [1, 16], scale = f8E4M3FN, global>
}

func.func @gemm_mxfp4_large(%a: !fp4train.scaled<8192x8192xf4E2M1FN, block = [1, 32], scale = f8E8M0FNU>, %b: !fp4train.scaled<8192x8192xf4E2M1FN, block = [1, 32], scale = f8E8M0FNU>, %acc: tensor<8192x8192xf32>) -> tensor<8192x8192xf32> {
  %c = fp4train.scaled_matmul %a, %b, %acc : !fp4train.scaled<8192x8192xf4E2M1FN, block = [1, 32], scale = f8E8M0FNU>, !fp4train.scaled<8192x8192xf4E2M1FN, block = [1, 32], scale = f8E8M0FNU>, tensor<8192x8192xf32>
  return %c : tensor<8192x8192xf32>
}
