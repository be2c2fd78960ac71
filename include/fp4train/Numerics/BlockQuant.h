//===- BlockQuant.h - MX and NVFP4 block quantization ----------*- C++ -*-===//
//
// Block-scaled quantization of N-D row-major f32 tensors to MXFP4, NVFP4 and
// MXFP8 ([MX1]-[MX3], [NV1], [SR1]) and the exact inverse. The per-block and
// per-element primitives are public so that other implementations (the MLIR
// CPU expansion, GPU lane models) can be tested against them piece by piece.
//
// Layout: `codes` has one uint8 element code per input element, in the input's
// shape. `scales` holds one scale code per block, in the input's shape with the
// blocked dimension divided by the block size (both of the last two dimensions
// for 2-D tiles). For NVFP4 the per-tensor amax and S_dec are returned too.
//
//===----------------------------------------------------------------------===//

#ifndef FP4TRAIN_NUMERICS_BLOCKQUANT_H
#define FP4TRAIN_NUMERICS_BLOCKQUANT_H

#include "fp4train/Numerics/Error.h"
#include "fp4train/Numerics/Formats.h"

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

namespace fp4train::numerics {

/// The block formats of [FMT1] (docs/semantics.md).
enum class Format : uint8_t { MXFP4, NVFP4, MXFP8E4M3, MXFP8E5M2 };

/// How an MX block's E8M0 scale is chosen: [MX1] `floor` or [MX2] `rceil`.
enum class ScaleMode : uint8_t { Floor, RCeil };

/// Element rounding: round-to-nearest-even or [SR1] stochastic rounding.
enum class Rounding : uint8_t { NearestEven, Stochastic };

ElementType getElementType(Format format);
ScaleType getScaleType(Format format);
/// Default block size: 16 for NVFP4, 32 for the MX formats.
int64_t getDefaultBlockSize(Format format);
/// Largest finite element code (0x7, 0x7E or 0x7B).
uint8_t getMaxFiniteCode(ElementType type);

/// Spellings used by the tools: mxfp4, nvfp4, mxfp8-e4m3, mxfp8-e5m2;
/// floor, rceil; rne, sr.
std::string_view getFormatName(Format format);
std::string_view getScaleModeName(ScaleMode mode);
std::string_view getRoundingName(Rounding rounding);
std::optional<Format> parseFormat(std::string_view name);
std::optional<ScaleMode> parseScaleMode(std::string_view name);
std::optional<Rounding> parseRounding(std::string_view name);

/// What to quantize and how.
struct QuantConfig {
  Format format = Format::MXFP4;
  /// MX formats only.
  ScaleMode scaleMode = ScaleMode::Floor;
  /// Elements per block along a blocked dimension: 16 or 32.
  int64_t blockSize = 32;
  /// When set, blocks are blockSize×blockSize tiles over the last two
  /// dimensions (the NVFP4 weight layout); `axis` must then name one of those
  /// two dimensions, and the tiling is the same whichever it names.
  bool twoDimensional = false;
  /// The blocked dimension of 1-D blocks; negative values count from the end.
  int64_t axis = -1;
  /// Stochastic rounding is defined for E2M1 (mxfp4, nvfp4) only.
  Rounding rounding = Rounding::NearestEven;
  /// [SR1] Philox key.
  uint64_t seed = 0;
  /// NVFP4 only: amax_tensor supplied by the caller (delayed scaling) instead
  /// of computed from the data.
  std::optional<float> amax;
  /// [SH3] When the tensor is one part (a shard) of a larger logical tensor:
  /// the logical tensor's shape and where this part starts in it. [SR1]
  /// then indexes every element by its row-major position in the logical
  /// tensor, so the parts of a tensor quantize to the codes of the whole.
  /// Empty: the tensor is the whole logical tensor.
  std::vector<int64_t> logicalShape;
  std::vector<int64_t> origin;
};

/// A quantized tensor. `config.axis` is normalized to a non-negative value.
struct QuantizedTensor {
  QuantConfig config;
  std::vector<int64_t> shape;
  std::vector<uint8_t> codes;
  std::vector<int64_t> scaleShape;
  std::vector<uint8_t> scales;
  /// NVFP4 only: amax_tensor (computed or supplied) and S_dec of [NV1].
  float amax = 0.0f;
  float globalDecodeScale = 1.0f;
};

/// Checks `config` against `shape` and returns the normalized configuration,
/// or an error naming the offending option or dimension.
Expected<QuantConfig> validateConfig(const std::vector<int64_t> &shape,
                                     const QuantConfig &config);

/// The shape of the scale codes of a tensor of `shape` quantized with
/// `validated` (a configuration returned by validateConfig).
std::vector<int64_t> getScaleShape(const std::vector<int64_t> &shape,
                                   const QuantConfig &validated);

/// Quantizes a row-major tensor of the given shape. Multithreaded over blocks;
/// the result does not depend on the thread count.
Expected<QuantizedTensor> quantize(const float *data,
                                   const std::vector<int64_t> &shape,
                                   const QuantConfig &config);

/// Same as quantize, writing into `result` and reusing its buffers when they
/// are large enough, so repeated quantization (training steps, benchmarks)
/// does not pay for fresh zero-filled pages every time.
Status quantizeInto(const float *data, const std::vector<int64_t> &shape,
                    const QuantConfig &config, QuantizedTensor &result);

/// Dequantizes every element ([MX1]/[NV1] decode rules, see
/// dequantizeElement).
std::vector<float> dequantize(const QuantizedTensor &tensor);

//===----------------------------------------------------------------------===//
// Per-block and per-element primitives
//===----------------------------------------------------------------------===//

/// Largest magnitude of data[0..count), NaN-propagating: computed as the
/// integer maximum of the f32 bit patterns with the sign cleared, so any NaN
/// wins over Inf, which wins over every finite value. Exact and
/// order-independent.
float absMax(const float *data, int64_t count);

/// E8M0 scale code of an MX block whose largest magnitude is `amax`:
///  - [MX1] floor: e = floor(log2 amax) - emax, from the exponent bits;
///  - [MX2] rceil: e = ceil(log2(amax / maxFinite)), computed exactly as
///    floor(log2 amax) - emax + (mantissa(amax) > mantissa(maxFinite));
/// clamped to [-127, 127] and biased by 127; amax = 0 gives 0x00 and a NaN or
/// Inf amax gives 0xFF ([MX3]).
uint8_t mxScaleCode(float amax, ElementType type, ScaleMode mode);

/// [NV1] The per-tensor encode and decode scales.
struct NvGlobalScale {
  /// S_enc = min(448·6 / amax_tensor, FLT_MAX), replaced by 1 when it is 0.
  float encode;
  /// S_dec = 1 / S_enc.
  float decode;
};
NvGlobalScale nvfp4GlobalScale(float amaxTensor);

/// [TE2] TransformerEngine's factor of an NVFP4 GEMM, in place of [GEMM1]'s
/// g = S_dec,a · S_dec,b: alpha = (amax_a · amax_b) · f32(1 / (6² · 448²)),
/// each product rounded to f32 (the reciprocal of 7225344 rounded once,
/// from double, as TE's constant is).
inline constexpr float kTEGemmAlphaFactor =
    float(1.0 / (6.0 * 6.0 * 448.0 * 448.0));
float teGemmAlpha(float amaxA, float amaxB);

/// [NV1] s_blk = e4m3_rne(clamp(min(amaxBlock · (S_enc · (1/6)), FLT_MAX),
/// -448, 448)), each product rounded to f32, NaN propagating.
uint8_t nvfp4BlockScaleCode(float amaxBlock, float globalEncodeScale);

/// [NV1] enc = min(1 / (f32(s_blk) · S_dec), FLT_MAX), the factor that maps a
/// block's elements into E2M1 range; NaN when s_blk is NaN.
float nvfp4ElementScale(uint8_t blockScaleCode, float globalDecodeScale);

/// The value an element code represents in its block:
///  - MX: decode(code) · 2^(scaleCode - 127), one exact f32 product; a 0xFF
///    scale gives NaN;
///  - NVFP4: (e2m1(code) · e4m3(scaleCode)) · S_dec, left to right in f32 (the
///    first product is exact, the second rounds once).
float dequantizeElement(Format format, uint8_t code, uint8_t scaleCode,
                        float globalDecodeScale);

} // namespace fp4train::numerics

#endif // FP4TRAIN_NUMERICS_BLOCKQUANT_H
