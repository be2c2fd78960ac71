// RUN: fp4-opt %s --fp4train-to-amdgpu --split-input-file | FileCheck %s
// RUN: fp4-opt %s --fp4train-to-amdgpu="mfma=32x32x64" --split-input-file | FileCheck %s --check-prefix=M32

// The bf16 epilogue: a scaled_matmul whose only use is an elementwise
// f32 -> bf16 RNE truncation writes bf16 itself, and the truncation is gone.
!a = !fp4train.scaled<256x512xf4E2M1FN, block = [1, 32], scale = f8E8M0FNU>
!b = !fp4train.scaled<128x512xf4E2M1FN, block = [1, 32], scale = f8E8M0FNU>

// arith.truncf on the tensor, as fp4train-quantize-matmuls emits it after
// the GEMM of a bf16 contraction. 16x16x128 (auto), 64x64 tiles.
// CHECK-LABEL: func.func @truncf
// CHECK-SAME:    -> tensor<256x128xbf16>
// CHECK:         %[[ACC:.*]] = bufferization.to_buffer %{{.*}} read_only : tensor<1x256x128xf32> to memref<1x256x128xf32>
// CHECK:         %[[OUT:.*]] = memref.alloc() {alignment = 64 : i64} : memref<1x256x128xbf16>
// CHECK:         gpu.launch
// CHECK-SAME:      workgroup(%[[LDS:.*]] : memref<{{[0-9]+}}xi8, #gpu.address_space<workgroup>>)
// B^T rows are fetched permuted: the thread whose chunk goes to LDS row p
// (in its wave's group of 32) loads tile-local row 2 (p % 16) + p / 16, so
// lane column c of N tile j reads column 2c + j. The LDS stores keep their
// layout.
// A's codes: one 16-byte load (32 stored E2M1 codes, [PK1]) per thread.
// CHECK:         vector.load %{{.*}} : memref<1x256x256xi8>, vector<16xi8>
// CHECK:         %[[P:.*]] = arith.divui %[[TID:.*]], %c4{{.*}} : index
// CHECK:         %[[PG:.*]] = arith.remui %[[P]], %c32{{.*}} : index
// CHECK:         %[[G:.*]] = arith.divui %[[P]], %c32{{.*}} : index
// CHECK:         %[[GS:.*]] = arith.muli %[[G]], %c32{{.*}} : index
// CHECK:         %[[J:.*]] = arith.divui %[[PG]], %c16{{.*}} : index
// CHECK:         %[[C:.*]] = arith.remui %[[PG]], %c16{{.*}} : index
// CHECK:         %[[C2:.*]] = arith.muli %[[C]], %c2{{.*}} : index
// CHECK:         %[[Q:.*]] = arith.addi %[[C2]], %[[J]] : index
// CHECK:         %[[QG:.*]] = arith.addi %[[GS]], %[[Q]] : index
// CHECK:         %[[ROW:.*]] = arith.addi %{{.*}}, %[[QG]] : index
// CHECK:         vector.load %{{.*}}[%{{.*}}, %[[ROW]], %{{.*}}] {alignment = 16 : i64} : memref<1x128x256xi8>, vector<16xi8>
// B scale rows alike (thread t loads the scales of B row perm(t - 64)).
// CHECK:         arith.subi %[[TID]], %c64{{.*}} : index
// CHECK:         arith.divui %{{.*}}, %c16{{.*}} : index
// CHECK:         vector.load %{{.*}} {alignment = 4 : i64} : memref<1x128x16xi8>, vector<4xi8>
// CHECK:         scf.for
// CHECK:           amdgpu.scaled_mfma 16x16x128
// CHECK:           scf.yield %{{.*}} : vector<4xf32>, vector<4xf32>, vector<4xf32>, vector<4xf32>
// The odd step out (K has 4 steps, the loop runs two) and the last step.
// CHECK:         amdgpu.scaled_mfma 16x16x128
// CHECK:         gpu.barrier
// CHECK:         amdgpu.scaled_mfma 16x16x128
// Epilogue: tiles 0 and 1 of a lane hold adjacent columns; per pair one
// 8-byte load of the f32 accumulator, a vector add, one truncf, one 32-bit
// store. Tile multiples: no guards.
// CHECK-NOT:     scf.if
// CHECK:         %[[T0:.*]] = vector.extract %{{.*}}[0] : f32 from vector<4xf32>
// CHECK:         %[[T1:.*]] = vector.extract %{{.*}}[0] : f32 from vector<4xf32>
// CHECK:         %[[OLD:.*]] = vector.load %[[ACC]][%{{.*}}, %{{.*}}, %{{.*}}] {alignment = 8 : i64} : memref<1x256x128xf32>, vector<2xf32>
// CHECK:         %[[T:.*]] = vector.from_elements %[[T0]], %[[T1]] : vector<2xf32>
// CHECK:         %[[SUM:.*]] = arith.addf %[[OLD]], %[[T]] : vector<2xf32>
// CHECK:         %[[BF:.*]] = arith.truncf %[[SUM]] : vector<2xf32> to vector<2xbf16>
// CHECK:         vector.store %[[BF]], %[[OUT]][%{{.*}}, %{{.*}}, %{{.*}}] {alignment = 4 : i64} : memref<1x256x128xbf16>, vector<2xbf16>
// CHECK-COUNT-7: vector.store %{{.*}}, %[[OUT]]
// CHECK-NOT:     vector.store %{{.*}}, %[[OUT]]
// CHECK:         gpu.terminator
// CHECK:         %[[R:.*]] = bufferization.to_tensor %[[OUT]] restrict writable : memref<1x256x128xbf16> to tensor<1x256x128xbf16>
// CHECK:         %[[C2:.*]] = tensor.collapse_shape %[[R]] {{\[}}[0, 1], [2]] : tensor<1x256x128xbf16> into tensor<256x128xbf16>
// CHECK-NOT:     arith.truncf
// CHECK:         return %[[C2]] : tensor<256x128xbf16>

// 32x32x64: 16 values per lane and two M tiles, 32 pair stores per lane.
// M32-LABEL: func.func @truncf
// M32:         memref.alloc() {alignment = 64 : i64} : memref<1x256x128xbf16>
// M32:         scf.for
// M32-COUNT-32:  arith.truncf %{{.*}} : vector<2xf32> to vector<2xbf16>
// M32-NOT:     arith.truncf
// M32:         return %{{.*}} : tensor<256x128xbf16>
func.func @truncf(%a: !a, %b: !b, %acc: tensor<256x128xf32>) -> tensor<256x128xbf16> {
  %c = fp4train.scaled_matmul %a, %b, %acc : !a, !b, tensor<256x128xf32>
  %t = arith.truncf %c : tensor<256x128xf32> to tensor<256x128xbf16>
  return %t : tensor<256x128xbf16>
}

// -----

// The linalg forms of the same truncation: linalg.generic with identity
// maps, linalg.map and linalg.copy to a bf16 init.
!a = !fp4train.scaled<256x512xf4E2M1FN, block = [1, 32], scale = f8E8M0FNU>
!b = !fp4train.scaled<128x512xf4E2M1FN, block = [1, 32], scale = f8E8M0FNU>
#id = affine_map<(d0, d1) -> (d0, d1)>

// CHECK-LABEL: func.func @generic
// CHECK:         memref.alloc() {alignment = 64 : i64} : memref<1x256x128xbf16>
// CHECK:         gpu.launch
// CHECK:           arith.truncf %{{.*}} : vector<2xf32> to vector<2xbf16>
// CHECK:         gpu.terminator
// CHECK-NOT:     linalg.
// CHECK:         return %{{.*}} : tensor<256x128xbf16>
func.func @generic(%a: !a, %b: !b, %acc: tensor<256x128xf32>) -> tensor<256x128xbf16> {
  %c = fp4train.scaled_matmul %a, %b, %acc : !a, !b, tensor<256x128xf32>
  %e = tensor.empty() : tensor<256x128xbf16>
  %t = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%c : tensor<256x128xf32>) outs(%e : tensor<256x128xbf16>) {
  ^bb0(%x: f32, %out: bf16):
    %y = arith.truncf %x : f32 to bf16
    linalg.yield %y : bf16
  } -> tensor<256x128xbf16>
  return %t : tensor<256x128xbf16>
}

// CHECK-LABEL: func.func @map
// CHECK:         memref.alloc() {alignment = 64 : i64} : memref<1x256x128xbf16>
// CHECK:         gpu.terminator
// CHECK-NOT:     linalg.
// CHECK:         return %{{.*}} : tensor<256x128xbf16>
func.func @map(%a: !a, %b: !b, %acc: tensor<256x128xf32>) -> tensor<256x128xbf16> {
  %c = fp4train.scaled_matmul %a, %b, %acc : !a, !b, tensor<256x128xf32>
  %e = tensor.empty() : tensor<256x128xbf16>
  %t = linalg.map ins(%c : tensor<256x128xf32>) outs(%e : tensor<256x128xbf16>)
    (%x: f32, %out: bf16) {
      %y = arith.truncf %x : f32 to bf16
      linalg.yield %y : bf16
    }
  return %t : tensor<256x128xbf16>
}

// CHECK-LABEL: func.func @copy
// CHECK:         memref.alloc() {alignment = 64 : i64} : memref<1x256x128xbf16>
// CHECK:         gpu.terminator
// CHECK-NOT:     linalg.
// CHECK:         return %{{.*}} : tensor<256x128xbf16>
func.func @copy(%a: !a, %b: !b, %acc: tensor<256x128xf32>) -> tensor<256x128xbf16> {
  %c = fp4train.scaled_matmul %a, %b, %acc : !a, !b, tensor<256x128xf32>
  %e = tensor.empty() : tensor<256x128xbf16>
  %t = linalg.copy ins(%c : tensor<256x128xf32>) outs(%e : tensor<256x128xbf16>) -> tensor<256x128xbf16>
  return %t : tensor<256x128xbf16>
}

// -----

// Not fused: the f32 result has another use, the truncation is to f16, it
// rounds toward zero, or it transposes. The kernel writes f32 and the
// truncation stays.
!a = !fp4train.scaled<256x512xf4E2M1FN, block = [1, 32], scale = f8E8M0FNU>
!b = !fp4train.scaled<128x512xf4E2M1FN, block = [1, 32], scale = f8E8M0FNU>

// CHECK-LABEL: func.func @two_uses
// CHECK:         memref.alloc() {alignment = 64 : i64} : memref<1x256x128xf32>
// CHECK:         gpu.launch
// CHECK-NOT:       bf16
// CHECK:         gpu.terminator
// CHECK:         %[[C:.*]] = tensor.collapse_shape
// CHECK:         %[[T:.*]] = arith.truncf %[[C]] : tensor<256x128xf32> to tensor<256x128xbf16>
// CHECK:         return %[[T]], %[[C]]
func.func @two_uses(%a: !a, %b: !b, %acc: tensor<256x128xf32>)
    -> (tensor<256x128xbf16>, tensor<256x128xf32>) {
  %c = fp4train.scaled_matmul %a, %b, %acc : !a, !b, tensor<256x128xf32>
  %t = arith.truncf %c : tensor<256x128xf32> to tensor<256x128xbf16>
  return %t, %c : tensor<256x128xbf16>, tensor<256x128xf32>
}

// CHECK-LABEL: func.func @to_f16
// CHECK:         memref.alloc() {alignment = 64 : i64} : memref<1x256x128xf32>
// CHECK:         arith.truncf %{{.*}} : tensor<256x128xf32> to tensor<256x128xf16>
func.func @to_f16(%a: !a, %b: !b, %acc: tensor<256x128xf32>) -> tensor<256x128xf16> {
  %c = fp4train.scaled_matmul %a, %b, %acc : !a, !b, tensor<256x128xf32>
  %t = arith.truncf %c : tensor<256x128xf32> to tensor<256x128xf16>
  return %t : tensor<256x128xf16>
}

// CHECK-LABEL: func.func @toward_zero
// CHECK:         memref.alloc() {alignment = 64 : i64} : memref<1x256x128xf32>
// CHECK:         arith.truncf %{{.*}} toward_zero : tensor<256x128xf32> to tensor<256x128xbf16>
func.func @toward_zero(%a: !a, %b: !b, %acc: tensor<256x128xf32>) -> tensor<256x128xbf16> {
  %c = fp4train.scaled_matmul %a, %b, %acc : !a, !b, tensor<256x128xf32>
  %t = arith.truncf %c toward_zero : tensor<256x128xf32> to tensor<256x128xbf16>
  return %t : tensor<256x128xbf16>
}

#id = affine_map<(d0, d1) -> (d0, d1)>
#tr = affine_map<(d0, d1) -> (d1, d0)>
// CHECK-LABEL: func.func @transposed
// CHECK:         memref.alloc() {alignment = 64 : i64} : memref<1x128x128xf32>
// CHECK:         linalg.generic
// CHECK:           arith.truncf %{{.*}} : f32 to bf16
!c = !fp4train.scaled<128x512xf4E2M1FN, block = [1, 32], scale = f8E8M0FNU>
func.func @transposed(%a: !c, %b: !b, %acc: tensor<128x128xf32>) -> tensor<128x128xbf16> {
  %c = fp4train.scaled_matmul %a, %b, %acc : !c, !b, tensor<128x128xf32>
  %e = tensor.empty() : tensor<128x128xbf16>
  %t = linalg.generic {indexing_maps = [#tr, #id], iterator_types = ["parallel", "parallel"]}
      ins(%c : tensor<128x128xf32>) outs(%e : tensor<128x128xbf16>) {
  ^bb0(%x: f32, %out: bf16):
    %y = arith.truncf %x : f32 to bf16
    linalg.yield %y : bf16
  } -> tensor<128x128xbf16>
  return %t : tensor<128x128xbf16>
}

// -----

// Ragged shapes. N = 96 is even but not a tile multiple (64): each pair is
// wholly in or out of range, one guard on row and column per pair.
!a = !fp4train.scaled<200x320xf4E2M1FN, block = [1, 32], scale = f8E8M0FNU>
!b = !fp4train.scaled<96x320xf8E4M3FN, block = [1, 32], scale = f8E8M0FNU>
// CHECK-LABEL: func.func @ragged_even
// CHECK:         %[[OUT:.*]] = memref.alloc() {alignment = 64 : i64} : memref<1x200x96xbf16>
// CHECK:         scf.for
// CHECK:         scf.yield %{{.*}} : vector<4xf32>, vector<4xf32>, vector<4xf32>, vector<4xf32>
// CHECK:         amdgpu.scaled_mfma 16x16x128
// CHECK:         %[[RIN:.*]] = arith.cmpi ult, %{{.*}}, %c200{{.*}} : index
// CHECK:         %[[CIN:.*]] = arith.cmpi ult, %{{.*}}, %c96{{.*}} : index
// CHECK:         %[[IN:.*]] = arith.andi %[[RIN]], %[[CIN]] : i1
// CHECK:         scf.if %[[IN]] {
// CHECK:           vector.load %{{.*}} {alignment = 8 : i64} : memref<1x200x96xf32>, vector<2xf32>
// CHECK:           arith.truncf %{{.*}} : vector<2xf32> to vector<2xbf16>
// CHECK:           vector.store %{{.*}}, %[[OUT]]{{.*}} {alignment = 4 : i64} : memref<1x200x96xbf16>, vector<2xbf16>
// CHECK:         }
// CHECK:         return %{{.*}} : tensor<200x96xbf16>
func.func @ragged_even(%a: !a, %b: !b, %acc: tensor<200x96xf32>) -> tensor<200x96xbf16> {
  %c = fp4train.scaled_matmul %a, %b, %acc : !a, !b, tensor<200x96xf32>
  %t = arith.truncf %c : tensor<200x96xf32> to tensor<200x96xbf16>
  return %t : tensor<200x96xbf16>
}

// N = 97 is odd: rows start at odd element offsets, so no 32-bit stores;
// each element of a pair is guarded and stored as one bf16.
!c = !fp4train.scaled<97x320xf8E4M3FN, block = [1, 32], scale = f8E8M0FNU>
// CHECK-LABEL: func.func @ragged_odd
// CHECK:         %[[OUT:.*]] = memref.alloc() {alignment = 64 : i64} : memref<1x200x97xbf16>
// CHECK:         scf.for
// CHECK:         scf.yield %{{.*}} : vector<4xf32>, vector<4xf32>, vector<4xf32>, vector<4xf32>
// CHECK:         amdgpu.scaled_mfma 16x16x128
// CHECK:         arith.cmpi ult, %[[COL:.*]], %c97{{.*}} : index
// CHECK:         scf.if
// CHECK:           %[[OLD:.*]] = memref.load %{{.*}} : memref<1x200x97xf32>
// CHECK:           %[[SUM:.*]] = arith.addf %[[OLD]], %{{.*}} : f32
// CHECK:           %[[BF:.*]] = arith.truncf %[[SUM]] : f32 to bf16
// CHECK:           memref.store %[[BF]], %[[OUT]][%{{.*}}, %{{.*}}, %[[COL]]] : memref<1x200x97xbf16>
// CHECK:         %[[C1:.*]] = arith.addi %[[COL]], %c1{{.*}} : index
// CHECK:         arith.cmpi ult, %[[C1]], %c97{{.*}} : index
// CHECK:         scf.if
// CHECK:           memref.store %{{.*}}, %[[OUT]][%{{.*}}, %{{.*}}, %[[C1]]] : memref<1x200x97xbf16>
// CHECK-NOT:     vector<2xbf16>
// CHECK:         return %{{.*}} : tensor<200x97xbf16>
func.func @ragged_odd(%a: !a, %b: !c, %acc: tensor<200x97xf32>) -> tensor<200x97xbf16> {
  %c = fp4train.scaled_matmul %a, %b, %acc : !a, !c, tensor<200x97xf32>
  %t = arith.truncf %c : tensor<200x97xf32> to tensor<200x97xbf16>
  return %t : tensor<200x97xbf16>
}

// -----

// Batch dimensions: the bf16 buffer is reshaped back like the f32 one.
!a = !fp4train.scaled<2x3x64x128xf8E5M2, block = [1, 1, 1, 32], scale = f8E8M0FNU>
!b = !fp4train.scaled<2x3x64x128xf8E4M3FN, block = [1, 1, 1, 32], scale = f8E8M0FNU>
// CHECK-LABEL: func.func @batched
// CHECK:         memref.alloc() {alignment = 64 : i64} : memref<6x64x64xbf16>
// CHECK:         tensor.expand_shape %{{.*}} {{\[}}[0, 1], [2], [3]] output_shape [2, 3, 64, 64] : tensor<6x64x64xbf16> into tensor<2x3x64x64xbf16>
// CHECK-NOT:     arith.truncf %{{.*}} : tensor
func.func @batched(%a: !a, %b: !b, %acc: tensor<2x3x64x64xf32>) -> tensor<2x3x64x64xbf16> {
  %c = fp4train.scaled_matmul %a, %b, %acc : !a, !b, tensor<2x3x64x64xf32>
  %t = arith.truncf %c : tensor<2x3x64x64xf32> to tensor<2x3x64x64xbf16>
  return %t : tensor<2x3x64x64xbf16>
}
