//===- WgmmaOps.cpp - sm_90a wgmma ops on the warpgroup MMA model ---------===//
//
// The NVVM ops of Hopper's warpgroup MMA (PTX ISA §9.7.15), executed per
// warpgroup (four consecutive warps, threads 128 g .. 128 g + 127) on the
// model of fp4train/Emulation/Wgmma.h:
//  - nvvm.wgmma.mma_async: every thread of the warpgroup active, the two
//    matrix descriptors uniform across it; m64nNk32 with e4m3/e5m2 A and B,
//    or m64nNk16 with f16 A and B, from shared memory (read through the
//    asynchronous proxy), A row-major and B column-major (K-major, the only
//    layout 8-bit types have), no negation, f32 D. The result is computed at
//    issue but pending: until a wgmma.wait_group retires its group, any op
//    other than another wgmma that reads it fails (§9.7.15.7: accessing the
//    accumulator before the wait is undefined, except as the accumulator of a
//    later wgmma);
//  - nvvm.wgmma.fence.aligned: required before a warpgroup's wgmma.mma_async
//    and again after each wgmma.wait_group (the registers are then read or
//    written by other instructions before the next wgmma: §9.7.15.6.1);
//  - nvvm.wgmma.commit.group.sync.aligned: the warpgroup's uncommitted
//    wgmma ops become one group (possibly empty);
//  - nvvm.wgmma.wait.group.sync.aligned N: retires the warpgroup's oldest
//    groups until at most N are pending.
// A kernel that ends with a wgmma not waited for is an error.
//
//===----------------------------------------------------------------------===//

#include "fp4train/Emulation/Wgmma.h"

#include "NVVMCommon.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/FormatVariadic.h"

#include <deque>

using namespace mlir;
using namespace mlir::fp4train;
using namespace mlir::fp4train::emulation;
namespace ptx = ::fp4train::emulation::ptx;

namespace {

constexpr unsigned kWarpgroup = ptx::kWarpgroupSize;

/// What one warpgroup has in flight.
struct Warpgroup {
  /// Issued, not yet committed.
  std::vector<Value> uncommitted;
  /// Committed groups, oldest first.
  std::deque<std::vector<Value>> groups;
  /// A wgmma.fence since the last wgmma.wait_group.
  bool fenced = false;
};

class WgmmaState final : public nvvm::MbarrierState {
public:
  Warpgroup &get(unsigned warpgroup) {
    if (warpgroups.size() <= warpgroup)
      warpgroups.resize(warpgroup + 1);
    return warpgroups[warpgroup];
  }
  /// Counts the warpgroups for which `value` is pending.
  llvm::DenseMap<Value, unsigned> pendingCount;

  std::string finish() override {
    for (auto [index, group] : llvm::enumerate(warpgroups))
      if (!group.uncommitted.empty() || !group.groups.empty())
        return llvm::formatv("warpgroup {0} ends the kernel with a "
                             "wgmma.mma_async it has not waited for "
                             "(wgmma.commit_group, wgmma.wait_group)",
                             index);
    return {};
  }

private:
  std::vector<Warpgroup> warpgroups;
};

WgmmaState &getWgmmaState(ExecutionContext &context) {
  return *static_cast<WgmmaState *>(context.getWorkgroupState());
}

/// Calls `body(warpgroup, firstLane)` for each warpgroup with an active
/// lane, after checking that all of its 128 threads are active.
LogicalResult forEachWholeWarpgroup(
    ExecutionContext &context, StringRef instruction,
    llvm::function_ref<LogicalResult(unsigned, unsigned)> body) {
  const unsigned lanes = context.getNumLanes();
  for (unsigned first = 0; first < lanes; first += kWarpgroup) {
    unsigned active = 0, present = std::min(lanes - first, kWarpgroup);
    for (unsigned lane = first; lane < first + present; ++lane)
      active += context.isActive(lane);
    if (active == 0)
      continue;
    if (active != kWarpgroup)
      return context.fail(llvm::formatv(
          "warpgroup {0} executes {1} with {2} of 128 threads active",
          first / kWarpgroup, instruction, active));
    if (failed(body(first / kWarpgroup, first)))
      return failure();
  }
  return success();
}

std::optional<ptx::ElementType> getOperandType(NVVM::WGMMATypes type) {
  if (type == NVVM::WGMMATypes::e4m3)
    return ptx::ElementType::E4M3;
  if (type == NVVM::WGMMATypes::e5m2)
    return ptx::ElementType::E5M2;
  if (type == NVVM::WGMMATypes::f16)
    return ptx::ElementType::F16;
  return std::nullopt;
}

LogicalResult executeMmaAsync(NVVM::WgmmaMmaAsyncOp op,
                              ExecutionContext &context) {
  ptx::WgmmaConfig config;
  NVVM::MMAShapeAttr shape = op.getShape();
  std::optional<ptx::ElementType> typeA = getOperandType(op.getTypeA());
  std::optional<ptx::ElementType> typeB = getOperandType(op.getTypeB());
  const bool f16 = typeA == ptx::ElementType::F16;
  if (!typeA || !typeB || f16 != (typeB == ptx::ElementType::F16) ||
      shape.getM() != 64 || shape.getK() != (f16 ? 16 : 32) ||
      op.getTypeD() != NVVM::WGMMATypes::f32)
    return context.fail("only wgmma.mma_async m64nNk32 with e4m3/e5m2 A and "
                        "B, or m64nNk16 with f16 A and B, and f32 D is "
                        "modelled");
  if (op.getLayoutA() != NVVM::MMALayout::row ||
      op.getLayoutB() != NVVM::MMALayout::col)
    return context.fail("the modelled wgmma operands are K-major: A row, B "
                        "col (PTX ISA 9.7.15.5.1.2; 8-bit types have no "
                        "other)");
  if (op.getScaleA() != NVVM::WGMMAScaleIn::one ||
      op.getScaleB() != NVVM::WGMMAScaleIn::one)
    return context.fail("imm-scale-a/b negation is not modelled");
  config.n = shape.getN();
  config.typeA = *typeA;
  config.typeB = *typeB;
  config.accumulate = op.getScaleD() == NVVM::WGMMAScaleOut::one;

  WgmmaState &state = getWgmmaState(context);
  Value inouts = op.getInouts(), result = op.getResults();
  const unsigned registers = config.n / 2;
  // Read the accumulator before defining the result (they may be the same
  // registers in PTX; in SSA the input is a different value).
  const LaneValues input = context.get(inouts);
  if (input.width != registers)
    return context.fail(llvm::formatv(
        "m64n{0}k{1} takes {2} f32 accumulator registers, not "
        "{3}",
        config.n, ptx::getWgmmaK(config), registers, input.width));
  LaneValues &out = context.define(result);
  unsigned issued = 0;
  LogicalResult status = forEachWholeWarpgroup(
      context, "wgmma.mma_async",
      [&](unsigned index, unsigned first) -> LogicalResult {
        Warpgroup &group = state.get(index);
        if (!group.fenced)
          return context.fail(llvm::formatv(
              "warpgroup {0} issues wgmma.mma_async without a wgmma.fence "
              "since its last wgmma.wait_group (PTX ISA 9.7.15.6.1)",
              index));
        for (unsigned warp = 0; warp < 4; ++warp)
          if (failed(context.requireUniform(
                  ValueRange{op.getDescriptorA(), op.getDescriptorB()},
                  first + warp * ptx::kWarpSize, "wgmma matrix descriptors")))
            return failure();
        const uint64_t descA = context.get(op.getDescriptorA()).at(first);
        const uint64_t descB = context.get(op.getDescriptorB()).at(first);
        for (unsigned warp = 1; warp < 4; ++warp)
          if (context.get(op.getDescriptorA()).at(first + 32 * warp) != descA ||
              context.get(op.getDescriptorB()).at(first + 32 * warp) != descB)
            return context.fail("wgmma matrix descriptors differ across the "
                                "warpgroup");
        std::vector<std::vector<uint32_t>> c(kWarpgroup), d;
        for (unsigned t = 0; t < kWarpgroup; ++t) {
          c[t].resize(registers);
          for (unsigned i = 0; i < registers; ++i)
            c[t][i] = static_cast<uint32_t>(input.at(first + t, i));
        }
        nvvm::CheckedSharedMemory smem(context, first / ptx::kWarpSize);
        if (failed(nvvm::check(
                context, ptx::wgmma(config, descA, descB, smem, c, &d), &smem)))
          return failure();
        for (unsigned t = 0; t < kWarpgroup; ++t)
          for (unsigned i = 0; i < registers; ++i)
            out.at(first + t, i) = d[t][i];
        group.uncommitted.push_back(result);
        ++issued;
        ++context.getStats().mfmas;
        return success();
      });
  if (failed(status))
    return failure();
  if (issued) {
    state.pendingCount[result] += issued;
    context.setPending(result, "the D of a wgmma.mma_async before a "
                               "wgmma.wait_group retired it");
  }
  return success();
}

LogicalResult executeWait(NVVM::WgmmaWaitGroupSyncOp op,
                          ExecutionContext &context) {
  WgmmaState &state = getWgmmaState(context);
  return forEachWholeWarpgroup(context, "wgmma.wait_group",
                               [&](unsigned index, unsigned) -> LogicalResult {
                                 Warpgroup &group = state.get(index);
                                 while (group.groups.size() >
                                        static_cast<size_t>(op.getGroup())) {
                                   for (Value value : group.groups.front())
                                     if (--state.pendingCount[value] == 0) {
                                       state.pendingCount.erase(value);
                                       context.clearPending(value);
                                     }
                                   group.groups.pop_front();
                                 }
                                 group.fenced = false;
                                 return success();
                               });
}

} // namespace

bool mlir::fp4train::emulation::nvvm::isWgmmaOp(Operation &op) {
  return isa<NVVM::WgmmaMmaAsyncOp, NVVM::WgmmaFenceAlignedOp,
             NVVM::WgmmaGroupSyncAlignedOp, NVVM::WgmmaWaitGroupSyncOp>(op);
}

LogicalResult
mlir::fp4train::emulation::nvvm::executeWgmmaOp(Operation &op,
                                                ExecutionContext &context) {
  return llvm::TypeSwitch<Operation *, LogicalResult>(&op)
      .Case([&](NVVM::WgmmaMmaAsyncOp mma) {
        return executeMmaAsync(mma, context);
      })
      .Case([&](NVVM::WgmmaFenceAlignedOp) {
        return forEachWholeWarpgroup(
            context, "wgmma.fence", [&](unsigned index, unsigned) {
              getWgmmaState(context).get(index).fenced = true;
              return success();
            });
      })
      .Case([&](NVVM::WgmmaGroupSyncAlignedOp) {
        return forEachWholeWarpgroup(
            context, "wgmma.commit_group", [&](unsigned index, unsigned) {
              Warpgroup &group = getWgmmaState(context).get(index);
              group.groups.push_back(std::move(group.uncommitted));
              group.uncommitted.clear();
              return success();
            });
      })
      .Case([&](NVVM::WgmmaWaitGroupSyncOp wait) {
        return executeWait(wait, context);
      })
      .Default([&](Operation *) { return context.fail("not a wgmma op"); });
}

std::unique_ptr<WorkgroupState>
mlir::fp4train::emulation::nvvm::createWgmmaState() {
  return std::make_unique<WgmmaState>();
}
