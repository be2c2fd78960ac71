//===- CDNA4.h - CPU models of gfx950 matrix and conversion instructions -===//
//
// Lane-level models of the CDNA4 (gfx950) instructions that the
// fp4train-to-amdgpu kernels use, for the lane-exact emulation of [CHK4]
// (docs/semantics.md). Each model lives in its own file under
// lib/Emulation/CDNA4/ and is written from AMD's documentation of the
// instruction (the CDNA4 ISA guide's operand layouts and AMD's HIP host
// reference of the conversion builtins, cited in each file), never from the
// lowering it checks: nothing here includes fp4train's Conversion or Numerics
// code.
//
// Operands are raw register contents (32-bit words per lane), as the ROCDL
// intrinsics pass them, so a model sees exactly what the instruction sees.
//
//===----------------------------------------------------------------------===//

#ifndef FP4TRAIN_EMULATION_CDNA4_H
#define FP4TRAIN_EMULATION_CDNA4_H

#include "llvm/ADT/ArrayRef.h"

#include <array>
#include <cstdint>
#include <string>

namespace fp4train::emulation::cdna4 {

/// Lanes of a gfx950 wave.
inline constexpr unsigned kWaveSize = 64;

//===----------------------------------------------------------------------===//
// v_mfma_scale_f32_{32x32x64,16x16x128}_f8f6f4
//===----------------------------------------------------------------------===//

/// The two block-scaled MFMA shapes of CDNA4.
enum class ScaledMfmaShape { M32N32K64, M16N16K128 };

/// Operand format codes of the f8f6f4 MFMAs (the CBSZ field for A, BLGP for
/// B): 0 FP8 E4M3, 1 BF8 E5M2, 2 FP6 E2M3, 3 BF6 E3M2, 4 FP4 E2M1.
enum class MatrixFormat : unsigned {
  FP8 = 0,
  BF8 = 1,
  FP6 = 2,
  BF6 = 3,
  FP4 = 4
};

/// One lane's A or B operand: up to eight VGPRs (FP8 uses 8, FP6 6, FP4 4).
using MatrixRegs = std::array<uint32_t, 8>;

/// Accumulator VGPRs per lane: 16 for 32x32x64, 4 for 16x16x128.
unsigned getAccumulatorsPerLane(ScaledMfmaShape shape);

/// Executes the instruction for one wave. `a`, `b`, `scaleA`, `scaleB` hold
/// the 64 lanes' source registers, `c` the 64 lanes' accumulators (f32 bits,
/// getAccumulatorsPerLane(shape) per lane, lane-major); the result is written
/// to `d` in the same layout (`d` may alias `c`). `opselA`/`opselB` pick the
/// byte of the scale VGPR that holds the lane's E8M0 scale. Returns an empty
/// string, or why the operands are invalid (format code out of range, opsel
/// > 3).
std::string scaledMfma(ScaledMfmaShape shape, unsigned cbsz, unsigned blgp,
                       unsigned opselA, unsigned opselB,
                       llvm::ArrayRef<MatrixRegs> a,
                       llvm::ArrayRef<MatrixRegs> b,
                       llvm::ArrayRef<uint32_t> scaleA,
                       llvm::ArrayRef<uint32_t> scaleB,
                       llvm::ArrayRef<uint32_t> c, uint32_t *d);

//===----------------------------------------------------------------------===//
// v_cvt_scalef32_pk_{fp4,fp8,bf8}_f32 and v_cvt_scalef32_sr_pk_fp4_f32
//===----------------------------------------------------------------------===//

/// Target element formats of the scaled down-conversions.
enum class NarrowFormat { FP4, FP8, BF8 };

/// One element of v_cvt_scalef32_pk_{fp4,fp8,bf8}_f32: the code of
/// `srcBits` (an f32) divided by 2^(exponent field of `scaleBits` - 127),
/// rounded to nearest even. The packing into the destination register is the
/// interpreter's (see cvtScalePkFp4 / cvtScalePkFp8).
uint8_t cvtScaleToNarrow(NarrowFormat format, uint32_t srcBits,
                         uint32_t scaleBits);

/// v_cvt_scalef32_pk_fp4_f32: converts src0, src1 and writes the byte
/// (src0 code in the low nibble) into byte `byteSel` of `old`.
uint32_t cvtScalePkFp4(uint32_t old, uint32_t src0, uint32_t src1,
                       uint32_t scale, unsigned byteSel);

/// v_cvt_scalef32_pk_{fp8,bf8}_f32: converts src0, src1 and writes the two
/// bytes (src0 in the low byte) into 16-bit half `wordSel` of `old`.
uint32_t cvtScalePkFp8(NarrowFormat format, uint32_t old, uint32_t src0,
                       uint32_t src1, uint32_t scale, unsigned wordSel);

/// One element of v_cvt_scalef32_sr_pk_fp4_f32: the E2M1 code of `srcBits`
/// divided by the scale's power of two, stochastically rounded with the
/// random word `seed`.
uint8_t cvtScaleSrToFp4(uint32_t srcBits, uint32_t seed, uint32_t scaleBits);

/// v_cvt_scalef32_sr_pk_fp4_f32: both elements use the same `seed`; the byte
/// (src0 code in the low nibble) goes to byte `byteSel` of `old`.
uint32_t cvtScaleSrPkFp4(uint32_t old, uint32_t src0, uint32_t src1,
                         uint32_t seed, uint32_t scale, unsigned byteSel);

} // namespace fp4train::emulation::cdna4

#endif // FP4TRAIN_EMULATION_CDNA4_H
