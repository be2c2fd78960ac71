//===- KernelUtils.cpp - Helpers of every GPU kernel builder --------------===//

#include "fp4train/Conversion/FP4TrainGPUCommon/KernelUtils.h"

#include "fp4train/Conversion/FP4TrainCommon/TypeConversion.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mlir::fp4train;

Value IndexMath::c(int64_t v) {
  return arith::ConstantIndexOp::create(b, loc, v);
}
Value IndexMath::add(Value x, Value y) {
  return arith::AddIOp::create(b, loc, x, y);
}
Value IndexMath::add(Value x, int64_t y) { return y ? add(x, c(y)) : x; }
Value IndexMath::mul(Value x, int64_t y) {
  return y == 1 ? x : arith::MulIOp::create(b, loc, x, c(y)).getResult();
}
Value IndexMath::div(Value x, int64_t y) {
  return y == 1 ? x : arith::DivUIOp::create(b, loc, x, c(y)).getResult();
}
Value IndexMath::rem(Value x, int64_t y) {
  return arith::RemUIOp::create(b, loc, x, c(y));
}
Value IndexMath::lt(Value x, int64_t y) {
  return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, x, c(y));
}
Value IndexMath::both(Value x, Value y) {
  if (!x)
    return y;
  if (!y)
    return x;
  return arith::AndIOp::create(b, loc, x, y);
}

std::pair<Value, Value>
mlir::fp4train::getGroupedTile(OpBuilder &b, Location loc, Value x, Value y,
                               int64_t tilesN, int64_t tilesM, int64_t group) {
  if (tilesM <= 1 || tilesN <= 1)
    return {y, x};
  IndexMath im{b, loc};
  return getGroupedTile(b, loc, im.add(x, im.mul(y, tilesN)), tilesN, tilesM,
                        group);
}

std::pair<Value, Value>
mlir::fp4train::getGroupedTile(OpBuilder &b, Location loc, Value id,
                               int64_t tilesN, int64_t tilesM, int64_t group) {
  IndexMath im{b, loc};
  if (tilesM <= 1 || tilesN <= 1)
    return {im.div(id, tilesN), im.rem(id, tilesN)};
  group = std::min(group, tilesM);
  Value band = im.div(id, group * tilesN);
  Value local = im.rem(id, group * tilesN);
  Value firstRow = im.mul(band, group);
  // Rows in this band: `group`, or what the last band has left.
  Value rows =
      tilesM % group
          ? arith::MinUIOp::create(
                b, loc, arith::SubIOp::create(b, loc, im.c(tilesM), firstRow),
                im.c(group))
          : im.c(group);
  Value row = im.add(firstRow, arith::RemUIOp::create(b, loc, local, rows));
  Value col = arith::DivUIOp::create(b, loc, local, rows);
  return {row, col};
}

Value mlir::fp4train::buildIf(OpBuilder &b, Location loc, Value cond,
                              function_ref<Value()> thenFn,
                              function_ref<Value()> elseFn) {
  if (!cond)
    return thenFn();
  auto ifOp = scf::IfOp::create(
      b, loc, cond,
      [&](OpBuilder &nested, Location) {
        OpBuilder::InsertionGuard inner(b);
        b.setInsertionPoint(nested.getInsertionBlock(),
                            nested.getInsertionPoint());
        scf::YieldOp::create(b, loc, thenFn());
      },
      [&](OpBuilder &nested, Location) {
        OpBuilder::InsertionGuard inner(b);
        b.setInsertionPoint(nested.getInsertionBlock(),
                            nested.getInsertionPoint());
        scf::YieldOp::create(b, loc, elseFn());
      });
  return ifOp.getResult(0);
}

void mlir::fp4train::buildIf(OpBuilder &b, Location loc, Value cond,
                             function_ref<void()> thenFn) {
  if (!cond)
    return thenFn();
  scf::IfOp::create(b, loc, cond, [&](OpBuilder &nested, Location) {
    OpBuilder::InsertionGuard inner(b);
    b.setInsertionPoint(nested.getInsertionBlock(), nested.getInsertionPoint());
    thenFn();
    scf::YieldOp::create(b, loc);
  });
}

void mlir::fp4train::buildIfElse(OpBuilder &b, Location loc, Value cond,
                                 function_ref<void()> thenFn,
                                 function_ref<void()> elseFn) {
  auto branch = [&](function_ref<void()> fn) {
    return [&b, &loc, fn](OpBuilder &nested, Location) {
      OpBuilder::InsertionGuard inner(b);
      b.setInsertionPoint(nested.getInsertionBlock(),
                          nested.getInsertionPoint());
      fn();
      scf::YieldOp::create(b, loc);
    };
  };
  scf::IfOp::create(b, loc, cond, branch(thenFn), branch(elseFn));
}

Value mlir::fp4train::buildDynamicSharedBytes(OpBuilder &b, Location loc) {
  return gpu::DynamicSharedMemoryOp::create(
      b, loc,
      MemRefType::get({ShapedType::kDynamic}, b.getI8Type(), AffineMap(),
                      gpu::AddressSpaceAttr::get(
                          b.getContext(), gpu::AddressSpace::Workgroup)));
}

Value mlir::fp4train::buildAlignmentPad(OpBuilder &b, Location loc,
                                        Value memory, int64_t alignment) {
  IndexMath im{b, loc};
  Value start = memref::ExtractAlignedPointerAsIndexOp::create(b, loc, memory);
  return im.rem(
      arith::SubIOp::create(b, loc, im.c(alignment), im.rem(start, alignment)),
      alignment);
}

int64_t mlir::fp4train::getGemmChunkBytes(Type element, int64_t k) {
  return isPackedStorage(element) && k % 32 ? 8 : 16;
}

Value mlir::fp4train::loadCodeChunk(OpBuilder &b, Location loc,
                                    const GemmGlobalOperand &op, Value batch,
                                    Value row, Value col, int64_t bytes,
                                    Value inBounds) {
  auto type = VectorType::get({bytes}, b.getI8Type());
  return buildIf(
      b, loc, inBounds,
      [&]() -> Value {
        // `bytes`-byte alignment holds: one-shot bufferization allocates
        // 64-byte aligned buffers and rows are a multiple of `bytes` long
        // (getGemmChunkBytes).
        return vector::LoadOp::create(
            b, loc, type, op.codes, ValueRange{batch, row, col},
            /*nontemporal=*/false, llvm::Align(bytes));
      },
      [&]() -> Value {
        return arith::ConstantOp::create(b, loc, b.getZeroAttr(type));
      });
}

Value mlir::fp4train::loadScaleCodes(OpBuilder &b, Location loc,
                                     const GemmGlobalOperand &op, Value batch,
                                     Value row, Value rowInBounds,
                                     Value firstBlock, int64_t count,
                                     int64_t kBlocks) {
  IndexMath im{b, loc};
  auto type = VectorType::get({count}, b.getI8Type());
  Value scaleRow = im.div(row, op.blockRows);
  auto zeros = [&](Type t) -> Value {
    return arith::ConstantOp::create(b, loc, b.getZeroAttr(t));
  };
  // Out-of-range blocks read scale code 0 (E8M0 2^-127, E4M3 +0): with their
  // zero codes they contribute +0, and the scale stays finite.
  if (kBlocks % count == 0) {
    // The row's `count` blocks are one aligned load.
    return buildIf(
        b, loc, rowInBounds,
        [&]() -> Value {
          return vector::LoadOp::create(b, loc, type, op.scales,
                                        ValueRange{batch, scaleRow, firstBlock},
                                        false, llvm::Align(count));
        },
        [&]() { return zeros(type); });
  }
  SmallVector<Value> bytes;
  for (int64_t i = 0; i < count; ++i) {
    Value block = im.add(firstBlock, i);
    Value cond = im.both(rowInBounds, im.lt(block, kBlocks));
    bytes.push_back(buildIf(
        b, loc, cond,
        [&]() -> Value {
          return memref::LoadOp::create(b, loc, op.scales,
                                        ValueRange{batch, scaleRow, block});
        },
        [&]() { return zeros(b.getI8Type()); }));
  }
  return vector::FromElementsOp::create(b, loc, type, bytes);
}
