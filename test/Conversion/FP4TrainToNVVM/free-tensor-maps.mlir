// fp4train-free-tensor-maps frees the device copy of each TMA tensor map the
// host encoded (mgpuTensorMapEncodeTiledMemref, [TMA1]) at the end of its
// block, where every launch that takes it has been issued; a map used in
// another block is left alone.
// RUN: fp4-opt %s --split-input-file --verify-diagnostics --fp4train-free-tensor-maps | FileCheck %s

llvm.func @mgpuTensorMapEncodeTiledMemref(i64, !llvm.ptr, i64, i64, i64, i64, i64, !llvm.ptr) -> !llvm.ptr
llvm.func @launch(!llvm.ptr)

// CHECK-LABEL: llvm.func @same_block
// CHECK:         %[[MAP:.*]] = llvm.call @mgpuTensorMapEncodeTiledMemref
// CHECK-NEXT:    llvm.call @launch(%[[MAP]])
// CHECK-NEXT:    %[[NULL:.*]] = llvm.mlir.zero : !llvm.ptr
// CHECK-NEXT:    llvm.call @mgpuMemFree(%[[MAP]], %[[NULL]]) : (!llvm.ptr, !llvm.ptr) -> ()
// CHECK-NEXT:    llvm.return
llvm.func @same_block(%n: i64, %d: !llvm.ptr) {
  %m = llvm.call @mgpuTensorMapEncodeTiledMemref(%n, %d, %n, %n, %n, %n, %n, %d) : (i64, !llvm.ptr, i64, i64, i64, i64, i64, !llvm.ptr) -> !llvm.ptr
  llvm.call @launch(%m) : (!llvm.ptr) -> ()
  llvm.return
}

// CHECK-LABEL: llvm.func @other_block
// CHECK-NOT:     mgpuMemFree
// CHECK:         llvm.return
llvm.func @other_block(%n: i64, %d: !llvm.ptr) {
  %m = llvm.call @mgpuTensorMapEncodeTiledMemref(%n, %d, %n, %n, %n, %n, %n, %d) : (i64, !llvm.ptr, i64, i64, i64, i64, i64, !llvm.ptr) -> !llvm.ptr
  llvm.br ^use
^use:
  llvm.call @launch(%m) : (!llvm.ptr) -> ()
  llvm.return
}

// The declaration the pass adds.
// CHECK: llvm.func @mgpuMemFree(!llvm.ptr, !llvm.ptr)

// -----

llvm.func @mgpuTensorMapEncodeTiledMemref(i64, !llvm.ptr, i64, i64, i64, i64, i64, !llvm.ptr) -> !llvm.ptr
// expected-error @below {{is not mgpuMemFree(ptr, ptr), which frees the tensor maps}}
llvm.func @mgpuMemFree(!llvm.ptr)

llvm.func @clash(%n: i64, %d: !llvm.ptr) {
  %m = llvm.call @mgpuTensorMapEncodeTiledMemref(%n, %d, %n, %n, %n, %n, %n, %d) : (i64, !llvm.ptr, i64, i64, i64, i64, i64, !llvm.ptr) -> !llvm.ptr
  llvm.return
}
