// RUN: fp4-opt %s --fp4train-to-runtime | FileCheck %s

// fp4train-to-runtime: each fp4train op becomes one call of the runtime
// library on unranked memrefs, with its static attributes as scalars, and
// its results come back as tensors of fresh buffers: the 1:N type
// conversion of fp4train-expand (packed codes [PK1], scales), so both
// lowerings compute the same bits ([CHK2]).

// CHECK-DAG: func.func private @fp4train_rt_quantize(memref<*xf32>, memref<*xi8>, memref<*xi8>, i32, i64, i64, i32, i64, f32, memref<*xi64>) -> f32 attributes {llvm.emit_c_interface}
// CHECK-DAG: func.func private @fp4train_rt_scaled_matmul(

// CHECK-LABEL: func.func @quantize_sr
// CHECK-SAME: (%[[X:.*]]: tensor<4x64xf32>, %[[SEED:.*]]: i64) -> (tensor<4x32xi8>, tensor<4x2xi8>)
// CHECK: %[[CODES:.*]] = memref.alloc() : memref<4x32xi8>
// CHECK: %[[SCALES:.*]] = memref.alloc() : memref<4x2xi8>
// A whole tensor passes an empty part ([SH3]).
// CHECK: %[[PART:.*]] = tensor.from_elements  : tensor<0xi64>
// CHECK: bufferization.to_buffer %[[X]] read_only
// CHECK: call @fp4train_rt_quantize(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[SEED]], %{{.*}}, %{{.*}})
// CHECK-DAG: bufferization.to_tensor %[[CODES]] restrict writable
// CHECK-DAG: bufferization.to_tensor %[[SCALES]] restrict writable
// CHECK-NOT: fp4train.
// CHECK: return
func.func @quantize_sr(%x: tensor<4x64xf32>, %seed: i64)
    -> !fp4train.scaled<4x64xf4E2M1FN, block = [1, 32], scale = f8E8M0FNU> {
  %q = fp4train.quantize %x rounding = stochastic seed(%seed)
      : tensor<4x64xf32> -> !fp4train.scaled<4x64xf4E2M1FN, block = [1, 32], scale = f8E8M0FNU>
  return %q : !fp4train.scaled<4x64xf4E2M1FN, block = [1, 32], scale = f8E8M0FNU>
}

// CHECK-LABEL: func.func @gemm
// CHECK: call @fp4train_rt_scaled_matmul(
// CHECK-NOT: fp4train.
// CHECK: return
func.func @gemm(%a: !fp4train.scaled<8x64xf4E2M1FN, block = [1, 32], scale = f8E8M0FNU>,
                %b: !fp4train.scaled<6x64xf4E2M1FN, block = [1, 32], scale = f8E8M0FNU>,
                %acc: tensor<8x6xf32>) -> tensor<8x6xf32> {
  %c = fp4train.scaled_matmul %a, %b, %acc : !fp4train.scaled<8x64xf4E2M1FN, block = [1, 32], scale = f8E8M0FNU>, !fp4train.scaled<6x64xf4E2M1FN, block = [1, 32], scale = f8E8M0FNU>, tensor<8x6xf32>
  return %c : tensor<8x6xf32>
}
