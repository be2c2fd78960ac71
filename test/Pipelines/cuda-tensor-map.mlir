// The CUDA pipeline's host side takes TMA tensor maps
// (nvgpu.tma.create.descriptor, what a TMA kernel's launch needs): the
// device-memory pass gives the map the tensor's device twin, copied in
// first, and the host lowering calls the CUDA runtime wrappers' encoder
// (mgpuTensorMapEncodeTiledMemref) on it; the launch passes the map as a
// pointer. A launch that reads through a map also takes the tensor's memref
// (here it loads a byte of it), which keeps the buffer alive until the
// launch.
// RUN: fp4-opt %s --fp4train-cuda-pipeline="recipe=none chip=sm_100a format=isa" | FileCheck %s

// CHECK-LABEL: llvm.func @tma(
// CHECK:         %[[TWIN:.*]] = llvm.call @mgpuMemAlloc(
// CHECK:         llvm.call @mgpuMemcpy(
// CHECK:         %[[MAP:.*]] = llvm.call @mgpuTensorMapEncodeTiledMemref(
// CHECK:         gpu.launch_func <%{{.*}} : !llvm.ptr> @tma_kernel::@tma_kernel {{.*}} args(%[[MAP]] : !llvm.ptr,
// The map's device copy is freed at the end of the block, after the stream
// is synchronized (fp4train-free-tensor-maps).
// CHECK:         llvm.call @mgpuStreamSynchronize
// CHECK:         llvm.call @mgpuMemFree(%[[MAP]], %{{.*}}) : (!llvm.ptr, !llvm.ptr) -> ()
// CHECK-NEXT:    llvm.return
// CHECK:       llvm.func @mgpuTensorMapEncodeTiledMemref(i64, !llvm.ptr, i64, i64, i64, i64, i64, !llvm.ptr) -> !llvm.ptr
!map = !nvgpu.tensormap.descriptor<tensor = memref<1x64x128xi8, 3>, swizzle = swizzle_128b, l2promo = none, oob = zero, interleave = none>
func.func @tma(%codes: memref<2x100x160xi8>, %out: memref<16xi64>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %c128 = arith.constant 128 : index
  %u = memref.cast %codes : memref<2x100x160xi8> to memref<*xi8>
  %d = nvgpu.tma.create.descriptor %u box[%c1, %c64, %c128] : memref<*xi8> -> !map
  %p = builtin.unrealized_conversion_cast %d : !map to !llvm.ptr
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1) threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    %i = llvm.ptrtoint %p : !llvm.ptr to i64
    %c = memref.load %codes[%c0, %c0, %c0] : memref<2x100x160xi8>
    %e = arith.extui %c : i8 to i64
    %s = arith.addi %i, %e : i64
    memref.store %s, %out[%c0] : memref<16xi64>
    gpu.terminator
  }
  return
}
