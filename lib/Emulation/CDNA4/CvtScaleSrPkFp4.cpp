//===- CvtScaleSrPkFp4.cpp - v_cvt_scalef32_sr_pk_fp4_f32 model -----------===//
//
// Sources:
//  - ROCDL documentation of rocdl.cvt.scalef32.sr.pk.fp4.f32 (the gfx950
//    builtin __builtin_amdgcn_cvt_scalef32_sr_pk_fp4_f32(old, a, b, seed,
//    scale, byte_sel)): converts two f32 to E2M1 "dividing by the exponent
//    part of scale ... using seed as the random seed for stochastic
//    rounding"; the byte (a in the low nibble) updates byte byte_sel of old.
//  - AMD HIP's host reference of the builtin (amd_hip_ocp_host.hpp,
//    fcbx::from_float_sr, used for both elements with the same seed by
//    __amd_cvt_floatx2_to_fp4x2_sr_scale): the input's exponent is lowered by
//    scale_exp = (scale exponent field) - 127 (f32 subnormals normalized
//    first); in E2M1's subnormal range the 24-bit significand is shifted
//    right (truncating) onto the 0.5 grid; then the top 22 bits of the seed
//    (seed >> 10) are added to the 23-bit mantissa field and the sum is
//    truncated to E2M1's one mantissa bit, a carry moving to the next
//    binade. Past the largest binade, and for Inf, the result is 6 (0x7);
//    NaN input or NaN scale also give 0x7; zero keeps its sign.
//
// Written from those descriptions, independently of fp4train's numerics.
//
//===----------------------------------------------------------------------===//

#include "fp4train/Emulation/CDNA4.h"

using namespace fp4train::emulation::cdna4;

uint8_t fp4train::emulation::cdna4::cvtScaleSrToFp4(uint32_t srcBits,
                                                    uint32_t seed,
                                                    uint32_t scaleBits) {
  // E2M1: one mantissa bit, exponent bias 1, binades 2^0 .. 2^2.
  constexpr int kMaxExponent = 2;
  constexpr int kMinExponent = 0;
  constexpr uint8_t kSaturated = 0x7;

  const uint8_t sign = static_cast<uint8_t>((srcBits >> 31) << 3);
  const int scaleExponent = static_cast<int>((scaleBits >> 23) & 0xFF) - 127;
  const uint32_t exponentField = (srcBits >> 23) & 0xFF;
  uint32_t mantissa = srcBits & 0x7FFFFF;
  if ((exponentField == 0xFF && mantissa != 0) || scaleExponent == 128)
    return sign | kSaturated; // NaN
  if (exponentField == 0xFF)
    return sign | kSaturated; // Inf
  if (exponentField == 0 && mantissa == 0)
    return sign; // ±0

  // Unbiased exponent with f32 subnormals normalized.
  int exponent =
      exponentField == 0 ? -126 : static_cast<int>(exponentField) - 127;
  if (exponentField == 0) {
    while (!(mantissa & 0x800000)) {
      mantissa <<= 1;
      --exponent;
    }
    mantissa &= 0x7FFFFF;
  }
  exponent -= scaleExponent;
  if (exponent > kMaxExponent)
    return sign | kSaturated;

  bool subnormal = false;
  if (exponent < kMinExponent) {
    subnormal = true;
    const int shift = kMinExponent - exponent;
    mantissa = shift >= 32 ? 0 : (0x800000 | mantissa) >> shift;
    exponent = 0;
  }
  // Add the random word aligned one bit below the kept mantissa bit.
  mantissa += seed >> 10;
  if (mantissa >= 0x800000)
    ++exponent;
  const uint32_t kept = (mantissa >> 22) & 1;
  if (exponent > kMaxExponent)
    return sign | kSaturated;
  const uint32_t biased = subnormal ? exponent : exponent + 1;
  return sign | static_cast<uint8_t>((biased & 3) << 1 | kept);
}

uint32_t
fp4train::emulation::cdna4::cvtScaleSrPkFp4(uint32_t old, uint32_t src0,
                                            uint32_t src1, uint32_t seed,
                                            uint32_t scale, unsigned byteSel) {
  const uint32_t byte = cvtScaleSrToFp4(src0, seed, scale) |
                        cvtScaleSrToFp4(src1, seed, scale) << 4;
  const unsigned shift = 8 * (byteSel & 3);
  return (old & ~(0xFFu << shift)) | byte << shift;
}
