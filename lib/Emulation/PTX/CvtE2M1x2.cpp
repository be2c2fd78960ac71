//===- CvtE2M1x2.cpp - cvt.rn.satfinite.e2m1x2.f32 model ------------------===//
//
// Sources: PTX ISA §9.7.9.21 "cvt" (docs.nvidia.com/cuda/parallel-thread-
// execution, PTX 8.6+): "the value converted from input a is stored in the
// upper 4 bits of d and the value converted from input b is stored in the
// lower 4 bits of d" (semantics: d[7:4] = convert(a); d[3:0] = convert(b)),
// .rn = round to nearest, ties to even; .satfinite: "If the absolute value of
// input (ignoring sign) is greater than MAX_NORM of the specified destination
// format, then the result is sign-preserved MAX_NORM", "For .e2m1x2 ...
// destination formats NaN results are converted to positive MAX_NORM".
// §5.2.3: e2m1 has 2 exponent bits (bias 1) and 1 mantissa bit, no Inf/NaN.
// A zero or underflowing result keeps the input's sign (-0 is code 0x8), as
// NVIDIA's host reference __nv_cvt_double_to_fp4 (CUDA 13.0 cuda_fp4.hpp)
// does; the ISA text does not say.
//
//===----------------------------------------------------------------------===//

#include "fp4train/Emulation/PTX.h"

#include <cmath>
#include <cstring>

namespace {

/// |x| rounded to nearest even on the E2M1 grid (subnormal quantum 0.5,
/// normal quantum 2^(e - 1)), |x| <= 6: the 3-bit magnitude code.
uint8_t encodeMagnitude(double x) {
  int e;
  std::frexp(x, &e); // x = f · 2^e, f in [0.5, 1)
  const int exponent =
      x >= 1.0 ? e - 1 : 0; // floor(log2 x), or the subnormal one
  const double quantum = std::ldexp(1.0, exponent - 1);
  const auto n = static_cast<uint8_t>(std::nearbyint(x / quantum));
  if (x < 1.0)
    return n; // 0, 1 (0.5) or 2 (1.0: the smallest normal, code 0b010)
  // n in [2, 4]; n == 4 carries into the next binade, which the sum encodes.
  return static_cast<uint8_t>(((exponent + 1) << 1) + (n - 2));
}

} // namespace

uint8_t fp4train::emulation::ptx::cvtRnSatfiniteE2M1(uint32_t bits) {
  float value;
  std::memcpy(&value, &bits, 4);
  if (std::isnan(value))
    return 0x7; // positive MAX_NORM
  const uint8_t sign = (bits >> 31) ? 0x8 : 0x0;
  const double magnitude = std::fabs(static_cast<double>(value));
  if (magnitude > 6.0)
    return sign | 0x7;
  return sign | encodeMagnitude(magnitude);
}

uint8_t fp4train::emulation::ptx::cvtRnSatfiniteE2M1x2(uint32_t hiBits,
                                                       uint32_t loBits) {
  return static_cast<uint8_t>(cvtRnSatfiniteE2M1(hiBits) << 4 |
                              cvtRnSatfiniteE2M1(loBits));
}
