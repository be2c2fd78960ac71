//===- ReferenceValues.h - Test-side values of the MMA formats -*- C++ -*-====//
//
// The test side's own decoding of the formats the block-scaled MMA models take,
// written from the format tables ([FMT1] in docs/semantics.md, PTX ISA §5.2.3)
// for the ranges the tests use (finite codes), so that test references do not
// depend on the models they check.
//
//===----------------------------------------------------------------------===//

#ifndef FP4TRAIN_UNITTESTS_EMULATION_REFERENCEVALUES_H
#define FP4TRAIN_UNITTESTS_EMULATION_REFERENCEVALUES_H

#include <cmath>
#include <cstdint>
#include <cstring>

namespace fp4train::emulation_test {

inline uint32_t bitsOf(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}
inline float floatOf(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

/// Whether cvt.rs.satfinite.e2m1x4.f32 fed the top byte of `word` rounds
/// the scaled value `v` differently from [SR1] (docs/numerics.md §4): where
/// the top bytes of floor(F · 2^22) and word >> 10 sum to 255 and their low
/// 14 bits carry (F the fraction of |v| between its E2M1 neighbours; [SR1]
/// is then one code up).
inline bool cvtRsDiffersFromSR1(float v, uint32_t word) {
  const double a = std::fabs(double(v));
  if (!(a < 6.0))
    return false;
  const double quantum = a < 1.0 ? 0.5 : std::ldexp(1.0, std::ilogb(a) - 1);
  const double steps = a / quantum;
  const auto frac22 =
      static_cast<uint32_t>(std::ldexp(steps - std::floor(steps), 22));
  const uint32_t w22 = word >> 10;
  return (frac22 >> 14) + (w22 >> 14) == 255 &&
         (frac22 & 0x3FFF) + (w22 & 0x3FFF) >= (1u << 14);
}

/// E2M1: ±{0, 0.5, 1, 1.5, 2, 3, 4, 6}, bit 3 the sign.
inline double e2m1Value(uint8_t code) {
  static const double magnitude[8] = {0, 0.5, 1, 1.5, 2, 3, 4, 6};
  return (code & 8 ? -1 : 1) * magnitude[code & 7];
}
/// UE4M3 (bias 7, subnormals below exponent field 1), finite codes.
inline double ue4m3Value(uint8_t code) {
  const int e = (code >> 3) & 0xF, m = code & 7;
  return e ? std::ldexp(1 + m / 8.0, e - 7) : std::ldexp(m / 8.0, -6);
}
/// E4M3 (sign in bit 7), finite codes.
inline double e4m3Value(uint8_t code) {
  return (code & 0x80 ? -1 : 1) * ue4m3Value(code & 0x7F);
}
/// UE8M0: 2^(code - 127), finite codes.
inline double ue8m0Value(uint8_t code) {
  return std::ldexp(1.0, int(code) - 127);
}

} // namespace fp4train::emulation_test

#endif // FP4TRAIN_UNITTESTS_EMULATION_REFERENCEVALUES_H
