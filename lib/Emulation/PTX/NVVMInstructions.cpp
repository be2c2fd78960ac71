//===- NVVMInstructions.cpp - The NVIDIA instruction sets of the emulator -===//
//
// The NVVM ops of the sm_120a and sm_90a kernels, executed by the PTX
// models of fp4train/Emulation/PTX.h on the lanes' registers: the
// block-scaled mma.sync (sm_120a) and the FP8 mma.sync (sm_90a) once per
// warp with all 32 lanes' fragments (collective instructions: every lane
// active, uniform selectors), prmt per active lane and the warpgroup MMA
// (sm_90a, WgmmaOps.cpp), and the ops every
// NVIDIA set shares (NVVMCommon.h): the packed conversions per active lane,
// vote.sync per warp, mul.hi.u32, bar.sync as the core's workgroup barrier,
// and the special registers that gpu-to-nvvm reads the ids from.
//
//===----------------------------------------------------------------------===//

#include "fp4train/Emulation/InstructionSets.h"

#include "fp4train/Emulation/PTX.h"

#include "NVVMCommon.h"
#include "Tcgen05Common.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/FormatVariadic.h"

#include <optional>

using namespace mlir;
using namespace mlir::fp4train;
using namespace mlir::fp4train::emulation;
namespace ptx = ::fp4train::emulation::ptx;

namespace {

/// NVIDIA sm_120a, sm_121a: the block-scaled mma.sync and the shared ops.
class SM120aInstructionSet final : public nvvm::NVVMInstructionSet {
public:
  using NVVMInstructionSet::NVVMInstructionSet;
  /// The ops with a model; other NVVM ops are unsupported.
  bool handles(Operation &op) const override {
    return isa<NVVM::MmaBlockScaleOp>(op) || nvvm::isCommonNVVMOp(op);
  }
  LogicalResult execute(Operation &op,
                        ExecutionContext &context) const override;
};

/// NVIDIA sm_90a (and sm_89): the FP8 mma.sync (as llvm.call_intrinsic,
/// which MLIR 22's nvvm.mma.sync does not verify for e4m3/e5m2), prmt, the
/// wgmma ops, the mbarriers and tiled TMA loads of one CTA (the models of
/// sm_100a's, MbarrierOps.cpp and CpAsyncOps.cpp, without clusters; sm_90a
/// only on hardware: the emulator does not tell sm_89 apart) and the shared
/// ops but the FP4 conversion, which these chips lack.
class SM90aInstructionSet final : public nvvm::NVVMInstructionSet {
public:
  using NVVMInstructionSet::NVVMInstructionSet;
  /// The ops with a model; other NVVM ops are unsupported.
  bool handles(Operation &op) const override {
    if (nvvm::isCommonNVVMOp(op))
      return true;
    if (auto call = dyn_cast<LLVM::CallIntrinsicOp>(op))
      return parseMmaSyncFP8(call.getIntrin()).has_value();
    if (isa<NVVM::ConvertF32x2ToF4x2Op>(op))
      return false;
    return isa<NVVM::PermuteOp, NVVM::MBarrierInitOp, NVVM::MBarrierArriveOp,
               NVVM::MBarrierArriveExpectTxOp, NVVM::MBarrierExpectTxOp,
               NVVM::MBarrierCompleteTxOp, NVVM::MBarrierTryWaitParityOp,
               NVVM::CpAsyncBulkTensorGlobalToSharedClusterOp,
               nvgpu::TmaCreateDescriptorOp>(op) ||
           nvvm::isWgmmaOp(op);
  }
  LogicalResult execute(Operation &op,
                        ExecutionContext &context) const override;
  std::unique_ptr<WorkgroupState> createWorkgroupState() const override {
    return nvvm::createWgmmaState();
  }

  /// The configuration of an `llvm.nvvm.mma.m16n8k{32,16}.row.col.f32.<a>.
  /// <b>.f32` intrinsic name, a and b e4m3 or e5m2.
  static std::optional<ptx::MmaSyncFP8Config> parseMmaSyncFP8(StringRef name);
};

//===----------------------------------------------------------------------===//
// mma.sync.aligned.*.row.col.kind::*.block_scale
//===----------------------------------------------------------------------===//

std::optional<ptx::ElementType> getElementType(NVVM::MMATypes type) {
  switch (type) {
  case NVVM::MMATypes::e2m1:
    return ptx::ElementType::E2M1;
  case NVVM::MMATypes::e2m3:
    return ptx::ElementType::E2M3;
  case NVVM::MMATypes::e3m2:
    return ptx::ElementType::E3M2;
  case NVVM::MMATypes::e4m3:
    return ptx::ElementType::E4M3;
  case NVVM::MMATypes::e5m2:
    return ptx::ElementType::E5M2;
  default:
    return std::nullopt;
  }
}

/// The warp's D registers from a model's result `d` into `out` (lanes from
/// `first`), or the model's complaint `why`.
LogicalResult defineD(ExecutionContext &context, LaneValues &out,
                      unsigned first,
                      const std::vector<std::array<uint32_t, 4>> &d,
                      const std::string &why) {
  if (!why.empty())
    return context.fail(why);
  for (unsigned l = 0; l < ptx::kWarpSize; ++l)
    for (unsigned i = 0; i < 4; ++i)
      out.at(first + l, i) = d[l][i];
  ++context.getStats().mfmas;
  return success();
}

/// The model's configuration of `op`, or a failure naming what the model
/// does not cover.
FailureOr<ptx::MmaBlockScaleConfig> getConfig(NVVM::MmaBlockScaleOp op,
                                              ExecutionContext &context) {
  ptx::MmaBlockScaleConfig config;
  config.kind = nvvm::getModelKind(op.getKind());
  const int expectedK = static_cast<int>(ptx::getMmaBlockScaleK(config.kind));
  NVVM::MMAShapeAttr shape = op.getShape();
  if (shape.getM() != 16 || shape.getN() != 8 || shape.getK() != expectedK)
    return context.fail(llvm::formatv(
        "shape m{0}n{1}k{2} is not modelled for kind {3} (m16n8k{4})",
        shape.getM(), shape.getN(), shape.getK(),
        NVVM::stringifyMMABlockScaleKind(op.getKind()), expectedK));
  switch (op.getScaleVecSize()) {
  case NVVM::ScaleVecSize::X1:
    config.scaleVec = ptx::ScaleVec::X1;
    break;
  case NVVM::ScaleVecSize::X2:
    config.scaleVec = ptx::ScaleVec::X2;
    break;
  case NVVM::ScaleVecSize::X4:
    config.scaleVec = ptx::ScaleVec::X4;
    break;
  }
  config.scaleFormat = op.getBlockScaleFormat() == NVVM::BlockScaleFormat::UE8M0
                           ? ptx::ScaleFormat::UE8M0
                           : ptx::ScaleFormat::UE4M3;
  // The element types matter for mxf8f6f4 only; the FP4 kinds are E2M1.
  if (config.kind == ptx::BlockScaleKind::MXF8F6F4) {
    std::optional<NVVM::MMATypes> a = op.getMultiplicandAPtxType(),
                                  b = op.getMultiplicandBPtxType();
    std::optional<ptx::ElementType> typeA, typeB;
    if (a)
      typeA = getElementType(*a);
    if (b)
      typeB = getElementType(*b);
    if (!typeA || !typeB)
      return context.fail("kind mxf8f6f4 needs e4m3, e5m2, e3m2, e2m3 or e2m1 "
                          "multiplicand types");
    config.typeA = *typeA;
    config.typeB = *typeB;
  }
  return config;
}

LogicalResult executeMma(NVVM::MmaBlockScaleOp op, ExecutionContext &context) {
  FailureOr<ptx::MmaBlockScaleConfig> config = getConfig(op, context);
  if (failed(config))
    return failure();
  // A fragment is 4 registers of packed elements, B 2, C and D 4 f32.
  auto isWords = [](ValueRange values, size_t count, auto isType) {
    return values.size() == count &&
           llvm::all_of(values.getTypes(), [&](Type t) { return isType(t); });
  };
  auto isI32 = [](Type t) { return t.isInteger(32); };
  auto isF32 = [](Type t) { return t.isF32(); };
  if (!isWords(op.getOperandA(), 4, isI32) ||
      !isWords(op.getOperandB(), 2, isI32) ||
      !isWords(op.getOperandC(), 4, isF32))
    return context.fail("expected A as 4 i32, B as 2 i32 and C as 4 f32");
  LaneValues &out = context.define(op.getRes());
  if (out.width != 4)
    return context.fail("expected a result of 4 f32");

  return context.forEachWholeSubgroup(
      "mma.block_scale", [&](unsigned, unsigned first) -> LogicalResult {
        // The selectors are instruction operands the warp shares.
        if (failed(context.requireUniform({op.getByteIdA(), op.getThreadIdA(),
                                           op.getByteIdB(), op.getThreadIdB()},
                                          first,
                                          "scale byte/thread selectors")))
          return failure();
        std::vector<std::array<uint32_t, 4>> a(ptx::kWarpSize),
            c(ptx::kWarpSize), d(ptx::kWarpSize);
        std::vector<std::array<uint32_t, 2>> b(ptx::kWarpSize);
        std::vector<uint32_t> scaleA(ptx::kWarpSize), scaleB(ptx::kWarpSize);
        for (unsigned l = 0; l < ptx::kWarpSize; ++l) {
          const unsigned lane = first + l;
          for (auto [i, v] : llvm::enumerate(op.getOperandA()))
            a[l][i] = context.getWord(v, lane);
          for (auto [i, v] : llvm::enumerate(op.getOperandB()))
            b[l][i] = context.getWord(v, lane);
          for (auto [i, v] : llvm::enumerate(op.getOperandC()))
            c[l][i] = context.getWord(v, lane);
          scaleA[l] = context.getWord(op.getScaleAData(), lane);
          scaleB[l] = context.getWord(op.getScaleBData(), lane);
        }
        return defineD(
            context, out, first, d,
            ptx::mmaBlockScale(*config, a, b, c, scaleA,
                               context.getWord(op.getByteIdA(), first),
                               context.getWord(op.getThreadIdA(), first),
                               scaleB, context.getWord(op.getByteIdB(), first),
                               context.getWord(op.getThreadIdB(), first),
                               d.data()));
      });
}

//===----------------------------------------------------------------------===//
// mma.sync.aligned.m16n8k{32,16}.row.col.f32.<a>.<b>.f32 (FP8)
//===----------------------------------------------------------------------===//

LogicalResult executeMmaFP8(LLVM::CallIntrinsicOp op,
                            const ptx::MmaSyncFP8Config &config,
                            ExecutionContext &context) {
  const unsigned aRegs = config.k == 32 ? 4 : 2, bRegs = config.k == 32 ? 2 : 1;
  ValueRange args = op.getArgs();
  auto allOf = [](ValueRange values, auto isType) {
    return llvm::all_of(values.getTypes(), [&](Type t) { return isType(t); });
  };
  if (args.size() != aRegs + bRegs + 4 ||
      !allOf(args.take_front(aRegs + bRegs),
             [](Type t) { return t.isInteger(32); }) ||
      !allOf(args.drop_front(aRegs + bRegs), [](Type t) { return t.isF32(); }))
    return context.fail(llvm::formatv(
        "expected A as {0} i32, B as {1} i32 and C as 4 f32", aRegs, bRegs));
  if (op.getNumResults() != 1)
    return context.fail("expected one result of 4 f32");
  LaneValues &out = context.define(op.getResult(0));
  if (out.width != 4)
    return context.fail("expected a result of 4 f32");
  return context.forEachWholeSubgroup(
      "mma.sync", [&](unsigned, unsigned first) -> LogicalResult {
        std::vector<std::array<uint32_t, 4>> a(ptx::kWarpSize),
            c(ptx::kWarpSize), d(ptx::kWarpSize);
        std::vector<std::array<uint32_t, 2>> b(ptx::kWarpSize);
        for (unsigned l = 0; l < ptx::kWarpSize; ++l) {
          const unsigned lane = first + l;
          for (unsigned i = 0; i < aRegs; ++i)
            a[l][i] = context.getWord(args[i], lane);
          for (unsigned i = 0; i < bRegs; ++i)
            b[l][i] = context.getWord(args[aRegs + i], lane);
          for (unsigned i = 0; i < 4; ++i)
            c[l][i] = context.getWord(args[aRegs + bRegs + i], lane);
        }
        return defineD(context, out, first, d,
                       ptx::mmaSyncFP8(config, a, b, c, d.data()));
      });
}

LogicalResult executePermute(NVVM::PermuteOp op, ExecutionContext &context) {
  if (op.getMode() != NVVM::PermuteMode::DEFAULT || !op.getHi())
    return context.fail("only prmt.b32 in the default mode is modelled");
  LaneValues &out = context.define(op.getRes());
  context.forEachActiveLane([&](unsigned lane) {
    out.at(lane) = ptx::prmt(context.getWord(op.getLo(), lane),
                             context.getWord(op.getHi(), lane),
                             context.getWord(op.getSelector(), lane));
  });
  return success();
}

//===----------------------------------------------------------------------===//
// cvt.*.f32 pairs
//===----------------------------------------------------------------------===//

/// Defines `result` lane by lane from `convert(lane)`, the 16-bit pair code
/// (hi in bits 15..8): as an i16 or i8, or as vector<2xi8> (element 0 the
/// low byte, as LLVM's bitcast of the i16).
LogicalResult definePairs(Value result, ExecutionContext &context,
                          llvm::function_ref<uint16_t(unsigned lane)> convert) {
  LaneValues &out = context.define(result);
  context.forEachActiveLane([&](unsigned lane) {
    const uint16_t code = convert(lane);
    if (out.width == 2) {
      out.at(lane, 0) = code & 0xFF;
      out.at(lane, 1) = code >> 8;
    } else {
      out.at(lane) = code;
    }
  });
  ++context.getStats().conversions;
  return success();
}

LogicalResult executeConvert(NVVM::ConvertF32x2ToF4x2Op op,
                             ExecutionContext &context) {
  if (op.getRelu() || !isa<Float4E2M1FNType>(op.getDstTy()))
    return context.fail("only cvt.rn.satfinite.e2m1x2.f32 is modelled");
  return definePairs(op.getDst(), context, [&](unsigned lane) {
    return ptx::cvtRnSatfiniteE2M1x2(context.getWord(op.getA(), lane),
                                     context.getWord(op.getB(), lane));
  });
}

LogicalResult executeConvert(NVVM::ConvertF32x2ToF8x2Op op,
                             ExecutionContext &context) {
  const bool satfinite = op.getSat() == NVVM::SaturationMode::SATFINITE;
  uint16_t (*model)(uint32_t, uint32_t) = nullptr;
  if (isa<Float8E4M3FNType>(op.getDstTy()) &&
      op.getRnd() == NVVM::FPRoundingMode::RN && satfinite)
    model = ptx::cvtRnSatfiniteE4M3x2;
  else if (isa<Float8E8M0FNUType>(op.getDstTy()) &&
           op.getRnd() == NVVM::FPRoundingMode::RP && satfinite)
    model = ptx::cvtRpSatfiniteUE8M0x2;
  if (!model || op.getRelu())
    return context.fail("only cvt.rn.satfinite.e4m3x2.f32 and "
                        "cvt.rp.satfinite.ue8m0x2.f32 are modelled");
  return definePairs(op.getDst(), context, [&](unsigned lane) {
    return model(context.getWord(op.getA(), lane),
                 context.getWord(op.getB(), lane));
  });
}

LogicalResult executeConvert(NVVM::ConvertF8x2ToF16x2Op op,
                             ExecutionContext &context) {
  if (op.getRelu() || !isa<Float8E4M3FNType>(op.getSrcType()))
    return context.fail("only cvt.rn.f16x2.e4m3x2 is modelled");
  LaneValues &out = context.define(op.getDst());
  // vector<2xi8> -> vector<2xf16>: element 0 is the low byte / low half,
  // as LLVM's bitcasts of the i16 operand and the f16x2 result place them.
  context.forEachActiveLane([&](unsigned lane) {
    const uint32_t d = ptx::cvtRnF16x2E4M3x2(static_cast<uint16_t>(
        (context.getWord(op.getSrc(), lane, 1) & 0xFF) << 8 |
        (context.getWord(op.getSrc(), lane, 0) & 0xFF)));
    out.at(lane, 0) = d & 0xFFFF;
    out.at(lane, 1) = d >> 16;
  });
  ++context.getStats().conversions;
  return success();
}

//===----------------------------------------------------------------------===//
// vote.sync
//===----------------------------------------------------------------------===//

/// The rule of the warp-synchronous instructions (bar.warp.sync, vote.sync;
/// PTX ISA, "Parallel Synchronization and Communication Instructions"):
/// each thread waits until every thread of `membermask` in its warp has
/// executed the instruction with the same mask, and a thread outside its own
/// mask is undefined behaviour. In lockstep a warp's lanes that are not
/// active now cannot reach it, so every lane of the mask must be active
/// (hardware would wait forever) and the mask the same in all of them.
/// Calls `body(first, end, mask)` for each warp with active lanes (lanes
/// [first, end)).
LogicalResult forEachWarpMask(
    ExecutionContext &context, Value maskValue, StringRef name,
    llvm::function_ref<void(unsigned first, unsigned end, uint32_t mask)>
        body) {
  const unsigned size = context.getSubgroupSize();
  for (unsigned warp = 0; warp < context.getNumSubgroups(); ++warp) {
    const unsigned first = warp * size;
    const unsigned end = std::min(context.getNumLanes(), first + size);
    std::optional<uint32_t> mask;
    for (unsigned lane = first; lane < end; ++lane) {
      if (!context.isActive(lane))
        continue;
      const uint32_t laneMask = context.getWord(maskValue, lane);
      if (mask && *mask != laneMask)
        return context.fail(
            llvm::formatv("{0} masks differ across warp {1}", name, warp));
      mask = laneMask;
      if (!(laneMask >> (lane - first) & 1))
        return context.fail(llvm::formatv(
            "{0}: lane {1} of warp {2} is not in its membermask {3:x8}", name,
            lane - first, warp, laneMask));
    }
    if (!mask)
      continue;
    for (unsigned lane = first; lane < end; ++lane)
      if ((*mask >> (lane - first) & 1) && !context.isActive(lane))
        return context.fail(llvm::formatv(
            "{0} {1:x8}: lane {2} of warp {3} does not take part (it would "
            "wait forever)",
            name, *mask, lane - first, warp));
    body(first, end, *mask);
  }
  return success();
}

/// vote.sync.{all,any,uni}.pred / vote.sync.ballot.b32 d, p, membermask:
/// over the threads of `membermask` in the warp, `all` is true when p is
/// true in every one, `any` when in some, `uni` when p is the same in all;
/// ballot sets bit i of d to thread i's p.
LogicalResult executeVoteSync(NVVM::VoteSyncOp vote,
                              ExecutionContext &context) {
  LaneValues &out = context.define(vote.getRes());
  return forEachWarpMask(context, vote.getMask(), "vote.sync",
                         [&](unsigned first, unsigned end, uint32_t mask) {
                           uint32_t ballot = 0;
                           for (unsigned lane = first; lane < end; ++lane)
                             if ((mask >> (lane - first) & 1) &&
                                 (context.getWord(vote.getPred(), lane) & 1))
                               ballot |= 1u << (lane - first);
                           const uint32_t members =
                               mask &
                               (end - first == 32 ? 0xFFFFFFFFu
                                                  : (1u << (end - first)) - 1);
                           uint32_t result = 0;
                           switch (vote.getKind()) {
                           case NVVM::VoteSyncKind::all:
                             result = ballot == members;
                             break;
                           case NVVM::VoteSyncKind::any:
                             result = ballot != 0;
                             break;
                           case NVVM::VoteSyncKind::uni:
                             result = ballot == 0 || ballot == members;
                             break;
                           case NVVM::VoteSyncKind::ballot:
                             result = ballot;
                             break;
                           }
                           for (unsigned lane = first; lane < end; ++lane)
                             if (context.isActive(lane))
                               out.at(lane) = result;
                         });
}

/// shfl.sync.{up,down,bfly,idx}.b32 d, a, b, c, membermask (PTX ISA
/// "shfl.sync"): c packs the clamp value (bits 0-4) and the segment mask
/// (bits 8-12); with minLane = lane & segmask and maxLane = minLane |
/// (clamp & ~segmask), the source lane is lane - b (up; in range when >=
/// maxLane), lane + b (down; <= maxLane), lane ^ b (bfly; <= maxLane) or
/// minLane | (b & ~segmask) (idx; <= maxLane). A lane whose source is out
/// of range gets its own a. Reading a lane outside the membermask is
/// undefined: an error here. Only the i32/f32 result form is modelled.
LogicalResult executeShflSync(NVVM::ShflOp shfl, ExecutionContext &context) {
  if (shfl.getReturnValueAndIsValid())
    return context.fail("shfl.sync with the validity predicate is not "
                        "modelled");
  LaneValues &out = context.define(shfl.getRes());
  std::optional<std::string> error;
  LogicalResult result = forEachWarpMask(
      context, shfl.getThreadMask(), "shfl.sync",
      [&](unsigned first, unsigned end, uint32_t mask) {
        std::vector<uint32_t> values(end - first);
        for (unsigned lane = first; lane < end; ++lane)
          if (context.isActive(lane))
            values[lane - first] = context.getWord(shfl.getVal(), lane);
        for (unsigned lane = first; lane < end && !error; ++lane) {
          if (!context.isActive(lane))
            continue;
          const unsigned id = lane - first;
          const uint32_t b = context.getWord(shfl.getOffset(), lane) & 31;
          const uint32_t c = context.getWord(shfl.getMaskAndClamp(), lane);
          const uint32_t segmask = (c >> 8) & 31, clamp = c & 31;
          const uint32_t minLane = id & segmask;
          const uint32_t maxLane = minLane | (clamp & ~segmask);
          int64_t source = id;
          bool inRange = true;
          switch (shfl.getKind()) {
          case NVVM::ShflKind::up:
            source = int64_t(id) - b;
            inRange = source >= int64_t(maxLane);
            break;
          case NVVM::ShflKind::down:
            source = id + b;
            inRange = source <= int64_t(maxLane);
            break;
          case NVVM::ShflKind::bfly:
            source = id ^ b;
            inRange = source <= int64_t(maxLane);
            break;
          case NVVM::ShflKind::idx:
            source = minLane | (b & ~segmask);
            inRange = source <= int64_t(maxLane);
            break;
          }
          if (!inRange)
            source = id;
          if (source >= int64_t(end - first) || !(mask >> source & 1) ||
              !context.isActive(first + source)) {
            error = llvm::formatv("shfl.sync: lane {0} of warp {1} reads "
                                  "lane {2}, outside the membermask {3:x8}",
                                  id, first / context.getSubgroupSize(), source,
                                  mask)
                        .str();
            break;
          }
          out.at(lane) = values[source];
        }
      });
  if (failed(result))
    return result;
  if (error)
    return context.fail(*error);
  return success();
}

//===----------------------------------------------------------------------===//
// llvm.call_intrinsic "llvm.nvvm.mulhi.ui"
//===----------------------------------------------------------------------===//

/// mul.hi.u32 as the NVIDIA kernels spell it (the high half of an i32
/// arith.mului_extended, fp4train-to-nvvm).
constexpr StringLiteral kMulHiU32 = "llvm.nvvm.mulhi.ui";

bool isMulHiU32(Operation &op) {
  auto call = dyn_cast<LLVM::CallIntrinsicOp>(op);
  return call && call.getIntrin() == kMulHiU32;
}

/// mul.hi.u32 d, a, b: bits 63..32 of the 64-bit product of the unsigned
/// 32-bit a and b.
LogicalResult executeMulHiU32(LLVM::CallIntrinsicOp call,
                              ExecutionContext &context) {
  auto isI32 = [](Type type) { return type.isInteger(32); };
  if (call.getArgs().size() != 2 || call.getNumResults() != 1 ||
      !llvm::all_of(call.getArgs().getTypes(), isI32) ||
      !isI32(call.getResult(0).getType()))
    return context.fail(llvm::formatv("intrinsic '{0}' takes two i32 and "
                                      "returns an i32",
                                      kMulHiU32));
  LaneValues &out = context.define(call.getResult(0));
  context.forEachActiveLane([&](unsigned lane) {
    const uint64_t product =
        uint64_t{context.getWord(call.getArgs()[0], lane)} *
        context.getWord(call.getArgs()[1], lane);
    out.at(lane) = static_cast<uint32_t>(product >> 32);
  });
  return success();
}

//===----------------------------------------------------------------------===//
// Special registers
//===----------------------------------------------------------------------===//

/// Defines the i32 `result` of a special-register read per lane.
LogicalResult readRegister(Value result, ExecutionContext &context,
                           llvm::function_ref<int64_t(unsigned lane)> value) {
  LaneValues &out = context.define(result);
  for (unsigned lane = 0; lane < context.getNumLanes(); ++lane)
    out.at(lane) = static_cast<uint32_t>(value(lane));
  return success();
}

} // namespace

std::optional<ptx::MmaSyncFP8Config>
SM90aInstructionSet::parseMmaSyncFP8(StringRef name) {
  ptx::MmaSyncFP8Config config;
  if (!name.consume_front("llvm.nvvm.mma.m16n8k"))
    return std::nullopt;
  if (name.consume_front("32"))
    config.k = 32;
  else if (name.consume_front("16"))
    config.k = 16;
  else
    return std::nullopt;
  auto type = [&](ptx::ElementType &t) {
    if (name.consume_front(".e4m3"))
      t = ptx::ElementType::E4M3;
    else if (name.consume_front(".e5m2"))
      t = ptx::ElementType::E5M2;
    else
      return false;
    return true;
  };
  if (!name.consume_front(".row.col.f32") || !type(config.typeA) ||
      !type(config.typeB) || name != ".f32")
    return std::nullopt;
  return config;
}

ptx::BlockScaleKind
mlir::fp4train::emulation::nvvm::getModelKind(NVVM::MMABlockScaleKind kind) {
  switch (kind) {
  case NVVM::MMABlockScaleKind::MXF8F6F4:
    return ptx::BlockScaleKind::MXF8F6F4;
  case NVVM::MMABlockScaleKind::MXF4:
    return ptx::BlockScaleKind::MXF4;
  case NVVM::MMABlockScaleKind::MXF4NVF4:
    return ptx::BlockScaleKind::MXF4NVF4;
  }
  return ptx::BlockScaleKind::MXF4NVF4;
}

LogicalResult
mlir::fp4train::emulation::nvvm::executeFenceProxy(NVVM::FenceProxyOp op,
                                                   ExecutionContext &context) {
  if (op.getKind() == NVVM::ProxyKind::async ||
      op.getKind() == NVVM::ProxyKind::async_shared)
    context.fenceProxy();
  return success();
}

bool mlir::fp4train::emulation::nvvm::isCommonNVVMOp(Operation &op) {
  return isMulHiU32(op) ||
         isa<NVVM::ConvertF32x2ToF4x2Op, NVVM::ConvertF32x2ToF8x2Op,
             NVVM::ConvertF8x2ToF16x2Op, NVVM::VoteSyncOp, NVVM::Barrier0Op,
             NVVM::BarrierOp, NVVM::ThreadIdXOp, NVVM::ThreadIdYOp,
             NVVM::ThreadIdZOp, NVVM::BlockDimXOp, NVVM::BlockDimYOp,
             NVVM::BlockDimZOp, NVVM::BlockIdXOp, NVVM::BlockIdYOp,
             NVVM::BlockIdZOp, NVVM::GridDimXOp, NVVM::GridDimYOp,
             NVVM::GridDimZOp, NVVM::LaneIdOp, NVVM::WarpIdOp, NVVM::WarpSizeOp,
             NVVM::SyncWarpOp, NVVM::FenceProxyOp, NVVM::ShflOp>(op);
}

LogicalResult mlir::fp4train::emulation::nvvm::executeCommonNVVMOp(
    Operation &op, ExecutionContext &context) {
  if (!context.inKernel())
    return context.fail("NVVM op outside a kernel");
  if (auto fence = dyn_cast<NVVM::FenceProxyOp>(op))
    return executeFenceProxy(fence, context);
  Value result = op.getNumResults() == 1 ? op.getResult(0) : Value();
  auto thread = [&](unsigned dim) {
    return readRegister(result, context, [&](unsigned lane) {
      return context.getThreadId(lane, dim);
    });
  };
  auto launch = [&](int64_t (ExecutionContext::*get)(unsigned) const,
                    unsigned dim) {
    const int64_t value = (context.*get)(dim);
    return readRegister(result, context, [&](unsigned) { return value; });
  };
  using Context = ExecutionContext;
  return llvm::TypeSwitch<Operation *, LogicalResult>(&op)
      .Case<NVVM::ConvertF32x2ToF4x2Op, NVVM::ConvertF32x2ToF8x2Op,
            NVVM::ConvertF8x2ToF16x2Op>(
          [&](auto convert) { return executeConvert(convert, context); })
      .Case(
          [&](NVVM::VoteSyncOp vote) { return executeVoteSync(vote, context); })
      .Case([&](NVVM::ShflOp shfl) { return executeShflSync(shfl, context); })
      .Case([&](LLVM::CallIntrinsicOp call) -> LogicalResult {
        if (!isMulHiU32(*call))
          return context.fail("not a common NVVM op");
        return executeMulHiU32(call, context);
      })
      .Case([&](NVVM::Barrier0Op) { return context.barrier(); })
      .Case([&](NVVM::SyncWarpOp sync) {
        return forEachWarpMask(context, sync.getMask(), "bar.warp.sync",
                               [](unsigned, unsigned, uint32_t) {});
      })
      .Case([&](NVVM::BarrierOp barrier) -> LogicalResult {
        // Any barrier id: with every thread of the CTA taking part, each
        // is a full workgroup barrier.
        if (barrier.getNumberOfThreads() || barrier.getReductionOp())
          return context.fail("only whole-CTA barriers without a reduction "
                              "are modelled");
        return context.barrier();
      })
      .Case([&](NVVM::ThreadIdXOp) { return thread(0); })
      .Case([&](NVVM::ThreadIdYOp) { return thread(1); })
      .Case([&](NVVM::ThreadIdZOp) { return thread(2); })
      .Case([&](NVVM::BlockDimXOp) { return launch(&Context::getBlockDim, 0); })
      .Case([&](NVVM::BlockDimYOp) { return launch(&Context::getBlockDim, 1); })
      .Case([&](NVVM::BlockDimZOp) { return launch(&Context::getBlockDim, 2); })
      .Case([&](NVVM::BlockIdXOp) { return launch(&Context::getBlockId, 0); })
      .Case([&](NVVM::BlockIdYOp) { return launch(&Context::getBlockId, 1); })
      .Case([&](NVVM::BlockIdZOp) { return launch(&Context::getBlockId, 2); })
      .Case([&](NVVM::GridDimXOp) { return launch(&Context::getGridDim, 0); })
      .Case([&](NVVM::GridDimYOp) { return launch(&Context::getGridDim, 1); })
      .Case([&](NVVM::GridDimZOp) { return launch(&Context::getGridDim, 2); })
      .Case([&](NVVM::LaneIdOp) {
        return readRegister(result, context, [&](unsigned lane) {
          return lane % ptx::kWarpSize;
        });
      })
      .Case([&](NVVM::WarpIdOp) {
        return readRegister(result, context, [&](unsigned lane) {
          return lane / ptx::kWarpSize;
        });
      })
      .Case([&](NVVM::WarpSizeOp) {
        return readRegister(result, context,
                            [&](unsigned) { return ptx::kWarpSize; });
      })
      .Default([&](Operation *) -> LogicalResult {
        return context.fail("not a common NVVM op");
      });
}

LogicalResult SM120aInstructionSet::execute(Operation &op,
                                            ExecutionContext &context) const {
  if (!context.inKernel())
    return context.fail("NVVM op outside a kernel");
  if (auto mma = dyn_cast<NVVM::MmaBlockScaleOp>(op))
    return executeMma(mma, context);
  return nvvm::executeCommonNVVMOp(op, context);
}

LogicalResult SM90aInstructionSet::execute(Operation &op,
                                           ExecutionContext &context) const {
  // The host's tensor maps (what cuTensorMapEncodeTiled makes).
  if (auto create = dyn_cast<nvgpu::TmaCreateDescriptorOp>(op)) {
    if (context.inKernel())
      return context.fail("a tensor map is created on the host");
    return tcgen05::executeCreateTensorMap(create, context);
  }
  if (!context.inKernel())
    return context.fail("NVVM op outside a kernel");
  if (auto copy =
          dyn_cast<NVVM::CpAsyncBulkTensorGlobalToSharedClusterOp>(op)) {
    // No clusters here (supportsClusters): a CTA's own box, signalling its
    // own mbarrier.
    if (copy.getMulticastMask() || copy.getGroup())
      return context.fail("cp.async.bulk.tensor with .multicast::cluster or "
                          ".cta_group is not modelled on this chip (no "
                          "clusters)");
    return tcgen05::executeTensorLoad(copy, context);
  }
  if (isa<NVVM::MBarrierInitOp, NVVM::MBarrierArriveOp,
          NVVM::MBarrierArriveExpectTxOp, NVVM::MBarrierExpectTxOp,
          NVVM::MBarrierCompleteTxOp, NVVM::MBarrierTryWaitParityOp>(op))
    return tcgen05::executeMbarrier(op, context);
  if (nvvm::isCommonNVVMOp(op))
    return nvvm::executeCommonNVVMOp(op, context);
  if (auto call = dyn_cast<LLVM::CallIntrinsicOp>(op))
    return executeMmaFP8(call, *parseMmaSyncFP8(call.getIntrin()), context);
  if (auto permute = dyn_cast<NVVM::PermuteOp>(op))
    return executePermute(permute, context);
  if (nvvm::isWgmmaOp(op))
    return nvvm::executeWgmmaOp(op, context);
  // fence.proxy.async: shared memory written by st.shared becomes visible to
  // wgmma's operand reads (asynchronous-proxy reads).
  return nvvm::executeCommonNVVMOp(op, context);
}

std::unique_ptr<InstructionSet>
mlir::fp4train::emulation::createWarpBlockScaledInstructionSet(
    const GPUTarget &target) {
  return std::make_unique<SM120aInstructionSet>(target);
}

std::unique_ptr<InstructionSet>
mlir::fp4train::emulation::createWarpFP8InstructionSet(
    const GPUTarget &target) {
  return std::make_unique<SM90aInstructionSet>(target);
}
