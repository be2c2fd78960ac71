//===- ScaledMfma.cpp - gfx950 scaled MFMAs and their fragment loaders
//-----===//
//
// The per-lane layouts of the gfx950 block-scaled MFMAs, as the CDNA4 ISA
// documents them for the f8f6f4 family (MI355X ISA, "Matrix fused multiply
// add" dense layouts; the scaled forms share them). With L = lane (0..63):
//
// 32x32x64 (A is 32x64, B is 64x32, D is 32x32, 16 f32 per lane):
//   A: lane L holds row L % 32, K elements [32 * (L / 32), +32), which is
//      exactly one 32-element MX block, b = L / 32; its scale operand is the
//      E8M0 scale of (row L % 32, block L / 32).
//   B: the same with "row" meaning column of B (row of the K-major B^T).
//   D: value v of lane L is row 8 * (v / 4) + 4 * (L / 32) + v % 4,
//      column L % 32.
// 16x16x128 (A is 16x128, B is 128x16, D is 16x16, 4 f32 per lane):
//   A: lane L holds row L % 16, K block L / 16 (elements [32 * (L / 16),
//      +32)); scale of (row L % 16, block L / 16). B alike.
//   D: value v of lane L is row 4 * (L / 16) + v, column L % 16.
//
// Inside a lane the 32 elements are consecutive in K, element i in bits
// [4i, 4i + 4) (FP4) or [8i, 8i + 8) (FP8) of the operand registers, which
// is the little-endian order amdgpu.scaled_mfma gives a vector, and the
// order in which the GEMM skeleton stages them: a lane's fragment is one
// contiguous 16-byte (FP4) or 32-byte (FP8) read of shared memory. The
// lane-exact emulation (docs/emulation.md) checks these layouts against an
// independent model of the instruction.
//
//===----------------------------------------------------------------------===//

#include "CDNA4TargetInfo.h"

#include "mlir/Dialect/AMDGPU/IR/AMDGPUDialect.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mlir::fp4train;

/// Elements per MX block: one lane's fragment.
static constexpr int64_t kBlock = 32;

static Value indexConst(OpBuilder &b, Location loc, int64_t value) {
  return arith::ConstantIndexOp::create(b, loc, value);
}

std::pair<Value, Value>
ScaledMfmaTargetInfo::getAccumulatorPosition(OpBuilder &b, Location loc,
                                             Value lane, int64_t index) const {
  Value columns = indexConst(b, loc, getN());
  Value column = arith::RemUIOp::create(b, loc, lane, columns);
  Value group = arith::DivUIOp::create(b, loc, lane, columns);
  // Row = 4 * (L / N) + (32x32 only: 8 * (v / 4)) + v % 4.
  int64_t fixed = is32() ? 8 * (index / 4) + index % 4 : index;
  Value row = arith::AddIOp::create(
      b, loc, arith::MulIOp::create(b, loc, group, indexConst(b, loc, 4)),
      indexConst(b, loc, fixed));
  return {row, column};
}

void ScaledMfmaTargetInfo::buildStepMMAs(OpBuilder &b, Location loc,
                                         const StagedTiles &tiles, Value buffer,
                                         Value lane, Value rowA, Value rowB,
                                         MutableArrayRef<Value> accs) const {
  GemmTiling tiling = getTiling();
  Value memory = tiles.getMemory();
  // Lane L holds row L % M and block L / M of the instruction's K.
  Value laneRow =
      arith::RemUIOp::create(b, loc, lane, indexConst(b, loc, getM()));
  Value laneBlock =
      arith::DivUIOp::create(b, loc, lane, indexConst(b, loc, getM()));
  auto fragment = [&](unsigned operand, Value row, Value block) -> Value {
    int64_t bytes = tiles.isPacked(operand) ? kBlock / 2 : kBlock;
    Value offset = tiles.getCodesOffset(
        b, loc, operand, buffer, row,
        arith::MulIOp::create(b, loc, block, indexConst(b, loc, bytes)));
    Value raw = vector::LoadOp::create(
        b, loc, VectorType::get({bytes}, b.getI8Type()), memory, offset,
        /*nontemporal=*/false, llvm::Align(16));
    return vector::BitCastOp::create(
        b, loc, VectorType::get({kBlock}, tiles.getElementType(operand)), raw);
  };
  // The scale operands of a lane: its blocks of the K step's MMAs. One
  // step (16x16x128): block L / 16, one byte. Two steps (32x32x64): blocks
  // L / 32 and L / 32 + 2, staged next to each other (getStagedScaleOrder),
  // so one 16-bit load gives both; the instruction picks byte `step` of
  // the scale VGPR (opsel, uniform). Either way the operand is a
  // vector<4 x f8E8M0FNU> VGPR with the lane's codes in its low bytes.
  int64_t steps = kGemmTileK / getK();
  auto scales = [&](unsigned operand, Value row) -> Value {
    Value first = steps == 1 ? laneBlock
                             : arith::MulIOp::create(b, loc, laneBlock,
                                                     indexConst(b, loc, 2));
    Value offset = tiles.getScaleOffset(b, loc, operand, buffer, row, first);
    Value codes;
    if (steps == 1) {
      codes = memref::LoadOp::create(b, loc, memory, offset);
    } else {
      Value pair = vector::LoadOp::create(
          b, loc, VectorType::get({2}, b.getI8Type()), memory, offset,
          /*nontemporal=*/false, llvm::Align(2));
      codes = vector::ExtractOp::create(
          b, loc,
          vector::BitCastOp::create(b, loc,
                                    VectorType::get({1}, b.getI16Type()), pair),
          0);
    }
    // Zero-extended, as ds_read_u8 / ds_read_u16 load it.
    Value word = arith::ExtUIOp::create(b, loc, b.getI32Type(), codes);
    return vector::BitCastOp::create(
        b, loc, VectorType::get({4}, b.getType<Float8E8M0FNUType>()),
        vector::BroadcastOp::create(
            b, loc, VectorType::get({1}, b.getI32Type()), word));
  };

  // The tile rows of the lane's instruction tiles: base + L % M + r * M.
  auto laneRows = [&](Value base, int64_t reps) {
    SmallVector<Value> rows;
    for (int64_t r = 0; r < reps; ++r)
      rows.push_back(arith::AddIOp::create(
          b, loc, base,
          arith::AddIOp::create(b, loc, laneRow,
                                indexConst(b, loc, r * getM()))));
    return rows;
  };
  SmallVector<Value> rowsA = laneRows(rowA, tiling.repM);
  SmallVector<Value> rowsB = laneRows(rowB, tiling.repN);

  int64_t blocksPerMMA = getK() / kBlock;
  SmallVector<Value> aScale, bScale;
  for (Value row : rowsA)
    aScale.push_back(scales(0, row));
  for (Value row : rowsB)
    bScale.push_back(scales(1, row));
  for (int64_t step = 0; step < steps; ++step) {
    Value block = arith::AddIOp::create(
        b, loc, laneBlock, indexConst(b, loc, step * blocksPerMMA));
    SmallVector<Value> aFrag, bFrag;
    for (Value row : rowsA)
      aFrag.push_back(fragment(0, row, block));
    for (Value row : rowsB)
      bFrag.push_back(fragment(1, row, block));
    for (int64_t i = 0; i < tiling.repM; ++i)
      for (int64_t j = 0; j < tiling.repN; ++j) {
        Value &d = accs[i * tiling.repN + j];
        d = amdgpu::ScaledMFMAOp::create(
            b, loc, d.getType(), b.getI32IntegerAttr(getM()),
            b.getI32IntegerAttr(getN()), b.getI32IntegerAttr(getK()), aFrag[i],
            bFrag[j], d, aScale[i], bScale[j], b.getI32IntegerAttr(step),
            b.getI32IntegerAttr(step));
      }
  }
}

SmallVector<int64_t>
ScaledMfmaTargetInfo::getStagedScaleOrder(int64_t blocksPerStep) const {
  if (!is32() || blocksPerStep != 4)
    return {};
  return {0, 2, 1, 3};
}
