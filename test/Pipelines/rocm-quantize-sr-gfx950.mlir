// The MXFP4 stochastic-rounding quantize kernel through the ROCm pipeline to
// gfx950 assembly: the seed crosses to the kernel as an argument, the lane
// computes its [SR1] words with Philox (v_mad_u64_u32 for the 32x32->64
// products), and its 32 elements are converted by 32
// v_cvt_scalef32_sr_pk_fp4_f32 (one element per instruction, each with its
// own word; 8 of each byte select), all with the E8M0 scale operand of the
// block. No scratch, no spills, and at most 64 VGPRs (8 waves per SIMD).
// docs/amdgpu.md reports the figures.
//
// RUN: fp4-opt %s --fp4train-rocm-pipeline="recipe=mxfp4 chip=gfx950 format=isa" \
// RUN:   | sed -e 's/\\0A/\n/g' -e 's/\\09/ /g' > %t.s
// RUN: FileCheck %s < %t.s
// RUN: grep -c "v_cvt_scalef32_sr_pk_fp4_f32 .*op_sel:\[0,0,1,0\]" %t.s | FileCheck %s --check-prefix=SEL
// RUN: grep -c "v_cvt_scalef32_sr_pk_fp4_f32 .*op_sel:\[0,0,0,1\]" %t.s | FileCheck %s --check-prefix=SEL
// RUN: grep -c "v_cvt_scalef32_sr_pk_fp4_f32 .*op_sel:\[0,0,1,1\]" %t.s | FileCheck %s --check-prefix=SEL
// RUN: grep "v_cvt_scalef32_sr_pk_fp4_f32" %t.s | grep -c -v "op_sel" | FileCheck %s --check-prefix=SEL
// SEL: {{^}}8{{$}}

// CHECK:      llvm.func @quantize_sr(
// CHECK-SAME:   %[[SEED:arg[0-9]+]]: i64) ->
// CHECK:        gpu.launch_func <%{{.*}} : !llvm.ptr> @quantize_sr_kernel::@quantize_sr_kernel {{.*}}%[[SEED]] : i64
// CHECK:      gpu.binary @quantize_sr_kernel
// CHECK:      quantize_sr_kernel:
// CHECK-COUNT-8: global_load_dwordx4
// CHECK:        v_mad_u64_u32
// CHECK:        v_cvt_scalef32_sr_pk_fp4_f32 v{{[0-9]+}}, v[{{[0-9]+}}:{{[0-9]+}}], v{{[0-9]+}}, [[S:v[0-9]+]]
// CHECK-COUNT-31: v_cvt_scalef32_sr_pk_fp4_f32 v{{[0-9]+}}, v[{{[0-9]+}}:{{[0-9]+}}], v{{[0-9]+}}, [[S]]
// CHECK-NOT:    v_cvt_scalef32_sr_pk_fp4_f32
// CHECK-NOT:    scratch_
// [PK1] The block's 32 codes are stored packed: one 16-byte store.
// CHECK:        global_store_dwordx4
// CHECK-NOT:    global_store_dwordx4
// CHECK:        global_store_byte
// CHECK:        s_endpgm
// CHECK:        .private_segment_fixed_size: 0
// CHECK:        .sgpr_spill_count: 0
// CHECK-NEXT:   .symbol: quantize_sr_kernel.kd
// CHECK:        .vgpr_count: {{([1-5]?[0-9]|6[0-4])$}}
// CHECK-NEXT:   .vgpr_spill_count: 0

!fp4 = !fp4train.scaled<512x256xf4E2M1FN, block = [1, 32], scale = f8E8M0FNU>

func.func @quantize_sr(%x: tensor<512x256xf32>, %seed: i64) -> tensor<512x256xf32> {
  %q = fp4train.quantize %x rounding = stochastic seed(%seed) : tensor<512x256xf32> -> !fp4
  %d = fp4train.dequantize %q : !fp4 -> tensor<512x256xf32>
  return %d : tensor<512x256xf32>
}
