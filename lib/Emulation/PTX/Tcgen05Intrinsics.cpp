//===- Tcgen05Intrinsics.cpp - llvm.nvvm.tcgen05.* and cvt.rs intrinsics --===//
//
// The llvm.call_intrinsic "llvm.nvvm.tcgen05.*" form of the tcgen05 ops that
// sm_103a kernels use ([PTX1] in docs/nvvm.md: MLIR's per-op chip check
// rejects sm_103a): the parser of the intrinsic names (the tcgen05.cp shape
// names, which the nvvm.tcgen05.cp op goes through too, and the
// "<shape>.x<N>" of tcgen05.ld/st) and their execution by the handlers of the
// NVVM ops; and cvt.rs.satfinite.e2m1x4.f32 (the model of CvtRsE2M1x4.cpp,
// PTX ISA §9.7.9.21 "cvt"), the intrinsic that sm_103a modules call and the
// op nvvm.convert.f32x4.to.f4x4 both execute.
//
//===----------------------------------------------------------------------===//

#include "Tcgen05Common.h"

#include "fp4train/Emulation/PTX.h"

#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/FormatVariadic.h"

namespace mlir::fp4train::emulation::tcgen05 {

//===----------------------------------------------------------------------===//
// llvm.call_intrinsic "llvm.nvvm.tcgen05.*"
//===----------------------------------------------------------------------===//

/// cvt.rs.satfinite.e2m1x4.f32 d, {src[0..3]}, rbits
/// (ptx::cvtRsSatfiniteE2M1x4: src[0] is the PTX operand a, whose code lands in
/// d[15:12]).
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
static std::optional<std::pair<ptx::LdStShape, unsigned>>
parseLdSt(StringRef name) {
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
  // The .cta_group suffix (".cg1" / ".cg2") of alloc, dealloc, relinquish,
  // commit and cp, checked against the kernel's other tcgen05 ops.
  std::optional<bool> pair;
  if (name.consume_back(".cg1"))
    pair = false;
  else if (name.consume_back(".cg2"))
    pair = true;
  if (pair && failed(useCtaGroup(context, *pair)))
    return failure();
  if (pair && (name == "alloc.shared" || name == "alloc"))
    return failed(expectArgs(2))
               ? failure()
               : executeAlloc(context, *pair, args[0], args[1]);
  if (pair && name == "dealloc")
    return failed(expectArgs(2))
               ? failure()
               : executeDealloc(context, *pair, args[0], args[1]);
  if (pair && name == "relinq.alloc.permit")
    return failed(expectArgs(0)) ? failure() : executeRelinquish(context);
  if (pair && (name == "commit.shared" || name == "commit"))
    return failed(expectArgs(1)) ? failure()
                                 : executeCommit(context, args[0], Value());
  // commit.mc.{shared.}cg{1,2}.{i16,i32}: .multicast::cluster with a mask.
  if (pair && (name == "commit.mc.shared" || name == "commit.mc"))
    return failed(expectArgs(2)) ? failure()
                                 : executeCommit(context, args[0], args[1]);
  if (name == "fence.before.thread.sync" || name == "fence.after.thread.sync" ||
      name == "wait.ld" || name == "wait.st")
    return success();
  if (pair && name.consume_front("cp.")) {
    std::optional<std::pair<ptx::CpShape, ptx::CpMulticast>> shape =
        parseCpShape(name);
    if (!shape)
      return notModelled();
    return failed(expectArgs(2))
               ? failure()
               : executeCp(context, shape->first, shape->second, *pair, args[0],
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
      return context.fail(llvm::formatv(
          "intrinsic '{0}' returns {1} "
          "registers, not {2}",
          full, ptx::getLdStRegisters(shape->first, shape->second), width));
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
    // The cta_group operand: 1 or 2, the same in every issuing lane.
    std::optional<uint32_t> group;
    for (unsigned lane = 0; lane < context.getNumLanes(); ++lane) {
      if (!context.isActive(lane))
        continue;
      const uint32_t g = context.getWord(args[7], lane);
      if ((g != 1 && g != 2) || (group && *group != g))
        return context.fail(llvm::formatv(
            "intrinsic '{0}': cta_group operand {1} (1 or 2, the same in "
            "every issuing thread)",
            full, g));
      group = g;
    }
    if (!group)
      return success();
    if (failed(useCtaGroup(context, *group == 2)))
      return failure();
    return executeMma(
        context, *kind, *blockScale, *group == 2,
        {args[0], args[1], args[2], args[3], args[4], args[5], args[6]});
  }
  return notModelled();
}

} // namespace mlir::fp4train::emulation::tcgen05
