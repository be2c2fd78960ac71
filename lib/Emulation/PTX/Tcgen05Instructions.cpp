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
//    address; decompressing copies are errors naming what is not modelled;
//  - clusters (ClusterOps.cpp): a cluster's CTAs run concurrently (fibers of
//    one scheduler); mbarrier arrives, commits and TMA signals reach other
//    CTAs' mbarriers through .shared::cluster addresses; .cta_group::2
//    alloc / dealloc meet the peer CTA's warp, and its mma and cp use the
//    pair's tensor and shared memories (the even CTA's first).
//
//===----------------------------------------------------------------------===//

#include "fp4train/Emulation/InstructionSets.h"

#include "NVVMCommon.h"
#include "Tcgen05Common.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/FormatVariadic.h"

#include <optional>

using namespace mlir;
using namespace mlir::fp4train;
using namespace mlir::fp4train::emulation;
using namespace mlir::fp4train::emulation::tcgen05;

namespace {

//===----------------------------------------------------------------------===//
// The instruction set
//===----------------------------------------------------------------------===//

/// NVIDIA sm_100a / sm_103a: 32-lane warps, tensor memory, tcgen05.
class SM100InstructionSet final : public nvvm::NVVMInstructionSet {
public:
  using NVVMInstructionSet::NVVMInstructionSet;
  bool runsBranchesConcurrently() const override { return true; }
  bool supportsClusters() const override { return true; }
  bool handles(Operation &op) const override {
    if (nvvm::isCommonNVVMOp(op) || isClusterOp(op))
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
        NVVM::CpAsyncBulkTensorGlobalToSharedClusterOp,
        nvgpu::TmaCreateDescriptorOp, NVVM::CpAsyncBulkSharedCTAToGlobalOp,
        NVVM::CpAsyncBulkCommitGroupOp, NVVM::CpAsyncBulkWaitGroupOp,
        NVVM::CpAsyncOp, NVVM::CpAsyncCommitGroupOp, NVVM::CpAsyncWaitGroupOp,
        NVVM::ConvertF32x4ToF4x4Op>(op);
  }
  LogicalResult execute(Operation &op,
                        ExecutionContext &context) const override;
  std::unique_ptr<WorkgroupState> createWorkgroupState() const override {
    return std::make_unique<Tcgen05State>();
  }
};

LogicalResult SM100InstructionSet::execute(Operation &op,
                                           ExecutionContext &context) const {
  // The host's tensor maps (what cuTensorMapEncodeTiled makes).
  if (auto create = dyn_cast<nvgpu::TmaCreateDescriptorOp>(op)) {
    if (context.inKernel())
      return context.fail("a tensor map is created on the host");
    return executeCreateTensorMap(create, context);
  }
  if (!context.inKernel())
    return context.fail("NVVM op outside a kernel");
  if (nvvm::isCommonNVVMOp(op))
    return nvvm::executeCommonNVVMOp(op, context);
  if (isClusterOp(op))
    return executeClusterOp(op, context);
  // The .cta_group of a tcgen05 op, checked against the kernel's others.
  auto ctaGroup2 = [&](NVVM::CTAGroupKind group) -> FailureOr<bool> {
    const bool pair = group == NVVM::CTAGroupKind::CTA_2;
    if (failed(useCtaGroup(context, pair)))
      return failure();
    return pair;
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
        FailureOr<bool> pair = ctaGroup2(alloc.getGroup());
        if (failed(pair))
          return failure();
        return executeAlloc(context, *pair, alloc.getAddr(), alloc.getNCols());
      })
      .Case([&](NVVM::Tcgen05DeallocOp dealloc) -> LogicalResult {
        FailureOr<bool> pair = ctaGroup2(dealloc.getGroup());
        if (failed(pair))
          return failure();
        return executeDealloc(context, *pair, dealloc.getTaddr(),
                              dealloc.getNCols());
      })
      .Case([&](NVVM::Tcgen05RelinquishAllocPermitOp relinquish)
                -> LogicalResult {
        // With cta_group::2 each CTA's warp gives up its own CTA's permit.
        if (failed(ctaGroup2(relinquish.getGroup())))
          return failure();
        return executeRelinquish(context);
      })
      .Case<NVVM::Tcgen05FenceOp, NVVM::Tcgen05WaitOp,
            NVVM::CpAsyncBulkCommitGroupOp, NVVM::CpAsyncBulkWaitGroupOp,
            NVVM::CpAsyncCommitGroupOp, NVVM::CpAsyncWaitGroupOp>(
          [&](Operation *) { return success(); })
      .Case([&](NVVM::CpAsyncOp copy) { return executeCpAsync(copy, context); })
      .Case([&](NVVM::CpAsyncBulkGlobalToSharedClusterOp copy) {
        return executeBulkLoad(copy, context);
      })
      .Case([&](NVVM::CpAsyncBulkTensorGlobalToSharedClusterOp copy) {
        return executeTensorLoad(copy, context);
      })
      .Case([&](NVVM::CpAsyncBulkSharedCTAToGlobalOp copy) {
        return executeBulkStore(copy, context);
      })
      .Case([&](NVVM::Tcgen05CommitOp commit) -> LogicalResult {
        if (failed(ctaGroup2(commit.getGroup())))
          return failure();
        return executeCommit(context, commit.getAddr(),
                             commit.getMulticastMask());
      })
      .Case([&](NVVM::Tcgen05CpOp cp) -> LogicalResult {
        FailureOr<bool> pair = ctaGroup2(cp.getGroup());
        if (failed(pair))
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
        return executeCp(context, shape->first, shape->second, *pair,
                         cp.getTaddr(), cp.getSmemDesc());
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
                         uint64_t{1} << 46 |
                         field(desc.getBaseOffset(), 7, 49) |
                         field(desc.getLeadingDimMode(), 1, 52) |
                         field(desc.getSwizzleMode(), 7, 61);
        });
        return success();
      })
      .Case([&](NVVM::Tcgen05MMABlockScaleOp mma) -> LogicalResult {
        FailureOr<bool> pair = ctaGroup2(mma.getCtaGroup());
        if (failed(pair))
          return failure();
        // The collector buffer usage (collector::a::*) is a reuse hint of
        // the A operand; with correct programs it does not change A.
        return executeMma(context, mma.getKind(), mma.getBlockScale(), *pair,
                          {mma.getMatrixD(), mma.getMatrixA(), mma.getMatrixB(),
                           mma.getIdesc(), mma.getEnableInputD(),
                           mma.getScaleA(), mma.getScaleB()});
      })
      .Default(
          [&](Operation *other) { return executeMbarrier(*other, context); });
}

} // namespace

std::unique_ptr<InstructionSet>
mlir::fp4train::emulation::createTcgen05InstructionSet(
    const GPUTarget &target) {
  return std::make_unique<SM100InstructionSet>(target);
}
