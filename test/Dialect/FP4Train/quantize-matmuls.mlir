// RUN: fp4-opt %s --fp4train-quantize-pipeline="recipe=nvfp4 step-arg=4" | FileCheck %s --check-prefix=NVFP4
// RUN: fp4-opt %s --fp4train-quantize-pipeline="recipe=mxfp4" | FileCheck %s --check-prefix=MXFP4
// RUN: fp4-opt %s --fp4train-quantize-pipeline="recipe=mxfp4-hadamard" | FileCheck %s --check-prefix=MXH
// RUN: fp4-opt %s --fp4train-quantize-pipeline="recipe=mxfp4-random-hadamard step-arg=4" | FileCheck %s --check-prefix=MXRH
// RUN: fp4-opt %s --fp4train-quantize-pipeline="recipe=mxfp4-sr step-arg=4" | FileCheck %s --check-prefix=MXSR
// RUN: fp4-opt %s --fp4train-quantize-pipeline="recipe=mxfp8" | FileCheck %s --check-prefix=MXFP8
// RUN: fp4-opt %s --fp4train-quantize-pipeline="recipe=none" | FileCheck %s --check-prefix=NONE
// The same recipe spelled as an attribute (in braces, so the pass-option
// parser keeps it whole) gives the same IR as its preset.
// RUN: fp4-opt %s --fp4train-quantize-pipeline="recipe=mxfp4-hadamard" > %t.preset.mlir
// RUN: fp4-opt %s --fp4train-quantize-pipeline='recipe={#fp4train.recipe<name = "mxfp4-hadamard", fprop = <lhs = <format = mxfp4>, rhs = <format = mxfp4>>, dgrad = <lhs = <format = mxfp4>, rhs = <format = mxfp4>>, wgrad = <lhs = <format = mxfp4>, rhs = <format = mxfp4>, hadamard = <32, fixed>>>}' > %t.attr.mlir
// RUN: diff %t.preset.mlir %t.attr.mlir
// Running the pipeline again quantizes nothing twice.
// RUN: fp4-opt %s --fp4train-quantize-pipeline="recipe=nvfp4 step-arg=4" > %t.once.mlir
// RUN: fp4-opt %t.once.mlir --fp4train-quantize-pipeline="recipe=nvfp4 step-arg=4" > %t.twice.mlir
// RUN: diff %t.once.mlir %t.twice.mlir

#mk = affine_map<(m, n, k) -> (m, k)>
#nk = affine_map<(m, n, k) -> (n, k)>
#kn = affine_map<(m, n, k) -> (k, n)>
#km = affine_map<(m, n, k) -> (k, m)>
#mn = affine_map<(m, n, k) -> (m, n)>

// Two linear layers, PyTorch layout: W1 : [32, 64], W2 : [16, 32].
// Contractions in program order: fprop W1, fprop W2, dgrad W2, wgrad W2,
// dgrad W1, wgrad W1.
func.func @mlp(%x: tensor<32x64xf32>, %w1: tensor<32x64xf32> {fp4train.param},
               %w2: tensor<16x32xf32> {fp4train.param}, %dy: tensor<32x16xf32>, %step: i64)
    -> (tensor<32x16xf32>, tensor<32x64xf32>, tensor<32x64xf32>, tensor<16x32xf32>) {
  %c0 = arith.constant 0.0 : f32
  %e_h = tensor.empty() : tensor<32x32xf32>
  %z_h = linalg.fill ins(%c0 : f32) outs(%e_h : tensor<32x32xf32>) -> tensor<32x32xf32>
  %h = linalg.matmul indexing_maps = [#mk, #nk, #mn]
      ins(%x, %w1 : tensor<32x64xf32>, tensor<32x64xf32>) outs(%z_h : tensor<32x32xf32>) -> tensor<32x32xf32>
  %e_y = tensor.empty() : tensor<32x16xf32>
  %z_y = linalg.fill ins(%c0 : f32) outs(%e_y : tensor<32x16xf32>) -> tensor<32x16xf32>
  %y = linalg.matmul indexing_maps = [#mk, #nk, #mn]
      ins(%h, %w2 : tensor<32x32xf32>, tensor<16x32xf32>) outs(%z_y : tensor<32x16xf32>) -> tensor<32x16xf32>
  %dh = linalg.matmul ins(%dy, %w2 : tensor<32x16xf32>, tensor<16x32xf32>)
      outs(%z_h : tensor<32x32xf32>) -> tensor<32x32xf32>
  %e_dw2 = tensor.empty() : tensor<16x32xf32>
  %z_dw2 = linalg.fill ins(%c0 : f32) outs(%e_dw2 : tensor<16x32xf32>) -> tensor<16x32xf32>
  %dw2 = linalg.matmul indexing_maps = [#km, #kn, #mn]
      ins(%dy, %h : tensor<32x16xf32>, tensor<32x32xf32>) outs(%z_dw2 : tensor<16x32xf32>) -> tensor<16x32xf32>
  %e_dx = tensor.empty() : tensor<32x64xf32>
  %z_dx = linalg.fill ins(%c0 : f32) outs(%e_dx : tensor<32x64xf32>) -> tensor<32x64xf32>
  %dx = linalg.matmul ins(%dh, %w1 : tensor<32x32xf32>, tensor<32x64xf32>)
      outs(%z_dx : tensor<32x64xf32>) -> tensor<32x64xf32>
  %dw1 = linalg.matmul indexing_maps = [#km, #kn, #mn]
      ins(%dh, %x : tensor<32x32xf32>, tensor<32x64xf32>) outs(%z_dx : tensor<32x64xf32>) -> tensor<32x64xf32>
  return %y, %dx, %dw1, %dw2 : tensor<32x16xf32>, tensor<32x64xf32>, tensor<32x64xf32>, tensor<16x32xf32>
}

// The NVIDIA recipe: 16x16 weight tiles quantized once and shared by Fprop
// and (transposed) Dgrad, dY rounded stochastically with seeds derived from
// the step, a random 16-point Hadamard on both Wgrad operands.
// NVFP4-LABEL: func @mlp
// NVFP4-SAME: %[[X:[a-z0-9]+]]: tensor<32x64xf32>, %[[W1:[a-z0-9]+]]: tensor<32x64xf32> {fp4train.param}, %[[W2:[a-z0-9]+]]: tensor<16x32xf32> {fp4train.param}, %[[DY:[a-z0-9]+]]: tensor<32x16xf32>, %[[STEP:[a-z0-9]+]]: i64
// NVFP4-DAG: %[[C32:.*]] = arith.constant 32 : i64
// NVFP4-DAG: %[[C3:.*]] = arith.constant 3 : i64
// NVFP4: %[[QX:.*]] = fp4train.quantize %[[X]] : tensor<32x64xf32> -> !fp4train.scaled<32x64xf4E2M1FN, block = [1, 16], scale = f8E4M3FN, global>
// NVFP4: %[[QW1:.*]] = fp4train.quantize %[[W1]] : tensor<32x64xf32> -> !fp4train.scaled<32x64xf4E2M1FN, block = [16, 16], scale = f8E4M3FN, global>
// NVFP4: %[[H:.*]] = fp4train.scaled_matmul %[[QX]], %[[QW1]]
// NVFP4: %[[QW2:.*]] = fp4train.quantize %[[W2]] : tensor<16x32xf32> -> !fp4train.scaled<16x32xf4E2M1FN, block = [16, 16], scale = f8E4M3FN, global>
// NVFP4: %[[Y:.*]] = fp4train.scaled_matmul %{{.*}}, %[[QW2]]
// Dgrad of layer 2: contraction #2, dY is operand 0: seed (step << 32) + 4.
// NVFP4: %[[HI:.*]] = arith.shli %[[STEP]], %[[C32]] : i64
// NVFP4: %[[SEED:.*]] = arith.addi %[[HI]], %{{.*}} : i64
// NVFP4: %[[QDY:.*]] = fp4train.quantize %[[DY]] rounding = stochastic seed(%[[SEED]])
// NVFP4: %[[QW2T:.*]] = fp4train.transpose %[[QW2]]
// NVFP4: %[[DH:.*]] = fp4train.scaled_matmul %[[QDY]], %[[QW2T]]
// Wgrad of layer 2: contraction #3.
// NVFP4: %[[R0:.*]] = fp4train.hadamard %{{.*}} with #fp4train.hadamard<16, random> along 1 seed(%[[C3]]) step(%[[STEP]]) : tensor<16x32xf32>
// NVFP4: %[[R1:.*]] = fp4train.hadamard %{{.*}} with #fp4train.hadamard<16, random> along 1 seed(%[[C3]]) step(%[[STEP]]) : tensor<32x32xf32>
// NVFP4: fp4train.quantize %[[R0]] rounding = stochastic seed
// NVFP4: fp4train.quantize %[[R1]] :
// NVFP4: fp4train.scaled_matmul
// Dgrad of layer 1 reuses the Fprop quantization of W1.
// NVFP4: fp4train.quantize %[[DH]] rounding = stochastic seed
// NVFP4: %[[QW1T:.*]] = fp4train.transpose %[[QW1]]
// NVFP4: fp4train.scaled_matmul %{{.*}}, %[[QW1T]]
// NVFP4-COUNT-2: fp4train.hadamard {{.*}} with #fp4train.hadamard<16, random>
// NVFP4: fp4train.scaled_matmul
// NVFP4-NOT: linalg.matmul
// NVFP4: return

// Plain OCP MX with E2M1 elements (1-D blocks of 32 everywhere), weights re-quantized along
// `out` for Dgrad, K = 16 zero-padded to 32.
// MXFP4-LABEL: func @mlp
// MXFP4-NOT: fp4train.hadamard
// MXFP4-NOT: rounding = stochastic
// MXFP4-NOT: fp4train.transpose
// MXFP4: fp4train.quantize %{{.*}} : tensor<32x64xf32> -> !fp4train.scaled<32x64xf4E2M1FN, block = [1, 32], scale = f8E8M0FNU>
// MXFP4: %[[PDY:.*]] = tensor.pad %{{.*}} low[0, 0] high[0, 16]
// MXFP4: } : tensor<32x16xf32> to tensor<32x32xf32>
// MXFP4: fp4train.quantize %[[PDY]] : tensor<32x32xf32> -> !fp4train.scaled<32x32xf4E2M1FN, block = [1, 32], scale = f8E8M0FNU>
// MXFP4-COUNT-4: fp4train.scaled_matmul
// MXFP4-NOT: linalg.matmul
// MXFP4: return

// The AMD recipe: a deterministic 32-point rotation on Wgrad only.
// MXH-LABEL: func @mlp
// MXH-NOT: rounding = stochastic
// MXH-COUNT-2: fp4train.hadamard {{.*}} with #fp4train.hadamard<32, fixed> along 1 :
// MXH-NOT: seed(
// MXH-COUNT-2: fp4train.hadamard {{.*}} with #fp4train.hadamard<32, fixed> along 1 :
// MXH: return

// MXRH-LABEL: func @mlp
// MXRH-NOT: rounding = stochastic
// MXRH-COUNT-2: fp4train.hadamard {{.*}} with #fp4train.hadamard<32, random> along 1 seed(%{{.*}}) step(%arg4)
// MXRH: return

// MXSR-LABEL: func @mlp
// MXSR: fp4train.quantize %{{.*}} rounding = stochastic seed
// MXSR: fp4train.hadamard {{.*}} with #fp4train.hadamard<32, fixed>
// MXSR: return

// The FP8 baseline: E4M3 activations and weights, E5M2 gradients.
// MXFP8-LABEL: func @mlp
// MXFP8: fp4train.quantize %{{.*}} : tensor<32x64xf32> -> !fp4train.scaled<32x64xf8E4M3FN, block = [1, 32], scale = f8E8M0FNU>
// MXFP8: fp4train.quantize %{{.*}} : tensor<32x32xf32> -> !fp4train.scaled<32x32xf8E5M2, block = [1, 32], scale = f8E8M0FNU>
// MXFP8-NOT: f4E2M1FN
// MXFP8: return

// NONE-LABEL: func @mlp
// NONE-NOT: fp4train.quantize
// NONE-COUNT-6: linalg.matmul
// NONE: return
