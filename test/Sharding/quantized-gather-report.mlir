// [SH4] in fp4train-partition's report: the gather of an MXFP4-quantized
// row split moves its codes (a byte each) and block scales, 0.26x the bytes
// of the f32 gather it replaces (at most 0.3x).
// RUN: fp4-opt %s --fp4train-partition=report=- -o /dev/null | FileCheck %s

// CHECK:     "bytes": 2048,
// CHECK:     "collective": "all_gather",
// CHECK:     "element": "i8",
// CHECK:     "replaces_bytes": 8192,
// CHECK:     "shape": [
// CHECK-NEXT:  32,
// CHECK-NEXT:  64
// CHECK:     "bytes": 64,
// CHECK:     "collective": "all_gather",
// CHECK:     "element": "f8E8M0FNU",
// CHECK:     "replaces_bytes": 0,
// CHECK-NOT: "collective"

shard.grid @dp(shape = 2)

!m = !fp4train.scaled<64x64xf4E2M1FN, block = [1, 32], scale = f8E8M0FNU>
func.func @gathered_weight(%w: tensor<64x64xf32>) -> tensor<64x64xf32> {
  %s = shard.sharding @dp split_axes = [[0]] : !shard.sharding
  %r = shard.sharding @dp split_axes = [[]] : !shard.sharding
  %w0 = shard.shard %w to %s : tensor<64x64xf32>
  %w1 = shard.shard %w0 to %r annotate_for_users : tensor<64x64xf32>
  %q = fp4train.quantize %w1 : tensor<64x64xf32> -> !m
  %d = fp4train.dequantize %q : !m -> tensor<64x64xf32>
  return %d : tensor<64x64xf32>
}
