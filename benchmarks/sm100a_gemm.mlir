// The GEMMs of the static sm_100a report (benchmarks/sm100a_report.sh, run
// by `make bench`): C = A.B^T + acc, both operands NVFP4 (E2M1 codes, UE4M3
// scales of 16-blocks along K, f32 global scales), already quantized, so
// the CUDA pipeline only lowers them (recipe=none): 4096^3 and
// 8192 x 8192 x 4096.
!a4k = !fp4train.scaled<4096x4096xf4E2M1FN, block = [1, 16], scale = f8E4M3FN, global>
!a8k = !fp4train.scaled<8192x4096xf4E2M1FN, block = [1, 16], scale = f8E4M3FN, global>

func.func @gemm_4096(%a: !a4k, %b: !a4k, %acc: tensor<4096x4096xf32>) -> tensor<4096x4096xf32> {
  %c = fp4train.scaled_matmul %a, %b, %acc : !a4k, !a4k, tensor<4096x4096xf32>
  return %c : tensor<4096x4096xf32>
}

func.func @gemm_8192(%a: !a8k, %b: !a8k, %acc: tensor<8192x8192xf32>) -> tensor<8192x8192xf32> {
  %c = fp4train.scaled_matmul %a, %b, %acc : !a8k, !a8k, tensor<8192x8192xf32>
  return %c : tensor<8192x8192xf32>
}
