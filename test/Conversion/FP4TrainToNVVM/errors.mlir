// RUN: fp4-opt %s --fp4train-to-nvvm="chip=sm_120a" --split-input-file --verify-diagnostics
// RUN: not fp4-opt %s --fp4train-to-nvvm="chip=sm_80" 2>&1 | FileCheck %s --check-prefix=SM80
// RUN: not fp4-opt %s --fp4train-to-nvvm="chip=sm_90a" --split-input-file 2>&1 | FileCheck %s --check-prefix=SM90
// RUN: not fp4-opt %s --fp4train-to-nvvm="chip=gfx950" 2>&1 | FileCheck %s --check-prefix=BADCHIP
// RUN: not fp4-opt %s --fp4train-to-nvvm="chip=sm_12x" 2>&1 | FileCheck %s --check-prefix=BADCHIP2

// The values of chip= are the NVIDIA rows of the table of targets
// (docs/targets.md); sm_80 has no FP8 or block-scaled tensor cores.
// BADCHIP: for the --chip option: 'gfx950' is not one of sm_89, sm_90a, sm_100a, sm_103a, sm_120a, sm_121a
// BADCHIP2: for the --chip option: 'sm_12x' is not one of sm_89, sm_90a, sm_100a, sm_103a, sm_120a, sm_121a
// SM80: for the --chip option: 'sm_80' is not one of sm_89, sm_90a, sm_100a, sm_103a, sm_120a, sm_121a
// sm_90a runs every operand pair (FP4 x FP8 too); only the grid limit is left.
// SM90: error: 'fp4train.scaled_matmul' op needs a grid of 1 x 1 x 65536 workgroups (N, M and batch tiles) on sm_90a, past the launch limits (2^31 - 1 in x, 65535 in y and z)

!mx = !fp4train.scaled<64x64xf4E2M1FN, block = [1, 32], scale = f8E8M0FNU>
func.func @supported(%a: !mx, %b: !mx, %acc: tensor<64x64xf32>) -> tensor<64x64xf32> {
  %c = fp4train.scaled_matmul %a, %b, %acc : !mx, !mx, tensor<64x64xf32>
  return %c : tensor<64x64xf32>
}

// -----

!mx4 = !fp4train.scaled<64x64xf4E2M1FN, block = [1, 32], scale = f8E8M0FNU>
!mx8 = !fp4train.scaled<64x64xf8E4M3FN, block = [1, 32], scale = f8E8M0FNU>
func.func @mixed_width(%a: !mx4, %b: !mx8, %acc: tensor<64x64xf32>) -> tensor<64x64xf32> {
  // expected-error@+1 {{'fp4train.scaled_matmul' op with operands mxfp4 x mxfp8_e4m3 cannot run on sm_120a: the chip mixes an FP4 and an FP8 operand, which the kernel does not stage (kind::mxf8f6f4 would need E2M1 in 8-bit containers)}}
  %c = fp4train.scaled_matmul %a, %b, %acc : !mx4, !mx8, tensor<64x64xf32>
  return %c : tensor<64x64xf32>
}

// -----

// A batch of 65536 GEMMs would need 65536 workgroups in z.
!a = !fp4train.scaled<65536x64x64xf4E2M1FN, block = [1, 1, 32], scale = f8E8M0FNU>
func.func @grid(%a: !a, %b: !a, %acc: tensor<65536x64x64xf32>) -> tensor<65536x64x64xf32> {
  // expected-error@+1 {{'fp4train.scaled_matmul' op needs a grid of 1 x 1 x 65536 workgroups (N, M and batch tiles) on sm_120a, past the launch limits (2^31 - 1 in x, 65535 in y and z)}}
  %c = fp4train.scaled_matmul %a, %b, %acc : !a, !a, tensor<65536x64x64xf32>
  return %c : tensor<65536x64x64xf32>
}
