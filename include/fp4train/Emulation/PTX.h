//===- PTX.h - CPU models of sm_120a block-scaled MMA and conversions -----===//
//
// Lane-level models of the NVIDIA PTX instructions that the sm_120a and
// sm_89/sm_90a lowerings use, the counterpart of CDNA4.h for the lane-exact
// emulation of [CHK4] (docs/semantics.md): the warp-level block-scaled mma.sync
// (m16n8k64 kind::mxf4 / kind::mxf4nvf4, m16n8k32 kind::mxf8f6f4), the FP8
// mma.sync (m16n8k32 / m16n8k16 e4m3/e5m2), prmt.b32 and the packed conversions
// cvt.rn.satfinite.{e2m1x2,e4m3x2}.f32, cvt.rp.satfinite.ue8m0x2.f32 and
// cvt.rn.f16x2.e4m3x2. Each model lives in its own file under
// lib/Emulation/PTX/ and is written from the PTX ISA (cited in each file),
// never from the lowering it checks: nothing here includes fp4train's
// Conversion or Numerics code.
// Operands are raw register contents (32-bit words per lane, f32 as bits), as
// the NVVM intrinsics pass them, so a model sees exactly what the instruction
// sees.
//
//===----------------------------------------------------------------------===//

#ifndef FP4TRAIN_EMULATION_PTX_H
#define FP4TRAIN_EMULATION_PTX_H

#include "llvm/ADT/ArrayRef.h"

#include <array>
#include <cstdint>
#include <string>

namespace fp4train::emulation::ptx {

/// Lanes of a warp.
inline constexpr unsigned kWarpSize = 32;

//===----------------------------------------------------------------------===//
// mma.sync.aligned.{m16n8k64,m16n8k32}.row.col.kind::*.block_scale
//===----------------------------------------------------------------------===//

/// Kinds of mma.sync ... block_scale.
enum class BlockScaleKind { MXF8F6F4, MXF4, MXF4NVF4 };
enum class ScaleFormat { UE8M0, UE4M3 };
/// scale_vec::1X / 2X / 4X.
enum class ScaleVec { X1 = 1, X2 = 2, X4 = 4 };
/// Element types of kind::mxf8f6f4 operands (kind::mxf4/mxf4nvf4 are always
/// E2M1), and F16 (IEEE binary16) for wgmma's .f16 operands.
enum class ElementType { E2M1, E2M3, E3M2, E4M3, E5M2, F16 };

struct MmaBlockScaleConfig {
  BlockScaleKind kind;
  ScaleVec scaleVec;
  ScaleFormat scaleFormat;
  ElementType typeA = ElementType::E2M1,
              typeB = ElementType::E2M1; // mxf8f6f4 only
};

/// One warp's mma.sync.aligned.m16n8k64 (kind::mxf4 / mxf4nvf4, E2M1 x E2M1)
/// or m16n8k32 (kind::mxf8f6f4) .row.col ... .block_scale with f32 C/D.
/// `a` (32 lanes x 4 regs), `b` (32 x 2), `c` (32 x 4, f32 bits),
/// `scaleA`/`scaleB` (32 lane registers), the selectors; writes `d` (32 x 4,
/// f32 bits, may alias c). Returns "" or why the operands are invalid (bad
/// kind/scale combination, selector out of range, ...).
///
/// Layouts (PTX ISA §9.7.14.5, §9.7.14.3; g = lane / 4, t = lane % 4):
///  - m16n8k64: register r of lane L holds A[g + 8(r % 2)][32(r / 2) + 8t + j]
///    in bits [4j, 4j + 4); B register r holds B[32r + 8t + j][g].
///  - m16n8k32: A register r holds A[g + 8(r % 2)][16(r / 2) + 4t + j] in
///    byte j; B register r holds B[16r + 4t + j][g]; E3M2/E2M3 in the low 6
///    bits of the byte, E2M1 in bits 5..2.
///  - C/D register i holds D[g + 8(i / 2)][2t + i % 2].
///  - The scale of A row m comes from lane 4(m % 8) + 2 threadIdA + m / 8, the
///    scale of B column n from lane 4n + threadIdB; the scale of K block j
///    (32 elements for 1X/2X, 16 for 4X) is byte byteId + j of that register.
std::string mmaBlockScale(const MmaBlockScaleConfig &config,
                          llvm::ArrayRef<std::array<uint32_t, 4>> a,
                          llvm::ArrayRef<std::array<uint32_t, 2>> b,
                          llvm::ArrayRef<std::array<uint32_t, 4>> c,
                          llvm::ArrayRef<uint32_t> scaleA, unsigned byteIdA,
                          unsigned threadIdA, llvm::ArrayRef<uint32_t> scaleB,
                          unsigned byteIdB, unsigned threadIdB,
                          std::array<uint32_t, 4> *d);

/// The K extent of one instruction: 64 for kind::mxf4/mxf4nvf4, 32 for
/// kind::mxf8f6f4.
unsigned getMmaBlockScaleK(BlockScaleKind kind);

//===----------------------------------------------------------------------===//
// mma.sync.aligned.{m16n8k32,m16n8k16}.row.col.f32.<a>.<b>.f32, FP8 a/b
//===----------------------------------------------------------------------===//

/// The FP8 mma.sync of sm_89/sm_90: K (32 or 16) and the e4m3/e5m2 types.
struct MmaSyncFP8Config {
  unsigned k = 32;
  ElementType typeA = ElementType::E4M3, typeB = ElementType::E4M3;
};

/// One warp's mma.sync.aligned.m16n8k32 / m16n8k16 .row.col.f32.<a>.<b>.f32
/// (no block scaling): `a` 32 lanes x 4 registers (k16: 2, the rest
/// ignored), `b` 32 x 2 (k16: 1), `c` 32 x 4 f32 bits; writes `d` (may
/// alias c). Returns "" or why the configuration is invalid.
///
/// Layouts (PTX ISA §9.7.14.5.x, 8-bit types; g = lane / 4, t = lane % 4,
/// element j of a register in byte j):
///  - m16n8k32: A register r = A[g + 8(r % 2)][16(r / 2) + 4t + j], B
///    register r = B[16r + 4t + j][g];
///  - m16n8k16: A register r = A[g + 8r][4t + j], B = B[4t + j][g];
///  - C/D register i = D[g + 8(i / 2)][2t + i % 2].
std::string mmaSyncFP8(const MmaSyncFP8Config &config,
                       llvm::ArrayRef<std::array<uint32_t, 4>> a,
                       llvm::ArrayRef<std::array<uint32_t, 2>> b,
                       llvm::ArrayRef<std::array<uint32_t, 4>> c,
                       std::array<uint32_t, 4> *d);

//===----------------------------------------------------------------------===//
// prmt.b32
//===----------------------------------------------------------------------===//

/// prmt.b32 d, a, b, c (default mode): byte i of d is byte c[4i+2:4i] of
/// {b, a} (a bytes 0-3, b bytes 4-7), or, when c bit 4i+3 is set, that
/// byte's bit 7 replicated.
uint32_t prmt(uint32_t a, uint32_t b, uint32_t c);

//===----------------------------------------------------------------------===//
// cvt.rn.satfinite.{e2m1x2,e4m3x2}.f32, cvt.rs.satfinite.e2m1x4.f32,
// cvt.rp.satfinite.ue8m0x2.f32
//===----------------------------------------------------------------------===//

/// cvt.rn.satfinite.e2m1x2.f32 d, hi, lo: the byte with `hi`'s code in bits
/// 7..4 (the PTX operand `a` is `hi`, `b` is `lo`).
uint8_t cvtRnSatfiniteE2M1x2(uint32_t hiBits, uint32_t loBits);
/// One element of cvtRnSatfiniteE2M1x2: the 4-bit code of an f32.
uint8_t cvtRnSatfiniteE2M1(uint32_t bits);

/// cvt.rs.satfinite.e2m1x4.f32 d, {a, b, e, f}, rbits (sm_100a / sm_103a):
/// the 16-bit result, a's code in bits 15..12 down to f's in 3..0; a rounds
/// with rbits bits 31..24, e with 23..16, b with 15..8, f with 7..0
/// (CvtRsE2M1x4.cpp states what the PTX ISA leaves open).
uint16_t cvtRsSatfiniteE2M1x4(uint32_t a, uint32_t b, uint32_t e, uint32_t f,
                              uint32_t rbits);
/// One element of cvtRsSatfiniteE2M1x4 with its 8 random bits.
uint8_t cvtRsSatfiniteE2M1(uint32_t bits, uint8_t random);

/// cvt.rn.satfinite.e4m3x2.f32 d, hi, lo: the 16-bit result (hi's code in
/// bits 15..8).
uint16_t cvtRnSatfiniteE4M3x2(uint32_t hiBits, uint32_t loBits);
/// One element of cvtRnSatfiniteE4M3x2.
uint8_t cvtRnSatfiniteE4M3(uint32_t bits);

/// cvt.rn.f16x2.e4m3x2 d, a (sm_89+): the f16 of a's bits 15..8 in d's bits
/// 31..16, of a's bits 7..0 in d's bits 15..0; exact (every E4M3 value is
/// an f16), E4M3 NaN gives the f16 canonical NaN 0x7FFF.
uint32_t cvtRnF16x2E4M3x2(uint16_t a);
/// One element of cvtRnF16x2E4M3x2: the f16 bits of an E4M3 code.
uint16_t cvtRnF16E4M3(uint8_t code);

/// cvt.rp.satfinite.ue8m0x2.f32 d, hi, lo (hi's code in bits 15..8).
uint16_t cvtRpSatfiniteUE8M0x2(uint32_t hiBits, uint32_t loBits);
/// One element of cvtRpSatfiniteUE8M0x2.
uint8_t cvtRpSatfiniteUE8M0(uint32_t bits);

} // namespace fp4train::emulation::ptx

#endif // FP4TRAIN_EMULATION_PTX_H
