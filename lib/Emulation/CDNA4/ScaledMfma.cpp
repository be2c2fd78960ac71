//===- ScaledMfma.cpp - v_mfma_scale_f32_*_f8f6f4 model -------------------===//
//
// Sources: AMD's CDNA4 ISA guide (the dense f8f6f4 MFMA operand layouts and
// the V_MFMA_SCALE_F32_{32X32X64,16X16X128}_F8F6F4 description), the LLVM
// AMDGPU intrinsic llvm.amdgcn.mfma.scale.f32.*.f8f6f4 (operands: A, B, C,
// cbsz, blgp, opsel_a, scale_a, opsel_b, scale_b), and AMD's description of
// the per-lane scale operand (one E8M0 byte per lane, picked from the scale
// VGPR by OP_SEL). The model:
//
//  - Formats (CBSZ for A, BLGP for B): 0 FP8 E4M3 (OCP: bias 7, no Inf,
//    S.1111.111 NaN), 1 BF8 E5M2 (bias 15, IEEE Inf/NaN), 2 FP6 E2M3
//    (bias 1), 3 BF6 E3M2 (bias 3), 4 FP4 E2M1 (bias 1). A lane's 32 K
//    elements are packed from bit 0 of its first VGPR upward, element i at
//    bits [w·i, w·i + w) of the concatenated registers (w = 8, 6 or 4).
//  - 32x32x64: lane L holds row L % 32 of A (column L % 32 of B), K elements
//    [32·(L / 32), +32); D value v of lane L is D[8·(v / 4) + 4·(L / 32) +
//    v % 4][L % 32].
//    16x16x128: lane L holds row L % 16 (column L % 16), K elements
//    [32·(L / 16), +32); D value v of lane L is D[4·(L / 16) + v][L % 16].
//  - Scales: the lane's E8M0 scale (byte OP_SEL of its scale VGPR) scales the
//    32 K elements that lane holds, i.e. one MX block per lane: 2^(e - 127),
//    e = 0xFF is NaN.
//  - Arithmetic: D = C + Σ_k (sA·a[i,k])·(sB·b[k,j]) is computed exactly and
//    rounded once to f32, nearest even, subnormals kept (the ISA specifies no
//    intermediate rounding inside the dot product; this is the model's
//    assumption, and the emulation tests compare against [GEMM1] within the
//    f32 reassociation bound of the kernel's order, or exactly when every
//    partial sum is representable). NaN/Inf inputs follow IEEE rules: any NaN
//    (element, scale or C) or Inf·0 or Inf - Inf gives NaN, else an Inf
//    product or C gives that Inf. An exactly zero result is +0 unless C is
//    -0 and every product is zero.
//
// Written from those descriptions, independently of fp4train's lowering.
//
//===----------------------------------------------------------------------===//

#include "fp4train/Emulation/CDNA4.h"

#include "llvm/ADT/APInt.h"

#include <cmath>
#include <cstring>
#include <optional>
#include <vector>

using namespace fp4train::emulation::cdna4;
using llvm::APInt;

namespace {

/// A decoded element: value = significand · 2^exponent, or a special.
struct Element {
  int64_t significand = 0; // signed
  int exponent = 0;
  bool nan = false;
  bool inf = false;
};

struct ElementFormat {
  unsigned bits, mantissaBits;
  int bias;
  bool ieeeSpecials; // E5M2: exponent all ones is Inf/NaN
  bool e4m3Nan;      // E4M3: S.1111.111 is NaN
};

std::optional<ElementFormat> getElementFormat(unsigned code) {
  switch (code) {
  case 0:
    return ElementFormat{8, 3, 7, false, true};
  case 1:
    return ElementFormat{8, 2, 15, true, false};
  case 2:
    return ElementFormat{6, 3, 1, false, false};
  case 3:
    return ElementFormat{6, 2, 3, false, false};
  case 4:
    return ElementFormat{4, 1, 1, false, false};
  default:
    return std::nullopt;
  }
}

/// Lowest exponent of any element of the format (of its smallest subnormal).
int getMinExponent(const ElementFormat &f) {
  return 1 - f.bias - static_cast<int>(f.mantissaBits);
}

Element decode(const ElementFormat &f, uint32_t code) {
  const unsigned exponentBits = f.bits - 1 - f.mantissaBits;
  const uint32_t sign = (code >> (f.bits - 1)) & 1;
  const uint32_t exponentField =
      (code >> f.mantissaBits) & ((1u << exponentBits) - 1);
  const uint32_t mantissa = code & ((1u << f.mantissaBits) - 1);
  Element e;
  if (f.ieeeSpecials && exponentField == (1u << exponentBits) - 1) {
    (mantissa ? e.nan : e.inf) = true;
    e.significand = sign ? -1 : 1;
    return e;
  }
  if (f.e4m3Nan && exponentField == 0xF && mantissa == 0x7) {
    e.nan = true;
    return e;
  }
  int64_t significand = mantissa;
  int exponent = 1 - f.bias - static_cast<int>(f.mantissaBits);
  if (exponentField != 0) {
    significand |= int64_t{1} << f.mantissaBits;
    exponent = static_cast<int>(exponentField) - f.bias -
               static_cast<int>(f.mantissaBits);
  }
  e.significand = sign ? -significand : significand;
  e.exponent = exponent;
  return e;
}

/// Element `index` (0..31) of a lane's packed operand registers.
uint32_t extractElement(const MatrixRegs &regs, unsigned bits, unsigned index) {
  const unsigned bit = bits * index;
  uint64_t window = regs[bit / 32];
  if (bit / 32 + 1 < regs.size())
    window |= uint64_t{regs[bit / 32 + 1]} << 32;
  return static_cast<uint32_t>(window >> (bit % 32)) & ((1u << bits) - 1);
}

/// Exact fixed-point accumulator: value = acc · 2^kLsbExponent. Products
/// reach 2^-286 (E5M2 subnormals times the smallest scales) and 2^292; f32
/// accumulators lie in [2^-149, 2^128).
constexpr int kLsbExponent = -320;
constexpr unsigned kAccumulatorBits = 704;

void addScaled(APInt &acc, const APInt &value, int exponent) {
  APInt wide = value.sext(kAccumulatorBits);
  acc += wide.shl(static_cast<unsigned>(exponent - kLsbExponent));
}

/// Rounds acc · 2^kLsbExponent to f32, nearest even.
uint32_t roundToF32(const APInt &acc, bool negativeZero) {
  if (acc.isZero())
    return negativeZero ? 0x80000000u : 0u;
  const bool negative = acc.isNegative();
  APInt magnitude = negative ? -acc : acc;
  const uint32_t sign = negative ? 0x80000000u : 0u;
  const int top = static_cast<int>(magnitude.getActiveBits()) - 1;
  const int exponent = top + kLsbExponent;
  if (exponent > 127)
    return sign | 0x7F800000u;
  // Position (in accumulator bits) of the f32 result's last kept bit.
  const int lsb = exponent >= -126 ? top - 23 : -149 - kLsbExponent;
  uint64_t kept;
  if (lsb <= 0) {
    kept = magnitude.getZExtValue() << -lsb;
  } else {
    kept = magnitude.lshr(lsb).getZExtValue();
    const bool half = magnitude[lsb - 1];
    APInt below = magnitude;
    below.clearBits(lsb - 1, kAccumulatorBits);
    if (half && (!below.isZero() || (kept & 1)))
      ++kept;
  }
  int resultLsb = lsb + kLsbExponent; // exponent of kept's bit 0
  if (kept >> 24) {
    kept >>= 1;
    ++resultLsb;
  }
  if (kept < (1u << 23)) // subnormal (resultLsb == -149)
    return sign | static_cast<uint32_t>(kept);
  const int biased = resultLsb + 23 + 127;
  if (biased >= 255)
    return sign | 0x7F800000u;
  return sign | static_cast<uint32_t>(biased) << 23 |
         (static_cast<uint32_t>(kept) & 0x7FFFFF);
}

} // namespace

unsigned
fp4train::emulation::cdna4::getAccumulatorsPerLane(ScaledMfmaShape shape) {
  return shape == ScaledMfmaShape::M32N32K64 ? 16 : 4;
}

std::string fp4train::emulation::cdna4::scaledMfma(
    ScaledMfmaShape shape, unsigned cbsz, unsigned blgp, unsigned opselA,
    unsigned opselB, llvm::ArrayRef<MatrixRegs> a, llvm::ArrayRef<MatrixRegs> b,
    llvm::ArrayRef<uint32_t> scaleA, llvm::ArrayRef<uint32_t> scaleB,
    llvm::ArrayRef<uint32_t> c, uint32_t *d) {
  std::optional<ElementFormat> formatA = getElementFormat(cbsz);
  std::optional<ElementFormat> formatB = getElementFormat(blgp);
  if (!formatA || !formatB)
    return "format code (cbsz " + std::to_string(cbsz) + ", blgp " +
           std::to_string(blgp) + ") is not one of 0..4";
  if (opselA > 3 || opselB > 3)
    return "scale byte select must be 0..3";

  const bool big = shape == ScaledMfmaShape::M32N32K64;
  const unsigned rows = big ? 32 : 16;      // M = N
  const unsigned groups = kWaveSize / rows; // K groups of 32 elements
  const unsigned accumulators = getAccumulatorsPerLane(shape);
  const int productLsb = getMinExponent(*formatA) + getMinExponent(*formatB);

  // Decoded operands: [row][k] for A, [column][k] for B; scales per
  // (row, group).
  auto decodeOperand = [&](llvm::ArrayRef<MatrixRegs> regs,
                           const ElementFormat &format,
                           llvm::ArrayRef<uint32_t> scales, unsigned opsel,
                           std::vector<Element> &elements,
                           std::vector<uint32_t> &scaleCodes) {
    elements.assign(rows * 32 * groups, Element());
    scaleCodes.assign(rows * groups, 0);
    for (unsigned lane = 0; lane < kWaveSize; ++lane) {
      const unsigned row = lane % rows, group = lane / rows;
      for (unsigned i = 0; i < 32; ++i)
        elements[(row * groups + group) * 32 + i] =
            decode(format, extractElement(regs[lane], format.bits, i));
      scaleCodes[row * groups + group] = (scales[lane] >> (8 * opsel)) & 0xFF;
    }
  };
  std::vector<Element> elementsA, elementsB;
  std::vector<uint32_t> scalesA, scalesB;
  decodeOperand(a, *formatA, scaleA, opselA, elementsA, scalesA);
  decodeOperand(b, *formatB, scaleB, opselB, elementsB, scalesB);

  // Output (i, j) lives in lane / value slot:
  auto slotOf = [&](unsigned i, unsigned j) {
    if (big) {
      const unsigned lane = j + 32 * ((i / 4) % 2);
      const unsigned value = 4 * (i / 8) + i % 4;
      return lane * accumulators + value;
    }
    const unsigned lane = j + 16 * (i / 4);
    return lane * accumulators + i % 4;
  };

  std::vector<uint32_t> result(kWaveSize * accumulators);
  for (unsigned i = 0; i < rows; ++i) {
    for (unsigned j = 0; j < rows; ++j) {
      const unsigned slot = slotOf(i, j);
      uint32_t cBits = c[slot];
      float cValue;
      std::memcpy(&cValue, &cBits, 4);
      bool nan = std::isnan(cValue), posInf = false, negInf = false;
      if (std::isinf(cValue))
        (cValue > 0 ? posInf : negInf) = true;
      APInt acc(kAccumulatorBits, 0);
      bool anyNonzeroProduct = false;
      for (unsigned g = 0; g < groups; ++g) {
        const uint32_t sa = scalesA[i * groups + g],
                       sb = scalesB[j * groups + g];
        if (sa == 0xFF || sb == 0xFF)
          nan = true;
        __int128 blockSum = 0;
        for (unsigned k = 0; k < 32; ++k) {
          const Element &x = elementsA[(i * groups + g) * 32 + k];
          const Element &y = elementsB[(j * groups + g) * 32 + k];
          if (x.nan || y.nan) {
            nan = true;
            continue;
          }
          if (x.inf || y.inf) {
            const bool zero = (!x.inf && x.significand == 0) ||
                              (!y.inf && y.significand == 0);
            if (zero)
              nan = true;
            else
              ((x.significand < 0) != (y.significand < 0) ? negInf : posInf) =
                  true;
            continue;
          }
          // A multiplication by the power of two, not a left shift: the
          // significand product is negative for half of the pairs, and
          // shifting a negative value left is undefined behaviour.
          const __int128 product =
              static_cast<__int128>(x.significand * y.significand) *
              (static_cast<__int128>(1)
               << (x.exponent + y.exponent - productLsb));
          blockSum += product;
          anyNonzeroProduct |= product != 0;
        }
        if (blockSum == 0)
          continue;
        const bool negative = blockSum < 0;
        unsigned __int128 magnitude =
            negative ? -static_cast<unsigned __int128>(blockSum)
                     : static_cast<unsigned __int128>(blockSum);
        const uint64_t words[2] = {static_cast<uint64_t>(magnitude),
                                   static_cast<uint64_t>(magnitude >> 64)};
        APInt term(130, words);
        if (negative)
          term.negate();
        addScaled(acc, term,
                  productLsb + static_cast<int>(sa) - 127 +
                      static_cast<int>(sb) - 127);
      }
      if (nan || (posInf && negInf)) {
        result[slot] = 0x7FC00000u;
        continue;
      }
      if (posInf || negInf) {
        result[slot] = posInf ? 0x7F800000u : 0xFF800000u;
        continue;
      }
      // C = sign · m · 2^(e - 150), m the 24-bit significand.
      const uint32_t cExponent = (cBits >> 23) & 0xFF;
      const uint64_t cSignificand =
          (cBits & 0x7FFFFF) | (cExponent ? 0x800000u : 0u);
      if (cSignificand) {
        APInt cTerm(64, cSignificand);
        if (cBits >> 31)
          cTerm.negate();
        addScaled(acc, cTerm,
                  (cExponent ? static_cast<int>(cExponent) : 1) - 150);
      }
      const bool negativeZero = (cBits == 0x80000000u) && !anyNonzeroProduct;
      result[slot] = roundToF32(acc, negativeZero);
    }
  }
  std::memcpy(d, result.data(), result.size() * 4);
  return {};
}
