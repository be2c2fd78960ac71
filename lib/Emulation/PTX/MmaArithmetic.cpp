//===- MmaArithmetic.cpp - Exact dot products of the PTX MMA models -------===//
//
// Sources: PTX ISA §5.2.3 "Alternate Floating-Point Data Formats": e4m3 (no
// Inf, 0x7f/0xff NaN), e5m2 (IEEE-style Inf/NaN), e2m1/e2m3/e3m2 (no
// Inf/NaN), ue8m0 (0xff NaN), ue4m3 (7 bits, bias 7, 0x7f NaN).
//
//===----------------------------------------------------------------------===//

#include "MmaArithmetic.h"

#include "llvm/ADT/APInt.h"

#include <algorithm>

using namespace fp4train::emulation::ptx;
using namespace fp4train::emulation::ptx::detail;
using llvm::APInt;

Format detail::getElementFormat(ElementType type) {
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
  }
  return {2, 1, 1, true, false, false};
}

Value detail::decode(const Format &f, uint32_t code) {
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
  if (f.allOnesNan && exponentField == exponentMask && mantissa == mantissaMask) {
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


namespace {

/// Exact accumulator: value = acc · 2^kLsb. Products of the extreme formats
/// reach 2^-286 (E5M2 subnormals times 2^-127 scales) and below 2^293; f32 C
/// lies in [2^-149, 2^128); 65 terms add 7 bits.
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
  const bool sticky = magnitude.countr_zero() < static_cast<unsigned>(shift - 1);
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

uint32_t detail::sumOfProductsToF32(
    uint32_t cBits, unsigned count, unsigned factorCount,
    llvm::function_ref<void(unsigned k, Value *out)> factorsOf) {
  const uint32_t cExponent = (cBits >> 23) & 0xFF;
  const uint32_t cMantissa = cBits & 0x7FFFFF;
  const bool cNegative = (cBits >> 31) != 0;
  bool nan = cExponent == 0xFF && cMantissa != 0;
  bool posInf = cExponent == 0xFF && cMantissa == 0 && !cNegative;
  bool negInf = cExponent == 0xFF && cMantissa == 0 && cNegative;
  bool allNegativeZero = cBits == 0x80000000u;
  APInt acc(kBits, 0);
  if (cExponent != 0xFF && (cExponent != 0 || cMantissa != 0))
    accumulate(acc, cMantissa | (cExponent ? 0x800000u : 0u),
               (cExponent ? static_cast<int>(cExponent) : 1) - 150, cNegative);
  Value factors[4];
  for (unsigned k = 0; k < count; ++k) {
    factorsOf(k, factors);
    bool anyNan = false, anyInf = false, anyZero = false, negative = false;
    uint64_t significand = 1;
    int exponent = 0;
    for (const Value &f : llvm::ArrayRef(factors, factorCount)) {
      anyNan |= f.nan;
      anyInf |= f.inf;
      anyZero |= !f.nan && !f.inf && f.significand == 0;
      negative ^= f.negative;
      significand *= f.significand;
      exponent += f.exponent;
    }
    if (anyNan || (anyInf && anyZero)) {
      nan = true;
      continue;
    }
    if (anyInf) {
      (negative ? negInf : posInf) = true;
      continue;
    }
    if (significand == 0) {
      allNegativeZero &= negative;
      continue;
    }
    allNegativeZero = false;
    accumulate(acc, significand, exponent, negative);
  }
  uint32_t out;
  if (nan || (posInf && negInf))
    out = 0x7FFFFFFFu;
  else if (posInf || negInf)
    out = posInf ? 0x7F800000u : 0xFF800000u;
  else if (acc.isZero())
    out = allNegativeZero ? 0x80000000u : 0u;
  else
    out = roundToF32(acc);
  return out;
}

void detail::computeD16x8(
    llvm::ArrayRef<std::array<uint32_t, 4>> c, unsigned count,
    unsigned factorCount,
    llvm::function_ref<void(unsigned, unsigned, unsigned, Value *)> factors,
    std::array<uint32_t, 4> *d) {
  std::array<uint32_t, 4> result[kWarpSize];
  for (unsigned lane = 0; lane < kWarpSize; ++lane) {
    const unsigned g = lane / 4, t = lane % 4;
    for (unsigned i = 0; i < 4; ++i) {
      const unsigned row = g + 8 * (i / 2), col = 2 * t + i % 2;
      result[lane][i] = sumOfProductsToF32(
          c[lane][i], count, factorCount, [&](unsigned k, Value *out) {
            factors(row, col, k, out);
          });
    }
  }
  for (unsigned lane = 0; lane < kWarpSize; ++lane)
    d[lane] = result[lane];
}
