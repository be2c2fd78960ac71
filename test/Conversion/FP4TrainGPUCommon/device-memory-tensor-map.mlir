// RUN: fp4-opt %s --fp4train-gpu-device-memory --split-input-file | FileCheck %s --enable-var-scope

// A TMA tensor map (nvgpu.tma.create.descriptor) is a device read of its
// tensor: the host encodes it from the device twin, current at that point,
// and a kernel reads through it; the host copy stays current.

!map = !nvgpu.tensormap.descriptor<tensor = memref<1x64x128xi8, 3>, swizzle = swizzle_128b, l2promo = none, oob = zero, interleave = none>
module attributes {gpu.container_module} {
  gpu.module @k {
    gpu.func @tma(%map: !llvm.ptr, %out: memref<16xf32>) kernel {
      %c0 = arith.constant 0 : index
      %one = arith.constant 1.0 : f32
      memref.store %one, %out[%c0] : memref<16xf32>
      gpu.return
    }
  }
  // CHECK-LABEL: func.func @map_of_an_argument(
  //  CHECK-SAME:     %[[CODES:.*]]: memref<2x100x160xi8>
  func.func @map_of_an_argument(%codes: memref<2x100x160xi8>) -> memref<16xf32> {
    %c1 = arith.constant 1 : index
    %c64 = arith.constant 64 : index
    %c128 = arith.constant 128 : index
    // CHECK: %[[OUT:.*]] = memref.alloc() : memref<16xf32>
    %out = memref.alloc() : memref<16xf32>
    // CHECK:      %[[TWIN:.*]] = gpu.alloc () : memref<2x100x160xi8>
    // CHECK-NEXT: gpu.memcpy %[[TWIN]], %[[CODES]]
    // CHECK-NEXT: %[[VIEW:.*]] = memref.cast %[[TWIN]] : memref<2x100x160xi8> to memref<*xi8>
    // CHECK-NEXT: %[[MAP:.*]] = nvgpu.tma.create.descriptor %[[VIEW]] box
    // CHECK-NOT:  memref.cast %[[CODES]]
    %u = memref.cast %codes : memref<2x100x160xi8> to memref<*xi8>
    %d = nvgpu.tma.create.descriptor %u box[%c1, %c64, %c128] : memref<*xi8> -> !map
    %p = builtin.unrealized_conversion_cast %d : !map to !llvm.ptr
    // CHECK: gpu.launch_func @k::@tma {{.*}} args(%{{.*}} : !llvm.ptr, %[[OUTD:.*]] : memref<16xf32>)
    gpu.launch_func @k::@tma blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%p : !llvm.ptr, %out : memref<16xf32>)
    // Only the result is copied back; the codes were only read.
    // CHECK: gpu.memcpy %[[OUT]], %[[OUTD]]
    // CHECK-NOT: gpu.memcpy %[[CODES]]
    // CHECK: gpu.dealloc %[[TWIN]]
    return %out : memref<16xf32>
  }
}

// -----

// A map of a buffer a kernel wrote: the twin is current, nothing is copied.
!map = !nvgpu.tensormap.descriptor<tensor = memref<64x128xi8, 3>, swizzle = swizzle_128b, l2promo = none, oob = zero, interleave = none>
module attributes {gpu.container_module} {
  gpu.module @k {
    gpu.func @write(%codes: memref<64x128xi8>) kernel {
      %c0 = arith.constant 0 : index
      %z = arith.constant 0 : i8
      memref.store %z, %codes[%c0, %c0] : memref<64x128xi8>
      gpu.return
    }
    gpu.func @tma(%map: !llvm.ptr) kernel {
      gpu.return
    }
  }
  // CHECK-LABEL: func.func @map_of_a_kernel_result(
  func.func @map_of_a_kernel_result() {
    %c1 = arith.constant 1 : index
    %c64 = arith.constant 64 : index
    %c128 = arith.constant 128 : index
    %codes = memref.alloc() : memref<64x128xi8>
    // CHECK:     %[[TWIN:.*]] = gpu.alloc () : memref<64x128xi8>
    // CHECK:     gpu.launch_func @k::@write {{.*}} args(%[[TWIN]] : memref<64x128xi8>)
    gpu.launch_func @k::@write blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%codes : memref<64x128xi8>)
    // CHECK-NOT: gpu.memcpy
    // CHECK:     %[[VIEW:.*]] = memref.cast %[[TWIN]] : memref<64x128xi8> to memref<*xi8>
    // CHECK:     nvgpu.tma.create.descriptor %[[VIEW]]
    %u = memref.cast %codes : memref<64x128xi8> to memref<*xi8>
    %d = nvgpu.tma.create.descriptor %u box[%c64, %c128] : memref<*xi8> -> !map
    %p = builtin.unrealized_conversion_cast %d : !map to !llvm.ptr
    gpu.launch_func @k::@tma blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%p : !llvm.ptr)
    return
  }
}
