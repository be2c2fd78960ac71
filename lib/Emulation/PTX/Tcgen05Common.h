//===- Tcgen05Common.h - The sm_100a/sm_103a op files share -----*- C++ -*-===//
//
// Private to lib/Emulation/PTX: what the files of the sm_100a/sm_103a
// instruction set share: the per-CTA state (tensor memory, the mbarrier
// objects, the bookkeeping of asynchronous operations), the models' checked
// view of shared memory, small helpers, and the per-family execute functions
// that SM100InstructionSet (Tcgen05Instructions.cpp) dispatches to, each
// defined in the file its group names.
//
//===----------------------------------------------------------------------===//

#ifndef FP4TRAIN_LIB_EMULATION_PTX_TCGEN05COMMON_H
#define FP4TRAIN_LIB_EMULATION_PTX_TCGEN05COMMON_H

#include "NVVMCommon.h"

#include "fp4train/Emulation/Interpreter.h"
#include "fp4train/Emulation/Tcgen05.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "llvm/ADT/STLFunctionalExtras.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace mlir::fp4train::emulation::tcgen05 {

namespace ptx = ::fp4train::emulation::ptx;

//===----------------------------------------------------------------------===//
// Per-CTA state
//===----------------------------------------------------------------------===//

struct Tcgen05State final : public nvvm::MbarrierState {
  ptx::TensorMemory tmem;
  /// Asynchronous operations a commit attached to a barrier's current
  /// phase; they complete with it.
  std::map<uint64_t, std::vector<uint32_t>> barrierOps;
  /// Asynchronous operations each thread issued and has not committed.
  std::map<unsigned, std::vector<uint32_t>> uncommitted;
  uint32_t nextOp = 1;
  /// The .cta_group of the kernel's tcgen05 instructions (0 before the
  /// first; PTX ISA §9.7.16.x: all of a kernel's must name the same one).
  unsigned ctaGroup = 0;
  /// cta_group::2 allocations and deallocations this CTA's warp took part
  /// in, and the addresses its allocations returned (the pair's two warps
  /// perform each one together).
  unsigned pairDeallocs = 0;
  std::vector<uint32_t> pairAllocs;

  std::string finish() override { return tmem.checkAllDeallocated(); }

  void completePhase(uint64_t address) override {
    for (uint32_t op : barrierOps[address])
      tmem.completeOp(op);
    barrierOps[address].clear();
  }
};

inline Tcgen05State &getState(ExecutionContext &context) {
  return *static_cast<Tcgen05State *>(context.getWorkgroupState());
}

// The shared-memory view and message check of the NVIDIA models
// (NVVMCommon.h), also used by the wgmma ops.
using nvvm::check;
using nvvm::CheckedSharedMemory;

/// Records that the executing CTA issues a tcgen05 instruction of
/// .cta_group::2 (`ctaGroup2`) or ::1, failing when the kernel's earlier ones
/// named the other, or when ::2 has no peer CTA in the cluster.
LogicalResult useCtaGroup(ExecutionContext &context, bool ctaGroup2);

/// A fresh id of an asynchronous tcgen05 operation issued by the executing
/// CTA, unique in the cluster (a pair's operations write both CTAs' tensor
/// memory).
inline uint32_t newAsyncOp(ExecutionContext &context, Tcgen05State &state) {
  return context.getClusterRank() << 24 | state.nextOp++;
}

/// The state of CTA `rank` of the cluster (requireClusterMember first).
inline Tcgen05State &getState(ExecutionContext &context, unsigned rank) {
  return *static_cast<Tcgen05State *>(context.getWorkgroupState(rank));
}

//===----------------------------------------------------------------------===//
// ClusterOps.cpp: .shared::cluster addresses, mapa, barrier.cluster, the
// cluster special registers
//===----------------------------------------------------------------------===//

/// A .shared::cluster address: the CTA (its %cluster_ctarank) and the
/// address in that CTA's shared window. PTX ISA §5.1.7 puts each CTA's
/// .shared::cta window inside the .shared::cluster window and leaves the
/// encoding to the implementation; the emulator's: an address below 2^24
/// is the executing CTA's own (its shared::cta address), and mapa tags CTA
/// r's address with r + 1 in bits 24..27. Kernels must get other CTAs'
/// addresses from mapa.
struct ClusterAddress {
  unsigned rank = 0;
  uint64_t address = 0;
};
constexpr unsigned kClusterRankShift = 24;
inline uint64_t encodeClusterAddress(unsigned rank, uint64_t address) {
  return address | uint64_t{rank + 1} << kClusterRankShift;
}
/// Decodes `address`, failing (naming `what`) for a CTA outside the
/// cluster or one that has returned.
FailureOr<ClusterAddress> decodeClusterAddress(ExecutionContext &context,
                                               uint64_t address,
                                               StringRef what);
/// The CTAs of a 16-bit .multicast::cluster mask (bit r: %cluster_ctarank
/// r), failing (naming `what`) for one outside the cluster or returned.
FailureOr<SmallVector<unsigned>>
getMulticastRanks(ExecutionContext &context, uint32_t mask, StringRef what);

/// The even CTA of the executing CTA's pair (%cluster_ctarank with bit 0
/// cleared, §9.7.16.5.1), failing (naming `what`) when the peer CTA has
/// returned: a pair's mma and cp use both CTAs' memories.
FailureOr<unsigned> getPairEvenRank(ExecutionContext &context, StringRef what);

bool isClusterOp(Operation &op);
LogicalResult executeClusterOp(Operation &op, ExecutionContext &context);

/// Calls `body(lane)` for each active lane in order; stops at a failure.
inline LogicalResult
forEachIssuingLane(ExecutionContext &context,
                   llvm::function_ref<LogicalResult(unsigned)> body) {
  for (unsigned lane = 0; lane < context.getNumLanes(); ++lane)
    if (context.isActive(lane) && failed(body(lane)))
      return failure();
  return success();
}

inline uint64_t getWord64(ExecutionContext &context, Value value,
                          unsigned lane) {
  return context.get(value).at(lane);
}

// The per-family execute functions, by the file that defines (and documents)
// them.

//===----------------------------------------------------------------------===//
// Tcgen05MemoryOps.cpp: tcgen05.alloc, dealloc, relinquish_alloc_permit,
// cp, ld, st
//===----------------------------------------------------------------------===//

LogicalResult executeRelinquish(ExecutionContext &context);
/// tcgen05.cp per active lane; with `ctaGroup2` each CTA of the pair copies
/// from its own shared memory to its own tensor memory at the same
/// addresses (§9.7.16.9.2: "copied into the Tensor Memory of both the
/// current and the peer CTAs").
LogicalResult executeCp(ExecutionContext &context, ptx::CpShape shape,
                        ptx::CpMulticast multicast, bool ctaGroup2, Value taddr,
                        Value desc);
/// alloc / dealloc / relinquish_alloc_permit; with `ctaGroup2` one warp of
/// each CTA of the pair performs each together: the first to arrive waits
/// for the other, and both get the same columns.
LogicalResult executeAlloc(ExecutionContext &context, bool ctaGroup2,
                           Value address, Value nCols);
LogicalResult executeDealloc(ExecutionContext &context, bool ctaGroup2,
                             Value taddr, Value nCols);
FailureOr<ptx::LdStShape> getLdStShape(ExecutionContext &context,
                                       NVVM::Tcgen05LdStShape shape,
                                       Value offset);
LogicalResult executeLd(ExecutionContext &context, ptx::LdStShape shape,
                        bool pack, Value taddr, Value result);
LogicalResult executeSt(ExecutionContext &context, ptx::LdStShape shape,
                        bool unpack, Value taddr, Value value);

//===----------------------------------------------------------------------===//
// Tcgen05MmaOps.cpp: tcgen05.mma ... .block_scale, tcgen05.commit
//===----------------------------------------------------------------------===//

/// The MMA's operands as SSA values: D, A (descriptor or TMEM pointer), B,
/// idesc, enable-input-d, scale A, scale B.
struct MmaValues {
  Value d, a, b, idesc, enableInputD, scaleA, scaleB;
};

/// Issues the MMA per active lane: on the executing CTA, or with
/// `ctaGroup2` on its CTA pair (ptx::tcgen05MmaBlockScalePair).
LogicalResult executeMma(ExecutionContext &context,
                         NVVM::MMABlockScaleKind kind,
                         NVVM::Tcgen05MMABlockScale blockScale, bool ctaGroup2,
                         const MmaValues &v);
LogicalResult executeCommit(ExecutionContext &context, Value address,
                            Value multicastMask);

//===----------------------------------------------------------------------===//
// MbarrierOps.cpp: mbarrier
//===----------------------------------------------------------------------===//

/// An mbarrier object of a CTA of the cluster: its CTA's state, its
/// address in that CTA's shared window, the object and the CTA's rank.
struct BarrierRef {
  nvvm::MbarrierState *state;
  uint64_t address;
  ptx::Mbarrier *barrier;
  unsigned rank;
};
/// The mbarrier at `address` (a .shared::cta or .shared::cluster address,
/// ClusterAddress), checked.
FailureOr<BarrierRef> getBarrier(ExecutionContext &context, uint64_t address);
LogicalResult arriveOn(ExecutionContext &context, uint64_t address,
                       uint32_t count, uint64_t *token);
LogicalResult completeTransaction(ExecutionContext &context, uint64_t address,
                                  uint32_t bytes);
LogicalResult executeMbarrier(Operation &op, ExecutionContext &context);

//===----------------------------------------------------------------------===//
// CpAsyncOps.cpp: cp.async.bulk (non-tensor), cp.async (non-bulk)
//===----------------------------------------------------------------------===//

LogicalResult executeBulkLoad(NVVM::CpAsyncBulkGlobalToSharedClusterOp copy,
                              ExecutionContext &context);
/// cp.async.bulk.tensor.Nd ... .tile.mbarrier::complete_tx::bytes (TMA).
LogicalResult
executeTensorLoad(NVVM::CpAsyncBulkTensorGlobalToSharedClusterOp copy,
                  ExecutionContext &context);
/// nvgpu.tma.create.descriptor on the host: the tensor map of a memref,
/// stored (the emulator's encoding, Tma.h) in a new global allocation
/// whose address is the descriptor.
LogicalResult executeCreateTensorMap(nvgpu::TmaCreateDescriptorOp create,
                                     ExecutionContext &context);
LogicalResult executeBulkStore(NVVM::CpAsyncBulkSharedCTAToGlobalOp copy,
                               ExecutionContext &context);
LogicalResult executeCpAsync(NVVM::CpAsyncOp copy, ExecutionContext &context);

//===----------------------------------------------------------------------===//
// Tcgen05Intrinsics.cpp: llvm.call_intrinsic "llvm.nvvm.tcgen05.*"
//===----------------------------------------------------------------------===//

constexpr StringLiteral kTcgen05Prefix = "llvm.nvvm.tcgen05.";
/// cvt.rs.satfinite.e2m1x4.f32 as sm_103a's modules call it.
constexpr StringLiteral kCvtRsE2M1x4 = "llvm.nvvm.f32x4.to.e2m1x4.rs.satfinite";

LogicalResult executeCvtRsE2M1x4(Value src, Value rbits, Value dst,
                                 ExecutionContext &context);
std::optional<std::pair<ptx::CpShape, ptx::CpMulticast>>
parseCpShape(StringRef name);
LogicalResult executeIntrinsic(LLVM::CallIntrinsicOp call,
                               ExecutionContext &context);

} // namespace mlir::fp4train::emulation::tcgen05

#endif // FP4TRAIN_LIB_EMULATION_PTX_TCGEN05COMMON_H
