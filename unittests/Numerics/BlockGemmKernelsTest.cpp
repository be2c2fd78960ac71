//===- BlockGemmKernelsTest.cpp - Packed [GEMM1] kernels vs the reference -===//
//
// Every packed kernel this CPU can run must give the reference's bits for
// every E2M1 format pair, tile remainder, scale range and thread count.
//
//===----------------------------------------------------------------------===//

#include "fp4train/Numerics/BlockGemmKernels.h"
#include "fp4train/Numerics/Parallel.h"

#include "gtest/gtest.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <random>
#include <string>

using namespace fp4train::numerics;

namespace {

std::vector<GemmKernel> getPackedKernels() {
  std::vector<GemmKernel> kernels;
  for (GemmKernel kernel :
       {GemmKernel::Portable, GemmKernel::AVX2, GemmKernel::AVX512VNNI})
    if (isGemmKernelAvailable(kernel))
      kernels.push_back(kernel);
  return kernels;
}

/// An operand with its own storage.
struct OwnedOperand {
  std::vector<uint8_t> codes, scales;
  GemmOperand op;
};

using ScaleSource = std::function<uint8_t(std::mt19937 &)>;

/// Random E2M1 codes (all 16, so ±0 and ±6 occur) and scales from `scale`,
/// `group` rows sharing a scale row (16 for the 2-D NVFP4 weight tiles).
OwnedOperand randomOperand(int64_t rows, int64_t k, int64_t blockSize,
                           ScaleType scaleType, int64_t group,
                           const ScaleSource &scale, unsigned seed) {
  std::mt19937 rng(seed);
  OwnedOperand owned;
  owned.codes.resize(rows * k);
  for (uint8_t &code : owned.codes)
    code = uint8_t(rng() % 16);
  int64_t stride = k / blockSize;
  owned.scales.resize((rows + group - 1) / group * stride);
  for (uint8_t &code : owned.scales)
    code = scale(rng);
  GemmOperand &op = owned.op;
  op.codes = owned.codes.data();
  op.rows = rows;
  op.k = k;
  op.blockSize = blockSize;
  op.scaleType = scaleType;
  op.scales = owned.scales.data();
  op.scaleRowGroup = group;
  op.scaleRowStride = stride;
  op.globalDecodeScale = scaleType == ScaleType::E4M3FN ? 0.0625f : 1.0f;
  return owned;
}

/// Scale codes uniform in [low, high].
ScaleSource uniformCodes(int low, int high) {
  return [=](std::mt19937 &rng) {
    return uint8_t(low + int(rng() % unsigned(high - low + 1)));
  };
}

/// `base`, except that one scale in `oneIn` is the format's NaN code.
ScaleSource withNaNs(ScaleSource base, uint8_t nanCode, unsigned oneIn) {
  return [=](std::mt19937 &rng) {
    return rng() % oneIn == 0 ? nanCode : base(rng);
  };
}

std::vector<float> run(const GemmOperand &a, const GemmOperand &b,
                       const std::vector<float> &acc, GemmKernel kernel) {
  std::vector<float> c(a.rows * b.rows);
  Status status = blockScaledGemm(a, b, acc.empty() ? nullptr : acc.data(),
                                  c.data(), kernel);
  EXPECT_TRUE(bool(status));
  return c;
}

/// Whether two outputs are the same: equal bits, or both NaN ([GEMM1]
/// leaves a NaN's sign and payload open, as IEEE 754 does: the FP8 kernels
/// meet Inf · 0 and NaN operands in another order than the reference).
bool isSameOutput(float x, float y) {
  return floatToBits(x) == floatToBits(y) || (std::isnan(x) && std::isnan(y));
}

/// Runs every packed kernel on 1 and 2 threads and compares each output's
/// bits with the reference.
void expectMatchesReference(const GemmOperand &a, const GemmOperand &b,
                            const std::string &what, bool withAcc = true) {
  ASSERT_TRUE(isPackedGemmSupported(a, b)) << what;
  std::vector<float> acc;
  if (withAcc) {
    std::mt19937 rng(99);
    std::normal_distribution<float> normal(0.0f, 4.0f);
    acc.resize(a.rows * b.rows);
    for (float &x : acc)
      x = normal(rng);
  }
  std::vector<float> reference = run(a, b, acc, GemmKernel::Reference);
  unsigned saved = getNumThreads();
  for (GemmKernel kernel : getPackedKernels())
    for (unsigned threads : {1u, 2u}) {
      setNumThreads(threads);
      std::vector<float> c = run(a, b, acc, kernel);
      for (size_t i = 0; i < c.size(); ++i)
        ASSERT_TRUE(isSameOutput(c[i], reference[i]))
            << what << ", kernel " << getGemmKernelName(kernel) << ", "
            << threads << " thread(s), C[" << i / b.rows << "," << i % b.rows
            << "] = " << c[i] << " vs " << reference[i];
    }
  setNumThreads(saved);
}

TEST(BlockGemmKernels, DefaultKernelIsAvailable) {
  EXPECT_TRUE(isGemmKernelAvailable(getDefaultGemmKernel()));
  EXPECT_NE(getDefaultGemmKernel(), GemmKernel::Reference);
  std::string names;
  for (GemmKernel kernel : getPackedKernels())
    names += std::string(getGemmKernelName(kernel)) + " ";
  RecordProperty("packed_kernels", names);
}

// The shapes are not multiples of any tile (4×8, 6×16, 8×32), and include
// single rows and columns.
const int64_t kShapes[][2] = {{1, 1}, {5, 7}, {13, 33}, {37, 50}, {70, 3}};

TEST(BlockGemmKernels, MXFP4) {
  for (auto [m, n] : kShapes)
    for (int64_t blockSize : {16, 32}) {
      // Typical quantized data: exponents within ±20 of 1.
      OwnedOperand a = randomOperand(m, 128, blockSize, ScaleType::E8M0, 1,
                                     uniformCodes(107, 147), 1);
      OwnedOperand b = randomOperand(n, 128, blockSize, ScaleType::E8M0, 1,
                                     uniformCodes(107, 147), 2);
      expectMatchesReference(a.op, b.op,
                             "mxfp4 " + std::to_string(m) + "x" +
                                 std::to_string(n) + " block " +
                                 std::to_string(blockSize));
    }
}

TEST(BlockGemmKernels, NVFP4WithE4M3Scales) {
  // Every finite E4M3 code: zero, subnormal and normal scales.
  for (auto [m, n] : kShapes) {
    OwnedOperand a = randomOperand(m, 96, 16, ScaleType::E4M3FN, 1,
                                   uniformCodes(0, 0x7E), 3);
    OwnedOperand b = randomOperand(n, 96, 16, ScaleType::E4M3FN, 1,
                                   uniformCodes(0, 0x7E), 4);
    expectMatchesReference(
        a.op, b.op, "nvfp4 " + std::to_string(m) + "x" + std::to_string(n));
  }
}

TEST(BlockGemmKernels, NegativeE4M3Scales) {
  // Not produced by [NV1], but valid operands: the sign must reach the terms.
  for (auto [m, n] : kShapes) {
    OwnedOperand a = randomOperand(m, 64, 16, ScaleType::E4M3FN, 1,
                                   uniformCodes(0x80, 0xFE), 19);
    OwnedOperand b = randomOperand(n, 64, 16, ScaleType::E4M3FN, 1,
                                   uniformCodes(0, 0x7E), 20);
    expectMatchesReference(a.op, b.op,
                           "negative scales " + std::to_string(m) + "x" +
                               std::to_string(n));
  }
}

TEST(BlockGemmKernels, NVFP4TwoDimensionalWeights) {
  for (auto [m, n] : kShapes) {
    OwnedOperand a = randomOperand(m, 64, 16, ScaleType::E4M3FN, 1,
                                   uniformCodes(0x20, 0x60), 5);
    OwnedOperand b = randomOperand(n, 64, 16, ScaleType::E4M3FN, 16,
                                   uniformCodes(0x20, 0x60), 6);
    expectMatchesReference(a.op, b.op,
                           "nvfp4 16x16 weights " + std::to_string(m) + "x" +
                               std::to_string(n));
  }
}

TEST(BlockGemmKernels, MixedScaleTypes) {
  OwnedOperand a =
      randomOperand(19, 64, 16, ScaleType::E8M0, 1, uniformCodes(100, 150), 7);
  OwnedOperand b =
      randomOperand(23, 64, 16, ScaleType::E4M3FN, 1, uniformCodes(0, 0x7E), 8);
  expectMatchesReference(a.op, b.op, "mxfp4 x nvfp4");
  expectMatchesReference(b.op, a.op, "nvfp4 x mxfp4");
}

TEST(BlockGemmKernels, SubnormalAndOverflowingTerms) {
  // Tiny scales make terms f32 subnormals or round them to zero; huge ones
  // overflow to ±Inf, and opposite infinities make NaN. Mixing both within a
  // tile exercises the exact double path next to the f32 one.
  struct Case {
    const char *name;
    ScaleSource scaleA, scaleB;
  } cases[] = {
      {"subnormal", uniformCodes(0, 40), uniformCodes(0, 60)},
      {"overflow", uniformCodes(200, 254), uniformCodes(180, 254)},
      {"full range", uniformCodes(0, 254), uniformCodes(0, 254)},
      {"edges", uniformCodes(0, 2), uniformCodes(252, 254)},
  };
  for (const Case &test : cases)
    for (auto [m, n] : kShapes) {
      OwnedOperand a =
          randomOperand(m, 128, 32, ScaleType::E8M0, 1, test.scaleA, 9);
      OwnedOperand b =
          randomOperand(n, 128, 32, ScaleType::E8M0, 1, test.scaleB, 10);
      expectMatchesReference(a.op, b.op,
                             std::string(test.name) + " " + std::to_string(m) +
                                 "x" + std::to_string(n),
                             /*withAcc=*/false);
    }
}

TEST(BlockGemmKernels, NaNBlocks) {
  for (auto [m, n] : kShapes) {
    OwnedOperand a =
        randomOperand(m, 128, 32, ScaleType::E8M0, 1,
                      withNaNs(uniformCodes(110, 140), 0xFF, 9), 11);
    OwnedOperand b =
        randomOperand(n, 128, 32, ScaleType::E8M0, 1,
                      withNaNs(uniformCodes(110, 140), 0xFF, 13), 12);
    expectMatchesReference(
        a.op, b.op, "mxfp4 NaN " + std::to_string(m) + "x" + std::to_string(n));
    OwnedOperand c =
        randomOperand(m, 64, 16, ScaleType::E4M3FN, 1,
                      withNaNs(uniformCodes(0, 0x7E), 0x7F, 9), 13);
    OwnedOperand d =
        randomOperand(n, 64, 16, ScaleType::E4M3FN, 1,
                      withNaNs(uniformCodes(0, 0x7E), 0xFF, 11), 14);
    expectMatchesReference(
        c.op, d.op, "nvfp4 NaN " + std::to_string(m) + "x" + std::to_string(n));
  }
}

TEST(BlockGemmKernels, ExtremeCodesAndBlockSizes) {
  // ±6 everywhere gives the largest block sums the integer lanes must hold
  // (144 · blockSize); blocks of 4 and 128 are the supported extremes.
  for (int64_t blockSize : {4, 64, 128})
    for (uint8_t codeB : {0x7, 0xF}) {
      OwnedOperand a = randomOperand(7, 256, blockSize, ScaleType::E8M0, 1,
                                     uniformCodes(120, 135), 21);
      OwnedOperand b = randomOperand(19, 256, blockSize, ScaleType::E8M0, 1,
                                     uniformCodes(120, 135), 22);
      std::fill(a.codes.begin(), a.codes.end(), 0x7);
      std::fill(b.codes.begin(), b.codes.end(), codeB);
      expectMatchesReference(a.op, b.op,
                             "block " + std::to_string(blockSize) +
                                 (codeB == 0x7 ? " +6·+6" : " +6·-6"));
    }
}

TEST(BlockGemmKernels, ManyTilesAndChunks) {
  // Long K makes the kernels split A into several L2 chunks, and enough
  // tiles that both threads get several work items.
  OwnedOperand a = randomOperand(100, 4096, 32, ScaleType::E8M0, 1,
                                 uniformCodes(110, 140), 23);
  OwnedOperand b = randomOperand(70, 4096, 32, ScaleType::E8M0, 1,
                                 uniformCodes(110, 140), 24);
  expectMatchesReference(a.op, b.op, "100x70x4096");
}

/// `count` draws of N(0, 1) from `seed`.
std::vector<float> normalValues(int64_t count, unsigned seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> values(count);
  for (float &v : values)
    v = normal(rng);
  return values;
}

TEST(BlockGemmKernels, QuantizedOperands) {
  // The path the linear layer takes: quantize, view, multiply.
  const int64_t m = 45, n = 37, k = 256;
  std::vector<float> x = normalValues(m * k, 15), w = normalValues(n * k, 16);
  for (Format format : {Format::MXFP4, Format::NVFP4})
    for (bool twoD : {false, true}) {
      if (twoD && format != Format::NVFP4)
        continue;
      QuantConfig config;
      config.format = format;
      config.blockSize = getDefaultBlockSize(format);
      Expected<QuantizedTensor> qa = quantize(x.data(), {m, k}, config);
      config.twoDimensional = twoD;
      // 2-D tiles need N to be a multiple of 16: quantize 48 rows, use 37.
      std::vector<float> wPadded = w;
      wPadded.resize(48 * k, 0.5f);
      Expected<QuantizedTensor> qb = quantize(wPadded.data(), {48, k}, config);
      ASSERT_TRUE(qa && qb);
      Expected<GemmOperand> a = makeGemmOperand(*qa), b = makeGemmOperand(*qb);
      ASSERT_TRUE(a && b);
      b->rows = n;
      expectMatchesReference(*a, *b,
                             std::string(getFormatName(format)) +
                                 (twoD ? " 2-D" : " 1-D"));
    }
}

/// Random FP8 codes of `type` with E8M0 scales from `scale`; `finiteOnly`
/// leaves out the NaN (and E5M2's Inf) codes.
OwnedOperand randomFP8Operand(int64_t rows, int64_t k, int64_t blockSize,
                              ElementType type, bool finiteOnly,
                              const ScaleSource &scale, unsigned seed) {
  OwnedOperand owned =
      randomOperand(rows, k, blockSize, ScaleType::E8M0, 1, scale, seed);
  std::mt19937 rng(seed + 1000);
  for (uint8_t &code : owned.codes)
    do
      code = uint8_t(rng());
    while (finiteOnly && !std::isfinite(decodeElement(type, code)));
  owned.op.elementType = type;
  return owned;
}

const ElementType kFP8Pairs[][2] = {{ElementType::E4M3FN, ElementType::E4M3FN},
                                    {ElementType::E5M2, ElementType::E4M3FN},
                                    {ElementType::E4M3FN, ElementType::E5M2},
                                    {ElementType::E5M2, ElementType::E5M2}};

std::string getPairName(const ElementType pair[2]) {
  auto name = [](ElementType type) {
    return type == ElementType::E4M3FN ? "e4m3" : "e5m2";
  };
  return std::string(name(pair[0])) + " x " + name(pair[1]);
}

TEST(BlockGemmKernels, FP8RandomCodes) {
  // Uniform codes span every exponent, so E5M2 blocks mostly fail the
  // double path's exactness check and take the integer one, while E4M3
  // pairs always pass it.
  for (const auto &pair : kFP8Pairs)
    for (auto [m, n] : kShapes)
      for (int64_t blockSize : {32, 16}) {
        OwnedOperand a = randomFP8Operand(m, 128, blockSize, pair[0], true,
                                          uniformCodes(110, 140), 31);
        OwnedOperand b = randomFP8Operand(n, 128, blockSize, pair[1], true,
                                          uniformCodes(110, 140), 32);
        expectMatchesReference(a.op, b.op,
                               getPairName(pair) + " " + std::to_string(m) +
                                   "x" + std::to_string(n) + " block " +
                                   std::to_string(blockSize));
      }
}

TEST(BlockGemmKernels, FP8QuantizedOperands) {
  // What MXFP8 training multiplies: quantized normal data, whose blocks
  // take the double path; a few huge and tiny values push some blocks of
  // the E5M2 pairs over the 53-bit check.
  const int64_t m = 45, n = 37, k = 256;
  std::vector<float> x = normalValues(m * k, 33), w = normalValues(n * k, 34);
  for (int64_t i = 0; i < m * k; i += 97)
    x[i] *= i % 2 ? 1e-6f : 1e4f;
  for (Format formatA : {Format::MXFP8E4M3, Format::MXFP8E5M2})
    for (Format formatB : {Format::MXFP8E4M3, Format::MXFP8E5M2}) {
      QuantConfig config;
      config.format = formatA;
      config.blockSize = getDefaultBlockSize(formatA);
      Expected<QuantizedTensor> qa = quantize(x.data(), {m, k}, config);
      config.format = formatB;
      Expected<QuantizedTensor> qb = quantize(w.data(), {n, k}, config);
      ASSERT_TRUE(qa && qb);
      Expected<GemmOperand> a = makeGemmOperand(*qa), b = makeGemmOperand(*qb);
      ASSERT_TRUE(a && b);
      expectMatchesReference(*a, *b,
                             std::string(getFormatName(formatA)) + " x " +
                                 std::string(getFormatName(formatB)));
    }
}

TEST(BlockGemmKernels, FP8ExtremeScalesAndValues) {
  // Terms that are f32 subnormals, round to zero or overflow; blocks of the
  // largest codes (the widest block sums); NaN and Inf elements and NaN
  // scales, which must give the reference's NaN and ±Inf.
  struct Case {
    const char *name;
    ScaleSource scaleA, scaleB;
  } cases[] = {
      {"subnormal", uniformCodes(0, 40), uniformCodes(0, 60)},
      {"overflow", uniformCodes(200, 254), uniformCodes(180, 254)},
      {"full range", uniformCodes(0, 254), uniformCodes(0, 254)},
  };
  for (const auto &pair : kFP8Pairs) {
    for (const Case &test : cases) {
      OwnedOperand a =
          randomFP8Operand(13, 128, 32, pair[0], true, test.scaleA, 34);
      OwnedOperand b =
          randomFP8Operand(33, 128, 32, pair[1], true, test.scaleB, 35);
      expectMatchesReference(a.op, b.op, getPairName(pair) + " " + test.name,
                             /*withAcc=*/false);
    }
    OwnedOperand a =
        randomFP8Operand(7, 256, 32, pair[0], true, uniformCodes(120, 135), 36);
    OwnedOperand b = randomFP8Operand(19, 256, 32, pair[1], true,
                                      uniformCodes(120, 135), 37);
    auto largest = [](ElementType type) -> uint8_t {
      return type == ElementType::E4M3FN ? 0x7E : 0x7B;
    };
    std::fill(a.codes.begin(), a.codes.end(), largest(pair[0]));
    std::fill(b.codes.begin(), b.codes.end(), largest(pair[1]) | 0x80);
    expectMatchesReference(a.op, b.op, getPairName(pair) + " largest codes");
    OwnedOperand c =
        randomFP8Operand(37, 128, 32, pair[0], false,
                         withNaNs(uniformCodes(110, 140), 0xFF, 9), 38);
    OwnedOperand d = randomFP8Operand(50, 128, 32, pair[1], false,
                                      uniformCodes(110, 140), 39);
    expectMatchesReference(c.op, d.op, getPairName(pair) + " NaN and Inf");
  }
}

/// The code of `value` in `type` (which must hold it exactly).
uint8_t getCode(ElementType type, float value) {
  for (int code = 0; code < 256; ++code)
    if (decodeElement(type, uint8_t(code)) == value)
      return uint8_t(code);
  ADD_FAILURE() << value << " is not representable";
  return 0;
}

TEST(BlockGemmKernels, FP8BlockWiderThanDouble) {
  // An E4M3 x E5M2 block whose exact sum 2^28 + 2^4 + 2^-25 needs 54 bits:
  // double drops the 2^-25 (a tie, to even), which turns f32's rounding of
  // 2^28 + 2^4 (a tie too) down to 2^28; exactly, it goes up to 2^28 + 2^5.
  // The kernels must see that the block fails the 53-bit check.
  std::vector<std::pair<float, float>> products;
  for (int i = 0; i < 8; ++i) // 8 · 49 · 2^19
    products.push_back({448.0f, 57344.0f});
  for (int i = 0; i < 7; ++i) // 7 · 16 · 2^19
    products.push_back({256.0f, 32768.0f});
  products.push_back({256.0f, 16384.0f});  // 8 · 2^19
  products.push_back({1.0f, 16.0f});       // 2^4
  products.push_back({0x1p-9f, 0x1p-16f}); // 2^-25
  OwnedOperand a = randomFP8Operand(3, 64, 32, ElementType::E4M3FN, true,
                                    uniformCodes(127, 127), 42);
  OwnedOperand b = randomFP8Operand(5, 64, 32, ElementType::E5M2, true,
                                    uniformCodes(127, 127), 43);
  std::fill(a.codes.begin(), a.codes.begin() + 32, 0);
  std::fill(b.codes.begin(), b.codes.begin() + 32, 0);
  for (size_t l = 0; l < products.size(); ++l) {
    a.codes[l] = getCode(ElementType::E4M3FN, products[l].first);
    b.codes[l] = getCode(ElementType::E5M2, products[l].second);
  }
  std::vector<float> reference = run(a.op, b.op, {}, GemmKernel::Reference);
  float second = 0.0f; // C[0,0] less its first block's term
  {
    OwnedOperand rest = a;
    rest.op.codes = rest.codes.data();
    std::fill(rest.codes.begin(), rest.codes.begin() + 32, 0);
    second = run(rest.op, b.op, {}, GemmKernel::Reference)[0];
  }
  EXPECT_EQ(reference[0], 0x1p28f + 0x1p5f + second);
  expectMatchesReference(a.op, b.op, "54-bit block", /*withAcc=*/false);
}

TEST(BlockGemmKernels, FP8ManyTilesAndChunks) {
  OwnedOperand a = randomFP8Operand(100, 2048, 32, ElementType::E4M3FN, true,
                                    uniformCodes(110, 140), 40);
  OwnedOperand b = randomFP8Operand(70, 2048, 32, ElementType::E5M2, true,
                                    uniformCodes(110, 140), 41);
  expectMatchesReference(a.op, b.op, "e4m3 x e5m2 100x70x2048");
  // More than one chunk of B tiles (256 rows each) too.
  OwnedOperand c = randomFP8Operand(200, 256, 32, ElementType::E5M2, true,
                                    uniformCodes(110, 140), 44);
  OwnedOperand d = randomFP8Operand(600, 256, 32, ElementType::E4M3FN, true,
                                    uniformCodes(110, 140), 45);
  expectMatchesReference(c.op, d.op, "e5m2 x e4m3 200x600x256");
}

TEST(BlockGemmKernels, UnsupportedPairsUseTheReference) {
  OwnedOperand a =
      randomOperand(3, 64, 32, ScaleType::E8M0, 1, uniformCodes(120, 130), 16);
  OwnedOperand b =
      randomOperand(5, 64, 32, ScaleType::E8M0, 1, uniformCodes(120, 130), 17);
  b.op.elementType = ElementType::E4M3FN;
  EXPECT_FALSE(isPackedGemmSupported(a.op, b.op));
  std::vector<float> acc;
  std::vector<float> reference = run(a.op, b.op, acc, GemmKernel::Reference);
  auto expectReference = [&](const std::vector<float> &c) {
    for (size_t i = 0; i < c.size(); ++i)
      EXPECT_TRUE(isSameOutput(c[i], reference[i])) << i;
  };
  for (GemmKernel kernel : getPackedKernels())
    expectReference(run(a.op, b.op, acc, kernel));
  // FP8 elements with E4M3 scales: the double evaluation would not be exact.
  a.op.elementType = ElementType::E4M3FN;
  b.op.scaleType = ScaleType::E4M3FN;
  EXPECT_FALSE(isPackedGemmSupported(a.op, b.op));
  reference = run(a.op, b.op, acc, GemmKernel::Reference);
  for (GemmKernel kernel : getPackedKernels())
    expectReference(run(a.op, b.op, acc, kernel));
}

TEST(BlockGemmKernels, UnavailableKernelIsAnError) {
  for (GemmKernel kernel : {GemmKernel::AVX2, GemmKernel::AVX512VNNI}) {
    if (isGemmKernelAvailable(kernel))
      continue;
    OwnedOperand a = randomOperand(1, 32, 32, ScaleType::E8M0, 1,
                                   uniformCodes(127, 127), 18);
    float c;
    Status status = blockScaledGemm(a.op, a.op, nullptr, &c, kernel);
    ASSERT_FALSE(bool(status));
    EXPECT_EQ(status.error().message,
              "this CPU cannot run the " +
                  std::string(getGemmKernelName(kernel)) + " gemm kernel");
  }
}

} // namespace
