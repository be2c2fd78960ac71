//===- Buffers.cpp - The tensor/buffer boundary of GPU kernels ------------===//

#include "fp4train/Conversion/FP4TrainGPUCommon/Buffers.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace mlir::fp4train;

Value mlir::fp4train::toKernelBuffer(OpBuilder &b, Location loc,
                                     Value tensor) {
  auto type = cast<RankedTensorType>(tensor.getType());
  return bufferization::ToBufferOp::create(
      b, loc, MemRefType::get(type.getShape(), type.getElementType()), tensor,
      /*readOnly=*/b.getUnitAttr());
}

Value mlir::fp4train::allocKernelBuffer(OpBuilder &b, Location loc,
                                        MemRefType type) {
  return memref::AllocOp::create(b, loc, type, b.getI64IntegerAttr(64));
}

Value mlir::fp4train::fromKernelBuffer(OpBuilder &b, Location loc,
                                       Value buffer) {
  return bufferization::ToTensorOp::create(
      b, loc,
      memref::getTensorTypeFromMemRefType(cast<MemRefType>(buffer.getType())),
      buffer, /*restrict=*/b.getUnitAttr(), /*writable=*/b.getUnitAttr());
}

/// The reassociation collapsing every dimension of a rank-`rank` tensor.
static SmallVector<ReassociationIndices> allDims(int64_t rank) {
  return {llvm::to_vector(llvm::seq<int64_t>(0, rank))};
}

Value mlir::fp4train::flattenTensor(OpBuilder &b, Location loc,
                                    Value tensor) {
  auto type = cast<RankedTensorType>(tensor.getType());
  if (type.getRank() == 1)
    return tensor;
  return tensor::CollapseShapeOp::create(b, loc, tensor,
                                         allDims(type.getRank()));
}

Value mlir::fp4train::unflattenTensor(OpBuilder &b, Location loc, Value tensor,
                                      ArrayRef<int64_t> shape) {
  if (shape.size() == 1)
    return tensor;
  auto type = RankedTensorType::get(
      shape, cast<RankedTensorType>(tensor.getType()).getElementType());
  return tensor::ExpandShapeOp::create(b, loc, type, tensor,
                                       allDims(shape.size()));
}

/// [batch dims..., rows, columns] -> {[batch], [rows], [columns]}; rank 2
/// gets a unit batch dimension.
static SmallVector<ReassociationIndices> batchRowsColumns(int64_t rank) {
  if (rank == 2)
    return {{0, 1}, {2}};
  return {llvm::to_vector(llvm::seq<int64_t>(0, rank - 2)), {rank - 2},
          {rank - 1}};
}

Value mlir::fp4train::collapseTo3D(OpBuilder &b, Location loc, Value tensor) {
  auto type = cast<RankedTensorType>(tensor.getType());
  int64_t rank = type.getRank();
  if (rank == 3)
    return tensor;
  ArrayRef<int64_t> shape = type.getShape();
  int64_t batch = 1;
  for (int64_t d : shape.drop_back(2))
    batch *= d;
  auto type3 = RankedTensorType::get({batch, shape[rank - 2], shape[rank - 1]},
                                     type.getElementType());
  if (rank == 2)
    return tensor::ExpandShapeOp::create(b, loc, type3, tensor,
                                         batchRowsColumns(rank));
  return tensor::CollapseShapeOp::create(b, loc, type3, tensor,
                                         batchRowsColumns(rank));
}

Value mlir::fp4train::expandFrom3D(OpBuilder &b, Location loc, Value tensor,
                                   RankedTensorType original) {
  int64_t rank = original.getRank();
  if (rank == 3)
    return tensor;
  if (rank == 2)
    return tensor::CollapseShapeOp::create(b, loc, original, tensor,
                                           batchRowsColumns(rank));
  return tensor::ExpandShapeOp::create(b, loc, original, tensor,
                                       batchRowsColumns(rank));
}
