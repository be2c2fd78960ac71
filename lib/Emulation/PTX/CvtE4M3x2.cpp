//===- CvtE4M3x2.cpp - cvt.rn.satfinite.e4m3x2.f32 model ------------------===//
//
// Sources: PTX ISA §9.7.9.21 "cvt" (docs.nvidia.com/cuda/parallel-thread-
// execution): "the value converted from input a is stored in the upper 8 bits
// of d and the value converted from input b is stored in the lower 8 bits of
// d" (d[15:8] = convert(a); d[7:0] = convert(b)); .rn = nearest, ties to
// even; .satfinite: "if the input value is NaN, then the result is NaN in the
// specified destination format. If the absolute value of input (ignoring
// sign) is greater than MAX_NORM ..., the result is sign-preserved MAX_NORM".
// §5.2.3: e4m3 has 4 exponent bits (bias 7), 3 mantissa bits, subnormals, no
// Inf, NaN only 0x7f/0xff; MAX_NORM = 448 (0x7e). The NaN code keeps the
// input's sign (0x7f or 0xff) and zero/underflow keep the sign, as NVIDIA's
// host reference __nv_cvt_double_to_fp8 (CUDA 13.0 cuda_fp8.hpp) does; the
// ISA text does not fix either.
//
//===----------------------------------------------------------------------===//

#include "fp4train/Emulation/PTX.h"

#include <cmath>
#include <cstring>

namespace {

/// |x| <= 448 rounded to nearest even on the E4M3 grid: the 7-bit magnitude
/// code (subnormal quantum 2^-9 below 2^-6, else 2^(floor(log2 x) - 3)).
uint8_t encodeMagnitude(double x) {
  constexpr int kMinNormalExponent = -6;
  int e;
  std::frexp(x, &e);
  const int exponent =
      x >= std::ldexp(1.0, kMinNormalExponent) ? e - 1 : kMinNormalExponent;
  const auto n =
      static_cast<unsigned>(std::nearbyint(std::ldexp(x, 3 - exponent)));
  if (exponent == kMinNormalExponent && n < 8)
    return static_cast<uint8_t>(n); // subnormal (or zero)
  // n in [8, 16]: exponent field exponent + 7 and mantissa n - 8; n == 16
  // carries into the exponent field.
  return static_cast<uint8_t>(((exponent + 7) << 3) + (n - 8));
}

} // namespace

uint8_t fp4train::emulation::ptx::cvtRnSatfiniteE4M3(uint32_t bits) {
  float value;
  std::memcpy(&value, &bits, 4);
  const uint8_t sign = (bits >> 31) ? 0x80 : 0x00;
  if (std::isnan(value))
    return sign | 0x7F;
  const double magnitude = std::fabs(static_cast<double>(value));
  if (magnitude > 448.0)
    return sign | 0x7E;
  return sign | encodeMagnitude(magnitude);
}

uint16_t fp4train::emulation::ptx::cvtRnSatfiniteE4M3x2(uint32_t hiBits,
                                                        uint32_t loBits) {
  return static_cast<uint16_t>(cvtRnSatfiniteE4M3(hiBits) << 8 |
                               cvtRnSatfiniteE4M3(loBits));
}
