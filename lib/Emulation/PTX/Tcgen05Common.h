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

inline Tcgen05State &getState(ExecutionContext &context) {
  return *static_cast<Tcgen05State *>(context.getWorkgroupState());
}

// The shared-memory view and message check of the NVIDIA models
// (NVVMCommon.h), also used by the wgmma ops.
using nvvm::check;
using nvvm::CheckedSharedMemory;

inline LogicalResult requireCtaGroup1(ExecutionContext &context,
                                      bool ctaGroup2) {
  if (ctaGroup2)
    return context.fail("cta_group::2 (CTA pairs) is not modelled");
  return success();
}

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

LogicalResult executeAlloc(ExecutionContext &context, Value address,
                           Value nCols);
LogicalResult executeDealloc(ExecutionContext &context, Value taddr,
                             Value nCols);
LogicalResult executeRelinquish(ExecutionContext &context);
LogicalResult executeCp(ExecutionContext &context, ptx::CpShape shape,
                        ptx::CpMulticast multicast, Value taddr, Value desc);
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

LogicalResult executeMma(ExecutionContext &context,
                         NVVM::MMABlockScaleKind kind,
                         NVVM::Tcgen05MMABlockScale blockScale,
                         const MmaValues &v);
LogicalResult executeCommit(ExecutionContext &context, Value address,
                            Value multicastMask);

//===----------------------------------------------------------------------===//
// MbarrierOps.cpp: mbarrier
//===----------------------------------------------------------------------===//

FailureOr<ptx::Mbarrier *> getBarrier(ExecutionContext &context,
                                      uint64_t address);
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
