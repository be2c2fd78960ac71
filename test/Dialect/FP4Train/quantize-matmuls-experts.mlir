// [MOE1] NVFP4 global scales per expert (the default): an expert
// contraction (a rank-3 parameter [E, out, in] whose expert dimension is the
// contraction's one batch loop, [ROLE7]) is quantized and multiplied slice
// by slice, each slice with its own amax; the stochastic-rounding seed of
// slice e of contraction i is numbered i + N * (e + 1) (N contractions).
// RUN: fp4-opt %s --fp4train-quantize-pipeline="recipe=nvfp4 step-arg=3" | FileCheck %s --check-prefix=EXPERT
// RUN: fp4-opt %s --fp4train-quantize-pipeline="recipe=nvfp4 step-arg=3 report=-" -o /dev/null | FileCheck %s --check-prefix=REPORT
// per-expert-global-scale=0: one global scale per tensor, one batched GEMM.
// RUN: fp4-opt %s --fp4train-quantize-pipeline="recipe=nvfp4 step-arg=3 per-expert-global-scale=0" | FileCheck %s --check-prefix=TENSOR
// MX formats have no global scale: the batched GEMM stays whole.
// RUN: fp4-opt %s --fp4train-quantize-pipeline="recipe=mxfp4-sr step-arg=3" | FileCheck %s --check-prefix=MX

// The expert half of an MoE layer: H = X . W^T per expert (Fprop), and
// dW = dH^T . X per expert (Wgrad).
func.func @experts(%x: tensor<2x16x32xf32>, %w: tensor<2x16x32xf32> {fp4train.param},
                   %dh: tensor<2x16x16xf32>, %step: i64)
    -> (tensor<2x16x16xf32>, tensor<2x16x32xf32>) {
  %c0 = arith.constant 0.0 : f32
  %e_h = tensor.empty() : tensor<2x16x16xf32>
  %z_h = linalg.fill ins(%c0 : f32) outs(%e_h : tensor<2x16x16xf32>) -> tensor<2x16x16xf32>
  %h = linalg.batch_matmul
      indexing_maps = [affine_map<(e, m, n, k) -> (e, m, k)>,
                       affine_map<(e, m, n, k) -> (e, n, k)>,
                       affine_map<(e, m, n, k) -> (e, m, n)>]
      ins(%x, %w : tensor<2x16x32xf32>, tensor<2x16x32xf32>)
      outs(%z_h : tensor<2x16x16xf32>) -> tensor<2x16x16xf32>
  %e_w = tensor.empty() : tensor<2x16x32xf32>
  %z_w = linalg.fill ins(%c0 : f32) outs(%e_w : tensor<2x16x32xf32>) -> tensor<2x16x32xf32>
  %dw = linalg.batch_matmul
      indexing_maps = [affine_map<(e, m, n, k) -> (e, k, m)>,
                       affine_map<(e, m, n, k) -> (e, k, n)>,
                       affine_map<(e, m, n, k) -> (e, m, n)>]
      ins(%dh, %x : tensor<2x16x16xf32>, tensor<2x16x32xf32>)
      outs(%z_w : tensor<2x16x32xf32>) -> tensor<2x16x32xf32>
  return %h, %dw : tensor<2x16x16xf32>, tensor<2x16x32xf32>
}

// EXPERT-LABEL: func.func @experts
// EXPERT-DAG:   %[[S6:.*]] = arith.constant 6 : i64
// EXPERT-DAG:   %[[S10:.*]] = arith.constant 10 : i64
// Fprop (contraction 0): expert 0, then expert 1, each quantized alone.
// EXPERT:       %[[X0:.*]] = tensor.extract_slice %arg0[0, 0, 0] [1, 16, 32] [1, 1, 1]
// EXPERT-NEXT:  %[[QX0:.*]] = fp4train.quantize %[[X0]] : tensor<1x16x32xf32> -> !fp4train.scaled<1x16x32xf4E2M1FN, block = [1, 1, 16], scale = f8E4M3FN, global>
// EXPERT-NEXT:  %[[W0:.*]] = tensor.extract_slice %arg1[0, 0, 0] [1, 16, 32] [1, 1, 1]
// EXPERT-NEXT:  %[[QW0:.*]] = fp4train.quantize %[[W0]] : tensor<1x16x32xf32> -> !fp4train.scaled<1x16x32xf4E2M1FN, block = [1, 16, 16], scale = f8E4M3FN, global>
// EXPERT:       %[[X1:.*]] = tensor.extract_slice %arg0[1, 0, 0] [1, 16, 32] [1, 1, 1]
// EXPERT:       %[[W1:.*]] = tensor.extract_slice %arg1[1, 0, 0] [1, 16, 32] [1, 1, 1]
// EXPERT:       %[[A0:.*]] = tensor.extract_slice %[[INIT:.*]][0, 0, 0] [1, 16, 16] [1, 1, 1]
// EXPERT-NEXT:  %[[P0:.*]] = fp4train.scaled_matmul %[[QX0]], %[[QW0]], %[[A0]]
// EXPERT-NEXT:  %[[H0:.*]] = tensor.insert_slice %[[P0]] into %[[INIT]][0, 0, 0] [1, 16, 16] [1, 1, 1]
// EXPERT:       fp4train.scaled_matmul
// EXPERT-NEXT:  %[[H:.*]] = tensor.insert_slice %{{.*}} into %[[H0]][1, 0, 0] [1, 16, 16] [1, 1, 1]
// Wgrad (contraction 1): the rotation covers the whole operands, then each
// expert's dY is rounded stochastically with seed (step << 32) + 2 * (1 + 2 * (e + 1)).
// EXPERT:       %[[DH:.*]] = fp4train.hadamard
// EXPERT:       %[[SHIFT:.*]] = arith.shli %arg3
// EXPERT:       %[[SEED0:.*]] = arith.addi %[[SHIFT]], %[[S6]]
// EXPERT-NEXT:  %[[D0:.*]] = tensor.extract_slice %[[DH]][0, 0, 0] [1, 16, 16] [1, 1, 1]
// EXPERT-NEXT:  fp4train.quantize %[[D0]] rounding = stochastic seed(%[[SEED0]])
// EXPERT:       %[[SEED1:.*]] = arith.addi %[[SHIFT]], %[[S10]]
// EXPERT-NEXT:  %[[D1:.*]] = tensor.extract_slice %[[DH]][1, 0, 0] [1, 16, 16] [1, 1, 1]
// EXPERT-NEXT:  fp4train.quantize %[[D1]] rounding = stochastic seed(%[[SEED1]])
// EXPERT-COUNT-2: fp4train.scaled_matmul
// EXPERT:       return %[[H]], %{{.*}} : tensor<2x16x16xf32>, tensor<2x16x32xf32>

// REPORT: "global_scale": "expert"
// REPORT-NOT: "global_scale": "tensor"

// TENSOR-LABEL: func.func @experts
// TENSOR:       fp4train.quantize %arg0 : tensor<2x16x32xf32> -> !fp4train.scaled<2x16x32xf4E2M1FN, block = [1, 1, 16], scale = f8E4M3FN, global>
// TENSOR-NOT:   tensor.extract_slice
// TENSOR-COUNT-2: fp4train.scaled_matmul {{.*}} tensor<2x16x
// TENSOR-NOT:   fp4train.scaled_matmul

// MX-LABEL:     func.func @experts
// MX-NOT:       tensor.extract_slice
// MX-COUNT-2:   fp4train.scaled_matmul {{.*}} tensor<2x16x
// MX-NOT:       fp4train.scaled_matmul
