// RUN: fp4-opt %s --fp4train-to-nvvm="chip=sm_89" --split-input-file | FileCheck %s

!a = !fp4train.scaled<256x512xf4E2M1FN, block = [1, 32], scale = f8E8M0FNU>
!b = !fp4train.scaled<128x512xf4E2M1FN, block = [1, 32], scale = f8E8M0FNU>

// MXFP4 on the FP8 mma.sync: the shared skeleton (128x128 tiles, 256
// threads, K steps of 128) stages E2M1 as E4M3: each loaded 16-byte chunk
// of 32 codes is widened word by word by prmt (magnitude lookup 0x3C383000
// / 0x4C484440 by the low 16 bits of w & 0x77777777 and of its high half
// shifted down, sign bytes by 0xD9C8 / 0xFBEA) and
// stored as 32 bytes, once per workgroup (74 KiB of staging: the launch's
// dynamic shared memory). Per step a warp-uniform choice of the scaling:
// each lane tests the scale words of two of the warp's 64 A rows and one
// of its 32 columns byte-wise against the fused window 54..185 (low 7 bits
// 0x7F7F7F7F plus 74 and plus 70 per byte), vote.sync.all picks the loop. Each loop runs over the step's 4
// blocks carrying the 16 accumulators on the staged E4M3 words as they are
// (no widening left in it), one m16n8k32 per instruction tile with C = 0;
// the fused loop adds fma(P, 2^ea * 2^eb, T), each factor the block's code
// moved to byte 3 by one prmt (selector (block << 12) | 0x444, zero bytes
// from 0) and shifted down by 1 into f32's exponent, the exact one
// ((P * 2^min(ea,117)) * 2^eb) * 2^max(ea-117,0) with an addf. The next
// step's chunks are widened as they are staged, after the MMAs.
// CHECK-LABEL: func.func @mxfp4
// CHECK:       gpu.launch blocks({{.*}}) in ({{.*}} = %c1{{.*}}, {{.*}} = %c2{{.*}}, {{.*}} = %c1{{.*}}) threads({{.*}}) in ({{.*}} = %c256{{.*}}) dynamic_shared_memory_size %c75776_i32 {
// CHECK-NEXT:    %[[SMEM:.*]] = gpu.dynamic_shared_memory : memref<?xi8, #gpu.address_space<workgroup>>
// CHECK:         vector.bitcast %{{.*}} : vector<16xi8> to vector<4xi32>
// CHECK-DAG:     %[[LO:.*]] = arith.constant 1010315264 : i32
// CHECK-DAG:     %[[HI:.*]] = arith.constant 1279804480 : i32
// CHECK-DAG:     %[[M7:.*]] = arith.constant 2004318071 : i32
// CHECK:         %[[SEL:.*]] = arith.andi %{{.*}}, %[[M7]] : i32
// CHECK:         nvvm.prmt <default> %[[SEL]], %[[LO]], %[[HI]] : i32
// CHECK:         nvvm.prmt <default> %c55752_i32{{.*}}, %{{.*}}, %{{.*}} : i32
// CHECK:         %[[SEL_HI:.*]] = arith.shrui %[[SEL]], %c16_i32{{.*}} : i32
// CHECK:         nvvm.prmt <default> %[[SEL_HI]], %[[LO]], %[[HI]] : i32
// CHECK:         nvvm.prmt <default> %c64490_i32{{.*}}, %{{.*}}, %{{.*}} : i32
// CHECK:         %[[STAGED:.*]] = vector.bitcast %{{.*}} : vector<8xi32> to vector<32xi8>
// CHECK:         vector.store %[[STAGED]], %[[SMEM]][%{{.*}}] {alignment = 16 : i64} : memref<?xi8, #gpu.address_space<workgroup>>, vector<32xi8>
// CHECK:         gpu.barrier
// The K loop runs two steps per iteration (buffer 0, then buffer 1).
// CHECK:         scf.for %{{.*}} = %c0{{.*}} to %c2{{.*}} step %c2{{.*}} iter_args({{.*}}) -> (vector<4xf32>
// CHECK-COUNT-3:   arith.constant 1246382666 : i32
// CHECK-NOT:       arith.constant 1246382666 : i32
// CHECK:           arith.constant 1179010630 : i32
// CHECK:           %[[FUSED:.*]] = nvvm.vote.sync  all %{{.*}}, %{{.*}} -> i1
// CHECK:           scf.if %[[FUSED]] -> (vector<4xf32>
// CHECK:             scf.for %{{.*}} = %c0{{.*}} to %c4{{.*}} step %c1{{.*}} iter_args({{.*}}) -> (vector<4xf32>
// CHECK-NOT:           arith.minui
// CHECK:               %[[TOP:.*]] = arith.ori %{{.*}}, %c1092_i32
// CHECK:               %[[BYTE:.*]] = nvvm.prmt <default> %[[TOP]], %{{.*}}, %c0_i32{{.*}} : i32
// CHECK:               arith.shrui %[[BYTE]], %c1_i32
// CHECK-NOT:           nvvm.prmt <default> %{{.*}}, %c1010315264_i32
// CHECK-NOT:           arith.minui
// CHECK-COUNT-16:      llvm.call_intrinsic "llvm.nvvm.mma.m16n8k32.row.col.f32.e4m3.e4m3.f32"(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[Z:.*]], %[[Z]], %[[Z]], %[[Z]]) : (i32, i32, i32, i32, i32, i32, f32, f32, f32, f32) -> !llvm.struct<(f32, f32, f32, f32)>
// CHECK:               %[[S:.*]] = arith.mulf
// CHECK:               llvm.intr.fma(%{{.*}}, %[[S]], %{{.*}}) : (f32, f32, f32) -> f32
// CHECK:               scf.yield {{.*}} : vector<4xf32>, vector<4xf32>
// CHECK:           } else {
// CHECK:             scf.for %{{.*}} = %c0{{.*}} to %c4{{.*}} step %c1{{.*}} iter_args({{.*}}) -> (vector<4xf32>
// CHECK-NOT:           nvvm.prmt <default> %{{.*}}, %c1010315264_i32
// CHECK:               arith.minui %{{.*}}, %c244_i32
// CHECK-COUNT-16:      llvm.call_intrinsic "llvm.nvvm.mma.m16n8k32.row.col.f32.e4m3.e4m3.f32"
// CHECK-NOT:           llvm.intr.fma
// CHECK:               arith.addf
// CHECK:               scf.yield {{.*}} : vector<4xf32>, vector<4xf32>
// CHECK:           nvvm.prmt <default> %{{.*}}, %{{.*}}, %{{.*}} : i32
// CHECK:           vector.store %{{.*}}, %[[SMEM]][%{{.*}}] {alignment = 16 : i64} : memref<?xi8, #gpu.address_space<workgroup>>, vector<32xi8>
// CHECK:           gpu.barrier
// CHECK:         arith.addf
// CHECK:         memref.store
func.func @mxfp4(%a: !a, %b: !b, %acc: tensor<256x128xf32>) -> tensor<256x128xf32> {
  %c = fp4train.scaled_matmul %a, %b, %acc : !a, !b, tensor<256x128xf32>
  return %c : tensor<256x128xf32>
}

// -----

!a = !fp4train.scaled<128x256xf4E2M1FN, block = [1, 16], scale = f8E4M3FN, global>
!b = !fp4train.scaled<128x256xf4E2M1FN, block = [16, 16], scale = f8E4M3FN, global>

// NVFP4: E2M1 staged as E4M3 as above (76 KiB with the 16x16-blocked
// weight's scales), then the 8 blocks of 16 of a step as two loops over
// 4 blocks, each after loading the scale word (4 UE4M3 codes) of its half
// of every row; one m16n8k16 per tile and block on the lanes' words of 4
// staged codes; the UE4M3 scales of two rows (columns) are gathered by one
// prmt (selector (block % 4) * 0x11 + 0x40) and decoded by
// cvt.rn.f16x2.e4m3x2, the terms added as fma(P, sa * sb, T); the
// epilogue applies the global scales.
// CHECK-LABEL: func.func @nvfp4
// CHECK:         gpu.launch {{.*}} dynamic_shared_memory_size %c77824_i32 {
// CHECK:           vector.store %{{.*}} {alignment = 16 : i64} : memref<?xi8, #gpu.address_space<workgroup>>, vector<32xi8>
// CHECK:         scf.for %{{.*}} = %c0{{.*}} to %c2{{.*}} step %c1{{.*}} iter_args
// CHECK-NOT:       nvvm.vote.sync
// CHECK-COUNT-16:  vector.load %{{.*}} {alignment = 4 : i64} : memref<?xi8, #gpu.address_space<workgroup>>, vector<4xi8>
// CHECK:           scf.for %{{.*}} = %c0{{.*}} to %c4{{.*}} step %c1{{.*}} iter_args
// CHECK:           arith.muli %{{.*}}, %c17_i32
// CHECK:           %[[PAIRSEL:.*]] = arith.addi %{{.*}}, %c64_i32
// CHECK:           vector.load %{{.*}} {alignment = 4 : i64} : memref<?xi8, #gpu.address_space<workgroup>>, vector<4xi8>
// CHECK:           %[[PAIR:.*]] = nvvm.prmt <default> %[[PAIRSEL]], %{{.*}}, %{{.*}} : i32
// CHECK:           %[[CODES:.*]] = arith.trunci %[[PAIR]] : i32 to i16
// CHECK:           nvvm.convert.f8x2.to.f16x2 %{{.*}} : vector<2xi8>(f8E4M3FN) -> vector<2xf16>
// CHECK:           arith.extf %{{.*}} : vector<2xf16> to vector<2xf32>
// CHECK-COUNT-16:  llvm.call_intrinsic "llvm.nvvm.mma.m16n8k16.row.col.f32.e4m3.e4m3.f32"(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) : (i32, i32, i32, f32, f32, f32, f32)
// CHECK:           %[[SCALE:.*]] = arith.mulf
// CHECK:           llvm.intr.fma(%{{.*}}, %[[SCALE]], %{{.*}}) : (f32, f32, f32) -> f32
func.func @nvfp4(%a: !a, %b: !b, %acc: tensor<128x128xf32>) -> tensor<128x128xf32> {
  %c = fp4train.scaled_matmul %a, %b, %acc : !a, !b, tensor<128x128xf32>
  return %c : tensor<128x128xf32>
}

// -----

!a = !fp4train.scaled<128x128xf8E4M3FN, block = [1, 32], scale = f8E8M0FNU>
!b = !fp4train.scaled<128x128xf8E5M2, block = [1, 32], scale = f8E8M0FNU>
!c = !fp4train.scaled<128x128xf4E2M1FN, block = [1, 32], scale = f8E8M0FNU>

// MXFP8 E4M3 x E5M2: the codes as staged, no widening; the split exponent
// T is 127 - floor(log2(32 * 448 * 57344)) = 98, the fused window 65..175
// (2^(-149+9+16) <= s <= 2^97: per byte plus 63 and plus 80).
// Staging FP8 tiles takes 74 KiB, past CUDA's 48 KiB of static shared
// memory: the buffer is the launch's dynamic shared memory.
// CHECK-LABEL: func.func @mxfp8
// CHECK:         gpu.launch {{.*}} dynamic_shared_memory_size %c75776_i32 {
// CHECK-NEXT:      gpu.dynamic_shared_memory : memref<?xi8, #gpu.address_space<workgroup>>
// CHECK-NOT:       nvvm.prmt
// CHECK-DAG:       arith.constant 1061109567 : i32
// CHECK-DAG:       arith.constant 1347440720 : i32
// CHECK:           nvvm.vote.sync  all
// CHECK:           arith.minui %{{.*}}, %c225_i32
// CHECK-COUNT-16:  llvm.call_intrinsic "llvm.nvvm.mma.m16n8k32.row.col.f32.e4m3.e5m2.f32"
func.func @mxfp8(%a: !a, %b: !b, %acc: tensor<128x128xf32>) -> tensor<128x128xf32> {
  %c = fp4train.scaled_matmul %a, %b, %acc : !a, !b, tensor<128x128xf32>
  return %c : tensor<128x128xf32>
}

// MXFP4 x MXFP8: the E2M1 side widened as it is staged, the E4M3 side
// stored as it is (74 KiB of staging, dynamic); both in natural K order.
// CHECK-LABEL: func.func @mixed
// CHECK:         gpu.launch {{.*}} dynamic_shared_memory_size %c75776_i32 {
// CHECK:           nvvm.prmt
// CHECK:           vector.store %{{.*}} : memref<?xi8, #gpu.address_space<workgroup>>, vector<32xi8>
// CHECK:           vector.store %{{.*}} : memref<?xi8, #gpu.address_space<workgroup>>, vector<16xi8>
// CHECK:           llvm.call_intrinsic "llvm.nvvm.mma.m16n8k32.row.col.f32.e4m3.e4m3.f32"
func.func @mixed(%a: !c, %b: !a, %acc: tensor<128x128xf32>) -> tensor<128x128xf32> {
  %c = fp4train.scaled_matmul %a, %b, %acc : !c, !a, tensor<128x128xf32>
  return %c : tensor<128x128xf32>
}

// -----

// Quantize on sm_90a: E2M1 in software (no cvt ... e2m1x2 before sm_100),
// E4M3 with cvt.rn.satfinite.e4m3x2.f32.
// CHECK-LABEL: func.func @quantize_mxfp4
// CHECK:         gpu.launch
// CHECK-NOT:     nvvm.convert.f32x2.to.f4x2
// CHECK:         gpu.terminator
func.func @quantize_mxfp4(%x: tensor<16x128xf32>)
    -> !fp4train.scaled<16x128xf4E2M1FN, block = [1, 32], scale = f8E8M0FNU> {
  %q = fp4train.quantize %x : tensor<16x128xf32>
      -> !fp4train.scaled<16x128xf4E2M1FN, block = [1, 32], scale = f8E8M0FNU>
  return %q : !fp4train.scaled<16x128xf4E2M1FN, block = [1, 32], scale = f8E8M0FNU>
}

// CHECK-LABEL: func.func @quantize_mxfp8
// CHECK-COUNT-16: nvvm.convert.f32x2.to.f8x2 %{{.*}}, %{{.*}} {rnd = #nvvm.fp_rnd_mode<rn>, sat = #nvvm.sat_mode<satfinite>} : i16(f8E4M3FN)
func.func @quantize_mxfp8(%x: tensor<4x64xf32>)
    -> !fp4train.scaled<4x64xf8E4M3FN, block = [1, 32], scale = f8E8M0FNU> {
  %q = fp4train.quantize %x : tensor<4x64xf32>
      -> !fp4train.scaled<4x64xf8E4M3FN, block = [1, 32], scale = f8E8M0FNU>
  return %q : !fp4train.scaled<4x64xf8E4M3FN, block = [1, 32], scale = f8E8M0FNU>
}
