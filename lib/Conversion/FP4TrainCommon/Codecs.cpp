//===- Codecs.cpp - Scalar arith builders for the numerics recipes --------===//
//
// Each builder restates one function of the numerics library in arith/math
// ops. Integer constants are written as their uint32 bit patterns, shifts by
// amounts that can reach the bit width are clamped and selected away (arith
// shifts by >= width are poison, C++'s are guarded in the library), and every
// f32 operation the library performs appears here once, in the same order,
// so no rounding differs.
//
//===----------------------------------------------------------------------===//

#include "fp4train/Conversion/FP4TrainCommon/Codecs.h"

#include "fp4train/Numerics/Philox.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/BuiltinTypes.h"

#include <cfloat>

using namespace mlir;
using namespace mlir::fp4train;
namespace numerics = ::fp4train::numerics;

const numerics::MiniFloatFormat &codecs::getMiniFloatFormat(Type type) {
  if (isa<Float4E2M1FNType>(type))
    return numerics::kE2M1;
  if (isa<Float8E4M3FNType>(type))
    return numerics::kE4M3FN;
  assert(isa<Float8E5M2Type>(type) && "not an element format of [FMT1]");
  return numerics::kE5M2;
}

Value codecs::i32Const(ImplicitLocOpBuilder &b, uint32_t value) {
  return arith::ConstantIntOp::create(b, b.getI32Type(),
                                      int64_t(int32_t(value)));
}

Value codecs::i64Const(ImplicitLocOpBuilder &b, uint64_t value) {
  return arith::ConstantIntOp::create(b, b.getI64Type(), int64_t(value));
}

Value codecs::f32Const(ImplicitLocOpBuilder &b, float value) {
  return arith::ConstantFloatOp::create(b, b.getF32Type(), APFloat(value));
}

Value codecs::f32FromBits(ImplicitLocOpBuilder &b, Value bits) {
  return arith::BitcastOp::create(b, b.getF32Type(), bits);
}

Value codecs::bitsFromF32(ImplicitLocOpBuilder &b, Value value) {
  return arith::BitcastOp::create(b, b.getI32Type(), value);
}

namespace {
/// Terse i32 helpers for the bit recipes below.
struct I32Ops {
  ImplicitLocOpBuilder &b;
  Value c(uint32_t v) { return codecs::i32Const(b, v); }
  Value add(Value x, Value y) { return arith::AddIOp::create(b, x, y); }
  Value sub(Value x, Value y) { return arith::SubIOp::create(b, x, y); }
  Value band(Value x, Value y) { return arith::AndIOp::create(b, x, y); }
  Value bor(Value x, Value y) { return arith::OrIOp::create(b, x, y); }
  Value bxor(Value x, Value y) { return arith::XOrIOp::create(b, x, y); }
  Value shl(Value x, Value y) { return arith::ShLIOp::create(b, x, y); }
  Value lshr(Value x, Value y) { return arith::ShRUIOp::create(b, x, y); }
  Value cmp(arith::CmpIPredicate p, Value x, Value y) {
    return arith::CmpIOp::create(b, p, x, y);
  }
  Value select(Value cond, Value x, Value y) {
    return arith::SelectOp::create(b, cond, x, y);
  }
  Value minu(Value x, Value y) { return arith::MinUIOp::create(b, x, y); }
  Value maxu(Value x, Value y) { return arith::MaxUIOp::create(b, x, y); }
  Value mins(Value x, Value y) { return arith::MinSIOp::create(b, x, y); }
  Value maxs(Value x, Value y) { return arith::MaxSIOp::create(b, x, y); }
  Value toI8(Value x) { return arith::TruncIOp::create(b, b.getI8Type(), x); }
  Value fromI8(Value x) { return arith::ExtUIOp::create(b, b.getI32Type(), x); }
};
} // namespace

Value codecs::magnitudeBits(ImplicitLocOpBuilder &b, Value x) {
  I32Ops i{b};
  return i.band(bitsFromF32(b, x), i.c(0x7FFFFFFFu));
}

Value codecs::encodeRNESat(ImplicitLocOpBuilder &b, Value x,
                           const numerics::MiniFloatFormat &f) {
  I32Ops i{b};
  using P = arith::CmpIPredicate;
  const unsigned shift = 23 - f.mantissaBits;
  const unsigned signShift = f.exponentBits + f.mantissaBits;
  const uint32_t rebias = uint32_t(127 - f.bias) << 23;
  const uint32_t minNormalBits = uint32_t(127 - f.bias + 1) << 23;
  const float magic =
      numerics::detail::exp2Constant(23 + 1 - f.bias - int(f.mantissaBits));

  Value bits = bitsFromF32(b, x);
  Value sign = i.shl(i.lshr(bits, i.c(31)), i.c(signShift));
  Value absBits = i.band(bits, i.c(0x7FFFFFFFu));
  Value isNaN = i.cmp(P::ugt, absBits, i.c(0x7F800000u));
  // Satfinite: non-negative f32 patterns order like their values.
  absBits = i.minu(absBits, i.c(f.maxFiniteF32Bits));

  // Normal results: integer RNE on the f32 mantissa (a carry into the
  // exponent is the right answer).
  Value normal =
      i.add(i.add(i.sub(absBits, i.c(rebias)), i.c((1u << (shift - 1)) - 1)),
            i.band(i.lshr(absBits, i.c(shift)), i.c(1)));
  normal = i.lshr(normal, i.c(shift));
  // Subnormal results: the f32 adder rounds to the subnormal spacing.
  Value magicValue = f32Const(b, magic);
  Value sum = arith::AddFOp::create(b, f32FromBits(b, absBits), magicValue);
  Value subnormal =
      i.sub(bitsFromF32(b, sum), i.c(numerics::floatToBits(magic)));
  Value magnitude =
      i.select(i.cmp(P::ult, absBits, i.c(minNormalBits)), subnormal, normal);
  return i.toI8(i.select(isNaN, i.c(f.nanCode), i.bor(sign, magnitude)));
}

Value codecs::encodeE2M1Stochastic(ImplicitLocOpBuilder &b, Value v,
                                   Value rbits) {
  I32Ops i{b};
  using P = arith::CmpIPredicate;
  Value bits = bitsFromF32(b, v);
  Value sign = i.band(i.lshr(bits, i.c(28)), i.c(0x8u));
  Value absBits = i.band(bits, i.c(0x7FFFFFFFu));
  Value isNaN = i.cmp(P::ugt, absBits, i.c(0x7F800000u));
  absBits = i.minu(absBits, i.c(numerics::kE2M1.maxFiniteF32Bits));

  // [SR1] with E = floor(log2 a) and S the 24-bit significand, the E2M1
  // ulp at a is 2^(max(E, 0) - 1) and a / ulp = n + f. Both parts come from
  // one fixed-point value with 22 fraction bits, Y = floor(a / ulp · 2^22)
  // = S >> -min(E, 0) (the library's n = S >> (22 - d) is Y >> 22, its
  // frac32 = floor(f · 2^22) · 2^10 is Y << 10 mod 2^32). The implicit bit
  // is set for subnormals and zero too: their shift (127 from biased
  // exponent 0, clamped to 31) clears all 24 bits, as the library's does.
  Value biased = i.lshr(absBits, i.c(23));
  Value significand = i.bor(i.band(absBits, i.c(0x7FFFFFu)), i.c(0x800000u));
  Value biasedUpToOne = i.minu(biased, i.c(127));
  Value shift = i.minu(i.sub(i.c(127), biasedUpToOne), i.c(31));
  Value fixed = i.lshr(significand, shift);
  Value n = i.lshr(fixed, i.c(22));
  Value frac = i.shl(fixed, i.c(10));
  // A carry out of bit 31 of frac32 + rbits rounds up.
  Value up = arith::ExtUIOp::create(b, b.getI32Type(),
                                    i.cmp(P::ult, i.add(frac, rbits), frac));
  // The grid points n · ulp have codes n + 2 max(E, 0).
  Value gridShift = i.sub(i.maxu(biased, i.c(127)), i.c(127));
  Value magnitude = i.add(i.add(n, up), i.shl(gridShift, i.c(1)));
  return i.toI8(
      i.select(isNaN, i.c(numerics::kE2M1.nanCode), i.bor(sign, magnitude)));
}

Value codecs::decodeMiniFloat(ImplicitLocOpBuilder &b, Value code,
                              const numerics::MiniFloatFormat &f) {
  I32Ops i{b};
  using P = arith::CmpIPredicate;
  const unsigned signShift = f.exponentBits + f.mantissaBits;
  const uint32_t expMask = (1u << f.exponentBits) - 1;
  const uint32_t mantMask = (1u << f.mantissaBits) - 1;
  const float subnormalUlp =
      numerics::detail::exp2Constant(1 - f.bias - int(f.mantissaBits));

  Value c = i.fromI8(code);
  if (&f == &numerics::kE2M1)
    c = i.band(c, i.c(0xFu));
  Value sign = i.shl(i.band(i.lshr(c, i.c(signShift)), i.c(1)), i.c(31));
  Value exponent = i.band(i.lshr(c, i.c(f.mantissaBits)), i.c(expMask));
  Value mantissa = i.band(c, i.c(mantMask));

  Value normal = i.bor(
      i.bor(sign, i.shl(i.add(exponent, i.c(uint32_t(127 - f.bias))), i.c(23))),
      i.shl(mantissa, i.c(23 - f.mantissaBits)));
  Value subnormalValue = arith::MulFOp::create(
      b, arith::UIToFPOp::create(b, b.getF32Type(), mantissa),
      f32Const(b, subnormalUlp));
  Value subnormal = i.bor(sign, bitsFromF32(b, subnormalValue));
  Value result = i.select(i.cmp(P::eq, exponent, i.c(0)), subnormal, normal);

  Value nan = i.c(0x7FC00000u);
  Value allOnes = i.cmp(P::eq, exponent, i.c(expMask));
  if (&f == &numerics::kE4M3FN) {
    Value isNaN = arith::AndIOp::create(b, allOnes,
                                        i.cmp(P::eq, mantissa, i.c(mantMask)));
    result = i.select(isNaN, nan, result);
  } else if (&f == &numerics::kE5M2) {
    Value special = i.select(i.cmp(P::ne, mantissa, i.c(0)), nan,
                             i.bor(sign, i.c(0x7F800000u)));
    result = i.select(allOnes, special, result);
  }
  return f32FromBits(b, result);
}

Value codecs::decodeE8M0(ImplicitLocOpBuilder &b, Value code) {
  I32Ops i{b};
  using P = arith::CmpIPredicate;
  Value c = i.fromI8(code);
  Value bits =
      i.select(i.cmp(P::eq, c, i.c(0)), i.c(0x00400000u), i.shl(c, i.c(23)));
  bits = i.select(i.cmp(P::eq, c, i.c(0xFF)), i.c(0x7FC00000u), bits);
  return f32FromBits(b, bits);
}

Value codecs::inverseE8M0(ImplicitLocOpBuilder &b, Value code) {
  I32Ops i{b};
  using P = arith::CmpIPredicate;
  Value c = i.fromI8(code);
  Value bits = i.select(i.cmp(P::eq, c, i.c(254)), i.c(0x00400000u),
                        i.shl(i.sub(i.c(254), c), i.c(23)));
  bits = i.select(i.cmp(P::eq, c, i.c(0xFF)), i.c(0x7FC00000u), bits);
  return f32FromBits(b, bits);
}

Value codecs::mxScaleCode(ImplicitLocOpBuilder &b, Value amax,
                          const numerics::MiniFloatFormat &element,
                          bool rceil) {
  I32Ops i{b};
  using P = arith::CmpIPredicate;
  Value bits = magnitudeBits(b, amax);
  // [MX1] floor(log2 amax) + 127 is the biased exponent field; subnormals and
  // zero (field 0) clamp to 0x00.
  Value code = i.sub(i.lshr(bits, i.c(23)), i.c(element.maxExponent));
  if (rceil) {
    // [MX2] One more binade exactly when amax's significand exceeds the
    // largest finite element's: ceil(log2(amax / maxFinite)) without a
    // rounded division.
    Value more = i.cmp(P::ugt, i.band(bits, i.c(0x7FFFFFu)),
                       i.c(element.maxFiniteF32Bits & 0x7FFFFFu));
    code = i.add(code, arith::ExtUIOp::create(b, b.getI32Type(), more));
  }
  code = i.mins(i.maxs(code, i.c(0)), i.c(254));
  // [MX3] NaN or Inf in the block.
  Value nonFinite = i.cmp(P::uge, bits, i.c(0x7F800000u));
  return i.toI8(i.select(nonFinite, i.c(0xFF), code));
}

/// `min` that returns `a` when it is NaN, as [NV1]'s reference computes it:
/// arith.minimumf propagates NaN and otherwise agrees for b = FLT_MAX.
static Value minPropagatingNaN(ImplicitLocOpBuilder &b, Value a, float bound) {
  return arith::MinimumFOp::create(b, a, codecs::f32Const(b, bound));
}

std::pair<Value, Value> codecs::nvfp4GlobalScale(ImplicitLocOpBuilder &b,
                                                 Value amax) {
  // [NV1] S_enc = min(448·6 / amax, FLT_MAX), 1 when that is 0.
  Value encode = minPropagatingNaN(
      b, arith::DivFOp::create(b, f32Const(b, 2688.0f), amax), FLT_MAX);
  Value one = f32Const(b, 1.0f);
  Value isZero = arith::CmpFOp::create(b, arith::CmpFPredicate::OEQ, encode,
                                       f32Const(b, 0.0f));
  encode = arith::SelectOp::create(b, isZero, one, encode);
  Value decode = arith::DivFOp::create(b, one, encode);
  return {encode, decode};
}

Value codecs::nvfp4BlockScaleCode(ImplicitLocOpBuilder &b, Value amaxBlock,
                                  Value globalEncode) {
  // [NV1] amax_block · (S_enc · f32(1/6)); the ±448 clamp is the satfinite
  // of the E4M3 encoder.
  Value factor =
      arith::MulFOp::create(b, globalEncode, f32Const(b, 1.0f / 6.0f));
  Value scaled = arith::MulFOp::create(b, amaxBlock, factor);
  return encodeRNESat(b, minPropagatingNaN(b, scaled, FLT_MAX),
                      numerics::kE4M3FN);
}

Value codecs::nvfp4ElementScale(ImplicitLocOpBuilder &b, Value scaleCode,
                                Value globalDecode) {
  // [NV1] enc = min(1 / (f32(s_blk) · S_dec), FLT_MAX).
  Value product = arith::MulFOp::create(
      b, decodeMiniFloat(b, scaleCode, numerics::kE4M3FN), globalDecode);
  return minPropagatingNaN(
      b, arith::DivFOp::create(b, f32Const(b, 1.0f), product), FLT_MAX);
}

std::array<Value, 4> codecs::philox4x32_10(ImplicitLocOpBuilder &b,
                                           std::array<Value, 4> ctr,
                                           std::array<Value, 2> key) {
  I32Ops i{b};
  // Random123's constants (philox.h): multipliers and Weyl key increments.
  Value m0 = i.c(0xD2511F53u), m1 = i.c(0xCD9E8D57u);
  Value w0 = i.c(0x9E3779B9u), w1 = i.c(0xBB67AE85u);
  for (int round = 0; round < 10; ++round) {
    if (round > 0) {
      key[0] = i.add(key[0], w0);
      key[1] = i.add(key[1], w1);
    }
    auto p0 = arith::MulUIExtendedOp::create(b, m0, ctr[0]);
    auto p1 = arith::MulUIExtendedOp::create(b, m1, ctr[2]);
    ctr = {i.bxor(i.bxor(p1.getHigh(), ctr[1]), key[0]), p1.getLow(),
           i.bxor(i.bxor(p0.getHigh(), ctr[3]), key[1]), p0.getLow()};
  }
  return ctr;
}

/// Low and high 32-bit words of an i64.
static std::pair<Value, Value> splitI64(ImplicitLocOpBuilder &b, Value x) {
  Value lo = arith::TruncIOp::create(b, b.getI32Type(), x);
  Value hi = arith::TruncIOp::create(
      b, b.getI32Type(), arith::ShRUIOp::create(b, x, codecs::i64Const(b, 32)));
  return {lo, hi};
}

/// Word `index` (i32, 0..3) of a Philox result.
static Value selectWord(ImplicitLocOpBuilder &b, std::array<Value, 4> words,
                        Value index) {
  I32Ops i{b};
  using P = arith::CmpIPredicate;
  Value result = words[3];
  for (int w = 2; w >= 0; --w)
    result = i.select(i.cmp(P::eq, index, i.c(w)), words[w], result);
  return result;
}

Value codecs::stochasticRoundingWord(ImplicitLocOpBuilder &b, Value seed,
                                     Value index) {
  // [SR1] word (index & 3) of philox(counter = {lo, hi of index >> 2, 0, 0},
  // key = {lo, hi of seed}).
  I32Ops i{b};
  auto [c0, c1] = splitI64(b, arith::ShRUIOp::create(b, index, i64Const(b, 2)));
  auto [k0, k1] = splitI64(b, seed);
  std::array<Value, 4> words =
      philox4x32_10(b, {c0, c1, i.c(0), i.c(0)}, {k0, k1});
  Value lane =
      i.band(arith::TruncIOp::create(b, b.getI32Type(), index), i.c(3));
  return selectWord(b, words, lane);
}

Value codecs::randomHadamardSign(ImplicitLocOpBuilder &b, Value seed,
                                 Value step, Value j) {
  // [H1] s_j = -1 when bit (j & 31) of word ((j >> 5) & 3) of
  // philox(counter = {lo, hi of step, j >> 7, 1}, key = seed) is set.
  I32Ops i{b};
  using P = arith::CmpIPredicate;
  Value jj = arith::IndexCastOp::create(b, b.getI32Type(), j);
  auto [s0, s1] = splitI64(b, step);
  auto [k0, k1] = splitI64(b, seed);
  std::array<Value, 4> words =
      philox4x32_10(b, {s0, s1, i.lshr(jj, i.c(7)), i.c(1)}, {k0, k1});
  Value word = selectWord(b, words, i.band(i.lshr(jj, i.c(5)), i.c(3)));
  Value bit = i.band(i.lshr(word, i.band(jj, i.c(31))), i.c(1));
  return arith::SelectOp::create(b, i.cmp(P::ne, bit, i.c(0)),
                                 f32Const(b, -1.0f), f32Const(b, 1.0f));
}

int codecs::getFractionBits(const numerics::MiniFloatFormat &f) {
  return f.bias - 1 + int(f.mantissaBits);
}

Value codecs::elementToScaledInteger(ImplicitLocOpBuilder &b, Value code,
                                     const numerics::MiniFloatFormat &f,
                                     Type intType) {
  // value · 2^fractionBits = significand << (max(e, 1) - 1), with the
  // implicit bit set for e > 0.
  I32Ops i{b};
  using P = arith::CmpIPredicate;
  const unsigned signShift = f.exponentBits + f.mantissaBits;
  Value c = i.fromI8(code);
  Value negative =
      i.cmp(P::ne, i.band(i.lshr(c, i.c(signShift)), i.c(1)), i.c(0));
  Value exponent =
      i.band(i.lshr(c, i.c(f.mantissaBits)), i.c((1u << f.exponentBits) - 1));
  Value mantissa = i.band(c, i.c((1u << f.mantissaBits) - 1));
  Value significand =
      i.bor(mantissa, i.select(i.cmp(P::eq, exponent, i.c(0)), i.c(0),
                               i.c(1u << f.mantissaBits)));
  Value shift = i.sub(i.maxs(exponent, i.c(1)), i.c(1));
  auto widen = [&](Value v) -> Value {
    return intType.isInteger(32) ? v : arith::ExtUIOp::create(b, intType, v);
  };
  Value magnitude = arith::ShLIOp::create(b, widen(significand), widen(shift));
  Value zero = arith::ConstantIntOp::create(b, intType, 0);
  return i.select(negative, arith::SubIOp::create(b, zero, magnitude),
                  magnitude);
}

Value codecs::roundScaledIntegerToFloat(ImplicitLocOpBuilder &b, Value value,
                                        Value exponent) {
  I32Ops i{b};
  using P = arith::CmpIPredicate;
  Type intType = value.getType();
  unsigned width = intType.getIntOrFloatBitWidth();
  auto wide = [&](int64_t v) -> Value {
    return arith::ConstantIntOp::create(b, intType, v);
  };
  auto toI32 = [&](Value v) -> Value {
    return width > 32 ? arith::TruncIOp::create(b, b.getI32Type(), v) : v;
  };
  auto fromI32 = [&](Value v) -> Value {
    return width > 32 ? arith::ExtUIOp::create(b, intType, v) : v;
  };

  Value negative = arith::CmpIOp::create(b, P::slt, value, wide(0));
  Value magnitude = arith::SelectOp::create(
      b, negative, arith::SubIOp::create(b, wide(0), value), value);
  // Bits of the magnitude, and how many of them the f32 result keeps: 24,
  // fewer among subnormals (whose last bit weighs 2^-149).
  Value length =
      i.sub(i.c(width), toI32(math::CountLeadingZerosOp::create(b, magnitude)));
  Value leading = i.add(i.sub(length, i.c(1)), exponent);
  Value precision = i.select(i.cmp(P::sge, leading, i.c(uint32_t(-126))),
                             i.c(24), i.add(leading, i.c(150)));
  Value drop = i.sub(length, precision);

  // RNE on the dropped bits. The magnitudes of [GEMM1] stay far below
  // 2^(width-1), so a shift in [1, width - 1] covers every case that is not
  // selected away below.
  Value dropShift = fromI32(i.mins(i.maxs(drop, i.c(1)), i.c(width - 1)));
  Value one = wide(1);
  Value kept = arith::ShRUIOp::create(b, magnitude, dropShift);
  Value remainder = arith::AndIOp::create(
      b, magnitude,
      arith::SubIOp::create(b, arith::ShLIOp::create(b, one, dropShift), one));
  Value half =
      arith::ShLIOp::create(b, one, arith::SubIOp::create(b, dropShift, one));
  Value odd = arith::CmpIOp::create(
      b, P::ne, arith::AndIOp::create(b, kept, one), wide(0));
  Value roundUp = arith::OrIOp::create(
      b, arith::CmpIOp::create(b, P::ugt, remainder, half),
      arith::AndIOp::create(b, arith::CmpIOp::create(b, P::eq, remainder, half),
                            odd));
  Value rounded = arith::AddIOp::create(
      b, kept, arith::ExtUIOp::create(b, intType, roundUp));
  Value result = arith::SelectOp::create(
      b, i.cmp(P::sgt, drop, length), wide(0), rounded); // Below half 2^-149.
  result = arith::SelectOp::create(b, i.cmp(P::sle, drop, i.c(0)), magnitude,
                                   result);

  // kept · 2^(exponent + drop) has at most 24 significant bits on the f32
  // grid, so the f64 product is exact and the f64 -> f32 conversion only
  // overflows to Inf, which is the RNE result there.
  Value scaleExponent = i.add(exponent, i.maxs(drop, i.c(0)));
  scaleExponent =
      i.mins(i.maxs(scaleExponent, i.c(uint32_t(-1022))), i.c(1023));
  Value scaleBits = arith::ShLIOp::create(
      b,
      arith::ExtUIOp::create(b, b.getI64Type(),
                             i.add(scaleExponent, i.c(1023))),
      i64Const(b, 52));
  Value scale = arith::BitcastOp::create(b, b.getF64Type(), scaleBits);
  Value exact = arith::MulFOp::create(
      b, arith::UIToFPOp::create(b, b.getF64Type(), result), scale);
  Value single = arith::TruncFOp::create(b, b.getF32Type(), exact);
  return arith::SelectOp::create(b, negative, arith::NegFOp::create(b, single),
                                 single);
}
