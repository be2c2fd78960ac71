// The fused Hadamard + quantize kernels through the ROCm pipeline to gfx950
// assembly: one launch per rotate-then-quantize, the rotation's f32
// butterflies (no FMA, [H1]), its LDS exchange (n > 16), the rotated blocks
// staged in LDS (16-byte ds_write/ds_read, 128 rows of 32 + 4 f32 =
// 18432 B), the scaled conversions of the quantize kernel, and no scratch or
// spills.
//
// RUN: fp4-opt %s --fp4train-rocm-pipeline="recipe=mxfp4 chip=gfx950 format=isa" | FileCheck %s
// RUN: fp4-opt %s --fp4train-rocm-pipeline="recipe=mxfp4 chip=gfx950 format=isa" | FileCheck %s --check-prefix=NOFMA

// The mxfp4-hadamard recipe's Wgrad form: n = 32, MXFP4 RNE.
// CHECK-LABEL: llvm.func @wgrad32
// CHECK:         gpu.launch_func <%{{.*}} : !llvm.ptr> @wgrad32_kernel::@wgrad32_kernel
// CHECK-NOT:     gpu.launch_func
// CHECK:       gpu.binary @wgrad32_kernel
// CHECK-SAME:    global_load_dwordx4
// CHECK-SAME:    ds_write2_b32
// CHECK-SAME:    s_barrier
// CHECK-SAME:    v_pk_add_f32
// CHECK-SAME:    ds_write_b128
// CHECK-SAME:    s_barrier
// CHECK-SAME:    ds_read_b128
// CHECK-SAME:    v_cvt_scalef32_pk_fp4_f32
// CHECK-SAME:    global_store_dwordx4
// CHECK-SAME:    global_store_byte
// CHECK-SAME:    .amdhsa_group_segment_fixed_size 18432
// CHECK-SAME:    .amdhsa_private_segment_fixed_size 0
// CHECK-SAME:    .vgpr_spill_count: 0
// n = 16 < B = 32 with random signs and [SR1]: no exchange, one barrier.
// CHECK-LABEL: llvm.func @wgrad16_sr
// CHECK:         gpu.launch_func <%{{.*}} : !llvm.ptr> @wgrad16_sr_kernel::@wgrad16_sr_kernel
// CHECK-NOT:     gpu.launch_func
// CHECK:       gpu.binary @wgrad16_sr_kernel
// CHECK-SAME:    global_load_dwordx4
// CHECK-SAME:    ds_write_b128
// CHECK-SAME:    s_barrier
// CHECK-SAME:    ds_read_b128
// CHECK-SAME:    v_cvt_scalef32_sr_pk_fp4_f32
// CHECK-SAME:    global_store_dwordx4
// CHECK-SAME:    .amdhsa_group_segment_fixed_size 18432
// CHECK-SAME:    .amdhsa_private_segment_fixed_size 0
// CHECK-SAME:    .vgpr_spill_count: 0
// n = 256, MXFP8 E4M3.
// CHECK-LABEL: llvm.func @wgrad256_e4m3
// CHECK:         gpu.launch_func <%{{.*}} : !llvm.ptr> @wgrad256_e4m3_kernel::@wgrad256_e4m3_kernel
// CHECK-NOT:     gpu.launch_func
// CHECK:       gpu.binary @wgrad256_e4m3_kernel
// CHECK-SAME:    s_barrier
// CHECK-SAME:    ds_read_b128
// CHECK-SAME:    v_cvt_scalef32_pk_fp8_f32
// CHECK-SAME:    .amdhsa_group_segment_fixed_size 18432
// CHECK-SAME:    .amdhsa_private_segment_fixed_size 0
// CHECK-SAME:    .vgpr_spill_count: 0
// NOFMA-NOT:  {{v_(pk_)?fmac?_f32|v_ma[cd]_f32}}

func.func @wgrad32(%x: tensor<1024x256xf32>)
    -> !fp4train.scaled<1024x256xf4E2M1FN, block = [1, 32], scale = f8E8M0FNU> {
  %r = fp4train.hadamard %x with #fp4train.hadamard<32, fixed> along 1 : tensor<1024x256xf32>
  %q = fp4train.quantize %r : tensor<1024x256xf32>
      -> !fp4train.scaled<1024x256xf4E2M1FN, block = [1, 32], scale = f8E8M0FNU>
  return %q : !fp4train.scaled<1024x256xf4E2M1FN, block = [1, 32], scale = f8E8M0FNU>
}

func.func @wgrad16_sr(%x: tensor<1024x256xf32>, %hseed: i64, %step: i64, %seed: i64)
    -> !fp4train.scaled<1024x256xf4E2M1FN, block = [1, 32], scale = f8E8M0FNU> {
  %r = fp4train.hadamard %x with #fp4train.hadamard<16, random> along 1 seed(%hseed) step(%step) : tensor<1024x256xf32>
  %q = fp4train.quantize %r rounding = stochastic seed(%seed) : tensor<1024x256xf32>
      -> !fp4train.scaled<1024x256xf4E2M1FN, block = [1, 32], scale = f8E8M0FNU>
  return %q : !fp4train.scaled<1024x256xf4E2M1FN, block = [1, 32], scale = f8E8M0FNU>
}

func.func @wgrad256_e4m3(%x: tensor<1024x256xf32>)
    -> !fp4train.scaled<1024x256xf8E4M3FN, block = [1, 32], scale = f8E8M0FNU> {
  %r = fp4train.hadamard %x with #fp4train.hadamard<256, fixed> along 1 : tensor<1024x256xf32>
  %q = fp4train.quantize %r : tensor<1024x256xf32>
      -> !fp4train.scaled<1024x256xf8E4M3FN, block = [1, 32], scale = f8E8M0FNU>
  return %q : !fp4train.scaled<1024x256xf8E4M3FN, block = [1, 32], scale = f8E8M0FNU>
}
