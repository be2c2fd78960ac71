// The GEMM of the static gfx950 report (benchmarks/gfx950_report.sh, run by
// `make bench`): C = A.B^T + acc with M = N = K = 4096 (and @gemm_8192:
// M = N = 8192, K = 4096), both operands MXFP4
// (E2M1 codes, E8M0 scales of 32-blocks along K), already quantized, so the
// ROCm pipeline only lowers it (recipe=none). @gemm writes f32; @gemm_bf16
// is the same GEMM whose f32 -> bf16 truncation the kernel's bf16 epilogue
// takes over (docs/amdgpu.md).
!mxfp4 = !fp4train.scaled<4096x4096xf4E2M1FN, block = [1, 32], scale = f8E8M0FNU>

func.func @gemm(%a: !mxfp4, %b: !mxfp4, %acc: tensor<4096x4096xf32>) -> tensor<4096x4096xf32> {
  %c = fp4train.scaled_matmul %a, %b, %acc : !mxfp4, !mxfp4, tensor<4096x4096xf32>
  return %c : tensor<4096x4096xf32>
}

// The report's second shape: 8192 x 8192 outputs over K = 4096 (4x the
// workgroups of @gemm, the same K loop).
func.func @gemm_8192(%a: !fp4train.scaled<8192x4096xf4E2M1FN, block = [1, 32], scale = f8E8M0FNU>,
                     %b: !fp4train.scaled<8192x4096xf4E2M1FN, block = [1, 32], scale = f8E8M0FNU>,
                     %acc: tensor<8192x8192xf32>) -> tensor<8192x8192xf32> {
  %c = fp4train.scaled_matmul %a, %b, %acc
      : !fp4train.scaled<8192x4096xf4E2M1FN, block = [1, 32], scale = f8E8M0FNU>,
        !fp4train.scaled<8192x4096xf4E2M1FN, block = [1, 32], scale = f8E8M0FNU>,
        tensor<8192x8192xf32>
  return %c : tensor<8192x8192xf32>
}

func.func @gemm_bf16(%a: !mxfp4, %b: !mxfp4, %acc: tensor<4096x4096xf32>) -> tensor<4096x4096xbf16> {
  %c = fp4train.scaled_matmul %a, %b, %acc : !mxfp4, !mxfp4, tensor<4096x4096xf32>
  %t = arith.truncf %c : tensor<4096x4096xf32> to tensor<4096x4096xbf16>
  return %t : tensor<4096x4096xbf16>
}
