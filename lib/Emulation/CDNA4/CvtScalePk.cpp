//===- CvtScalePk.cpp - v_cvt_scalef32_pk_{fp4,fp8,bf8}_f32 model ---------===//
//
// Sources:
//  - ROCDL / LLVM AMDGPU documentation of the gfx950 builtins
//    __builtin_amdgcn_cvt_scalef32_pk_fp4_f32(old, a, b, scale, byte_sel) and
//    __builtin_amdgcn_cvt_scalef32_pk_{fp8,bf8}_f32(old, a, b, scale,
//    word_sel): "convert two f32 values ... dividing them by the exponent
//    part of scale"; the two results are packed little-endian (a first) into
//    the selected byte (FP4) or 16-bit half (FP8/BF8) of the tied register.
//  - AMD HIP's host reference of these builtins (amd_hip_ocp_host.hpp,
//    fcbx::from_float with saturation, the code HIP runs in place of the
//    instruction on the host): the scale contributes only its exponent
//    field e (scale_exp = e - 127, e = 255 is NaN); the input is scaled
//    exactly; rounding is to nearest even on the target grid including its
//    subnormals; NaN input or NaN scale gives the format's NaN pattern with
//    the input's sign (E2M1, which has none, gives 0x7); Inf and overflow
//    give 0x7 (E2M1, i.e. 6), 0x7F (FP8 E4M3, the host model's saturation
//    value) or 0x7B (BF8 E5M2, the largest finite); zero keeps its sign.
//
// This file is independent of the fp4train lowering and numerics library:
// the scaled value is formed in double (exact: a 24-bit significand times a
// power of two in [2^-127, 2^127] stays in double's normal range) and
// rounded by std::nearbyint in the default round-to-nearest-even mode.
//
//===----------------------------------------------------------------------===//

#include "fp4train/Emulation/CDNA4.h"

#include <algorithm>
#include <cmath>
#include <cstring>

using namespace fp4train::emulation::cdna4;

namespace {

/// The narrow format's parameters.
struct Grid {
  int mantissaBits;
  int bias;
  /// Exponent of the largest binade (unbiased).
  int maxExponent;
  /// Largest finite magnitude.
  double maxFinite;
  uint8_t nanCode;      // without sign
  uint8_t overflowCode; // without sign (Inf and values past maxFinite)
  int signShift;
};

Grid getGrid(NarrowFormat format) {
  switch (format) {
  case NarrowFormat::FP4:
    return {1, 1, 2, 6.0, 0x7, 0x7, 3};
  case NarrowFormat::FP8:
    return {3, 7, 8, 448.0, 0x7F, 0x7F, 7};
  case NarrowFormat::BF8:
    return {2, 15, 15, 57344.0, 0x7E, 0x7B, 7};
  }
  return {};
}

float bitsToFloat(uint32_t bits) {
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

} // namespace

uint8_t fp4train::emulation::cdna4::cvtScaleToNarrow(NarrowFormat format,
                                                     uint32_t srcBits,
                                                     uint32_t scaleBits) {
  const Grid grid = getGrid(format);
  const uint8_t sign = static_cast<uint8_t>((srcBits >> 31) << grid.signShift);
  const int scaleExponent = static_cast<int>((scaleBits >> 23) & 0xFF) - 127;
  const float x = bitsToFloat(srcBits);
  if (std::isnan(x) || scaleExponent == 128)
    return sign | grid.nanCode;
  if (std::isinf(x))
    return sign | grid.overflowCode;
  if (x == 0.0f)
    return sign;

  // Exact: |x| · 2^-scaleExponent.
  const double v =
      std::ldexp(std::fabs(static_cast<double>(x)), -scaleExponent);
  const int minNormalExponent = 1 - grid.bias;
  int exponent = std::max(std::ilogb(v), minNormalExponent);
  // Grid spacing in v's binade (the subnormal spacing below the normals).
  const double ulp = std::ldexp(1.0, exponent - grid.mantissaBits);
  const double units = std::nearbyint(v / ulp); // ties to even
  const double rounded = units * ulp;
  if (rounded > grid.maxFinite)
    return sign | grid.overflowCode;
  if (rounded == 0.0)
    return sign;
  // Encode: a carry into the next binade is a normal number there.
  exponent = std::max(std::ilogb(rounded), minNormalExponent);
  const int64_t significand =
      static_cast<int64_t>(std::ldexp(rounded, grid.mantissaBits - exponent));
  const bool normal = significand >= (int64_t{1} << grid.mantissaBits);
  const int biased = normal ? exponent + grid.bias : 0;
  const int mantissa =
      static_cast<int>(significand & ((1 << grid.mantissaBits) - 1));
  return sign | static_cast<uint8_t>((biased << grid.mantissaBits) | mantissa);
}

uint32_t fp4train::emulation::cdna4::cvtScalePkFp4(uint32_t old, uint32_t src0,
                                                   uint32_t src1,
                                                   uint32_t scale,
                                                   unsigned byteSel) {
  const uint32_t byte = cvtScaleToNarrow(NarrowFormat::FP4, src0, scale) |
                        cvtScaleToNarrow(NarrowFormat::FP4, src1, scale) << 4;
  const unsigned shift = 8 * (byteSel & 3);
  return (old & ~(0xFFu << shift)) | byte << shift;
}

uint32_t fp4train::emulation::cdna4::cvtScalePkFp8(NarrowFormat format,
                                                   uint32_t old, uint32_t src0,
                                                   uint32_t src1,
                                                   uint32_t scale,
                                                   unsigned wordSel) {
  const uint32_t word = cvtScaleToNarrow(format, src0, scale) |
                        cvtScaleToNarrow(format, src1, scale) << 8;
  const unsigned shift = 16 * (wordSel & 1);
  return (old & ~(0xFFFFu << shift)) | word << shift;
}
