// sr=hardware on the tcgen05 chips: cvt.rs.satfinite.e2m1x4.f32 per four
// elements instead of the software [SR1] encode. The Philox words are still
// computed (one call per four elements, keyed by the seed); rbits packs the
// top byte of each element's word at the byte the instruction reads for it
// (element 0 at 31..24, 2 at 23..16, 1 at 15..8, 3 at 7..0), and the four
// codes come out of d from the top nibble (element 0) down. sm_103a gets the
// same instruction through llvm.call_intrinsic ([PTX1] in docs/nvvm.md).
// RUN: fp4-opt %s --fp4train-to-nvvm="chip=sm_100a sr=hardware" | FileCheck %s --check-prefixes=CHECK,SM100
// RUN: fp4-opt %s --fp4train-to-nvvm="chip=sm_103a sr=hardware" | FileCheck %s --check-prefixes=CHECK,SM103
// The default stays [SR1] in software.
// RUN: fp4-opt %s --fp4train-to-nvvm="chip=sm_100a" | FileCheck %s --check-prefix=SOFTWARE
// RUN: not fp4-opt %s --fp4train-to-nvvm="chip=sm_120a sr=hardware" 2>&1 | FileCheck %s --check-prefix=SM120
// RUN: not fp4-opt %s --fp4train-to-nvvm="chip=sm_90a sr=hardware" 2>&1 | FileCheck %s --check-prefix=SM90
// RUN: not fp4-opt %s --fp4train-to-nvvm="chip=sm_100a sr=exact" 2>&1 | FileCheck %s --check-prefix=BADSR
// RUN: not fp4-opt %s --fp4train-cuda-pipeline="recipe=mxfp4-sr chip=sm_120a sr=hardware" 2>&1 | FileCheck %s --check-prefix=SM120

// CHECK-LABEL: func.func @sr
// CHECK:       gpu.launch
// CHECK:         llvm.call_intrinsic "llvm.nvvm.mulhi.ui"
// CHECK:         %[[T0:.*]] = arith.shrui %{{.*}}, %c24_i32{{.*}} : i32
// CHECK:         %[[P0:.*]] = arith.shli %[[T0]], %c24_i32{{.*}} : i32
// CHECK:         %[[T1:.*]] = arith.shrui %{{.*}}, %c24_i32{{.*}} : i32
// CHECK:         %[[P1:.*]] = arith.shli %[[T1]], %c8_i32{{.*}} : i32
// CHECK:         %[[R01:.*]] = arith.ori %[[P0]], %[[P1]] : i32
// CHECK:         %[[T2:.*]] = arith.shrui %{{.*}}, %c24_i32{{.*}} : i32
// CHECK:         %[[P2:.*]] = arith.shli %[[T2]], %c16_i32{{.*}} : i32
// CHECK:         %[[R012:.*]] = arith.ori %[[R01]], %[[P2]] : i32
// CHECK:         %[[T3:.*]] = arith.shrui %{{.*}}, %c24_i32{{.*}} : i32
// CHECK:         %[[P3:.*]] = arith.shli %[[T3]], %c0_i32{{.*}} : i32
// CHECK:         %[[R:.*]] = arith.ori %[[R012]], %[[P3]] : i32
// SM100:         %[[D:.*]] = nvvm.convert.f32x4.to.f4x4 %{{.*}}, %[[R]] : vector<4xf32> -> i16(f4E2M1FN)
// SM103:         %[[D:.*]] = llvm.call_intrinsic "llvm.nvvm.f32x4.to.e2m1x4.rs.satfinite"(%{{.*}}, %[[R]]) : (vector<4xf32>, i32) -> i16
// CHECK:         %[[A:.*]] = arith.shrui %[[D]], %c12_i16 : i16
// CHECK:         arith.andi %[[A]], %c15_i16
// CHECK:         vector.store
// SOFTWARE-LABEL: func.func @sr
// SOFTWARE-NOT:   nvvm.convert.f32x4.to.f4x4
// SOFTWARE:       vector.store
// SM120: error: fp4train-to-nvvm: sr=hardware needs cvt.rs.satfinite.e2m1x4.f32, which sm_120a does not have (sm_100a and sm_103a do); use sr=software
// SM90: error: fp4train-to-nvvm: sr=hardware needs cvt.rs.satfinite.e2m1x4.f32, which sm_90a does not have
// BADSR: for the --sr option: 'exact' is not one of software, hardware
func.func @sr(%x: tensor<8x64xf32>, %seed: i64)
    -> !fp4train.scaled<8x64xf4E2M1FN, block = [1, 32], scale = f8E8M0FNU> {
  %q = fp4train.quantize %x rounding = stochastic seed(%seed) : tensor<8x64xf32>
      -> !fp4train.scaled<8x64xf4E2M1FN, block = [1, 32], scale = f8E8M0FNU>
  return %q : !fp4train.scaled<8x64xf4E2M1FN, block = [1, 32], scale = f8E8M0FNU>
}
