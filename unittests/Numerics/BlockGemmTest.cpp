//===- BlockGemmTest.cpp - [GEMM1] reference matmul tests -----------------===//

#include "fp4train/Numerics/BlockGemm.h"
#include "fp4train/Numerics/Parallel.h"

#include "gtest/gtest.h"

#include <cmath>
#include <random>

using namespace fp4train::numerics;

namespace {

std::vector<float> randomMatrix(int64_t rows, int64_t cols, unsigned seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> data(rows * cols);
  for (int64_t i = 0; i < rows * cols; ++i)
    data[i] = normal(rng) * std::ldexp(1.0f, int(i % 7) - 3);
  return data;
}

QuantizedTensor quantizeMatrix(const std::vector<float> &data, int64_t rows,
                               int64_t cols, Format format, bool twoD = false) {
  QuantConfig config;
  config.format = format;
  config.blockSize = getDefaultBlockSize(format);
  config.twoDimensional = twoD;
  Expected<QuantizedTensor> q = quantize(data.data(), {rows, cols}, config);
  EXPECT_TRUE(bool(q));
  return std::move(*q);
}

/// Scale value of (row, kBlock) of a quantized matrix.
double scaleOf(const QuantizedTensor &q, int64_t row, int64_t kb) {
  int64_t group = q.config.twoDimensional ? q.config.blockSize : 1;
  uint8_t code = q.scales[row / group * q.scaleShape[1] + kb];
  return q.config.format == Format::NVFP4 ? decodeE4M3FN(code)
                                          : decodeE8M0(code);
}

/// [GEMM1] with each block term evaluated in double: exact for E2M1 and E4M3
/// elements, so the f32 result must match bit for bit.
std::vector<float> referenceGemm(const QuantizedTensor &a,
                                 const QuantizedTensor &b,
                                 const std::vector<float> &acc) {
  int64_t m = a.shape[0], n = b.shape[0], k = a.shape[1];
  int64_t block = a.config.blockSize;
  ElementType ta = getElementType(a.config.format);
  ElementType tb = getElementType(b.config.format);
  float g = a.globalDecodeScale * b.globalDecodeScale;
  std::vector<float> c(m * n);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      float total = 0.0f;
      for (int64_t kb = 0; kb < k / block; ++kb) {
        double sum = 0;
        for (int64_t l = kb * block; l < (kb + 1) * block; ++l)
          sum += double(decodeElement(ta, a.codes[i * k + l])) *
                 decodeElement(tb, b.codes[j * k + l]);
        total += float(scaleOf(a, i, kb) * scaleOf(b, j, kb) * sum);
      }
      c[i * n + j] = acc[i * n + j] + g * total;
    }
  return c;
}

std::vector<float> runGemm(const QuantizedTensor &a, const QuantizedTensor &b,
                           const std::vector<float> &acc) {
  Expected<GemmOperand> opA = makeGemmOperand(a), opB = makeGemmOperand(b);
  EXPECT_TRUE(opA && opB);
  std::vector<float> c(a.shape[0] * b.shape[0]);
  Status status = blockScaledGemm(*opA, *opB, acc.data(), c.data());
  EXPECT_TRUE(bool(status));
  return c;
}

TEST(BlockGemm, MatchesExactBlockReference) {
  const int64_t m = 9, n = 17, k = 128;
  std::vector<float> x = randomMatrix(m, k, 1), w = randomMatrix(n, k, 2);
  std::vector<float> acc = randomMatrix(m, n, 3);
  for (Format format : {Format::MXFP4, Format::NVFP4, Format::MXFP8E4M3}) {
    QuantizedTensor a = quantizeMatrix(x, m, k, format);
    QuantizedTensor b = quantizeMatrix(w, n, k, format);
    std::vector<float> c = runGemm(a, b, acc), ref = referenceGemm(a, b, acc);
    for (int64_t i = 0; i < m * n; ++i)
      ASSERT_EQ(floatToBits(c[i]), floatToBits(ref[i]))
          << getFormatName(format) << " at " << i;
  }
}

TEST(BlockGemm, CloseToDequantizedF64Gemm) {
  const int64_t m = 16, n = 16, k = 256;
  std::vector<float> x = randomMatrix(m, k, 4), w = randomMatrix(n, k, 5);
  std::vector<float> zeros(m * n, 0.0f);
  for (Format format :
       {Format::MXFP4, Format::NVFP4, Format::MXFP8E4M3, Format::MXFP8E5M2}) {
    QuantizedTensor a = quantizeMatrix(x, m, k, format);
    QuantizedTensor b = quantizeMatrix(w, n, k, format);
    std::vector<float> da = dequantize(a), db = dequantize(b);
    std::vector<float> c = runGemm(a, b, zeros);
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double exact = 0, magnitude = 0;
        for (int64_t l = 0; l < k; ++l) {
          exact += double(da[i * k + l]) * db[j * k + l];
          magnitude += std::fabs(double(da[i * k + l]) * db[j * k + l]);
        }
        // k/block f32 roundings of terms and sums, plus NVFP4's S_dec
        // roundings in the dequantized values.
        EXPECT_NEAR(c[i * n + j], exact, 1e-5 * magnitude + 1e-30)
            << getFormatName(format);
      }
  }
}

TEST(BlockGemm, TwoDimensionalWeightOperand) {
  const int64_t m = 5, n = 32, k = 64;
  std::vector<float> x = randomMatrix(m, k, 6), w = randomMatrix(n, k, 7);
  std::vector<float> acc(m * n, 1.0f);
  QuantizedTensor a = quantizeMatrix(x, m, k, Format::NVFP4);
  QuantizedTensor b = quantizeMatrix(w, n, k, Format::NVFP4, /*twoD=*/true);
  EXPECT_EQ(makeGemmOperand(b)->scaleRowGroup, 16);
  std::vector<float> c = runGemm(a, b, acc), ref = referenceGemm(a, b, acc);
  for (int64_t i = 0; i < m * n; ++i)
    ASSERT_EQ(floatToBits(c[i]), floatToBits(ref[i]));
}

TEST(BlockGemm, ThreadCountDoesNotMatter) {
  const int64_t m = 33, n = 8, k = 64;
  QuantizedTensor a =
      quantizeMatrix(randomMatrix(m, k, 8), m, k, Format::MXFP4);
  QuantizedTensor b =
      quantizeMatrix(randomMatrix(n, k, 9), n, k, Format::MXFP4);
  std::vector<float> acc(m * n, 0.5f);
  unsigned saved = getNumThreads();
  setNumThreads(1);
  std::vector<float> reference = runGemm(a, b, acc);
  for (unsigned threads : {2u, 5u}) {
    setNumThreads(threads);
    EXPECT_EQ(runGemm(a, b, acc), reference);
  }
  setNumThreads(saved);
}

TEST(BlockGemm, NonFiniteBlocksPropagate) {
  std::vector<float> x(2 * 32, 1.0f), w(1 * 32, 1.0f), acc(2, 0.0f);
  x[3] = NAN;
  QuantizedTensor a = quantizeMatrix(x, 2, 32, Format::MXFP4);
  QuantizedTensor b = quantizeMatrix(w, 1, 32, Format::MXFP4);
  std::vector<float> c = runGemm(a, b, acc);
  EXPECT_TRUE(std::isnan(c[0]));
  EXPECT_EQ(c[1], 32.0f);
}

TEST(BlockGemm, RoundScaledIntegerToFloat) {
  std::mt19937_64 rng(10);
  for (int i = 0; i < 100000; ++i) {
    int64_t value = int64_t(rng()) >> (11 + rng() % 40);
    int exponent = int(rng() % 320) - 200;
    float expected = float(std::ldexp(double(value), exponent));
    ASSERT_EQ(floatToBits(roundScaledIntegerToFloat(value, exponent)),
              floatToBits(expected))
        << value << " * 2^" << exponent;
  }
  // 128-bit values: (2^100 + 2^76) is a tie between two f32 neighbours.
  __int128 tie = ((__int128)1 << 100) + ((__int128)1 << 76);
  EXPECT_EQ(roundScaledIntegerToFloat(tie, 0), std::ldexp(1.0f, 100));
  EXPECT_EQ(roundScaledIntegerToFloat(tie + 1, 0),
            std::nextafter(std::ldexp(1.0f, 100), INFINITY));
  EXPECT_EQ(roundScaledIntegerToFloat(3, -150), std::ldexp(1.0f, -148));
  EXPECT_EQ(roundScaledIntegerToFloat(1, -151), 0.0f);
  EXPECT_EQ(roundScaledIntegerToFloat(1, 200), INFINITY);
}

TEST(BlockGemm, Errors) {
  QuantizedTensor a =
      quantizeMatrix(randomMatrix(2, 64, 1), 2, 64, Format::MXFP4);
  QuantizedTensor b =
      quantizeMatrix(randomMatrix(2, 32, 1), 2, 32, Format::MXFP4);
  std::vector<float> c(4);
  Status status = blockScaledGemm(*makeGemmOperand(a), *makeGemmOperand(b),
                                  nullptr, c.data());
  ASSERT_FALSE(bool(status));
  EXPECT_EQ(status.error().message, "operands disagree on K: 64 vs 32");
}

} // namespace
