// The MX quantize kernels through the ROCm pipeline to gfx950 assembly: the
// conversions are the hardware's scaled ones (v_cvt_scalef32_pk_* with the
// E8M0 code in the exponent field of the scale operand), 16 per 32-element
// block (one lane per block), the block is read with 16-byte loads and its
// codes written with 16-byte stores, and no kernel uses scratch.
//
// RUN: fp4-opt %s --fp4train-rocm-pipeline="recipe=mxfp4 chip=gfx950 format=isa" | FileCheck %s

// E2M1: the four byte positions of a packed word (op_sel), floor scales.
// CHECK:      gpu.binary @quantize_fp4_kernel
// CHECK-SAME:   global_load_dwordx4
// CHECK-SAME:   v_cvt_scalef32_pk_fp4_f32 [[W:v[0-9]+]], v{{[0-9]+}}, v{{[0-9]+}}, [[S:v[0-9]+]]{{\\0A}}
// CHECK-SAME:   v_cvt_scalef32_pk_fp4_f32 [[W]], v{{[0-9]+}}, v{{[0-9]+}}, [[S]] op_sel:[0,0,1,0]
// CHECK-SAME:   v_cvt_scalef32_pk_fp4_f32 [[W]], v{{[0-9]+}}, v{{[0-9]+}}, [[S]] op_sel:[0,0,0,1]
// CHECK-SAME:   v_cvt_scalef32_pk_fp4_f32 [[W]], v{{[0-9]+}}, v{{[0-9]+}}, [[S]] op_sel:[0,0,1,1]
// CHECK-SAME:   global_store_dwordx4
// CHECK-SAME:   global_store_byte
// CHECK-SAME:   .private_segment_fixed_size: 0
// CHECK-SAME:   .vgpr_spill_count: 0
// E4M3 (rceil) and E5M2 (floor) from bf16.
// CHECK:      gpu.binary @quantize_fp8_kernel
// CHECK-SAME:   v_cvt_scalef32_pk_fp8_f32
// CHECK-SAME:   .private_segment_fixed_size: 0
// CHECK:      gpu.binary @quantize_fp8_kernel_0
// CHECK-SAME:   v_cvt_scalef32_pk_bf8_f32
// CHECK-SAME:   .private_segment_fixed_size: 0

!fp4 = !fp4train.scaled<512x256xf4E2M1FN, block = [1, 32], scale = f8E8M0FNU>
!e4m3 = !fp4train.scaled<3x40x64xf8E4M3FN, block = [1, 1, 32], scale = f8E8M0FNU>
!e5m2 = !fp4train.scaled<3x40x64xf8E5M2, block = [1, 1, 32], scale = f8E8M0FNU>

func.func @quantize_fp4(%x: tensor<512x256xf32>) -> tensor<512x256xf32> {
  %q = fp4train.quantize %x : tensor<512x256xf32> -> !fp4
  %d = fp4train.dequantize %q : !fp4 -> tensor<512x256xf32>
  return %d : tensor<512x256xf32>
}

func.func @quantize_fp8(%x: tensor<3x40x64xbf16>) -> (tensor<3x40x64xf32>, tensor<3x40x64xf32>) {
  %q = fp4train.quantize %x scale_mode = rceil : tensor<3x40x64xbf16> -> !e4m3
  %d = fp4train.dequantize %q : !e4m3 -> tensor<3x40x64xf32>
  %q2 = fp4train.quantize %x : tensor<3x40x64xbf16> -> !e5m2
  %d2 = fp4train.dequantize %q2 : !e5m2 -> tensor<3x40x64xf32>
  return %d, %d2 : tensor<3x40x64xf32>, tensor<3x40x64xf32>
}
