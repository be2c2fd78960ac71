// Driver for examples/transformer_block_train_step.mlir (concatenated with it
// and with pattern.mlir): runs one training step on pattern data and prints
// the loss and the parameter gradients, in the order check_train_step.py
// expects.

func.func @main() {
  %c1 = arith.constant 1 : i64
  %c2 = arith.constant 2 : i64
  %c3 = arith.constant 3 : i64
  %c4 = arith.constant 4 : i64
  %c5 = arith.constant 5 : i64
  %c6 = arith.constant 6 : i64
  %c7 = arith.constant 7 : i64
  %c8 = arith.constant 8 : i64
  %c9 = arith.constant 9 : i64
  %c10 = arith.constant 10 : i64
  %n32 = arith.constant 32 : index
  %n64 = arith.constant 64 : index
  %n128 = arith.constant 128 : index
  %scale_6 = arith.constant 0.015625 : f32      // 2^-6
  %scale_8 = arith.constant 0.00390625 : f32    // 2^-8
  %scale_9 = arith.constant 0.001953125 : f32   // 2^-9
  %step = arith.constant 0 : i64

  %x_d = call @pattern(%n32, %n64, %c1, %scale_6) : (index, index, i64, f32) -> tensor<?x?xf32>
  %target_d = call @pattern(%n32, %n64, %c2, %scale_6) : (index, index, i64, f32) -> tensor<?x?xf32>
  %g1_d = call @pattern_vec(%n64, %c3, %scale_6) : (index, i64, f32) -> tensor<?xf32>
  %wq_d = call @pattern(%n64, %n64, %c4, %scale_8) : (index, index, i64, f32) -> tensor<?x?xf32>
  %wk_d = call @pattern(%n64, %n64, %c5, %scale_8) : (index, index, i64, f32) -> tensor<?x?xf32>
  %wv_d = call @pattern(%n64, %n64, %c6, %scale_8) : (index, index, i64, f32) -> tensor<?x?xf32>
  %wo_d = call @pattern(%n64, %n64, %c7, %scale_8) : (index, index, i64, f32) -> tensor<?x?xf32>
  %g2_d = call @pattern_vec(%n64, %c8, %scale_6) : (index, i64, f32) -> tensor<?xf32>
  %w1_d = call @pattern(%n128, %n64, %c9, %scale_8) : (index, index, i64, f32) -> tensor<?x?xf32>
  %w2_d = call @pattern(%n64, %n128, %c10, %scale_9) : (index, index, i64, f32) -> tensor<?x?xf32>
  %x = tensor.cast %x_d : tensor<?x?xf32> to tensor<32x64xf32>
  %target = tensor.cast %target_d : tensor<?x?xf32> to tensor<32x64xf32>
  %g1 = tensor.cast %g1_d : tensor<?xf32> to tensor<64xf32>
  %wq = tensor.cast %wq_d : tensor<?x?xf32> to tensor<64x64xf32>
  %wk = tensor.cast %wk_d : tensor<?x?xf32> to tensor<64x64xf32>
  %wv = tensor.cast %wv_d : tensor<?x?xf32> to tensor<64x64xf32>
  %wo = tensor.cast %wo_d : tensor<?x?xf32> to tensor<64x64xf32>
  %g2 = tensor.cast %g2_d : tensor<?xf32> to tensor<64xf32>
  %w1 = tensor.cast %w1_d : tensor<?x?xf32> to tensor<128x64xf32>
  %w2 = tensor.cast %w2_d : tensor<?x?xf32> to tensor<64x128xf32>

  %loss, %dg1, %dwq, %dwk, %dwv, %dwo, %dg2, %dw1, %dw2 = call @train_step(
      %x, %target, %g1, %wq, %wk, %wv, %wo, %g2, %w1, %w2, %step)
      : (tensor<32x64xf32>, tensor<32x64xf32>, tensor<64xf32>, tensor<64x64xf32>,
         tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64xf32>,
         tensor<128x64xf32>, tensor<64x128xf32>, i64)
      -> (tensor<f32>, tensor<64xf32>, tensor<64x64xf32>, tensor<64x64xf32>,
          tensor<64x64xf32>, tensor<64x64xf32>, tensor<64xf32>, tensor<128x64xf32>,
          tensor<64x128xf32>)

  %loss_u = tensor.cast %loss : tensor<f32> to tensor<*xf32>
  %dg1_u = tensor.cast %dg1 : tensor<64xf32> to tensor<*xf32>
  %dwq_u = tensor.cast %dwq : tensor<64x64xf32> to tensor<*xf32>
  %dwk_u = tensor.cast %dwk : tensor<64x64xf32> to tensor<*xf32>
  %dwv_u = tensor.cast %dwv : tensor<64x64xf32> to tensor<*xf32>
  %dwo_u = tensor.cast %dwo : tensor<64x64xf32> to tensor<*xf32>
  %dg2_u = tensor.cast %dg2 : tensor<64xf32> to tensor<*xf32>
  %dw1_u = tensor.cast %dw1 : tensor<128x64xf32> to tensor<*xf32>
  %dw2_u = tensor.cast %dw2 : tensor<64x128xf32> to tensor<*xf32>
  call @printMemrefF32(%loss_u) : (tensor<*xf32>) -> ()
  call @printMemrefF32(%dg1_u) : (tensor<*xf32>) -> ()
  call @printMemrefF32(%dwq_u) : (tensor<*xf32>) -> ()
  call @printMemrefF32(%dwk_u) : (tensor<*xf32>) -> ()
  call @printMemrefF32(%dwv_u) : (tensor<*xf32>) -> ()
  call @printMemrefF32(%dwo_u) : (tensor<*xf32>) -> ()
  call @printMemrefF32(%dg2_u) : (tensor<*xf32>) -> ()
  call @printMemrefF32(%dw1_u) : (tensor<*xf32>) -> ()
  call @printMemrefF32(%dw2_u) : (tensor<*xf32>) -> ()
  return
}
