// RUN: fp4-opt %s --fp4train-gpu-device-memory --split-input-file | FileCheck %s --enable-var-scope
// RUN: fp4-opt %s --fp4train-gpu-device-memory --fp4train-gpu-device-memory --split-input-file | FileCheck %s --enable-var-scope

// A quantize -> GEMM chain: the input is copied in once, the fresh code and
// scale buffers are not, the intermediate codes stay on the device, and only
// the result the host reads is copied back.

module attributes {gpu.container_module} {
  gpu.module @quantize {
    gpu.func @quantize(%x: memref<64xf32>, %codes: memref<64xi8>) kernel {
      %c0 = arith.constant 0 : index
      %v = memref.load %x[%c0] : memref<64xf32>
      %i = arith.fptosi %v : f32 to i8
      memref.store %i, %codes[%c0] : memref<64xi8>
      gpu.return
    }
  }
  gpu.module @gemm {
    gpu.func @gemm(%codes: memref<8x8xi8>, %out: memref<8x8xf32>) kernel {
      %c0 = arith.constant 0 : index
      %v = memref.load %codes[%c0, %c0] : memref<8x8xi8>
      %f = arith.sitofp %v : i8 to f32
      memref.store %f, %out[%c0, %c0] : memref<8x8xf32>
      gpu.return
    }
  }
  // CHECK-LABEL: func.func @chain(
  //  CHECK-SAME:     %[[X:.*]]: memref<64xf32>
  func.func @chain(%x: memref<64xf32>) -> f32 {
    %c1 = arith.constant 1 : index
    %c0 = arith.constant 0 : index
    // CHECK: %[[CODES:.*]] = memref.alloc() : memref<64xi8>
    %codes = memref.alloc() : memref<64xi8>
    // CHECK: %[[XD:.*]] = gpu.alloc () : memref<64xf32>
    // CHECK-NEXT: gpu.memcpy %[[XD]], %[[X]]
    // CHECK-NEXT: %[[CODESD:.*]] = gpu.alloc () : memref<64xi8>
    // CHECK-NEXT: gpu.launch_func @quantize::@quantize {{.*}} args(%[[XD]] : memref<64xf32>, %[[CODESD]] : memref<64xi8>)
    gpu.launch_func @quantize::@quantize blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%x : memref<64xf32>, %codes : memref<64xi8>)
    // The host view the launch took is gone.
    // CHECK-NOT: memref.expand_shape %[[CODES]]
    %view = memref.expand_shape %codes [[0, 1]] output_shape [8, 8] : memref<64xi8> into memref<8x8xi8>
    // CHECK: %[[OUT:.*]] = memref.alloc() : memref<8x8xf32>
    %out = memref.alloc() : memref<8x8xf32>
    // CHECK-NOT: gpu.memcpy
    // CHECK: %[[VIEWD:.*]] = memref.expand_shape %[[CODESD]]
    // CHECK-NEXT: %[[OUTD:.*]] = gpu.alloc () : memref<8x8xf32>
    // CHECK-NEXT: gpu.launch_func @gemm::@gemm {{.*}} args(%[[VIEWD]] : memref<8x8xi8>, %[[OUTD]] : memref<8x8xf32>)
    gpu.launch_func @gemm::@gemm blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%view : memref<8x8xi8>, %out : memref<8x8xf32>)
    // CHECK-NEXT: gpu.memcpy %[[OUT]], %[[OUTD]]
    // CHECK-NEXT: memref.load %[[OUT]]
    %r = memref.load %out[%c0, %c0] : memref<8x8xf32>
    // CHECK-NEXT: gpu.dealloc %[[CODESD]]
    // CHECK-NEXT: memref.dealloc %[[CODES]]
    memref.dealloc %codes : memref<64xi8>
    // CHECK-NEXT: gpu.dealloc %[[OUTD]]
    // CHECK-NEXT: memref.dealloc %[[OUT]]
    memref.dealloc %out : memref<8x8xf32>
    // The argument was only read: no copy back.
    // CHECK-NEXT: gpu.dealloc %[[XD]]
    // CHECK-NEXT: return
    return %r : f32
  }
}

// -----

// Host writes between launches: a buffer the host filled is copied in; after
// a host write the twin is stale and is copied again; an argument a kernel
// wrote is copied back before the return.

module attributes {gpu.container_module} {
  gpu.module @k {
    gpu.func @scale(%a: memref<16xf32>) kernel {
      %c0 = arith.constant 0 : index
      %v = memref.load %a[%c0] : memref<16xf32>
      %w = arith.addf %v, %v : f32
      memref.store %w, %a[%c0] : memref<16xf32>
      gpu.return
    }
  }
  // CHECK-LABEL: func.func @host_writes(
  //  CHECK-SAME:     %[[ARG:.*]]: memref<16xf32>
  func.func @host_writes(%arg: memref<16xf32>) {
    %c1 = arith.constant 1 : index
    %cst = arith.constant 1.0 : f32
    // CHECK: %[[T:.*]] = memref.alloc()
    // CHECK-NEXT: linalg.fill {{.*}} outs(%[[T]]
    %t = memref.alloc() : memref<16xf32>
    linalg.fill ins(%cst : f32) outs(%t : memref<16xf32>)
    // CHECK-NEXT: %[[TD:.*]] = gpu.alloc
    // CHECK-NEXT: gpu.memcpy %[[TD]], %[[T]]
    // CHECK-NEXT: gpu.launch_func @k::@scale {{.*}} args(%[[TD]] : memref<16xf32>)
    gpu.launch_func @k::@scale blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%t : memref<16xf32>)
    // CHECK-NEXT: gpu.memcpy %[[T]], %[[TD]]
    // CHECK-NEXT: linalg.fill {{.*}} outs(%[[T]]
    linalg.fill ins(%cst : f32) outs(%t : memref<16xf32>)
    // CHECK-NEXT: gpu.memcpy %[[TD]], %[[T]]
    // CHECK-NEXT: gpu.launch_func @k::@scale
    gpu.launch_func @k::@scale blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%t : memref<16xf32>)
    // CHECK-NEXT: %[[AD:.*]] = gpu.alloc
    // CHECK-NEXT: gpu.memcpy %[[AD]], %[[ARG]]
    // CHECK-NEXT: gpu.launch_func @k::@scale {{.*}} args(%[[AD]] : memref<16xf32>)
    gpu.launch_func @k::@scale blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%arg : memref<16xf32>)
    // CHECK-NEXT: gpu.dealloc %[[TD]]
    // CHECK-NEXT: memref.dealloc %[[T]]
    memref.dealloc %t : memref<16xf32>
    // CHECK-NEXT: gpu.memcpy %[[ARG]], %[[AD]]
    // CHECK-NEXT: gpu.dealloc %[[AD]]
    // CHECK-NEXT: return
    return
  }
}

// -----

// Launches inside a loop: every buffer is current on the host at the loop
// boundaries, and the twins made in the body are freed at its end.

module attributes {gpu.container_module} {
  gpu.module @k {
    gpu.func @scale(%a: memref<16xf32>) kernel {
      %c0 = arith.constant 0 : index
      %v = memref.load %a[%c0] : memref<16xf32>
      memref.store %v, %a[%c0] : memref<16xf32>
      gpu.return
    }
  }
  // CHECK-LABEL: func.func @loop(
  //  CHECK-SAME:     %[[ARG:.*]]: memref<16xf32>
  func.func @loop(%arg: memref<16xf32>, %n: index) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    // CHECK: %[[AD0:.*]] = gpu.alloc
    // CHECK: gpu.launch_func
    gpu.launch_func @k::@scale blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%arg : memref<16xf32>)
    // CHECK-NEXT: gpu.memcpy %[[ARG]], %[[AD0]]
    // CHECK-NEXT: scf.for
    scf.for %i = %c0 to %n step %c1 {
      // CHECK-NEXT: %[[AD:.*]] = gpu.alloc
      // CHECK-NEXT: gpu.memcpy %[[AD]], %[[ARG]]
      // CHECK-NEXT: gpu.launch_func @k::@scale {{.*}} args(%[[AD]] : memref<16xf32>)
      gpu.launch_func @k::@scale blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%arg : memref<16xf32>)
      // CHECK-NEXT: gpu.memcpy %[[ARG]], %[[AD]]
      // CHECK-NEXT: gpu.dealloc %[[AD]]
      // CHECK-NEXT: }
    }
    // The loop may have changed the argument on the host: copied in again.
    // CHECK-NEXT: gpu.memcpy %[[AD0]], %[[ARG]]
    // CHECK-NEXT: gpu.launch_func @k::@scale {{.*}} args(%[[AD0]] : memref<16xf32>)
    gpu.launch_func @k::@scale blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%arg : memref<16xf32>)
    // CHECK-NEXT: gpu.memcpy %[[ARG]], %[[AD0]]
    // CHECK-NEXT: gpu.dealloc %[[AD0]]
    return
  }
}

// -----

// A dynamically shaped argument: the twin takes the host buffer's sizes.

module attributes {gpu.container_module} {
  gpu.module @k {
    gpu.func @read(%a: memref<?x4xf32>) kernel {
      %c0 = arith.constant 0 : index
      %v = memref.load %a[%c0, %c0] : memref<?x4xf32>
      gpu.return
    }
  }
  // CHECK-LABEL: func.func @dynamic(
  //  CHECK-SAME:     %[[A:.*]]: memref<?x4xf32>
  func.func @dynamic(%a: memref<?x4xf32>) {
    %c1 = arith.constant 1 : index
    // CHECK: %[[N:.*]] = memref.dim %[[A]], %{{.*}} : memref<?x4xf32>
    // CHECK-NEXT: %[[AD:.*]] = gpu.alloc (%[[N]]) : memref<?x4xf32>
    // CHECK-NEXT: gpu.memcpy %[[AD]], %[[A]]
    // CHECK-NEXT: gpu.launch_func @k::@read {{.*}} args(%[[AD]] : memref<?x4xf32>)
    gpu.launch_func @k::@read blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%a : memref<?x4xf32>)
    // Only read by the kernel: no copy back.
    // CHECK-NEXT: gpu.dealloc %[[AD]]
    // CHECK-NEXT: return
    return
  }
}

// -----

// A launch under scf.if and a launch in a successor block: each block
// starts and ends with every buffer current on the host; a subview operand
// becomes the same subview of the twin.

module attributes {gpu.container_module} {
  gpu.module @k {
    gpu.func @w(%a: memref<16xf32>) kernel {
      %c0 = arith.constant 0 : index
      %v = memref.load %a[%c0] : memref<16xf32>
      memref.store %v, %a[%c0] : memref<16xf32>
      gpu.return
    }
    gpu.func @r(%a: memref<4xf32, strided<[1], offset: 4>>) kernel {
      %c0 = arith.constant 0 : index
      %v = memref.load %a[%c0] : memref<4xf32, strided<[1], offset: 4>>
      gpu.return
    }
  }
  // CHECK-LABEL: func.func @blocks(
  //  CHECK-SAME:     %[[A:[^:]*]]: memref<16xf32>
  func.func @blocks(%a: memref<16xf32>, %p: i1) {
    %c1 = arith.constant 1 : index
    // CHECK: scf.if
    // CHECK-NEXT: %[[AD:.*]] = gpu.alloc
    // CHECK-NEXT: gpu.memcpy %[[AD]], %[[A]]
    // CHECK-NEXT: gpu.launch_func @k::@w {{.*}} args(%[[AD]] : memref<16xf32>)
    // CHECK-NEXT: gpu.memcpy %[[A]], %[[AD]]
    // CHECK-NEXT: gpu.dealloc %[[AD]]
    scf.if %p {
      gpu.launch_func @k::@w blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%a : memref<16xf32>)
    }
    cf.br ^bb1(%a : memref<16xf32>)
  // CHECK: ^bb1(%[[B:.*]]: memref<16xf32>):
  ^bb1(%b: memref<16xf32>):
    // CHECK-NEXT: %[[BD:.*]] = gpu.alloc
    // CHECK-NEXT: gpu.memcpy %[[BD]], %[[B]]
    // CHECK-NEXT: gpu.launch_func @k::@w {{.*}} args(%[[BD]] : memref<16xf32>)
    gpu.launch_func @k::@w blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%b : memref<16xf32>)
    // CHECK-NEXT: %[[SV:.*]] = memref.subview %[[BD]][4] [4] [1]
    // CHECK-NEXT: gpu.launch_func @k::@r {{.*}} args(%[[SV]] : memref<4xf32, strided<[1], offset: 4>>)
    %sv = memref.subview %b[4] [4] [1] : memref<16xf32> to memref<4xf32, strided<[1], offset: 4>>
    gpu.launch_func @k::@r blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%sv : memref<4xf32, strided<[1], offset: 4>>)
    // CHECK-NEXT: gpu.memcpy %[[B]], %[[BD]]
    // CHECK-NEXT: gpu.dealloc %[[BD]]
    // CHECK-NEXT: return
    return
  }
}
