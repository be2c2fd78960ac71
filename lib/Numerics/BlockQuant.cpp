//===- BlockQuant.cpp - MX and NVFP4 block quantization -------------------===//
//
// The quantizer has one block kernel, templated on the element format, the
// scaling family (MX or NV) and the rounding, and two drivers: a fast one for
// blocks that are contiguous in memory (1-D blocks along the last axis, the
// layout of every training operand), compiled once per instruction set, and a
// gathering one for any other axis and for 2-D tiles.
//
//===----------------------------------------------------------------------===//

#include "fp4train/Numerics/BlockQuant.h"

#include "BlockLayout.h"
#include "Simd.h"
#include "fp4train/Numerics/Parallel.h"
#include "fp4train/Numerics/Philox.h"

#include <algorithm>
#include <atomic>
#include <cfloat>
#include <cmath>
#include <string>

namespace fp4train::numerics {

//===----------------------------------------------------------------------===//
// Names and properties
//===----------------------------------------------------------------------===//

ElementType getElementType(Format format) {
  switch (format) {
  case Format::MXFP4:
  case Format::NVFP4:
    return ElementType::E2M1;
  case Format::MXFP8E4M3:
    return ElementType::E4M3FN;
  case Format::MXFP8E5M2:
    return ElementType::E5M2;
  }
  return ElementType::E2M1;
}

ScaleType getScaleType(Format format) {
  return format == Format::NVFP4 ? ScaleType::E4M3FN : ScaleType::E8M0;
}

int64_t getDefaultBlockSize(Format format) {
  return format == Format::NVFP4 ? 16 : 32;
}

uint8_t getMaxFiniteCode(ElementType type) {
  return encodeElement(type, maxFiniteValue(type));
}

static constexpr std::string_view kFormatNames[] = {"mxfp4", "nvfp4",
                                                    "mxfp8-e4m3", "mxfp8-e5m2"};
static constexpr std::string_view kScaleModeNames[] = {"floor", "rceil"};
static constexpr std::string_view kRoundingNames[] = {"rne", "sr"};

std::string_view getFormatName(Format format) {
  return kFormatNames[unsigned(format)];
}
std::string_view getScaleModeName(ScaleMode mode) {
  return kScaleModeNames[unsigned(mode)];
}
std::string_view getRoundingName(Rounding rounding) {
  return kRoundingNames[unsigned(rounding)];
}

/// Looks `name` up in a table of spellings indexed by enumerator value.
template <typename Enum, size_t N>
static std::optional<Enum> parseName(const std::string_view (&names)[N],
                                     std::string_view name) {
  for (size_t i = 0; i < N; ++i)
    if (names[i] == name)
      return Enum(i);
  return std::nullopt;
}

std::optional<Format> parseFormat(std::string_view name) {
  return parseName<Format>(kFormatNames, name);
}
std::optional<ScaleMode> parseScaleMode(std::string_view name) {
  return parseName<ScaleMode>(kScaleModeNames, name);
}
std::optional<Rounding> parseRounding(std::string_view name) {
  return parseName<Rounding>(kRoundingNames, name);
}

//===----------------------------------------------------------------------===//
// Per-block and per-element primitives
//===----------------------------------------------------------------------===//

/// Sign-cleared f32 bits: as unsigned integers they order like the magnitudes,
/// with Inf above every finite value and NaNs above Inf.
static inline FP4TRAIN_ALWAYS_INLINE uint32_t magnitudeBits(float value) {
  return floatToBits(value) & 0x7FFFFFFFu;
}

FP4TRAIN_HOT_CLONES
float absMax(const float *data, int64_t count) {
  uint32_t maxBits = 0;
  for (int64_t i = 0; i < count; ++i)
    maxBits = std::max(maxBits, magnitudeBits(data[i]));
  return bitsToFloat(maxBits);
}

uint8_t mxScaleCode(float amax, ElementType type, ScaleMode mode) {
  const MiniFloatFormat &format = getFormat(type);
  uint32_t bits = magnitudeBits(amax);
  // [MX3] NaN or Inf anywhere in the block.
  if (bits >= 0x7F800000u)
    return 0xFF;
  // [MX1] The biased exponent field is floor(log2 amax) + 127 for normals;
  // subnormals and zero (field 0) land below -127 - emax and clamp to 0x00.
  int32_t code = int32_t(bits >> 23) - format.maxExponent;
  // [MX2] amax / maxFinite needs one more binade exactly when amax's
  // significand exceeds maxFinite's (1.5 for E2M1, 1.75 for the FP8 formats).
  if (mode == ScaleMode::RCeil &&
      (bits & 0x7FFFFFu) > (format.maxFiniteF32Bits & 0x7FFFFFu))
    ++code;
  return uint8_t(std::clamp(code, 0, 254));
}

/// NaN-propagating minimum, as [NV1]'s reference (PyTorch) computes it.
static inline FP4TRAIN_ALWAYS_INLINE float minPropagatingNaN(float a, float b) {
  return std::isnan(a) || a < b ? a : b;
}

NvGlobalScale nvfp4GlobalScale(float amaxTensor) {
  // [NV1] 448 · 6 = 2688 is exact in f32.
  float encode = minPropagatingNaN(2688.0f / amaxTensor, FLT_MAX);
  if (encode == 0.0f)
    encode = 1.0f;
  return {encode, 1.0f / encode};
}

float teGemmAlpha(float amaxA, float amaxB) {
  return (amaxA * amaxB) * kTEGemmAlphaFactor;
}

uint8_t nvfp4BlockScaleCode(float amaxBlock, float globalEncodeScale) {
  // [NV1] The clamp to ±448 is the satfinite of the E4M3 encoder.
  float scaled = amaxBlock * (globalEncodeScale * (1.0f / 6.0f));
  return encodeE4M3FN(minPropagatingNaN(scaled, FLT_MAX));
}

float nvfp4ElementScale(uint8_t blockScaleCode, float globalDecodeScale) {
  // [NV1] A zero block scale gives 1/0 = Inf, limited to FLT_MAX.
  return minPropagatingNaN(
      1.0f / (decodeE4M3FN(blockScaleCode) * globalDecodeScale), FLT_MAX);
}

float dequantizeElement(Format format, uint8_t code, uint8_t scaleCode,
                        float globalDecodeScale) {
  float value = decodeElement(getElementType(format), code);
  if (format == Format::NVFP4)
    return value * decodeE4M3FN(scaleCode) * globalDecodeScale; // [NV1]
  return value * decodeE8M0(scaleCode);                         // [MX1]
}

Expected<QuantConfig> validateConfig(const std::vector<int64_t> &shape,
                                     const QuantConfig &config) {
  QuantConfig result = config;
  int64_t rank = int64_t(shape.size());
  if (rank == 0)
    return makeError(
        "cannot quantize a rank-0 tensor: blocks need a dimension");
  for (int64_t dim = 0; dim < rank; ++dim)
    if (shape[dim] < 0)
      return makeError("dimension " + std::to_string(dim) +
                       " has negative size " + std::to_string(shape[dim]));
  if (config.blockSize != 16 && config.blockSize != 32)
    return makeError("block size must be 16 or 32, got " +
                     std::to_string(config.blockSize));
  if (config.axis < -rank || config.axis >= rank)
    return makeError("axis " + std::to_string(config.axis) +
                     " is out of range for a rank-" + std::to_string(rank) +
                     " tensor");
  result.axis = config.axis < 0 ? config.axis + rank : config.axis;
  if (config.rounding == Rounding::Stochastic &&
      getElementType(config.format) != ElementType::E2M1)
    return makeError("stochastic rounding is only defined for E2M1 formats "
                     "(mxfp4, nvfp4), not " +
                     std::string(getFormatName(config.format)));
  if (config.amax) {
    if (config.format != Format::NVFP4)
      return makeError("a supplied amax only applies to nvfp4");
    if (!(*config.amax >= 0.0f))
      return makeError("the supplied amax must be a non-negative number");
  }
  if (!config.logicalShape.empty() || !config.origin.empty()) {
    if (int64_t(config.logicalShape.size()) != rank ||
        int64_t(config.origin.size()) != rank)
      return makeError("the logical shape and the origin of a part need one "
                       "entry per dimension (" +
                       std::to_string(rank) + ")");
    for (int64_t dim = 0; dim < rank; ++dim)
      if (config.origin[dim] < 0 ||
          config.origin[dim] > config.logicalShape[dim] - shape[dim])
        return makeError("dimension " + std::to_string(dim) + " (size " +
                         std::to_string(shape[dim]) + ", origin " +
                         std::to_string(config.origin[dim]) +
                         ") does not lie in the logical size " +
                         std::to_string(config.logicalShape[dim]));
  }
  std::vector<int64_t> blockedDims = {result.axis};
  if (config.twoDimensional) {
    if (rank < 2)
      return makeError("2-D blocks need a tensor of rank 2 or more");
    if (result.axis < rank - 2)
      return makeError("2-D blocks tile the last two dimensions; axis " +
                       std::to_string(result.axis) + " is not one of them");
    blockedDims = {rank - 2, rank - 1};
  }
  for (int64_t dim : blockedDims)
    if (shape[dim] % config.blockSize != 0)
      return makeError("dimension " + std::to_string(dim) + " (size " +
                       std::to_string(shape[dim]) +
                       ") is not divisible by the block size " +
                       std::to_string(config.blockSize));
  return result;
}

//===----------------------------------------------------------------------===//
// Block kernel
//===----------------------------------------------------------------------===//

namespace {

/// [SH3] The row-major position in the logical tensor of each element of a
/// part of it (the identity for a whole tensor).
class LogicalPosition {
public:
  LogicalPosition(const std::vector<int64_t> &shape, const QuantConfig &config)
      : shape(shape) {
    if (config.logicalShape.empty())
      return;
    logicalStrides.assign(shape.size(), 1);
    for (int64_t dim = int64_t(shape.size()) - 2; dim >= 0; --dim)
      logicalStrides[dim] =
          logicalStrides[dim + 1] * uint64_t(config.logicalShape[dim + 1]);
    for (size_t dim = 0; dim < shape.size(); ++dim)
      base += uint64_t(config.origin[dim]) * logicalStrides[dim];
  }

  bool isIdentity() const { return logicalStrides.empty(); }

  /// The logical position of the element at row-major `offset` in the part.
  uint64_t operator()(int64_t offset) const {
    if (isIdentity())
      return uint64_t(offset);
    uint64_t position = base;
    for (int64_t dim = int64_t(shape.size()) - 1; dim >= 0; --dim) {
      position += uint64_t(offset % shape[dim]) * logicalStrides[dim];
      offset /= shape[dim];
    }
    return position;
  }

private:
  const std::vector<int64_t> &shape;
  std::vector<uint64_t> logicalStrides;
  uint64_t base = 0;
};

/// Per-tensor constants of the block kernel.
struct KernelParams {
  ScaleMode scaleMode;
  uint64_t seed;
  const LogicalPosition *position;
  NvGlobalScale global;
  /// NVFP4: nvfp4ElementScale(code, S_dec) for every block scale code, so the
  /// per-block division happens once per tensor instead.
  float elementScales[256];
};

/// Compile-time selection of a kernel instance.
template <ElementType Element, bool IsNV, bool IsSR> struct KernelKind {
  static constexpr ElementType element = Element;
  static constexpr bool isNV = IsNV;
  static constexpr bool isSR = IsSR;
};

} // namespace

/// Calls `fn(KernelKind<...>{})` for the kernel instance of a format and
/// rounding (validateConfig has ruled out SR for the FP8 formats).
template <typename Fn>
static inline FP4TRAIN_ALWAYS_INLINE auto
visitKernelKind(Format format, Rounding rounding, Fn &&fn) {
  bool sr = rounding == Rounding::Stochastic;
  switch (format) {
  case Format::NVFP4:
    return sr ? fn(KernelKind<ElementType::E2M1, true, true>{})
              : fn(KernelKind<ElementType::E2M1, true, false>{});
  case Format::MXFP8E4M3:
    return fn(KernelKind<ElementType::E4M3FN, false, false>{});
  case Format::MXFP8E5M2:
    return fn(KernelKind<ElementType::E5M2, false, false>{});
  case Format::MXFP4:
    break;
  }
  return sr ? fn(KernelKind<ElementType::E2M1, false, true>{})
            : fn(KernelKind<ElementType::E2M1, false, false>{});
}

/// Largest magnitude of a block, as sign-cleared bits (see absMax).
template <int64_t Count = 0>
static inline FP4TRAIN_ALWAYS_INLINE float blockAbsMax(const float *x,
                                                       int64_t count = Count) {
  uint32_t amaxBits = 0;
  for (int64_t j = 0; j < count; ++j)
    amaxBits = std::max(amaxBits, magnitudeBits(x[j]));
  return bitsToFloat(amaxBits);
}

/// The scale code of a block: [MX1]/[MX2] or [NV1] s_blk. Branch free, so a
/// loop over blocks vectorizes.
template <typename Kind>
static inline FP4TRAIN_ALWAYS_INLINE uint8_t
blockScaleCode(float amax, const KernelParams &params) {
  if constexpr (Kind::isNV)
    return nvfp4BlockScaleCode(amax, params.global.encode);
  else
    return mxScaleCode(amax, Kind::element, params.scaleMode);
}

/// The f32 factor that maps a block's elements into the element range:
/// 2^-e ([MX1]/[MX2]) or enc ([NV1], precomputed per tensor).
template <typename Kind>
static inline FP4TRAIN_ALWAYS_INLINE float
blockMultiplier(uint8_t scale, const KernelParams &params) {
  if constexpr (Kind::isNV)
    return params.elementScales[scale];
  else
    return inverseE8M0(scale);
}

/// Encodes the elements of one block given its scale and multiplier.
/// `randomWords` holds the [SR1] word of each element (unused for RNE).
template <typename Kind, int64_t Count = 0>
static inline FP4TRAIN_ALWAYS_INLINE void
encodeBlock(const float *x, const uint32_t *randomWords, uint8_t scale,
            float multiplier, uint8_t *codes, int64_t count = Count) {
  // [MX3] The whole block decodes to NaN through its scale; its element codes
  // are defined as 0.
  if (!Kind::isNV && scale == 0xFF) {
    std::fill(codes, codes + count, uint8_t(0));
    return;
  }
  // [MX1]/[NV1] The scaled value is one f32 product; the encoders saturate,
  // which is the clamp to ±max of both rules.
  for (int64_t j = 0; j < count; ++j) {
    float v = x[j] * multiplier;
    if constexpr (Kind::isSR)
      codes[j] = encodeE2M1Stochastic(v, randomWords[j]); // [SR1]
    else
      codes[j] = detail::encodeRNESat<getFormat(Kind::element)>(v);
  }
}

/// Largest magnitudes of 8 consecutive contiguous blocks, as sign-cleared
/// bits, lane b for block b. Each block is first reduced to one vector of 8
/// partial maxima, then the 8 vectors are reduced together by a transpose in
/// three shuffle-and-max steps, instead of 8 separate horizontal reductions.
/// Integer max is exact and order independent, so this equals blockAbsMax.
template <int64_t BlockSize>
static inline FP4TRAIN_ALWAYS_INLINE simd::U32x8 blockAbsMax8(const float *x) {
  using simd::U32x8;
  const U32x8 magnitudeMask = U32x8{} + 0x7FFFFFFFu;
  U32x8 m[8];
  for (int64_t b = 0; b < 8; ++b) {
    m[b] = simd::load<U32x8>(x + b * BlockSize) & magnitudeMask;
    for (int64_t v = 8; v < BlockSize; v += 8)
      m[b] = simd::max(m[b], simd::load<U32x8>(x + b * BlockSize + v) &
                                 magnitudeMask);
  }
  // Each step halves the partial maxima per block and doubles the blocks per
  // vector; the first two shuffle within 128-bit halves (cheap on AVX2).
  U32x8 pairs[4], quads[2];
  for (int64_t p = 0; p < 4; ++p)
    pairs[p] = simd::max(__builtin_shufflevector(m[2 * p], m[2 * p + 1], 0, 1,
                                                 8, 9, 4, 5, 12, 13),
                         __builtin_shufflevector(m[2 * p], m[2 * p + 1], 2, 3,
                                                 10, 11, 6, 7, 14, 15));
  for (int64_t q = 0; q < 2; ++q)
    quads[q] = simd::max(__builtin_shufflevector(pairs[2 * q], pairs[2 * q + 1],
                                                 0, 2, 8, 10, 4, 6, 12, 14),
                         __builtin_shufflevector(pairs[2 * q], pairs[2 * q + 1],
                                                 1, 3, 9, 11, 5, 7, 13, 15));
  return simd::max(
      __builtin_shufflevector(quads[0], quads[1], 0, 1, 2, 3, 8, 9, 10, 11),
      __builtin_shufflevector(quads[0], quads[1], 4, 5, 6, 7, 12, 13, 14, 15));
}

template <typename Kind, int64_t BlockSize>
static inline FP4TRAIN_ALWAYS_INLINE void
quantizeContiguousBlocks(const float *data, int64_t begin, int64_t end,
                         const KernelParams &params, uint8_t *codes,
                         uint8_t *scales) {
  // A group of blocks goes through three loops, each vectorized its own way:
  // block amaxes (8 blocks per transposed reduction), scale codes (one lane
  // per block: the [NV1] s_blk chain is long, and this overlaps 8 of them),
  // then the elements of each block.
  constexpr int64_t Group = 16;
  uint32_t randomWords[Group * BlockSize];
  uint32_t amaxBits[Group];
  for (int64_t first = begin; first < end; first += Group) {
    int64_t count = std::min(Group, end - first);
    const float *x = data + first * BlockSize;
    int64_t g = 0;
    for (; g + 8 <= count; g += 8)
      simd::store(amaxBits + g, blockAbsMax8<BlockSize>(x + g * BlockSize));
    // Vectorize each remaining block's amax (contiguous) rather than this
    // loop (which would gather one element per block).
    FP4TRAIN_NO_VECTORIZE
    for (; g < count; ++g)
      amaxBits[g] = floatToBits(blockAbsMax<BlockSize>(x + g * BlockSize));
    for (g = 0; g < count; ++g)
      scales[first + g] =
          blockScaleCode<Kind>(bitsToFloat(amaxBits[g]), params);
    if constexpr (Kind::isSR) {
      // A block lies in one row of the last dimension, so its elements are
      // consecutive in the logical tensor as well.
      if (params.position->isIdentity())
        fillStochasticRoundingWords(params.seed, uint64_t(first * BlockSize),
                                    count * BlockSize, randomWords);
      else
        for (g = 0; g < count; ++g)
          fillStochasticRoundingWords(
              params.seed, (*params.position)((first + g) * BlockSize),
              BlockSize, randomWords + g * BlockSize);
    }
    // The multiplier is a table lookup for NVFP4, cheaper as a scalar load
    // per block than as a gather in the vectorized scale loop.
    for (g = 0; g < count; ++g) {
      uint8_t scale = scales[first + g];
      encodeBlock<Kind, BlockSize>(x + g * BlockSize,
                                   randomWords + g * BlockSize, scale,
                                   blockMultiplier<Kind>(scale, params),
                                   codes + (first + g) * BlockSize);
    }
  }
}

/// The hot path: blocks [begin, end) of a tensor whose blocks are contiguous.
FP4TRAIN_HOT_CLONES
static void quantizeContiguous(const float *data, int64_t begin, int64_t end,
                               const QuantConfig &config,
                               const KernelParams &params, uint8_t *codes,
                               uint8_t *scales) {
  visitKernelKind(config.format, config.rounding,
                  [&](auto kind) FP4TRAIN_ALWAYS_INLINE {
                    using Kind = decltype(kind);
                    if (config.blockSize == 16)
                      quantizeContiguousBlocks<Kind, 16>(data, begin, end,
                                                         params, codes, scales);
                    else
                      quantizeContiguousBlocks<Kind, 32>(data, begin, end,
                                                         params, codes, scales);
                  });
}

/// Any layout: gathers each block, quantizes it and scatters the codes.
static void quantizeGathered(const float *data, const BlockLayout &layout,
                             int64_t begin, int64_t end,
                             const QuantConfig &config,
                             const KernelParams &params, uint8_t *codes,
                             uint8_t *scales) {
  int64_t size = layout.size();
  std::vector<float> x(size);
  std::vector<uint32_t> randomWords(size);
  std::vector<uint8_t> blockCodes(size);
  bool sr = config.rounding == Rounding::Stochastic;
  for (int64_t block = begin; block < end; ++block) {
    layout.forEachElement(block, [&](int64_t k, int64_t offset) {
      x[k] = data[offset];
      if (sr)
        randomWords[k] =
            stochasticRoundingWord(params.seed, (*params.position)(offset));
    });
    visitKernelKind(config.format, config.rounding, [&](auto kind) {
      using Kind = decltype(kind);
      uint8_t scale = blockScaleCode<Kind>(blockAbsMax(x.data(), size), params);
      scales[block] = scale;
      encodeBlock<Kind>(x.data(), randomWords.data(), scale,
                        blockMultiplier<Kind>(scale, params), blockCodes.data(),
                        size);
    });
    layout.forEachElement(block, [&](int64_t k, int64_t offset) {
      codes[offset] = blockCodes[k];
    });
  }
}

/// [NV1] amax_tensor of the data, NaN-propagating (see absMax).
static float parallelAbsMax(const float *data, int64_t count) {
  std::atomic<uint32_t> maxBits{0};
  parallelFor(count, 1 << 16, [&](int64_t begin, int64_t end) {
    // The encoding pass splits the blocks the same way and walks each range
    // forward, so walking it backward here leaves the data it reads first in
    // the cache. The integer max does not depend on the order.
    constexpr int64_t Chunk = 1 << 14;
    uint32_t bits = 0;
    for (int64_t chunkEnd = end; chunkEnd > begin; chunkEnd -= Chunk) {
      int64_t chunkBegin = std::max(begin, chunkEnd - Chunk);
      bits = std::max(
          bits, floatToBits(absMax(data + chunkBegin, chunkEnd - chunkBegin)));
    }
    uint32_t seen = maxBits.load();
    while (bits > seen && !maxBits.compare_exchange_weak(seen, bits)) {
    }
  });
  return bitsToFloat(maxBits.load());
}

std::vector<int64_t> getScaleShape(const std::vector<int64_t> &shape,
                                   const QuantConfig &validated) {
  std::vector<int64_t> scaleShape = shape;
  if (validated.twoDimensional) {
    scaleShape[shape.size() - 2] /= validated.blockSize;
    scaleShape[shape.size() - 1] /= validated.blockSize;
  } else {
    scaleShape[validated.axis] /= validated.blockSize;
  }
  return scaleShape;
}

Status quantizeInto(const float *data, const std::vector<int64_t> &shape,
                    const QuantConfig &config, QuantizedTensor &result) {
  Expected<QuantConfig> validated = validateConfig(shape, config);
  if (!validated)
    return validated.error();

  result.config = *validated;
  result.shape = shape;
  result.amax = 0.0f;
  result.globalDecodeScale = 1.0f;
  int64_t numElements = getNumElements(shape);
  result.codes.resize(numElements);
  result.scaleShape = getScaleShape(shape, result.config);
  BlockLayout layout = makeBlockLayout(shape, result.config.axis,
                                       config.blockSize, config.twoDimensional);
  result.scales.resize(layout.numBlocks);

  LogicalPosition position(shape, result.config);
  KernelParams params{
      config.scaleMode, config.seed, &position, {1.0f, 1.0f}, {}};
  if (config.format == Format::NVFP4) {
    result.amax =
        config.amax ? *config.amax : parallelAbsMax(data, numElements);
    params.global = nvfp4GlobalScale(result.amax);
    result.globalDecodeScale = params.global.decode;
    for (unsigned code = 0; code < 256; ++code)
      params.elementScales[code] =
          nvfp4ElementScale(uint8_t(code), params.global.decode);
  }

  const QuantConfig &normalized = result.config;
  uint8_t *codes = result.codes.data();
  uint8_t *scales = result.scales.data();
  int64_t grain = std::max<int64_t>(1, 4096 / layout.size());
  parallelFor(layout.numBlocks, grain, [&](int64_t begin, int64_t end) {
    if (layout.isContiguous())
      quantizeContiguous(data, begin, end, normalized, params, codes, scales);
    else
      quantizeGathered(data, layout, begin, end, normalized, params, codes,
                       scales);
  });
  return Success{};
}

Expected<QuantizedTensor> quantize(const float *data,
                                   const std::vector<int64_t> &shape,
                                   const QuantConfig &config) {
  QuantizedTensor result;
  Status status = quantizeInto(data, shape, config, result);
  if (!status)
    return status.error();
  return result;
}

std::vector<float> dequantize(const QuantizedTensor &tensor) {
  BlockLayout layout =
      makeBlockLayout(tensor.shape, tensor.config.axis, tensor.config.blockSize,
                      tensor.config.twoDimensional);
  std::vector<float> values(tensor.codes.size());
  Format format = tensor.config.format;
  parallelFor(layout.numBlocks, std::max<int64_t>(1, 4096 / layout.size()),
              [&](int64_t begin, int64_t end) {
                for (int64_t block = begin; block < end; ++block) {
                  uint8_t scale = tensor.scales[block];
                  layout.forEachElement(block, [&](int64_t, int64_t offset) {
                    values[offset] =
                        dequantizeElement(format, tensor.codes[offset], scale,
                                          tensor.globalDecodeScale);
                  });
                }
              });
  return values;
}

} // namespace fp4train::numerics
