// The Hadamard kernels through the ROCm pipeline to gfx950 assembly: f32
// butterflies in registers (v_pk_add_f32 on pairs of lanes' values, with
// neg modifiers for the differences), the block exchange through LDS
// (ds_write2_b32, one s_barrier, 256 x 17 f32 = 17408 B) when n > 16, 16-byte
// loads and stores for blocks along the last dimension, and no kernel uses
// scratch. No FMA is formed: every product and sum is rounded on its own, as
// in the numerics library ([H1]).
//
// RUN: fp4-opt %s --fp4train-rocm-pipeline="recipe=mxfp4 chip=gfx950 format=isa" | FileCheck %s
// RUN: fp4-opt %s --fp4train-rocm-pipeline="recipe=mxfp4 chip=gfx950 format=isa" | FileCheck %s --check-prefix=NOFMA

// n = 16, fixed signs: registers only, no LDS; the sign vector (the same
// for every lane) is read with scalar loads.
// CHECK:      gpu.binary @rotate16_kernel
// CHECK-SAME:   global_load_dwordx4
// CHECK-SAME:   v_pk_mul_f32
// CHECK-SAME:   v_pk_add_f32
// CHECK-SAME:   global_store_dwordx4
// CHECK-SAME:   .amdhsa_group_segment_fixed_size 0
// CHECK-SAME:   .amdhsa_private_segment_fixed_size 0
// CHECK-SAME:   .vgpr_spill_count: 0
// n = 32 and 128 along the last dimension.
// CHECK:      gpu.binary @rotate32_kernel
// CHECK-SAME:   global_load_dwordx4
// CHECK-SAME:   ds_write2_b32
// CHECK-SAME:   s_barrier
// CHECK-SAME:   ds_read
// CHECK-SAME:   v_pk_add_f32
// CHECK-SAME:   global_store_dwordx4
// CHECK-SAME:   .amdhsa_group_segment_fixed_size 17408
// CHECK-SAME:   .amdhsa_private_segment_fixed_size 0
// CHECK-SAME:   .vgpr_spill_count: 0
// CHECK:      gpu.binary @rotate128_kernel
// CHECK-SAME:   s_barrier
// CHECK-SAME:   global_store_dwordx2
// CHECK-SAME:   .amdhsa_group_segment_fixed_size 17408
// CHECK-SAME:   .amdhsa_private_segment_fixed_size 0
// CHECK-SAME:   .vgpr_spill_count: 0
// n = 256 along dimension 0, random signs (drawn on the host), inverse:
// strided blocks, scalar accesses, the stores guarded for the last
// workgroup.
// CHECK:      gpu.binary @rotate256_kernel
// CHECK-SAME:   global_load_dword v
// CHECK-SAME:   s_barrier
// CHECK-SAME:   global_store_dword v
// CHECK-SAME:   .amdhsa_group_segment_fixed_size 17408
// CHECK-SAME:   .amdhsa_private_segment_fixed_size 0
// CHECK-SAME:   .vgpr_spill_count: 0
// NOFMA-NOT:  {{v_(pk_)?fmac?_f32|v_ma[cd]_f32}}

func.func @rotate16(%x: tensor<1024x256xf32>) -> tensor<1024x256xf32> {
  %r = fp4train.hadamard %x with #fp4train.hadamard<16, fixed> along 1 : tensor<1024x256xf32>
  return %r : tensor<1024x256xf32>
}

func.func @rotate32(%x: tensor<1024x256xf32>) -> tensor<1024x256xf32> {
  %r = fp4train.hadamard %x with #fp4train.hadamard<32, fixed> along 1 : tensor<1024x256xf32>
  return %r : tensor<1024x256xf32>
}

func.func @rotate128(%x: tensor<1024x256xf32>) -> tensor<1024x256xf32> {
  %r = fp4train.hadamard %x with #fp4train.hadamard<128, none> along 1 : tensor<1024x256xf32>
  return %r : tensor<1024x256xf32>
}

func.func @rotate256(%x: tensor<512x40xf32>, %seed: i64, %step: i64) -> tensor<512x40xf32> {
  %r = fp4train.hadamard %x with #fp4train.hadamard<256, random> along 0 seed(%seed) step(%step) inverse : tensor<512x40xf32>
  return %r : tensor<512x40xf32>
}
