// fp4train-partition's report: one object per collective of the partitioned
// functions, with the buffer each process hands it (Passes.td).
// RUN: fp4-opt %s --fp4train-partition=report=- -o /dev/null | FileCheck %s

// CHECK: [
// CHECK:   {
// CHECK:     "bytes": 4,
// CHECK:     "collective": "all_reduce",
// CHECK:     "element": "i32",
// CHECK:     "function": "nvfp4_rows",
// CHECK:     "grid": "grid",
// CHECK:     "grid_axes": [
// CHECK-NEXT:  0
// CHECK-NEXT: ],
// CHECK:     "loc": "{{.*}}collectives-report.mlir:[[#@LINE+26]]:{{[0-9]+}}",
// CHECK:     "processes": 2,
// CHECK:     "shape": [
// CHECK-NEXT:  1
// CHECK-NEXT: ]
// CHECK:   },
// CHECK:   {
// CHECK:     "bytes": 512,
// CHECK:     "collective": "all_reduce",
// CHECK:     "element": "f32",
// CHECK:     "function": "k_split",
// CHECK:     "processes": 4,
// CHECK:     "shape": [
// CHECK-NEXT:  16,
// CHECK-NEXT:  8
// CHECK-NEXT: ]
// CHECK:   }
// CHECK-NEXT: ]

shard.grid @grid(shape = 2x2)

!n = !fp4train.scaled<32x64xf4E2M1FN, block = [1, 16], scale = f8E4M3FN, global>
// [SH2] The amax of a tensor split in rows: one i32 all-reduce (max).
func.func @nvfp4_rows(%x: tensor<32x64xf32>) -> tensor<32x64xf32> {
  %s = shard.sharding @grid split_axes = [[0]] : !shard.sharding
  %x0 = shard.shard %x to %s annotate_for_users : tensor<32x64xf32>
  %q = fp4train.quantize %x0 : tensor<32x64xf32> -> !n
  %d = fp4train.dequantize %q : !n -> tensor<32x64xf32>
  %r = shard.sharding @grid split_axes = [[0]] : !shard.sharding
  %d0 = shard.shard %d to %r : tensor<32x64xf32>
  return %d0 : tensor<32x64xf32>
}

// [SH5] K split over both axes (4 processes): the partial products.
func.func @k_split(%a: tensor<16x128xf32>, %b: tensor<8x128xf32>, %acc: tensor<16x8xf32>) -> tensor<16x8xf32> {
  %s = shard.sharding @grid split_axes = [[], [0, 1]] : !shard.sharding
  %a0 = shard.shard %a to %s annotate_for_users : tensor<16x128xf32>
  %b0 = shard.shard %b to %s annotate_for_users : tensor<8x128xf32>
  %c = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%a0, %b0 : tensor<16x128xf32>, tensor<8x128xf32>) outs(%acc : tensor<16x8xf32>) -> tensor<16x8xf32>
  return %c : tensor<16x8xf32>
}
