//===- LaneMath.h - Index arithmetic of the NVVM fragment loaders -*- C++
//-*-===//

#ifndef FP4TRAIN_LIB_CONVERSION_FP4TRAINTONVVM_LANEMATH_H
#define FP4TRAIN_LIB_CONVERSION_FP4TRAINTONVVM_LANEMATH_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

#include <utility>

namespace mlir::fp4train {

/// Index arithmetic on constants and lane ids.
struct LaneMath {
  OpBuilder &b;
  Location loc;
  Value c(int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); }
  Value add(Value x, int64_t y) {
    return y ? arith::AddIOp::create(b, loc, x, c(y)).getResult() : x;
  }
  Value add(Value x, Value y) { return arith::AddIOp::create(b, loc, x, y); }
  Value mul(Value x, int64_t y) {
    return y == 1 ? x : arith::MulIOp::create(b, loc, x, c(y)).getResult();
  }
  Value shr(Value x, int64_t y) {
    return arith::ShRUIOp::create(b, loc, x, c(y));
  }
  Value band(Value x, int64_t y) {
    return arith::AndIOp::create(b, loc, x, c(y));
  }

  /// One aligned 32-bit word (i32) of the i8 buffer `memory` at byte
  /// `offset`.
  Value loadWord(Value memory, Value offset) {
    Value bytes = vector::LoadOp::create(
        b, loc, VectorType::get({4}, b.getI8Type()), memory, offset,
        /*nontemporal=*/false, llvm::Align(4));
    Value word = vector::BitCastOp::create(
        b, loc, VectorType::get({1}, b.getI32Type()), bytes);
    return vector::ExtractOp::create(b, loc, word, 0);
  }

  /// (row, column) of C/D register `index` of `lane` in an m16n8 mma.sync
  /// tile: D[g + 8 (index / 2)][2 t + index % 2], g = lane >> 2, t = lane % 4
  /// (PTX ISA, "Matrix Fragments for mma.m16n8k*").
  std::pair<Value, Value> getAccumulatorPosition(Value lane, int64_t index) {
    Value row = add(shr(lane, 2), 8 * (index / 2));
    Value col = add(mul(band(lane, 3), 2), index % 2);
    return {row, col};
  }
};

} // namespace mlir::fp4train

#endif // FP4TRAIN_LIB_CONVERSION_FP4TRAINTONVVM_LANEMATH_H
