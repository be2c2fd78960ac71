//===- MmaBlockScale.cpp - mma.sync ... .block_scale model ----------------===//
//
// Sources: PTX ISA (docs.nvidia.com/cuda/parallel-thread-execution, PTX 8.7
// to 9.x):
//  - §9.7.14.5.14 "mma": syntax and operand types of the block-scaled forms
//    (scale-a-data/scale-b-data .b32, the u16 selectors), "When .kind is
//    .kind::mxf8f6f4 ... e2m1 resides in central 4 bits of the 8-bit
//    container ... .e3m2 or .e2m3 ... in the lower 6 bits"; kind::mxf4 and
//    kind::mxf4nvf4 pack E2M1 without padding.
//  - §9.7.14.3 "Block Scaling for mma.sync": D = (A * scale_A)(B * scale_B)
//    + C, Table 35 (scale matrix shapes M x {1,2,4}), Table 36 (valid kind,
//    stype and scale_vec), the thread-id rule (A: thread-id-a 0 picks the
//    lanes with %laneid % 4 in {0,1}, 1 picks {2,3}; B: %laneid % 4 ==
//    thread-id-b), the byte-id rule (1X: one byte; 2X: byte pair 0-1 or 2-3;
//    4X: all four bytes, byte-id 0) and Table 37 (valid selector values).
//  - §9.7.14.5.x "Matrix Fragments for mma.m16n8k64 / mma.m16n8k32": the A,
//    B, C/D fragment formulas (groupID = %laneid >> 2, threadID_in_group =
//    %laneid % 4), elements numbered low to high within each register.
//  - §5.2.3 "Alternate Floating-Point Data Formats": e4m3 (no Inf, 0x7f/0xff
//    NaN), e5m2, e2m1/e2m3/e3m2 (no Inf/NaN), ue8m0 (0xff NaN), ue4m3 (7 bits,
//    bias 7, 0x7f NaN, MSB of the byte padded with zero).
//
// Two facts are only in the ISA's figures (43 and 45), which the model takes
// from NVIDIA CUTLASS's SM120 SFALayout / scale-register packing (and which a
// published hardware probe of the 1X form agrees with): in the selected A
// thread pair the lower lane holds row g and the upper one row g + 8, so row m
// comes from lane 4(m % 8) + 2·thread-id-a + m / 8; and K block j of a 2X/4X
// scale is byte byte-id + j.
//
// Arithmetic: the ISA does not specify the internal precision of the dot
// product. The model computes C + Σ_k (sA·a)(sB·b) exactly (a 704-bit fixed
// point accumulator) and rounds once to f32, nearest even, subnormals kept;
// that single rounding is an assumption. NaN/Inf follow IEEE: any NaN
// (element, scale or C), Inf·0 or +Inf + -Inf gives NaN (0x7FFFFFFF), else an
// infinite product or C gives that Inf. An exact zero sum is -0 only when C
// and every product are -0. The bit 7 of a UE4M3 scale byte and the padding
// bits of mxf8f6f4 containers are ignored.
//
//===----------------------------------------------------------------------===//

#include "fp4train/Emulation/PTX.h"

#include "llvm/ADT/APInt.h"

#include <vector>

using namespace fp4train::emulation::ptx;
using llvm::APInt;

namespace {

/// A decoded operand or scale: value = significand · 2^exponent (significand
/// unsigned, sign separate), or a special.
struct Value {
  uint32_t significand = 0;
  int exponent = 0;
  bool negative = false;
  bool nan = false;
  bool inf = false;
};

struct Format {
  unsigned exponentBits, mantissaBits;
  int bias;
  bool hasSign;
  bool ieeeSpecials; // all-ones exponent is Inf (mantissa 0) or NaN
  bool allOnesNan;   // the all-ones magnitude is NaN (E4M3, UE4M3)
};

Format getElementFormat(ElementType type) {
  switch (type) {
  case ElementType::E2M1:
    return {2, 1, 1, true, false, false};
  case ElementType::E2M3:
    return {2, 3, 1, true, false, false};
  case ElementType::E3M2:
    return {3, 2, 3, true, false, false};
  case ElementType::E4M3:
    return {4, 3, 7, true, false, true};
  case ElementType::E5M2:
    return {5, 2, 15, true, true, false};
  }
  return {2, 1, 1, true, false, false};
}

Value decode(const Format &f, uint32_t code) {
  const uint32_t mantissaMask = (1u << f.mantissaBits) - 1;
  const uint32_t exponentMask = (1u << f.exponentBits) - 1;
  const uint32_t mantissa = code & mantissaMask;
  const uint32_t exponentField = (code >> f.mantissaBits) & exponentMask;
  Value v;
  v.negative =
      f.hasSign && ((code >> (f.exponentBits + f.mantissaBits)) & 1) != 0;
  if (f.ieeeSpecials && exponentField == exponentMask) {
    (mantissa ? v.nan : v.inf) = true;
    return v;
  }
  if (f.allOnesNan && exponentField == exponentMask && mantissa == mantissaMask) {
    v.nan = true;
    return v;
  }
  const int mantissaBits = static_cast<int>(f.mantissaBits);
  if (exponentField == 0) {
    v.significand = mantissa;
    v.exponent = 1 - f.bias - mantissaBits;
  } else {
    v.significand = mantissa | (1u << f.mantissaBits);
    v.exponent = static_cast<int>(exponentField) - f.bias - mantissaBits;
  }
  return v;
}

Value decodeScale(ScaleFormat format, uint32_t byte) {
  if (format == ScaleFormat::UE8M0) {
    Value v;
    if (byte == 0xFF)
      v.nan = true;
    else {
      v.significand = 1;
      v.exponent = static_cast<int>(byte) - 127;
    }
    return v;
  }
  // UE4M3: 7 bits, the byte's MSB is padding.
  return decode(Format{4, 3, 7, false, false, true}, byte & 0x7F);
}

/// The element code of slot `slot` of a register: a nibble for the packed
/// E2M1 of kind::mxf4/mxf4nvf4, else a byte container (mxf8f6f4).
uint32_t extract(uint32_t reg, unsigned slot, bool packedFp4, ElementType type) {
  if (packedFp4)
    return (reg >> (4 * slot)) & 0xF;
  const uint32_t byte = (reg >> (8 * slot)) & 0xFF;
  switch (type) {
  case ElementType::E2M1:
    return (byte >> 2) & 0xF;
  case ElementType::E2M3:
  case ElementType::E3M2:
    return byte & 0x3F;
  default:
    return byte;
  }
}

/// Exact accumulator: value = acc · 2^kLsb. Products of the extreme formats
/// reach 2^-286 (E5M2 subnormals times 2^-127 scales) and below 2^293; f32 C
/// lies in [2^-149, 2^128); 65 terms add 7 bits.
constexpr int kLsb = -320;
constexpr unsigned kBits = 704;

void accumulate(APInt &acc, uint64_t significand, int exponent, bool negative) {
  APInt term(kBits, significand);
  term <<= static_cast<unsigned>(exponent - kLsb);
  if (negative)
    acc -= term;
  else
    acc += term;
}

/// Rounds acc · 2^kLsb to f32, nearest even, with subnormals.
uint32_t roundToF32(const APInt &acc) {
  const bool negative = acc.isNegative();
  const APInt magnitude = negative ? -acc : acc;
  const uint32_t sign = negative ? 0x80000000u : 0u;
  const int top = static_cast<int>(magnitude.getActiveBits()) - 1;
  // Accumulator bit of the result's last kept bit: 24 significant bits, but
  // never below 2^-149.
  const int shift = std::max(top - 23, -149 - kLsb);
  if (top + kLsb > 127)
    return sign | 0x7F800000u;
  uint64_t kept = magnitude.lshr(shift).getZExtValue();
  const bool half = magnitude[shift - 1];
  const bool sticky = magnitude.countr_zero() < static_cast<unsigned>(shift - 1);
  int lsbExponent = shift + kLsb;
  if (half && (sticky || (kept & 1)))
    ++kept;
  if (kept >> 24) {
    kept >>= 1;
    ++lsbExponent;
  }
  if (kept < (1u << 23)) // subnormal, lsbExponent == -149
    return sign | static_cast<uint32_t>(kept);
  const int biased = lsbExponent + 23 + 127;
  if (biased >= 255)
    return sign | 0x7F800000u;
  return sign | static_cast<uint32_t>(biased) << 23 |
         (static_cast<uint32_t>(kept) & 0x7FFFFFu);
}

std::string validate(const MmaBlockScaleConfig &config, unsigned byteIdA,
                     unsigned threadIdA, unsigned byteIdB, unsigned threadIdB) {
  // Table 36.
  switch (config.kind) {
  case BlockScaleKind::MXF8F6F4:
    if (config.scaleVec != ScaleVec::X1 || config.scaleFormat != ScaleFormat::UE8M0)
      return "kind::mxf8f6f4 requires scale_vec::1X with ue8m0 scales";
    break;
  case BlockScaleKind::MXF4:
    if (config.scaleVec != ScaleVec::X2 || config.scaleFormat != ScaleFormat::UE8M0)
      return "kind::mxf4 requires scale_vec::2X with ue8m0 scales";
    break;
  case BlockScaleKind::MXF4NVF4:
    if (config.scaleVec == ScaleVec::X1)
      return "kind::mxf4nvf4 requires scale_vec::2X or scale_vec::4X";
    if (config.scaleVec == ScaleVec::X2 && config.scaleFormat != ScaleFormat::UE8M0)
      return "kind::mxf4nvf4 with scale_vec::2X requires ue8m0 scales";
    break;
  }
  if (config.kind != BlockScaleKind::MXF8F6F4 &&
      (config.typeA != ElementType::E2M1 || config.typeB != ElementType::E2M1))
    return "kind::mxf4 and kind::mxf4nvf4 take e2m1 operands only";
  // Table 37.
  auto badByteId = [&](unsigned id) {
    switch (config.scaleVec) {
    case ScaleVec::X1:
      return id > 3;
    case ScaleVec::X2:
      return id != 0 && id != 2;
    case ScaleVec::X4:
      return id != 0;
    }
    return true;
  };
  if (badByteId(byteIdA) || badByteId(byteIdB))
    return "byte-id " + std::to_string(badByteId(byteIdA) ? byteIdA : byteIdB) +
           " is not valid for scale_vec::" +
           std::to_string(static_cast<unsigned>(config.scaleVec)) + "X";
  if (threadIdA > 1)
    return "thread-id-a " + std::to_string(threadIdA) + " is not 0 or 1";
  if (threadIdB > 3)
    return "thread-id-b " + std::to_string(threadIdB) + " is not in 0..3";
  return {};
}

} // namespace

unsigned fp4train::emulation::ptx::getMmaBlockScaleK(BlockScaleKind kind) {
  return kind == BlockScaleKind::MXF8F6F4 ? 32 : 64;
}

std::string fp4train::emulation::ptx::mmaBlockScale(
    const MmaBlockScaleConfig &config, llvm::ArrayRef<std::array<uint32_t, 4>> a,
    llvm::ArrayRef<std::array<uint32_t, 2>> b,
    llvm::ArrayRef<std::array<uint32_t, 4>> c, llvm::ArrayRef<uint32_t> scaleA,
    unsigned byteIdA, unsigned threadIdA, llvm::ArrayRef<uint32_t> scaleB,
    unsigned byteIdB, unsigned threadIdB, std::array<uint32_t, 4> *d) {
  if (std::string error =
          validate(config, byteIdA, threadIdA, byteIdB, threadIdB);
      !error.empty())
    return error;
  if (a.size() != kWarpSize || b.size() != kWarpSize || c.size() != kWarpSize ||
      scaleA.size() != kWarpSize || scaleB.size() != kWarpSize)
    return "every operand needs the registers of all 32 lanes";

  constexpr unsigned M = 16, N = 8;
  const unsigned K = getMmaBlockScaleK(config.kind);
  const bool packedFp4 = K == 64;
  const unsigned perReg = packedFp4 ? 8 : 4; // elements per register
  const unsigned blocks = static_cast<unsigned>(config.scaleVec);
  const unsigned blockSize = K / blocks;
  const Format formatA = getElementFormat(config.typeA);
  const Format formatB = getElementFormat(config.typeB);

  // Gather the matrices from the fragments.
  std::vector<Value> matA(M * K), matB(K * N);
  for (unsigned lane = 0; lane < kWarpSize; ++lane) {
    const unsigned g = lane / 4, t = lane % 4;
    for (unsigned r = 0; r < 4; ++r)
      for (unsigned j = 0; j < perReg; ++j) {
        const unsigned row = g + 8 * (r % 2);
        const unsigned k = (K / 2) * (r / 2) + perReg * t + j;
        matA[row * K + k] =
            decode(formatA, extract(a[lane][r], j, packedFp4, config.typeA));
      }
    for (unsigned r = 0; r < 2; ++r)
      for (unsigned j = 0; j < perReg; ++j) {
        const unsigned k = (K / 2) * r + perReg * t + j;
        matB[k * N + g] =
            decode(formatB, extract(b[lane][r], j, packedFp4, config.typeB));
      }
  }
  // Scales per (row, block) and (column, block).
  std::vector<Value> sfA(M * blocks), sfB(N * blocks);
  for (unsigned row = 0; row < M; ++row) {
    const uint32_t reg = scaleA[4 * (row % 8) + 2 * threadIdA + row / 8];
    for (unsigned j = 0; j < blocks; ++j)
      sfA[row * blocks + j] =
          decodeScale(config.scaleFormat, (reg >> (8 * (byteIdA + j))) & 0xFF);
  }
  for (unsigned col = 0; col < N; ++col) {
    const uint32_t reg = scaleB[4 * col + threadIdB];
    for (unsigned j = 0; j < blocks; ++j)
      sfB[col * blocks + j] =
          decodeScale(config.scaleFormat, (reg >> (8 * (byteIdB + j))) & 0xFF);
  }

  std::array<uint32_t, 4> result[kWarpSize];
  for (unsigned lane = 0; lane < kWarpSize; ++lane) {
    const unsigned g = lane / 4, t = lane % 4;
    for (unsigned i = 0; i < 4; ++i) {
      const unsigned row = g + 8 * (i / 2), col = 2 * t + i % 2;
      const uint32_t cBits = c[lane][i];
      const uint32_t cExponent = (cBits >> 23) & 0xFF;
      const uint32_t cMantissa = cBits & 0x7FFFFF;
      const bool cNegative = (cBits >> 31) != 0;
      bool nan = cExponent == 0xFF && cMantissa != 0;
      bool posInf = cExponent == 0xFF && cMantissa == 0 && !cNegative;
      bool negInf = cExponent == 0xFF && cMantissa == 0 && cNegative;
      bool allNegativeZero = cBits == 0x80000000u;
      APInt acc(kBits, 0);
      if (cExponent != 0xFF && (cExponent != 0 || cMantissa != 0))
        accumulate(acc, cMantissa | (cExponent ? 0x800000u : 0u),
                   (cExponent ? static_cast<int>(cExponent) : 1) - 150, cNegative);
      for (unsigned k = 0; k < K; ++k) {
        const Value factors[4] = {sfA[row * blocks + k / blockSize],
                                  matA[row * K + k],
                                  sfB[col * blocks + k / blockSize],
                                  matB[k * N + col]};
        bool anyNan = false, anyInf = false, anyZero = false, negative = false;
        uint64_t significand = 1;
        int exponent = 0;
        for (const Value &f : factors) {
          anyNan |= f.nan;
          anyInf |= f.inf;
          anyZero |= !f.nan && !f.inf && f.significand == 0;
          negative ^= f.negative;
          significand *= f.significand;
          exponent += f.exponent;
        }
        if (anyNan || (anyInf && anyZero)) {
          nan = true;
          continue;
        }
        if (anyInf) {
          (negative ? negInf : posInf) = true;
          continue;
        }
        if (significand == 0) {
          allNegativeZero &= negative;
          continue;
        }
        allNegativeZero = false;
        accumulate(acc, significand, exponent, negative);
      }
      uint32_t out;
      if (nan || (posInf && negInf))
        out = 0x7FFFFFFFu;
      else if (posInf || negInf)
        out = posInf ? 0x7F800000u : 0xFF800000u;
      else if (acc.isZero())
        out = allNegativeZero ? 0x80000000u : 0u;
      else
        out = roundToF32(acc);
      result[lane][i] = out;
    }
  }
  for (unsigned lane = 0; lane < kWarpSize; ++lane)
    d[lane] = result[lane];
  return {};
}
