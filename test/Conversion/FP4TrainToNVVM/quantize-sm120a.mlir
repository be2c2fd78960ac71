// RUN: fp4-opt %s --fp4train-to-nvvm="chip=sm_120a" --split-input-file | FileCheck %s
// The tcgen05 chips run the same quantize kernels (their FP4/FP8 converts
// are the same; [SR1] stays in software, see docs/nvvm.md).
// RUN: fp4-opt %s --fp4train-to-nvvm="chip=sm_100a" --split-input-file | FileCheck %s
// RUN: fp4-opt %s --fp4train-to-nvvm="chip=sm_103a" --split-input-file | FileCheck %s

// MXFP4 RNE along the last dimension: one lane per 32-element block, 16
// pairs converted by cvt.rn.satfinite.e2m1x2.f32 (a in the high nibble, so
// the odd element goes first), the codes of a NaN/Inf block replaced by 0.
// CHECK-LABEL: func.func @mxfp4
// CHECK:       gpu.launch blocks(%{{.*}}, %{{.*}}, %{{.*}}) in (%{{.*}} = %c1{{.*}}, %{{.*}} = %c1{{.*}}, %{{.*}} = %c1{{.*}}) threads(%[[TID:.*]], %{{.*}}, %{{.*}}) in (%{{.*}} = %c256
// CHECK:         scf.if
// CHECK:           vector.load %{{.*}} {alignment = 16 : i64} : memref<2048xf32>, vector<4xf32>
// CHECK:           arith.maxui %{{.*}} : vector<4xi32>
// CHECK:           %[[X1:.*]] = vector.extract %{{.*}}[1] : f32 from vector<4xf32>
// CHECK:           nvvm.convert.f32x2.to.f4x2 %[[X1]], %{{.*}} : i8(f4E2M1FN)
// CHECK-COUNT-15:  nvvm.convert.f32x2.to.f4x2
// The e2m1x2 bytes are the [PK1] pairs as they come.
// CHECK:           arith.select %{{.*}}, %{{.*}}, %{{.*}} : vector<8xi8>
// CHECK:           vector.store %{{.*}} {alignment = 16 : i64} : memref<1024xi8>, vector<16xi8>
// CHECK:           memref.store %{{.*}} : memref<64xi8>
func.func @mxfp4(%x: tensor<16x128xf32>)
    -> !fp4train.scaled<16x128xf4E2M1FN, block = [1, 32], scale = f8E8M0FNU> {
  %q = fp4train.quantize %x : tensor<16x128xf32>
      -> !fp4train.scaled<16x128xf4E2M1FN, block = [1, 32], scale = f8E8M0FNU>
  return %q : !fp4train.scaled<16x128xf4E2M1FN, block = [1, 32], scale = f8E8M0FNU>
}

// -----

// MXFP8 E4M3 from bf16: cvt.rn.satfinite.e4m3x2.f32 after an exact extf.
// CHECK-LABEL: func.func @mxfp8
// CHECK:         arith.extf %{{.*}} : vector<8xbf16> to vector<8xf32>
// CHECK-COUNT-16: nvvm.convert.f32x2.to.f8x2 %{{.*}}, %{{.*}} {rnd = #nvvm.fp_rnd_mode<rn>, sat = #nvvm.sat_mode<satfinite>} : i16(f8E4M3FN)
func.func @mxfp8(%x: tensor<4x64xbf16>)
    -> !fp4train.scaled<4x64xf8E4M3FN, block = [1, 32], scale = f8E8M0FNU> {
  %q = fp4train.quantize %x : tensor<4x64xbf16>
      -> !fp4train.scaled<4x64xf8E4M3FN, block = [1, 32], scale = f8E8M0FNU>
  return %q : !fp4train.scaled<4x64xf8E4M3FN, block = [1, 32], scale = f8E8M0FNU>
}

// -----

// NVFP4 with the tensor amax computed: a reduction kernel (one word per
// workgroup through a shared-memory tree), the host max of those words and
// the [NV1] global scales, then the quantize kernel with S_enc / S_dec as
// values from the host; the decode scale is the third result.
// CHECK-LABEL: func.func @nvfp4
// CHECK:       %[[PARTIAL:.*]] = memref.alloc() {alignment = 64 : i64} : memref<2xi32>
// CHECK:       gpu.launch {{.*}} workgroup(%[[SMEM:.*]] : memref<256xi32, #gpu.address_space<workgroup>>)
// CHECK:         memref.store %{{.*}}, %[[SMEM]]
// CHECK-COUNT-9: gpu.barrier
// CHECK:         memref.store %{{.*}}, %[[PARTIAL]]
// CHECK:       linalg.generic {{.*}} iterator_types = ["reduction"]
// CHECK:         arith.maxui
// CHECK:       %[[AMAX:.*]] = arith.bitcast %{{.*}} : i32 to f32
// CHECK:       arith.divf %{{.*}}, %[[AMAX]] : f32
// CHECK:       gpu.launch
// CHECK-COUNT-8: nvvm.convert.f32x2.to.f4x2
// CHECK-NOT:   nvvm.convert
// CHECK:       return %{{.*}}, %{{.*}}, %{{.*}} : tensor<32x128xi8>, tensor<32x16xi8>, f32
func.func @nvfp4(%x: tensor<32x256xf32>)
    -> !fp4train.scaled<32x256xf4E2M1FN, block = [1, 16], scale = f8E4M3FN, global> {
  %q = fp4train.quantize %x : tensor<32x256xf32>
      -> !fp4train.scaled<32x256xf4E2M1FN, block = [1, 16], scale = f8E4M3FN, global>
  return %q : !fp4train.scaled<32x256xf4E2M1FN, block = [1, 16], scale = f8E4M3FN, global>
}

// -----

// Stochastic rounding: sm_120a has no stochastic FP4 conversion, so [SR1]
// runs in software: one Philox4x32-10 per four elements, keyed by the seed,
// and no hardware convert. Each of a round's two 32-bit widening multiplies
// is mul.lo.u32 (arith.muli) + mul.hi.u32 (llvm.nvvm.mulhi.ui), not the i64
// multiply arith-to-llvm would make of arith.mului_extended.
// CHECK-LABEL: func.func @sr
// CHECK:       gpu.launch
// CHECK-NOT:     arith.mului_extended
// CHECK-COUNT-20: llvm.call_intrinsic "llvm.nvvm.mulhi.ui"(%{{.*}}, %{{.*}}) : (i32, i32) -> i32
// CHECK-NOT:     nvvm.convert
// CHECK-NOT:     arith.mului_extended
// CHECK:         vector.store
func.func @sr(%x: tensor<8x64xf32>, %seed: i64)
    -> !fp4train.scaled<8x64xf4E2M1FN, block = [1, 32], scale = f8E8M0FNU> {
  %q = fp4train.quantize %x rounding = stochastic seed(%seed) : tensor<8x64xf32>
      -> !fp4train.scaled<8x64xf4E2M1FN, block = [1, 32], scale = f8E8M0FNU>
  return %q : !fp4train.scaled<8x64xf4E2M1FN, block = [1, 32], scale = f8E8M0FNU>
}

// -----

// 16x16 (weight) blocks: the amax reduction kernel, then one workgroup of
// 16 x 16 lanes per band of 16 rows and 16 column blocks (here 1 x 2): lane
// (r, c) takes row r of column block c, the block amax is the max of the 16
// row words in shared memory after one barrier, and the row-0 lane writes
// the scale code.
// CHECK-LABEL: func.func @weights_2d
// CHECK:       gpu.launch
// CHECK:       gpu.launch blocks(%{{.*}}, %{{.*}}, %{{.*}}) in (%{{.*}} = %c1{{.*}}, %{{.*}} = %c2{{.*}}, %{{.*}} = %c1{{.*}}) threads(%[[TID:.*]], %{{.*}}, %{{.*}}) in (%{{.*}} = %c256{{.*}}) workgroup(%[[SMEM:.*]] : memref<256xi32, #gpu.address_space<workgroup>>)
// CHECK:         %[[R:.*]] = arith.divui %[[TID]], %c16
// CHECK:         memref.store %{{.*}}, %[[SMEM]][%[[TID]]]
// CHECK:         gpu.barrier
// CHECK-COUNT-16: memref.load %[[SMEM]]
// CHECK:         %[[FIRST:.*]] = arith.cmpi eq, %[[R]], %c0
// CHECK-COUNT-8: nvvm.convert.f32x2.to.f4x2
// CHECK:         scf.if %[[FIRST]]
// CHECK:           memref.store %{{.*}} : memref<4xi8>
func.func @weights_2d(%w: tensor<32x32xf32>)
    -> !fp4train.scaled<32x32xf4E2M1FN, block = [16, 16], scale = f8E4M3FN, global> {
  %q = fp4train.quantize %w : tensor<32x32xf32>
      -> !fp4train.scaled<32x32xf4E2M1FN, block = [16, 16], scale = f8E4M3FN, global>
  return %q : !fp4train.scaled<32x32xf4E2M1FN, block = [16, 16], scale = f8E4M3FN, global>
}

// -----

// Only the kernels the pass makes are rewritten: a gpu.launch already in
// the input keeps its multiplies.
// CHECK-LABEL: func.func @user_launch
// CHECK:         gpu.launch
// CHECK:           arith.mului_extended %{{.*}}, %{{.*}} : i32
// CHECK-NOT:       llvm.nvvm.mulhi.ui
func.func @user_launch(%a: i32, %out: memref<1xi32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    %lo, %hi = arith.mului_extended %a, %a : i32
    memref.store %hi, %out[%c0] : memref<1xi32>
    gpu.terminator
  }
  return
}
