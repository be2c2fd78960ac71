//===- TargetInfoBase.cpp - GPU primitives the kernel builders use --------===//

#include "fp4train/Conversion/FP4TrainGPUCommon/TargetInfoBase.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"

using namespace mlir;
using namespace mlir::fp4train;

TargetInfoBase::~TargetInfoBase() = default;

Attribute TargetInfoBase::getSharedMemorySpace(MLIRContext *context) const {
  return gpu::AddressSpaceAttr::get(context, gpu::AddressSpace::Workgroup);
}

void TargetInfoBase::buildBarrier(OpBuilder &b, Location loc) const {
  gpu::BarrierOp::create(b, loc);
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

std::optional<SmallVector<Value>>
TargetInfoBase::buildConvertRNE(ImplicitLocOpBuilder &, Type,
                                ArrayRef<Value>) const {
  return std::nullopt;
}
