// Driver for examples/mlp_train_step.mlir (concatenated with it and with
// pattern.mlir): runs one training step on pattern data and prints the loss
// and the updated parameters, in the order check_train_step.py expects.
//
// The learning rate is a large power of two: lr·dP then dominates P in
// P_new = P − lr·dP, so the printed P_new carries dP to nearly full precision
// and the checker recovers dP = (P − P_new)/lr.

func.func @main() {
  %c1 = arith.constant 1 : i64
  %c2 = arith.constant 2 : i64
  %c3 = arith.constant 3 : i64
  %c4 = arith.constant 4 : i64
  %c5 = arith.constant 5 : i64
  %c6 = arith.constant 6 : i64
  %c7 = arith.constant 7 : i64
  %c8 = arith.constant 8 : i64
  %n32 = arith.constant 32 : index
  %n64 = arith.constant 64 : index
  %scale_6 = arith.constant 0.015625 : f32      // 2^-6
  %scale_7 = arith.constant 0.0078125 : f32     // 2^-7
  %scale_8 = arith.constant 0.00390625 : f32    // 2^-8
  %lr = arith.constant 1024.0 : f32
  %step = arith.constant 0 : i64

  %x_d = call @pattern(%n64, %n32, %c1, %scale_6) : (index, index, i64, f32) -> tensor<?x?xf32>
  %target_d = call @pattern(%n64, %n32, %c2, %scale_6) : (index, index, i64, f32) -> tensor<?x?xf32>
  %w1_d = call @pattern(%n64, %n32, %c3, %scale_7) : (index, index, i64, f32) -> tensor<?x?xf32>
  %b1_d = call @pattern_vec(%n64, %c4, %scale_8) : (index, i64, f32) -> tensor<?xf32>
  %w2_d = call @pattern(%n64, %n64, %c5, %scale_8) : (index, index, i64, f32) -> tensor<?x?xf32>
  %b2_d = call @pattern_vec(%n64, %c6, %scale_8) : (index, i64, f32) -> tensor<?xf32>
  %w3_d = call @pattern(%n32, %n64, %c7, %scale_8) : (index, index, i64, f32) -> tensor<?x?xf32>
  %b3_d = call @pattern_vec(%n32, %c8, %scale_8) : (index, i64, f32) -> tensor<?xf32>
  %x = tensor.cast %x_d : tensor<?x?xf32> to tensor<64x32xf32>
  %target = tensor.cast %target_d : tensor<?x?xf32> to tensor<64x32xf32>
  %w1 = tensor.cast %w1_d : tensor<?x?xf32> to tensor<64x32xf32>
  %b1 = tensor.cast %b1_d : tensor<?xf32> to tensor<64xf32>
  %w2 = tensor.cast %w2_d : tensor<?x?xf32> to tensor<64x64xf32>
  %b2 = tensor.cast %b2_d : tensor<?xf32> to tensor<64xf32>
  %w3 = tensor.cast %w3_d : tensor<?x?xf32> to tensor<32x64xf32>
  %b3 = tensor.cast %b3_d : tensor<?xf32> to tensor<32xf32>

  %loss, %w1_new, %b1_new, %w2_new, %b2_new, %w3_new, %b3_new = call @train_step(
      %x, %target, %w1, %b1, %w2, %b2, %w3, %b3, %lr, %step)
      : (tensor<64x32xf32>, tensor<64x32xf32>, tensor<64x32xf32>, tensor<64xf32>,
         tensor<64x64xf32>, tensor<64xf32>, tensor<32x64xf32>, tensor<32xf32>, f32, i64)
      -> (tensor<f32>, tensor<64x32xf32>, tensor<64xf32>, tensor<64x64xf32>,
          tensor<64xf32>, tensor<32x64xf32>, tensor<32xf32>)

  %loss_u = tensor.cast %loss : tensor<f32> to tensor<*xf32>
  %w1_u = tensor.cast %w1_new : tensor<64x32xf32> to tensor<*xf32>
  %b1_u = tensor.cast %b1_new : tensor<64xf32> to tensor<*xf32>
  %w2_u = tensor.cast %w2_new : tensor<64x64xf32> to tensor<*xf32>
  %b2_u = tensor.cast %b2_new : tensor<64xf32> to tensor<*xf32>
  %w3_u = tensor.cast %w3_new : tensor<32x64xf32> to tensor<*xf32>
  %b3_u = tensor.cast %b3_new : tensor<32xf32> to tensor<*xf32>
  call @printMemrefF32(%loss_u) : (tensor<*xf32>) -> ()
  call @printMemrefF32(%w1_u) : (tensor<*xf32>) -> ()
  call @printMemrefF32(%b1_u) : (tensor<*xf32>) -> ()
  call @printMemrefF32(%w2_u) : (tensor<*xf32>) -> ()
  call @printMemrefF32(%b2_u) : (tensor<*xf32>) -> ()
  call @printMemrefF32(%w3_u) : (tensor<*xf32>) -> ()
  call @printMemrefF32(%b3_u) : (tensor<*xf32>) -> ()
  return
}
