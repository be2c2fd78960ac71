//===- ROCDLInstructions.cpp - The gfx950 instruction set of the emulator -===//
//
// The ROCDL intrinsics that convert-amdgpu-to-rocdl produces for the
// fp4train kernels, executed by the CDNA4 models of fp4train/Emulation/
// CDNA4.h on the lanes' registers: conversions per active lane, the scaled
// MFMAs once per wave with all 64 lanes' operands.
//
//===----------------------------------------------------------------------===//

#include "fp4train/Emulation/InstructionSets.h"

#include "fp4train/Emulation/CDNA4.h"

#include "mlir/Dialect/LLVMIR/ROCDLDialect.h"
#include "mlir/IR/TypeUtilities.h"

#include <cassert>

using namespace mlir;
using namespace mlir::fp4train;
using namespace mlir::fp4train::emulation;
namespace cdna4 = ::fp4train::emulation::cdna4;

namespace {

/// CDNA4 (gfx950): 64-lane waves, LDS, the ROCDL dialect.
class GFX950InstructionSet final : public InstructionSet {
public:
  explicit GFX950InstructionSet(const GPUTarget &target) : target(target) {
    assert(target.subgroupSize == cdna4::kWaveSize &&
           "the CDNA4 models run 64-lane waves");
  }
  StringRef getName() const override { return target.name; }
  unsigned getSubgroupSize() const override { return target.subgroupSize; }
  StringRef getSubgroupTerm() const override { return "wave"; }
  StringRef getSharedMemoryTerm() const override { return "LDS"; }
  /// The intrinsics with a CDNA4 model; other ROCDL ops are unsupported.
  bool handles(Operation &op) const override {
    return isa<ROCDL::CvtScaleF32PkFp4F32Op, ROCDL::CvtScaleF32SrPkFp4F32Op,
               ROCDL::CvtScaleF32PkFp8F32Op, ROCDL::CvtScaleF32PkBf8F32Op,
               ROCDL::mfma_scale_f32_32x32x64_f8f6f4,
               ROCDL::mfma_scale_f32_16x16x128_f8f6f4>(op);
  }
  LogicalResult execute(Operation &op,
                        ExecutionContext &context) const override;

private:
  const GPUTarget &target;
};

} // namespace

LogicalResult GFX950InstructionSet::execute(Operation &op,
                                            ExecutionContext &context) const {
  if (!context.inKernel())
    return context.fail("ROCDL intrinsic outside a kernel");
  auto perLane = [&](auto f) {
    LaneValues &out = context.define(op.getResult(0));
    context.forEachActiveLane([&](unsigned lane) { f(lane, out); });
    ++context.getStats().conversions;
    return success();
  };
  auto word = [&](Value v, unsigned lane, unsigned i = 0) {
    return context.getWord(v, lane, i);
  };

  if (auto cvt = dyn_cast<ROCDL::CvtScaleF32PkFp4F32Op>(op))
    return perLane([&](unsigned lane, LaneValues &out) {
      out.at(lane) = cdna4::cvtScalePkFp4(
          word(cvt.getOldVdst(), lane), word(cvt.getSrc0(), lane),
          word(cvt.getSrc1(), lane), word(cvt.getScale(), lane),
          cvt.getDstSelIndex());
    });
  if (auto cvt = dyn_cast<ROCDL::CvtScaleF32SrPkFp4F32Op>(op))
    return perLane([&](unsigned lane, LaneValues &out) {
      out.at(lane) = cdna4::cvtScaleSrPkFp4(
          word(cvt.getOldVdst(), lane), word(cvt.getSrc(), lane, 0),
          word(cvt.getSrc(), lane, 1), word(cvt.getSeed(), lane),
          word(cvt.getScale(), lane), cvt.getDstSelIndex());
    });
  auto fp8 = [&](auto cvt, cdna4::NarrowFormat format) {
    // The tied operand is a vector<2xi16>: one 32-bit register.
    return perLane([&](unsigned lane, LaneValues &out) {
      const uint32_t old = word(cvt.getOldVdst(), lane, 0) |
                           word(cvt.getOldVdst(), lane, 1) << 16;
      const uint32_t updated = cdna4::cvtScalePkFp8(
          format, old, word(cvt.getSrc0(), lane), word(cvt.getSrc1(), lane),
          word(cvt.getScale(), lane), cvt.getDstLoHiSel() ? 1 : 0);
      out.at(lane, 0) = updated & 0xFFFF;
      out.at(lane, 1) = updated >> 16;
    });
  };
  if (auto cvt = dyn_cast<ROCDL::CvtScaleF32PkFp8F32Op>(op))
    return fp8(cvt, cdna4::NarrowFormat::FP8);
  if (auto cvt = dyn_cast<ROCDL::CvtScaleF32PkBf8F32Op>(op))
    return fp8(cvt, cdna4::NarrowFormat::BF8);

  const cdna4::ScaledMfmaShape shape =
      isa<ROCDL::mfma_scale_f32_32x32x64_f8f6f4>(op)
          ? cdna4::ScaledMfmaShape::M32N32K64
          : cdna4::ScaledMfmaShape::M16N16K128;

  // Operands: A, B, C, cbsz, blgp, opsel_a, scale_a, opsel_b, scale_b.
  if (op.getNumOperands() != 9)
    return context.fail("expected 9 operands");
  const unsigned accumulators = cdna4::getAccumulatorsPerLane(shape);
  LaneValues &out = context.define(op.getResult(0));
  if (out.width != accumulators)
    return context.fail("accumulator width does not match the shape");
  if (context.get(op.getOperand(0)).width > 8 ||
      context.get(op.getOperand(1)).width > 8 ||
      !getElementTypeOrSelf(op.getOperand(0).getType()).isInteger(32) ||
      !getElementTypeOrSelf(op.getOperand(1).getType()).isInteger(32))
    return context.fail("A and B must be vectors of at most 8 i32");
  return context.forEachWholeSubgroup(
      "MFMA", [&](unsigned, unsigned first) -> LogicalResult {
        // The format and select operands are instruction fields:
        // wave-uniform.
        if (failed(context.requireUniform({op.getOperand(3), op.getOperand(4),
                                           op.getOperand(5), op.getOperand(7)},
                                          first, "cbsz/blgp/opsel operands")))
          return failure();
        unsigned fields[4];
        const unsigned fieldOperands[4] = {3, 4, 5, 7};
        for (unsigned f = 0; f < 4; ++f)
          fields[f] = word(op.getOperand(fieldOperands[f]), first);
        std::vector<cdna4::MatrixRegs> a(cdna4::kWaveSize), b(cdna4::kWaveSize);
        std::vector<uint32_t> scaleA(cdna4::kWaveSize),
            scaleB(cdna4::kWaveSize), c(cdna4::kWaveSize * accumulators),
            d(c.size());
        const LaneValues &av = context.get(op.getOperand(0)),
                         &bv = context.get(op.getOperand(1)),
                         &cv = context.get(op.getOperand(2)),
                         &sa = context.get(op.getOperand(6)),
                         &sb = context.get(op.getOperand(8));
        for (unsigned l = 0; l < cdna4::kWaveSize; ++l) {
          a[l].fill(0);
          b[l].fill(0);
          for (unsigned i = 0; i < av.width; ++i)
            a[l][i] = static_cast<uint32_t>(av.at(first + l, i));
          for (unsigned i = 0; i < bv.width; ++i)
            b[l][i] = static_cast<uint32_t>(bv.at(first + l, i));
          scaleA[l] = static_cast<uint32_t>(sa.at(first + l));
          scaleB[l] = static_cast<uint32_t>(sb.at(first + l));
          for (unsigned i = 0; i < accumulators; ++i)
            c[l * accumulators + i] =
                static_cast<uint32_t>(cv.at(first + l, i));
        }
        std::string why =
            cdna4::scaledMfma(shape, fields[0], fields[1], fields[2], fields[3],
                              a, b, scaleA, scaleB, c, d.data());
        if (!why.empty())
          return context.fail(why);
        for (unsigned l = 0; l < cdna4::kWaveSize; ++l)
          for (unsigned i = 0; i < accumulators; ++i)
            out.at(first + l, i) = d[l * accumulators + i];
        ++context.getStats().mfmas;
        return success();
      });
}

std::unique_ptr<InstructionSet>
mlir::fp4train::emulation::createCDNA4InstructionSet(const GPUTarget &target) {
  return std::make_unique<GFX950InstructionSet>(target);
}
