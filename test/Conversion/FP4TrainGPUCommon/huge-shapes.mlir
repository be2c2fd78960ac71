// Shapes whose sizes int64 cannot hold. The GPU conversions flatten, tile
// and allocate the tensors of the fp4train ops in int64; a size that wraps
// around built a tensor.expand_shape whose size product overflowed (invalid
// IR out of fp4train-to-nvvm on sm_120a, sm_100a and sm_90a). Each size is
// now checked with the numerics library's checked element count, and what
// cannot be represented is an error naming the op (docs/robustness.md).
//
// RUN: not fp4-opt %s --split-input-file --fp4train-cuda-kernel-pipeline="recipe=nvfp4 chip=sm_120a" 2>&1 | FileCheck %s --check-prefix=BYTES
// RUN: not fp4-opt %s --split-input-file --fp4train-cuda-kernel-pipeline="recipe=nvfp4 chip=sm_100a" 2>&1 | FileCheck %s --check-prefix=BYTES
// RUN: not fp4-opt %s --split-input-file --fp4train-cuda-kernel-pipeline="recipe=mxfp4 chip=sm_90a" 2>&1 | FileCheck %s --check-prefix=SM90
// RUN: not fp4-opt %s --split-input-file --fp4train-rocm-kernel-pipeline="recipe=mxfp4" 2>&1 | FileCheck %s --check-prefix=BYTES
// RUN: not fp4-opt %s --split-input-file --fp4train-quantize-pipeline="recipe=nvfp4" 2>&1 | FileCheck %s --check-prefix=COUNT
// RUN: not fp4-opt %s --split-input-file --fp4train-cpu-pipeline="recipe=mxfp4" 2>&1 | FileCheck %s --check-prefix=COUNT

// K = 2^57: 32 x 2^57 f32 activations are 2^62 elements, which int64
// counts, but 2^64 bytes, which it does not; the grid (one M and one N
// tile) is within the launch limits. Only the GPU pipelines allocate them.
// BYTES: error: 'fp4train.quantize' op operates on 'tensor<32x144115188075855872xf32>', whose size in bytes does not fit in int64: GPU kernels cannot address it
// On sm_90a the MXFP4 GEMM's operand staging kernels ([WG4]) take a K step
// per workgroup in y, so its grid check refuses K = 2^57 first.
// SM90: error: 'fp4train.scaled_matmul' op needs 1125899906842624 K steps of 128 in the grid of the kernels that stage its operands on sm_90a, past the launch limit (65535 in y)
func.func @train_step(%x: tensor<32x144115188075855872xf32>, %w: tensor<32x144115188075855872xf32> {fp4train.param}) -> tensor<32x32xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<32x32xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<32x32xf32>) -> tensor<32x32xf32>
  %y = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %w : tensor<32x144115188075855872xf32>, tensor<32x144115188075855872xf32>) outs(%f : tensor<32x32xf32>) -> tensor<32x32xf32>
  return %y : tensor<32x32xf32>
}

// -----

// A weight of 2^31 x 2^40 elements: no !fp4train.scaled type can count it,
// so the quantize pass refuses it instead of building one that no later pass
// or parser accepts.
// COUNT: error: cannot quantize a fprop contraction on 'tensor<2147483648x1099511627776xf32>': its element count does not fit in int64
// BYTES: error: cannot quantize a fprop contraction on 'tensor<2147483648x1099511627776xf32>': its element count does not fit in int64
// SM90: error: cannot quantize a fprop contraction on 'tensor<2147483648x1099511627776xf32>': its element count does not fit in int64
func.func @train_step(%x: tensor<32x1099511627776xf32>, %w: tensor<2147483648x1099511627776xf32> {fp4train.param}) -> tensor<32x2147483648xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<32x2147483648xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<32x2147483648xf32>) -> tensor<32x2147483648xf32>
  %y = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %w : tensor<32x1099511627776xf32>, tensor<2147483648x1099511627776xf32>) outs(%f : tensor<32x2147483648xf32>) -> tensor<32x2147483648xf32>
  return %y : tensor<32x2147483648xf32>
}
