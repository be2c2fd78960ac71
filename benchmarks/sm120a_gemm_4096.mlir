// The GEMM of the static sm_120a report (benchmarks/sm120a_report.sh, run by
// `make bench`): C = A.B^T + acc with M = N = K = 4096, both operands NVFP4
// (E2M1 codes, UE4M3 scales of 16-blocks along K, f32 global scales),
// already quantized, so the CUDA pipeline only lowers it (recipe=none).
!nvfp4 = !fp4train.scaled<4096x4096xf4E2M1FN, block = [1, 16], scale = f8E4M3FN, global>

func.func @gemm(%a: !nvfp4, %b: !nvfp4, %acc: tensor<4096x4096xf32>) -> tensor<4096x4096xf32> {
  %c = fp4train.scaled_matmul %a, %b, %acc : !nvfp4, !nvfp4, tensor<4096x4096xf32>
  return %c : tensor<4096x4096xf32>
}
