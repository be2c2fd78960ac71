// RUN: fp4-opt %s -split-input-file -verify-diagnostics

// Every verifier message of the dialect: types, attributes, discardable
// attributes and ops, in that order.

//===----------------------------------------------------------------------===//
// !fp4train.scaled
//===----------------------------------------------------------------------===//

// expected-error @below {{block-scaled tensors need rank >= 1}}
func.func private @rank0(!fp4train.scaled<f4E2M1FN, block = [], scale = f8E8M0FNU>)

// -----

// expected-error @below {{block shape has 1 entries but the tensor has rank 2}}
func.func private @block_rank(!fp4train.scaled<64x128xf4E2M1FN, block = [32], scale = f8E8M0FNU>)

// -----

// 2^31 x 2^32 elements: the count wraps to INT64_MIN, from which every
// lowering would size its buffers.
// expected-error @below {{the tensor has more elements than int64 can count}}
func.func private @count_overflow(!fp4train.scaled<2147483648x4294967296xf4E2M1FN, block = [1, 32], scale = f8E8M0FNU>)

// -----

// expected-error @below {{dimension sizes must be positive}}
func.func private @zero_dim(!fp4train.scaled<0x32xf4E2M1FN, block = [1, 32], scale = f8E8M0FNU>)

// -----

// expected-error @below {{block sizes must be positive}}
func.func private @zero_block(!fp4train.scaled<64x32xf4E2M1FN, block = [0, 32], scale = f8E8M0FNU>)

// -----

// expected-error @below {{expected static shape}}
func.func private @dynamic(!fp4train.scaled<?x32xf4E2M1FN, block = [1, 32], scale = f8E8M0FNU>)

// -----

// expected-error @below {{unsupported format: element type 'f4E2M1FN' with scale type 'f16'}}
func.func private @bad_scale(!fp4train.scaled<64x32xf4E2M1FN, block = [1, 32], scale = f16>)

// -----

// expected-error @below {{unsupported format: element type 'f8E5M2' with scale type 'f8E4M3FN'}}
func.func private @fp8_e4m3_scale(!fp4train.scaled<64x32xf8E5M2, block = [1, 16], scale = f8E4M3FN>)

// -----

// expected-error @below {{unsupported format: element type 'bf16'}}
func.func private @wide_element(!fp4train.scaled<64x32xbf16, block = [1, 32], scale = f8E8M0FNU>)

// -----

// expected-error @below {{E8M0-scaled (MX) formats need a block of 32 along exactly one dimension}}
func.func private @mx_block16(!fp4train.scaled<64x32xf4E2M1FN, block = [1, 16], scale = f8E8M0FNU>)

// -----

// expected-error @below {{E8M0-scaled (MX) formats need a block of 32 along exactly one dimension}}
func.func private @mx_block2d(!fp4train.scaled<64x64xf8E4M3FN, block = [32, 32], scale = f8E8M0FNU>)

// -----

// expected-error @below {{a global scale is only defined for NVFP4 (f8E4M3FN block scales)}}
func.func private @mx_global(!fp4train.scaled<64x32xf4E2M1FN, block = [1, 32], scale = f8E8M0FNU, global>)

// -----

// expected-error @below {{NVFP4 needs a block of 16 along one dimension, or 16x16 on the last two dimensions}}
func.func private @nv_block32(!fp4train.scaled<64x32xf4E2M1FN, block = [1, 32], scale = f8E4M3FN>)

// -----

// expected-error @below {{NVFP4 needs a block of 16 along one dimension, or 16x16 on the last two dimensions}}
func.func private @nv_2d_leading(!fp4train.scaled<32x32x4xf4E2M1FN, block = [16, 16, 1], scale = f8E4M3FN>)

// -----

// expected-error @below {{dimension 1 of size 40 is not a multiple of its block size 16}}
func.func private @partial_block(!fp4train.scaled<64x40xf4E2M1FN, block = [1, 16], scale = f8E4M3FN>)

// -----

// expected-error @below {{dimension 0 of size 48 is not a multiple of its block size 32}}
func.func private @partial_block_dim0(!fp4train.scaled<48x64xf8E5M2, block = [32, 1], scale = f8E8M0FNU>)

// -----

//===----------------------------------------------------------------------===//
// Attributes
//===----------------------------------------------------------------------===//

// expected-error @below {{Hadamard size must be a power of two in [16, 256], got 8}}
func.func private @h_small() attributes {h = #fp4train.hadamard<8, none>}

// -----

// expected-error @below {{Hadamard size must be a power of two in [16, 256], got 48}}
func.func private @h_npot() attributes {h = #fp4train.hadamard<48, none>}

// -----

// expected-error @below {{Hadamard size must be a power of two in [16, 256], got 512}}
func.func private @h_large() attributes {h = #fp4train.hadamard<512, random>}

// -----

func.func private @h_random_vector() attributes {
  // expected-error @below {{an explicit sign vector needs `fixed` signs, got `random`}}
  h = #fp4train.hadamard<16, random, signs = [1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1]>}

// -----

// expected-error @below {{expected 16 signs, got 2}}
func.func private @h_short() attributes {h = #fp4train.hadamard<16, fixed, signs = [1, -1]>}

// -----

func.func private @h_value() attributes {
  // expected-error @below {{signs must be +1 or -1, got 2}}
  h = #fp4train.hadamard<16, fixed, signs = [1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2]>}

// -----

// expected-error @below {{stochastic rounding is only defined for E2M1 formats, not mxfp8_e4m3}}
func.func private @q_sr_fp8() attributes {q = #fp4train.quant<format = mxfp8_e4m3, rounding = stochastic>}

// -----

// expected-error @below {{scale_mode rceil applies to E8M0-scaled (MX) formats only, not nvfp4}}
func.func private @q_rceil_nv() attributes {q = #fp4train.quant<format = nvfp4, scale_mode = rceil>}

// -----

// expected-error @below {{2-D weight blocks need an nvfp4 weight, but the fprop weight is mxfp4}}
func.func private @r_2d_mx() attributes {r = #fp4train.recipe<
  fprop = <lhs = <format = mxfp4>, rhs = <format = mxfp4>>, weights_2d = true>}

// -----

// expected-error @below {{2-D weight blocks cannot be combined with a Hadamard rotation on dgrad}}
func.func private @r_2d_hadamard() attributes {r = #fp4train.recipe<
  dgrad = <lhs = <format = nvfp4>, rhs = <format = nvfp4>, hadamard = <16, fixed>>, weights_2d = true>}

// -----

// expected-error @below {{with 2-D weight blocks the fprop and dgrad weights must be quantized identically}}
func.func private @r_2d_differ() attributes {r = #fp4train.recipe<
  fprop = <lhs = <format = nvfp4>, rhs = <format = nvfp4>>,
  dgrad = <lhs = <format = nvfp4>, rhs = <format = nvfp4, rounding = stochastic>>, weights_2d = true>}

// -----

//===----------------------------------------------------------------------===//
// Discardable attributes
//===----------------------------------------------------------------------===//

// expected-error @below {{operand must be 0 or 1, got 2}}
func.func private @role_operand() attributes {r = #fp4train.role<fprop, operand = 2>}

// -----

// expected-error @below {{contracted needs the weight operand of an fprop or dgrad role}}
func.func private @role_contracted() attributes {r = #fp4train.role<wgrad, operand = 0, contracted = 1>}

// -----

// expected-error @below {{expected weight, operand or contracted, got 'param'}}
func.func private @role_key() attributes {r = #fp4train.role<fprop, param = 1>}

// -----

// expected-error @below {{'weight' is given twice}}
func.func private @role_twice() attributes {r = #fp4train.role<fprop, weight = 1, weight = 2>}

// -----

// expected-error @below {{expected fprop, dgrad or wgrad, got 'other'}}
func.func private @role_other() attributes {r = #fp4train.role<other>}

// -----

func.func @role_weight(%a: tensor<4x4xf32>, %b: tensor<4x4xf32>, %c: tensor<4x4xf32>) -> tensor<4x4xf32> {
  // expected-error @below {{'fp4train.role' #fp4train.role<fprop, weight = 3> names argument #3, which the enclosing function does not have}}
  %0 = linalg.matmul ins(%a, %b : tensor<4x4xf32>, tensor<4x4xf32>) outs(%c : tensor<4x4xf32>)
      {fp4train.role = #fp4train.role<fprop, weight = 3>} -> tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}

// -----

func.func @role_operand_range(%a: tensor<4x4xf32>, %b: tensor<4x4xf32>, %c: tensor<4x4xf32>) -> tensor<4x4xf32> {
  // expected-error @below {{names dimension 2 of operand #1 of type 'tensor<4x4xf32>'}}
  %0 = linalg.matmul ins(%a, %b : tensor<4x4xf32>, tensor<4x4xf32>) outs(%c : tensor<4x4xf32>)
      {fp4train.role = #fp4train.role<fprop, weight = 1, operand = 1, contracted = 2>} -> tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}

// -----

func.func @role_not_role(%a: tensor<4x4xf32>, %b: tensor<4x4xf32>, %c: tensor<4x4xf32>) -> tensor<4x4xf32> {
  // expected-error @below {{'fp4train.role' must be a #fp4train.role attribute, got "fprop"}}
  %0 = linalg.matmul ins(%a, %b : tensor<4x4xf32>, tensor<4x4xf32>) outs(%c : tensor<4x4xf32>)
      {fp4train.role = "fprop"} -> tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}

// -----

// expected-error @below {{'fp4train.param' is only valid on function arguments}}
func.func private @param_on_op() attributes {fp4train.param}

// -----

// expected-error @below {{unknown fp4train attribute 'fp4train.weight'}}
func.func private @unknown_op_attr() attributes {fp4train.weight}

// -----

// expected-error @below {{unknown fp4train argument attribute 'fp4train.weight'}}
func.func private @unknown_arg_attr(tensor<4x4xf32> {fp4train.weight})

// -----

// expected-error @below {{'fp4train.param' must be a unit attribute}}
func.func private @param_not_unit(tensor<4x4xf32> {fp4train.param = 1 : i32})

// -----

// expected-error @below {{'fp4train.block' must be a non-negative i64, got -1 : i64}}
func.func private @negative_block(tensor<4x4xf32> {fp4train.param, fp4train.block = -1 : i64})

// -----

// expected-error @below {{'fp4train.block' must be a non-negative i64, got "0"}}
func.func private @block_not_integer(tensor<4x4xf32> {fp4train.param, fp4train.block = "0"})

// -----

// expected-error @below {{'fp4train.block' must be a non-negative i64, got 0 : i32}}
func.func private @block_not_i64(tensor<4x4xf32> {fp4train.param, fp4train.block = 0 : i32})

// -----

// expected-error @below {{'fp4train.block' is only valid on a parameter ({fp4train.param})}}
func.func private @block_without_param(tensor<4x4xf32> {fp4train.block = 0 : i64})

// -----

// expected-error @below {{'fp4train.router' must be a unit attribute}}
func.func private @router_not_unit(tensor<4x4xf32> {fp4train.param, fp4train.router = 1 : i64})

// -----

// expected-error @below {{'fp4train.router' is only valid on a parameter ({fp4train.param})}}
func.func private @router_without_param(tensor<4x4xf32> {fp4train.router})

// -----

// expected-error @below {{'fp4train.param' on argument #1 needs a ranked tensor or memref, got 'i64'}}
func.func private @param_scalar(tensor<4x4xf32> {fp4train.param}, i64 {fp4train.param})

// -----

//===----------------------------------------------------------------------===//
// fp4train.quantize
//===----------------------------------------------------------------------===//

func.func @quantize_shape(%x: tensor<64x64xf32>) {
  // expected-error @below {{result shape 64x128 does not match input shape 64x64}}
  %0 = fp4train.quantize %x : tensor<64x64xf32>
      -> !fp4train.scaled<64x128xf4E2M1FN, block = [1, 32], scale = f8E8M0FNU>
  return
}

// -----

func.func @quantize_sr_no_seed(%x: tensor<64x128xf32>) {
  // expected-error @below {{stochastic rounding requires a seed operand}}
  %0 = fp4train.quantize %x rounding = stochastic : tensor<64x128xf32>
      -> !fp4train.scaled<64x128xf4E2M1FN, block = [1, 32], scale = f8E8M0FNU>
  return
}

// -----

func.func @quantize_seed_rne(%x: tensor<64x128xf32>, %seed: i64) {
  // expected-error @below {{a seed is only meaningful with stochastic rounding}}
  %0 = fp4train.quantize %x seed(%seed) : tensor<64x128xf32>
      -> !fp4train.scaled<64x128xf4E2M1FN, block = [1, 32], scale = f8E8M0FNU>
  return
}

// -----

func.func @quantize_sr_fp8(%x: tensor<64x128xf32>, %seed: i64) {
  // expected-error @below {{stochastic rounding is only defined for E2M1 elements, not 'f8E4M3FN'}}
  %0 = fp4train.quantize %x rounding = stochastic seed(%seed) : tensor<64x128xf32>
      -> !fp4train.scaled<64x128xf8E4M3FN, block = [1, 32], scale = f8E8M0FNU>
  return
}

// -----

func.func @quantize_amax_no_global(%x: tensor<64x128xf32>, %amax: f32) {
  // expected-error @below {{an amax operand requires a result type with a global scale (NVFP4)}}
  %0 = fp4train.quantize %x amax(%amax) : tensor<64x128xf32>
      -> !fp4train.scaled<64x128xf4E2M1FN, block = [1, 16], scale = f8E4M3FN>
  return
}

// -----

func.func @quantize_rceil_nv(%x: tensor<64x128xf32>) {
  // expected-error @below {{scale_mode rceil applies to E8M0 block scales only, not 'f8E4M3FN'}}
  %0 = fp4train.quantize %x scale_mode = rceil : tensor<64x128xf32>
      -> !fp4train.scaled<64x128xf4E2M1FN, block = [1, 16], scale = f8E4M3FN>
  return
}

// -----

func.func @quantize_origin_without_shape(%x: tensor<64x128xf32>, %i: index) {
  // expected-error @below {{an origin needs the logical shape it lies in}}
  %0 = "fp4train.quantize"(%x, %i, %i) <{operandSegmentSizes = array<i32: 1, 0, 0, 2>}>
      : (tensor<64x128xf32>, index, index) -> !fp4train.scaled<64x128xf4E2M1FN, block = [1, 32], scale = f8E8M0FNU>
  return
}

// -----

func.func @quantize_part_rank(%x: tensor<64x128xf32>, %i: index) {
  // expected-error @below {{a part needs one origin and one logical size per dimension (2), got 1 and 2}}
  %0 = fp4train.quantize %x at(%i) of [128, 128] : tensor<64x128xf32>
      -> !fp4train.scaled<64x128xf4E2M1FN, block = [1, 32], scale = f8E8M0FNU>
  return
}

// -----

func.func @quantize_part_larger(%x: tensor<64x128xf32>, %i: index) {
  // expected-error @below {{dimension 1 of the part (size 128) is larger than the logical size 64}}
  %0 = fp4train.quantize %x at(%i, %i) of [128, 64] : tensor<64x128xf32>
      -> !fp4train.scaled<64x128xf4E2M1FN, block = [1, 32], scale = f8E8M0FNU>
  return
}

// -----

func.func @quantize_int(%x: tensor<64x128xi32>) {
  // expected-error @below {{operand #0 must be ranked tensor of 32-bit float or bfloat16 type or 16-bit float values}}
  %0 = fp4train.quantize %x : tensor<64x128xi32>
      -> !fp4train.scaled<64x128xf4E2M1FN, block = [1, 32], scale = f8E8M0FNU>
  return
}

// -----

//===----------------------------------------------------------------------===//
// fp4train.dequantize
//===----------------------------------------------------------------------===//

func.func @dequantize_shape(%q: !fp4train.scaled<64x128xf4E2M1FN, block = [1, 32], scale = f8E8M0FNU>) {
  // expected-error @below {{result shape 128x64 does not match input shape 64x128}}
  %0 = fp4train.dequantize %q : !fp4train.scaled<64x128xf4E2M1FN, block = [1, 32], scale = f8E8M0FNU>
      -> tensor<128x64xf32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// fp4train.hadamard
//===----------------------------------------------------------------------===//

func.func @hadamard_dim(%x: tensor<64x128xf32>) {
  // expected-error @below {{dimension 2 is out of range for a tensor of rank 2}}
  %0 = fp4train.hadamard %x with #fp4train.hadamard<16, none> along 2 : tensor<64x128xf32>
  return
}

// -----

func.func @hadamard_multiple(%x: tensor<64x40xf32>) {
  // expected-error @below {{dimension 1 of size 40 is not a multiple of the Hadamard size 16}}
  %0 = fp4train.hadamard %x with #fp4train.hadamard<16, none> along 1 : tensor<64x40xf32>
  return
}

// -----

func.func @hadamard_dynamic(%x: tensor<64x?xf32>) {
  // expected-error @below {{dimension 1 must be static}}
  %0 = fp4train.hadamard %x with #fp4train.hadamard<16, none> along 1 : tensor<64x?xf32>
  return
}

// -----

// The lowerings allocate the result with static sizes: a dynamic dimension
// that is not rotated is rejected here rather than turned into invalid IR.
func.func @hadamard_dynamic_other(%x: tensor<?x64xf32>) {
  // expected-error @below {{needs a static shape, but dimension 0 is dynamic}}
  %0 = fp4train.hadamard %x with #fp4train.hadamard<16, none> along 1 : tensor<?x64xf32>
  return
}

// -----

func.func @hadamard_random_no_seed(%x: tensor<64x128xf32>, %seed: i64) {
  // expected-error @below {{a Hadamard rotation with random signs requires seed and step operands}}
  %0 = fp4train.hadamard %x with #fp4train.hadamard<16, random> along 1 seed(%seed) : tensor<64x128xf32>
  return
}

// -----

func.func @hadamard_fixed_seed(%x: tensor<64x128xf32>, %seed: i64, %step: i64) {
  // expected-error @below {{seed and step are only meaningful with random signs}}
  %0 = fp4train.hadamard %x with #fp4train.hadamard<16, fixed> along 1 seed(%seed) step(%step)
      : tensor<64x128xf32>
  return
}

// -----

func.func @hadamard_bf16(%x: tensor<64x128xbf16>) {
  // expected-error @below {{operand #0 must be ranked tensor of 32-bit float values}}
  %0 = fp4train.hadamard %x with #fp4train.hadamard<16, none> along 1 : tensor<64x128xbf16>
  return
}

// -----

//===----------------------------------------------------------------------===//
// fp4train.scaled_matmul
//===----------------------------------------------------------------------===//

func.func @matmul_rank1(%a: !fp4train.scaled<64xf4E2M1FN, block = [32], scale = f8E8M0FNU>,
                        %acc: tensor<1xf32>) {
  // expected-error @below {{operands need rank >= 2 ([batch..., rows, K]), got rank 1}}
  %0 = fp4train.scaled_matmul %a, %a, %acc
      : !fp4train.scaled<64xf4E2M1FN, block = [32], scale = f8E8M0FNU>,
        !fp4train.scaled<64xf4E2M1FN, block = [32], scale = f8E8M0FNU>, tensor<1xf32>
  return
}

// -----

func.func @matmul_rank(%a: !fp4train.scaled<8x64xf4E2M1FN, block = [1, 32], scale = f8E8M0FNU>,
                       %b: !fp4train.scaled<2x8x64xf4E2M1FN, block = [1, 1, 32], scale = f8E8M0FNU>,
                       %acc: tensor<8x8xf32>) {
  // expected-error @below {{lhs, rhs and acc must have the same rank, got 2, 3 and 2}}
  %0 = fp4train.scaled_matmul %a, %b, %acc
      : !fp4train.scaled<8x64xf4E2M1FN, block = [1, 32], scale = f8E8M0FNU>,
        !fp4train.scaled<2x8x64xf4E2M1FN, block = [1, 1, 32], scale = f8E8M0FNU>, tensor<8x8xf32>
  return
}

// -----

func.func @matmul_batch(%a: !fp4train.scaled<2x8x64xf4E2M1FN, block = [1, 1, 32], scale = f8E8M0FNU>,
                        %b: !fp4train.scaled<3x8x64xf4E2M1FN, block = [1, 1, 32], scale = f8E8M0FNU>,
                        %acc: tensor<2x8x8xf32>) {
  // expected-error @below {{batch dimensions of lhs (2) and rhs (3) differ}}
  %0 = fp4train.scaled_matmul %a, %b, %acc
      : !fp4train.scaled<2x8x64xf4E2M1FN, block = [1, 1, 32], scale = f8E8M0FNU>,
        !fp4train.scaled<3x8x64xf4E2M1FN, block = [1, 1, 32], scale = f8E8M0FNU>, tensor<2x8x8xf32>
  return
}

// -----

func.func @matmul_k(%a: !fp4train.scaled<8x64xf4E2M1FN, block = [1, 32], scale = f8E8M0FNU>,
                    %b: !fp4train.scaled<8x96xf4E2M1FN, block = [1, 32], scale = f8E8M0FNU>,
                    %acc: tensor<8x8xf32>) {
  // expected-error @below {{contraction dimensions differ: lhs K = 64, rhs K = 96}}
  %0 = fp4train.scaled_matmul %a, %b, %acc
      : !fp4train.scaled<8x64xf4E2M1FN, block = [1, 32], scale = f8E8M0FNU>,
        !fp4train.scaled<8x96xf4E2M1FN, block = [1, 32], scale = f8E8M0FNU>, tensor<8x8xf32>
  return
}

// -----

func.func @matmul_not_k_blocked(%a: !fp4train.scaled<64x64xf4E2M1FN, block = [32, 1], scale = f8E8M0FNU>,
                                %b: !fp4train.scaled<8x64xf4E2M1FN, block = [1, 32], scale = f8E8M0FNU>,
                                %acc: tensor<64x8xf32>) {
  // expected-error @below {{lhs must be blocked along its contraction (last) dimension, but its block shape is [32, 1]}}
  %0 = fp4train.scaled_matmul %a, %b, %acc
      : !fp4train.scaled<64x64xf4E2M1FN, block = [32, 1], scale = f8E8M0FNU>,
        !fp4train.scaled<8x64xf4E2M1FN, block = [1, 32], scale = f8E8M0FNU>, tensor<64x8xf32>
  return
}

// -----

func.func @matmul_rhs_not_k_blocked(%a: !fp4train.scaled<8x64xf4E2M1FN, block = [1, 32], scale = f8E8M0FNU>,
                                    %b: !fp4train.scaled<32x64xf4E2M1FN, block = [32, 1], scale = f8E8M0FNU>,
                                    %acc: tensor<8x32xf32>) {
  // expected-error @below {{rhs must be blocked along its contraction (last) dimension, but its block shape is [32, 1]}}
  %0 = fp4train.scaled_matmul %a, %b, %acc
      : !fp4train.scaled<8x64xf4E2M1FN, block = [1, 32], scale = f8E8M0FNU>,
        !fp4train.scaled<32x64xf4E2M1FN, block = [32, 1], scale = f8E8M0FNU>, tensor<8x32xf32>
  return
}

// -----

func.func @matmul_k_block(%a: !fp4train.scaled<8x64xf4E2M1FN, block = [1, 32], scale = f8E8M0FNU>,
                          %b: !fp4train.scaled<8x64xf4E2M1FN, block = [1, 16], scale = f8E4M3FN>,
                          %acc: tensor<8x8xf32>) {
  // expected-error @below {{K block sizes differ: lhs 32, rhs 16}}
  %0 = fp4train.scaled_matmul %a, %b, %acc
      : !fp4train.scaled<8x64xf4E2M1FN, block = [1, 32], scale = f8E8M0FNU>,
        !fp4train.scaled<8x64xf4E2M1FN, block = [1, 16], scale = f8E4M3FN>, tensor<8x8xf32>
  return
}

// -----

func.func @matmul_acc(%a: !fp4train.scaled<8x64xf4E2M1FN, block = [1, 32], scale = f8E8M0FNU>,
                      %b: !fp4train.scaled<16x64xf4E2M1FN, block = [1, 32], scale = f8E8M0FNU>,
                      %acc: tensor<16x8xf32>) {
  // expected-error @below {{accumulator shape 16x8 does not match 8x16 ([batch..., M, N])}}
  %0 = fp4train.scaled_matmul %a, %b, %acc
      : !fp4train.scaled<8x64xf4E2M1FN, block = [1, 32], scale = f8E8M0FNU>,
        !fp4train.scaled<16x64xf4E2M1FN, block = [1, 32], scale = f8E8M0FNU>, tensor<16x8xf32>
  return
}

// -----

func.func @matmul_acc_f16(%a: !fp4train.scaled<8x64xf4E2M1FN, block = [1, 32], scale = f8E8M0FNU>,
                          %acc: tensor<8x8xf16>) {
  // expected-error @below {{operand #2 must be ranked tensor of 32-bit float values}}
  %0 = fp4train.scaled_matmul %a, %a, %acc
      : !fp4train.scaled<8x64xf4E2M1FN, block = [1, 32], scale = f8E8M0FNU>,
        !fp4train.scaled<8x64xf4E2M1FN, block = [1, 32], scale = f8E8M0FNU>, tensor<8x8xf16>
  return
}

// -----

//===----------------------------------------------------------------------===//
// fp4train.pack / fp4train.unpack
//===----------------------------------------------------------------------===//

func.func @pack_values(%v: tensor<32x64xf8E4M3FN>, %s: tensor<32x2xf8E8M0FNU>) {
  // expected-error @below {{values type 'tensor<32x64xf8E4M3FN>' does not match the element tensor 'tensor<32x64xf4E2M1FN>' of the result type}}
  %0 = fp4train.pack %v, %s : tensor<32x64xf8E4M3FN>, tensor<32x2xf8E8M0FNU>
      -> !fp4train.scaled<32x64xf4E2M1FN, block = [1, 32], scale = f8E8M0FNU>
  return
}

// -----

func.func @pack_scales(%v: tensor<32x64xf4E2M1FN>, %s: tensor<32x4xf8E8M0FNU>) {
  // expected-error @below {{scales type 'tensor<32x4xf8E8M0FNU>' does not match the scale tensor 'tensor<32x2xf8E8M0FNU>' of the result type}}
  %0 = fp4train.pack %v, %s : tensor<32x64xf4E2M1FN>, tensor<32x4xf8E8M0FNU>
      -> !fp4train.scaled<32x64xf4E2M1FN, block = [1, 32], scale = f8E8M0FNU>
  return
}

// -----

func.func @pack_no_global(%v: tensor<32x64xf4E2M1FN>, %s: tensor<32x4xf8E4M3FN>) {
  // expected-error @below {{the result type has a global scale but no global_scale operand is given}}
  %0 = fp4train.pack %v, %s : tensor<32x64xf4E2M1FN>, tensor<32x4xf8E4M3FN>
      -> !fp4train.scaled<32x64xf4E2M1FN, block = [1, 16], scale = f8E4M3FN, global>
  return
}

// -----

func.func @pack_extra_global(%v: tensor<32x64xf4E2M1FN>, %s: tensor<32x4xf8E4M3FN>, %g: f32) {
  // expected-error @below {{a global_scale operand is given but the result type has no global scale}}
  %0 = fp4train.pack %v, %s, %g : tensor<32x64xf4E2M1FN>, tensor<32x4xf8E4M3FN>
      -> !fp4train.scaled<32x64xf4E2M1FN, block = [1, 16], scale = f8E4M3FN>
  return
}

// -----

func.func @unpack_types(%q: !fp4train.scaled<32x64xf4E2M1FN, block = [1, 32], scale = f8E8M0FNU>) {
  // expected-error @below {{failed to infer returned types}}
  // expected-error @below {{'fp4train.unpack' op inferred type(s) 'tensor<32x64xf4E2M1FN>', 'tensor<32x2xf8E8M0FNU>' are incompatible with return type(s) of operation 'tensor<32x64xf4E2M1FN>', 'tensor<32x4xf8E8M0FNU>'}}
  %0:2 = "fp4train.unpack"(%q) : (!fp4train.scaled<32x64xf4E2M1FN, block = [1, 32], scale = f8E8M0FNU>)
      -> (tensor<32x64xf4E2M1FN>, tensor<32x4xf8E8M0FNU>)
  return
}

// -----

//===----------------------------------------------------------------------===//
// fp4train.transpose
//===----------------------------------------------------------------------===//

func.func @transpose_1d(%q: !fp4train.scaled<32x64xf4E2M1FN, block = [1, 16], scale = f8E4M3FN>) {
  // expected-error @below {{a transposed view needs 16x16 blocks; a 1-D-blocked tensor must be re-quantized along the new contraction dimension}}
  %0 = fp4train.transpose %q : !fp4train.scaled<32x64xf4E2M1FN, block = [1, 16], scale = f8E4M3FN>
      -> !fp4train.scaled<64x32xf4E2M1FN, block = [16, 1], scale = f8E4M3FN>
  return
}

// -----

func.func @transpose_type(%q: !fp4train.scaled<32x64xf4E2M1FN, block = [16, 16], scale = f8E4M3FN, global>) {
  // expected-error @below {{result type must be '!fp4train.scaled<64x32xf4E2M1FN, block = [16, 16], scale = f8E4M3FN, global>' (the input with dimensions 0 and 1 swapped), got '!fp4train.scaled<64x32xf4E2M1FN, block = [16, 16], scale = f8E4M3FN>'}}
  %0 = fp4train.transpose %q : !fp4train.scaled<32x64xf4E2M1FN, block = [16, 16], scale = f8E4M3FN, global>
      -> !fp4train.scaled<64x32xf4E2M1FN, block = [16, 16], scale = f8E4M3FN>
  return
}
