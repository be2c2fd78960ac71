//===- CvtF16x2E4M3x2.cpp - cvt.rn.f16x2.e4m3x2 model ---------------------===//
//
// Sources: PTX ISA §9.7.9.21 "cvt" (docs.nvidia.com/cuda/parallel-thread-
// execution): converting .e4m3x2 to .f16x2, "the value converted from the
// upper 8 bits of a is stored in the upper 16 bits of d and the value
// converted from the lower 8 bits of a is stored in the lower 16 bits of d";
// the rounding modifier is mandatory; sm_89 (PTX 8.1) / sm_90 (PTX 7.8).
// §5.2.3: e4m3 has a sign, 4 exponent bits (bias 7), 3 mantissa bits,
// subnormals (quantum 2^-9), no Inf, NaN only 0x7f/0xff. Every E4M3 value,
// subnormals included, is an f16 normal (2^-9 >= 2^-14) or zero, so the
// conversion is exact whatever the rounding. The ISA does not give the bits
// of a NaN result without .relu; the model returns CUDA's canonical half
// NaN 0x7fff (CUDART_NAN_FP16), and what reads it must depend only on its
// being a NaN.
//
//===----------------------------------------------------------------------===//

#include "fp4train/Emulation/PTX.h"

uint16_t fp4train::emulation::ptx::cvtRnF16E4M3(uint8_t code) {
  const uint16_t sign = static_cast<uint16_t>(code & 0x80) << 8;
  const unsigned magnitude = code & 0x7F;
  if (magnitude == 0x7F)
    return 0x7FFF;
  unsigned exponent = magnitude >> 3, mantissa = magnitude & 7;
  if (exponent == 0) {
    if (mantissa == 0)
      return sign;
    // Subnormal m · 2^-9: normalize the mantissa into the f16 significand.
    int unbiased = -6;
    while (!(mantissa & 8)) {
      mantissa <<= 1;
      --unbiased;
    }
    return sign | static_cast<uint16_t>((unbiased + 15) << 10) |
           static_cast<uint16_t>((mantissa & 7) << 7);
  }
  // Normal: rebias 7 -> 15, the 3 mantissa bits at the top of f16's 10.
  return sign | static_cast<uint16_t>((exponent + 8) << 10) |
         static_cast<uint16_t>(mantissa << 7);
}

uint32_t fp4train::emulation::ptx::cvtRnF16x2E4M3x2(uint16_t a) {
  return static_cast<uint32_t>(cvtRnF16E4M3(a >> 8)) << 16 |
         cvtRnF16E4M3(a & 0xFF);
}
