//===- CvtRsE2M1x4.cpp - cvt.rs.satfinite.e2m1x4.f32 model ----------------===//
//
// Sources: PTX ISA §9.7.9.21 "cvt" (PTX 8.7+, sm_100a / sm_103a):
//  - `cvt.rs.satfinite.e2m1x4.f32 d, {a, b, e, f}, rbits`; semantics
//    d[15:12] = convert(a), d[11:8] = convert(b), d[7:4] = convert(e),
//    d[3:0] = convert(f);
//  - "rbits is a .b32 type register operand used for providing random bits
//    for .rs rounding mode ... When converting to .e2m1x4, two 16-bit values
//    are provided from rbits where lower 8-bits from both 16-bits half of
//    rbits are used for operands e, f and upper 8-bits from both 16-bits
//    half of rbits are used for operands a, b";
//  - .satfinite as for cvt.rn...e2m1x2 (CvtE2M1x2.cpp): magnitudes past 6
//    give the sign-preserved MAX_NORM, NaN gives positive MAX_NORM.
//
// What the text leaves open, and this model assumes:
//  - which half goes to which operand: the upper half's byte to a and e
//    (bits 31..24 to a, 23..16 to e), the lower half's to b and f (15..8 to
//    b, 7..0 to f), as .f16x2 gives a the upper half;
//  - how 8 random bits round: as for .f16x2 / .bf16x2, whose random bits are
//    exactly the dropped mantissa bits (13 and 16), the bits are added to
//    the dropped part of the magnitude aligned at its top: with F the
//    fraction of |x| between its E2M1 neighbours (quantum 0.5 below 1,
//    2^(floor(log2 |x|) - 1) above), |x| rounds up iff
//    floor(F * 2^8) + r >= 2^8; the dropped bits below the top 8 are
//    truncated.
// A zero result keeps the input's sign, as cvt.rn does.
//
// Against [SR1] (docs/numerics.md §4) with r the top byte of the element's
// Philox word w: [SR1] rounds up iff floor(F * 2^22) + (w >> 10) >= 2^22.
// Writing both as a top byte plus 14 low bits, the two decisions differ
// exactly when floor(F * 2^8) + r == 255 and the low 14 bits of
// floor(F * 2^22) plus bits 23..10 of w carry (then [SR1] rounds up and
// this model down): in fewer than 2^-8 of the draws, and never when F * 2^8
// is an integer.
//
//===----------------------------------------------------------------------===//

#include "fp4train/Emulation/PTX.h"

#include <cmath>
#include <cstring>

namespace {

/// The 3-bit magnitude code of (an exact E2M1 value) `x` in [0, 6].
uint8_t encodeGridValue(double x) {
  if (x < 1.0)
    return static_cast<uint8_t>(x * 2.0); // 0, 0.5
  int e;
  std::frexp(x, &e); // x = m · 2^e, m in [0.5, 1)
  const int exponent = e - 1;
  const auto n = static_cast<uint8_t>(std::ldexp(x, 1 - exponent)); // 2, 3
  return static_cast<uint8_t>(((exponent + 1) << 1) + (n - 2));
}

} // namespace

uint8_t fp4train::emulation::ptx::cvtRsSatfiniteE2M1(uint32_t bits,
                                                     uint8_t random) {
  float value;
  std::memcpy(&value, &bits, 4);
  const double magnitude = std::fabs(static_cast<double>(value));
  // NaN (positive MAX_NORM) and magnitudes that saturate: no rounding
  // choice, the codes of cvt.rn.
  if (!(magnitude < 6.0))
    return cvtRnSatfiniteE2M1(bits);
  const uint8_t sign = (bits >> 31) ? 0x8 : 0x0;
  int e;
  std::frexp(magnitude, &e);
  const double quantum = magnitude < 1.0 ? 0.5 : std::ldexp(1.0, (e - 1) - 1);
  const double steps = magnitude / quantum; // exact: a power-of-two quotient
  const double below = std::floor(steps);
  const auto top = static_cast<unsigned>(std::floor((steps - below) * 256.0));
  const bool up = top + random >= 256;
  const double rounded = std::fmin((below + (up ? 1.0 : 0.0)) * quantum, 6.0);
  return sign | encodeGridValue(rounded);
}

uint16_t fp4train::emulation::ptx::cvtRsSatfiniteE2M1x4(uint32_t a, uint32_t b,
                                                        uint32_t e, uint32_t f,
                                                        uint32_t rbits) {
  const auto byte = [&](unsigned shift) {
    return static_cast<uint8_t>(rbits >> shift);
  };
  return static_cast<uint16_t>(cvtRsSatfiniteE2M1(a, byte(24)) << 12 |
                               cvtRsSatfiniteE2M1(b, byte(8)) << 8 |
                               cvtRsSatfiniteE2M1(e, byte(16)) << 4 |
                               cvtRsSatfiniteE2M1(f, byte(0)));
}
