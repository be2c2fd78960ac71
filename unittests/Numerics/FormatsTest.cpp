//===- FormatsTest.cpp - Element and scale codec tests --------------------===//
//
// The fast encoders are compared with a slow reference that searches the
// nearest representable value in double arithmetic (ties to the even code) on
// every representable value, every midpoint and its neighbours, signed zeros,
// f32 subnormals, Inf, NaN and a large sweep of random bit patterns.
//
//===----------------------------------------------------------------------===//

#include "fp4train/Numerics/Formats.h"

#include "gtest/gtest.h"

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

using namespace fp4train::numerics;

namespace {

struct FormatCase {
  const char *name;
  ElementType type;
  unsigned bits;     // code width
  unsigned mantissa; // mantissa bits
  int bias;
  double maxFinite;
  uint8_t nanCode;
};

const FormatCase kCases[] = {
    {"E2M1", ElementType::E2M1, 4, 1, 1, 6.0, 0x7},
    {"E4M3FN", ElementType::E4M3FN, 8, 3, 7, 448.0, 0x7F},
    {"E5M2", ElementType::E5M2, 8, 2, 15, 57344.0, 0x7F},
};

/// Value of a code by the textbook formula, in double; NaN/Inf per format.
double referenceDecode(const FormatCase &f, unsigned code) {
  unsigned exponentBits = f.bits - 1 - f.mantissa;
  unsigned sign = code >> (f.bits - 1) & 1;
  unsigned e = code >> f.mantissa & ((1u << exponentBits) - 1);
  unsigned m = code & ((1u << f.mantissa) - 1);
  unsigned maxE = (1u << exponentBits) - 1;
  double s = sign ? -1.0 : 1.0;
  if (f.type == ElementType::E5M2 && e == maxE)
    return m ? NAN : s * INFINITY;
  if (f.type == ElementType::E4M3FN && e == maxE && m == (1u << f.mantissa) - 1)
    return NAN;
  double frac = double(m) / double(1u << f.mantissa);
  return e == 0 ? s * std::ldexp(frac, 1 - f.bias)
                : s * std::ldexp(1.0 + frac, int(e) - f.bias);
}

/// Non-negative finite codes in increasing value order.
std::vector<unsigned> positiveFiniteCodes(const FormatCase &f) {
  std::vector<unsigned> codes;
  for (unsigned code = 0; code < (1u << (f.bits - 1)); ++code)
    if (std::isfinite(referenceDecode(f, code)))
      codes.push_back(code);
  return codes;
}

/// RNE + satfinite by exhaustive search.
uint8_t referenceEncode(const FormatCase &f, float x) {
  if (std::isnan(x))
    return f.nanCode;
  unsigned sign = std::signbit(x) ? 1u << (f.bits - 1) : 0u;
  double a = std::min(std::fabs(double(x)), f.maxFinite);
  unsigned best = 0;
  double bestDistance = INFINITY;
  for (unsigned code : positiveFiniteCodes(f)) {
    double distance = std::fabs(a - referenceDecode(f, code));
    if (distance < bestDistance ||
        (distance == bestDistance && (code & 1) == 0)) {
      best = code;
      bestDistance = distance;
    }
  }
  return uint8_t(sign | best);
}

uint8_t encode(const FormatCase &f, float x) {
  return encodeElement(f.type, x);
}

/// Every representable value, every midpoint, their f32 neighbours, and the
/// special values.
std::vector<float> interestingInputs(const FormatCase &f) {
  std::vector<float> inputs = {0.0f,      -0.0f,   INFINITY, -INFINITY,
                               NAN,       -NAN,    1e-45f,   -1e-45f,
                               1.17e-38f, 3.4e38f, -3.4e38f, 1e30f};
  std::vector<unsigned> codes = positiveFiniteCodes(f);
  for (size_t i = 0; i < codes.size(); ++i) {
    double value = referenceDecode(f, codes[i]);
    std::vector<float> points = {float(value)};
    if (i + 1 < codes.size())
      points.push_back(float((value + referenceDecode(f, codes[i + 1])) / 2));
    else
      points.push_back(float(value * 1.0625)); // Past the largest value.
    for (float p : points) {
      for (float q : {p, std::nextafter(p, 0.0f), std::nextafter(p, INFINITY)})
        for (float s : {q, -q})
          inputs.push_back(s);
    }
  }
  return inputs;
}

TEST(Formats, E2M1DecodeTable) {
  const float expected[16] = {0.0f,  0.5f,  1,  1.5f,  2,  3,  4,  6,
                              -0.0f, -0.5f, -1, -1.5f, -2, -3, -4, -6};
  for (unsigned code = 0; code < 16; ++code) {
    EXPECT_EQ(floatToBits(decodeE2M1(uint8_t(code))),
              floatToBits(expected[code]))
        << "code " << code;
    // Bits above the nibble are ignored.
    EXPECT_EQ(floatToBits(decodeE2M1(uint8_t(code | 0xF0))),
              floatToBits(expected[code]));
  }
}

TEST(Formats, DecodeEveryCode) {
  for (const FormatCase &f : kCases) {
    for (unsigned code = 0; code < (1u << f.bits); ++code) {
      double expected = referenceDecode(f, code);
      float actual = decodeElement(f.type, uint8_t(code));
      if (std::isnan(expected)) {
        EXPECT_TRUE(std::isnan(actual)) << f.name << " code " << code;
        continue;
      }
      EXPECT_EQ(floatToBits(actual), floatToBits(float(expected)))
          << f.name << " code " << code;
    }
  }
}

TEST(Formats, DecodeLandmarks) {
  EXPECT_EQ(decodeE4M3FN(0x7E), 448.0f);
  EXPECT_EQ(decodeE4M3FN(0x08), 0.015625f);
  EXPECT_EQ(decodeE4M3FN(0x01), 0.001953125f);
  EXPECT_TRUE(std::isnan(decodeE4M3FN(0x7F)));
  EXPECT_TRUE(std::isnan(decodeE4M3FN(0xFF)));
  EXPECT_EQ(decodeE4M3FN(0x78), 256.0f); // 0x78 is finite in E4M3FN.
  EXPECT_EQ(decodeE5M2(0x7B), 57344.0f);
  EXPECT_EQ(decodeE5M2(0x7C), INFINITY);
  EXPECT_EQ(decodeE5M2(0xFC), -INFINITY);
  EXPECT_TRUE(std::isnan(decodeE5M2(0x7D)));
  EXPECT_EQ(decodeE5M2(0x01), std::ldexp(1.0f, -16));
}

TEST(Formats, EncodeMatchesReferenceOnBoundaries) {
  for (const FormatCase &f : kCases)
    for (float x : interestingInputs(f))
      ASSERT_EQ(encode(f, x), referenceEncode(f, x))
          << f.name << " x = " << x << " bits 0x" << std::hex << floatToBits(x);
}

TEST(Formats, EncodeMatchesReferenceOnRandomBits) {
  std::mt19937 rng(1234);
  for (const FormatCase &f : kCases) {
    for (int i = 0; i < 100000; ++i) {
      // Half arbitrary bit patterns, half values near the format's range.
      float x = i % 2 ? bitsToFloat(uint32_t(rng()))
                      : std::ldexp(float(int32_t(rng()) >> 8),
                                   int(rng() % 40) - 20 - 23 +
                                       (f.type == ElementType::E5M2 ? 6 : 0));
      ASSERT_EQ(encode(f, x), referenceEncode(f, x))
          << f.name << " bits 0x" << std::hex << floatToBits(x);
    }
  }
}

TEST(Formats, RoundTripEveryFiniteCode) {
  for (const FormatCase &f : kCases)
    for (unsigned code = 0; code < (1u << f.bits); ++code) {
      float value = decodeElement(f.type, uint8_t(code));
      if (std::isfinite(value))
        EXPECT_EQ(encode(f, value), code) << f.name << " code " << code;
    }
}

TEST(Formats, SpecialValues) {
  EXPECT_EQ(encodeE2M1(NAN), 0x7);
  EXPECT_EQ(encodeE2M1(INFINITY), 0x7);
  EXPECT_EQ(encodeE2M1(-INFINITY), 0xF);
  EXPECT_EQ(encodeE2M1(-0.0f), 0x8);
  EXPECT_EQ(encodeE2M1(-0.25f), 0x8); // Tie to even keeps the sign.
  EXPECT_EQ(encodeE2M1(5.0f), 0x6);   // Tie between 4 and 6 goes to 4.
  EXPECT_EQ(encodeE4M3FN(464.0f), 0x7E);
  EXPECT_EQ(encodeE4M3FN(1e9f), 0x7E);
  EXPECT_EQ(encodeE4M3FN(-INFINITY), 0xFE);
  EXPECT_EQ(encodeE4M3FN(-NAN), 0x7F);
  EXPECT_EQ(encodeE5M2(INFINITY), 0x7B);
  EXPECT_EQ(encodeE5M2(NAN), 0x7F);
}

TEST(Formats, E8M0) {
  for (unsigned code = 0; code < 255; ++code) {
    EXPECT_EQ(decodeE8M0(uint8_t(code)), std::ldexp(1.0f, int(code) - 127));
    EXPECT_EQ(inverseE8M0(uint8_t(code)), std::ldexp(1.0f, 127 - int(code)));
    EXPECT_EQ(encodeE8M0RoundUp(decodeE8M0(uint8_t(code))), code);
  }
  EXPECT_TRUE(std::isnan(decodeE8M0(0xFF)));
  EXPECT_EQ(encodeE8M0RoundUp(NAN), 0xFF);
  EXPECT_EQ(encodeE8M0RoundUp(INFINITY), 0xFF);
  EXPECT_EQ(encodeE8M0RoundUp(0.0f), 0x00);
  EXPECT_EQ(encodeE8M0RoundUp(1.0f), 127);
  EXPECT_EQ(encodeE8M0RoundUp(std::nextafter(1.0f, 2.0f)), 128);
  EXPECT_EQ(encodeE8M0RoundUp(-3.0f), 129);
  EXPECT_EQ(encodeE8M0RoundUp(3e38f), 254);
  // Subnormals between 2^-127 and 2^-126 round up to 2^-126.
  EXPECT_EQ(encodeE8M0RoundUp(bitsToFloat(0x00400001)), 1);
  EXPECT_EQ(encodeE8M0RoundUp(bitsToFloat(0x00000001)), 0);
}

//===----------------------------------------------------------------------===//
// [SR1]
//===----------------------------------------------------------------------===//

/// SR by the definition: the E2M1 neighbours below and above |v|, the
/// fraction f of the way between them in double, and a round-up exactly when
/// floor(f·2^22) + (rbits >> 10) reaches 2^22 (docs/numerics.md §4).
uint8_t referenceStochastic(float v, uint32_t rbits) {
  if (std::isnan(v))
    return 0x7;
  const double grid[8] = {0, 0.5, 1, 1.5, 2, 3, 4, 6};
  double a = std::min(std::fabs(double(v)), 6.0);
  unsigned low = 0;
  while (low < 7 && grid[low + 1] <= a)
    ++low;
  unsigned code = low;
  if (low < 7) {
    double f = (a - grid[low]) / (grid[low + 1] - grid[low]);
    uint64_t frac22 = uint64_t(std::floor(std::ldexp(f, 22)));
    if (frac22 + (rbits >> 10) >= (uint64_t(1) << 22))
      ++code;
  }
  return uint8_t((std::signbit(v) ? 8 : 0) | code);
}

TEST(Formats, StochasticMatchesDefinition) {
  std::mt19937 rng(99);
  std::vector<float> inputs = interestingInputs(kCases[0]);
  for (int i = 0; i < 200000; ++i)
    inputs.push_back(
        std::ldexp(float(int32_t(rng()) >> 8), int(rng() % 48) - 23 - 36));
  for (float v : inputs) {
    for (uint32_t rbits :
         {0u, 1u, 0x3FFu, 0x7FFFFFFFu, 0x80000000u, 0xFFFFFBFFu, 0xFFFFFC00u,
          0xFFFFFFFFu, uint32_t(rng()), uint32_t(rng())})
      ASSERT_EQ(encodeE2M1Stochastic(v, rbits), referenceStochastic(v, rbits))
          << "v bits 0x" << std::hex << floatToBits(v) << " rbits 0x" << rbits;
  }
}

TEST(Formats, StochasticThresholdIsExact) {
  // 2.25 is a quarter of the way from 2 to 3: it rounds up for exactly the
  // 2^30 largest words.
  EXPECT_EQ(encodeE2M1Stochastic(2.25f, 0xC0000000u - 1), encodeE2M1(2.0f));
  EXPECT_EQ(encodeE2M1Stochastic(2.25f, 0xC0000000u), encodeE2M1(3.0f));
  // 0.125 is a quarter of the way from 0 to 0.5.
  EXPECT_EQ(encodeE2M1Stochastic(-0.125f, 0xBFFFFFFFu), 0x8);
  EXPECT_EQ(encodeE2M1Stochastic(-0.125f, 0xC0000000u), 0x9);
  // Below 1 only 22 fraction bits count (gfx950's SR conversion): 0.125 +
  // 2^-26 has the threshold of 0.125, and 2^-23 (f = 2^-22) rounds up only
  // for the top 2^10 words, 2^-24 (f = 2^-23) never.
  EXPECT_EQ(encodeE2M1Stochastic(0.125f + 0x1p-26f, 0xBFFFFFFFu), 0x0);
  EXPECT_EQ(encodeE2M1Stochastic(0.125f + 0x1p-26f, 0xC0000000u), 0x1);
  EXPECT_EQ(encodeE2M1Stochastic(0x1p-23f, 0xFFFFFBFFu), 0x0);
  EXPECT_EQ(encodeE2M1Stochastic(0x1p-23f, 0xFFFFFC00u), 0x1);
  EXPECT_EQ(encodeE2M1Stochastic(0x1p-24f, 0xFFFFFFFFu), 0x0);
  // Grid points never move; values past 6 saturate.
  for (float g : {0.0f, 0.5f, 1.0f, 1.5f, 2.0f, 3.0f, 4.0f, 6.0f})
    EXPECT_EQ(encodeE2M1Stochastic(g, 0xFFFFFFFFu), encodeE2M1(g));
  EXPECT_EQ(encodeE2M1Stochastic(7.5f, 0xFFFFFFFFu), 0x7);
  EXPECT_EQ(encodeE2M1Stochastic(-INFINITY, 0u), 0xF);
  EXPECT_EQ(encodeE2M1Stochastic(NAN, 0u), 0x7);
}

/// The smallest word that rounds |v| up (2^32 when none does): rounding up
/// is monotone in the word, so a binary search finds it.
uint64_t stochasticThreshold(float v) {
  uint8_t down = encodeE2M1Stochastic(v, 0);
  uint64_t low = 0, high = uint64_t(1) << 32;
  while (low < high) {
    uint64_t mid = (low + high) / 2;
    if (encodeE2M1Stochastic(v, uint32_t(mid)) != down)
      high = mid;
    else
      low = mid + 1;
  }
  return low;
}

/// [SR1] Over all 2^32 words, P(up) is exactly floor(f·2^22) / 2^22, so the
/// expected value is below |v| by less than 2^-22 ulp, and equal to it for
/// |v| >= 1 (22 fraction bits at most there).
TEST(Formats, StochasticBiasIsBelow2ToMinus22Ulp) {
  const double grid[8] = {0, 0.5, 1, 1.5, 2, 3, 4, 6};
  std::mt19937 rng(5);
  std::vector<float> inputs = {
      0.125f, 0.125f + 0x1p-26f, 0x1p-23f, 0x1p-24f, 0.3f, 1.3f, 2.6f, 5.9f,
      1e-30f};
  for (int i = 0; i < 2000; ++i)
    inputs.push_back(std::ldexp(float(rng() >> 8), int(rng() % 29) - 50));
  for (float v : inputs) {
    double a = v;
    unsigned low = 0;
    while (low < 7 && grid[low + 1] <= a)
      ++low;
    ASSERT_LT(low, 7u);
    double ulp = grid[low + 1] - grid[low];
    double f = (a - grid[low]) / ulp;
    double pUp =
        std::ldexp(double((uint64_t(1) << 32) - stochasticThreshold(v)), -32);
    ASSERT_EQ(pUp, std::floor(std::ldexp(f, 22)) / 4194304.0) << "v = " << v;
    double bias = (f - pUp) * ulp; // E[|v̂|] = |v| - bias
    ASSERT_GE(bias, 0.0) << "v = " << v;
    ASSERT_LT(bias, std::ldexp(ulp, -22)) << "v = " << v;
    if (a >= 1)
      ASSERT_EQ(bias, 0.0) << "v = " << v;
  }
}

/// gfx950's `v_cvt_scalef32_sr_pk_fp4_f32` on one element, x divided by
/// 2^scaleExp and rounded with `seed`, restated from AMD's host model of the
/// instruction (`fcbx::from_float_sr<float, Encoding::E2M1, true>` in HIP's
/// amd_hip_ocp_host.hpp) independently of the library's recipe: the exponent
/// is reduced exactly (f32 subnormals normalized), the 24-bit significand is
/// aligned to the E2M1 grid (truncating below 1), `seed >> 10` is added to
/// the 23-bit mantissa field and the sum truncated, a carry increments the
/// exponent, and anything past 6 saturates. NaN is not modelled (the kernel
/// never feeds one: [MX3] blocks bypass the instruction).
uint8_t gfx950StochasticE2M1(float x, uint32_t seed, int scaleExp) {
  uint32_t bits = floatToBits(x);
  uint8_t sign = uint8_t((bits >> 31) << 3);
  uint32_t field = (bits >> 23) & 0xFF, mantissa = bits & 0x7FFFFF;
  if (field == 0xFF) // Inf; E2M1 has none
    return sign | 0x7;
  if (field == 0 && mantissa == 0)
    return sign;
  int exponent = int(field) - 127;
  if (field == 0) {
    exponent = -126;
    while (!(mantissa & 0x800000)) {
      mantissa <<= 1;
      --exponent;
    }
    mantissa &= 0x7FFFFF;
  }
  exponent -= scaleExp;
  if (exponent > 2)
    return sign | 0x7;
  uint32_t biased, man;
  if (exponent < 0) { // E2M1 subnormal: 0 or 0.5 before rounding
    biased = 0;
    unsigned shift = unsigned(-exponent);
    man = shift >= 32 ? 0 : (0x800000u | mantissa) >> shift;
  } else {
    biased = unsigned(exponent) + 1;
    man = mantissa;
  }
  man += seed >> 10;
  if (man >= 0x800000u)
    ++biased;
  if (biased > 3)
    return sign | 0x7;
  return uint8_t(sign | biased << 1 | ((man >> 22) & 1));
}

/// The kernel's codes are the library's: encodeE2M1Stochastic of the scaled
/// f32 equals the instruction on the unscaled value and the E8M0 code, for
/// every finite (and infinite) x, every scale code the kernel passes
/// (0..254) and any word.
TEST(Formats, StochasticMatchesGfx950Model) {
  std::mt19937 rng(950);
  std::vector<float> inputs = interestingInputs(kCases[0]);
  for (int i = 0; i < 200000; ++i) {
    // Arbitrary bit patterns, E2M1-range values with long significands, and
    // f32 subnormals.
    switch (i % 3) {
    case 0:
      inputs.push_back(bitsToFloat(uint32_t(rng())));
      break;
    case 1:
      inputs.push_back(
          std::ldexp(float(int32_t(rng()) >> 8), int(rng() % 48) - 23 - 36));
      break;
    default:
      inputs.push_back(bitsToFloat(uint32_t(rng()) & 0x807FFFFFu));
    }
  }
  for (float x : inputs) {
    if (std::isnan(x))
      continue;
    // Scale codes around the one that puts x near the E2M1 range, and a few
    // arbitrary ones (0 and 254 included).
    int field = int((floatToBits(x) >> 23) & 0xFF);
    std::vector<int> codes = {0, 1, 127, 253, 254, int(rng() % 255)};
    for (int d = -26; d <= 3; ++d)
      codes.push_back(std::clamp(field - 2 + d, 0, 254));
    for (int code : codes) {
      for (uint32_t seed : {0u, 0x3FFu, 0x400u, 0x80000000u, 0xFFFFFC00u,
                            0xFFFFFFFFu, uint32_t(rng())}) {
        float v = x * inverseE8M0(uint8_t(code));
        ASSERT_EQ(encodeE2M1Stochastic(v, seed),
                  gfx950StochasticE2M1(x, seed, code - 127))
            << "x bits 0x" << std::hex << floatToBits(x) << " code " << std::dec
            << code << " seed 0x" << std::hex << seed;
      }
    }
  }
}

} // namespace
