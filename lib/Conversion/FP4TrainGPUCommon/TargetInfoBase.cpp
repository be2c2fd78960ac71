//===- TargetInfoBase.cpp - GPU primitives the kernel builders use --------===//

#include "fp4train/Conversion/FP4TrainGPUCommon/TargetInfoBase.h"

#include "fp4train/Dialect/FP4Train/IR/FP4TrainOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mlir::fp4train;

TargetInfoBase::~TargetInfoBase() = default;

Attribute TargetInfoBase::getSharedMemorySpace(MLIRContext *context) const {
  return gpu::AddressSpaceAttr::get(context, gpu::AddressSpace::Workgroup);
}

void TargetInfoBase::buildBarrier(OpBuilder &b, Location loc) const {
  gpu::BarrierOp::create(b, loc);
}

Value TargetInfoBase::buildShuffleXor(OpBuilder &b, Location loc, Value value,
                                      int64_t laneMask) const {
  auto i32 = [&](int64_t v) {
    return arith::ConstantIntOp::create(b, loc, b.getI32Type(), v);
  };
  return gpu::ShuffleOp::create(b, loc, value, i32(laneMask),
                                i32(getSubgroupSize()), gpu::ShuffleMode::XOR)
      .getShuffleResult();
}

Value TargetInfoBase::getLaneId(OpBuilder &b, Location loc, Value tid) const {
  return arith::RemUIOp::create(
      b, loc, tid, arith::ConstantIndexOp::create(b, loc, getSubgroupSize()));
}

Value TargetInfoBase::getSubgroupId(OpBuilder &b, Location loc,
                                    Value tid) const {
  return arith::DivUIOp::create(
      b, loc, tid, arith::ConstantIndexOp::create(b, loc, getSubgroupSize()));
}

Value TargetInfoBase::packStoredE2M1Quad(ImplicitLocOpBuilder &b,
                                         ArrayRef<Value> codes) {
  Type i8 = b.getI8Type();
  Value four = arith::ConstantIntOp::create(b, i8, 4);
  SmallVector<Value, 2> bytes;
  for (int64_t j = 0; j < 2; ++j)
    bytes.push_back(arith::OrIOp::create(
        b, codes[2 * j], arith::ShLIOp::create(b, codes[2 * j + 1], four)));
  return vector::FromElementsOp::create(b, VectorType::get({2}, i8), bytes);
}

std::optional<SmallVector<Value>>
TargetInfoBase::buildConvertRNE(ImplicitLocOpBuilder &, Type,
                                const ScaledBlock &) const {
  return std::nullopt;
}

std::optional<SmallVector<Value>> TargetInfoBase::buildConvertStochasticE2M1(
    ImplicitLocOpBuilder &, const ScaledBlock &, ArrayRef<Value>) const {
  return std::nullopt;
}

SmallVector<Value> TargetInfoBase::scaleBlock(ImplicitLocOpBuilder &b,
                                              const ScaledBlock &block) {
  // One f32 product per element, as the expansion's x * factor.
  Value factors = vector::BroadcastOp::create(
      b, VectorType::get({4}, b.getF32Type()), block.factor());
  SmallVector<Value> v;
  for (Value q : block.x)
    v.push_back(arith::MulFOp::create(b, q, factors));
  return v;
}

bool TargetInfoBase::isQuantizeOnTarget(QuantizeOp) const { return true; }
