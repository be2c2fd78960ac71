// RUN: fp4-opt %s --fp4train-quantize-pipeline="recipe=mxfp4 keep-first=1 report=%t.keep1.json" | FileCheck %s --check-prefix=KEEP1
// RUN: fp4-opt %s --fp4train-quantize-pipeline="recipe=mxfp4 keep-last=1" | FileCheck %s --check-prefix=KEEPL
// RUN: fp4-opt %s --fp4train-quantize-pipeline="recipe=nvfp4 stochastic-rounding=0" | FileCheck %s --check-prefix=RNE
// RUN: fp4-opt %s --fp4train-quantize-pipeline="recipe=mxfp4 stochastic-rounding=1" | FileCheck %s --check-prefix=SR
// RUN: fp4-opt %s --fp4train-quantize-pipeline="recipe=nvfp4 hadamard=0" | FileCheck %s --check-prefix=NOH
// RUN: fp4-opt %s --fp4train-quantize-pipeline="recipe=mxfp4 hadamard=32 hadamard-signs=random" | FileCheck %s --check-prefix=H32
// RUN: fp4-opt %s --fp4train-quantize-pipeline="recipe=mxfp4 scale-mode=rceil" | FileCheck %s --check-prefix=RCEIL
// RUN: fp4-opt %s --fp4train-quantize-pipeline="recipe=nvfp4 weights-2d=0" | FileCheck %s --check-prefix=NO2D
// RUN: fp4-opt %s --fp4train-quantize-pipeline="recipe=mxfp4 roles=fprop,dgrad report=%t.roles.json" | FileCheck %s --check-prefix=ROLES
// RUN: fp4-opt %s --fp4train-quantize-pipeline="recipe=mxfp4-fprop-dgrad" | FileCheck %s --check-prefix=ROLES
// RUN: fp4-opt %s --fp4train-quantize-pipeline="recipe=mxfp4-fprop-dgrad roles=wgrad" | FileCheck %s --check-prefix=WGRAD
// RUN: fp4-opt %s --fp4train-quantize-pipeline='recipe={#fp4train.recipe<name = "w", fprop = <lhs = <format = mxfp4>, rhs = <format = mxfp4>>, wgrad = <lhs = <format = mxfp4>, rhs = <format = mxfp4>>, roles = [wgrad]>}' | FileCheck %s --check-prefix=WGRAD
// RUN: FileCheck %s --check-prefix=REPORT < %t.keep1.json
// RUN: FileCheck %s --check-prefix=ROLESREPORT < %t.roles.json
// RUN: not fp4-opt %s --fp4train-quantize-pipeline="" 2>&1 | FileCheck %s --check-prefix=NORECIPE
// RUN: not fp4-opt %s --fp4train-quantize-pipeline="recipe=fp4" 2>&1 | FileCheck %s --check-prefix=UNKNOWN
// RUN: not fp4-opt %s --fp4train-quantize-pipeline='recipe={#fp4train.role<fprop>}' 2>&1 | FileCheck %s --check-prefix=NOTRECIPE
// RUN: not fp4-opt %s --fp4train-quantize-pipeline="recipe=mxfp4 stochastic-rounding=2" 2>&1 | FileCheck %s --check-prefix=SRRANGE
// RUN: not fp4-opt %s --fp4train-quantize-pipeline="recipe=mxfp8 stochastic-rounding=1" 2>&1 | FileCheck %s --check-prefix=SRFP8
// RUN: not fp4-opt %s --fp4train-quantize-pipeline="recipe=mxfp4 hadamard=48" 2>&1 | FileCheck %s --check-prefix=HSIZE
// RUN: not fp4-opt %s --fp4train-quantize-pipeline="recipe=mxfp4 hadamard=32 hadamard-signs=sometimes" 2>&1 | FileCheck %s --check-prefix=HSIGNS
// RUN: not fp4-opt %s --fp4train-quantize-pipeline="recipe=mxfp4 hadamard-signs=random" 2>&1 | FileCheck %s --check-prefix=HNONE
// RUN: not fp4-opt %s --fp4train-quantize-pipeline="recipe=mxfp4 scale-mode=ceil" 2>&1 | FileCheck %s --check-prefix=SCALE
// RUN: not fp4-opt %s --fp4train-quantize-pipeline="recipe=mxfp4 weights-2d=1" 2>&1 | FileCheck %s --check-prefix=W2D
// RUN: not fp4-opt %s --fp4train-quantize-pipeline="recipe=mxfp4 keep-first=-2" 2>&1 | FileCheck %s --check-prefix=KEEPNEG
// RUN: not fp4-opt %s --fp4train-quantize-pipeline="recipe=nvfp4 step-arg=9" 2>&1 | FileCheck %s --check-prefix=STEPRANGE
// RUN: not fp4-opt %s --fp4train-quantize-pipeline="recipe=nvfp4 step-arg=0" 2>&1 | FileCheck %s --check-prefix=STEPTYPE
// RUN: not fp4-opt %s --fp4train-quantize-pipeline="recipe=nvfp4 weight-layout=jax" 2>&1 | FileCheck %s --check-prefix=LAYOUT
// RUN: not fp4-opt %s --fp4train-quantize-pipeline="recipe=nvfp4 stochastic-rounding=yes" 2>&1 | FileCheck %s --check-prefix=MALFORMED
// RUN: not fp4-opt %s --fp4train-quantize-pipeline="recipe=mxfp4 pad=0" 2>&1 | FileCheck %s --check-prefix=NOPAD
// RUN: not fp4-opt %s --fp4train-quantize-pipeline="recipe=mxfp4 roles=fprop,other" 2>&1 | FileCheck %s --check-prefix=ROLENAME
// RUN: not fp4-opt %s --fp4train-quantize-pipeline="recipe=mxfp4 roles=dgrad,dgrad" 2>&1 | FileCheck %s --check-prefix=ROLETWICE
// RUN: not fp4-opt %s --fp4train-quantize-matmuls="recipe=mxfp8 roles=wgrad,fprop,dgrad,fprop" 2>&1 | FileCheck %s --check-prefix=ROLETWICE2
// RUN: not fp4-opt %s --fp4train-quantize-pipeline='recipe={#fp4train.recipe<name = "f", fprop = <lhs = <format = mxfp4>, rhs = <format = mxfp4>>>} roles=fprop,wgrad' 2>&1 | FileCheck %s --check-prefix=ROLEGEMM

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

// Kept layers keep all three of their GEMMs: keep-first=1 keeps W1's Fprop,
// Dgrad and Wgrad; keep-last=1 keeps W2's.
// KEEP1-LABEL: func @mlp
// KEEP1: linalg.matmul {{.*}}{fp4train.role = #fp4train.role<fprop, {{[^>]*}}>} ins(%arg0, %arg1
// KEEP1: fp4train.quantize %arg2
// KEEP1-COUNT-3: fp4train.scaled_matmul
// KEEP1: linalg.matmul {fp4train.role = #fp4train.role<dgrad, {{[^>]*}}>} ins(%{{.*}}, %arg1
// KEEP1: linalg.matmul {{.*}}{fp4train.role = #fp4train.role<wgrad, {{[^>]*}}>}
// KEEP1: return
// KEEPL-LABEL: func @mlp
// KEEPL: fp4train.quantize %arg1
// KEEPL: linalg.matmul {{.*}}{fp4train.role = #fp4train.role<fprop, {{[^>]*}}>} ins(%{{.*}}, %arg2
// KEEPL: linalg.matmul {fp4train.role = #fp4train.role<dgrad, {{[^>]*}}>} ins(%arg3, %arg2
// KEEPL: linalg.matmul {{.*}}{fp4train.role = #fp4train.role<wgrad, {{[^>]*}}>} ins(%arg3,
// KEEPL: return

// REPORT: "kept": "keep-first",
// REPORT-NEXT: "loc": "{{.*}}quantize-matmuls-options.mlir:[[#]]:{{[0-9]+}}",
// REPORT: "param": 1,
// REPORT-NEXT: "quantized": false,
// REPORT-NEXT: "role": "fprop"
// REPORT: "hadamard": null,
// REPORT: "kept": null,
// REPORT: "operands": [
// REPORT-NEXT: {
// REPORT-NEXT: "block": [
// REPORT-NEXT: 32
// REPORT-NEXT: ],
// REPORT-NEXT: "format": "mxfp4",
// REPORT-NEXT: "recipe_operand": "lhs",
// REPORT-NEXT: "rounding": "nearest_even",
// REPORT-NEXT: "scale_mode": "floor"
// REPORT: "padded_k": 32,
// REPORT-NEXT: "param": 2,
// REPORT-NEXT: "quantized": true,
// REPORT-NEXT: "role": "fprop"

// RNE-LABEL: func @mlp
// RNE-NOT: stochastic
// RNE: fp4train.hadamard
// RNE: return

// SR-LABEL: func @mlp
// SR: fp4train.quantize %{{.*}} rounding = stochastic seed(%{{.*}}) : tensor<32x32xf32> -> !fp4train.scaled<32x32xf4E2M1FN, block = [1, 32], scale = f8E8M0FNU>
// SR: return

// NOH-LABEL: func @mlp
// NOH-NOT: fp4train.hadamard
// NOH: return

// H32-LABEL: func @mlp
// H32: fp4train.hadamard {{.*}} with #fp4train.hadamard<32, random> along 1 seed(%{{.*}}) step(%{{.*}})
// H32: return

// RCEIL-LABEL: func @mlp
// RCEIL-COUNT-8: fp4train.quantize %{{.*}} scale_mode = rceil
// RCEIL: return

// NO2D-LABEL: func @mlp
// NO2D-NOT: fp4train.transpose
// NO2D-NOT: block = [16, 16]
// NO2D: return

// NORECIPE: error: the recipe option is required: one of nvfp4, mxfp4, mxfp4-hadamard, mxfp4-random-hadamard, mxfp4-sr, mxfp8, mxfp4-fprop-dgrad, none, or a #fp4train.recipe attribute
// UNKNOWN: error: unknown recipe 'fp4'; expected one of nvfp4, mxfp4, mxfp4-hadamard, mxfp4-random-hadamard, mxfp4-sr, mxfp8, mxfp4-fprop-dgrad, none, or a #fp4train.recipe attribute
// NOTRECIPE: error: recipe '#fp4train.role<fprop>' is not a #fp4train.recipe
// SRRANGE: for the --stochastic-rounding option: '2' is not 0 or 1
// SRFP8: error: stochastic-rounding=1 needs E2M1 gradients, but the dgrad dY format is mxfp8_e5m2
// HSIZE: error: Hadamard size must be a power of two in [16, 256], got 48
// HSIGNS: for the --hadamard-signs option: 'sometimes' is not one of none, fixed, random
// HNONE: error: hadamard-signs needs a Wgrad Hadamard rotation; set hadamard=N
// SCALE: for the --scale-mode option: 'ceil' is not one of floor, rceil
// W2D: error: 2-D weight blocks need an nvfp4 weight, but the fprop weight is mxfp4
// KEEPNEG: for the --keep-first option: '-2' is not an integer in [0, 2^32)
// STEPRANGE: error: step-arg=9 names no argument: the function has 5
// STEPTYPE: error: step-arg=0 names an argument of type 'tensor<32x64xf32>'; expected an integer
// LAYOUT: error: unknown weight-layout 'jax'; expected 'out-in' or 'in-out'
// MALFORMED: for the --stochastic-rounding option: 'yes' is not 0 or 1
// ROLENAME: for the --roles option: 'fprop,other' must list distinct roles among fprop, dgrad and wgrad
// ROLETWICE: for the --roles option: 'dgrad,dgrad' must list distinct roles among fprop, dgrad and wgrad
// ROLETWICE2: for the --roles option: 'wgrad,fprop,dgrad,fprop' must list distinct roles
// ROLEGEMM: error: roles names wgrad, but the recipe has no wgrad GEMM
// NOPAD: error: K = 16 is not a multiple of 32 (the K block or Hadamard size of the dgrad recipe), and pad=0 forbids zero padding

// Only the listed roles are quantized: Fprop and Dgrad of both layers, both
// Wgrads stay in the graph's precision (the MXFP4 paper's first row).
// ROLES-LABEL: func @mlp
// ROLES-COUNT-3: fp4train.scaled_matmul
// ROLES-NOT: fp4train.scaled_matmul
// ROLES: linalg.matmul {{.*}}{fp4train.role = #fp4train.role<wgrad, {{[^>]*}}>} ins(%arg3,
// ROLES: fp4train.scaled_matmul
// ROLES-NOT: fp4train.scaled_matmul
// ROLES: linalg.matmul {{.*}}{fp4train.role = #fp4train.role<wgrad, {{[^>]*}}>}
// ROLES-NOT: fp4train.scaled_matmul
// ROLES: return
// ROLESREPORT: "kept": "roles keep wgrad in high precision",
// ROLESREPORT-NEXT: "loc": "{{.*}}quantize-matmuls-options.mlir:[[#]]:{{[0-9]+}}",
// ROLESREPORT-NEXT: "m": 16,

// WGRAD-LABEL: func @mlp
// WGRAD: linalg.matmul {{.*}}{fp4train.role = #fp4train.role<fprop, {{[^>]*}}>}
// WGRAD: linalg.matmul {{.*}}{fp4train.role = #fp4train.role<fprop, {{[^>]*}}>}
// WGRAD: linalg.matmul {fp4train.role = #fp4train.role<dgrad, {{[^>]*}}>}
// WGRAD-COUNT-1: fp4train.scaled_matmul
// WGRAD: linalg.matmul {fp4train.role = #fp4train.role<dgrad, {{[^>]*}}>}
// WGRAD: fp4train.scaled_matmul
// WGRAD: return
