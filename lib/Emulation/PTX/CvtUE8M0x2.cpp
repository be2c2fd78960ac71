//===- CvtUE8M0x2.cpp - cvt.rp.satfinite.ue8m0x2.f32 model ----------------===//
//
// Sources: PTX ISA §9.7.9.21 "cvt" (docs.nvidia.com/cuda/parallel-thread-
// execution): "the value converted from input a is stored in the upper 8 bits
// of d and the value converted from input b is stored in the lower 8 bits of
// d"; .rp = rounding toward positive infinity; .satfinite: NaN input gives NaN
// in the destination format, |input| > MAX_NORM gives "a positive MAX_NORM in
// .ue8m0x2 for which the destination sign is not supported". §5.2.3: ue8m0 is
// 2^(e - 127), no zero, no Inf, NaN only 0xff, so MAX_NORM is 0xfe (2^127).
// What the ISA leaves open (the sign, zero and values at or below 2^-127) is
// taken from NVIDIA's host reference __nv_cvt_float_to_e8m0 (CUDA 13.0
// cuda_fp8.hpp): the sign is dropped, |x| is rounded up to a power of two and
// the code clamped to 0x00..0xfe, so 0 and |x| <= 2^-127 give 0x00.
//
//===----------------------------------------------------------------------===//

#include "fp4train/Emulation/PTX.h"

#include <algorithm>
#include <cmath>
#include <cstring>

uint8_t fp4train::emulation::ptx::cvtRpSatfiniteUE8M0(uint32_t bits) {
  float value;
  std::memcpy(&value, &bits, 4);
  if (std::isnan(value))
    return 0xFF;
  const double magnitude = std::fabs(static_cast<double>(value));
  if (std::isinf(magnitude))
    return 0xFE;
  if (magnitude == 0.0)
    return 0x00;
  int e;
  const double fraction = std::frexp(magnitude, &e); // in [0.5, 1)
  // ceil(log2 |x|): e - 1 for an exact power of two, else e.
  const int exponent = fraction == 0.5 ? e - 1 : e;
  return static_cast<uint8_t>(std::clamp(exponent + 127, 0, 0xFE));
}

uint16_t fp4train::emulation::ptx::cvtRpSatfiniteUE8M0x2(uint32_t hiBits,
                                                         uint32_t loBits) {
  return static_cast<uint16_t>(cvtRpSatfiniteUE8M0(hiBits) << 8 |
                               cvtRpSatfiniteUE8M0(loBits));
}
