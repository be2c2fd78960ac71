// A linear layer Y = X . W^T + b and its two backward GEMMs, written
// directly in the fp4train dialect with the NVFP4 training recipe:
//
//   Fprop  Y  = X  . W^T   NVFP4, round-to-nearest-even, 16x16 weight blocks
//   Dgrad  dX = dY . W     the same quantized weight, transposed (no
//                          re-quantization); dY stochastically rounded
//   Wgrad  dW = dY^T . X   both operands rotated by a 16-point random
//                          Hadamard along the token dimension, dY rounded
//                          stochastically
//
// Shapes: 256 tokens, 512 input features, 128 output features.
// Later passes produce this from plain linalg (fp4train-quantize-matmuls).

!act   = !fp4train.scaled<256x512xf4E2M1FN, block = [1, 16], scale = f8E4M3FN, global>
!w     = !fp4train.scaled<128x512xf4E2M1FN, block = [16, 16], scale = f8E4M3FN, global>
!wt    = !fp4train.scaled<512x128xf4E2M1FN, block = [16, 16], scale = f8E4M3FN, global>
!dy    = !fp4train.scaled<256x128xf4E2M1FN, block = [1, 16], scale = f8E4M3FN, global>
!dyt   = !fp4train.scaled<128x256xf4E2M1FN, block = [1, 16], scale = f8E4M3FN, global>
!xt    = !fp4train.scaled<512x256xf4E2M1FN, block = [1, 16], scale = f8E4M3FN, global>

func.func @linear_forward(%x: tensor<256x512xf32>,
                          %w: tensor<128x512xf32> {fp4train.param},
                          %b: tensor<128xf32> {fp4train.param}) -> tensor<256x128xf32> {
  %qx = fp4train.quantize %x : tensor<256x512xf32> -> !act
  %qw = fp4train.quantize %w : tensor<128x512xf32> -> !w
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<256x128xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%empty : tensor<256x128xf32>) -> tensor<256x128xf32>
  %y = fp4train.scaled_matmul %qx, %qw, %acc : !act, !w, tensor<256x128xf32>
  %yb = linalg.broadcast ins(%b : tensor<128xf32>) outs(%empty : tensor<256x128xf32>)
      dimensions = [0]
  %out = linalg.add ins(%y, %yb : tensor<256x128xf32>, tensor<256x128xf32>)
      outs(%empty : tensor<256x128xf32>) -> tensor<256x128xf32>
  return %out : tensor<256x128xf32>
}

func.func @linear_backward(%x: tensor<256x512xf32>,
                           %w: tensor<128x512xf32> {fp4train.param},
                           %dy: tensor<256x128xf32>,
                           %step: i64) -> (tensor<256x512xf32>, tensor<128x512xf32>) {
  %zero = arith.constant 0.0 : f32
  // Seeds derive from the training step so two runs give the same bits.
  %c1 = arith.constant 1 : i64
  %c2 = arith.constant 2 : i64
  %seed_dgrad = arith.addi %step, %c1 : i64
  %seed_wgrad = arith.addi %step, %c2 : i64

  // Dgrad: dX = dY . W, with W^T as the K-major right-hand side.
  %qw = fp4train.quantize %w : tensor<128x512xf32> -> !w
  %qwt = fp4train.transpose %qw : !w -> !wt
  %qdy = fp4train.quantize %dy rounding = stochastic seed(%seed_dgrad)
      : tensor<256x128xf32> -> !dy
  %e0 = tensor.empty() : tensor<256x512xf32>
  %acc0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<256x512xf32>) -> tensor<256x512xf32>
  %dx = fp4train.scaled_matmul %qdy, %qwt, %acc0 : !dy, !wt, tensor<256x512xf32>

  // Wgrad: dW = dY^T . X contracts over tokens; rotate both operands along
  // the token dimension with the same random-sign Hadamard matrix.
  %dyt_e = tensor.empty() : tensor<128x256xf32>
  %dyt = linalg.transpose ins(%dy : tensor<256x128xf32>) outs(%dyt_e : tensor<128x256xf32>)
      permutation = [1, 0]
  %xt_e = tensor.empty() : tensor<512x256xf32>
  %xt = linalg.transpose ins(%x : tensor<256x512xf32>) outs(%xt_e : tensor<512x256xf32>)
      permutation = [1, 0]
  %rdyt = fp4train.hadamard %dyt with #fp4train.hadamard<16, random> along 1
      seed(%seed_wgrad) step(%step) : tensor<128x256xf32>
  %rxt = fp4train.hadamard %xt with #fp4train.hadamard<16, random> along 1
      seed(%seed_wgrad) step(%step) : tensor<512x256xf32>
  %qdyt = fp4train.quantize %rdyt rounding = stochastic seed(%seed_wgrad)
      : tensor<128x256xf32> -> !dyt
  %qxt = fp4train.quantize %rxt : tensor<512x256xf32> -> !xt
  %e1 = tensor.empty() : tensor<128x512xf32>
  %acc1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<128x512xf32>) -> tensor<128x512xf32>
  %dw = fp4train.scaled_matmul %qdyt, %qxt, %acc1 : !dyt, !xt, tensor<128x512xf32>
  return %dx, %dw : tensor<256x512xf32>, tensor<128x512xf32>
}
