//===- ControlFlow.cpp - scf and gpu ops under the execution mask ---------===//
//
// scf.if runs each branch under its lanes' mask, scf.for keeps per-lane
// induction variables and runs while any lane is in range; the gpu ops read
// the workgroup's geometry and synchronize it.
//
//===----------------------------------------------------------------------===//

#include "Executor.h"

#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/FormatVariadic.h"

using namespace mlir;
using namespace mlir::fp4train::emulation::detail;

int64_t Executor::getThreadId(unsigned lane, unsigned dim) const {
  const int64_t x = lane % blockDim[0];
  const int64_t y = (lane / blockDim[0]) % blockDim[1];
  const int64_t z = lane / (blockDim[0] * blockDim[1]);
  return dim == 0 ? x : dim == 1 ? y : z;
}

LogicalResult Executor::barrier(Operation *op, const Mask &mask) {
  if (!kernel)
    return fail(op, "barrier outside a kernel");
  // Every subgroup must arrive (s_barrier and bar.sync count waves/warps).
  for (unsigned subgroup = 0; subgroup < getNumSubgroups(); ++subgroup) {
    auto [first, end] = getSubgroupLanes(subgroup);
    if (std::find(mask.begin() + first, mask.begin() + end, 1) ==
        mask.begin() + end)
      return fail(op,
                  llvm::formatv("{0} {1} does not reach the barrier the "
                                "others wait at",
                                instructionSet.getSubgroupTerm(), subgroup));
  }
  ++epoch;
  ++stats.barriers;
  return success();
}

LogicalResult Executor::executeGPU(Operation &op, const Mask &mask) {
  // An index of the launch, per lane.
  auto indexValue = [&](auto perLane) -> LogicalResult {
    if (!kernel)
      return fail(&op, "GPU index op outside a kernel");
    Lanes &out = define(op.getResult(0));
    for (unsigned lane = 0; lane < lanes; ++lane)
      out.at(lane) = static_cast<Word>(perLane(lane));
    return success();
  };
  auto dimension = [](gpu::Dimension d) { return static_cast<unsigned>(d); };
  return llvm::TypeSwitch<Operation *, LogicalResult>(&op)
      .Case([&](gpu::ThreadIdOp id) {
        return indexValue([&](unsigned lane) {
          return getThreadId(lane, dimension(id.getDimension()));
        });
      })
      .Case([&](gpu::BlockIdOp id) {
        return indexValue(
            [&](unsigned) { return blockId[dimension(id.getDimension())]; });
      })
      .Case([&](gpu::BlockDimOp id) {
        return indexValue(
            [&](unsigned) { return blockDim[dimension(id.getDimension())]; });
      })
      .Case([&](gpu::GridDimOp id) {
        return indexValue(
            [&](unsigned) { return gridDim[dimension(id.getDimension())]; });
      })
      // Clusters (a launch without them has clusters of one workgroup).
      .Case([&](gpu::ClusterIdOp id) {
        const unsigned d = dimension(id.getDimension());
        return indexValue(
            [&](unsigned) { return blockId[d] / cluster->dim[d]; });
      })
      .Case([&](gpu::ClusterDimOp id) {
        const unsigned d = dimension(id.getDimension());
        return indexValue(
            [&](unsigned) { return gridDim[d] / cluster->dim[d]; });
      })
      .Case([&](gpu::ClusterBlockIdOp id) {
        const unsigned d = dimension(id.getDimension());
        return indexValue(
            [&](unsigned) { return blockId[d] % cluster->dim[d]; });
      })
      .Case([&](gpu::ClusterDimBlocksOp id) {
        const unsigned d = dimension(id.getDimension());
        return indexValue([&](unsigned) { return cluster->dim[d]; });
      })
      .Case([&](gpu::LaneIdOp) {
        return indexValue([&](unsigned lane) { return lane % subgroupSize; });
      })
      .Case([&](gpu::SubgroupIdOp) {
        return indexValue([&](unsigned lane) { return lane / subgroupSize; });
      })
      .Case([&](gpu::NumSubgroupsOp) {
        return indexValue([&](unsigned) { return getNumSubgroups(); });
      })
      .Case([&](gpu::SubgroupSizeOp) {
        return indexValue([&](unsigned) { return subgroupSize; });
      })
      .Case([&](gpu::DynamicSharedMemoryOp dynamic) -> LogicalResult {
        // The launch's dynamic shared memory as a memref<?xi8> (the op's
        // only result type).
        if (!kernel || !dynamicShared)
          return fail(&op, "gpu.dynamic_shared_memory in a launch without "
                           "dynamic " +
                               instructionSet.getSharedMemoryTerm());
        View view;
        view.memory = dynamicShared;
        view.elementBytes = 1;
        view.sizes = {static_cast<int64_t>(dynamicShared->bytes.size())};
        view.strides = {1};
        views[dynamic.getResult()] = std::move(view);
        return success();
      })
      .Case([&](gpu::BarrierOp) { return barrier(&op, mask); })
      .Case([&](gpu::LaunchFuncOp launchOp) { return launch(launchOp); })
      // Device memory (synchronous forms: what fp4train-gpu-device-memory
      // emits; gpu-async-region runs after the form the emulator takes).
      .Case([&](gpu::AllocOp alloc) -> LogicalResult {
        MemRefType type = alloc.getType();
        if (kernel || alloc.getAsyncToken() || !type.hasStaticShape() ||
            !type.getLayout().isIdentity())
          return fail(&op, "only synchronous host allocations of static "
                           "identity-layout memrefs");
        View view = allocate(type, /*shared=*/false);
        view.memory->device = true;
        // Fresh device memory holds garbage: a kernel that reads a buffer
        // nothing copied in sees NaN / 0xFF codes, not the host's data.
        std::fill(view.memory->bytes.begin(), view.memory->bytes.end(),
                  uint8_t{0xFF});
        views[alloc.getMemref()] = std::move(view);
        return success();
      })
      .Case([&](gpu::MemcpyOp copy) -> LogicalResult {
        if (kernel || copy.getAsyncToken())
          return fail(&op, "only synchronous host copies");
        return copyElements(&op, views[copy.getSrc()], views[copy.getDst()]);
      })
      .Case([&](gpu::DeallocOp dealloc) -> LogicalResult {
        if (kernel || dealloc.getAsyncToken())
          return fail(&op, "only synchronous host deallocations");
        if (!views[dealloc.getMemref()].memory->device)
          return fail(&op, "gpu.dealloc of host memory");
        return success();
      })
      .Default([&](Operation *) { return failUnsupported(&op); });
}

//===----------------------------------------------------------------------===//
// scf
//===----------------------------------------------------------------------===//

LogicalResult Executor::executeFor(scf::ForOp op, const Mask &mask) {
  const unsigned bits = getElementBits(op.getInductionVar().getType());
  const bool isUnsigned = op.getUnsignedCmp();
  // Copies: the body defines values, which may move the map's entries.
  Lanes iv = get(op.getLowerBound());
  const Lanes upper = get(op.getUpperBound());
  const Lanes step = get(op.getStep());
  SmallVector<Lanes> iterValues;
  for (Value init : op.getInitArgs())
    iterValues.push_back(get(init));

  auto below = [&](unsigned lane) {
    return isUnsigned ? iv.at(lane) < upper.at(lane)
                      : signExtend(iv.at(lane), bits) <
                            signExtend(upper.at(lane), bits);
  };
  Mask active(lanes);
  for (unsigned lane = 0; lane < lanes; ++lane)
    active[lane] = mask[lane] && below(lane);
  Block &body = *op.getBody();
  while (any(active)) {
    values[op.getInductionVar()] = iv;
    for (auto [argument, value] : llvm::zip(op.getRegionIterArgs(), iterValues))
      values[argument] = value;
    SmallVector<Value> yielded;
    if (failed(run(body, active, &yielded)))
      return failure();
    for (auto [k, value] : llvm::enumerate(yielded)) {
      const Lanes &next = get(value);
      for (unsigned lane = 0; lane < lanes; ++lane)
        if (active[lane])
          for (unsigned i = 0; i < next.width; ++i)
            iterValues[k].at(lane, i) = next.at(lane, i);
    }
    for (unsigned lane = 0; lane < lanes; ++lane) {
      if (!active[lane])
        continue;
      iv.at(lane) = truncate(iv.at(lane) + step.at(lane), bits);
      active[lane] = below(lane);
    }
  }
  for (auto [result, value] : llvm::zip(op.getResults(), iterValues))
    values[result] = std::move(value);
  return success();
}

LogicalResult Executor::executeIf(scf::IfOp op, const Mask &mask) {
  const Lanes condition = get(op.getCondition());
  Mask thenMask(lanes), elseMask(lanes);
  for (unsigned lane = 0; lane < lanes; ++lane) {
    thenMask[lane] = mask[lane] && condition.at(lane);
    elseMask[lane] = mask[lane] && !condition.at(lane);
  }
  SmallVector<Lanes> thenValues, elseValues;
  auto branch = [&](Region &region, const Mask &branchMask,
                    SmallVectorImpl<Lanes> &results) -> LogicalResult {
    if (region.empty() || !any(branchMask))
      return success();
    SmallVector<Value> yielded;
    if (failed(run(region.front(), branchMask, &yielded)))
      return failure();
    for (Value v : yielded)
      results.push_back(get(v));
    return success();
  };
  if (kernel && instructionSet.runsBranchesConcurrently() &&
      !op.getElseRegion().empty() && any(thenMask) && any(elseMask)) {
    // Both sides as fibers (Fibers.h): the then side runs first, the else
    // side when the then side waits or ends.
    if (!fibers)
      fibers = std::make_shared<FiberScheduler>();
    std::vector<LogicalResult> results = fibers->spawn(
        {[&] { return branch(op.getThenRegion(), thenMask, thenValues); },
         [&] { return branch(op.getElseRegion(), elseMask, elseValues); }});
    if (failed(results[0]) || failed(results[1]))
      return failure();
  } else if (failed(branch(op.getThenRegion(), thenMask, thenValues)) ||
             failed(branch(op.getElseRegion(), elseMask, elseValues))) {
    return failure();
  }
  for (auto [k, result] : llvm::enumerate(op.getResults())) {
    Lanes merged(lanes, getWidth(result.getType()));
    for (unsigned lane = 0; lane < lanes; ++lane) {
      const bool fromThen = condition.at(lane);
      const SmallVectorImpl<Lanes> &source = fromThen ? thenValues : elseValues;
      if (source.empty())
        continue;
      for (unsigned i = 0; i < merged.width; ++i)
        merged.at(lane, i) = source[k].at(lane, i);
    }
    values[result] = std::move(merged);
  }
  return success();
}
