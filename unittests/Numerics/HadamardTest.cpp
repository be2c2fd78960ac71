//===- HadamardTest.cpp - [H1] rotation tests -----------------------------===//

#include "fp4train/Numerics/Hadamard.h"
#include "fp4train/Numerics/BlockQuant.h"
#include "fp4train/Numerics/Formats.h"

#include "gtest/gtest.h"

#include <cmath>
#include <limits>
#include <random>

using namespace fp4train::numerics;

namespace {

const int64_t kSizes[] = {16, 32, 64, 128, 256};

/// y = x · diag(s) · H_n / √n in double with H[i][j] = (-1)^popcount(i & j).
std::vector<double> referenceRotate(const std::vector<float> &x,
                                    const std::vector<float> &signs) {
  int64_t n = int64_t(x.size());
  std::vector<double> y(n, 0.0);
  for (int64_t j = 0; j < n; ++j) {
    for (int64_t i = 0; i < n; ++i)
      y[j] += double(x[i]) * signs[i] *
              (__builtin_popcountll(uint64_t(i & j)) % 2 ? -1.0 : 1.0);
    y[j] /= std::sqrt(double(n));
  }
  return y;
}

TEST(Hadamard, MatchesSylvesterMatrix) {
  std::mt19937 rng(1);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  for (int64_t n : kSizes) {
    std::vector<float> signs = getHadamardSigns(n, HadamardSigns::Random, 9, 3);
    std::vector<float> x(n);
    for (float &v : x)
      v = normal(rng);
    std::vector<double> expected = referenceRotate(x, signs);
    hadamardRotateBlock(x.data(), signs.data(), n, /*inverse=*/false);
    for (int64_t j = 0; j < n; ++j)
      EXPECT_NEAR(x[j], expected[j], 1e-5) << "n = " << n << " j = " << j;
  }
}

TEST(Hadamard, PowerOfFourSizesAreExactOnIntegers) {
  // With small integer inputs every butterfly is exact and 1/√n is a power of
  // two for n = 16, 64, 256, so the result equals the exact product.
  for (int64_t n : {16, 64, 256}) {
    std::vector<float> x(n), signs = getHadamardSigns(n, HadamardSigns::Fixed);
    for (int64_t i = 0; i < n; ++i)
      x[i] = float(int(i * 7 % 13) - 6);
    std::vector<double> expected = referenceRotate(x, signs);
    hadamardRotateBlock(x.data(), signs.data(), n, false);
    for (int64_t j = 0; j < n; ++j)
      EXPECT_EQ(double(x[j]), expected[j]);
  }
}

TEST(Hadamard, OrthogonalAndRoundTrips) {
  std::mt19937 rng(2);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  for (int64_t n : kSizes) {
    std::vector<float> signs = getHadamardSigns(n, HadamardSigns::Random, 5, 1);
    // Rows of the rotation matrix are the images of the unit vectors.
    std::vector<std::vector<float>> rows(n, std::vector<float>(n, 0.0f));
    for (int64_t i = 0; i < n; ++i) {
      rows[i][i] = 1.0f;
      hadamardRotateBlock(rows[i].data(), signs.data(), n, false);
    }
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double dot = 0;
        for (int64_t k = 0; k < n; ++k)
          dot += double(rows[i][k]) * rows[j][k];
        ASSERT_NEAR(dot, i == j ? 1.0 : 0.0, 1e-6);
      }
    std::vector<float> x(n), y;
    for (float &v : x)
      v = normal(rng);
    y = x;
    hadamardRotateBlock(y.data(), signs.data(), n, false);
    hadamardRotateBlock(y.data(), signs.data(), n, true);
    for (int64_t j = 0; j < n; ++j)
      EXPECT_NEAR(y[j], x[j], 2e-6 * std::sqrt(double(n)));
  }
}

TEST(Hadamard, SignVectors) {
  std::vector<float> te = getHadamardSigns(16, HadamardSigns::Fixed);
  const char *pattern = "+++-+------+-+--";
  for (int i = 0; i < 16; ++i)
    EXPECT_EQ(te[i], pattern[i] == '+' ? 1.0f : -1.0f);
  EXPECT_EQ(getHadamardSigns(32, HadamardSigns::Fixed),
            randomHadamardSigns(32, kFixedHadamardSeed, 0));
  EXPECT_EQ(getHadamardSigns(64, HadamardSigns::None),
            std::vector<float>(64, 1.0f));
  // Random signs are a pure function of (seed, step) and change per step.
  EXPECT_EQ(randomHadamardSigns(256, 7, 3), randomHadamardSigns(256, 7, 3));
  EXPECT_NE(randomHadamardSigns(256, 7, 3), randomHadamardSigns(256, 7, 4));
  EXPECT_NE(randomHadamardSigns(256, 7, 3), randomHadamardSigns(256, 8, 3));
  // Sizes share a prefix: the vector of size n is the first n signs of 256.
  std::vector<float> big = randomHadamardSigns(256, 7, 3);
  std::vector<float> small = randomHadamardSigns(32, 7, 3);
  EXPECT_TRUE(std::equal(small.begin(), small.end(), big.begin()));
  int negatives = 0;
  for (float s : big)
    negatives += s < 0;
  EXPECT_GT(negatives, 96);
  EXPECT_LT(negatives, 160);
}

TEST(Hadamard, OverflowIsNaN) {
  // [H1] sums before it scales: values near FLT_MAX overflow to +Inf and
  // -Inf in the first stage, which the second subtracts. The rotation has no
  // finite result; fp4train keeps the NaN, so an NVFP4 quantization of it
  // has a NaN amax and decode scale and decodes to NaN ([TE1] 4:
  // TransformerEngine reports amax Inf there).
  const float max = std::numeric_limits<float>::max();
  std::vector<float> x(2 * 16, 1.0f);
  for (int i = 0; i < 16; ++i)
    x[i] = (i & 2) ? -max : max;
  HadamardConfig config;
  config.size = 16;
  config.signs = HadamardSigns::None;
  ASSERT_TRUE(bool(hadamardRotate(x.data(), {2, 16}, config)));
  EXPECT_TRUE(std::isnan(x[0]));
  for (int i = 16; i < 32; ++i)
    EXPECT_FALSE(std::isnan(x[i])) << i;
  QuantConfig quant;
  quant.format = Format::NVFP4;
  quant.blockSize = 16;
  Expected<QuantizedTensor> q = quantize(x.data(), {2, 16}, quant);
  ASSERT_TRUE(bool(q));
  EXPECT_TRUE(std::isnan(q->amax));
  EXPECT_TRUE(std::isnan(q->globalDecodeScale));
  for (float v : dequantize(*q))
    EXPECT_TRUE(std::isnan(v));
}

TEST(Hadamard, TensorAxes) {
  std::mt19937 rng(3);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> x(32 * 3), xt(3 * 32);
  for (int r = 0; r < 32; ++r)
    for (int c = 0; c < 3; ++c)
      xt[c * 32 + r] = x[r * 3 + c] = normal(rng);
  HadamardConfig config;
  config.size = 16;
  config.signs = HadamardSigns::Fixed;
  config.axis = 0;
  ASSERT_TRUE(bool(hadamardRotate(x.data(), {32, 3}, config)));
  config.axis = -1;
  ASSERT_TRUE(bool(hadamardRotate(xt.data(), {3, 32}, config)));
  for (int r = 0; r < 32; ++r)
    for (int c = 0; c < 3; ++c)
      EXPECT_EQ(floatToBits(x[r * 3 + c]), floatToBits(xt[c * 32 + r]));
}

TEST(Hadamard, TensorPathMatchesBlockReference) {
  // hadamardRotate uses its own vectorized kernels; they must reproduce the
  // scalar [H1] butterfly order of hadamardRotateBlock bit for bit, with
  // rounding in every stage (wide-range inputs), in both directions, for
  // contiguous and gathered blocks.
  std::mt19937 rng(4);
  std::uniform_real_distribution<float> mantissa(-2.0f, 2.0f);
  std::uniform_int_distribution<int> exponent(-20, 20);
  for (int64_t n : kSizes)
    for (bool inverse : {false, true})
      for (int64_t axis : {0, 1}) {
        int64_t rows = axis == 0 ? n : 3, cols = axis == 0 ? 3 : 2 * n;
        std::vector<float> x(rows * cols);
        for (float &v : x)
          v = std::ldexp(mantissa(rng), exponent(rng));
        std::vector<float> expected = x;
        std::vector<float> signs =
            getHadamardSigns(n, HadamardSigns::Random, 11, 2);
        // Rotate each block of n along `axis` with the scalar reference.
        int64_t blockStride = axis == 0 ? cols : 1;
        int64_t numLines = axis == 0 ? cols : rows * cols / n;
        for (int64_t line = 0; line < numLines; ++line) {
          int64_t base = axis == 0 ? line : line * n;
          std::vector<float> block(n);
          for (int64_t k = 0; k < n; ++k)
            block[k] = expected[base + k * blockStride];
          hadamardRotateBlock(block.data(), signs.data(), n, inverse);
          for (int64_t k = 0; k < n; ++k)
            expected[base + k * blockStride] = block[k];
        }
        HadamardConfig config;
        config.size = n;
        config.signs = HadamardSigns::Random;
        config.seed = 11;
        config.step = 2;
        config.axis = axis;
        ASSERT_TRUE(
            bool(hadamardRotate(x.data(), {rows, cols}, config, inverse)));
        for (size_t i = 0; i < x.size(); ++i)
          ASSERT_EQ(floatToBits(x[i]), floatToBits(expected[i]))
              << "n = " << n << " inverse = " << inverse << " axis = " << axis
              << " i = " << i;
      }
}

TEST(Hadamard, Errors) {
  std::vector<float> x(48);
  HadamardConfig config;
  config.size = 24;
  Status status = hadamardRotate(x.data(), {48}, config);
  ASSERT_FALSE(bool(status));
  EXPECT_EQ(status.error().message,
            "hadamard size must be a power of two from 16 to 256, got 24");
  config.size = 32;
  status = hadamardRotate(x.data(), {48}, config);
  ASSERT_FALSE(bool(status));
  EXPECT_EQ(status.error().message,
            "dimension 0 (size 48) is not divisible by the hadamard size 32");
  EXPECT_EQ(parseHadamardSigns("random"), HadamardSigns::Random);
  EXPECT_FALSE(parseHadamardSigns("sometimes"));
}

} // namespace
