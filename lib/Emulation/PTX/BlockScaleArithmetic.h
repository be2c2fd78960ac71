//===- BlockScaleArithmetic.h - Exact NVIDIA MMA dot products -*- C++ -*-===//
//
// Private to lib/Emulation/PTX: the arithmetic that the NVIDIA MMA models
// share, so that the block-scaled mma.sync model (MmaBlockScale.cpp), the
// FP8 mma.sync model (MmaSyncFP8.cpp, unit scales) and the tcgen05.mma
// model (Tcgen05Mma.cpp) decode operands and round results the same way.
// Decoding follows PTX ISA §5.2.3 "Alternate Floating-Point Data Formats"
// (e4m3: no Inf, 0x7f/0xff NaN; e5m2 IEEE-like; e2m1/e2m3/e3m2: no Inf/NaN;
// ue8m0: 0xff NaN; ue4m3: 7 bits, bias 7, 0x7f NaN, the byte's MSB padding).
//
// The ISA does not specify the internal precision of the dot product. The
// models compute D = C + Σ_k (sA·a)(sB·b) exactly (a 704-bit fixed point
// accumulator) and round once to f32, nearest even, subnormals kept: that
// single rounding is the documented assumption (docs/emulation.md). NaN/Inf
// follow IEEE: any NaN (element, scale or C), Inf·0 or +Inf + -Inf gives NaN
// (0x7FFFFFFF), else an infinite product or C gives that Inf. An exact zero
// sum is -0 only when C and every product are -0.
//
//===----------------------------------------------------------------------===//

#ifndef FP4TRAIN_LIB_EMULATION_PTX_BLOCKSCALEARITHMETIC_H
#define FP4TRAIN_LIB_EMULATION_PTX_BLOCKSCALEARITHMETIC_H

#include "fp4train/Emulation/PTX.h"

#include "llvm/ADT/APInt.h"
#include "llvm/ADT/ArrayRef.h"
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

/// Decodes an element code of `type` (its low bits: 4 for E2M1, 6 for
/// E2M3/E3M2, 8 for E4M3/E5M2).
Value decodeElement(ElementType type, uint32_t code);
/// Decodes a scale byte.
Value decodeScale(ScaleFormat format, uint32_t byte);
/// The element code in an 8-bit kind::mxf8f6f4 container: E2M1 in bits
/// 5..2, E2M3/E3M2 in bits 5..0, FP8 the whole byte (the padding ignored).
uint32_t unpadContainer(uint32_t byte, ElementType type);

/// C + Σ products, exact, rounded once to f32 by round().
class ExactAccumulator {
public:
  /// Starts from the f32 accumulator `cBits`.
  explicit ExactAccumulator(uint32_t cBits);
  /// Adds the product of four factors (scale A, element A, scale B, element
  /// B), negated if `negate`.
  void addProduct(const Value (&factors)[4], bool negate = false);
  /// The f32 bits of the sum.
  uint32_t round() const;

private:
  llvm::APInt acc;
  bool nan = false, posInf = false, negInf = false, allNegativeZero;
};

/// The scale factor 1 of the MMAs without block scaling.
inline constexpr Value kUnitScale{/*significand=*/1, /*exponent=*/0};

/// D of a warp's m16n8 mma.sync: lane L's register i is D[row][col] with
/// row g + 8 (i / 2), col 2 t + i % 2 (g = L / 4, t = L % 4; PTX ISA, C/D
/// fragments of mma.m16n8k*), the ExactAccumulator sum of C's same register
/// and `count` products whose four factors (scale A, element A, scale B,
/// element B) `factors(row, col, k, out)` writes. `d` may alias `c`.
void computeD16x8(llvm::ArrayRef<std::array<uint32_t, 4>> c, unsigned count,
                  llvm::function_ref<void(unsigned row, unsigned col,
                                          unsigned k, Value (&out)[4])>
                      factors,
                  std::array<uint32_t, 4> *d);

} // namespace fp4train::emulation::ptx::detail

#endif // FP4TRAIN_LIB_EMULATION_PTX_BLOCKSCALEARITHMETIC_H
