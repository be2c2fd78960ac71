//===- Formats.h - Element and scale codecs for MX/NV formats ---*- C++ -*-===//
//
// Bit-exact encoders and decoders for the element formats E2M1 (f4E2M1FN),
// E4M3FN (f8E4M3FN), E5M2 (f8E5M2) and the scale format E8M0 (f8E8M0FNU), as
// [FMT1] (docs/semantics.md) and docs/numerics.md §1 define them. Every other
// layer of the project (block quantization here, the MLIR CPU expansion, GPU
// lane emulation) is checked against these functions, so they are written as
// branch-free integer and f32 arithmetic that a vectorizer, an MLIR `arith`
// lowering or a GPU lane model can reproduce operation for operation.
//
// Codes are returned in the low bits of a uint8_t: E2M1 uses bits 3..0 with
// the sign in bit 3; the FP8 formats use all eight bits with the sign in bit 7.
//
//===----------------------------------------------------------------------===//

#ifndef FP4TRAIN_NUMERICS_FORMATS_H
#define FP4TRAIN_NUMERICS_FORMATS_H

#include <cstdint>
#include <cstring>
#include <limits>

namespace fp4train::numerics {

/// The element formats of [FMT1].
enum class ElementType : uint8_t { E2M1, E4M3FN, E5M2 };

/// The block scale formats of [FMT1].
enum class ScaleType : uint8_t { E8M0, E4M3FN };

/// Reinterprets an f32 as its IEEE-754 bit pattern.
inline uint32_t floatToBits(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof(bits));
  return bits;
}

/// Reinterprets an IEEE-754 bit pattern as an f32.
inline float bitsToFloat(uint32_t bits) {
  float value;
  std::memcpy(&value, &bits, sizeof(value));
  return value;
}

/// Static description of a small IEEE-like binary format: enough for the
/// generic codec below. Values are (-1)^s · 2^(e - bias) · 1.m for e > 0 and
/// (-1)^s · 2^(1 - bias) · 0.m for e = 0.
struct MiniFloatFormat {
  unsigned exponentBits;
  unsigned mantissaBits;
  int bias;
  /// Exponent of the largest finite value (the format's emax, [MX1]).
  int maxExponent;
  /// Bit pattern of the largest finite magnitude, as an f32.
  uint32_t maxFiniteF32Bits;
  /// Code produced for a NaN input (the formats' canonical NaN, no sign).
  uint8_t nanCode;
};

/// f4E2M1FN: ±{0, 0.5, 1, 1.5, 2, 3, 4, 6}; no Inf or NaN. A NaN input
/// encodes to 0x7 (+6), the code CUDA's satfinite host conversion produces.
inline constexpr MiniFloatFormat kE2M1 = {2, 1, 1, 2, 0x40C00000u, 0x7};
/// f8E4M3FN: max 448; S.1111.111 is NaN; no Inf.
inline constexpr MiniFloatFormat kE4M3FN = {4, 3, 7, 8, 0x43E00000u, 0x7F};
/// f8E5M2: max 57344; exponent 31 holds Inf (mantissa 0) and NaN.
inline constexpr MiniFloatFormat kE5M2 = {5, 2, 15, 15, 0x47600000u, 0x7F};

/// Returns the static description of an element type.
constexpr const MiniFloatFormat &getFormat(ElementType type) {
  return type == ElementType::E2M1     ? kE2M1
         : type == ElementType::E4M3FN ? kE4M3FN
                                       : kE5M2;
}

/// Largest finite value of an element type (6, 448, 57344).
inline float maxFiniteValue(ElementType type) {
  return bitsToFloat(getFormat(type).maxFiniteF32Bits);
}

namespace detail {

/// 2^e as a constexpr f32 for |e| small enough to stay normal.
constexpr float exp2Constant(int e) {
  float value = 1.0f;
  for (; e > 0; --e)
    value *= 2.0f;
  for (; e < 0; ++e)
    value *= 0.5f;
  return value;
}

/// Round-to-nearest-even with satfinite from f32 to a mini-float format.
///
/// The magnitude is first clamped to the largest finite value (satfinite:
/// values past it, ±Inf included, saturate; comparing non-negative f32 bit
/// patterns as integers orders them like the values). Then:
///  - normal results: rebias the exponent and round the f32 mantissa to
///    F.mantissaBits bits with the classic integer RNE (add half an ulp minus
///    one plus the kept lsb, then truncate); a carry into the exponent is the
///    correct result, and the clamp rules out overflow;
///  - subnormal results (|x| below the smallest normal): add the constant
///    2^(23 + 1 - bias - mantissaBits), whose f32 ulp equals the format's
///    subnormal spacing, so the f32 adder performs the RNE; the low bits of the
///    sum are the code.
/// NaN maps to F.nanCode. The sign is copied, so -0 and tiny negatives keep it.
template <const MiniFloatFormat &F> inline uint8_t encodeRNESat(float x) {
  constexpr unsigned Shift = 23 - F.mantissaBits;
  constexpr unsigned SignShift = F.exponentBits + F.mantissaBits;
  constexpr uint32_t Rebias = uint32_t(127 - F.bias) << 23;
  constexpr uint32_t MinNormalBits = uint32_t(127 - F.bias + 1) << 23;
  constexpr float SubnormalMagic =
      exp2Constant(23 + 1 - F.bias - int(F.mantissaBits));

  uint32_t bits = floatToBits(x);
  uint32_t sign = (bits >> 31) << SignShift;
  uint32_t absBits = bits & 0x7FFFFFFFu;
  bool isNaN = absBits > 0x7F800000u;
  absBits = absBits > F.maxFiniteF32Bits ? F.maxFiniteF32Bits : absBits;

  uint32_t normal = (absBits - Rebias + ((1u << (Shift - 1)) - 1) +
                     ((absBits >> Shift) & 1u)) >>
                    Shift;
  uint32_t subnormal = floatToBits(bitsToFloat(absBits) + SubnormalMagic) -
                       floatToBits(SubnormalMagic);
  uint32_t magnitude = absBits < MinNormalBits ? subnormal : normal;
  return uint8_t(isNaN ? F.nanCode : (sign | magnitude));
}

/// Exact decode of a mini-float code to f32. The all-ones exponent follows
/// each format's rule: IEEE Inf/NaN for E5M2, NaN only at S.1111.111 for
/// E4M3FN, an ordinary binade for E2M1.
template <const MiniFloatFormat &F> inline float decodeMiniFloat(uint8_t code) {
  constexpr unsigned SignShift = F.exponentBits + F.mantissaBits;
  constexpr uint32_t ExpMask = (1u << F.exponentBits) - 1;
  constexpr uint32_t MantMask = (1u << F.mantissaBits) - 1;
  constexpr float SubnormalUlp = exp2Constant(1 - F.bias - int(F.mantissaBits));

  uint32_t sign = uint32_t(code >> SignShift & 1u) << 31;
  uint32_t exponent = code >> F.mantissaBits & ExpMask;
  uint32_t mantissa = code & MantMask;
  if (&F == &kE4M3FN && exponent == ExpMask && mantissa == MantMask)
    return std::numeric_limits<float>::quiet_NaN();
  if (&F == &kE5M2 && exponent == ExpMask)
    return mantissa ? std::numeric_limits<float>::quiet_NaN()
                    : bitsToFloat(sign | 0x7F800000u);
  if (exponent == 0)
    return bitsToFloat(sign | floatToBits(float(mantissa) * SubnormalUlp));
  return bitsToFloat(sign | (exponent - F.bias + 127) << 23 |
                     mantissa << (23 - F.mantissaBits));
}

} // namespace detail

/// f32 → E2M1 with RNE and satfinite. 4-bit code, sign in bit 3.
inline uint8_t encodeE2M1(float x) { return detail::encodeRNESat<kE2M1>(x); }
/// f32 → E4M3FN with RNE and satfinite (±448); NaN → 0x7F.
inline uint8_t encodeE4M3FN(float x) {
  return detail::encodeRNESat<kE4M3FN>(x);
}
/// f32 → E5M2 with RNE and satfinite (±57344, Inf saturates); NaN → 0x7F.
inline uint8_t encodeE5M2(float x) { return detail::encodeRNESat<kE5M2>(x); }

/// E2M1 code (low 4 bits) → f32.
inline float decodeE2M1(uint8_t code) {
  return detail::decodeMiniFloat<kE2M1>(code & 0xF);
}
/// E4M3FN code → f32 (0x7F and 0xFF are NaN).
inline float decodeE4M3FN(uint8_t code) {
  return detail::decodeMiniFloat<kE4M3FN>(code);
}
/// E5M2 code → f32 (0x7C/0xFC are ±Inf, 0x7D-0x7F/0xFD-0xFF are NaN).
inline float decodeE5M2(uint8_t code) {
  return detail::decodeMiniFloat<kE5M2>(code);
}

/// RNE/satfinite encode to a runtime-selected element type.
inline uint8_t encodeElement(ElementType type, float x) {
  switch (type) {
  case ElementType::E2M1:
    return encodeE2M1(x);
  case ElementType::E4M3FN:
    return encodeE4M3FN(x);
  case ElementType::E5M2:
    return encodeE5M2(x);
  }
  return 0;
}

/// Decode of a runtime-selected element type.
inline float decodeElement(ElementType type, uint8_t code) {
  switch (type) {
  case ElementType::E2M1:
    return decodeE2M1(code);
  case ElementType::E4M3FN:
    return decodeE4M3FN(code);
  case ElementType::E5M2:
    return decodeE5M2(code);
  }
  return 0.0f;
}

/// [SR1] Stochastic rounding of an (already scaled) f32 to E2M1.
///
/// Recipe, all in integer arithmetic on the f32 bits of a = |v|:
///  1. NaN → 0x7 (as encodeE2M1); a > 6 (Inf included) saturates to 6.
///  2. Let E = floor(log2 a) (E = -126 for f32 subnormals and zero) and S the
///     24-bit significand (implicit bit included for normals). The E2M1 ulp at
///     a is 2^g with g = max(E, 0) - 1, and y = a / 2^g = n + f with integer n
///     and fraction f ∈ [0, 1). With d = min(E, 0):
///        n      = S >> (22 - d)                 (0 when the shift is ≥ 32)
///        frac32 = (S << (10 + d)) mod 2^32      when 10 + d ≥ 0,
///                 S >> -(10 + d)                otherwise (0 past 31 bits),
///     then its low 10 bits are cleared: frac32 = floor(f · 2^22) · 2^10.
///  3. All 32 bits of `rbits` are added to frac32; a carry out of bit 31
///     rounds up: up = (frac32 + rbits) mod 2^32 < frac32, i.e.
///     floor(f · 2^22) + (rbits >> 10) ≥ 2^22. For uniform rbits,
///     P(up) = floor(f · 2^22) / 2^22: exactly f whenever f has at most 22
///     fraction bits (every |v| ≥ 1: there frac32 is already a multiple of
///     2^10), otherwise f truncated to a multiple of 2^-22, a bias toward
///     zero of less than 2^-22 ulp (only for |v| < 1, in E2M1's subnormal
///     spacing 0.5).
///  4. The magnitude code is n + up + 2·max(E, 0) (the codes of the grid
///     points n·2^g), and the sign of v is kept in bit 3, so values that round
///     to zero keep their sign like the RNE encoder.
///
/// The 22-bit truncation is gfx950's: `v_cvt_scalef32_sr_pk_fp4_f32` aligns
/// the 24-bit significand to the E2M1 grid (truncating in the E2M1 subnormal
/// range), adds `rbits >> 10` to the 23-bit mantissa field and truncates
/// (AMD's host model of the instruction, `fcbx::from_float_sr` in HIP's
/// amd_hip_ocp_host.hpp). With this recipe the library, the IR expansion and
/// the gfx950 kernel produce the same codes for every input
/// (docs/numerics.md §4).
inline uint8_t encodeE2M1Stochastic(float v, uint32_t rbits) {
  uint32_t bits = floatToBits(v);
  uint32_t sign = (bits >> 28) & 0x8u;
  uint32_t absBits = bits & 0x7FFFFFFFu;
  bool isNaN = absBits > 0x7F800000u;
  absBits = absBits > kE2M1.maxFiniteF32Bits ? kE2M1.maxFiniteF32Bits : absBits;

  int32_t biased = int32_t(absBits >> 23);
  uint32_t significand = (absBits & 0x7FFFFFu) | (biased ? 0x800000u : 0u);
  int32_t exponent = biased ? biased - 127 : -126;
  int32_t d = exponent < 0 ? exponent : 0;
  int32_t gridShift = exponent > 0 ? exponent : 0;

  int32_t intShift = 22 - d;
  int32_t fracShift = 10 + d;
  uint32_t n = intShift < 32 ? significand >> intShift : 0u;
  uint32_t frac = fracShift >= 0    ? significand << fracShift
                  : fracShift > -32 ? significand >> -fracShift
                                    : 0u;
  frac &= ~0x3FFu; // [SR1] 22 fraction bits, as gfx950's SR conversion
  uint32_t up = uint32_t(frac + rbits) < frac ? 1u : 0u;
  uint32_t magnitude = n + up + 2u * uint32_t(gridShift);
  return uint8_t(isNaN ? kE2M1.nanCode : (sign | magnitude));
}

/// E8M0 code → f32: 2^(code - 127); 0x00 is 2^-127 (an f32 subnormal) and
/// 0xFF is NaN. There is no zero.
inline float decodeE8M0(uint8_t code) {
  if (code == 0xFF)
    return std::numeric_limits<float>::quiet_NaN();
  return bitsToFloat(code == 0 ? 0x00400000u : uint32_t(code) << 23);
}

/// f32 → E8M0 rounding up (towards +Inf in the exponent, like
/// `cvt.rp.satfinite.ue8m0x2.f32`): the code of 2^ceil(log2 |x|), clamped to
/// [2^-127, 2^127]. Zero → 0x00 (the smallest scale, there is no zero);
/// NaN and ±Inf → 0xFF. The sign is ignored (E8M0 is unsigned).
uint8_t encodeE8M0RoundUp(float x);

/// Multiplier 2^-(code - 127) = 1 / decodeE8M0(code) that scales a block into
/// the element range ([MX1]); exact for every finite code. 0xFF → NaN.
inline float inverseE8M0(uint8_t code) {
  if (code == 0xFF)
    return std::numeric_limits<float>::quiet_NaN();
  return bitsToFloat(code == 254 ? 0x00400000u : uint32_t(254 - code) << 23);
}

} // namespace fp4train::numerics

#endif // FP4TRAIN_NUMERICS_FORMATS_H
