// RUN: fp4-opt %s --fp4train-to-amdgpu --split-input-file | FileCheck %s

// MXFP4, RNE, floor scales, blocks of 32 along the last dimension: a kernel
// with one lane per block. 64x128 is 256 blocks, one workgroup of 256 lanes
// and no bounds check. The codes and scales keep the host lowering's layout
// ([PK1]: codes two per byte).
// CHECK-LABEL: func.func @mxfp4
// CHECK-SAME:    (%[[X:.*]]: tensor<64x128xf32>) -> (tensor<64x64xi8>, tensor<64x4xi8>)
// CHECK:         %[[FLAT:.*]] = tensor.collapse_shape %[[X]] {{\[}}[0, 1]] : tensor<64x128xf32> into tensor<8192xf32>
// CHECK:         %[[IN:.*]] = bufferization.to_buffer %[[FLAT]] read_only : tensor<8192xf32> to memref<8192xf32>
// CHECK:         %[[CODES:.*]] = memref.alloc() {alignment = 64 : i64} : memref<4096xi8>
// CHECK:         %[[SCALES:.*]] = memref.alloc() {alignment = 64 : i64} : memref<256xi8>
// CHECK:         gpu.launch blocks(%[[BX:.*]], %{{.*}}, %{{.*}}) in (%{{.*}} = %c1{{.*}}, %{{.*}} = %c1{{.*}}, %{{.*}} = %c1{{.*}}) threads(%[[TX:.*]], %{{.*}}, %{{.*}}) in (%{{.*}} = %c256{{.*}}, %{{.*}} = %c1{{.*}}, %{{.*}} = %c1{{.*}})
// CHECK-NOT:       scf.if
// 32 elements per lane, as 16-byte loads.
// CHECK-COUNT-8:   vector.load %[[IN]][%{{.*}}] {alignment = 16 : i64} : memref<8192xf32>, vector<4xf32>
// Block amax on the magnitude bits, then the host's [MX1] scale code.
// CHECK:           arith.andi %{{.*}}, %{{.*}} : vector<4xi32>
// CHECK:           arith.maxui %{{.*}}, %{{.*}} : vector<4xi32>
// CHECK:           vector.extract %{{.*}}[3] : i32 from vector<4xi32>
// CHECK:           %[[AMAX:.*]] = arith.maxui %{{.*}}, %{{.*}} : i32
// CHECK:           arith.subi %{{.*}}, %c2_i32 : i32
// CHECK:           %[[CODE:.*]] = arith.trunci %{{.*}} : i32 to i8
// The instruction's scale: an f32 whose exponent field is the code.
// CHECK:           %[[CODE32:.*]] = arith.extui %[[CODE]] : i8 to i32
// CHECK:           %[[SBITS:.*]] = arith.shli %[[CODE32]], %c23_i32
// CHECK:           %[[SCALE:.*]] = arith.bitcast %[[SBITS]] : i32 to f32
// Floor scales: clamp to +-6 * 2^(code - 127) (0x01400000 = bits(6) - 127 << 23).
// CHECK:           arith.addi %{{.*}}, %c20971520_i32 : i32
// CHECK:           arith.minnumf %{{.*}} fastmath<nnan> : vector<4xf32>
// CHECK:           arith.maxnumf %{{.*}} fastmath<nnan> : vector<4xf32>
// Four pairs per 32-bit word of packed E2M1: already the [PK1] bytes.
// CHECK:           %[[P0:.*]] = amdgpu.packed_scaled_trunc %{{.*}} into undef[0], %[[SCALE]] : vector<2xf32> to vector<8xf4E2M1FN>
// CHECK:           %[[P1:.*]] = amdgpu.packed_scaled_trunc %{{.*}} into %[[P0]][1], %[[SCALE]]
// CHECK:           %[[P2:.*]] = amdgpu.packed_scaled_trunc %{{.*}} into %[[P1]][2], %[[SCALE]]
// CHECK:           %[[P3:.*]] = amdgpu.packed_scaled_trunc %{{.*}} into %[[P2]][3], %[[SCALE]]
// CHECK:           %[[W:.*]] = vector.bitcast %[[P3]] : vector<8xf4E2M1FN> to vector<4xi8>
// CHECK:           vector.shuffle %[[W]], %[[W]] [0, 1] : vector<4xi8>, vector<4xi8>
// CHECK:           vector.shuffle %[[W]], %[[W]] [2, 3] : vector<4xi8>, vector<4xi8>
// CHECK-COUNT-12:  amdgpu.packed_scaled_trunc
// [MX3] a NaN/Inf block's codes are 0 (zero bytes); the block's 16 [PK1]
// bytes are one store at byte base / 2; then the scale.
// CHECK:           %[[NONFINITE:.*]] = arith.cmpi eq, %[[CODE]], %c-1_i8 : i8
// CHECK:           arith.select %[[NONFINITE]], %{{.*}}, %{{.*}} : vector<8xi8>
// CHECK:           %[[HALF:.*]] = arith.select %[[NONFINITE]], %{{.*}}, %{{.*}} : vector<8xi8>
// CHECK:           %[[BLOCK:.*]] = vector.shuffle %{{.*}}, %[[HALF]] [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15] : vector<8xi8>, vector<8xi8>
// CHECK:           %[[BYTE:.*]] = arith.divui %{{.*}}, %c2
// CHECK:           vector.store %[[BLOCK]], %[[CODES]][%[[BYTE]]] {alignment = 16 : i64} : memref<4096xi8>, vector<16xi8>
// CHECK-NOT:       vector.store
// CHECK:           memref.store %[[CODE]], %[[SCALES]][%{{.*}}] : memref<256xi8>
// CHECK:           gpu.terminator
// CHECK:         %[[TC:.*]] = bufferization.to_tensor %[[CODES]] restrict writable : memref<4096xi8> to tensor<4096xi8>
// CHECK:         %[[C2:.*]] = tensor.expand_shape %[[TC]] {{\[}}[0, 1]] output_shape [64, 64] : tensor<4096xi8> into tensor<64x64xi8>
// CHECK:         %[[TS:.*]] = bufferization.to_tensor %[[SCALES]] restrict writable : memref<256xi8> to tensor<256xi8>
// CHECK:         %[[S2:.*]] = tensor.expand_shape %[[TS]] {{\[}}[0, 1]] output_shape [64, 4] : tensor<256xi8> into tensor<64x4xi8>
// CHECK:         return %[[C2]], %[[S2]]
func.func @mxfp4(%x: tensor<64x128xf32>)
    -> !fp4train.scaled<64x128xf4E2M1FN, block = [1, 32], scale = f8E8M0FNU> {
  %q = fp4train.quantize %x : tensor<64x128xf32>
      -> !fp4train.scaled<64x128xf4E2M1FN, block = [1, 32], scale = f8E8M0FNU>
  return %q : !fp4train.scaled<64x128xf4E2M1FN, block = [1, 32], scale = f8E8M0FNU>
}

// -----

// MXFP8 from bf16 with rceil scales: 240 blocks need a bounds check, bf16
// loads are extended to f32 (exact), rceil needs no clamp (the scaled block
// never exceeds 448), two pairs per word of E4M3.
// CHECK-LABEL: func.func @mxfp8_rceil
// CHECK:         tensor.collapse_shape %{{.*}} {{\[}}[0, 1, 2]] : tensor<3x40x64xbf16> into tensor<7680xbf16>
// CHECK:         gpu.launch
// CHECK:           %[[IN:.*]] = arith.cmpi ult, %{{.*}}, %c240
// CHECK:           scf.if %[[IN]] {
// CHECK-COUNT-4:     vector.load %{{.*}} {alignment = 16 : i64} : memref<7680xbf16>, vector<8xbf16>
// CHECK:             arith.extf %{{.*}} : vector<8xbf16> to vector<8xf32>
// CHECK-NOT:         arith.minnumf
// CHECK:             %[[P0:.*]] = amdgpu.packed_scaled_trunc %{{.*}} into undef[0], %{{.*}} : vector<2xf32> to vector<4xf8E4M3FN>
// CHECK:             %[[P1:.*]] = amdgpu.packed_scaled_trunc %{{.*}} into %[[P0]][1], %{{.*}} : vector<2xf32> to vector<4xf8E4M3FN> into vector<4xf8E4M3FN>
// CHECK:             vector.bitcast %[[P1]] : vector<4xf8E4M3FN> to vector<4xi8>
// CHECK-COUNT-14:    amdgpu.packed_scaled_trunc
// CHECK:             vector.store %{{.*}} : memref<7680xi8>, vector<16xi8>
// CHECK:             vector.store %{{.*}} : memref<7680xi8>, vector<16xi8>
// CHECK:             memref.store %{{.*}} : memref<240xi8>
// CHECK:         tensor.expand_shape %{{.*}} {{\[}}[0, 1, 2]] output_shape [3, 40, 64] : tensor<7680xi8> into tensor<3x40x64xi8>
// CHECK:         tensor.expand_shape %{{.*}} {{\[}}[0, 1, 2]] output_shape [3, 40, 2] : tensor<240xi8> into tensor<3x40x2xi8>
func.func @mxfp8_rceil(%x: tensor<3x40x64xbf16>)
    -> !fp4train.scaled<3x40x64xf8E4M3FN, block = [1, 1, 32], scale = f8E8M0FNU> {
  %q = fp4train.quantize %x scale_mode = rceil : tensor<3x40x64xbf16>
      -> !fp4train.scaled<3x40x64xf8E4M3FN, block = [1, 1, 32], scale = f8E8M0FNU>
  return %q : !fp4train.scaled<3x40x64xf8E4M3FN, block = [1, 1, 32], scale = f8E8M0FNU>
}

// -----

// E5M2, floor: clamped to +-57344 * 2^(code - 127) (0x07E00000), 1-D input.
// CHECK-LABEL: func.func @mxfp8_e5m2
// CHECK-NOT:     tensor.collapse_shape
// CHECK:         gpu.launch
// CHECK:           arith.addi %{{.*}}, %c132120576_i32 : i32
// CHECK:           arith.minnumf
// CHECK:           amdgpu.packed_scaled_trunc %{{.*}} into undef[0], %{{.*}} : vector<2xf32> to vector<4xf8E5M2>
func.func @mxfp8_e5m2(%x: tensor<64xf32>)
    -> !fp4train.scaled<64xf8E5M2, block = [32], scale = f8E8M0FNU> {
  %q = fp4train.quantize %x : tensor<64xf32>
      -> !fp4train.scaled<64xf8E5M2, block = [32], scale = f8E8M0FNU>
  return %q : !fp4train.scaled<64xf8E5M2, block = [32], scale = f8E8M0FNU>
}

// -----

// MXFP4 with [SR1] stochastic rounding, from bf16, rceil: the same kernel
// shape (one lane per block, 240 blocks need the bounds check, rceil needs no
// clamp), with the [SR1] words computed in the kernel: the seed's two words
// are the Philox key, one Philox4x32-10 call per 4 consecutive elements
// (counter = linear index / 4 = 8 * block + w, high word 0), and ONE element
// per rocdl.cvt.scalef32.sr.pk.fp4.f32 with its own word: element 4w + k is
// converted into byte k (`old` is 0 and unused) and keeps the low nibble for
// even k, the high nibble for odd k.
// CHECK-LABEL: func.func @mxfp4_sr
// CHECK-SAME:    (%[[X:.*]]: tensor<40x64xbf16>, %[[SEED:.*]]: i64) -> (tensor<40x32xi8>, tensor<40x2xi8>)
// CHECK:         gpu.launch
// CHECK:           %[[IN:.*]] = arith.cmpi ult, %[[BLOCK:.*]], %c80
// CHECK:           scf.if %[[IN]] {
// CHECK-COUNT-4:     vector.load %{{.*}} {alignment = 16 : i64} : memref<2560xbf16>, vector<8xbf16>
// CHECK:             %[[CODE:.*]] = arith.trunci %{{.*}} : i32 to i8
// CHECK:             %[[KEY0:.*]] = arith.trunci %[[SEED]] : i64 to i32
// CHECK:             %[[SEEDHI:.*]] = arith.shrui %[[SEED]], %c32_i64 : i64
// CHECK:             %[[KEY1:.*]] = arith.trunci %[[SEEDHI]] : i64 to i32
// CHECK:             %[[B32:.*]] = arith.index_castui %[[BLOCK]] : index to i32
// CHECK:             %[[CTR0:.*]] = arith.muli %[[B32]], %c8_i32 : i32
// CHECK:             arith.addi %[[CTR0]], %c0_i32{{.*}} : i32
// Ten Philox rounds: two 32x32->64 multiplies each.
// CHECK-COUNT-20:    arith.mului_extended
// CHECK:             %[[SBITS:.*]] = arith.shli %{{.*}}, %c23_i32
// CHECK:             %[[SCALE:.*]] = arith.bitcast %[[SBITS]] : i32 to f32
// CHECK-NOT:         arith.minnumf
// CHECK-NOT:         amdgpu.packed_scaled_trunc
// CHECK:             %[[PAIR01:.*]] = vector.shuffle %[[Q0:.*]], %[[Q0]] [0, 1] : vector<4xf32>, vector<4xf32>
// CHECK:             %[[R0:.*]] = rocdl.cvt.scalef32.sr.pk.fp4.f32 %[[PAIR01]], %{{.*}}, %[[SCALE]] -> %[[ZERO:.*]][0] : i32
// Element k's nibble (bit 8k, or 8k + 4 for odd k) moves to bit 4k of the
// quad's [PK1] half-word.
// CHECK:             arith.andi %[[R0]], %c15_i32
// CHECK:             %[[R1:.*]] = rocdl.cvt.scalef32.sr.pk.fp4.f32 %{{.*}}, %{{.*}}, %[[SCALE]] -> %[[ZERO]][1] : i32
// CHECK:             %[[H1:.*]] = arith.shrui %[[R1]], %c8_i32
// CHECK:             arith.andi %[[H1]], %c240_i32
// CHECK:             %[[PAIR23:.*]] = vector.shuffle %[[Q0]], %[[Q0]] [2, 3] : vector<4xf32>, vector<4xf32>
// CHECK:             %[[R2:.*]] = rocdl.cvt.scalef32.sr.pk.fp4.f32 %[[PAIR23]], %{{.*}}, %[[SCALE]] -> %[[ZERO]][2] : i32
// CHECK:             %[[H2:.*]] = arith.shrui %[[R2]], %c8_i32
// CHECK:             arith.andi %[[H2]], %c3840_i32
// CHECK:             %[[R3:.*]] = rocdl.cvt.scalef32.sr.pk.fp4.f32 %{{.*}}, %{{.*}}, %[[SCALE]] -> %[[ZERO]][3] : i32
// CHECK:             %[[H3:.*]] = arith.shrui %[[R3]], %c16_i32
// CHECK:             arith.andi %[[H3]], %c61440_i32
// CHECK:             arith.trunci %{{.*}} : i32 to i16
// The next 4 elements: counter 8 * block + 1.
// CHECK:             arith.addi %[[CTR0]], %c1_i32 : i32
// CHECK-COUNT-28:    rocdl.cvt.scalef32.sr.pk.fp4.f32
// CHECK-NOT:         rocdl.cvt.scalef32.sr.pk.fp4.f32
// CHECK:             arith.select %{{.*}}, %{{.*}}, %{{.*}} : vector<8xi8>
// CHECK:             vector.store %{{.*}} : memref<1280xi8>, vector<16xi8>
// CHECK-NOT:         vector.store
// CHECK:             memref.store %[[CODE]], %{{.*}} : memref<80xi8>
func.func @mxfp4_sr(%x: tensor<40x64xbf16>, %seed: i64)
    -> !fp4train.scaled<40x64xf4E2M1FN, block = [1, 32], scale = f8E8M0FNU> {
  %q = fp4train.quantize %x rounding = stochastic scale_mode = rceil seed(%seed)
      : tensor<40x64xbf16> -> !fp4train.scaled<40x64xf4E2M1FN, block = [1, 32], scale = f8E8M0FNU>
  return %q : !fp4train.scaled<40x64xf4E2M1FN, block = [1, 32], scale = f8E8M0FNU>
}

// -----

// Floor scales keep the [MX1] clamp before the SR conversions.
// CHECK-LABEL: func.func @mxfp4_sr_floor
// CHECK:         gpu.launch
// CHECK-NOT:       scf.if
// CHECK:           arith.minnumf
// CHECK:           arith.maxnumf
// CHECK:           rocdl.cvt.scalef32.sr.pk.fp4.f32
func.func @mxfp4_sr_floor(%x: tensor<256x32xf32>, %seed: i64)
    -> !fp4train.scaled<256x32xf4E2M1FN, block = [1, 32], scale = f8E8M0FNU> {
  %q = fp4train.quantize %x rounding = stochastic seed(%seed)
      : tensor<256x32xf32> -> !fp4train.scaled<256x32xf4E2M1FN, block = [1, 32], scale = f8E8M0FNU>
  return %q : !fp4train.scaled<256x32xf4E2M1FN, block = [1, 32], scale = f8E8M0FNU>
}

// -----

// Past 2^34 elements a Philox counter (linear index / 4) needs its high word:
// the counters are computed in i64 and split. (2^31 blocks: the grid's
// 2^31 work-items still fit the launch's 32-bit x dimension.)
// CHECK-LABEL: func.func @mxfp4_sr_wide_counter
// CHECK:         gpu.launch
// CHECK:           %[[B:.*]] = arith.index_castui %{{.*}} : index to i64
// CHECK:           %[[C:.*]] = arith.muli %[[B]], %c8_i64 : i64
// CHECK:           %[[CTR:.*]] = arith.addi %[[C]], %c0_i64 : i64
// CHECK:           %[[LO:.*]] = arith.trunci %[[CTR]] : i64 to i32
// CHECK:           %[[HI64:.*]] = arith.shrui %[[CTR]], %c32_i64{{.*}} : i64
// CHECK:           %[[HI:.*]] = arith.trunci %[[HI64]] : i64 to i32
// CHECK:           arith.mului_extended %{{.*}}, %[[LO]] : i32
// CHECK:           arith.xori %{{.*}}, %[[HI]] : i32
func.func @mxfp4_sr_wide_counter(%x: tensor<2147483648x32xf32>, %seed: i64)
    -> !fp4train.scaled<2147483648x32xf4E2M1FN, block = [1, 32], scale = f8E8M0FNU> {
  %q = fp4train.quantize %x rounding = stochastic seed(%seed)
      : tensor<2147483648x32xf32> -> !fp4train.scaled<2147483648x32xf4E2M1FN, block = [1, 32], scale = f8E8M0FNU>
  return %q : !fp4train.scaled<2147483648x32xf4E2M1FN, block = [1, 32], scale = f8E8M0FNU>
}

// -----

// The rule (isQuantizeOnGPU): NVFP4 (RNE or SR), 2-D blocks and blocks
// along another dimension (SR included) stay on the host (fp4train-expand's
// linalg.generic patterns in the same conversion).
// CHECK-LABEL: func.func @host
// CHECK-NOT:     gpu.launch
// CHECK-NOT:     fp4train.
// CHECK:         return
func.func @host(%x: tensor<64x64xf32>, %seed: i64)
    -> (!fp4train.scaled<64x64xf4E2M1FN, block = [1, 16], scale = f8E4M3FN>,
        !fp4train.scaled<64x64xf4E2M1FN, block = [32, 1], scale = f8E8M0FNU>,
        !fp4train.scaled<64x64xf4E2M1FN, block = [1, 16], scale = f8E4M3FN>,
        !fp4train.scaled<64x64xf4E2M1FN, block = [16, 16], scale = f8E4M3FN>,
        !fp4train.scaled<64x64xf4E2M1FN, block = [32, 1], scale = f8E8M0FNU>) {
  %sr = fp4train.quantize %x rounding = stochastic seed(%seed) : tensor<64x64xf32>
      -> !fp4train.scaled<64x64xf4E2M1FN, block = [1, 16], scale = f8E4M3FN>
  %sr_cols = fp4train.quantize %x rounding = stochastic seed(%seed) : tensor<64x64xf32>
      -> !fp4train.scaled<64x64xf4E2M1FN, block = [32, 1], scale = f8E8M0FNU>
  %nv = fp4train.quantize %x : tensor<64x64xf32>
      -> !fp4train.scaled<64x64xf4E2M1FN, block = [1, 16], scale = f8E4M3FN>
  %nv2d = fp4train.quantize %x : tensor<64x64xf32>
      -> !fp4train.scaled<64x64xf4E2M1FN, block = [16, 16], scale = f8E4M3FN>
  %cols = fp4train.quantize %x : tensor<64x64xf32>
      -> !fp4train.scaled<64x64xf4E2M1FN, block = [32, 1], scale = f8E8M0FNU>
  return %sr, %sr_cols, %nv, %nv2d, %cols
      : !fp4train.scaled<64x64xf4E2M1FN, block = [1, 16], scale = f8E4M3FN>,
        !fp4train.scaled<64x64xf4E2M1FN, block = [32, 1], scale = f8E8M0FNU>,
        !fp4train.scaled<64x64xf4E2M1FN, block = [1, 16], scale = f8E4M3FN>,
        !fp4train.scaled<64x64xf4E2M1FN, block = [16, 16], scale = f8E4M3FN>,
        !fp4train.scaled<64x64xf4E2M1FN, block = [32, 1], scale = f8E8M0FNU>
}
