// RUN: fp4-opt %s --fp4train-to-amdgpu="chip=gfx942" --verify-diagnostics

// CDNA3 has MFMAs for FP8 but no block-scaled ones.
!mx = !fp4train.scaled<64x64xf4E2M1FN, block = [1, 32], scale = f8E8M0FNU>
func.func @mxfp4(%a: !mx, %b: !mx, %acc: tensor<64x64xf32>) -> tensor<64x64xf32> {
  // expected-error@+1 {{'fp4train.scaled_matmul' op needs gfx950 (CDNA4): chip gfx942 has no block-scaled MFMA (v_mfma_scale_f32_*_f8f6f4)}}
  %c = fp4train.scaled_matmul %a, %b, %acc : !mx, !mx, tensor<64x64xf32>
  return %c : tensor<64x64xf32>
}
