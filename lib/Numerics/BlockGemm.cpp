//===- BlockGemm.cpp - Reference block-scaled matmul ([GEMM1]) ------------===//
//
// Every finite element value is an integer multiple of the format's smallest
// subnormal (2^-1 for E2M1, 2^-9 for E4M3FN, 2^-16 for E5M2) and every finite
// scale an integer times a power of two, so a block term sa·sb·P is an exact
// integer times a power of two: 32-bit for E2M1 pairs, 64-bit for FP8 pairs
// with at least one E4M3 side, 128-bit for E5M2 pairs. It is rounded to f32
// exactly once.
//
// This is the semantic reference. blockScaledGemm hands the E2M1 and FP8
// pairs that the packed kernels handle to them (BlockGemmKernels.cpp,
// BlockGemmFP8.cpp), which give the same bits much faster.
//
//===----------------------------------------------------------------------===//

#include "fp4train/Numerics/BlockGemm.h"

#include "PackedGemm.h"

#include "fp4train/Numerics/BlockGemmKernels.h"
#include "fp4train/Numerics/Parallel.h"

#include <cmath>
#include <string>
#include <vector>

namespace fp4train::numerics {

Expected<GemmOperand> makeGemmOperand(const QuantizedTensor &tensor) {
  const QuantConfig &config = tensor.config;
  if (tensor.shape.size() != 2)
    return makeError("a gemm operand must have rank 2, got rank " +
                     std::to_string(tensor.shape.size()));
  if (!config.twoDimensional && config.axis != 1)
    return makeError("a gemm operand must be blocked along its last "
                     "dimension (K)");
  GemmOperand operand;
  operand.codes = tensor.codes.data();
  operand.rows = tensor.shape[0];
  operand.k = tensor.shape[1];
  operand.elementType = getElementType(config.format);
  operand.scaleType = getScaleType(config.format);
  operand.blockSize = config.blockSize;
  operand.scales = tensor.scales.data();
  operand.scaleRowGroup = config.twoDimensional ? config.blockSize : 1;
  operand.scaleRowStride = operand.k / config.blockSize;
  operand.globalDecodeScale = tensor.globalDecodeScale;
  return operand;
}

float roundScaledIntegerToFloat(__int128 value, int exponent) {
  if (value == 0)
    return 0.0f;
  bool negative = value < 0;
  unsigned __int128 magnitude =
      negative ? ~(unsigned __int128)value + 1 : (unsigned __int128)value;
  uint64_t high = uint64_t(magnitude >> 64);
  int length = high ? 128 - __builtin_clzll(high)
                    : 64 - __builtin_clzll(uint64_t(magnitude));
  // Bits the f32 result keeps: 24, fewer when it lands among subnormals
  // (whose last bit weighs 2^-149).
  int leadingExponent = length - 1 + exponent;
  int precision = leadingExponent >= -126 ? 24 : 24 - (-126 - leadingExponent);
  int drop = length - precision;
  uint64_t kept;
  if (drop <= 0) {
    kept = uint64_t(magnitude);
    drop = 0;
  } else if (drop > length) {
    kept = 0; // Below half the smallest subnormal.
  } else {
    kept = uint64_t(magnitude >> drop);
    unsigned __int128 remainder =
        magnitude & (((unsigned __int128)1 << drop) - 1);
    unsigned __int128 half = (unsigned __int128)1 << (drop - 1);
    if (remainder > half || (remainder == half && (kept & 1)))
      ++kept;
  }
  // kept has at most 24 significant bits on the f32 grid at this exponent,
  // so the conversion and the scaling are exact (or overflow to Inf, which is
  // the RNE result there).
  float result = std::ldexp(float(kept), exponent + drop);
  return negative ? -result : result;
}

namespace {

/// Smallest subnormal exponent: value(code) = mantissa · 2^-fractionBits.
int getFractionBits(ElementType type) {
  return type == ElementType::E2M1 ? 1 : type == ElementType::E4M3FN ? 9 : 16;
}

/// An operand decoded once into integer mantissas and per-block scales.
struct DecodedOperand {
  const GemmOperand *operand;
  int64_t kBlocks;
  int fractionBits;
  std::vector<int64_t> mantissas;
  /// Per (row, kBlock): scale = scaleMantissa · 2^scaleExponent, and whether
  /// the scale and every element of the block are finite.
  std::vector<int64_t> scaleMantissas;
  std::vector<int32_t> scaleExponents;
  std::vector<uint8_t> finite;

  explicit DecodedOperand(const GemmOperand &op)
      : operand(&op), kBlocks(op.k / op.blockSize),
        fractionBits(getFractionBits(op.elementType)),
        mantissas(op.rows * op.k), scaleMantissas(op.rows * kBlocks),
        scaleExponents(op.rows * kBlocks), finite(op.rows * kBlocks) {
    int64_t table[256];
    bool tableFinite[256];
    for (int code = 0; code < 256; ++code) {
      float value = decodeElement(op.elementType, uint8_t(code));
      tableFinite[code] = std::isfinite(value);
      table[code] = tableFinite[code]
                        ? int64_t(std::ldexp(double(value), fractionBits))
                        : 0;
    }
    for (int64_t row = 0; row < op.rows; ++row) {
      for (int64_t kb = 0; kb < kBlocks; ++kb) {
        int64_t block = row * kBlocks + kb;
        bool blockFinite = true;
        for (int64_t k = kb * op.blockSize; k < (kb + 1) * op.blockSize; ++k) {
          uint8_t code = op.codes[row * op.k + k];
          mantissas[row * op.k + k] = table[code];
          blockFinite &= tableFinite[code];
        }
        uint8_t scaleCode =
            op.scales[row / op.scaleRowGroup * op.scaleRowStride + kb];
        if (op.scaleType == ScaleType::E8M0) {
          scaleMantissas[block] = 1;
          scaleExponents[block] = int32_t(scaleCode) - 127;
          blockFinite &= scaleCode != 0xFF;
        } else {
          float scale = decodeE4M3FN(scaleCode);
          blockFinite &= !std::isnan(scale);
          scaleMantissas[block] =
              blockFinite ? int64_t(std::ldexp(double(scale), 9)) : 0;
          scaleExponents[block] = -9;
        }
        finite[block] = blockFinite;
      }
    }
  }

  double scaleValue(int64_t block) const {
    uint8_t scaleCode =
        operand->scales[block / kBlocks / operand->scaleRowGroup *
                            operand->scaleRowStride +
                        block % kBlocks];
    return operand->scaleType == ScaleType::E8M0 ? decodeE8M0(scaleCode)
                                                 : decodeE4M3FN(scaleCode);
  }
};

/// A term with a NaN or Inf somewhere: the IEEE double evaluation.
float nonFiniteTerm(const DecodedOperand &a, const DecodedOperand &b, int64_t i,
                    int64_t j, int64_t kb) {
  int64_t blockSize = a.operand->blockSize, k = a.operand->k;
  double sum = 0.0;
  for (int64_t l = kb * blockSize; l < (kb + 1) * blockSize; ++l)
    sum += double(decodeElement(a.operand->elementType,
                                a.operand->codes[i * k + l])) *
           double(decodeElement(b.operand->elementType,
                                b.operand->codes[j * k + l]));
  return float(a.scaleValue(i * a.kBlocks + kb) *
               b.scaleValue(j * b.kBlocks + kb) * sum);
}

/// Rows [begin, end) of C, with block dot products accumulated in Acc.
template <typename Acc>
void gemmRows(const DecodedOperand &a, const DecodedOperand &b,
              const float *acc, float *c, int64_t begin, int64_t end) {
  int64_t n = b.operand->rows, k = a.operand->k;
  int64_t blockSize = a.operand->blockSize;
  int fractionBits = a.fractionBits + b.fractionBits;
  float g = a.operand->globalDecodeScale * b.operand->globalDecodeScale;
  for (int64_t i = begin; i < end; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      float total = 0.0f;
      for (int64_t kb = 0; kb < a.kBlocks; ++kb) {
        int64_t blockA = i * a.kBlocks + kb, blockB = j * b.kBlocks + kb;
        float term;
        if (a.finite[blockA] && b.finite[blockB]) {
          const int64_t *x = &a.mantissas[i * k + kb * blockSize];
          const int64_t *y = &b.mantissas[j * k + kb * blockSize];
          Acc dot = 0;
          for (int64_t l = 0; l < blockSize; ++l)
            dot += Acc(x[l]) * Acc(y[l]);
          term = roundScaledIntegerToFloat(
              __int128(dot) *
                  (a.scaleMantissas[blockA] * b.scaleMantissas[blockB]),
              a.scaleExponents[blockA] + b.scaleExponents[blockB] -
                  fractionBits);
        } else {
          term = nonFiniteTerm(a, b, i, j, kb);
        }
        total += term;
      }
      float base = acc ? acc[i * n + j] : 0.0f;
      c[i * n + j] = base + g * total;
    }
  }
}

} // namespace

Status blockScaledGemm(const GemmOperand &a, const GemmOperand &b,
                       const float *acc, float *c) {
  return blockScaledGemm(a, b, acc, c, getDefaultGemmKernel());
}

Status blockScaledGemm(const GemmOperand &a, const GemmOperand &b,
                       const float *acc, float *c, GemmKernel kernel) {
  if (a.k != b.k)
    return makeError("operands disagree on K: " + std::to_string(a.k) + " vs " +
                     std::to_string(b.k));
  if (a.blockSize != b.blockSize)
    return makeError(
        "operands disagree on the block size: " + std::to_string(a.blockSize) +
        " vs " + std::to_string(b.blockSize));
  if (a.blockSize <= 0 || a.k % a.blockSize != 0)
    return makeError("K (" + std::to_string(a.k) +
                     ") is not divisible by the block size " +
                     std::to_string(a.blockSize));
  if (!isGemmKernelAvailable(kernel))
    return makeError("this CPU cannot run the " +
                     std::string(getGemmKernelName(kernel)) + " gemm kernel");
  if (kernel != GemmKernel::Reference && isPackedGemmSupported(a, b))
    return packed::runPackedGemm(a, b, acc, c, kernel);

  DecodedOperand decodedA(a), decodedB(b);
  bool wide =
      a.elementType == ElementType::E5M2 && b.elementType == ElementType::E5M2;
  bool narrow =
      a.elementType == ElementType::E2M1 && b.elementType == ElementType::E2M1;
  parallelFor(a.rows, 1, [&](int64_t begin, int64_t end) {
    if (narrow)
      gemmRows<int32_t>(decodedA, decodedB, acc, c, begin, end);
    else if (wide)
      gemmRows<__int128>(decodedA, decodedB, acc, c, begin, end);
    else
      gemmRows<int64_t>(decodedA, decodedB, acc, c, begin, end);
  });
  return Success{};
}

} // namespace fp4train::numerics
