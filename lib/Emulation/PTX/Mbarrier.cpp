//===- Mbarrier.cpp - The mbarrier object's phases ------------------------===//
//
// Sources: PTX ISA §9.7.13.15 "mbarrier":
//  - §9.7.13.15.2 "Contents of the mbarrier object": current phase, pending
//    arrival count, expected arrival count, tx-count; §9.7.13.15.1 an
//    8-byte, 8-byte aligned object in shared memory.
//  - §9.7.13.15.9 "mbarrier.init": phase 0, expected and pending counts =
//    count, tx-count 0; count in [1, 2^20 - 1].
//  - §9.7.13.15.5 "Tracking asynchronous operations": expect-tx increases
//    the tx-count, complete-tx decreases it; §9.7.13.15.6 "Phase completion":
//    the current phase completes when the pending arrival count and the
//    tx-count are both zero; the phase then advances and the pending count
//    is reinitialized to the expected count.
//  - §9.7.13.15.7 "arrive-on": decrements the pending count by count (1 by
//    default); §9.7.13.15.13 mbarrier.arrive returns an opaque state of the
//    phase before the arrive; arrive.expect_tx is expect-tx then arrive-on.
//  - §9.7.13.15.16 "test_wait / try_wait .parity": waits for the completion
//    of the phase whose parity is phaseParity (the current or the
//    immediately preceding phase): complete iff the current phase's parity
//    differs.
//
// The state token the model returns is the phase number before the arrive.
//
//===----------------------------------------------------------------------===//

#include "fp4train/Emulation/Tcgen05.h"

#include "llvm/Support/FormatVariadic.h"

using namespace fp4train::emulation::ptx;

namespace {
constexpr uint32_t kMaxCount = (1u << 20) - 1;
} // namespace

std::string Mbarrier::init(uint32_t count) {
  if (count < 1 || count > kMaxCount)
    return llvm::formatv("mbarrier.init count {0} is outside [1, 2^20 - 1]",
                         count);
  initialized = true;
  phase = 0;
  expected = pending = count;
  txCount = 0;
  return {};
}

bool Mbarrier::maybeComplete() {
  if (pending != 0 || txCount != 0)
    return false;
  ++phase;
  pending = expected;
  return true;
}

std::string Mbarrier::arrive(uint32_t count, uint64_t *state, bool *completed) {
  *completed = false;
  if (!initialized)
    return "arrive on an mbarrier that mbarrier.init has not initialized";
  if (count < 1 || count > pending)
    return llvm::formatv("arrive with count {0} on an mbarrier with {1} "
                         "pending arrivals in phase {2}",
                         count, pending, phase);
  *state = phase;
  pending -= count;
  *completed = maybeComplete();
  return {};
}

std::string Mbarrier::expectTx(uint32_t bytes) {
  if (!initialized)
    return "expect-tx on an mbarrier that mbarrier.init has not initialized";
  if (txCount + int64_t{bytes} > kMaxCount)
    return llvm::formatv("expect-tx of {0} bytes overflows the tx-count {1}",
                         bytes, txCount);
  txCount += bytes;
  return {};
}

std::string Mbarrier::completeTx(uint32_t bytes, bool *completed) {
  *completed = false;
  if (!initialized)
    return "complete-tx on an mbarrier that mbarrier.init has not initialized";
  if (txCount - int64_t{bytes} < -int64_t{kMaxCount})
    return llvm::formatv("complete-tx of {0} bytes underflows the tx-count "
                         "{1}",
                         bytes, txCount);
  txCount -= bytes;
  *completed = maybeComplete();
  return {};
}
