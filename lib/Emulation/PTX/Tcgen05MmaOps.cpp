//===- Tcgen05MmaOps.cpp - tcgen05.mma ... .block_scale, tcgen05.commit ---===//
//
// tcgen05.mma.cta_group::1.kind::{mxf8f6f4,mxf4,mxf4nvf4}.block_scale of the
// sm_100a/sm_103a instruction set on the model of Tcgen05Mma.cpp (PTX ISA
// §9.7.16.10.9.1, the scale_vec of §9.7.16.10.7 "Block Scaling"), and
// tcgen05.commit, which attaches the asynchronous operations (mma, cp) the
// thread has issued to the current phase of an mbarrier and arrives on it
// (MbarrierOps.cpp). Both are issued by each active thread (the execution
// model: Tcgen05Instructions.cpp).
//
//===----------------------------------------------------------------------===//

#include "Tcgen05Common.h"

#include "NVVMCommon.h"

#include "llvm/Support/FormatVariadic.h"

#include <vector>

namespace mlir::fp4train::emulation::tcgen05 {

//===----------------------------------------------------------------------===//
// tcgen05.mma ... .block_scale, tcgen05.commit
//===----------------------------------------------------------------------===//

/// The scale_vec of an MMA from its kind and .block16 / .block32.
static FailureOr<ptx::ScaleVec>
getScaleVec(ExecutionContext &context, NVVM::MMABlockScaleKind kind,
            NVVM::Tcgen05MMABlockScale blockScale) {
  using BS = NVVM::Tcgen05MMABlockScale;
  switch (kind) {
  case NVVM::MMABlockScaleKind::MXF8F6F4:
    if (blockScale == BS::BLOCK16)
      return context.fail("kind::mxf8f6f4 takes .block32 (scale_vec::1X) only");
    return ptx::ScaleVec::X1;
  case NVVM::MMABlockScaleKind::MXF4:
    if (blockScale == BS::BLOCK16)
      return context.fail("kind::mxf4 takes .block32 (scale_vec::2X) only");
    return ptx::ScaleVec::X2;
  case NVVM::MMABlockScaleKind::MXF4NVF4:
    if (blockScale == BS::DEFAULT)
      return context.fail("kind::mxf4nvf4 needs .block16 (scale_vec::4X) or "
                          ".block32 (scale_vec::2X)");
    return blockScale == BS::BLOCK16 ? ptx::ScaleVec::X4 : ptx::ScaleVec::X2;
  }
  return context.fail("unknown block-scale kind");
}

LogicalResult executeMma(ExecutionContext &context,
                         NVVM::MMABlockScaleKind kind,
                         NVVM::Tcgen05MMABlockScale blockScale, bool ctaGroup2,
                         const MmaValues &v) {
  FailureOr<ptx::ScaleVec> scaleVec = getScaleVec(context, kind, blockScale);
  if (failed(scaleVec))
    return failure();
  Tcgen05State &state = getState(context);
  const bool aInTensorMemory = isa<LLVM::LLVMPointerType>(v.a.getType());
  return forEachIssuingLane(context, [&](unsigned lane) -> LogicalResult {
    ptx::Tcgen05MmaOperands operands;
    operands.kind = nvvm::getModelKind(kind);
    operands.scaleVec = *scaleVec;
    operands.d = context.getWord(v.d, lane);
    operands.aInTensorMemory = aInTensorMemory;
    operands.a = getWord64(context, v.a, lane);
    operands.bDesc = getWord64(context, v.b, lane);
    operands.idesc = context.getWord(v.idesc, lane);
    operands.enableInputD = context.getWord(v.enableInputD, lane) & 1;
    operands.scaleA = context.getWord(v.scaleA, lane);
    operands.scaleB = context.getWord(v.scaleB, lane);
    const uint32_t op = newAsyncOp(context, state);
    if (!ctaGroup2) {
      CheckedSharedMemory smem(context, lane / context.getSubgroupSize());
      if (failed(
              check(context,
                    ptx::tcgen05MmaBlockScale(operands, state.tmem, smem, op),
                    &smem)))
        return failure();
    } else {
      // The pair's even CTA first.
      FailureOr<unsigned> even = getPairEvenRank(context, "tcgen05.mma's pair");
      if (failed(even))
        return failure();
      CheckedSharedMemory evenSmem =
          CheckedSharedMemory::ofClusterMember(context, *even);
      CheckedSharedMemory oddSmem =
          CheckedSharedMemory::ofClusterMember(context, *even + 1);
      ptx::TensorMemory *tmems[] = {&getState(context, *even).tmem,
                                    &getState(context, *even + 1).tmem};
      ptx::SharedMemory *smems[] = {&evenSmem, &oddSmem};
      std::string why =
          ptx::tcgen05MmaBlockScalePair(operands, tmems, smems, op);
      if (!why.empty())
        return evenSmem.failedInCore || oddSmem.failedInCore
                   ? failure()
                   : context.fail(why);
    }
    state.uncommitted[lane].push_back(op);
    ++context.getStats().mfmas;
    return success();
  });
}

LogicalResult executeCommit(ExecutionContext &context, Value address,
                            Value multicastMask) {
  Tcgen05State &state = getState(context);
  return forEachIssuingLane(context, [&](unsigned lane) -> LogicalResult {
    FailureOr<ClusterAddress> at = decodeClusterAddress(
        context, getWord64(context, address, lane), "tcgen05.commit");
    if (failed(at))
      return failure();
    // The destinations: the mbarrier at `address`, or with
    // .multicast::cluster the one at its offset in each CTA of the mask
    // (bit r: %cluster_ctarank r).
    SmallVector<unsigned> ranks = {at->rank};
    if (multicastMask) {
      FailureOr<SmallVector<unsigned>> multicast = getMulticastRanks(
          context, context.getWord(multicastMask, lane) & 0xFFFF,
          "tcgen05.commit's multicast mask");
      if (failed(multicast))
        return failure();
      ranks = std::move(*multicast);
    }
    SmallVector<uint64_t> targets;
    for (unsigned rank : ranks)
      targets.push_back(encodeClusterAddress(rank, at->address));
    for (uint64_t target : targets) {
      FailureOr<BarrierRef> barrier = getBarrier(context, target);
      if (failed(barrier))
        return failure();
      if (!barrier->barrier->isInitialized())
        return context.fail(llvm::formatv(
            "tcgen05.commit to the mbarrier at shared address {0} of CTA {1}, "
            "which mbarrier.init has not initialized",
            barrier->address, barrier->rank));
    }
    // The thread's operations so far complete with each barrier's phase
    // (they are already done: the arrive-on follows at once). A pair's
    // operation wrote both CTAs' tensor memory; each CTA's cells complete
    // with the phase of an mbarrier of its own that tracked it.
    std::vector<uint32_t> ops = std::move(state.uncommitted[lane]);
    state.uncommitted[lane].clear();
    for (uint64_t target : targets) {
      FailureOr<BarrierRef> barrier = getBarrier(context, target);
      // A tcgen05 kernel's CTAs all hold Tcgen05States.
      llvm::append_range(static_cast<Tcgen05State *>(barrier->state)
                             ->barrierOps[barrier->address],
                         ops);
      uint64_t token;
      if (failed(arriveOn(context, target, 1, &token)))
        return failure();
    }
    return success();
  });
}

} // namespace mlir::fp4train::emulation::tcgen05
