//===- Tcgen05Instructions.cpp - The sm_100a/sm_103a instruction sets -----===//
//
// The NVVM ops of Blackwell datacenter kernels, executed by the tcgen05 and
// mbarrier models of fp4train/Emulation/Tcgen05.h, plus the ops every NVIDIA
// set shares (NVVMCommon.h). The same handlers serve the MLIR 22 NVVM ops and
// the llvm.call_intrinsic "llvm.nvvm.tcgen05.*" form that sm_103a kernels use
// ([PTX1] in docs/nvvm.md: MLIR's per-op chip check rejects sm_103a).
//
// nvvm.tcgen05.mma_smem_desc is executed as MLIR 22 translates it (bit
// packing of already encoded fields).
//
// Execution model (lockstep, [CHK4] in docs/semantics.md):
//  - tensor memory, the mbarrier objects and the bookkeeping of asynchronous
//    operations are per-CTA state (Tcgen05State), created for each workgroup;
//    a kernel that returns with tensor memory allocated is an error;
//  - warp-collective .sync.aligned instructions (alloc, dealloc,
//    relinquish_alloc_permit, ld, st) execute once per warp with all 32
//    lanes active and uniform operands; tcgen05.mma, tcgen05.cp and
//    tcgen05.commit are issued by each active thread (usually one elected
//    thread); mbarrier operations act per active thread;
//  - asynchronous operations (mma, cp) take effect when issued, but the
//    tensor-memory cells they write stay "pending" until a tcgen05.commit by
//    the issuing thread arrives on an mbarrier whose phase then completes; a
//    tcgen05.ld of a pending cell is an error (the missing commit/wait);
//  - the potentially blocking mbarrier.try_wait.parity on a phase that has
//    not completed lets the other side of an enclosing divergent branch run
//    (the roles of a warp-specialized kernel are fibers, Interpreter/
//    Fibers.h) and fails when nothing else can run (a deadlock);
//  - cp.async (non-bulk) copies when issued, zero-filling past src-size;
//  - the non-tensor bulk copies (cp.async.bulk global -> shared with
//    complete-tx on an mbarrier, shared -> global) copy when issued; the
//    asynchronous proxy's shared-memory accesses (bulk copies, tensor-core
//    operand reads) skip the race check, which knows bar.sync but not
//    mbarriers;
//  - tcgen05.fence, tcgen05.wait, fence.proxy and the bulk-group
//    commit/wait are no-ops (the model is already ordered); a generic
//    pointer given to an mbarrier or tcgen05 op is taken as a shared-memory
//    address; cta_group::2, multicast commits and decompressing copies are
//    errors naming what is not modelled.
//
//===----------------------------------------------------------------------===//

#include "fp4train/Emulation/InstructionSets.h"

#include "fp4train/Emulation/Tcgen05.h"

#include "NVVMCommon.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/FormatVariadic.h"

#include <map>
#include <optional>

using namespace mlir;
using namespace mlir::fp4train;
using namespace mlir::fp4train::emulation;
namespace ptx = ::fp4train::emulation::ptx;

namespace {

//===----------------------------------------------------------------------===//
// Per-CTA state
//===----------------------------------------------------------------------===//

struct Tcgen05State final : public WorkgroupState {
  ptx::TensorMemory tmem;
  /// mbarrier objects by shared address.
  std::map<uint64_t, ptx::Mbarrier> barriers;
  /// Asynchronous operations a commit attached to a barrier's current
  /// phase; they complete with it.
  std::map<uint64_t, std::vector<uint32_t>> barrierOps;
  /// Asynchronous operations each thread issued and has not committed.
  std::map<unsigned, std::vector<uint32_t>> uncommitted;
  uint32_t nextOp = 1;

  std::string finish() override { return tmem.checkAllDeallocated(); }

  void completePhase(uint64_t address) {
    for (uint32_t op : barrierOps[address])
      tmem.completeOp(op);
    barrierOps[address].clear();
  }
};

Tcgen05State &getState(ExecutionContext &context) {
  return *static_cast<Tcgen05State *>(context.getWorkgroupState());
}

/// The models' view of shared memory: the core's checked accesses of the
/// asynchronous proxy (the tensor core reads operands ordered by mbarriers,
/// not by bar.sync) on behalf of one warp. A failed access has already set
/// the core's error.
class CheckedSharedMemory final : public ptx::SharedMemory {
public:
  CheckedSharedMemory(ExecutionContext &context, unsigned subgroup)
      : context(context), subgroup(subgroup) {}
  std::string read(uint32_t address, unsigned size, uint8_t *out) override {
    if (succeeded(context.readShared(address, size, subgroup, out,
                                     /*asyncProxy=*/true)))
      return {};
    failedInCore = true;
    return "shared memory access failed";
  }
  bool failedInCore = false;

private:
  ExecutionContext &context;
  unsigned subgroup;
};

/// Turns a model's message into the op's failure (or passes the core's).
LogicalResult check(ExecutionContext &context, const std::string &why,
                    const CheckedSharedMemory *smem = nullptr) {
  if (why.empty())
    return success();
  if (smem && smem->failedInCore)
    return failure();
  return context.fail(why);
}

LogicalResult requireCtaGroup1(ExecutionContext &context, bool ctaGroup2) {
  if (ctaGroup2)
    return context.fail("cta_group::2 (CTA pairs) is not modelled");
  return success();
}

/// Calls `body(lane)` for each active lane in order; stops at a failure.
LogicalResult forEachIssuingLane(ExecutionContext &context,
                                 llvm::function_ref<LogicalResult(unsigned)> body) {
  for (unsigned lane = 0; lane < context.getNumLanes(); ++lane)
    if (context.isActive(lane) && failed(body(lane)))
      return failure();
  return success();
}

uint64_t getWord64(ExecutionContext &context, Value value, unsigned lane) {
  return context.get(value).at(lane);
}

//===----------------------------------------------------------------------===//
// Allocation
//===----------------------------------------------------------------------===//

LogicalResult executeAlloc(ExecutionContext &context, Value address,
                           Value nCols) {
  Tcgen05State &state = getState(context);
  return context.forEachWholeSubgroup(
      "tcgen05.alloc", [&](unsigned subgroup, unsigned first) -> LogicalResult {
        if (failed(context.requireUniform({address, nCols}, first,
                                          "tcgen05.alloc operands")))
          return failure();
        uint32_t tmemAddress;
        if (failed(check(context, state.tmem.alloc(
                                      context.getWord(nCols, first),
                                      &tmemAddress))))
          return failure();
        const uint8_t bytes[4] = {
            static_cast<uint8_t>(tmemAddress), static_cast<uint8_t>(tmemAddress >> 8),
            static_cast<uint8_t>(tmemAddress >> 16),
            static_cast<uint8_t>(tmemAddress >> 24)};
        return context.writeShared(getWord64(context, address, first), 4,
                                   subgroup, bytes);
      });
}

LogicalResult executeDealloc(ExecutionContext &context, Value taddr,
                             Value nCols) {
  Tcgen05State &state = getState(context);
  return context.forEachWholeSubgroup(
      "tcgen05.dealloc", [&](unsigned, unsigned first) -> LogicalResult {
        if (failed(context.requireUniform({taddr, nCols}, first,
                                          "tcgen05.dealloc operands")))
          return failure();
        return check(context,
                     state.tmem.dealloc(context.getWord(taddr, first),
                                        context.getWord(nCols, first)));
      });
}

LogicalResult executeRelinquish(ExecutionContext &context) {
  Tcgen05State &state = getState(context);
  return context.forEachWholeSubgroup(
      "tcgen05.relinquish_alloc_permit", [&](unsigned, unsigned) {
        state.tmem.relinquishAllocPermit();
        return success();
      });
}

//===----------------------------------------------------------------------===//
// tcgen05.mma ... .block_scale, tcgen05.cp, tcgen05.commit
//===----------------------------------------------------------------------===//

/// The scale_vec of an MMA from its kind and .block16 / .block32.
FailureOr<ptx::ScaleVec> getScaleVec(ExecutionContext &context,
                                     NVVM::MMABlockScaleKind kind,
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

/// The MMA's operands as SSA values: D, A (descriptor or TMEM pointer), B,
/// idesc, enable-input-d, scale A, scale B.
struct MmaValues {
  Value d, a, b, idesc, enableInputD, scaleA, scaleB;
};

LogicalResult executeMma(ExecutionContext &context, NVVM::MMABlockScaleKind kind,
                         NVVM::Tcgen05MMABlockScale blockScale,
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
    const uint32_t op = state.nextOp++;
    CheckedSharedMemory smem(context, lane / context.getSubgroupSize());
    if (failed(check(context,
                     ptx::tcgen05MmaBlockScale(operands, state.tmem, smem, op),
                     &smem)))
      return failure();
    state.uncommitted[lane].push_back(op);
    ++context.getStats().mfmas;
    return success();
  });
}

LogicalResult executeCp(ExecutionContext &context, ptx::CpShape shape,
                        ptx::CpMulticast multicast, Value taddr, Value desc) {
  Tcgen05State &state = getState(context);
  return forEachIssuingLane(context, [&](unsigned lane) -> LogicalResult {
    const uint32_t op = state.nextOp++;
    CheckedSharedMemory smem(context, lane / context.getSubgroupSize());
    if (failed(check(context,
                     ptx::tcgen05Cp(shape, multicast,
                                    context.getWord(taddr, lane),
                                    getWord64(context, desc, lane), state.tmem,
                                    smem, op),
                     &smem)))
      return failure();
    state.uncommitted[lane].push_back(op);
    return success();
  });
}

/// The mbarrier object at the shared address `address`, checked.
FailureOr<ptx::Mbarrier *> getBarrier(ExecutionContext &context,
                                      uint64_t address) {
  if (address % 8)
    return context.fail(llvm::formatv("mbarrier address {0} is not 8-byte "
                                      "aligned",
                                      address));
  if (failed(context.checkSharedAddress(address, 8)))
    return failure();
  return &getState(context).barriers[address];
}

/// An arrive-on of `count` on the barrier at `address` by `lane`; `token`
/// gets the state before it.
LogicalResult arriveOn(ExecutionContext &context, uint64_t address,
                       uint32_t count, uint64_t *token) {
  FailureOr<ptx::Mbarrier *> barrier = getBarrier(context, address);
  if (failed(barrier))
    return failure();
  bool completed;
  if (failed(check(context, (*barrier)->arrive(count, token, &completed))))
    return failure();
  if (completed)
    getState(context).completePhase(address);
  return success();
}

/// A complete-tx of `bytes` on the barrier at `address`.
LogicalResult completeTransaction(ExecutionContext &context, uint64_t address,
                                  uint32_t bytes) {
  FailureOr<ptx::Mbarrier *> barrier = getBarrier(context, address);
  if (failed(barrier))
    return failure();
  bool completed;
  if (failed(check(context, (*barrier)->completeTx(bytes, &completed))))
    return failure();
  if (completed)
    getState(context).completePhase(address);
  return success();
}

LogicalResult executeCommit(ExecutionContext &context, Value address,
                            Value multicastMask) {
  if (multicastMask)
    return context.fail("tcgen05.commit with a CTA multicast mask is not "
                        "modelled");
  Tcgen05State &state = getState(context);
  return forEachIssuingLane(context, [&](unsigned lane) -> LogicalResult {
    const uint64_t at = getWord64(context, address, lane);
    FailureOr<ptx::Mbarrier *> barrier = getBarrier(context, at);
    if (failed(barrier))
      return failure();
    if (!(*barrier)->isInitialized())
      return context.fail(llvm::formatv("tcgen05.commit to the mbarrier at "
                                        "shared address {0}, which "
                                        "mbarrier.init has not initialized",
                                        at));
    // The thread's operations so far complete with the barrier's phase
    // (they are already done: the arrive-on follows at once).
    std::vector<uint32_t> &ops = state.uncommitted[lane];
    llvm::append_range(state.barrierOps[at], ops);
    ops.clear();
    uint64_t token;
    return arriveOn(context, at, 1, &token);
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
FailureOr<unsigned> getNum(ExecutionContext &context, ptx::LdStShape shape,
                           unsigned registers) {
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
        if (failed(context.requireUniform({taddr}, first, "tcgen05.ld addresses")))
          return failure();
        std::vector<uint32_t> regs;
        if (failed(check(context, ptx::tcgen05Ld(shape, *num,
                                                 context.getWord(taddr, first),
                                                 subgroup % 4, state.tmem,
                                                 &regs))))
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
        if (failed(context.requireUniform({taddr}, first, "tcgen05.st addresses")))
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

//===----------------------------------------------------------------------===//
// mbarrier
//===----------------------------------------------------------------------===//

/// Calls `body(lane)` for the active lanes whose optional PTX predicate
/// holds.
LogicalResult forEachPredicatedLane(ExecutionContext &context, Value predicate,
                                    llvm::function_ref<LogicalResult(unsigned)> body) {
  return forEachIssuingLane(context, [&](unsigned lane) -> LogicalResult {
    if (predicate && !(context.getWord(predicate, lane) & 1))
      return success();
    return body(lane);
  });
}

LogicalResult executeMbarrier(Operation &op, ExecutionContext &context) {
  return llvm::TypeSwitch<Operation *, LogicalResult>(&op)
      .Case([&](NVVM::MBarrierInitOp init) {
        return forEachPredicatedLane(
            context, init.getPredicate(), [&](unsigned lane) -> LogicalResult {
              FailureOr<ptx::Mbarrier *> barrier =
                  getBarrier(context, getWord64(context, init.getAddr(), lane));
              if (failed(barrier))
                return failure();
              return check(context,
                           (*barrier)->init(context.getWord(init.getCount(), lane)));
            });
      })
      .Case([&](NVVM::MBarrierArriveOp arrive) {
        LaneValues *out = arrive.getRes() ? &context.define(arrive.getRes()) : nullptr;
        return forEachIssuingLane(context, [&](unsigned lane) -> LogicalResult {
          uint64_t token;
          const uint32_t count =
              arrive.getCount() ? context.getWord(arrive.getCount(), lane) : 1;
          if (failed(arriveOn(context, getWord64(context, arrive.getAddr(), lane),
                              count, &token)))
            return failure();
          if (out)
            out->at(lane) = token;
          return success();
        });
      })
      .Case([&](NVVM::MBarrierArriveExpectTxOp arrive) {
        LaneValues *out = arrive.getRes() ? &context.define(arrive.getRes()) : nullptr;
        return forEachPredicatedLane(
            context, arrive.getPredicate(), [&](unsigned lane) -> LogicalResult {
              const uint64_t at = getWord64(context, arrive.getAddr(), lane);
              FailureOr<ptx::Mbarrier *> barrier = getBarrier(context, at);
              if (failed(barrier) ||
                  failed(check(context, (*barrier)->expectTx(context.getWord(
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
          FailureOr<ptx::Mbarrier *> barrier =
              getBarrier(context, getWord64(context, expect.getAddr(), lane));
          if (failed(barrier))
            return failure();
          return check(context, (*barrier)->expectTx(
                                    context.getWord(expect.getTxcount(), lane)));
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
          const uint64_t at = getWord64(context, wait.getAddr(), lane);
          FailureOr<ptx::Mbarrier *> barrier = getBarrier(context, at);
          if (failed(barrier))
            return failure();
          if (!(*barrier)->isInitialized())
            return context.fail(llvm::formatv(
                "mbarrier.try_wait.parity on shared address {0}, which "
                "mbarrier.init has not initialized",
                at));
          const uint32_t parity = context.getWord(wait.getPhase(), lane) & 1;
          // The other roles of a warp-specialized kernel may complete it
          // meanwhile (runsBranchesConcurrently).
          if (context.waitUntil([&context, at, parity] {
                FailureOr<ptx::Mbarrier *> b = getBarrier(context, at);
                return succeeded(b) && (*b)->isPhaseComplete(parity);
              }))
            return success();
          barrier = getBarrier(context, at);
          if (failed(barrier))
            return failure();
          return context.fail(llvm::formatv(
              "thread {0} waits for phase parity {1} of the mbarrier at shared "
              "address {2}, which is in phase {3} with {4} pending arrivals "
              "and tx-count {5}: no other thread of the workgroup can complete "
              "it (a missing arrive, commit or complete-tx)",
              lane, parity, at, (*barrier)->getPhase(),
              (*barrier)->getPending(), (*barrier)->getTxCount()));
        });
      })
      .Default([&](Operation *) {
        return context.fail("not an mbarrier op");
      });
}

//===----------------------------------------------------------------------===//
// cp.async.bulk (non-tensor bulk copies, PTX ISA §9.7.9.25.4.1)
//===----------------------------------------------------------------------===//

/// The size operand of a bulk copy in `lane`: a multiple of 16 bytes.
FailureOr<uint32_t> getBulkSize(ExecutionContext &context, Value size,
                                unsigned lane) {
  const uint32_t bytes = context.getWord(size, lane);
  if (bytes % 16)
    return context.fail(llvm::formatv("cp.async.bulk size {0} is not a "
                                      "multiple of 16",
                                      bytes));
  return bytes;
}

/// cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes: per
/// issuing thread, `size` (a multiple of 16) bytes from global to shared
/// memory through the asynchronous proxy, then complete-tx of `size` on the
/// mbarrier (the cluster is the one CTA).
LogicalResult executeBulkLoad(NVVM::CpAsyncBulkGlobalToSharedClusterOp copy,
                              ExecutionContext &context) {
  if (copy.getMulticastMask())
    return context.fail("cp.async.bulk with a CTA multicast mask is not "
                        "modelled");
  return forEachIssuingLane(context, [&](unsigned lane) -> LogicalResult {
    FailureOr<uint32_t> size = getBulkSize(context, copy.getSize(), lane);
    if (failed(size))
      return failure();
    std::vector<uint8_t> bytes(*size);
    if (failed(context.accessGlobal(getWord64(context, copy.getSrcMem(), lane),
                                    *size, /*write=*/false, bytes.data())) ||
        failed(context.writeShared(getWord64(context, copy.getDstMem(), lane),
                                   *size, lane / context.getSubgroupSize(),
                                   bytes.data(), /*asyncProxy=*/true)))
      return failure();
    return completeTransaction(context,
                               getWord64(context, copy.getMbar(), lane), *size);
  });
}

/// cp.async.bulk.global.shared::cta.bulk_group: per issuing thread, `size`
/// bytes from shared to global memory (complete when issued, so the bulk
/// group's commit and wait are no-ops).
LogicalResult executeBulkStore(NVVM::CpAsyncBulkSharedCTAToGlobalOp copy,
                               ExecutionContext &context) {
  if (copy.getByteMask())
    return context.fail("cp.async.bulk with a byte mask is not modelled");
  return forEachIssuingLane(context, [&](unsigned lane) -> LogicalResult {
    FailureOr<uint32_t> size = getBulkSize(context, copy.getSize(), lane);
    if (failed(size))
      return failure();
    std::vector<uint8_t> bytes(*size);
    if (failed(context.readShared(getWord64(context, copy.getSrcMem(), lane),
                                  *size, lane / context.getSubgroupSize(),
                                  bytes.data(), /*asyncProxy=*/true)))
      return failure();
    return context.accessGlobal(getWord64(context, copy.getDstMem(), lane),
                                *size, /*write=*/true, bytes.data());
  });
}

//===----------------------------------------------------------------------===//
// cp.async (non-bulk, PTX ISA §9.7.9.25.3.1)
//===----------------------------------------------------------------------===//

/// cp.async.{ca,cg}.shared.global [dst], [src], cp-size{, src-size}: per
/// issuing thread, the first src-size bytes (cp-size when absent) of the
/// cp-size bytes at `src` (global) to `dst` (shared), the rest zero-filled
/// ("the remaining bytes are zero-filled"); src-size must not exceed
/// cp-size. The copy is a weak write of the executing thread (generic
/// proxy), modelled as complete when issued: cp.async.commit_group /
/// wait_group are no-ops, and a read of the destination before the
/// wait_group that would complete it is not reported.
LogicalResult executeCpAsync(NVVM::CpAsyncOp copy, ExecutionContext &context) {
  const uint32_t cpSize = copy.getSize();
  if (cpSize != 4 && cpSize != 8 && cpSize != 16)
    return context.fail(
        llvm::formatv("cp.async cp-size {0} is not 4, 8 or 16", cpSize));
  return forEachIssuingLane(context, [&](unsigned lane) -> LogicalResult {
    const uint32_t srcSize =
        copy.getCpSize() ? context.getWord(copy.getCpSize(), lane) : cpSize;
    if (srcSize > cpSize)
      return context.fail(llvm::formatv(
          "cp.async src-size {0} exceeds cp-size {1}", srcSize, cpSize));
    std::vector<uint8_t> bytes(cpSize, 0);
    if (srcSize &&
        failed(context.accessGlobal(getWord64(context, copy.getSrc(), lane),
                                    srcSize, /*write=*/false, bytes.data())))
      return failure();
    return context.writeShared(getWord64(context, copy.getDst(), lane),
                               cpSize, lane / context.getSubgroupSize(),
                               bytes.data());
  });
}

//===----------------------------------------------------------------------===//
// llvm.call_intrinsic "llvm.nvvm.tcgen05.*"
//===----------------------------------------------------------------------===//

constexpr StringLiteral kTcgen05Prefix = "llvm.nvvm.tcgen05.";
/// cvt.rs.satfinite.e2m1x4.f32 as sm_103a's modules call it.
constexpr StringLiteral kCvtRsE2M1x4 = "llvm.nvvm.f32x4.to.e2m1x4.rs.satfinite";

/// cvt.rs.satfinite.e2m1x4.f32 d, {src[0..3]}, rbits (ptx::cvtRsSatfiniteE2M1x4:
/// src[0] is the PTX operand a, whose code lands in d[15:12]).
LogicalResult executeCvtRsE2M1x4(Value src, Value rbits, Value dst,
                                 ExecutionContext &context) {
  LaneValues &out = context.define(dst);
  context.forEachActiveLane([&](unsigned lane) {
    out.at(lane) = ptx::cvtRsSatfiniteE2M1x4(
        context.getWord(src, lane, 0), context.getWord(src, lane, 1),
        context.getWord(src, lane, 2), context.getWord(src, lane, 3),
        context.getWord(rbits, lane));
  });
  ++context.getStats().conversions;
  return success();
}

std::optional<std::pair<ptx::CpShape, ptx::CpMulticast>>
parseCpShape(StringRef name) {
  using S = ptx::CpShape;
  using M = ptx::CpMulticast;
  return llvm::StringSwitch<std::optional<std::pair<S, M>>>(name)
      .Case("128x256b", std::pair{S::S128x256b, M::None})
      .Case("4x256b", std::pair{S::S4x256b, M::None})
      .Case("128x128b", std::pair{S::S128x128b, M::None})
      .Case("64x128b_warpx2_02_13", std::pair{S::S64x128b, M::Warpx2_02_13})
      .Case("64x128b_warpx2_01_23", std::pair{S::S64x128b, M::Warpx2_01_23})
      .Case("32x128b_warpx4", std::pair{S::S32x128b, M::Warpx4})
      .Default(std::nullopt);
}

/// "<shape>.x<N>" of tcgen05.ld/st intrinsics.
std::optional<std::pair<ptx::LdStShape, unsigned>> parseLdSt(StringRef name) {
  auto [shape, num] = name.split(".x");
  std::optional<ptx::LdStShape> s =
      llvm::StringSwitch<std::optional<ptx::LdStShape>>(shape)
          .Case("32x32b", ptx::LdStShape::S32x32b)
          .Case("16x256b", ptx::LdStShape::S16x256b)
          .Default(std::nullopt);
  unsigned n;
  if (!s || num.getAsInteger(10, n))
    return std::nullopt;
  return std::pair{*s, n};
}

LogicalResult executeIntrinsic(LLVM::CallIntrinsicOp call,
                               ExecutionContext &context) {
  const StringRef full = call.getIntrin();
  StringRef name = full.drop_front(kTcgen05Prefix.size());
  OperandRange args = call.getArgs();
  auto notModelled = [&]() {
    return context.fail("intrinsic '" + full + "' is not modelled by the " +
                        context.getInstructionSet().getName() + " emulator");
  };
  auto expectArgs = [&](size_t count) -> LogicalResult {
    if (args.size() != count)
      return context.fail(llvm::formatv("intrinsic '{0}' takes {1} operands, "
                                        "not {2}",
                                        full, count, args.size()));
    return success();
  };
  // Every modelled form is cta_group::1 (".cg1").
  if (name.ends_with(".cg2"))
    return context.fail("cta_group::2 (CTA pairs) is not modelled");
  if (name == "alloc.shared.cg1" || name == "alloc.cg1")
    return failed(expectArgs(2)) ? failure()
                                 : executeAlloc(context, args[0], args[1]);
  if (name == "dealloc.cg1")
    return failed(expectArgs(2)) ? failure()
                                 : executeDealloc(context, args[0], args[1]);
  if (name == "relinq.alloc.permit.cg1")
    return failed(expectArgs(0)) ? failure() : executeRelinquish(context);
  if (name == "commit.shared.cg1" || name == "commit.cg1")
    return failed(expectArgs(1)) ? failure()
                                 : executeCommit(context, args[0], Value());
  if (name == "fence.before.thread.sync" || name == "fence.after.thread.sync" ||
      name == "wait.ld" || name == "wait.st")
    return success();
  if (name.consume_front("cp.") && name.consume_back(".cg1")) {
    std::optional<std::pair<ptx::CpShape, ptx::CpMulticast>> shape =
        parseCpShape(name);
    if (!shape)
      return notModelled();
    return failed(expectArgs(2))
               ? failure()
               : executeCp(context, shape->first, shape->second, args[0],
                           args[1]);
  }
  if (name.consume_front("ld.")) {
    std::optional<std::pair<ptx::LdStShape, unsigned>> shape = parseLdSt(name);
    if (!shape || call.getNumResults() != 1)
      return notModelled();
    if (failed(expectArgs(2)))
      return failure();
    Type type = call.getResult(0).getType();
    auto vector = dyn_cast<VectorType>(type);
    const int64_t width = vector ? vector.getNumElements() : 1;
    if (width != ptx::getLdStRegisters(shape->first, shape->second))
      return context.fail(llvm::formatv("intrinsic '{0}' returns {1} "
                                        "registers, not {2}",
                                        full,
                                        ptx::getLdStRegisters(shape->first,
                                                              shape->second),
                                        width));
    const bool pack = context.getWord(args[1], 0) & 1;
    return executeLd(context, shape->first, pack, args[0], call.getResult(0));
  }
  if (name.consume_front("st.")) {
    std::optional<std::pair<ptx::LdStShape, unsigned>> shape = parseLdSt(name);
    if (!shape)
      return notModelled();
    if (failed(expectArgs(3)))
      return failure();
    const bool unpack = context.getWord(args[2], 0) & 1;
    return executeSt(context, shape->first, unpack, args[0], args[1]);
  }
  if (name.consume_front("mma.")) {
    // mma.{shared|tensor}.<kind>.block_scale[.block16|.block32], operands
    // D, A, B, idesc, enable-input-d, scale A, scale B, cta_group, collector.
    auto [where, rest] = name.split('.');
    auto [kindName, suffix] = rest.split('.');
    std::optional<NVVM::MMABlockScaleKind> kind =
        NVVM::symbolizeMMABlockScaleKind(kindName);
    std::optional<NVVM::Tcgen05MMABlockScale> blockScale =
        llvm::StringSwitch<std::optional<NVVM::Tcgen05MMABlockScale>>(suffix)
            .Case("block_scale", NVVM::Tcgen05MMABlockScale::DEFAULT)
            .Case("block_scale.block16", NVVM::Tcgen05MMABlockScale::BLOCK16)
            .Case("block_scale.block32", NVVM::Tcgen05MMABlockScale::BLOCK32)
            .Default(std::nullopt);
    if ((where != "shared" && where != "tensor") || !kind || !blockScale)
      return notModelled();
    if (failed(expectArgs(9)))
      return failure();
    for (unsigned lane = 0; lane < context.getNumLanes(); ++lane)
      if (context.isActive(lane) && context.getWord(args[7], lane) != 1)
        return context.fail("cta_group::2 (CTA pairs) is not modelled");
    return executeMma(context, *kind, *blockScale,
                      {args[0], args[1], args[2], args[3], args[4], args[5],
                       args[6]});
  }
  return notModelled();
}

//===----------------------------------------------------------------------===//
// The instruction set
//===----------------------------------------------------------------------===//

/// NVIDIA sm_100a / sm_103a: 32-lane warps, tensor memory, tcgen05.
class SM100InstructionSet final : public nvvm::NVVMInstructionSet {
public:
  using NVVMInstructionSet::NVVMInstructionSet;
  bool runsBranchesConcurrently() const override { return true; }
  bool handles(Operation &op) const override {
    if (nvvm::isCommonNVVMOp(op))
      return true;
    if (auto call = dyn_cast<LLVM::CallIntrinsicOp>(op))
      return call.getIntrin().starts_with(kTcgen05Prefix) ||
             call.getIntrin() == kCvtRsE2M1x4;
    return isa<
        NVVM::Tcgen05AllocOp, NVVM::Tcgen05DeallocOp,
        NVVM::Tcgen05RelinquishAllocPermitOp, NVVM::Tcgen05FenceOp,
        NVVM::Tcgen05WaitOp, NVVM::Tcgen05CommitOp, NVVM::Tcgen05CpOp,
        NVVM::Tcgen05LdOp, NVVM::Tcgen05StOp, NVVM::Tcgen05MMABlockScaleOp,
        NVVM::Tcgen05MmaSmemDescOp, NVVM::MBarrierInitOp,
        NVVM::MBarrierArriveOp, NVVM::MBarrierArriveExpectTxOp,
        NVVM::MBarrierExpectTxOp, NVVM::MBarrierCompleteTxOp,
        NVVM::MBarrierTryWaitParityOp, NVVM::CpAsyncBulkGlobalToSharedClusterOp,
        NVVM::CpAsyncBulkSharedCTAToGlobalOp, NVVM::CpAsyncBulkCommitGroupOp,
        NVVM::CpAsyncBulkWaitGroupOp, NVVM::CpAsyncOp,
        NVVM::CpAsyncCommitGroupOp, NVVM::CpAsyncWaitGroupOp,
        NVVM::FenceProxyOp, NVVM::ConvertF32x4ToF4x4Op>(op);
  }
  LogicalResult execute(Operation &op,
                        ExecutionContext &context) const override;
  std::unique_ptr<WorkgroupState> createWorkgroupState() const override {
    return std::make_unique<Tcgen05State>();
  }
};

LogicalResult SM100InstructionSet::execute(Operation &op,
                                           ExecutionContext &context) const {
  if (!context.inKernel())
    return context.fail("NVVM op outside a kernel");
  if (nvvm::isCommonNVVMOp(op))
    return nvvm::executeCommonNVVMOp(op, context);
  auto ctaGroup2 = [](NVVM::CTAGroupKind group) {
    return group == NVVM::CTAGroupKind::CTA_2;
  };
  return llvm::TypeSwitch<Operation *, LogicalResult>(&op)
      .Case([&](LLVM::CallIntrinsicOp call) -> LogicalResult {
        if (call.getIntrin() != kCvtRsE2M1x4)
          return executeIntrinsic(call, context);
        if (call.getArgs().size() != 2 || call.getNumResults() != 1)
          return context.fail(llvm::formatv("intrinsic '{0}' takes a "
                                            "vector<4xf32> and an i32",
                                            kCvtRsE2M1x4));
        return executeCvtRsE2M1x4(call.getArgs()[0], call.getArgs()[1],
                                  call.getResult(0), context);
      })
      .Case([&](NVVM::ConvertF32x4ToF4x4Op cvt) -> LogicalResult {
        if (cvt.getRelu() || !isa<Float4E2M1FNType>(cvt.getDstTy()))
          return context.fail("only cvt.rs.satfinite.e2m1x4.f32 is modelled");
        return executeCvtRsE2M1x4(cvt.getSrc(), cvt.getRbits(), cvt.getDst(),
                                  context);
      })
      .Case([&](NVVM::Tcgen05AllocOp alloc) -> LogicalResult {
        if (failed(requireCtaGroup1(context, ctaGroup2(alloc.getGroup()))))
          return failure();
        return executeAlloc(context, alloc.getAddr(), alloc.getNCols());
      })
      .Case([&](NVVM::Tcgen05DeallocOp dealloc) -> LogicalResult {
        if (failed(requireCtaGroup1(context, ctaGroup2(dealloc.getGroup()))))
          return failure();
        return executeDealloc(context, dealloc.getTaddr(), dealloc.getNCols());
      })
      .Case([&](NVVM::Tcgen05RelinquishAllocPermitOp relinquish) -> LogicalResult {
        if (failed(requireCtaGroup1(context, ctaGroup2(relinquish.getGroup()))))
          return failure();
        return executeRelinquish(context);
      })
      .Case<NVVM::Tcgen05FenceOp, NVVM::Tcgen05WaitOp,
            NVVM::CpAsyncBulkCommitGroupOp, NVVM::CpAsyncBulkWaitGroupOp,
            NVVM::CpAsyncCommitGroupOp, NVVM::CpAsyncWaitGroupOp,
            NVVM::FenceProxyOp>([&](Operation *) { return success(); })
      .Case([&](NVVM::CpAsyncOp copy) { return executeCpAsync(copy, context); })
      .Case([&](NVVM::CpAsyncBulkGlobalToSharedClusterOp copy) {
        return executeBulkLoad(copy, context);
      })
      .Case([&](NVVM::CpAsyncBulkSharedCTAToGlobalOp copy) {
        return executeBulkStore(copy, context);
      })
      .Case([&](NVVM::Tcgen05CommitOp commit) -> LogicalResult {
        if (failed(requireCtaGroup1(context, ctaGroup2(commit.getGroup()))))
          return failure();
        return executeCommit(context, commit.getAddr(),
                             commit.getMulticastMask());
      })
      .Case([&](NVVM::Tcgen05CpOp cp) -> LogicalResult {
        if (failed(requireCtaGroup1(context, ctaGroup2(cp.getGroup()))))
          return failure();
        if (cp.getSrcFormat())
          return context.fail("tcgen05.cp with decompression (.b8x16 from "
                              ".b6x16_p32 / .b4x16_p64) is not modelled");
        std::optional<std::pair<ptx::CpShape, ptx::CpMulticast>> shape =
            parseCpShape(
                (NVVM::stringifyTcgen05CpShape(cp.getShape()).drop_front(6) +
                 (cp.getMulticast() == NVVM::Tcgen05CpMulticast::NONE
                      ? ""
                      : "_" + NVVM::stringifyTcgen05CpMulticast(
                                  cp.getMulticast())))
                    .str());
        if (!shape)
          return context.fail(llvm::formatv(
              "tcgen05.cp shape {0} with multicast {1} is not a valid "
              "combination",
              NVVM::stringifyTcgen05CpShape(cp.getShape()),
              NVVM::stringifyTcgen05CpMulticast(cp.getMulticast())));
        return executeCp(context, shape->first, shape->second, cp.getTaddr(),
                         cp.getSmemDesc());
      })
      .Case([&](NVVM::Tcgen05LdOp ld) -> LogicalResult {
        FailureOr<ptx::LdStShape> shape =
            getLdStShape(context, ld.getShape(), ld.getOffset());
        return failed(shape) ? failure()
                             : executeLd(context, *shape, ld.getPack(),
                                         ld.getTmemAddr(), ld.getRes());
      })
      .Case([&](NVVM::Tcgen05StOp st) -> LogicalResult {
        FailureOr<ptx::LdStShape> shape =
            getLdStShape(context, st.getShape(), st.getOffset());
        return failed(shape) ? failure()
                             : executeSt(context, *shape, st.getUnpack(),
                                         st.getTmemAddr(), st.getVal());
      })
      .Case([&](NVVM::Tcgen05MmaSmemDescOp desc) {
        // Bit packing only, as MLIR 22 translates it ([PTX4], docs/nvvm.md):
        // the operands are the already encoded (>> 4) fields, masked to 14
        // bits, with the fixed 0b001 at bits 46..48.
        LaneValues &out = context.define(desc.getRes());
        context.forEachActiveLane([&](unsigned lane) {
          auto field = [&](Value v, uint64_t mask, unsigned shift) {
            return (context.get(v).at(lane) & mask) << shift;
          };
          out.at(lane) = field(desc.getStartAddr(), 0x3FFF, 0) |
                         field(desc.getLeadingDimOffset(), 0x3FFF, 16) |
                         field(desc.getStrideDimOffset(), 0x3FFF, 32) |
                         uint64_t{1} << 46 | field(desc.getBaseOffset(), 7, 49) |
                         field(desc.getLeadingDimMode(), 1, 52) |
                         field(desc.getSwizzleMode(), 7, 61);
        });
        return success();
      })
      .Case([&](NVVM::Tcgen05MMABlockScaleOp mma) -> LogicalResult {
        if (failed(requireCtaGroup1(context, ctaGroup2(mma.getCtaGroup()))))
          return failure();
        // The collector buffer usage (collector::a::*) is a reuse hint of
        // the A operand; with correct programs it does not change A.
        return executeMma(context, mma.getKind(), mma.getBlockScale(),
                          {mma.getMatrixD(), mma.getMatrixA(), mma.getMatrixB(),
                           mma.getIdesc(), mma.getEnableInputD(),
                           mma.getScaleA(), mma.getScaleB()});
      })
      .Default([&](Operation *other) { return executeMbarrier(*other, context); });
}

} // namespace

std::unique_ptr<InstructionSet>
mlir::fp4train::emulation::createTcgen05InstructionSet(
    const GPUTarget &target) {
  return std::make_unique<SM100InstructionSet>(target);
}
