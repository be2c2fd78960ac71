//===- NVVMCommon.h - NVVM ops all NVIDIA instruction sets share -*- C++ -*-==//
//
// Private to lib/Emulation/PTX: what the sm_120a, sm_90a and sm_100a/sm_103a
// instruction sets share: the base class of an NVIDIA chip, the NVVM ops
// they execute the same way (special registers, bar.sync, vote.sync,
// mul.hi.u32, the packed FP4/FP8/UE8M0 conversions and the E4M3 to f16 one)
// and the block-scale kind mapping, defined once in NVVMInstructions.cpp.
//
//===----------------------------------------------------------------------===//

#ifndef FP4TRAIN_LIB_EMULATION_PTX_NVVMCOMMON_H
#define FP4TRAIN_LIB_EMULATION_PTX_NVVMCOMMON_H

#include "fp4train/Emulation/Interpreter.h"
#include "fp4train/Emulation/PTX.h"
#include "fp4train/Emulation/Tcgen05.h"
#include "fp4train/Target/GPUTarget.h"

#include "mlir/Dialect/LLVMIR/NVVMDialect.h"

#include <cassert>
#include <cstdint>
#include <map>
#include <optional>

namespace mlir::fp4train::emulation::nvvm {

/// An NVIDIA chip: its name, 32-lane warps, shared memory, the NVVM dialect.
class NVVMInstructionSet : public InstructionSet {
public:
  explicit NVVMInstructionSet(const GPUTarget &target) : target(target) {
    assert(target.subgroupSize == ::fp4train::emulation::ptx::kWarpSize &&
           "the PTX models run 32-lane warps");
  }
  StringRef getName() const override { return target.name; }
  unsigned getSubgroupSize() const override { return target.subgroupSize; }
  StringRef getSubgroupTerm() const override { return "warp"; }
  StringRef getSharedMemoryTerm() const override { return "shared memory"; }

private:
  const GPUTarget &target;
};

/// The per-CTA state of a chip with mbarriers (sm_90a and sm_100a/sm_103a):
/// the mbarrier objects by shared address (MbarrierOps.cpp), which TMA loads
/// (cp.async.bulk.tensor) signal. Each chip's workgroup state derives from
/// it.
struct MbarrierState : public WorkgroupState {
  std::map<uint64_t, ::fp4train::emulation::ptx::Mbarrier> barriers;
  /// Called when the barrier at `address` completes a phase: completes the
  /// asynchronous operations the chip attached to that phase.
  virtual void completePhase(uint64_t address) {}
};

/// True for the shared NVVM ops.
bool isCommonNVVMOp(Operation &op);
/// fence.proxy: `async` and `async.shared::cta` order the executing
/// threads' generic-proxy shared-memory writes before later
/// asynchronous-proxy reads (ExecutionContext::fenceProxy); the other
/// kinds concern state the models do not track.
LogicalResult executeFenceProxy(NVVM::FenceProxyOp op,
                                ExecutionContext &context);
/// Executes a shared NVVM op (isCommonNVVMOp) for the active lanes.
LogicalResult executeCommonNVVMOp(Operation &op, ExecutionContext &context);

/// The models' view of shared memory: the core's checked accesses of the
/// asynchronous proxy (the tensor core reads operands ordered by mbarriers,
/// not by bar.sync) on behalf of one warp of the executing CTA, or of CTA
/// `rank` of its cluster (a CTA pair's MMA). A failed access has already
/// set the core's error.
class CheckedSharedMemory final
    : public ::fp4train::emulation::ptx::SharedMemory {
public:
  CheckedSharedMemory(ExecutionContext &context, unsigned subgroup)
      : context(context), subgroup(subgroup) {}
  static CheckedSharedMemory ofClusterMember(ExecutionContext &context,
                                             unsigned rank) {
    CheckedSharedMemory view(context, /*subgroup=*/0);
    view.rank = rank;
    return view;
  }
  std::string read(uint32_t address, unsigned size, uint8_t *out) override {
    if (succeeded(rank ? context.readClusterShared(*rank, address, size, out)
                       : context.readShared(address, size, subgroup, out,
                                            /*asyncProxy=*/true)))
      return {};
    failedInCore = true;
    return "shared memory access failed";
  }
  bool failedInCore = false;

private:
  ExecutionContext &context;
  unsigned subgroup;
  std::optional<unsigned> rank;
};

/// Turns a model's message into the op's failure (or passes the core's).
inline LogicalResult check(ExecutionContext &context, const std::string &why,
                           const CheckedSharedMemory *smem = nullptr) {
  if (why.empty())
    return success();
  if (smem && smem->failedInCore)
    return failure();
  return context.fail(why);
}

/// True for the sm_90a warpgroup MMA ops (WgmmaOps.cpp): wgmma.mma_async,
/// wgmma.fence, wgmma.commit_group, wgmma.wait_group.
bool isWgmmaOp(Operation &op);
/// Executes a wgmma op; needs the workgroup state of createWgmmaState.
LogicalResult executeWgmmaOp(Operation &op, ExecutionContext &context);
/// The per-workgroup state of the wgmma ops: each warpgroup's async groups.
std::unique_ptr<WorkgroupState> createWgmmaState();

/// The models' kind of a block-scaled NVVM MMA (mma.sync and tcgen05.mma).
::fp4train::emulation::ptx::BlockScaleKind
getModelKind(NVVM::MMABlockScaleKind kind);

} // namespace mlir::fp4train::emulation::nvvm

#endif // FP4TRAIN_LIB_EMULATION_PTX_NVVMCOMMON_H
