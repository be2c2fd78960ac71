//===- BlockScaleArithmetic.cpp - Exact dot products of NVIDIA MMAs -------===//
//
// See BlockScaleArithmetic.h: operand decoding (PTX ISA §5.2.3), the exact
// accumulator with one final f32 rounding and the m16n8 D fragment that the
// NVIDIA MMA models share.
//
//===----------------------------------------------------------------------===//

#include "BlockScaleArithmetic.h"

#include <algorithm>

using namespace fp4train::emulation::ptx;
using namespace fp4train::emulation::ptx::detail;
using llvm::APInt;

namespace {

struct Format {
  unsigned exponentBits, mantissaBits;
  int bias;
  bool hasSign;
  bool ieeeSpecials; // all-ones exponent is Inf (mantissa 0) or NaN
  bool allOnesNan;   // the all-ones magnitude is NaN (E4M3, UE4M3)
};

Format getElementFormat(ElementType type) {
  switch (type) {
  case ElementType::E2M1:
    return {2, 1, 1, true, false, false};
  case ElementType::E2M3:
    return {2, 3, 1, true, false, false};
  case ElementType::E3M2:
    return {3, 2, 3, true, false, false};
  case ElementType::E4M3:
    return {4, 3, 7, true, false, true};
  case ElementType::E5M2:
    return {5, 2, 15, true, true, false};
  case ElementType::F16:
    return {5, 10, 15, true, true, false};
  }
  return {2, 1, 1, true, false, false};
}

Value decode(const Format &f, uint32_t code) {
  const uint32_t mantissaMask = (1u << f.mantissaBits) - 1;
  const uint32_t exponentMask = (1u << f.exponentBits) - 1;
  const uint32_t mantissa = code & mantissaMask;
  const uint32_t exponentField = (code >> f.mantissaBits) & exponentMask;
  Value v;
  v.negative =
      f.hasSign && ((code >> (f.exponentBits + f.mantissaBits)) & 1) != 0;
  if (f.ieeeSpecials && exponentField == exponentMask) {
    (mantissa ? v.nan : v.inf) = true;
    return v;
  }
  if (f.allOnesNan && exponentField == exponentMask &&
      mantissa == mantissaMask) {
    v.nan = true;
    return v;
  }
  const int mantissaBits = static_cast<int>(f.mantissaBits);
  if (exponentField == 0) {
    v.significand = mantissa;
    v.exponent = 1 - f.bias - mantissaBits;
  } else {
    v.significand = mantissa | (1u << f.mantissaBits);
    v.exponent = static_cast<int>(exponentField) - f.bias - mantissaBits;
  }
  return v;
}

/// Exact accumulator: value = acc · 2^kLsb. Products of the extreme formats
/// reach 2^-286 (E5M2 subnormals times 2^-127 scales) and below 2^293; f32 C
/// lies in [2^-149, 2^128); a few hundred terms add at most 9 bits.
constexpr int kLsb = -320;
constexpr unsigned kBits = 704;

void accumulate(APInt &acc, uint64_t significand, int exponent, bool negative) {
  APInt term(kBits, significand);
  term <<= static_cast<unsigned>(exponent - kLsb);
  if (negative)
    acc -= term;
  else
    acc += term;
}

/// Rounds acc · 2^kLsb to f32, nearest even, with subnormals.
uint32_t roundToF32(const APInt &acc) {
  const bool negative = acc.isNegative();
  const APInt magnitude = negative ? -acc : acc;
  const uint32_t sign = negative ? 0x80000000u : 0u;
  const int top = static_cast<int>(magnitude.getActiveBits()) - 1;
  // Accumulator bit of the result's last kept bit: 24 significant bits, but
  // never below 2^-149.
  const int shift = std::max(top - 23, -149 - kLsb);
  if (top + kLsb > 127)
    return sign | 0x7F800000u;
  uint64_t kept = magnitude.lshr(shift).getZExtValue();
  const bool half = magnitude[shift - 1];
  const bool sticky =
      magnitude.countr_zero() < static_cast<unsigned>(shift - 1);
  int lsbExponent = shift + kLsb;
  if (half && (sticky || (kept & 1)))
    ++kept;
  if (kept >> 24) {
    kept >>= 1;
    ++lsbExponent;
  }
  if (kept < (1u << 23)) // subnormal, lsbExponent == -149
    return sign | static_cast<uint32_t>(kept);
  const int biased = lsbExponent + 23 + 127;
  if (biased >= 255)
    return sign | 0x7F800000u;
  return sign | static_cast<uint32_t>(biased) << 23 |
         (static_cast<uint32_t>(kept) & 0x7FFFFFu);
}

} // namespace

Value fp4train::emulation::ptx::detail::decodeElement(ElementType type,
                                                      uint32_t code) {
  return decode(getElementFormat(type), code);
}

Value fp4train::emulation::ptx::detail::decodeScale(ScaleFormat format,
                                                    uint32_t byte) {
  if (format == ScaleFormat::UE8M0) {
    Value v;
    if (byte == 0xFF)
      v.nan = true;
    else {
      v.significand = 1;
      v.exponent = static_cast<int>(byte) - 127;
    }
    return v;
  }
  // UE4M3: 7 bits, the byte's MSB is padding.
  return decode(Format{4, 3, 7, false, false, true}, byte & 0x7F);
}

uint32_t fp4train::emulation::ptx::detail::unpadContainer(uint32_t byte,
                                                          ElementType type) {
  switch (type) {
  case ElementType::E2M1:
    return (byte >> 2) & 0xF;
  case ElementType::E2M3:
  case ElementType::E3M2:
    return byte & 0x3F;
  default:
    return byte & 0xFF;
  }
}

ExactAccumulator::ExactAccumulator(uint32_t cBits) : acc(kBits, 0) {
  const uint32_t cExponent = (cBits >> 23) & 0xFF;
  const uint32_t cMantissa = cBits & 0x7FFFFF;
  const bool cNegative = (cBits >> 31) != 0;
  nan = cExponent == 0xFF && cMantissa != 0;
  posInf = cExponent == 0xFF && cMantissa == 0 && !cNegative;
  negInf = cExponent == 0xFF && cMantissa == 0 && cNegative;
  allNegativeZero = cBits == 0x80000000u;
  if (cExponent != 0xFF && (cExponent != 0 || cMantissa != 0))
    accumulate(acc, cMantissa | (cExponent ? 0x800000u : 0u),
               (cExponent ? static_cast<int>(cExponent) : 1) - 150, cNegative);
}

void ExactAccumulator::addProduct(const Value (&factors)[4], bool negate) {
  bool anyNan = false, anyInf = false, anyZero = false, negative = negate;
  uint64_t significand = 1;
  int exponent = 0;
  for (const Value &f : factors) {
    anyNan |= f.nan;
    anyInf |= f.inf;
    anyZero |= !f.nan && !f.inf && f.significand == 0;
    negative ^= f.negative;
    significand *= f.significand;
    exponent += f.exponent;
  }
  if (anyNan || (anyInf && anyZero)) {
    nan = true;
    return;
  }
  if (anyInf) {
    (negative ? negInf : posInf) = true;
    return;
  }
  if (significand == 0) {
    allNegativeZero &= negative;
    return;
  }
  allNegativeZero = false;
  accumulate(acc, significand, exponent, negative);
}

uint32_t ExactAccumulator::round() const {
  if (nan || (posInf && negInf))
    return 0x7FFFFFFFu;
  if (posInf || negInf)
    return posInf ? 0x7F800000u : 0xFF800000u;
  if (acc.isZero())
    return allNegativeZero ? 0x80000000u : 0u;
  return roundToF32(acc);
}

void detail::computeD16x8(
    llvm::ArrayRef<std::array<uint32_t, 4>> c, unsigned count,
    llvm::function_ref<void(unsigned, unsigned, unsigned, Value (&)[4])>
        factors,
    std::array<uint32_t, 4> *d) {
  std::array<uint32_t, 4> result[kWarpSize];
  for (unsigned lane = 0; lane < kWarpSize; ++lane) {
    const unsigned g = lane / 4, t = lane % 4;
    for (unsigned i = 0; i < 4; ++i) {
      const unsigned row = g + 8 * (i / 2), col = 2 * t + i % 2;
      ExactAccumulator acc(c[lane][i]);
      for (unsigned k = 0; k < count; ++k) {
        Value product[4];
        factors(row, col, k, product);
        acc.addProduct(product);
      }
      result[lane][i] = acc.round();
    }
  }
  for (unsigned lane = 0; lane < kWarpSize; ++lane)
    d[lane] = result[lane];
}
