//===- Codecs.h - Scalar arith builders for the numerics recipes -*- C++
//-*-===//
//
// Builders that emit, on scalars, the exact integer and f32 recipes of the
// numerics library (include/fp4train/Numerics, docs/numerics.md), operation
// for operation, so generated code agrees with the library bit for bit. The
// linalg bodies of the CPU expansion are made of these, and GPU kernels reuse
// them (e.g. the MX scale code of the gfx950 quantize kernel) so that the
// two targets cannot drift apart.
//
//===----------------------------------------------------------------------===//

#ifndef FP4TRAIN_CONVERSION_FP4TRAINCOMMON_CODECS_H
#define FP4TRAIN_CONVERSION_FP4TRAINCOMMON_CODECS_H

#include "fp4train/Numerics/Formats.h"

#include "mlir/IR/ImplicitLocOpBuilder.h"
#include "mlir/IR/Value.h"

namespace mlir::fp4train::codecs {

/// The numerics library's description of an element or scale type
/// (f4E2M1FN, f8E4M3FN, f8E5M2). Asserts on anything else.
const ::fp4train::numerics::MiniFloatFormat &getMiniFloatFormat(Type type);

/// Integer and f32 constants.
Value i32Const(ImplicitLocOpBuilder &b, uint32_t value);
Value i64Const(ImplicitLocOpBuilder &b, uint64_t value);
Value f32Const(ImplicitLocOpBuilder &b, float value);
Value f32FromBits(ImplicitLocOpBuilder &b, Value bits);
Value bitsFromF32(ImplicitLocOpBuilder &b, Value value);

/// `encodeRNESat<F>`: f32 -> element code (i8), RNE with satfinite.
Value encodeRNESat(ImplicitLocOpBuilder &b, Value x,
                   const ::fp4train::numerics::MiniFloatFormat &format);

/// [SR1] `encodeE2M1Stochastic`: f32 and a random i32 word -> E2M1 code (i8),
/// the codes gfx950's v_cvt_scalef32_sr_pk_fp4_f32 computes.
Value encodeE2M1Stochastic(ImplicitLocOpBuilder &b, Value v, Value rbits);

/// `decodeMiniFloat<F>`: element code (i8) -> f32, exact.
Value decodeMiniFloat(ImplicitLocOpBuilder &b, Value code,
                      const ::fp4train::numerics::MiniFloatFormat &format);

/// `decodeE8M0` and `inverseE8M0`: scale code (i8) -> 2^(c-127) / 2^(127-c).
Value decodeE8M0(ImplicitLocOpBuilder &b, Value code);
Value inverseE8M0(ImplicitLocOpBuilder &b, Value code);

/// [MX1]/[MX2]/[MX3] `mxScaleCode`: block amax (f32) -> E8M0 code (i8).
Value mxScaleCode(ImplicitLocOpBuilder &b, Value amax,
                  const ::fp4train::numerics::MiniFloatFormat &element,
                  bool rceil);

/// [NV1] `nvfp4GlobalScale`: amax_tensor -> (S_enc, S_dec).
std::pair<Value, Value> nvfp4GlobalScale(ImplicitLocOpBuilder &b, Value amax);
/// [NV1] `nvfp4BlockScaleCode` and `nvfp4ElementScale`.
Value nvfp4BlockScaleCode(ImplicitLocOpBuilder &b, Value amaxBlock,
                          Value globalEncode);
Value nvfp4ElementScale(ImplicitLocOpBuilder &b, Value scaleCode,
                        Value globalDecode);

/// Magnitude bits of an f32 (sign cleared) as i32: the key of `absMax`.
Value magnitudeBits(ImplicitLocOpBuilder &b, Value x);

/// Philox4x32-10 (Random123) on counter words c[0..3] and key words k[0..1],
/// all i32; returns the four result words.
std::array<Value, 4> philox4x32_10(ImplicitLocOpBuilder &b,
                                   std::array<Value, 4> counter,
                                   std::array<Value, 2> key);

/// [SR1] `stochasticRoundingWord(seed, index)`, seed and index i64.
Value stochasticRoundingWord(ImplicitLocOpBuilder &b, Value seed, Value index);

/// [H1] Entry j (index) of `randomHadamardSigns(n, seed, step)` as ±1.0 f32.
Value randomHadamardSign(ImplicitLocOpBuilder &b, Value seed, Value step,
                         Value j);

/// The exact value of a finite element code as a signed integer of `intType`:
/// decode(code) · 2^fractionBits, where fractionBits = bias - 1 + mantissa
/// bits (1, 9, 16 for E2M1, E4M3FN, E5M2), as in the [GEMM1] reference.
Value elementToScaledInteger(
    ImplicitLocOpBuilder &b, Value code,
    const ::fp4train::numerics::MiniFloatFormat &format, Type intType);
int getFractionBits(const ::fp4train::numerics::MiniFloatFormat &format);

/// `roundScaledIntegerToFloat`: value · 2^exponent rounded once to f32 (RNE,
/// subnormals included). `value` is a signed integer of any width,
/// `exponent` an i32.
Value roundScaledIntegerToFloat(ImplicitLocOpBuilder &b, Value value,
                                Value exponent);

} // namespace mlir::fp4train::codecs

#endif // FP4TRAIN_CONVERSION_FP4TRAINCOMMON_CODECS_H
