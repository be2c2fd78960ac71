//===- ScaledConvert.cpp - gfx950 scaled conversions for quantize ---------===//
//
// The element encodes of the shared quantize kernel
// (FP4TrainGPUCommon/QuantizeKernel.cpp) on gfx950's scaled down-converts,
// for MX blocks:
//
//  - the instruction's scale operand is `code << 23`, an f32 whose exponent
//    field (the only part the instruction reads) is the block's E8M0 code:
//    it divides by 2^(code - 127), i.e. multiplies by the library's
//    inverseE8M0(code), exactly, so the instruction sees the library's
//    x * factor without a separate multiply;
//  - RNE: amdgpu.packed_scaled_trunc (v_cvt_scalef32_pk_{fp4,fp8,bf8}_f32)
//    rounds to nearest even on the target grid with its subnormals
//    (docs/amdgpu.md states this assumption and why it equals the library's
//    encodeRNESat(x * inverseE8M0(code)));
//  - [MX1] floor scales can leave |x| / 2^(code-127) above the largest
//    finite element, where the instruction does not saturate the way
//    satfinite does; x is first clamped to +-maxFinite * 2^(code-127)
//    (exact, a power-of-two multiple), so the result is the library's
//    satfinite one whatever the instruction does on overflow. NaN only
//    occurs in [MX3] blocks, whose codes the kernel replaces: the clamp may
//    assume no NaN (one v_med3_f32, no canonicalizes);
//  - [SR1]: rocdl.cvt.scalef32.sr.pk.fp4.f32 (v_cvt_scalef32_sr_pk_fp4_f32)
//    rounds both elements of its source pair with the one word it is given,
//    so each element gets its own instruction and word, and the kernel keeps
//    the nibble of that element (the instruction computes the library's
//    encodeE2M1Stochastic of the scaled value, docs/numerics.md §4).
//
//===----------------------------------------------------------------------===//

#include "CDNA4TargetInfo.h"

#include "fp4train/Conversion/FP4TrainCommon/Codecs.h"
#include "fp4train/Conversion/FP4TrainGPUCommon/KernelBuilders.h"
#include "fp4train/Dialect/FP4Train/IR/FP4TrainOps.h"

#include "mlir/Dialect/AMDGPU/IR/AMDGPUDialect.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/ROCDLDialect.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mlir::fp4train;

bool CDNA4TargetInfo::isQuantizeOnTarget(QuantizeOp op) const {
  return isa<Float8E8M0FNUType>(op.getResult().getType().getScaleType());
}

/// Elements [offset, offset + size) of a 1-D vector.
static Value slice(ImplicitLocOpBuilder &b, Value v, int64_t offset,
                   int64_t size) {
  return vector::ShuffleOp::create(
      b, v, v, llvm::to_vector(llvm::seq<int64_t>(offset, offset + size)));
}

namespace {
/// The instruction operands of an MX block: the f32 scale operand and the
/// elements, clamped under floor scales.
struct ScaledOperands {
  Value scale;
  SmallVector<Value> x;
};
} // namespace

static ScaledOperands
getScaledOperands(ImplicitLocOpBuilder &b, Type element,
                  const TargetInfoBase::ScaledBlock &block) {
  Value code32 = arith::ExtUIOp::create(b, b.getI32Type(), block.mxScaleCode);
  Value exponent = arith::ShLIOp::create(b, code32, codecs::i32Const(b, 23));
  ScaledOperands operands{codecs::f32FromBits(b, exponent),
                          llvm::to_vector(block.x)};
  if (!block.floorScale)
    return operands;
  // [MX1] floor: +-maxFinite * 2^(code - 127), a finite normal f32 (the
  // code is at most 254 - emax there).
  const auto &format = codecs::getMiniFloatFormat(element);
  Value boundBits = arith::AddIOp::create(
      b, exponent, codecs::i32Const(b, format.maxFiniteF32Bits - (127u << 23)));
  Value bound =
      vector::BroadcastOp::create(b, VectorType::get({4}, b.getF32Type()),
                                  codecs::f32FromBits(b, boundBits));
  Value negBound = arith::NegFOp::create(b, bound);
  auto nnan = arith::FastMathFlags::nnan;
  for (Value &q : operands.x)
    q = arith::MaxNumFOp::create(b, arith::MinNumFOp::create(b, q, bound, nnan),
                                 negBound, nnan);
  return operands;
}

std::optional<SmallVector<Value>>
CDNA4TargetInfo::buildConvertRNE(ImplicitLocOpBuilder &b, Type element,
                                 const ScaledBlock &block) const {
  if (!block.mxScaleCode)
    return std::nullopt;
  auto i8x4 = VectorType::get({4}, b.getI8Type());
  auto [scale, x] = getScaledOperands(b, element, block);

  SmallVector<Value> quads;
  if (isa<Float4E2M1FNType>(element)) {
    // Eight elements (two input vectors) per packed register: byte p holds
    // element 2p in its low nibble and 2p + 1 in its high one, which is the
    // [PK1] stored order: bytes 0-1 and 2-3 are the two quads as they are.
    auto packedType = VectorType::get({8}, element);
    for (size_t w = 0; w + 1 < x.size(); w += 2) {
      Value packed;
      for (int64_t p = 0; p < 4; ++p)
        packed = amdgpu::PackedScaledTruncOp::create(
            b, packedType, slice(b, x[w + p / 2], 2 * (p % 2), 2), scale, p,
            packed);
      Value bytes = vector::BitCastOp::create(b, i8x4, packed);
      quads.push_back(slice(b, bytes, 0, 2));
      quads.push_back(slice(b, bytes, 2, 2));
    }
    return quads;
  }
  // FP8 and BF8: one packed register of four codes per input vector.
  auto packedType = VectorType::get({4}, element);
  for (Value quad : x) {
    Value packed;
    for (int64_t p = 0; p < 2; ++p)
      packed = amdgpu::PackedScaledTruncOp::create(
          b, packedType, slice(b, quad, 2 * p, 2), scale, p, packed);
    quads.push_back(vector::BitCastOp::create(b, i8x4, packed));
  }
  return quads;
}

std::optional<SmallVector<Value>>
CDNA4TargetInfo::buildConvertStochasticE2M1(ImplicitLocOpBuilder &b,
                                            const ScaledBlock &block,
                                            ArrayRef<Value> words) const {
  if (!block.mxScaleCode)
    return std::nullopt;
  Type i32 = b.getI32Type();
  auto c32 = [&](uint32_t v) { return codecs::i32Const(b, v); };
  auto [scale, clamped] =
      getScaledOperands(b, b.getType<Float4E2M1FNType>(), block);
  Value zero = c32(0);
  SmallVector<Value> quads;
  for (auto [w, x] : llvm::enumerate(clamped)) {
    // Element k of the vector is element k % 2 of the aligned pair
    // (x[k & ~1], x[k | 1]); the instruction writes the pair's byte
    // (element 0 in the low nibble) into byte k of its result.
    //
    // Only that byte is used: LLVM 22 does not tie the instruction's
    // destination to its `old` operand (in AMDGPU's VOP3Instructions.td an
    // inner `Constraints = "@earlyclobber $vdst"` replaces the outer
    // "$vdst = $vdst_in" for the v_cvt_scalef32_sr_pk_fp4_* group), so the
    // bytes the instruction does not write are whatever the allocated
    // register held. Each result is therefore masked to its own nibble
    // instead of chaining `old` through the four instructions.
    // Element k's nibble is at bit 8k (even k) or 8k + 4 (odd k) of its
    // result, and goes to bit 4k of the quad's [PK1] half-word: a right
    // shift by 4k (0, 4 ... 12 bits) for k = 0, 1, 2, 3 after the odd
    // elements' high-nibble offset, i.e. by 0, 8, 8, 16.
    constexpr unsigned kShift[4] = {0, 8, 8, 16};
    Value word;
    for (int64_t k = 0; k < 4; ++k) {
      Value converted = ROCDL::CvtScaleF32SrPkFp4F32Op::create(
          b, i32, zero, slice(b, x, k & ~int64_t(1), 2), words[4 * w + k],
          scale, uint32_t(k));
      if (kShift[k])
        converted = arith::ShRUIOp::create(b, converted, c32(kShift[k]));
      Value code = arith::AndIOp::create(b, converted, c32(0xFu << (4 * k)));
      word = word ? arith::OrIOp::create(b, word, code).getResult() : code;
    }
    Value half = arith::TruncIOp::create(b, b.getI16Type(), word);
    quads.push_back(vector::BitCastOp::create(
        b, VectorType::get({2}, b.getI8Type()),
        vector::FromElementsOp::create(b, VectorType::get({1}, b.getI16Type()),
                                       half)));
  }
  return quads;
}

bool mlir::fp4train::isQuantizeOnGPU(QuantizeOp op, const GPUTarget &target) {
  return target.mma == GPUMMAKind::ScaledMFMA && isQuantizeKernelShape(op) &&
         CDNA4TargetInfo(target).isQuantizeOnTarget(op);
}

void mlir::fp4train::populateFP4TrainQuantizeToAMDGPUPatterns(
    TypeConverter &converter, RewritePatternSet &patterns,
    const GPUTarget &target) {
  if (target.mma != GPUMMAKind::ScaledMFMA)
    return;
  auto info = std::make_shared<CDNA4TargetInfo>(target);
  populateQuantizeKernelPatterns(converter, patterns, info);
  // The quantize of a rotation along its block dimension: one kernel, the
  // rotated tensor never stored.
  populateHadamardQuantizeKernelPatterns(converter, patterns, info);
}
