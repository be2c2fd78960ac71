//===- Buffers.cpp - The tensor/buffer boundary of GPU kernels ------------===//

#include "fp4train/Conversion/FP4TrainGPUCommon/Buffers.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/Matchers.h"

using namespace mlir;
using namespace mlir::fp4train;

Value mlir::fp4train::toKernelBuffer(OpBuilder &b, Location loc, Value tensor) {
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

/// The scalar every element of the tensor behind kernel buffer `buffer`
/// holds when that tensor is a linalg.fill or a splat constant (through
/// reshapes), else null.
static Value getSplatValue(OpBuilder &b, Location loc, Value buffer) {
  auto toBuffer = buffer.getDefiningOp<bufferization::ToBufferOp>();
  if (!toBuffer)
    return Value();
  Value tensor = toBuffer.getTensor();
  for (;;) {
    if (auto collapse = tensor.getDefiningOp<tensor::CollapseShapeOp>())
      tensor = collapse.getSrc();
    else if (auto expand = tensor.getDefiningOp<tensor::ExpandShapeOp>())
      tensor = expand.getSrc();
    else
      break;
  }
  Type element = cast<MemRefType>(buffer.getType()).getElementType();
  if (auto fill = tensor.getDefiningOp<linalg::FillOp>()) {
    Value value = fill.getInputs().front();
    return value.getType() == element ? value : Value();
  }
  DenseElementsAttr constant;
  if (matchPattern(tensor, m_Constant(&constant)) && constant.isSplat())
    return arith::ConstantOp::create(b, loc,
                                     constant.getSplatValue<TypedAttr>());
  return Value();
}

Value mlir::fp4train::loadKernelBuffer(OpBuilder &b, Location loc, Value buffer,
                                       ValueRange indices, int64_t count,
                                       unsigned alignment) {
  Type element = cast<MemRefType>(buffer.getType()).getElementType();
  auto vectorType = VectorType::get({count}, element);
  if (Value splat = getSplatValue(b, loc, buffer))
    return count == 1 ? splat
                      : vector::BroadcastOp::create(b, loc, vectorType, splat)
                            .getResult();
  if (count == 1)
    return memref::LoadOp::create(b, loc, buffer, indices);
  return vector::LoadOp::create(b, loc, vectorType, buffer, indices,
                                /*nontemporal=*/false, llvm::Align(alignment));
}

/// The reassociation collapsing every dimension of a rank-`rank` tensor.
static SmallVector<ReassociationIndices> allDims(int64_t rank) {
  return {llvm::to_vector(llvm::seq<int64_t>(0, rank))};
}

Value mlir::fp4train::flattenTensor(OpBuilder &b, Location loc, Value tensor) {
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
  return {
      llvm::to_vector(llvm::seq<int64_t>(0, rank - 2)), {rank - 2}, {rank - 1}};
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
