// What the tcgen05 kernel of sm_100a / sm_103a cannot take, with the chip
// named; the same module runs on both chips.
// RUN: fp4-opt %s --fp4train-to-nvvm="chip=sm_100a" --split-input-file --verify-diagnostics
// RUN: fp4-opt %s --fp4train-to-nvvm="chip=sm_103a" --split-input-file --verify-diagnostics
// The family targets (sm_100f) and sm_101a have no tcgen05 lowering here:
// they are not values of chip= ([PTX1], docs/targets.md).
// RUN: not fp4-opt %s --fp4train-to-nvvm="chip=sm_100f" --split-input-file 2>&1 | FileCheck %s --check-prefix=FAMILY

// FAMILY: for the --chip option: 'sm_100f' is not one of sm_89, sm_90a, sm_100a, sm_103a, sm_120a, sm_121a

!mx = !fp4train.scaled<64x64xf4E2M1FN, block = [1, 32], scale = f8E8M0FNU>
func.func @supported(%a: !mx, %b: !mx, %acc: tensor<64x64xf32>) -> tensor<64x64xf32> {
  %c = fp4train.scaled_matmul %a, %b, %acc : !mx, !mx, tensor<64x64xf32>
  return %c : tensor<64x64xf32>
}

// -----

!mx4 = !fp4train.scaled<64x64xf4E2M1FN, block = [1, 32], scale = f8E8M0FNU>
!mx8 = !fp4train.scaled<64x64xf8E5M2, block = [1, 32], scale = f8E8M0FNU>
func.func @mixed_width(%a: !mx4, %b: !mx8, %acc: tensor<64x64xf32>) -> tensor<64x64xf32> {
  // expected-error-re@+1 {{'fp4train.scaled_matmul' op with operands mxfp4 x mxfp8_e5m2 cannot run on sm_10{{[03]}}a: the chip mixes an FP4 and an FP8 operand, which the tcgen05 kernel does not stage (kind::mxf8f6f4 would need E2M1 in 8-bit containers)}}
  %c = fp4train.scaled_matmul %a, %b, %acc : !mx4, !mx8, tensor<64x64xf32>
  return %c : tensor<64x64xf32>
}
