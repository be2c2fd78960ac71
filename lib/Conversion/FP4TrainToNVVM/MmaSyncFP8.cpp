//===- MmaSyncFP8.cpp - Block-scaled GEMM on sm_89/sm_90a tensor cores --===//
//
// Hopper and Ada have FP8 tensor cores but no block scaling and no FP4, so
// each K block of [GEMM1] is one plain MMA with C = 0, which gives the
// block's dot product P, and the lanes then add f32(sa·sb·P) to their f32
// accumulators, blocks in increasing K order:
//
//   T[i,j] = Σ_b f32(sa[i,b]·sb[j,b]·P[i,j,b])                     [GEMM1]
//
// 32-element blocks (MXFP4, MXFP8) take
// `mma.sync.aligned.m16n8k32.row.col.f32.<a>.<b>.f32`, NVFP4's 16-element
// blocks `mma.sync.aligned.m16n8k16.row.col.f32.e4m3.e4m3.f32` (PTX 8.7).
// Fragments (PTX ISA §9.7.14.5.x "Matrix Fragments for mma.m16n8k32" and
// "for mma.m16n8k16" with 8-bit types; g = lane >> 2, t = lane % 4, element
// j of a register in byte j):
//   k32: A register r = A[g + 8 (r % 2)][16 (r / 2) + 4 t + j],
//        B register r = B[16 r + 4 t + j][g];
//   k16: A register r = A[g + 8 r][4 t + j], B = B[4 t + j][g];
//   C/D register v = D[g + 8 (v / 2)][2 t + v % 2].
//
// Every operand is staged one 8-bit code per byte: FP8 (MXFP8) as it is,
// E2M1 widened to E4M3 as the skeleton stages it (getStagedElementType,
// convertStagedCodes: once per workgroup, not per warp reading a row; every
// E2M1 value is an E4M3 normal, 0.5 = 2^-1, or zero, so nothing depends on
// how the tensor core treats E4M3 subnormals). A lane loads its registers
// in that layout: for k32, A register r is the word at byte 32 s + 16 (r /
// 2) + 4 t of staged row g + 8 (r % 2) and B register r the word at 32 s +
// 16 r + 4 t of staged row g; for k16, A register r the word at 16 s + 4 t
// of row g + 8 r and B's at 16 s + 4 t of row g (s the block within the
// staged 128 elements).
//
// Scales: the accumulator row g + 8 h of instruction tile i needs A's scale
// row rowA + 16 i + g + 8 h, its column 2 t + c of tile j B^T's row rowB +
// 8 j + 2 t + c; each staged scale row is one aligned word (4 E8M0 codes of
// the step, loaded once per step) or two (8 UE4M3 codes, each loaded once
// before a loop over its 4 blocks).
// A UE4M3 pair (rows g and g + 8, or columns 2 t and 2 t + 1) is gathered
// by one prmt and decoded by one cvt.rn.f16x2.e4m3x2 (exact: every E4M3
// value is an f16; NaN stays NaN) and two cvt.f32.f16.
//
// Exactness. An E2M1 value is a multiple of 1/2 of magnitude <= 6, so a
// product is a multiple of 1/4 of magnitude <= 36 and every partial sum of
// a 32-element block is a multiple of 1/4 of magnitude <= 32·36 = 1152 <
// 2^11: 13 significant bits. Any accumulator keeping >= 13 significant bits
// relative to 2^-2 (the tensor core's f32 accumulation does) computes P
// exactly, in any order; NVFP4's 16-element blocks need 12. The scaling
// step then rounds sa·sb·P once, as the CPU numerics library does
// (roundScaledIntegerToFloat in BlockGemm.cpp), and adds it to T:
//  - UE4M3 (NVFP4): sa·sb has at most 8 significant bits and lies in
//    [2^-18, 448^2], so it is an exact f32 product; sa·sb·P has at most
//    8 + 12 bits and lies in [2^-20, 2^27], so the exact term is an f32 and
//    fma(P, sa·sb, T) = RN(term + T): one fma per accumulator (fused
//    scaling). A NaN scale (0x7F/0xFF) makes the term NaN, as the
//    library's IEEE evaluation of non-finite blocks does.
//  - E8M0 (MXFP4, MXFP8), fused: when ea and eb lie in a window of codes
//    (getFusedScaleWindow: 54..185, scales 2^-73..2^58, for E2M1), s =
//    2^(ea+eb-254) is an exact f32 product and P·s an exact f32, so again
//    T = fma(P, s, T). Each warp checks its step's scale words against the
//    window (a SWAR test per word, getBytesOutsideWindow) and takes this
//    loop when all its lanes pass (vote.sync.all: the branch stays uniform
//    and the MMAs converged).
//  - E8M0, exact (any other code): the term is P·2^(ea+eb) with ea, eb in
//    [-127, 127], which f32 cannot always hold as one factor. With
//    T = 127 - floor(log2(max|P|)) (117 for E2M1), the A row's scale is
//    split as 2^min(ea,T) · 2^max(ea-T,0) and the term computed as
//    ((P · 2^min(ea,T)) · 2^eb) · 2^max(ea-T,0), each factor an exact f32
//    (2^-127 is the subnormal 0x00400000), then added to T:
//      * P · 2^min(ea,T) is exact: it cannot overflow (|P| < 2^(127-T+1))
//        and keeps P's last bit (2^-2 for E2M1, 2^-18 for E4M3 pairs,
//        times >= 2^-127 stays >= 2^-149);
//      * if ea <= T the last factor is 1 and x · 2^eb is the one rounding;
//      * if ea > T, |x| >= min|P|·2^T, so x · 2^eb >= 2^-68 is normal and
//        exact (or overflows, as the exact term then does), and the last
//        product is the one rounding (or the overflow to Inf).
//    A NaN scale (0xFF) gives a NaN factor and term.
// MXFP8 block sums of E4M3/E5M2 products (up to 41 significant bits) are
// not exact in the MMA: the kernel's term is f32(sa·sb·P̃) with P̃ the
// MMA's sum, within the bound docs/nvvm.md states and the emulation checks
// (equal to [GEMM1] where P̃ = P). E5M2 pairs (last bit 2^-32) can also
// round twice when x is subnormal: part of the same bound.
//
// On sm_90a the same blocks run on wgmma (the sections at the end): one
// m64n128k32 per E8M0 block and warpgroup with the scaling above ([WG1]),
// B^T's scales folded into its staging where they allow ([WG2]), and NVFP4
// as m64n128k16 on f16 values that carry their scales ([WG3]).
//
//===----------------------------------------------------------------------===//

#include "BlackwellTargetInfo.h"
#include "LaneMath.h"
#include "SM90TargetInfo.h"
#include "TensorMaps.h"

#include "fp4train/Dialect/FP4Train/IR/FP4TrainOps.h"
#include "fp4train/Numerics/Formats.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

#include "llvm/ADT/APFloat.h"
#include "llvm/Support/MathExtras.h"

#include <array>
#include <cmath>
#include <optional>

using namespace mlir;
using namespace mlir::fp4train;

namespace {

/// i32 bit arithmetic for the widening and the scale decoding.
struct WordMath {
  OpBuilder &b;
  Location loc;
  Value c(uint32_t v) {
    return arith::ConstantIntOp::create(b, loc, b.getI32Type(),
                                        static_cast<int64_t>(v));
  }
  Value band(Value x, uint32_t m) {
    return arith::AndIOp::create(b, loc, x, c(m));
  }
  Value band(Value x, Value y) { return arith::AndIOp::create(b, loc, x, y); }
  Value bor(Value x, Value y) { return arith::OrIOp::create(b, loc, x, y); }
  Value add(Value x, uint32_t v) {
    return arith::AddIOp::create(b, loc, x, c(v));
  }
  Value bnot(Value x) {
    return arith::XOrIOp::create(b, loc, x, c(0xFFFFFFFF));
  }
  Value shl(Value x, uint32_t n) {
    return arith::ShLIOp::create(b, loc, x, c(n));
  }
  Value shr(Value x, uint32_t n) {
    return arith::ShRUIOp::create(b, loc, x, c(n));
  }
  Value eq(Value x, uint32_t v) {
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, x, c(v));
  }
  Value select(Value cond, uint32_t v, Value x) {
    return arith::SelectOp::create(b, loc, cond, c(v), x);
  }
  /// `bytes` selected by `selector` from {hi, lo} (prmt.b32 default mode).
  Value permute(Value lo, Value hi, Value selector) {
    return NVVM::PermuteOp::create(b, loc, b.getI32Type(), lo, hi, selector,
                                   NVVM::PermuteMode::DEFAULT);
  }
  Value permute(Value lo, Value hi, uint32_t selector) {
    return permute(lo, hi, c(selector));
  }
  Value toF32(Value bits) {
    return arith::BitcastOp::create(b, loc, b.getF32Type(), bits);
  }
  /// Byte `index` of `word`, zero-extended.
  Value byte(Value word, int64_t index) {
    return band(index ? shr(word, 8 * index) : word, 0xFF);
  }
};

/// One sign-magnitude byte per code of 8 packed E2M1 codes (code i in bits
/// [4i, 4i + 4)): codes 0..3 and 4..7, code i in byte i % 4. The magnitude
/// is a byte lookup (prmt with the 3-bit magnitude as index into the table
/// words `lut0`, `lut1`, magnitude i in byte i % 4 of word i / 4); the sign
/// (bit 3 of the code) is bit 7 of a byte of w << 4 (even codes) or w (odd
/// codes), which prmt's sign-replicate selectors (bit 3 of a selector
/// nibble) spread over the byte. The table holds the E4M3 bytes of the
/// E2M1 magnitudes (getE2M1Magnitudes: the values themselves, or for a
/// scale fold times 2^-d), or the high bytes of their f16 values
/// (getE2M1HalfHighBytes): every format with its sign in bit 7.
std::pair<Value, Value> widenE2M1Bytes(WordMath &wm, Value w, Value lut0,
                                       Value lut1) {
  Value shifted = wm.shl(w, 4);
  // prmt reads the low 16 bits of a selector: the magnitudes of codes 0..3
  // and, shifted down, of codes 4..7.
  Value magnitudes = wm.band(w, 0x77777777);
  auto widen = [&](Value selector, uint32_t signSelector) {
    Value magnitude = wm.permute(lut0, lut1, selector);
    Value signs = wm.permute(shifted, w, signSelector);
    return wm.bor(magnitude, wm.band(signs, 0x80808080));
  };
  // Sign of code i (bit 4i + 3): byte i / 2 of w << 4 for even i (selector
  // 8 | i / 2), byte 4 + i / 2 (of w) for odd i.
  return {widen(magnitudes, 0xD9C8), widen(wm.shr(magnitudes, 16), 0xFBEA)};
}

/// The E4M3 bytes of the 8 E2M1 magnitudes 0, 0.5, 1, 1.5, 2, 3, 4, 6
/// times 2^-d, as the two table words of widenE2M1Bytes (magnitude i in
/// byte i % 4 of word i / 4; d = 0: 0x3C383000, 0x4C484440), or none where
/// one of them is not an E4M3 value (d > 8: 0.5 · 2^-9 is below E4M3's
/// least subnormal 2^-9). The codes are the numerics library's
/// (encodeE4M3FN), checked to decode to the exact value.
std::optional<std::array<uint32_t, 2>> getE2M1Magnitudes(int d) {
  std::array<uint32_t, 2> words = {0, 0};
  for (uint8_t code = 0; code < 8; ++code) {
    const float value = std::ldexp(::fp4train::numerics::decodeE2M1(code), -d);
    const uint8_t e4m3 = ::fp4train::numerics::encodeE4M3FN(value);
    if (::fp4train::numerics::decodeE4M3FN(e4m3) != value)
      return std::nullopt;
    words[code / 4] |= uint32_t{e4m3} << (8 * (code % 4));
  }
  return words;
}

/// The largest magnitude of an element of `type`.
double getMaxElement(Type type) {
  if (isa<Float4E2M1FNType>(type))
    return 6.0;
  if (isa<Float8E4M3FNType>(type))
    return 448.0;
  return 57344.0;
}

/// The exponent of the smallest positive value of an element type.
int getMinExponent(Type type) {
  if (isa<Float4E2M1FNType>(type))
    return -1; // 0.5
  if (isa<Float8E4M3FNType>(type))
    return -9; // 2^-9, the smallest subnormal
  return -16;  // E5M2's 2^-16
}

/// The E8M0 codes [lo, hi] for which the fused scaling is exact: with ea,
/// eb in the window, s = 2^(ea+eb-254) satisfies
///  - s >= 2^(-149 - qa - qb), qa/qb the exponents of the operands' smallest
///    values: P is a multiple of 2^(qa+qb) (the MMA's sum too: rounding a
///    multiple of a power of two to a coarser grid keeps it one), so P·s is
///    a multiple of 2^-149: an exact f32 (s itself, >= 2^-149, is one);
///  - s <= 2^(T-1), T = 127 - floor(log2 max|P|): |P·s| < 2^128, so P·s
///    neither overflows nor rounds.
/// Then fma(P, s, T) = RN(P·s + T), the one rounding of [GEMM1]'s T + term.
/// The window is the same for both operands (2 lo - 254 and 2 hi - 254 are
/// the bounds), from 54..185 (E2M1 x E2M1: scales 2^-73..2^58) to 69..172
/// (E5M2 x E5M2).
std::pair<uint32_t, uint32_t> getFusedScaleWindow(Type a, Type b,
                                                  uint32_t splitT) {
  const int lowest = -149 - getMinExponent(a) - getMinExponent(b);
  const int highest = static_cast<int>(splitT) - 1;
  const auto lo = static_cast<uint32_t>((254 + lowest + 1) / 2);
  const auto hi = static_cast<uint32_t>((254 + highest) / 2);
  assert(lo >= 1 && lo <= 127 && hi >= 128 && hi <= 254 &&
         "getBytesOutsideWindow needs lo < 128 <= hi");
  return {lo, hi};
}

/// Bit 7 of each byte of the result is set when that byte of `word` lies
/// outside [lo, hi] (1 <= lo <= 127 < 128 <= hi <= 254; other bits are
/// noise): with l the low 7 bits of a byte, l + (128 - lo) sets bit 7 iff
/// l >= lo, which for a byte below 128 is byte >= lo; l + (255 - hi) sets
/// it iff l > hi - 128, which for a byte from 128 on is byte > hi. Neither
/// sum carries into the next byte.
Value getBytesOutsideWindow(WordMath &wm, Value word, uint32_t lo,
                            uint32_t hi) {
  Value low = wm.band(word, 0x7F7F7F7F);
  Value top = wm.band(word, 0x80808080);
  Value atLeastLo = wm.bor(wm.add(low, (128 - lo) * 0x01010101u), top);
  Value aboveHi = wm.band(wm.add(low, (255 - hi) * 0x01010101u), top);
  return wm.bor(wm.bnot(atLeastLo), aboveHi);
}

std::string getPtxTypeName(Type element) {
  return isa<Float8E5M2Type>(element) ? "e5m2" : "e4m3";
}

/// How a block's terms reach the accumulators:
///  - Fused: T = fma(P, sa·sb, T) with sa·sb an exact f32 and P·(sa·sb)
///    exact, so the fma rounds exactly once, as [GEMM1] does (UE4M3
///    always; E8M0 when every scale code of the warp's rows and columns
///    lies in the window of getFusedScaleWindow);
///  - Exact: E8M0 anywhere, ((P · 2^min(ea,T)) · 2^eb) · 2^max(ea-T,0),
///    then T += term (the file comment).
enum class Scaling { Fused, Exact };

/// [GEMM1]'s E8M0 block scaling of one K step on the ordinary cores (the
/// file comment): the split exponent T of the exact path, the fused
/// path's code window, and per block the factors of a row of A and a
/// column of C, and the accumulator update.
class E8M0Scaling {
public:
  E8M0Scaling(WordMath &wm, const StagedTiles &tiles) : wm(wm) {
    splitT = getSplitExponent(tiles);
    std::tie(windowLo, windowHi) = getFusedScaleWindow(
        tiles.getElementType(0), tiles.getElementType(1), splitT);
  }

  /// T = 127 - floor(log2 max|P|) of the exact path (the file comment).
  static uint32_t getSplitExponent(const StagedTiles &tiles) {
    double maxP = tiles.getBlockSize() *
                  getMaxElement(tiles.getElementType(0)) *
                  getMaxElement(tiles.getElementType(1));
    return 127 - llvm::Log2_64(static_cast<uint64_t>(maxP));
  }

  /// True on every lane when every code of the warp's scale `words` lies in
  /// the fused window (a warp-uniform vote: a branch on it stays uniform).
  Value isFusedForWarp(ArrayRef<Value> words) {
    Value outside = wm.c(0);
    for (Value word : words)
      outside =
          wm.bor(outside, getBytesOutsideWindow(wm, word, windowLo, windowHi));
    Value inWindow = wm.eq(wm.band(outside, 0x80808080), 0);
    return NVVM::VoteSyncOp::create(wm.b, wm.loc, wm.b.getI1Type(),
                                    wm.c(0xFFFFFFFF), inWindow,
                                    NVVM::VoteSyncKind::all);
  }

  /// Selects byte `block % 4` of the scale words from now on.
  void setBlock(Value blockInWord) {
    byteShift = arith::ShLIOp::create(wm.b, wm.loc, blockInWord, wm.c(3));
    // prmt selector of that byte into byte 3, zero bytes (the second
    // source, 0) below it: (block << 12) | 0x444.
    topSelector = wm.bor(wm.shl(blockInWord, 12), wm.c(0x444));
  }
  /// The code of the current block in a scale word.
  Value getCode(Value word) {
    return wm.band(arith::ShRUIOp::create(wm.b, wm.loc, word, byteShift), 0xFF);
  }
  /// 2^(min(code, cap) - 127) as f32 bits: code 0 is the subnormal
  /// 2^-127, code 0xFF NaN.
  Value getPower(Value code, uint32_t cap) {
    Value clamped = arith::MinUIOp::create(wm.b, wm.loc, code, wm.c(cap));
    Value bits = wm.select(wm.eq(clamped, 0), 0x00400000, wm.shl(clamped, 23));
    return wm.toF32(wm.select(wm.eq(code, 0xFF), 0x7FC00000, bits));
  }
  /// 2^(code - 127) for the current block's code in a word, where the
  /// code is in the fused window (a normal): the code moved to byte 3 by
  /// one prmt, then shifted down by 1 to bits 23..30, f32's exponent.
  Value getFusedFactor(Value word) {
    return wm.toF32(wm.shr(wm.permute(word, wm.c(0), topSelector), 1));
  }
  /// A C-column factor: 2^eb.
  Value getColumnFactor(Value word, Scaling scaling) {
    if (scaling == Scaling::Fused)
      return getFusedFactor(word);
    return getColumnFactorOfCode(getCode(word), scaling);
  }
  Value getColumnFactorOfCode(Value code, Scaling scaling) {
    // A code in the fused window is a normal 2^(code - 127).
    if (scaling == Scaling::Fused)
      return wm.toF32(wm.shl(code, 23));
    return getPower(code, 254);
  }
  /// An A-row factor: 2^ea (fused), or (2^min(ea,T), 2^max(ea-T,0)).
  std::pair<Value, Value> getRowFactors(Value word, Scaling scaling) {
    if (scaling == Scaling::Fused)
      return {getFusedFactor(word), Value()};
    Value code = getCode(word);
    Value hiExponent = arith::SubIOp::create(
        wm.b, wm.loc,
        arith::MaxUIOp::create(wm.b, wm.loc, code, wm.c(splitT + 127)),
        wm.c(splitT));
    return {getPower(code, splitT + 127), wm.toF32(wm.shl(hiExponent, 23))};
  }
  /// T + [GEMM1]'s term of the block product `p`, one rounding of the term.
  Value accumulate(Value p, std::pair<Value, Value> row, Value column,
                   Value acc, Scaling scaling) {
    OpBuilder &b = wm.b;
    Location loc = wm.loc;
    auto [first, last] = row;
    if (scaling == Scaling::Fused || !last) {
      // [GEMM1]: T += P · (sa · sb), one rounding (the fma's).
      Value scale = arith::MulFOp::create(b, loc, first, column);
      return LLVM::FMAOp::create(b, loc, p, scale, acc);
    }
    // ((P · 2^min(ea,T)) · 2^eb) · 2^max(ea-T,0): one rounding, then
    // [GEMM1]'s T += term.
    Value term = arith::MulFOp::create(
        b, loc,
        arith::MulFOp::create(b, loc, arith::MulFOp::create(b, loc, p, first),
                              column),
        last);
    return arith::AddFOp::create(b, loc, acc, term);
  }

private:
  WordMath &wm;
  uint32_t splitT, windowLo, windowHi;
  Value byteShift, topSelector;
};

} // namespace

Type MmaSyncFP8TargetInfo::getStagedElementType(Type element) const {
  // Every E2M1 value is an E4M3 normal (0.5 is 2^-1) or zero.
  if (isa<Float4E2M1FNType>(element))
    return Float8E4M3FNType::get(element.getContext());
  return element;
}

Value MmaSyncFP8TargetInfo::convertStagedCodes(OpBuilder &b, Location loc,
                                               Type element, Value chunk,
                                               ValueRange table) const {
  assert(isa<Float4E2M1FNType>(element) && "only E2M1 is widened");
  // Word w of the chunk holds codes 8w .. 8w + 7 ([PK1]); its two E4M3
  // words are words 2w and 2w + 1 of the staged bytes.
  WordMath wm{b, loc};
  const int64_t words = cast<VectorType>(chunk.getType()).getNumElements() / 4;
  Value packed = vector::BitCastOp::create(
      b, loc, VectorType::get({words}, b.getI32Type()), chunk);
  // [WG2] A folded chunk's table scales its values by 2^-d.
  assert((table.empty() || table.size() == 2) && "two table words");
  const std::array<uint32_t, 2> plain = *getE2M1Magnitudes(0);
  Value lut0 = table.empty() ? wm.c(plain[0]) : table[0];
  Value lut1 = table.empty() ? wm.c(plain[1]) : table[1];
  SmallVector<Value> widened;
  for (int64_t w = 0; w < words; ++w) {
    auto [low, high] = widenE2M1Bytes(
        wm, vector::ExtractOp::create(b, loc, packed, w), lut0, lut1);
    widened.append({low, high});
  }
  Value result = vector::FromElementsOp::create(
      b, loc, VectorType::get({2 * words}, b.getI32Type()), widened);
  return vector::BitCastOp::create(
      b, loc, VectorType::get({8 * words}, b.getI8Type()), result);
}

void MmaSyncFP8TargetInfo::buildStepMMAs(OpBuilder &b, Location loc,
                                         const StagedTiles &tiles, Value buffer,
                                         Value lane, Value rowA, Value rowB,
                                         MutableArrayRef<Value> accs) const {
  LaneMath lm{b, loc};
  WordMath wm{b, loc};
  GemmTiling tiling = getTiling();
  Value memory = tiles.getMemory();
  Type f32 = b.getF32Type();
  assert(!tiles.isPacked(0) && !tiles.isPacked(1) &&
         "E2M1 is staged as E4M3 (getStagedElementType)");
  bool nvfp4 = isa<Float8E4M3FNType>(tiles.getScaleType(0));
  int64_t blockSize = tiles.getBlockSize();
  std::string types = getPtxTypeName(tiles.getStagedElementType(0)) + "." +
                      getPtxTypeName(tiles.getStagedElementType(1));
  std::string intrinsic =
      "llvm.nvvm.mma.m16n8k32.row.col.f32." + types + ".f32";
  std::string intrinsicK16 =
      "llvm.nvvm.mma.m16n8k16.row.col.f32." + types + ".f32";
  auto structType = LLVM::LLVMStructType::getLiteral(b.getContext(),
                                                     SmallVector<Type>(4, f32));

  Value g = lm.shr(lane, 2);
  Value t = lm.band(lane, 3);
  Value t4 = lm.mul(t, 4);
  Value zeroF32 = arith::ConstantOp::create(b, loc, b.getF32FloatAttr(0.0f));

  // A rows g, g + 8 of tile i; B^T rows (C columns) 2 t, 2 t + 1 of tile j.
  SmallVector<Value> scaleRowsA, scaleRowsB;
  for (int64_t i = 0; i < tiling.repM; ++i)
    for (int64_t h = 0; h < 2; ++h)
      scaleRowsA.push_back(lm.add(lm.add(rowA, 16 * i + 8 * h), g));
  for (int64_t j = 0; j < tiling.repN; ++j)
    for (int64_t c = 0; c < 2; ++c)
      scaleRowsB.push_back(lm.add(lm.add(rowB, 8 * j + c), lm.mul(t, 2)));
  // The staged scale word (4 codes) holding `block` of each of those rows.
  SmallVector<Value> wordsA, wordsB;
  auto scaleCodes = [&](Value block) {
    Value first = lm.mul(lm.shr(block, 2), 4);
    auto load = [&](unsigned operand, ArrayRef<Value> rows,
                    SmallVectorImpl<Value> &words) {
      words.clear();
      for (Value row : rows)
        words.push_back(lm.loadWord(
            memory, tiles.getScaleOffset(b, loc, operand, buffer, row, first)));
    };
    load(0, scaleRowsA, wordsA);
    load(1, scaleRowsB, wordsB);
  };

  // [GEMM1] E8M0 scaling (see the file comment).
  E8M0Scaling e8m0(wm, tiles);
  // UE4M3 codes of two rows (A) or columns (B) at byte `block % 4` of their
  // staged words, as f32: one prmt gathers the two bytes, one
  // cvt.rn.f16x2.e4m3x2 decodes them (exactly, NaN to NaN), two cvt.f32.f16
  // widen them.
  VectorType pairF16 = VectorType::get({2}, b.getF16Type());
  auto decodeE4M3Pair = [&](Value first, Value second, Value selector) {
    Value bytes = vector::FromElementsOp::create(
        b, loc, VectorType::get({1}, b.getI16Type()),
        ValueRange{arith::TruncIOp::create(
            b, loc, b.getI16Type(), wm.permute(first, second, selector))});
    Value codes = vector::BitCastOp::create(
        b, loc, VectorType::get({2}, b.getI8Type()), bytes);
    Value halves = NVVM::ConvertF8x2ToF16x2Op::create(
        b, loc, pairF16, codes, b.getBoolAttr(false),
        TypeAttr::get(Float8E4M3FNType::get(b.getContext())));
    Value floats =
        arith::ExtFOp::create(b, loc, VectorType::get({2}, f32), halves);
    return std::array<Value, 2>{vector::ExtractOp::create(b, loc, floats, 0),
                                vector::ExtractOp::create(b, loc, floats, 1)};
  };

  // m16n8k32 (A 4 registers, B 2) or, for one NVFP4 block, m16n8k16 (A 2,
  // B 1), with C = 0.
  auto mma = [&](ArrayRef<Value> a, ArrayRef<Value> bRegs) {
    SmallVector<Value> operands(a);
    operands.append(bRegs.begin(), bRegs.end());
    operands.append(4, zeroF32);
    StringRef name = a.size() == 4 ? intrinsic : intrinsicK16;
    Value result = LLVM::CallIntrinsicOp::create(
                       b, loc, structType, b.getStringAttr(name), operands)
                       .getResult(0);
    SmallVector<Value, 4> p;
    for (int64_t v = 0; v < 4; ++v)
      p.push_back(LLVM::ExtractValueOp::create(b, loc, result, v));
    return p;
  };
  // The word of 8-bit codes at byte `kByte` of staged row `row` of
  // `operand`.
  auto loadCodes = [&](unsigned operand, Value row, Value kByte) {
    return lm.loadWord(
        memory, tiles.getCodesOffset(b, loc, operand, buffer, row, kByte));
  };

  // A loop over the scale blocks of the step (one MMA K extent each), the
  // accumulators carried: B's fragments and column factors, then per A
  // tile i its fragment, row factors and the MMAs of row i. A loop (not
  // unrolled code) keeps ptxas from interleaving blocks: one block's and
  // one A tile's registers are live at a time, next to the accumulators.
  // It runs `count` blocks from `firstBlock`, whose scale words (4 codes
  // each) wordsA / wordsB hold: E8M0 (one word per row) for the whole
  // step, UE4M3 (two per row) for half of it.
  auto buildBlockLoop = [&](Scaling scaling, ValueRange initAccs,
                            Value firstBlock, int64_t count) {
    auto loop =
        scf::ForOp::create(b, loc, lm.c(0), lm.c(count), lm.c(1), initAccs);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(loop.getBody());
    Value block = lm.add(firstBlock, loop.getInductionVar());
    SmallVector<Value> blockAccs(loop.getRegionIterArgs());
    // Byte of the register of K 4 t + 16 h of the block (h = 0 only for
    // m16n8k16): one code per byte, the block's first at byte
    // block · blockSize.
    Value kByte = lm.mul(block, blockSize);
    auto byteOfHalf = [&](int64_t h) {
      return lm.add(lm.add(t4, kByte), 16 * h);
    };
    // This block's byte of a scale word.
    Value blockInWord =
        arith::IndexCastOp::create(b, loc, b.getI32Type(), lm.band(block, 3));
    e8m0.setBlock(blockInWord);
    // prmt selector of byte block % 4 of two words: (4 + k) << 4 | k.
    Value pairSelector =
        nvfp4 ? arith::AddIOp::create(
                    b, loc,
                    arith::MulIOp::create(b, loc, blockInWord, wm.c(0x11)),
                    wm.c(0x40))
              : Value();
    // B registers of tile j, C-column factors 2^eb (E8M0) or sb (UE4M3).
    SmallVector<SmallVector<Value, 2>> bRegs;
    // k32: B register r = B[16 r + 4 t + j][g]; k16: B[4 t + j][g].
    for (int64_t j = 0; j < tiling.repN; ++j) {
      Value row = lm.add(lm.add(rowB, 8 * j), g);
      SmallVector<Value, 2> regs;
      for (int64_t r = 0; r < (nvfp4 ? 1 : 2); ++r)
        regs.push_back(loadCodes(1, row, byteOfHalf(r)));
      bRegs.push_back(regs);
    }
    SmallVector<Value> colFactors;
    for (size_t c = 0; c < wordsB.size(); ++c) {
      if (nvfp4) {
        if (c % 2 == 0)
          llvm::append_range(
              colFactors,
              decodeE4M3Pair(wordsB[c], wordsB[c + 1], pairSelector));
        continue;
      }
      colFactors.push_back(e8m0.getColumnFactor(wordsB[c], scaling));
    }

    for (int64_t i = 0; i < tiling.repM; ++i) {
      // k32: A register r = A[g + 8 (r % 2)][16 (r / 2) + 4 t + j];
      // k16: A register r = A[g + 8 r][4 t + j].
      Value tileRow = lm.add(lm.add(rowA, 16 * i), g);
      SmallVector<Value, 4> aRegs;
      for (int64_t r = 0; r < (nvfp4 ? 2 : 4); ++r)
        aRegs.push_back(
            loadCodes(0, lm.add(tileRow, 8 * (r % 2)), byteOfHalf(r / 2)));
      // Factors of rows g, g + 8: sa (UE4M3) or 2^ea (fused E8M0), and for
      // exact E8M0 (2^min(ea,T), 2^max(ea-T,0)).
      std::array<std::pair<Value, Value>, 2> rowFactors;
      if (nvfp4) {
        auto [first, second] =
            decodeE4M3Pair(wordsA[2 * i], wordsA[2 * i + 1], pairSelector);
        rowFactors = {std::make_pair(first, Value()),
                      std::make_pair(second, Value())};
      }
      for (int64_t h = 0; h < 2 && !nvfp4; ++h)
        rowFactors[h] = e8m0.getRowFactors(wordsA[2 * i + h], scaling);

      for (int64_t j = 0; j < tiling.repN; ++j) {
        Value &d = blockAccs[i * tiling.repN + j];
        SmallVector<Value, 4> p = mma(aRegs, bRegs[j]);
        SmallVector<Value, 4> out;
        for (int64_t v = 0; v < 4; ++v) {
          Value acc = vector::ExtractOp::create(b, loc, d, v);
          out.push_back(e8m0.accumulate(p[v], rowFactors[v / 2],
                                        colFactors[2 * j + v % 2], acc,
                                        scaling));
        }
        d = vector::FromElementsOp::create(b, loc, d.getType(), out);
      }
    }
    scf::YieldOp::create(b, loc, blockAccs);
    return SmallVector<Value>(loop.getResults());
  };

  SmallVector<Value> results;
  const int64_t blocksPerStep = kGemmTileK / blockSize;
  if (nvfp4) {
    // A staged UE4M3 scale row is two words of 4 blocks: each word is
    // loaded once, before the loop over its blocks.
    auto halves = scf::ForOp::create(b, loc, lm.c(0), lm.c(blocksPerStep / 4),
                                     lm.c(1), accs);
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(halves.getBody());
      Value first = lm.mul(halves.getInductionVar(), 4);
      scaleCodes(first);
      scf::YieldOp::create(
          b, loc,
          buildBlockLoop(Scaling::Fused, halves.getRegionIterArgs(), first, 4));
    }
    results = SmallVector<Value>(halves.getResults());
  } else {
    // One scale word per row covers the step's 4 blocks. The fused loop
    // runs when every code of this warp's words lies in the window (a
    // warp-uniform vote, so the MMAs stay converged); real scales always
    // do, the exact loop keeps [GEMM1] for the rest.
    assert(blocksPerStep <= 4 && "one E8M0 word per row and step");
    scaleCodes(lm.c(0));
    // The vote covers the warp's repM x 16 A rows and repN x 8 columns.
    // The words above repeat across lanes (a row's across the 4 lanes with
    // its g, a column's across the 8 with its t), so the test spreads the
    // rows and columns over the lanes instead: lane l tests A rows
    // rowsPerLane l .. and columns colsPerLane l ...
    const int64_t rowsPerLane = tiling.repM * getM() / 32;
    const int64_t colsPerLane = tiling.repN * getN() / 32;
    assert(rowsPerLane * 32 == tiling.repM * getM() &&
           colsPerLane * 32 == tiling.repN * getN() &&
           "whole rows and columns per lane");
    SmallVector<Value> words;
    auto spread = [&](unsigned operand, Value first, int64_t perLane) {
      for (int64_t r = 0; r < perLane; ++r)
        words.push_back(lm.loadWord(
            memory,
            tiles.getScaleOffset(
                b, loc, operand, buffer,
                lm.add(lm.add(first, lm.mul(lane, perLane)), r), lm.c(0))));
    };
    spread(0, rowA, rowsPerLane);
    spread(1, rowB, colsPerLane);
    Value fused = e8m0.isFusedForWarp(words);
    auto branch = scf::IfOp::create(b, loc, ValueRange(accs).getTypes(), fused,
                                    /*withElseRegion=*/true);
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(&branch.getThenRegion().front());
      scf::YieldOp::create(
          b, loc, buildBlockLoop(Scaling::Fused, accs, lm.c(0), blocksPerStep));
      b.setInsertionPointToStart(&branch.getElseRegion().front());
      scf::YieldOp::create(
          b, loc, buildBlockLoop(Scaling::Exact, accs, lm.c(0), blocksPerStep));
    }
    results = SmallVector<Value>(branch.getResults());
  }
  for (auto [acc, result] : llvm::zip(accs, results))
    acc = result;
}

Value SM90TargetInfo::buildShuffleXor(OpBuilder &b, Location loc, Value value,
                                      int64_t laneMask) const {
  // c = 31: clamp at lane 31, no segments (PTX ISA "shfl.sync").
  WordMath wm{b, loc};
  return NVVM::ShflOp::create(b, loc, b.getI32Type(), wm.c(0xFFFFFFFF), value,
                              wm.c(laneMask), wm.c(31), NVVM::ShflKind::bfly,
                              UnitAttr());
}

std::optional<SmallVector<Value>>
SM90TargetInfo::buildConvertRNE(ImplicitLocOpBuilder &b, Type element,
                                const ScaledBlock &block) const {
  // cvt.rn.satfinite.e4m3x2.f32 (sm_89+) computes the library's
  // encodeRNESat E4M3 codes (docs/nvvm.md); these chips have no E2M1
  // conversion, so E2M1 and E5M2 keep the shared integer recipe.
  if (!isa<Float8E4M3FNType>(element))
    return std::nullopt;
  return buildCvtRNSatfinitePairs(b, element, block);
}

//===----------------------------------------------------------------------===//
// [WG1] sm_90a: wgmma.mma_async per block
//===----------------------------------------------------------------------===//

namespace {

/// The constant fields of a wgmma matrix descriptor (PTX ISA 9.7.15.5.1.2.2
/// "Matrix Descriptor Format") of a K-major operand in the 128-byte swizzle:
/// leading byte offset 16 (bits 16-29, >> 4; unused: a wgmma's 32 K bytes
/// lie in one swizzle row), stride byte offset 1024 between 8-row groups
/// (bits 32-45, >> 4), base offset 0 (bits 49-51: the tiles are 1024-byte
/// aligned), swizzle mode 1 = 128-byte (bits 62-63). The start address
/// (bits 0-13, >> 4) is added at run time.
constexpr uint64_t kWgmmaSwizzle128Descriptor =
    uint64_t{16 >> 4} << 16 | uint64_t{1024 >> 4} << 32 | uint64_t{1} << 62;

NVVM::WGMMATypes getWgmmaType(Type element) {
  if (isa<Float16Type>(element))
    return NVVM::WGMMATypes::f16;
  return isa<Float8E5M2Type>(element) ? NVVM::WGMMATypes::e5m2
                                      : NVVM::WGMMATypes::e4m3;
}

/// The shared address (index) of byte `offset` of the staging `memory`.
Value getSharedAddress(OpBuilder &b, Location loc, Value memory, Value offset) {
  return arith::AddIOp::create(
      b, loc, memref::ExtractAlignedPointerAsIndexOp::create(b, loc, memory),
      offset);
}

/// The matrix descriptor of staged tile rows from `row` (a multiple of 8:
/// the swizzle leaves the start in place) of `operand` at byte `kByte` of
/// the rows (a multiple of 32, within one 128-byte atom): the start
/// address field (shared address >> 4) plus the constant fields.
Value buildWgmmaDescriptor(OpBuilder &b, Location loc, const StagedTiles &tiles,
                           Value buffer, unsigned operand, Value row,
                           Value kByte) {
  LaneMath lm{b, loc};
  Type i64 = b.getI64Type();
  Value address = getSharedAddress(
      b, loc, tiles.getMemory(),
      tiles.getCodesOffset(b, loc, operand, buffer, row, kByte));
  Value field = arith::IndexCastUIOp::create(
      b, loc, i64, arith::ShRUIOp::create(b, loc, address, lm.c(4)));
  return arith::AddIOp::create(
      b, loc, field,
      arith::ConstantIntOp::create(
          b, loc, i64, static_cast<int64_t>(kWgmmaSwizzle128Descriptor)));
}

/// A warpgroup's wgmma.mma_async m64n128kK of the staged tiles' types with
/// scale-d 0 (D = A·B), committed and waited for: its D registers.
SmallVector<Value> buildWgmmaProduct(OpBuilder &b, Location loc,
                                     const StagedTiles &tiles, int64_t n,
                                     int64_t k, Value descA, Value descB) {
  Type f32 = b.getF32Type();
  auto structType = LLVM::LLVMStructType::getLiteral(
      b.getContext(), SmallVector<Type>(n / 2, f32));
  NVVM::WgmmaFenceAlignedOp::create(b, loc);
  Value result = NVVM::WgmmaMmaAsyncOp::create(
      b, loc, structType, LLVM::PoisonOp::create(b, loc, structType), descA,
      descB, NVVM::MMAShapeAttr::get(b.getContext(), 64, n, k),
      getWgmmaType(tiles.getStagedElementType(0)),
      getWgmmaType(tiles.getStagedElementType(1)), NVVM::WGMMATypes::f32,
      NVVM::WGMMAScaleOut::zero, NVVM::WGMMAScaleIn::one,
      NVVM::WGMMAScaleIn::one, NVVM::MMALayout::row, NVVM::MMALayout::col,
      /*satfinite=*/nullptr);
  NVVM::WgmmaGroupSyncAlignedOp::create(b, loc);
  NVVM::WgmmaWaitGroupSyncOp::create(b, loc, b.getI64IntegerAttr(0));
  SmallVector<Value> p;
  for (int64_t i = 0; i < n / 2; ++i)
    p.push_back(LLVM::ExtractValueOp::create(b, loc, result, i));
  return p;
}

} // namespace

bool mlir::fp4train::isWgmmaScaledMatmul(ScaledTensorType lhs,
                                         ScaledTensorType rhs) {
  return lhs.getBlockShape().back() == 32 &&
         isa<Float8E8M0FNUType>(lhs.getScaleType()) &&
         isa<Float8E8M0FNUType>(rhs.getScaleType());
}

std::pair<Value, Value>
WgmmaFP8TargetInfo::getAccumulatorPosition(OpBuilder &b, Location loc,
                                           Value lane, int64_t index) const {
  // Register i of warpgroup thread (warp w, lane l): D[16 w + l / 4 +
  // 8 ((i / 2) % 2)][8 (i / 4) + 2 (l % 4) + i % 2] (PTX ISA 9.7.15.5.1.1,
  // the m16n8 C fragment of the warp's 16 rows for every 8 columns).
  LaneMath lm{b, loc};
  auto [row, col] = lm.getAccumulatorPosition(
      lm.band(lane, 31), 2 * ((index / 2) % 2) + index % 2);
  return {lm.add(row, lm.mul(lm.shr(lane, 5), 16)),
          lm.add(col, 8 * (index / 4))};
}

void WgmmaFP8TargetInfo::buildStagingFence(OpBuilder &b, Location loc) const {
  // wgmma reads its operands through the asynchronous proxy: the staged
  // stores (generic proxy) are ordered before those reads by this fence in
  // each storing thread, then the barrier.
  NVVM::FenceProxyOp::create(
      b, loc, NVVM::ProxyKind::async_shared,
      NVVM::SharedSpaceAttr::get(b.getContext(),
                                 NVVM::SharedSpace::shared_cta));
}

/// The shared-memory pointer (!llvm.ptr<3>) of byte `offset` of `memory`.
static Value getSharedPointer(OpBuilder &b, Location loc, Value memory,
                              Value offset) {
  Value address = arith::IndexCastUIOp::create(
      b, loc, b.getI64Type(), getSharedAddress(b, loc, memory, offset));
  return LLVM::IntToPtrOp::create(
      b, loc, LLVM::LLVMPointerType::get(b.getContext(), 3), address);
}

Value WgmmaFP8TargetInfo::buildTileMap(OpBuilder &b, Location loc, Value codes,
                                       int64_t boxRows) const {
  return buildSwizzledTileMap(b, loc, codes, boxRows);
}

void WgmmaFP8TargetInfo::buildTileBarrierInit(OpBuilder &b, Location loc,
                                              Value memory,
                                              Value offset) const {
  NVVM::MBarrierInitOp::create(
      b, loc, getSharedPointer(b, loc, memory, offset),
      arith::ConstantIntOp::create(b, loc, b.getI32Type(), 1), Value());
  // The initialization (a generic-proxy write) ordered before the TMA
  // unit's complete-tx on it.
  NVVM::FenceProxyOp::create(
      b, loc, NVVM::ProxyKind::async_shared,
      NVVM::SharedSpaceAttr::get(b.getContext(),
                                 NVVM::SharedSpace::shared_cta));
}

void WgmmaFP8TargetInfo::buildTileCopies(OpBuilder &b, Location loc,
                                         Value memory, Value barrier,
                                         int64_t bytes,
                                         ArrayRef<TileCopy> copies) const {
  // The transaction count before the copies, the thread's arrival after
  // them: the phase completes when both tiles have landed.
  Value barrierPtr = getSharedPointer(b, loc, memory, barrier);
  NVVM::MBarrierExpectTxOp::create(
      b, loc, barrierPtr,
      arith::ConstantIntOp::create(b, loc, b.getI32Type(), bytes));
  for (const TileCopy &copy : copies)
    NVVM::CpAsyncBulkTensorGlobalToSharedClusterOp::create(
        b, loc, getSharedPointer(b, loc, memory, copy.offset), copy.map,
        ValueRange{copy.kByte, copy.row, copy.batch}, barrierPtr,
        /*im2colOffsets=*/ValueRange(), /*multicastMask=*/Value(),
        /*l2CacheHint=*/Value(), NVVM::TMALoadMode::TILE,
        /*isCTAOnly=*/true, /*group=*/NVVM::CTAGroupKindAttr(),
        /*predicate=*/Value());
  NVVM::MBarrierArriveOp::create(b, loc, b.getI64Type(), barrierPtr,
                                 /*count=*/Value());
}

void WgmmaFP8TargetInfo::buildTileWait(OpBuilder &b, Location loc, Value memory,
                                       Value barrier, Value parity) const {
  // A bounded try_wait in a loop (the op's PTX retries until the phase
  // completes); the suspend-time hint is the tcgen05 kernel's.
  NVVM::MBarrierTryWaitParityOp::create(
      b, loc, getSharedPointer(b, loc, memory, barrier), parity,
      arith::ConstantIntOp::create(b, loc, b.getI32Type(), 10000000));
}

std::optional<ScaleFold>
WgmmaFP8TargetInfo::getScaleFold(const StagedTiles &tiles) const {
  // [WG2] MXFP4 x MXFP4: B^T's E2M1 codes staged as E4M3 times 2^(e - r).
  // Both operands E2M1 keeps every block sum exact (13 significant bits,
  // now with its last bit >= 2^-10) and the exact path's argument intact.
  if (!isa<Float4E2M1FNType>(tiles.getElementType(0)) ||
      !isa<Float4E2M1FNType>(tiles.getElementType(1)))
    return std::nullopt;
  ScaleFold fold;
  std::tie(fold.lo, fold.hi) =
      getFusedScaleWindow(tiles.getElementType(0), tiles.getElementType(1),
                          E8M0Scaling::getSplitExponent(tiles));
  fold.wordsPerDistance = 2;
  for (int d = 0;; ++d) {
    std::optional<std::array<uint32_t, 2>> words = getE2M1Magnitudes(d);
    if (!words)
      break;
    fold.maxDistance = d;
    fold.tables.append(words->begin(), words->end());
  }
  return fold;
}

void WgmmaFP8TargetInfo::buildStepMMAs(OpBuilder &b, Location loc,
                                       const StagedTiles &tiles, Value buffer,
                                       Value lane, Value rowA, Value rowB,
                                       MutableArrayRef<Value> accs) const {
  assert(tiles.getBlockSize() == 32 && accs.size() == 1 &&
         "isWgmmaScaledMatmul: one m64n128 accumulator, 32-element blocks");
  LaneMath lm{b, loc};
  WordMath wm{b, loc};
  Value memory = tiles.getMemory();
  Type i64 = b.getI64Type();
  const int64_t n = getN(), registers = getAccumulatorLength();
  Value warp = lm.shr(lane, 5), inWarp = lm.band(lane, 31);
  Value g = lm.shr(inWarp, 2), t = lm.band(inWarp, 3);

  // The step's scale words (one E8M0 word of 4 blocks per row): A rows
  // 16 w + g and + 8 of the warpgroup's 64, C columns 8 j + 2 t + c.
  SmallVector<Value> wordsA;
  for (int64_t h = 0; h < 2; ++h) {
    Value row = lm.add(lm.add(rowA, lm.mul(warp, 16)), lm.add(g, 8 * h));
    wordsA.push_back(lm.loadWord(
        memory, tiles.getScaleOffset(b, loc, 0, buffer, row, lm.c(0))));
  }
  E8M0Scaling e8m0(wm, tiles);
  // The column words, and the warp's fused/exact vote over its 16 A rows
  // and all 128 columns. The column words repeat across the 8 lanes with
  // the same t, so the vote spreads the columns instead: lane l tests its
  // two row words and the words of columns 4 l .. 4 l + 3.
  auto loadColumns = [&]() -> std::pair<SmallVector<Value>, Value> {
    SmallVector<Value> wordsB, voteWords(wordsA);
    for (int64_t j = 0; j < n / 8; ++j)
      for (int64_t c = 0; c < 2; ++c) {
        Value row = lm.add(lm.add(rowB, 8 * j + c), lm.mul(t, 2));
        wordsB.push_back(lm.loadWord(
            memory, tiles.getScaleOffset(b, loc, 1, buffer, row, lm.c(0))));
      }
    for (int64_t c = 0; c < n / 32; ++c)
      voteWords.push_back(lm.loadWord(
          memory,
          tiles.getScaleOffset(b, loc, 1, buffer,
                               lm.add(lm.add(rowB, lm.mul(inWarp, n / 32)), c),
                               lm.c(0))));
    return {wordsB, e8m0.isFusedForWarp(voteWords)};
  };
  // [WG2] With folded scales, per step the blocks' references and the
  // vote over the rows alone; the columns only where a block is unfolded.
  const bool folds = tiles.foldsScales();
  SmallVector<Value> wordsB;
  Value fused, references, rowsFused;
  if (folds) {
    references =
        lm.loadWord(memory, tiles.getFoldReferencesOffset(b, loc, buffer));
    rowsFused = e8m0.isFusedForWarp(wordsA);
  } else {
    std::tie(wordsB, fused) = loadColumns();
  }

  // Descriptors: the start-address field (shared address >> 4) of the
  // warpgroup's 64 A rows and of the 128 B^T rows at the step's first
  // block (rows multiples of 8: the swizzle leaves the start in place),
  // plus 2 (32 bytes) per block.
  Value descA = buildWgmmaDescriptor(b, loc, tiles, buffer, 0, rowA, lm.c(0));
  Value descB = buildWgmmaDescriptor(b, loc, tiles, buffer, 1, rowB, lm.c(0));
  const int64_t blocks = kGemmTileK / tiles.getBlockSize();
  auto loop = scf::ForOp::create(b, loc, lm.c(0), lm.c(blocks), lm.c(1),
                                 ValueRange{accs[0]});
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(loop.getBody());
    Value block = loop.getInductionVar();
    Value offset = arith::IndexCastUIOp::create(b, loc, i64, lm.mul(block, 2));
    // P = A·B of the block (scale-d 0: no accumulator input), waited for
    // at once: the scaling below reads it.
    SmallVector<Value> p = buildWgmmaProduct(
        b, loc, tiles, n, 32, arith::AddIOp::create(b, loc, descA, offset),
        arith::AddIOp::create(b, loc, descB, offset));
    e8m0.setBlock(arith::IndexCastOp::create(b, loc, b.getI32Type(), block));

    Value acc = loop.getRegionIterArgs()[0];
    auto accumulator = [&](int64_t i) {
      return vector::ExtractOp::create(b, loc, acc, i).getResult();
    };
    auto pack = [&](ArrayRef<Value> out) {
      return vector::FromElementsOp::create(b, loc, acc.getType(), out)
          .getResult();
    };
    // Register i of the D fragment is A row (i / 2) % 2 of the lane's two
    // and column word 2 (i / 4) + i % 2.
    auto scale = [&](Scaling scaling, ArrayRef<Value> columnWords) {
      std::array<std::pair<Value, Value>, 2> rows;
      for (int64_t h = 0; h < 2; ++h)
        rows[h] = e8m0.getRowFactors(wordsA[h], scaling);
      SmallVector<Value> columns;
      for (Value word : columnWords)
        columns.push_back(e8m0.getColumnFactor(word, scaling));
      SmallVector<Value> out;
      for (int64_t i = 0; i < registers; ++i)
        out.push_back(e8m0.accumulate(p[i], rows[(i / 2) % 2],
                                      columns[2 * (i / 4) + i % 2],
                                      accumulator(i), scaling));
      return pack(out);
    };
    // The fused / exact choice is the warp's (the file comment): the
    // wgmma above is the warpgroup's, outside the branch.
    auto unfolded = [&](ArrayRef<Value> columnWords, Value vote) {
      return buildIf(
          b, loc, vote, [&]() { return scale(Scaling::Fused, columnWords); },
          [&]() { return scale(Scaling::Exact, columnWords); });
    };
    // [WG2] A folded block's column factor is 2^r for every column: fused,
    // one product per A row and one fma per accumulator.
    auto folded = [&](Value reference, Scaling scaling) {
      Value column = e8m0.getColumnFactorOfCode(reference, scaling);
      std::array<std::pair<Value, Value>, 2> rows;
      for (int64_t h = 0; h < 2; ++h) {
        rows[h] = e8m0.getRowFactors(wordsA[h], scaling);
        if (scaling == Scaling::Fused)
          rows[h].first = arith::MulFOp::create(b, loc, rows[h].first, column);
      }
      SmallVector<Value> out;
      for (int64_t i = 0; i < registers; ++i) {
        auto [first, last] = rows[(i / 2) % 2];
        out.push_back(
            scaling == Scaling::Fused
                ? LLVM::FMAOp::create(b, loc, p[i], first, accumulator(i))
                      .getResult()
                : e8m0.accumulate(p[i], rows[(i / 2) % 2], column,
                                  accumulator(i), scaling));
      }
      return pack(out);
    };
    Value scaled;
    if (!folds) {
      scaled = unfolded(wordsB, fused);
    } else {
      // The fast path first: a folded block (the reference is
      // workgroup-uniform) whose rows the warp found in the window. The
      // unfolded branch is workgroup-uniform: its vote stays converged.
      Value reference = e8m0.getCode(references);
      Value isFolded = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne,
                                             reference, wm.c(0xFF));
      scaled = buildIf(
          b, loc, arith::AndIOp::create(b, loc, isFolded, rowsFused),
          [&]() { return folded(reference, Scaling::Fused); },
          [&]() {
            return buildIf(
                b, loc, isFolded,
                [&]() { return folded(reference, Scaling::Exact); },
                [&]() {
                  auto [columnWords, vote] = loadColumns();
                  return unfolded(columnWords, vote);
                });
          });
    }
    scf::YieldOp::create(b, loc, scaled);
  }
  accs[0] = loop.getResult(0);
}

//===----------------------------------------------------------------------===//
// [WG3] sm_90a NVFP4: wgmma.mma_async m64n128k16 on f16 values
//===----------------------------------------------------------------------===//

namespace {

/// The high bytes of the f16 values of the 8 E2M1 magnitudes 0, 0.5, 1,
/// 1.5, 2, 3, 4, 6 (whose low bytes are 0), as the two table words of
/// widenE2M1Bytes (magnitude i in byte i % 4 of word i / 4): 0x3E3C3800,
/// 0x46444240.
std::array<uint32_t, 2> getE2M1HalfHighBytes() {
  std::array<uint32_t, 2> words = {0, 0};
  for (uint8_t code = 0; code < 8; ++code) {
    bool lost = false;
    llvm::APFloat value(::fp4train::numerics::decodeE2M1(code));
    value.convert(llvm::APFloat::IEEEhalf(), llvm::APFloat::rmNearestTiesToEven,
                  &lost);
    const uint64_t bits = value.bitcastToAPInt().getZExtValue();
    assert(!lost && (bits & 0xFF) == 0 && "an E2M1 value is an f16 x 256");
    words[code / 4] |= uint32_t(bits >> 8) << (8 * (code % 4));
  }
  return words;
}

} // namespace

bool mlir::fp4train::isWgmmaF16ScaledMatmul(ScaledTensorType lhs,
                                            ScaledTensorType rhs) {
  auto isNVFP4 = [](ScaledTensorType type) {
    return isa<Float4E2M1FNType>(type.getElementType()) &&
           isa<Float8E4M3FNType>(type.getScaleType()) &&
           type.getBlockShape().back() == 16;
  };
  return isNVFP4(lhs) && isNVFP4(rhs);
}

Type WgmmaF16TargetInfo::getStagedElementType(Type element) const {
  assert(isa<Float4E2M1FNType>(element) && "NVFP4 elements are E2M1");
  return Float16Type::get(element.getContext());
}

Value WgmmaF16TargetInfo::convertStagedCodes(OpBuilder &b, Location loc,
                                             Type element, Value chunk,
                                             ValueRange scales) const {
  // Word w of the chunk holds codes 8w .. 8w + 7 ([PK1]), of block
  // 8w / 16 of the chunk. Each code becomes the f16 of its E2M1 value (the
  // sign-magnitude high byte by the E4M3 widening's lookup on the f16 table,
  // a zero low byte), times the block's UE4M3 scale as an f16 (exact: at
  // most 2 x 4 significant bits, magnitudes 2^-10 .. 2688; a NaN scale
  // makes NaN values, as [GEMM1]'s term).
  WordMath wm{b, loc};
  Type i32 = b.getI32Type();
  auto pairF16 = VectorType::get({2}, b.getF16Type());
  const int64_t words = cast<VectorType>(chunk.getType()).getNumElements() / 4;
  // The chunk's scales as f16 (one cvt for both blocks' codes, or for the
  // one code twice), then each block's (s, s).
  const int64_t blocks = std::max<int64_t>(1, words / 2);
  assert(scales.size() == 1 &&
         cast<VectorType>(scales[0].getType()).getNumElements() == blocks &&
         "one scale code per 16 codes");
  Value packed =
      vector::BitCastOp::create(b, loc, VectorType::get({words}, i32), chunk);
  Value codes = blocks == 2
                    ? scales[0]
                    : vector::ShuffleOp::create(b, loc, scales[0], scales[0],
                                                ArrayRef<int64_t>{0, 0})
                          .getResult();
  Value decoded = NVVM::ConvertF8x2ToF16x2Op::create(
      b, loc, pairF16, codes, b.getBoolAttr(false),
      TypeAttr::get(Float8E4M3FNType::get(b.getContext())));
  SmallVector<Value> scalePairs;
  for (int64_t j = 0; j < blocks; ++j)
    scalePairs.push_back(vector::ShuffleOp::create(b, loc, decoded, decoded,
                                                   ArrayRef<int64_t>{j, j}));
  const std::array<uint32_t, 2> table = getE2M1HalfHighBytes();
  Value zero = wm.c(0);
  SmallVector<Value> staged;
  for (int64_t w = 0; w < words; ++w) {
    auto [low, high] =
        widenE2M1Bytes(wm, vector::ExtractOp::create(b, loc, packed, w),
                       wm.c(table[0]), wm.c(table[1]));
    // Codes 2j, 2j + 1 of a word of high bytes: bytes (0, hj, 0, hj+1).
    for (Value bytes : {low, high})
      for (uint32_t selector : {0x1404u, 0x3424u}) {
        Value halves = vector::BitCastOp::create(
            b, loc, pairF16,
            vector::BroadcastOp::create(b, loc, VectorType::get({1}, i32),
                                        wm.permute(bytes, zero, selector)));
        Value scaled = arith::MulFOp::create(b, loc, halves, scalePairs[w / 2]);
        staged.push_back(vector::ExtractOp::create(
            b, loc,
            vector::BitCastOp::create(b, loc, VectorType::get({1}, i32),
                                      scaled),
            0));
      }
  }
  Value result = vector::FromElementsOp::create(
      b, loc, VectorType::get({int64_t(staged.size())}, i32), staged);
  return vector::BitCastOp::create(
      b, loc, VectorType::get({4 * int64_t(staged.size())}, b.getI8Type()),
      result);
}

void WgmmaF16TargetInfo::buildStepMMAs(OpBuilder &b, Location loc,
                                       const StagedTiles &tiles, Value buffer,
                                       Value lane, Value rowA, Value rowB,
                                       MutableArrayRef<Value> accs) const {
  assert(tiles.getBlockSize() == 16 && accs.size() == 1 &&
         "isWgmmaF16ScaledMatmul: one m64n128 accumulator, 16-element blocks");
  LaneMath lm{b, loc};
  const int64_t n = getN(), registers = getAccumulatorLength();
  // One wgmma per block, K bytes 32 b .. 32 b + 31 of the staged f16 rows:
  // for each of the step's two 128-byte atoms a loop over its 4 blocks,
  // whose descriptors are the atom's plus 2 (32 bytes) per block.
  const int64_t atomBlocks = 128 / 32;
  for (int64_t atom = 0; atom < kGemmTileK / tiles.getBlockSize() / atomBlocks;
       ++atom) {
    OpBuilder::InsertionGuard guard(b);
    Value kByte = lm.c(128 * atom);
    Value descA = buildWgmmaDescriptor(b, loc, tiles, buffer, 0, rowA, kByte);
    Value descB = buildWgmmaDescriptor(b, loc, tiles, buffer, 1, rowB, kByte);
    auto blocks = scf::ForOp::create(b, loc, lm.c(0), lm.c(atomBlocks), lm.c(1),
                                     ValueRange{accs[0]});
    b.setInsertionPointToStart(blocks.getBody());
    Value offset = arith::IndexCastUIOp::create(
        b, loc, b.getI64Type(), lm.mul(blocks.getInductionVar(), 2));
    // P' = sa·sb·P of the block, an exact f32 (scale-d 0), then [GEMM1]'s
    // T + term, one rounding.
    SmallVector<Value> p = buildWgmmaProduct(
        b, loc, tiles, n, 16, arith::AddIOp::create(b, loc, descA, offset),
        arith::AddIOp::create(b, loc, descB, offset));
    Value acc = blocks.getRegionIterArgs()[0];
    SmallVector<Value> out;
    for (int64_t i = 0; i < registers; ++i)
      out.push_back(arith::AddFOp::create(
          b, loc, vector::ExtractOp::create(b, loc, acc, i), p[i]));
    scf::YieldOp::create(
        b, loc,
        vector::FromElementsOp::create(b, loc, acc.getType(), out).getResult());
    accs[0] = blocks.getResult(0);
  }
}
