// [H2] The precision of rotated operands. A bf16 Wgrad under nvfp4 with
// TransformerEngine's fixed signs: by default the rotation's f32 result is
// quantized; with hadamard-precision=operand it is first rounded to bf16
// (TE's RHT is a bf16 GEMM), then widened exactly for the quantize. f32
// operands are the same under both.
// RUN: fp4-opt %s --fp4train-quantize-pipeline="recipe=nvfp4 hadamard-signs=fixed" \
// RUN:   | FileCheck %s --check-prefixes=CHECK,F32
// RUN: fp4-opt %s --fp4train-quantize-pipeline="recipe=nvfp4 hadamard-signs=fixed hadamard-precision=operand report=%t.json" \
// RUN:   | FileCheck %s --check-prefixes=CHECK,OPERAND
// RUN: FileCheck %s --check-prefix=REPORT < %t.json
// RUN: fp4-opt %s --fp4train-quantize-pipeline="recipe=nvfp4 hadamard-precision=f32" \
// RUN:   | FileCheck %s --check-prefixes=CHECK,F32
// A recipe written out says the same.
// RUN: fp4-opt %s --fp4train-quantize-pipeline='recipe={#fp4train.recipe<name = "te", wgrad = <lhs = <format = nvfp4>, rhs = <format = nvfp4>, hadamard = <16, fixed>, hadamard_precision = operand>, roles = [wgrad]>}' \
// RUN:   | FileCheck %s --check-prefixes=CHECK,OPERAND
// RUN: not fp4-opt %s --fp4train-quantize-pipeline="recipe=mxfp4 hadamard-precision=operand" 2>&1 \
// RUN:   | FileCheck %s --check-prefix=NOROTATION
// RUN: fp4-opt %s --fp4train-quantize-pipeline="recipe=mxfp4 hadamard=32 hadamard-precision=operand" \
// RUN:   | FileCheck %s --check-prefixes=CHECK,OPERAND
// RUN: not fp4-opt %s --fp4train-quantize-pipeline="recipe=nvfp4 hadamard-precision=bf16" 2>&1 \
// RUN:   | FileCheck %s --check-prefix=VALUE
// RUN: not fp4-opt %s --fp4train-quantize-pipeline='recipe={#fp4train.recipe<name = "bad", wgrad = <lhs = <format = nvfp4>, rhs = <format = nvfp4>, hadamard_precision = operand>>}' 2>&1 \
// RUN:   | FileCheck %s --check-prefix=VERIFY

#dy3 = affine_map<(o, i, b, t) -> (b, t, o)>
#xk3 = affine_map<(o, i, b, t) -> (b, t, i)>
#dw2 = affine_map<(o, i, b, t) -> (o, i)>
#x3 = affine_map<(b, t, o, i) -> (b, t, i)>
#w2 = affine_map<(b, t, o, i) -> (o, i)>
#y3 = affine_map<(b, t, o, i) -> (b, t, o)>

// CHECK-LABEL: func @bf16_wgrad
// CHECK: %[[DY:.*]] = arith.extf %{{.*}} : tensor<32x32xbf16> to tensor<32x32xf32>
// CHECK: %[[RDY:.*]] = fp4train.hadamard %[[DY]] with #fp4train.hadamard<{{16|32}}, {{fixed|random}}> along 1
// OPERAND: %[[TDY:.*]] = arith.truncf %[[RDY]] : tensor<32x32xf32> to tensor<32x32xbf16>
// OPERAND: %[[EDY:.*]] = arith.extf %[[TDY]] : tensor<32x32xbf16> to tensor<32x32xf32>
// OPERAND: fp4train.quantize %[[EDY]]
// F32-NOT: arith.truncf
// F32: fp4train.quantize %[[RDY]]
// CHECK: fp4train.scaled_matmul
func.func @bf16_wgrad(%dy: tensor<2x16x32xbf16>, %x: tensor<2x16x48xbf16>,
                      %w: tensor<32x48xf32> {fp4train.param},
                      %init: tensor<32x48xf32>, %y0: tensor<2x16x32xf32>)
    -> (tensor<32x48xf32>, tensor<2x16x32xf32>) {
  %dw = linalg.generic {indexing_maps = [#dy3, #xk3, #dw2],
                        iterator_types = ["parallel", "parallel", "reduction", "reduction"]}
      ins(%dy, %x : tensor<2x16x32xbf16>, tensor<2x16x48xbf16>) outs(%init : tensor<32x48xf32>) {
  ^bb0(%a: bf16, %b: bf16, %acc: f32):
    %ae = arith.extf %a : bf16 to f32
    %be = arith.extf %b : bf16 to f32
    %p = arith.mulf %ae, %be : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<32x48xf32>
  %y = linalg.generic {indexing_maps = [#x3, #w2, #y3],
                       iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%x, %w : tensor<2x16x48xbf16>, tensor<32x48xf32>) outs(%y0 : tensor<2x16x32xf32>) {
  ^bb0(%a: bf16, %b: f32, %acc: f32):
    %ae = arith.extf %a : bf16 to f32
    %p = arith.mulf %ae, %b : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<2x16x32xf32>
  return %dw, %y : tensor<32x48xf32>, tensor<2x16x32xf32>
}

// REPORT: "hadamard": {
// REPORT-DAG: "precision": "operand"
// REPORT-DAG: "signs": "fixed"
// NOROTATION: error: hadamard-precision=operand needs a Hadamard rotation; set hadamard=N
// VALUE: 'bf16' is not one of f32, operand
// VERIFY: hadamard_precision = operand needs a hadamard rotation
