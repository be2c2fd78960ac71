//===- Tcgen05MemoryOps.cpp - tcgen05 alloc, dealloc, cp, ld, st ops ------===//
//
// The tensor-memory ops of the sm_100a/sm_103a instruction set on the
// models of fp4train/Emulation/Tcgen05.h: tcgen05.alloc, tcgen05.dealloc and
// tcgen05.relinquish_alloc_permit (Tcgen05Alloc.cpp, PTX ISA §9.7.16.7.1),
// tcgen05.cp (Tcgen05Cp.cpp, §9.7.16.9.2) and tcgen05.ld / tcgen05.st
// (Tcgen05LdSt.cpp, §9.7.16.8.3 and §9.7.16.8.4). alloc, dealloc,
// relinquish_alloc_permit, ld and st are warp-collective (once per warp,
// all 32 lanes active, uniform operands); tcgen05.cp is issued by each
// active thread and the cells it writes stay pending until a tcgen05.commit
// (the execution model: Tcgen05Instructions.cpp). tcgen05.fence and
// tcgen05.wait are no-ops, executed by the dispatcher.
//
//===----------------------------------------------------------------------===//

#include "Tcgen05Common.h"

#include "llvm/Support/FormatVariadic.h"

#include <functional>
#include <vector>

namespace mlir::fp4train::emulation::tcgen05 {

//===----------------------------------------------------------------------===//
// Allocation
//===----------------------------------------------------------------------===//

/// The rendezvous of the pair's two warps in their `count`-th collective
/// allocation (`allocs`) or deallocation: waits until the peer CTA has
/// performed as many.
static LogicalResult meetPeer(ExecutionContext &context, StringRef what,
                              const std::function<size_t(Tcgen05State &)> &done,
                              size_t count) {
  const unsigned peer = context.getClusterRank() ^ 1;
  Tcgen05State &peerState = getState(context, peer);
  if (context.waitUntil([&] { return done(peerState) >= count; }))
    return success();
  return context.fail(llvm::formatv(
      "{0}.cta_group::2: the peer CTA (rank {1}) does not take part (one warp "
      "of each CTA of the pair performs it together)",
      what, peer));
}

LogicalResult executeAlloc(ExecutionContext &context, bool ctaGroup2,
                           Value address, Value nCols) {
  Tcgen05State &state = getState(context);
  return context.forEachWholeSubgroup(
      "tcgen05.alloc", [&](unsigned subgroup, unsigned first) -> LogicalResult {
        if (failed(context.requireUniform({address, nCols}, first,
                                          "tcgen05.alloc operands")))
          return failure();
        uint32_t tmemAddress;
        if (failed(
                check(context, state.tmem.alloc(context.getWord(nCols, first),
                                                &tmemAddress))))
          return failure();
        if (ctaGroup2) {
          state.pairAllocs.push_back(tmemAddress);
          const size_t count = state.pairAllocs.size();
          if (failed(meetPeer(
                  context, "tcgen05.alloc",
                  [](Tcgen05State &s) { return s.pairAllocs.size(); }, count)))
            return failure();
          const uint32_t peerAddress =
              getState(context, context.getClusterRank() ^ 1)
                  .pairAllocs[count - 1];
          if (peerAddress != tmemAddress)
            return context.fail(llvm::formatv(
                "tcgen05.alloc.cta_group::2 got column {0} here and {1} in the "
                "peer CTA: the pair's tensor memory must be allocated alike",
                tmemAddress & 0xFFFF, peerAddress & 0xFFFF));
        }
        const uint8_t bytes[4] = {static_cast<uint8_t>(tmemAddress),
                                  static_cast<uint8_t>(tmemAddress >> 8),
                                  static_cast<uint8_t>(tmemAddress >> 16),
                                  static_cast<uint8_t>(tmemAddress >> 24)};
        return context.writeShared(getWord64(context, address, first), 4,
                                   subgroup, bytes);
      });
}

LogicalResult executeDealloc(ExecutionContext &context, bool ctaGroup2,
                             Value taddr, Value nCols) {
  Tcgen05State &state = getState(context);
  return context.forEachWholeSubgroup(
      "tcgen05.dealloc", [&](unsigned, unsigned first) -> LogicalResult {
        if (failed(context.requireUniform({taddr, nCols}, first,
                                          "tcgen05.dealloc operands")))
          return failure();
        if (failed(check(context,
                         state.tmem.dealloc(context.getWord(taddr, first),
                                            context.getWord(nCols, first)))))
          return failure();
        if (!ctaGroup2)
          return success();
        return meetPeer(
            context, "tcgen05.dealloc",
            [](Tcgen05State &s) -> size_t { return s.pairDeallocs; },
            ++state.pairDeallocs);
      });
}

LogicalResult executeRelinquish(ExecutionContext &context) {
  Tcgen05State &state = getState(context);
  return context.forEachWholeSubgroup("tcgen05.relinquish_alloc_permit",
                                      [&](unsigned, unsigned) {
                                        state.tmem.relinquishAllocPermit();
                                        return success();
                                      });
}

//===----------------------------------------------------------------------===//
// tcgen05.cp
//===----------------------------------------------------------------------===//

LogicalResult executeCp(ExecutionContext &context, ptx::CpShape shape,
                        ptx::CpMulticast multicast, bool ctaGroup2, Value taddr,
                        Value desc) {
  Tcgen05State &state = getState(context);
  return forEachIssuingLane(context, [&](unsigned lane) -> LogicalResult {
    const uint32_t op = newAsyncOp(context, state);
    const uint32_t at = context.getWord(taddr, lane);
    const uint64_t sdesc = getWord64(context, desc, lane);
    if (!ctaGroup2) {
      CheckedSharedMemory smem(context, lane / context.getSubgroupSize());
      if (failed(check(
              context,
              ptx::tcgen05Cp(shape, multicast, at, sdesc, state.tmem, smem, op),
              &smem)))
        return failure();
    } else {
      FailureOr<unsigned> even = getPairEvenRank(context, "tcgen05.cp's pair");
      if (failed(even))
        return failure();
      for (unsigned rank : {*even, *even + 1}) {
        CheckedSharedMemory smem =
            CheckedSharedMemory::ofClusterMember(context, rank);
        std::string why =
            ptx::tcgen05Cp(shape, multicast, at, sdesc,
                           getState(context, rank).tmem, smem, op);
        if (!why.empty())
          return smem.failedInCore
                     ? failure()
                     : context.fail(llvm::formatv("CTA {0} of the pair: {1}",
                                                  rank, why));
      }
    }
    state.uncommitted[lane].push_back(op);
    return success();
  });
}

//===----------------------------------------------------------------------===//
// tcgen05.ld / tcgen05.st
//===----------------------------------------------------------------------===//

/// The model's shape of a tcgen05.ld/st op (`offset`: the 16x32bx2 half
/// split offset, not modelled).
FailureOr<ptx::LdStShape> getLdStShape(ExecutionContext &context,
                                       NVVM::Tcgen05LdStShape shape,
                                       Value offset) {
  if (offset)
    return context.fail("tcgen05.ld/st.16x32bx2 is not modelled");
  switch (shape) {
  case NVVM::Tcgen05LdStShape::SHAPE_32X32B:
    return ptx::LdStShape::S32x32b;
  case NVVM::Tcgen05LdStShape::SHAPE_16X256B:
    return ptx::LdStShape::S16x256b;
  default:
    return context.fail(llvm::formatv(
        "tcgen05.ld/st shape {0} is not modelled (32x32b and 16x256b are)",
        NVVM::stringifyTcgen05LdStShape(shape)));
  }
}

/// The .num of an access of `registers` 32-bit registers per thread.
static FailureOr<unsigned> getNum(ExecutionContext &context,
                                  ptx::LdStShape shape, unsigned registers) {
  if (shape == ptx::LdStShape::S16x256b) {
    if (registers % 4)
      return context.fail("tcgen05.ld/st.16x256b moves 4 registers per .num");
    return registers / 4;
  }
  return registers;
}

LogicalResult executeLd(ExecutionContext &context, ptx::LdStShape shape,
                        bool pack, Value taddr, Value result) {
  if (pack)
    return context.fail("tcgen05.ld .pack::16b is not modelled");
  Tcgen05State &state = getState(context);
  LaneValues &out = context.define(result);
  FailureOr<unsigned> num = getNum(context, shape, out.width);
  if (failed(num))
    return failure();
  return context.forEachWholeSubgroup(
      "tcgen05.ld", [&](unsigned subgroup, unsigned first) -> LogicalResult {
        if (failed(
                context.requireUniform({taddr}, first, "tcgen05.ld addresses")))
          return failure();
        std::vector<uint32_t> regs;
        if (failed(
                check(context,
                      ptx::tcgen05Ld(shape, *num, context.getWord(taddr, first),
                                     subgroup % 4, state.tmem, &regs))))
          return failure();
        for (unsigned t = 0; t < ptx::kWarpSize; ++t)
          for (unsigned i = 0; i < out.width; ++i)
            out.at(first + t, i) = regs[size_t{t} * out.width + i];
        return success();
      });
}

LogicalResult executeSt(ExecutionContext &context, ptx::LdStShape shape,
                        bool unpack, Value taddr, Value value) {
  if (unpack)
    return context.fail("tcgen05.st .unpack::16b is not modelled");
  Tcgen05State &state = getState(context);
  const unsigned width = context.get(value).width;
  FailureOr<unsigned> num = getNum(context, shape, width);
  if (failed(num))
    return failure();
  return context.forEachWholeSubgroup(
      "tcgen05.st", [&](unsigned subgroup, unsigned first) -> LogicalResult {
        if (failed(
                context.requireUniform({taddr}, first, "tcgen05.st addresses")))
          return failure();
        std::vector<uint32_t> regs(size_t{ptx::kWarpSize} * width);
        for (unsigned t = 0; t < ptx::kWarpSize; ++t)
          for (unsigned i = 0; i < width; ++i)
            regs[size_t{t} * width + i] = context.getWord(value, first + t, i);
        return check(context,
                     ptx::tcgen05St(shape, *num, context.getWord(taddr, first),
                                    subgroup % 4, regs, state.tmem));
      });
}

} // namespace mlir::fp4train::emulation::tcgen05
