//===- MbarrierOps.cpp - The mbarrier ops ---------------------------------===//
//
// mbarrier.init, mbarrier.arrive, mbarrier.arrive.expect_tx,
// mbarrier.expect_tx, mbarrier.complete_tx and mbarrier.try_wait.parity of
// the sm_100a/sm_103a instruction set on the mbarrier model of Mbarrier.cpp
// (PTX ISA §9.7.13.15 "mbarrier"), per active thread, and the arrive-on and
// complete-tx that tcgen05.commit and cp.async.bulk perform. The phase that
// completes completes the asynchronous operations committed to it; a
// try_wait.parity on a phase that has not completed lets the other roles of
// a warp-specialized kernel, and the other CTAs of the cluster, run (the
// execution model: Tcgen05Instructions.cpp). Arrives and transaction counts
// take .shared::cluster addresses (another CTA's mbarrier, from mapa);
// mbarrier.init and the waits only the executing CTA's own.
//
//===----------------------------------------------------------------------===//

#include "Tcgen05Common.h"

#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/FormatVariadic.h"

namespace mlir::fp4train::emulation::tcgen05 {

//===----------------------------------------------------------------------===//
// mbarrier
//===----------------------------------------------------------------------===//

FailureOr<BarrierRef> getBarrier(ExecutionContext &context, uint64_t address) {
  if (address % 8)
    return context.fail(llvm::formatv("mbarrier address {0} is not 8-byte "
                                      "aligned",
                                      address));
  FailureOr<ClusterAddress> at =
      decodeClusterAddress(context, address, "an mbarrier operation");
  if (failed(at) || failed(context.checkSharedAddress(at->address, 8)))
    return failure();
  // sm_90a's and sm_100a's workgroup states are both MbarrierStates.
  auto &state =
      *static_cast<nvvm::MbarrierState *>(context.getWorkgroupState(at->rank));
  return BarrierRef{&state, at->address, &state.barriers[at->address],
                    at->rank};
}

/// An arrive-on of `count` on the barrier at `address` by `lane`; `token`
/// gets the state before it.
LogicalResult arriveOn(ExecutionContext &context, uint64_t address,
                       uint32_t count, uint64_t *token) {
  FailureOr<BarrierRef> barrier = getBarrier(context, address);
  if (failed(barrier))
    return failure();
  bool completed;
  if (failed(
          check(context, barrier->barrier->arrive(count, token, &completed))))
    return failure();
  if (completed)
    barrier->state->completePhase(barrier->address);
  return success();
}

/// A complete-tx of `bytes` on the barrier at `address`.
LogicalResult completeTransaction(ExecutionContext &context, uint64_t address,
                                  uint32_t bytes) {
  FailureOr<BarrierRef> barrier = getBarrier(context, address);
  if (failed(barrier))
    return failure();
  bool completed;
  if (failed(check(context, barrier->barrier->completeTx(bytes, &completed))))
    return failure();
  if (completed)
    barrier->state->completePhase(barrier->address);
  return success();
}

/// Calls `body(lane)` for the active lanes whose optional PTX predicate
/// holds.
static LogicalResult
forEachPredicatedLane(ExecutionContext &context, Value predicate,
                      llvm::function_ref<LogicalResult(unsigned)> body) {
  return forEachIssuingLane(context, [&](unsigned lane) -> LogicalResult {
    if (predicate && !(context.getWord(predicate, lane) & 1))
      return success();
    return body(lane);
  });
}

/// The barrier at `lane`'s `address`, which must be the executing CTA's:
/// mbarrier.init and the waits take .shared::cta addresses only (PTX ISA
/// §9.7.13.15.16: "If the address ... does not fall within the address
/// window of .shared::cta state space then the behavior is undefined").
static FailureOr<BarrierRef> getLocalBarrier(ExecutionContext &context,
                                             Value address, unsigned lane,
                                             StringRef what) {
  FailureOr<BarrierRef> barrier =
      getBarrier(context, getWord64(context, address, lane));
  if (failed(barrier))
    return failure();
  if (barrier->rank != context.getClusterRank())
    return context.fail(llvm::formatv(
        "mbarrier.{0} on an mbarrier of CTA {1} of the cluster: it takes the "
        "executing CTA's own (.shared::cta) mbarriers only",
        what, barrier->rank));
  return barrier;
}

LogicalResult executeMbarrier(Operation &op, ExecutionContext &context) {
  return llvm::TypeSwitch<Operation *, LogicalResult>(&op)
      .Case([&](NVVM::MBarrierInitOp init) {
        return forEachPredicatedLane(
            context, init.getPredicate(), [&](unsigned lane) -> LogicalResult {
              FailureOr<BarrierRef> barrier =
                  getLocalBarrier(context, init.getAddr(), lane, "init");
              if (failed(barrier))
                return failure();
              return check(context, barrier->barrier->init(context.getWord(
                                        init.getCount(), lane)));
            });
      })
      .Case([&](NVVM::MBarrierArriveOp arrive) {
        LaneValues *out =
            arrive.getRes() ? &context.define(arrive.getRes()) : nullptr;
        return forEachIssuingLane(context, [&](unsigned lane) -> LogicalResult {
          uint64_t token;
          const uint32_t count =
              arrive.getCount() ? context.getWord(arrive.getCount(), lane) : 1;
          const uint64_t at = getWord64(context, arrive.getAddr(), lane);
          // §9.7.13.15.13: an arrive on another CTA's mbarrier returns no
          // state (its destination is the sink `_`).
          if (out) {
            FailureOr<BarrierRef> barrier = getBarrier(context, at);
            if (failed(barrier))
              return failure();
            if (barrier->rank != context.getClusterRank())
              return context.fail("mbarrier.arrive on another CTA's mbarrier "
                                  "cannot return a state");
          }
          if (failed(arriveOn(context, at, count, &token)))
            return failure();
          if (out)
            out->at(lane) = token;
          return success();
        });
      })
      .Case([&](NVVM::MBarrierArriveExpectTxOp arrive) {
        LaneValues *out =
            arrive.getRes() ? &context.define(arrive.getRes()) : nullptr;
        return forEachPredicatedLane(
            context, arrive.getPredicate(),
            [&](unsigned lane) -> LogicalResult {
              const uint64_t at = getWord64(context, arrive.getAddr(), lane);
              FailureOr<BarrierRef> barrier = getBarrier(context, at);
              if (failed(barrier) ||
                  failed(
                      check(context, barrier->barrier->expectTx(context.getWord(
                                         arrive.getTxcount(), lane)))))
                return failure();
              uint64_t token;
              if (failed(arriveOn(context, at, 1, &token)))
                return failure();
              if (out)
                out->at(lane) = token;
              return success();
            });
      })
      .Case([&](NVVM::MBarrierExpectTxOp expect) {
        return forEachIssuingLane(context, [&](unsigned lane) -> LogicalResult {
          FailureOr<BarrierRef> barrier =
              getBarrier(context, getWord64(context, expect.getAddr(), lane));
          if (failed(barrier))
            return failure();
          return check(context, barrier->barrier->expectTx(context.getWord(
                                    expect.getTxcount(), lane)));
        });
      })
      .Case([&](NVVM::MBarrierCompleteTxOp complete) {
        return forEachIssuingLane(context, [&](unsigned lane) {
          return completeTransaction(
              context, getWord64(context, complete.getAddr(), lane),
              context.getWord(complete.getTxcount(), lane));
        });
      })
      .Case([&](NVVM::MBarrierTryWaitParityOp wait) {
        return forEachIssuingLane(context, [&](unsigned lane) -> LogicalResult {
          FailureOr<BarrierRef> barrier =
              getLocalBarrier(context, wait.getAddr(), lane, "try_wait");
          if (failed(barrier))
            return failure();
          const uint64_t at = barrier->address;
          if (!barrier->barrier->isInitialized())
            return context.fail(llvm::formatv(
                "mbarrier.try_wait.parity on shared address {0}, which "
                "mbarrier.init has not initialized",
                at));
          const uint32_t parity = context.getWord(wait.getPhase(), lane) & 1;
          // The other roles of a warp-specialized kernel (and the other
          // CTAs of the cluster) may complete it meanwhile
          // (runsBranchesConcurrently).
          const ptx::Mbarrier *object = barrier->barrier;
          if (context.waitUntil(
                  [object, parity] { return object->isPhaseComplete(parity); }))
            return success();
          return context.fail(llvm::formatv(
              "thread {0} waits for phase parity {1} of the mbarrier at shared "
              "address {2}, which is in phase {3} with {4} pending arrivals "
              "and tx-count {5}: no other thread of the cluster can complete "
              "it (a missing arrive, commit or complete-tx)",
              lane, parity, at, object->getPhase(), object->getPending(),
              object->getTxCount()));
        });
      })
      .Default([&](Operation *) { return context.fail("not an mbarrier op"); });
}

} // namespace mlir::fp4train::emulation::tcgen05
