// The transposed view of a 16x16-blocked tensor (the NVFP4 weight that
// feeds Dgrad) becomes two tiled transpose kernels, one for the codes and
// one for the scale codes, so the quantized weight stays on the device; the
// global scale passes through. Grids past the launch limits keep the host
// expansion.
// RUN: fp4-opt %s --fp4train-to-nvvm="chip=sm_120a" --split-input-file | FileCheck %s
// RUN: fp4-opt %s --fp4train-to-nvvm="chip=sm_100a" --split-input-file | FileCheck %s
// RUN: fp4-opt %s --fp4train-to-nvvm="chip=sm_90a" --split-input-file | FileCheck %s

!w = !fp4train.scaled<2x48x80xf4E2M1FN, block = [1, 16, 16], scale = f8E4M3FN, global>
!wt = !fp4train.scaled<2x80x48xf4E2M1FN, block = [1, 16, 16], scale = f8E4M3FN, global>

// 48 x 80 codes, stored two per byte ([PK1]) as 48 x 40 bytes: a 3 x 2 x 2
// grid of 32 x 32-code tiles, with bounds checks along both (ragged)
// dimensions. Each of the two passes per side moves one byte per thread:
// a stored byte read splits into its two codes in the tile, and a byte
// written joins the codes of two input rows, low nibble first. The 3 x 5
// scales: one tile per batch entry, one byte per element.
// CHECK-LABEL: func.func @weights
//  CHECK-SAME:     (%[[CODES:.*]]: tensor<2x48x40xi8>, %[[SCALES:.*]]: tensor<2x3x5xi8>, %[[G:.*]]: f32)
// CHECK:         %[[IN:.*]] = bufferization.to_buffer %[[CODES]] read_only
// CHECK:         %[[OUT:.*]] = memref.alloc() {alignment = 64 : i64} : memref<2x80x24xi8>
// CHECK:         gpu.launch blocks(%{{.*}}, %{{.*}}, %{{.*}}) in (%{{.*}} = %c3{{.*}}, %{{.*}} = %c2{{.*}}, %{{.*}} = %c2{{.*}}) threads(%{{.*}}, %{{.*}}, %{{.*}}) in (%{{.*}} = %c256{{.*}}, %{{.*}} = %c1{{.*}}, %{{.*}} = %c1{{.*}}) workgroup(%[[TILE:.*]] : memref<32x33xi8, #gpu.address_space<workgroup>>)
// CHECK-COUNT-2:   memref.load %[[IN]]
// CHECK:           gpu.barrier
// CHECK:           %[[LO:.*]] = memref.load %[[TILE]]
// CHECK:           %[[HI:.*]] = memref.load %[[TILE]]
// CHECK:           %[[SH:.*]] = arith.shli %[[HI]]
// CHECK:           %[[BYTE:.*]] = arith.ori %[[LO]], %[[SH]]
// CHECK:           memref.store %[[BYTE]], %[[OUT]]
// CHECK:           memref.store %{{.*}}, %[[OUT]]
// CHECK-NOT:       memref.store %{{.*}}, %[[OUT]]
// CHECK:         gpu.launch blocks(%{{.*}}, %{{.*}}, %{{.*}}) in (%{{.*}} = %c1{{.*}}, %{{.*}} = %c1{{.*}}, %{{.*}} = %c2{{.*}})
// CHECK-NOT:     linalg.transpose
// CHECK:         return %{{.*}}, %{{.*}}, %[[G]] : tensor<2x80x24xi8>, tensor<2x5x3xi8>, f32
func.func @weights(%w: !w) -> !wt {
  %t = fp4train.transpose %w : !w -> !wt
  return %t : !wt
}

// -----

!x = !fp4train.scaled<65536x16x16xf4E2M1FN, block = [1, 16, 16], scale = f8E4M3FN, global>

// A batch past the 65535 workgroups a grid's z dimension allows: the host's
// linalg.transpose.
// CHECK-LABEL: func.func @huge_batch
// CHECK-NOT:     gpu.launch
// CHECK:         linalg.transpose {{.*}} : tensor<65536x16x16xi8>
// CHECK:         linalg.transpose
func.func @huge_batch(%x: !x) -> !x {
  %t = fp4train.transpose %x : !x -> !x
  return %t : !x
}
