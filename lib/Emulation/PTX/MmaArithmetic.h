//===- MmaArithmetic.h - Exact dot products of the PTX MMA models -*- C++ -*-===//
//
// What the mma.sync models share: decoding the element and scale codes of
// the PTX ISA's formats (§5.2.3 "Alternate Floating-Point Data Formats")
// and the dot product C + Σ_k Π_f factor[k][f] computed exactly and
// rounded once to f32 (nearest even, subnormals kept), with IEEE NaN/Inf
// rules. That single rounding is the models' assumption: the ISA does not
// specify the internal precision of the tensor cores' sums. Internal to
// lib/Emulation/PTX.
//
//===----------------------------------------------------------------------===//

#ifndef FP4TRAIN_LIB_EMULATION_PTX_MMAARITHMETIC_H
#define FP4TRAIN_LIB_EMULATION_PTX_MMAARITHMETIC_H

#include "fp4train/Emulation/PTX.h"

#include "llvm/ADT/STLFunctionalExtras.h"

#include <array>
#include <cstdint>

namespace fp4train::emulation::ptx::detail {

/// A decoded operand or scale: value = significand · 2^exponent (significand
/// unsigned, sign separate), or a special.
struct Value {
  uint32_t significand = 0;
  int exponent = 0;
  bool negative = false;
  bool nan = false;
  bool inf = false;
};

/// A small floating-point format of the ISA.
struct Format {
  unsigned exponentBits, mantissaBits;
  int bias;
  bool hasSign;
  bool ieeeSpecials; // all-ones exponent is Inf (mantissa 0) or NaN
  bool allOnesNan;   // the all-ones magnitude is NaN (E4M3, UE4M3)
};

Format getElementFormat(ElementType type);
Value decode(const Format &f, uint32_t code);

/// The f32 bits of C + Σ_{k < count} Π_{f < factorCount} factor(k)[f]:
/// `factors(k, out)` writes the factorCount factors of product k to out.
/// Exact, then one rounding to nearest even; any NaN, Inf·0 or +Inf + -Inf
/// gives NaN (0x7FFFFFFF), else an infinite product or C that Inf; an exact
/// zero sum is -0 only when C and every product are -0.
uint32_t sumOfProductsToF32(uint32_t cBits, unsigned count,
                            unsigned factorCount,
                            llvm::function_ref<void(unsigned k, Value *out)>
                                factors);

/// D of a warp's m16n8 MMA: lane L's register i is D[row][col] with row
/// g + 8 (i / 2), col 2 t + i % 2 (g = L / 4, t = L % 4; PTX ISA, C/D
/// fragments of mma.m16n8k*), computed as sumOfProductsToF32 of C's same
/// register and `count` products whose factors `factors(row, col, k, out)`
/// writes. `d` may alias `c`.
void computeD16x8(
    llvm::ArrayRef<std::array<uint32_t, 4>> c, unsigned count,
    unsigned factorCount,
    llvm::function_ref<void(unsigned row, unsigned col, unsigned k, Value *out)>
        factors,
    std::array<uint32_t, 4> *d);

} // namespace fp4train::emulation::ptx::detail

#endif // FP4TRAIN_LIB_EMULATION_PTX_MMAARITHMETIC_H
