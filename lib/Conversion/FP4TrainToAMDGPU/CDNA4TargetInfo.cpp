//===- CDNA4TargetInfo.cpp - gfx950 scaled MFMA layouts -------------------===//
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
// is the little-endian order amdgpu.scaled_mfma gives a vector. Only the
// block-to-lane assignment matters for the result: A and B use the same
// in-block order and the instruction sums a whole block under one scale.
// The lane-exact emulation (issue 6, part 3) is what will check these
// assumptions against an independent model of the instruction.
//
//===----------------------------------------------------------------------===//

#include "CDNA4TargetInfo.h"

#include "mlir/Dialect/AMDGPU/IR/AMDGPUDialect.h"
#include "mlir/Dialect/Arith/IR/Arith.h"

using namespace mlir;
using namespace mlir::fp4train;

static Value indexConst(OpBuilder &b, Location loc, int64_t value) {
  return arith::ConstantIndexOp::create(b, loc, value);
}

std::pair<Value, Value>
CDNA4ScaledMFMATargetInfo::getOperandPosition(OpBuilder &b, Location loc,
                                              Value lane) const {
  Value rows = indexConst(b, loc, getM());
  return {arith::RemUIOp::create(b, loc, lane, rows),
          arith::DivUIOp::create(b, loc, lane, rows)};
}

std::pair<Value, Value> CDNA4ScaledMFMATargetInfo::getAccumulatorPosition(
    OpBuilder &b, Location loc, Value lane, int64_t index) const {
  Value columns = indexConst(b, loc, getN());
  Value column = arith::RemUIOp::create(b, loc, lane, columns);
  Value group = arith::DivUIOp::create(b, loc, lane, columns);
  // Row = 4 * (L / N) + (32x32 only: 8 * (v / 4)) + v % 4.
  int64_t fixed = is32() ? 8 * (index / 4) + index % 4 : index;
  Value row = arith::AddIOp::create(
      b, loc,
      arith::MulIOp::create(b, loc, group, indexConst(b, loc, 4)),
      indexConst(b, loc, fixed));
  return {row, column};
}

Value CDNA4ScaledMFMATargetInfo::buildMMA(OpBuilder &b, Location loc, Value a,
                                          Value scaleA, Value b_,
                                          Value scaleB, Value acc) const {
  // The scale operands are one E8M0 byte per lane: amdgpu.scaled_mfma puts it
  // in byte 0 of the scale VGPR (opsel 0). Lane-dependent blocks rule out
  // packing four scales per VGPR and selecting with opsel, which is uniform.
  return amdgpu::ScaledMFMAOp::create(
      b, loc, acc.getType(), b.getI32IntegerAttr(getM()),
      b.getI32IntegerAttr(getN()), b.getI32IntegerAttr(getK()), a, b_, acc,
      scaleA, scaleB, b.getI32IntegerAttr(0), b.getI32IntegerAttr(0));
}
