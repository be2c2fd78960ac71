// RUN: fp4-opt %s --fp4train-to-amdgpu="chip=gfx950" --split-input-file --verify-diagnostics
// RUN: not fp4-opt %s --fp4train-to-amdgpu="chip=gfx90a" 2>&1 | FileCheck %s --check-prefix=GFX90A
// RUN: not fp4-opt %s --fp4train-to-amdgpu="chip=sm_100a" 2>&1 | FileCheck %s --check-prefix=BADCHIP
// RUN: not fp4-opt %s --fp4train-to-amdgpu="mfma=8x8x32" 2>&1 | FileCheck %s --check-prefix=BADMFMA
// RUN: not fp4-opt %s --fp4train-to-amdgpu="tile=256" 2>&1 | FileCheck %s --check-prefix=BADTILE
// RUN: not fp4-opt %s --fp4train-to-amdgpu="mfma=32x32x64 tile=64" 2>&1 | FileCheck %s --check-prefix=TILE64

// BADCHIP: for the --chip option: 'sm_100a' is not one of gfx950
// BADMFMA: for the --mfma option: '8x8x32' is not one of auto, 32x32x64, 16x16x128
// BADTILE: for the --tile option: '256' is not one of auto, 64, 128
// TILE64: error: fp4train-to-amdgpu: tile=64 needs mfma=16x16x128 (a 64x64 tile is one 32x32x64 instruction per wave; 32x32x64 kernels use 128x128 tiles)
// Only the chips of the table of targets (docs/targets.md) are values.
// GFX90A: for the --chip option: 'gfx90a' is not one of gfx950

!nv = !fp4train.scaled<64x64xf4E2M1FN, block = [1, 16], scale = f8E4M3FN, global>
func.func @nvfp4(%a: !nv, %b: !nv, %acc: tensor<64x64xf32>) -> tensor<64x64xf32> {
  // expected-error@+1 {{'fp4train.scaled_matmul' op has an NVFP4 operand '!fp4train.scaled<64x64xf4E2M1FN, block = [1, 16], scale = f8E4M3FN, global>', which gfx950 cannot run natively: its scaled MFMA takes E8M0 scales of 32-element blocks, not NVFP4's E4M3 scales of 16-element blocks; use an MX recipe (mxfp4, mxfp8) for gfx950}}
  %c = fp4train.scaled_matmul %a, %b, %acc : !nv, !nv, tensor<64x64xf32>
  return %c : tensor<64x64xf32>
}

// -----

// 8388608 rows of 128x128 tiles (the auto rule picks 32x32x64 for a grid
// this large) would need 65536 workgroups in y.
!a = !fp4train.scaled<8388608x64xf4E2M1FN, block = [1, 32], scale = f8E8M0FNU>
!b = !fp4train.scaled<64x64xf4E2M1FN, block = [1, 32], scale = f8E8M0FNU>
func.func @grid(%a: !a, %b: !b, %acc: tensor<8388608x64xf32>) -> tensor<8388608x64xf32> {
  // expected-error@+1 {{'fp4train.scaled_matmul' op needs a grid of 1 x 65536 x 1 workgroups (N, M and batch tiles) on gfx950, past the launch limits (2^31 - 1 in x, 65535 in y and z)}}
  %c = fp4train.scaled_matmul %a, %b, %acc : !a, !b, tensor<8388608x64xf32>
  return %c : tensor<8388608x64xf32>
}
