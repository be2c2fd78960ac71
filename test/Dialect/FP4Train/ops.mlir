// RUN: fp4-opt %s -verify-roundtrip | FileCheck %s
// RUN: fp4-opt %s -mlir-print-op-generic | fp4-opt | FileCheck %s

// Every type, attribute and op of the dialect, printed back in its custom
// form. -verify-roundtrip also checks the generic and bytecode forms.

// CHECK-LABEL: func @types
// CHECK-SAME: !fp4train.scaled<64x128xf4E2M1FN, block = [1, 32], scale = f8E8M0FNU>
// CHECK-SAME: !fp4train.scaled<128x64xf4E2M1FN, block = [32, 1], scale = f8E8M0FNU>
// CHECK-SAME: !fp4train.scaled<64x128xf4E2M1FN, block = [1, 16], scale = f8E4M3FN>
// CHECK-SAME: !fp4train.scaled<64x128xf4E2M1FN, block = [1, 16], scale = f8E4M3FN, global>
// CHECK-SAME: !fp4train.scaled<64x128xf4E2M1FN, block = [16, 16], scale = f8E4M3FN, global>
// CHECK-SAME: !fp4train.scaled<2x32x64xf4E2M1FN, block = [1, 16, 16], scale = f8E4M3FN>
// CHECK-SAME: !fp4train.scaled<4x32x64xf8E4M3FN, block = [1, 1, 32], scale = f8E8M0FNU>
// CHECK-SAME: !fp4train.scaled<32xf8E5M2, block = [32], scale = f8E8M0FNU>
func.func @types(
    %a: !fp4train.scaled<64x128xf4E2M1FN, block = [1, 32], scale = f8E8M0FNU>,
    %b: !fp4train.scaled<128x64xf4E2M1FN, block = [32, 1], scale = f8E8M0FNU>,
    %c: !fp4train.scaled<64x128xf4E2M1FN, block = [1, 16], scale = f8E4M3FN>,
    %d: !fp4train.scaled<64x128xf4E2M1FN, block = [1, 16], scale = f8E4M3FN, global>,
    %e: !fp4train.scaled<64x128xf4E2M1FN, block = [16, 16], scale = f8E4M3FN, global>,
    %f: !fp4train.scaled<2x32x64xf4E2M1FN, block = [1, 16, 16], scale = f8E4M3FN>,
    %g: !fp4train.scaled<4x32x64xf8E4M3FN, block = [1, 1, 32], scale = f8E8M0FNU>,
    %h: !fp4train.scaled<32xf8E5M2, block = [32], scale = f8E8M0FNU>) {
  return
}

// Attribute dictionaries print sorted by name.
// CHECK-LABEL: func @attributes
// CHECK-SAME: f0 = #fp4train.format<mxfp4>
// CHECK-SAME: f1 = #fp4train.format<nvfp4>
// CHECK-SAME: f2 = #fp4train.format<mxfp8_e4m3>
// CHECK-SAME: f3 = #fp4train.format<mxfp8_e5m2>
// CHECK-SAME: g0 = #fp4train.gemm<lhs = <format = mxfp4>, rhs = <format = mxfp4>>
// CHECK-SAME: g1 = #fp4train.gemm<lhs = <format = nvfp4, rounding = stochastic>, rhs = <format = nvfp4>, hadamard = <16, random>>
// CHECK-SAME: h0 = #fp4train.hadamard<16, none>
// CHECK-SAME: h1 = #fp4train.hadamard<32, fixed>
// CHECK-SAME: h2 = #fp4train.hadamard<16, fixed, signs = [1, 1, 1, -1, 1, -1, -1, -1, -1, -1, -1, 1, -1, 1, -1, -1]>
// CHECK-SAME: h3 = #fp4train.hadamard<256, random>
// CHECK-SAME: q0 = #fp4train.quant<format = mxfp4>
// CHECK-SAME: q1 = #fp4train.quant<format = nvfp4, rounding = stochastic>
// CHECK-SAME: q2 = #fp4train.quant<format = mxfp8_e5m2, scale_mode = rceil>
// CHECK-SAME: r0 = #fp4train.rounding<nearest_even>
// CHECK-SAME: r1 = #fp4train.rounding<stochastic>
// CHECK-SAME: role0 = #fp4train.role<fprop>
// CHECK-SAME: role1 = #fp4train.role<dgrad>
// CHECK-SAME: role2 = #fp4train.role<wgrad>
// CHECK-SAME: role3 = #fp4train.role<dgrad, weight = 3, operand = 1, contracted = 0>
// CHECK-SAME: role4 = #fp4train.role<wgrad, weight = 2, operand = 0>
// CHECK-SAME: s0 = #fp4train.scale_mode<floor>
// CHECK-SAME: s1 = #fp4train.scale_mode<rceil>
func.func @attributes() attributes {
    r0 = #fp4train.rounding<nearest_even>,
    r1 = #fp4train.rounding<stochastic>,
    s0 = #fp4train.scale_mode<floor>,
    s1 = #fp4train.scale_mode<rceil>,
    f0 = #fp4train.format<mxfp4>,
    f1 = #fp4train.format<nvfp4>,
    f2 = #fp4train.format<mxfp8_e4m3>,
    f3 = #fp4train.format<mxfp8_e5m2>,
    h0 = #fp4train.hadamard<16, none>,
    h1 = #fp4train.hadamard<32, fixed>,
    h2 = #fp4train.hadamard<16, fixed, signs = [1, 1, 1, -1, 1, -1, -1, -1, -1, -1, -1, 1, -1, 1, -1, -1]>,
    h3 = #fp4train.hadamard<256, random>,
    q0 = #fp4train.quant<format = mxfp4>,
    q1 = #fp4train.quant<format = nvfp4, rounding = stochastic>,
    q2 = #fp4train.quant<format = mxfp8_e5m2, scale_mode = rceil>,
    g0 = #fp4train.gemm<lhs = <format = mxfp4>, rhs = <format = mxfp4>>,
    g1 = #fp4train.gemm<lhs = <format = nvfp4, rounding = stochastic>,
                        rhs = <format = nvfp4>, hadamard = <16, random>>,
    role0 = #fp4train.role<fprop>,
    role1 = #fp4train.role<dgrad>,
    role2 = #fp4train.role<wgrad>,
    role3 = #fp4train.role<dgrad, contracted = 0, weight = 3, operand = 1>,
    role4 = #fp4train.role<wgrad, weight = 2, operand = 0>} {
  return
}

// CHECK-LABEL: func @recipes
// CHECK-SAME: empty = #fp4train.recipe<>
// CHECK-SAME: mx = #fp4train.recipe<name = "mxfp4-hadamard", fprop = <lhs = <format = mxfp4>, rhs = <format = mxfp4>>, dgrad = <lhs = <format = mxfp4>, rhs = <format = mxfp4>>, wgrad = <lhs = <format = mxfp4>, rhs = <format = mxfp4>, hadamard = <32, fixed>>>
// CHECK-SAME: nv = #fp4train.recipe<name = "nvfp4", fprop = <lhs = <format = nvfp4>, rhs = <format = nvfp4>>, dgrad = <lhs = <format = nvfp4, rounding = stochastic>, rhs = <format = nvfp4>>, wgrad = <lhs = <format = nvfp4, rounding = stochastic>, rhs = <format = nvfp4>, hadamard = <16, random>>, weights_2d = true, keep_last = 2>
// CHECK-SAME: paper = #fp4train.recipe<name = "nvfp4-kept", fprop = <lhs = <format = nvfp4>, rhs = <format = nvfp4>>, keep_first_blocks = 2, keep_last_blocks = 8, quantize_router = true>
// CHECK-SAME: wgrad_only = #fp4train.recipe<wgrad = <lhs = <format = mxfp8_e5m2>, rhs = <format = mxfp8_e4m3>>, keep_first = 1>
func.func @recipes() attributes {
    empty = #fp4train.recipe<>,
    mx = #fp4train.recipe<name = "mxfp4-hadamard",
      fprop = <lhs = <format = mxfp4>, rhs = <format = mxfp4>>,
      dgrad = <lhs = <format = mxfp4>, rhs = <format = mxfp4>>,
      wgrad = <lhs = <format = mxfp4>, rhs = <format = mxfp4>, hadamard = <32, fixed>>>,
    nv = #fp4train.recipe<name = "nvfp4",
      fprop = <lhs = <format = nvfp4>, rhs = <format = nvfp4>>,
      dgrad = <lhs = <format = nvfp4, rounding = stochastic>, rhs = <format = nvfp4>>,
      wgrad = <lhs = <format = nvfp4, rounding = stochastic>, rhs = <format = nvfp4>,
               hadamard = <16, random>>,
      weights_2d = true, keep_last = 2>,
    paper = #fp4train.recipe<name = "nvfp4-kept",
      fprop = <lhs = <format = nvfp4>, rhs = <format = nvfp4>>,
      keep_last_blocks = 8, keep_first_blocks = 2, quantize_router = true>,
    wgrad_only = #fp4train.recipe<
      wgrad = <lhs = <format = mxfp8_e5m2>, rhs = <format = mxfp8_e4m3>>, keep_first = 1>} {
  return
}

// CHECK-LABEL: func @discardable
// CHECK-SAME: %{{.*}}: tensor<64x128xf32> {fp4train.block = 3 : i64, fp4train.param, fp4train.router}
// CHECK: linalg.matmul
// CHECK-SAME: {fp4train.role = #fp4train.role<fprop>}
func.func @discardable(%w: tensor<64x128xf32> {fp4train.param, fp4train.block = 3 : i64, fp4train.router}, %x: tensor<32x128xf32>,
                       %y: tensor<32x64xf32>) -> tensor<32x64xf32> {
  %0 = linalg.matmul
      indexing_maps = [affine_map<(m, n, k) -> (m, k)>,
                       affine_map<(m, n, k) -> (n, k)>,
                       affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %w : tensor<32x128xf32>, tensor<64x128xf32>)
      outs(%y : tensor<32x64xf32>) {fp4train.role = #fp4train.role<fprop>} -> tensor<32x64xf32>
  return %0 : tensor<32x64xf32>
}

// A part of a sharded tensor [SH3].
// CHECK-LABEL: func @quantize_part
func.func @quantize_part(%x: tensor<64x128xf32>, %seed: i64, %row: index, %col: index) {
  // CHECK: fp4train.quantize %{{.*}} rounding = stochastic seed(%{{.*}}) at(%{{.*}}, %{{.*}}) of [256, 128] : tensor<64x128xf32>
  %0 = fp4train.quantize %x rounding = stochastic seed(%seed) at(%row, %col) of [256, 128]
      : tensor<64x128xf32> -> !fp4train.scaled<64x128xf4E2M1FN, block = [1, 32], scale = f8E8M0FNU>
  return
}

// CHECK-LABEL: func @quantize
func.func @quantize(%x: tensor<64x128xf32>, %xb: tensor<64x128xbf16>, %xh: tensor<64x128xf16>,
                    %seed: i64, %amax: f32) {
  // CHECK: fp4train.quantize %{{.*}} : tensor<64x128xf32> -> !fp4train.scaled<64x128xf4E2M1FN, block = [1, 32], scale = f8E8M0FNU>
  %0 = fp4train.quantize %x : tensor<64x128xf32>
      -> !fp4train.scaled<64x128xf4E2M1FN, block = [1, 32], scale = f8E8M0FNU>
  // CHECK: fp4train.quantize %{{.*}} scale_mode = rceil : tensor<64x128xbf16> -> !fp4train.scaled<64x128xf4E2M1FN, block = [32, 1], scale = f8E8M0FNU>
  %1 = fp4train.quantize %xb scale_mode = rceil : tensor<64x128xbf16>
      -> !fp4train.scaled<64x128xf4E2M1FN, block = [32, 1], scale = f8E8M0FNU>
  // CHECK: fp4train.quantize %{{.*}} rounding = stochastic seed(%{{.*}}) : tensor<64x128xf32> -> !fp4train.scaled<64x128xf4E2M1FN, block = [1, 32], scale = f8E8M0FNU>
  %2 = fp4train.quantize %x rounding = stochastic seed(%seed) : tensor<64x128xf32>
      -> !fp4train.scaled<64x128xf4E2M1FN, block = [1, 32], scale = f8E8M0FNU>
  // CHECK: fp4train.quantize %{{.*}} : tensor<64x128xf32> -> !fp4train.scaled<64x128xf4E2M1FN, block = [1, 16], scale = f8E4M3FN, global>
  %3 = fp4train.quantize %x : tensor<64x128xf32>
      -> !fp4train.scaled<64x128xf4E2M1FN, block = [1, 16], scale = f8E4M3FN, global>
  // CHECK: fp4train.quantize %{{.*}} rounding = stochastic seed(%{{.*}}) amax(%{{.*}}) : tensor<64x128xf32> -> !fp4train.scaled<64x128xf4E2M1FN, block = [16, 16], scale = f8E4M3FN, global>
  %4 = fp4train.quantize %x rounding = stochastic seed(%seed) amax(%amax) : tensor<64x128xf32>
      -> !fp4train.scaled<64x128xf4E2M1FN, block = [16, 16], scale = f8E4M3FN, global>
  // CHECK: fp4train.quantize %{{.*}} : tensor<64x128xf16> -> !fp4train.scaled<64x128xf4E2M1FN, block = [1, 16], scale = f8E4M3FN>
  %5 = fp4train.quantize %xh : tensor<64x128xf16>
      -> !fp4train.scaled<64x128xf4E2M1FN, block = [1, 16], scale = f8E4M3FN>
  // CHECK: fp4train.quantize %{{.*}} : tensor<64x128xf32> -> !fp4train.scaled<64x128xf8E4M3FN, block = [1, 32], scale = f8E8M0FNU>
  %6 = fp4train.quantize %x : tensor<64x128xf32>
      -> !fp4train.scaled<64x128xf8E4M3FN, block = [1, 32], scale = f8E8M0FNU>
  // CHECK: fp4train.quantize %{{.*}} scale_mode = rceil : tensor<64x128xf32> -> !fp4train.scaled<64x128xf8E5M2, block = [1, 32], scale = f8E8M0FNU>
  %7 = fp4train.quantize %x scale_mode = rceil : tensor<64x128xf32>
      -> !fp4train.scaled<64x128xf8E5M2, block = [1, 32], scale = f8E8M0FNU>
  return
}

// CHECK-LABEL: func @dequantize
func.func @dequantize(%q: !fp4train.scaled<64x128xf4E2M1FN, block = [1, 32], scale = f8E8M0FNU>,
                      %n: !fp4train.scaled<64x128xf4E2M1FN, block = [16, 16], scale = f8E4M3FN, global>)
    -> (tensor<64x128xf32>, tensor<64x128xbf16>) {
  // CHECK: fp4train.dequantize %{{.*}} : !fp4train.scaled<64x128xf4E2M1FN, block = [1, 32], scale = f8E8M0FNU> -> tensor<64x128xf32>
  %0 = fp4train.dequantize %q : !fp4train.scaled<64x128xf4E2M1FN, block = [1, 32], scale = f8E8M0FNU>
      -> tensor<64x128xf32>
  // CHECK: fp4train.dequantize %{{.*}} : !fp4train.scaled<64x128xf4E2M1FN, block = [16, 16], scale = f8E4M3FN, global> -> tensor<64x128xbf16>
  %1 = fp4train.dequantize %n : !fp4train.scaled<64x128xf4E2M1FN, block = [16, 16], scale = f8E4M3FN, global>
      -> tensor<64x128xbf16>
  return %0, %1 : tensor<64x128xf32>, tensor<64x128xbf16>
}

// CHECK-LABEL: func @hadamard
func.func @hadamard(%x: tensor<64x128xf32>, %seed: i64, %step: i64) {
  // CHECK: fp4train.hadamard %{{.*}} with #fp4train.hadamard<16, none> along 1 : tensor<64x128xf32>
  %0 = fp4train.hadamard %x with #fp4train.hadamard<16, none> along 1 : tensor<64x128xf32>
  // CHECK: fp4train.hadamard %{{.*}} with #fp4train.hadamard<32, fixed> along 0 inverse : tensor<64x128xf32>
  %1 = fp4train.hadamard %x with #fp4train.hadamard<32, fixed> along 0 inverse : tensor<64x128xf32>
  // CHECK: fp4train.hadamard %{{.*}} with #fp4train.hadamard<16, random> along 0 seed(%{{.*}}) step(%{{.*}}) : tensor<64x128xf32>
  %2 = fp4train.hadamard %x with #fp4train.hadamard<16, random> along 0 seed(%seed) step(%step)
      : tensor<64x128xf32>
  // CHECK: fp4train.hadamard %{{.*}} with #fp4train.hadamard<128, random> along 1 seed(%{{.*}}) step(%{{.*}}) inverse : tensor<64x128xf32>
  %3 = fp4train.hadamard %x with #fp4train.hadamard<128, random> along 1 seed(%seed) step(%step) inverse
      : tensor<64x128xf32>
  return
}

// CHECK-LABEL: func @scaled_matmul
func.func @scaled_matmul(
    %a: !fp4train.scaled<128x256xf4E2M1FN, block = [1, 32], scale = f8E8M0FNU>,
    %b: !fp4train.scaled<64x256xf4E2M1FN, block = [1, 32], scale = f8E8M0FNU>,
    %b8: !fp4train.scaled<64x256xf8E4M3FN, block = [1, 32], scale = f8E8M0FNU>,
    %na: !fp4train.scaled<128x256xf4E2M1FN, block = [1, 16], scale = f8E4M3FN, global>,
    %nw: !fp4train.scaled<64x256xf4E2M1FN, block = [16, 16], scale = f8E4M3FN, global>,
    %ba: !fp4train.scaled<2x8x64xf8E5M2, block = [1, 1, 32], scale = f8E8M0FNU>,
    %bb: !fp4train.scaled<2x4x64xf4E2M1FN, block = [1, 1, 32], scale = f8E8M0FNU>,
    %acc: tensor<128x64xf32>, %bacc: tensor<2x8x4xf32>, %alpha: f32) {
  // CHECK: fp4train.scaled_matmul %{{.*}}, %{{.*}}, %{{.*}} : !fp4train.scaled<128x256xf4E2M1FN, block = [1, 32], scale = f8E8M0FNU>, !fp4train.scaled<64x256xf4E2M1FN, block = [1, 32], scale = f8E8M0FNU>, tensor<128x64xf32>
  %0 = fp4train.scaled_matmul %a, %b, %acc
      : !fp4train.scaled<128x256xf4E2M1FN, block = [1, 32], scale = f8E8M0FNU>,
        !fp4train.scaled<64x256xf4E2M1FN, block = [1, 32], scale = f8E8M0FNU>,
        tensor<128x64xf32>
  // Mixed formats share the K block.
  // CHECK: fp4train.scaled_matmul {{.*}} !fp4train.scaled<64x256xf8E4M3FN, block = [1, 32], scale = f8E8M0FNU>
  %1 = fp4train.scaled_matmul %a, %b8, %acc
      : !fp4train.scaled<128x256xf4E2M1FN, block = [1, 32], scale = f8E8M0FNU>,
        !fp4train.scaled<64x256xf8E4M3FN, block = [1, 32], scale = f8E8M0FNU>,
        tensor<128x64xf32>
  // A 2-D-blocked NVFP4 weight against a 1x16-blocked activation.
  // CHECK: fp4train.scaled_matmul {{.*}} !fp4train.scaled<64x256xf4E2M1FN, block = [16, 16], scale = f8E4M3FN, global>
  %2 = fp4train.scaled_matmul %na, %nw, %acc
      : !fp4train.scaled<128x256xf4E2M1FN, block = [1, 16], scale = f8E4M3FN, global>,
        !fp4train.scaled<64x256xf4E2M1FN, block = [16, 16], scale = f8E4M3FN, global>,
        tensor<128x64xf32>
  // [TE2] A factor in place of the global scales' product.
  // CHECK: fp4train.scaled_matmul %{{.*}}, %{{.*}}, %{{.*}} alpha(%{{.*}}) : !fp4train.scaled<128x256xf4E2M1FN, block = [1, 16], scale = f8E4M3FN, global>
  %4 = fp4train.scaled_matmul %na, %nw, %acc alpha(%alpha)
      : !fp4train.scaled<128x256xf4E2M1FN, block = [1, 16], scale = f8E4M3FN, global>,
        !fp4train.scaled<64x256xf4E2M1FN, block = [16, 16], scale = f8E4M3FN, global>,
        tensor<128x64xf32>
  // Batched.
  // CHECK: fp4train.scaled_matmul {{.*}} tensor<2x8x4xf32>
  %3 = fp4train.scaled_matmul %ba, %bb, %bacc
      : !fp4train.scaled<2x8x64xf8E5M2, block = [1, 1, 32], scale = f8E8M0FNU>,
        !fp4train.scaled<2x4x64xf4E2M1FN, block = [1, 1, 32], scale = f8E8M0FNU>,
        tensor<2x8x4xf32>
  return
}

// CHECK-LABEL: func @pack_unpack
func.func @pack_unpack(%v: tensor<32x64xf4E2M1FN>, %s: tensor<2x4xf8E4M3FN>, %g: f32,
                       %mv: tensor<32x64xf4E2M1FN>, %ms: tensor<32x2xf8E8M0FNU>) {
  // CHECK: fp4train.pack %{{.*}}, %{{.*}}, %{{.*}} : tensor<32x64xf4E2M1FN>, tensor<2x4xf8E4M3FN> -> !fp4train.scaled<32x64xf4E2M1FN, block = [16, 16], scale = f8E4M3FN, global>
  %0 = fp4train.pack %v, %s, %g : tensor<32x64xf4E2M1FN>, tensor<2x4xf8E4M3FN>
      -> !fp4train.scaled<32x64xf4E2M1FN, block = [16, 16], scale = f8E4M3FN, global>
  // CHECK: %{{.*}}, %{{.*}}, %{{.*}} = fp4train.unpack %{{.*}} : !fp4train.scaled<32x64xf4E2M1FN, block = [16, 16], scale = f8E4M3FN, global>
  %1:3 = fp4train.unpack %0
      : !fp4train.scaled<32x64xf4E2M1FN, block = [16, 16], scale = f8E4M3FN, global>
  // CHECK: fp4train.pack %{{.*}}, %{{.*}} : tensor<32x64xf4E2M1FN>, tensor<32x2xf8E8M0FNU> -> !fp4train.scaled<32x64xf4E2M1FN, block = [1, 32], scale = f8E8M0FNU>
  %2 = fp4train.pack %mv, %ms : tensor<32x64xf4E2M1FN>, tensor<32x2xf8E8M0FNU>
      -> !fp4train.scaled<32x64xf4E2M1FN, block = [1, 32], scale = f8E8M0FNU>
  // CHECK: %{{.*}}, %{{.*}} = fp4train.unpack %{{.*}} : !fp4train.scaled<32x64xf4E2M1FN, block = [1, 32], scale = f8E8M0FNU>
  %3:2 = fp4train.unpack %2 : !fp4train.scaled<32x64xf4E2M1FN, block = [1, 32], scale = f8E8M0FNU>
  return
}

// CHECK-LABEL: func @transpose
func.func @transpose(%w: !fp4train.scaled<64x128xf4E2M1FN, block = [16, 16], scale = f8E4M3FN, global>,
                     %b: !fp4train.scaled<3x32x64xf4E2M1FN, block = [1, 16, 16], scale = f8E4M3FN>) {
  // CHECK: fp4train.transpose %{{.*}} : !fp4train.scaled<64x128xf4E2M1FN, block = [16, 16], scale = f8E4M3FN, global> -> !fp4train.scaled<128x64xf4E2M1FN, block = [16, 16], scale = f8E4M3FN, global>
  %0 = fp4train.transpose %w
      : !fp4train.scaled<64x128xf4E2M1FN, block = [16, 16], scale = f8E4M3FN, global>
     -> !fp4train.scaled<128x64xf4E2M1FN, block = [16, 16], scale = f8E4M3FN, global>
  // CHECK: fp4train.transpose %{{.*}} : !fp4train.scaled<3x32x64xf4E2M1FN, block = [1, 16, 16], scale = f8E4M3FN> -> !fp4train.scaled<3x64x32xf4E2M1FN, block = [1, 16, 16], scale = f8E4M3FN>
  %1 = fp4train.transpose %b
      : !fp4train.scaled<3x32x64xf4E2M1FN, block = [1, 16, 16], scale = f8E4M3FN>
     -> !fp4train.scaled<3x64x32xf4E2M1FN, block = [1, 16, 16], scale = f8E4M3FN>
  return
}
