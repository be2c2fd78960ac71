//===- Buffers.h - The tensor/buffer boundary of GPU kernels -----*- C++
//-*-===//
//
// Every GPU kernel pattern crosses from tensors to buffers the same way:
// operands through `bufferization.to_buffer` (read-only, identity layout),
// results as fresh 64-byte-aligned `memref.alloc` buffers returned with
// `bufferization.to_tensor restrict writable`, so one-shot bufferization
// takes the module on unchanged and gpu-kernel-outlining turns the launch
// into a kernel. Shapes are normalized to what the kernels index (1-D, or
// [batch, rows, columns]) with reshapes that bufferize to views.
//
//===----------------------------------------------------------------------===//

#ifndef FP4TRAIN_CONVERSION_FP4TRAINGPUCOMMON_BUFFERS_H
#define FP4TRAIN_CONVERSION_FP4TRAINGPUCOMMON_BUFFERS_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"

namespace mlir::fp4train {

/// `bufferization.to_buffer %tensor read_only` with an identity layout.
Value toKernelBuffer(OpBuilder &b, Location loc, Value tensor);
/// A fresh 64-byte-aligned buffer for a kernel to write.
Value allocKernelBuffer(OpBuilder &b, Location loc, MemRefType type);
/// `bufferization.to_tensor %buffer restrict writable`.
Value fromKernelBuffer(OpBuilder &b, Location loc, Value buffer);
/// `count` consecutive elements (a scalar for 1, else a vector, loaded with
/// `alignment` bytes) of kernel buffer `buffer` at `indices`; when `buffer`
/// is toKernelBuffer of a linalg.fill or a splat constant (through
/// reshapes), the fill value instead, so that the kernel does not take the
/// buffer at all (a zero accumulator costs no loads, and no copy to the
/// device).
Value loadKernelBuffer(OpBuilder &b, Location loc, Value buffer,
                       ValueRange indices, int64_t count = 1,
                       unsigned alignment = 0);

/// `tensor` collapsed to rank 1, and back to `shape`.
Value flattenTensor(OpBuilder &b, Location loc, Value tensor);
Value unflattenTensor(OpBuilder &b, Location loc, Value tensor,
                      ArrayRef<int64_t> shape);
/// A tensor of rank >= 2 as [batch, rows, columns], and back to `original`
/// (its shape, the element type of `tensor`).
Value collapseTo3D(OpBuilder &b, Location loc, Value tensor);
Value expandFrom3D(OpBuilder &b, Location loc, Value tensor,
                   RankedTensorType original);

} // namespace mlir::fp4train

#endif // FP4TRAIN_CONVERSION_FP4TRAINGPUCOMMON_BUFFERS_H
