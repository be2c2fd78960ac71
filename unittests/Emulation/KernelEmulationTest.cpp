//===- KernelEmulationTest.cpp - gfx950 kernels, lane-exact, vs numerics --===//
//
// [CHK4] (docs/semantics.md): the kernels fp4train-to-amdgpu generates for
// gfx950 are compiled by buildROCmKernelPipeline (the module llc would get
// next) and executed by the lockstep emulator, whose scaled MFMA and conversion
// instructions are the CDNA4 models; the results are compared with the numerics
// library on the same inputs:
//  - quantize kernels: codes and scales bit for bit, every MX element format,
//    input type, scale mode, block count that is or is not a multiple of
//    the workgroup, special values;
//  - GEMM kernels ([GEMM1]), both MFMA shapes, tile-multiple and ragged M, N,
//    K, batches, mixed operand formats, f32 results and the bf16 epilogue
//    (compared after RNE to bf16): bit for bit on data whose every
//    partial sum is exact in f32 (any misplaced fragment or scale changes the
//    result), and within the f32 reassociation bound of the kernel's order on
//    full-range data (the kernel rounds once per MFMA, [GEMM1] once per
//    block):  |kernel - library| <= 2 (nb + 2) 2^-24 (Σ_b |term_b| + |acc|),
//    nb the number of blocks.
//
//===----------------------------------------------------------------------===//

#include "KernelEmulationTestUtils.h"

#include "fp4train/Numerics/BlockQuant.h"
#include "fp4train/Numerics/Hadamard.h"
#include "fp4train/Numerics/Storage.h"
#include "fp4train/Pipelines/Pipelines.h"

#include <cmath>
#include <random>

using namespace mlir;
using namespace mlir::fp4train;
using namespace ::fp4train::emulation_test;
namespace numerics = ::fp4train::numerics;

namespace {

/// Parses `source` and lowers it with buildROCmKernelPipeline for gfx950;
/// `mfma` is the option's value, or "FORM/TILE" to force the tile too.
OwningOpRef<ModuleOp> compile(MLIRContext &context, const std::string &source,
                              const std::string &mfma = "auto") {
  ROCmPipelineOptions options;
  options.recipe = "none";
  size_t slash = mfma.find('/');
  std::string text = "mfma=" + mfma.substr(0, slash);
  if (slash != std::string::npos)
    text += " tile=" + mfma.substr(slash + 1);
  if (failed(options.parseFromString(text)))
    ADD_FAILURE() << "bad kernel options " << text;
  return ::fp4train::emulation_test::compile(
      context, source,
      [&](OpPassManager &pm) { buildROCmKernelPipeline(pm, options); });
}

class KernelEmulationTest : public KernelEmulationFixture {
protected:
  /// Emulates @main of `module` on gfx950.
  std::vector<std::vector<uint8_t>>
  run(ModuleOp module, std::vector<emulation::EmulatorArgument> arguments,
      emulation::EmulatorStats *stats = nullptr) {
    return KernelEmulationFixture::run(module, std::move(arguments), "gfx950",
                                       stats);
  }
  /// The compile and run callbacks of the shared kernel checks.
  auto compiler() {
    return
        [this](const std::string &source) { return compile(context, source); };
  }
  auto runner() {
    return [this](ModuleOp module,
                  std::vector<emulation::EmulatorArgument> arguments,
                  emulation::EmulatorStats *stats) {
      return run(module, std::move(arguments), stats);
    };
  }
};

//===----------------------------------------------------------------------===//
// Quantize kernels
//===----------------------------------------------------------------------===//

struct QuantizeCase {
  std::vector<int64_t> shape;
  std::string element; // f4E2M1FN, f8E4M3FN, f8E5M2
  std::string input;   // f32, bf16, f16
  bool rceil;
  bool specials;
  bool stochastic = false;
};

numerics::Format getFormat(const std::string &element) {
  if (element == "f4E2M1FN")
    return numerics::Format::MXFP4;
  if (element == "f8E4M3FN")
    return numerics::Format::MXFP8E4M3;
  return numerics::Format::MXFP8E5M2;
}

void PrintTo(const QuantizeCase &c, std::ostream *os) {
  *os << c.element << " from " << c.input << " " << join(c.shape, "x")
      << (c.rceil ? " rceil" : " floor") << (c.stochastic ? " SR" : " RNE");
}

class QuantizeKernelTest : public KernelEmulationTest,
                           public ::testing::WithParamInterface<QuantizeCase> {
};

TEST_P(QuantizeKernelTest, MatchesLibrary) {
  const QuantizeCase &c = GetParam();
  std::vector<int64_t> scaleShape = c.shape;
  scaleShape.back() /= 32;
  std::vector<int64_t> block(c.shape.size(), 1);
  block.back() = 32;
  const std::string tensor =
      "tensor<" + join(c.shape, "x") + "x" + c.input + ">";
  const std::string scaled = "!fp4train.scaled<" + join(c.shape, "x") + "x" +
                             c.element + ", block = [" + join(block, ", ") +
                             "], scale = f8E8M0FNU>";
  const std::string source =
      "func.func @main(%x: " + tensor + (c.stochastic ? ", %seed: i64" : "") +
      ") -> " + scaled + " {\n" + "  %q = fp4train.quantize %x" +
      (c.stochastic ? " rounding = stochastic" : "") +
      (c.rceil ? " scale_mode = rceil" : "") +
      (c.stochastic ? " seed(%seed)" : "") + " : " + tensor + " -> " + scaled +
      "\n  return %q : " + scaled + "\n}\n";
  OwningOpRef<ModuleOp> module = compile(context, source);
  ASSERT_TRUE(module);

  const int64_t count = product(c.shape);
  std::vector<float> data = makeQuantizeData(count, c.input, c.specials, 7);
  const uint64_t seed = 0x0123456789ABCDEFull;
  std::vector<emulation::EmulatorArgument> arguments = {
      emulation::EmulatorArgument::buffer(encodeInput(data, c.input))};
  if (c.stochastic)
    arguments.push_back(emulation::EmulatorArgument::bits(seed));
  emulation::EmulatorStats stats;
  auto results = run(*module, arguments, &stats);
  ASSERT_EQ(results.size(), 2u);
  EXPECT_EQ(stats.launches, 1u) << "the quantize op did not become a kernel";
  EXPECT_GT(stats.conversions, 0u);

  numerics::QuantConfig config;
  config.format = getFormat(c.element);
  config.scaleMode =
      c.rceil ? numerics::ScaleMode::RCeil : numerics::ScaleMode::Floor;
  if (c.stochastic) {
    config.rounding = numerics::Rounding::Stochastic;
    config.seed = seed;
  }
  auto expected = numerics::quantize(data.data(), c.shape, config);
  ASSERT_TRUE(static_cast<bool>(expected)) << expected.error().message;
  ASSERT_EQ(results[1].size(), expected->scales.size());
  int bad = compareCodes(loadStoredCodes(results[0], *expected),
                         expected->codes, "code", &data);
  bad += compareCodes(results[1], expected->scales, "scale");
  EXPECT_EQ(bad, 0);
}

std::vector<QuantizeCase> quantizeCases() {
  std::vector<QuantizeCase> cases;
  for (std::string element : {"f4E2M1FN", "f8E4M3FN", "f8E5M2"})
    for (bool rceil : {false, true}) {
      // 256 blocks: one full workgroup; 8 x 40 x 96: 960 blocks, a ragged
      // last workgroup.
      cases.push_back({{64, 128}, element, "f32", rceil, true});
      cases.push_back({{8, 40, 96}, element, "f32", rceil, false});
    }
  // [SR1] on v_cvt_scalef32_sr_pk_fp4_f32, one Philox word per element.
  for (bool rceil : {false, true}) {
    cases.push_back({{64, 128}, "f4E2M1FN", "f32", rceil, true, true});
    cases.push_back({{8, 40, 96}, "f4E2M1FN", "f32", rceil, false, true});
  }
  cases.push_back({{40, 64}, "f4E2M1FN", "bf16", false, true, true});
  for (std::string input : {"bf16", "f16"}) {
    cases.push_back({{40, 64}, "f4E2M1FN", input, false, true});
    cases.push_back({{33, 32}, "f8E4M3FN", input, true, false});
  }
  return cases;
}

INSTANTIATE_TEST_SUITE_P(
    Gfx950, QuantizeKernelTest, ::testing::ValuesIn(quantizeCases()),
    [](const ::testing::TestParamInfo<QuantizeCase> &info) {
      const QuantizeCase &c = info.param;
      return c.element.substr(0, 2) + c.element.substr(3) + "_" + c.input +
             "_" + join(c.shape, "x") + (c.rceil ? "_rceil" : "_floor") +
             (c.specials ? "_specials" : "") + (c.stochastic ? "_sr" : "");
    });

//===----------------------------------------------------------------------===//
// Hadamard kernels
//===----------------------------------------------------------------------===//

class HadamardKernelTest : public KernelEmulationTest,
                           public ::testing::WithParamInterface<HadamardCase> {
};

TEST_P(HadamardKernelTest, MatchesLibrary) {
  checkHadamardKernel(GetParam(), compiler(), runner());
}

std::vector<HadamardCase> hadamardCases() {
  std::vector<HadamardCase> cases;
  // Every size along the last dimension, 40 rows: block counts that do not
  // fill the last workgroup.
  for (int64_t n : {16, 32, 64, 128, 256})
    cases.push_back({{40, 512}, n, 1, "fixed", false});
  cases.push_back({{40, 256}, 64, 1, "none", true});
  cases.push_back({{40, 256}, 32, 1, "random", false});
  cases.push_back({{40, 256}, 256, 1, "random", true});
  // Strided blocks: along dimension 0 and the middle of a 3-D tensor.
  cases.push_back({{256, 24}, 256, 0, "random", false});
  cases.push_back({{64, 40}, 16, 0, "fixed", true});
  cases.push_back({{3, 128, 5}, 128, 1, "none", false});
  cases.push_back({{2, 32, 70}, 32, 1, "fixed", false});
  return cases;
}

INSTANTIATE_TEST_SUITE_P(
    Gfx950, HadamardKernelTest, ::testing::ValuesIn(hadamardCases()),
    [](const ::testing::TestParamInfo<HadamardCase> &info) {
      return getHadamardTestName(info.param);
    });

//===----------------------------------------------------------------------===//
// Fused Hadamard + quantize kernels
//===----------------------------------------------------------------------===//

class HadamardQuantizeKernelTest
    : public KernelEmulationTest,
      public ::testing::WithParamInterface<HadamardQuantizeCase> {};

TEST_P(HadamardQuantizeKernelTest, MatchesLibrary) {
  checkHadamardQuantizeKernel(GetParam(), compiler(), runner());
}

/// MX formats only: gfx950 quantizes NVFP4 on the host, so its rotation
/// keeps the Hadamard kernel (test/Conversion/FP4TrainToAMDGPU).
std::vector<HadamardQuantizeCase> hadamardQuantizeCases() {
  using numerics::Format;
  return {
      // The mxfp4-hadamard recipe's Wgrad operands: 32-point fixed rotation
      // along tokens, MXFP4 RNE; 40 x 256 is 2.5 workgroups.
      {{40, 256}, 32, "fixed", Format::MXFP4},
      {{32, 64}, 32, "fixed", Format::MXFP4},
      // mxfp4-random-hadamard with SR (the hardware's SR conversions).
      {{64, 128}, 32, "random", Format::MXFP4, "f32", true},
      // n = 16 < B = 32, n = 128 (MXFP8 E4M3) and 256 (SR, inverse), bf16.
      {{40, 64}, 16, "none", Format::MXFP4},
      {{24, 512}, 128, "fixed", Format::MXFP8E4M3},
      {{12, 256}, 256, "random", Format::MXFP4, "f32", true, true, false, true},
      {{2, 20, 64}, 64, "fixed", Format::MXFP8E4M3, "bf16"},
      // The rotation also returned: its Hadamard kernel stays for that use.
      {{40, 128}, 32, "fixed", Format::MXFP4, "f32", false, true, true},
  };
}

INSTANTIATE_TEST_SUITE_P(Gfx950, HadamardQuantizeKernelTest,
                         ::testing::ValuesIn(hadamardQuantizeCases()),
                         [](const auto &info) {
                           return getHadamardQuantizeTestName(info.param);
                         });

//===----------------------------------------------------------------------===//
// GEMM kernels
//===----------------------------------------------------------------------===//

struct GemmCase {
  int64_t batch, m, n, k;
  std::string elementA, elementB;
  std::string mfma;
  /// bf16: the result is truncated to bf16 (arith.truncf), which the
  /// kernel's bf16 epilogue takes over; compared with the library's f32
  /// result rounded to nearest even.
  bool bf16 = false;
};

void PrintTo(const GemmCase &c, std::ostream *os) {
  *os << c.batch << "x" << c.m << "x" << c.n << "x" << c.k << " " << c.elementA
      << " x " << c.elementB << " mfma=" << c.mfma
      << (c.bf16 ? " -> bf16" : "");
}

class GemmKernelTest : public KernelEmulationTest,
                       public ::testing::WithParamInterface<GemmCase> {
protected:
  void check(bool exact);
};

void GemmKernelTest::check(bool exact) {
  const GemmCase &c = GetParam();
  auto scaled = [&](int64_t rows, const std::string &element) {
    std::string shape = (c.batch > 1 ? std::to_string(c.batch) + "x" : "") +
                        std::to_string(rows) + "x" + std::to_string(c.k);
    std::string block = c.batch > 1 ? "[1, 1, 32]" : "[1, 32]";
    return "!fp4train.scaled<" + shape + "x" + element + ", block = " + block +
           ", scale = f8E8M0FNU>";
  };
  const std::string accType =
      "tensor<" + (c.batch > 1 ? std::to_string(c.batch) + "x" : "") +
      std::to_string(c.m) + "x" + std::to_string(c.n) + "xf32>";
  const std::string a = scaled(c.m, c.elementA), b = scaled(c.n, c.elementB);
  std::string resultType = accType, truncation;
  if (c.bf16) {
    resultType = accType.substr(0, accType.size() - 4) + "bf16>";
    truncation = "\n  %t = arith.truncf %c : " + accType + " to " + resultType;
  }
  const std::string source =
      "func.func @main(%a: " + a + ", %b: " + b + ", %acc: " + accType +
      ") -> " + resultType +
      " {\n  %c = fp4train.scaled_matmul %a, %b, %acc : " + a + ", " + b +
      ", " + accType + truncation + "\n  return " + (c.bf16 ? "%t" : "%c") +
      " : " + resultType + "\n}\n";
  OwningOpRef<ModuleOp> module = compile(context, source, c.mfma);
  ASSERT_TRUE(module);

  std::mt19937 rng(exact ? 11 : 12);
  const int64_t blocks = c.k / 32;
  std::vector<uint8_t> codesA =
      makeCodes(c.batch * c.m * c.k, c.elementA, exact, rng);
  std::vector<uint8_t> codesB =
      makeCodes(c.batch * c.n * c.k, c.elementB, exact, rng);
  std::vector<uint8_t> scalesA = makeScales(c.batch * c.m * blocks, exact, rng);
  std::vector<uint8_t> scalesB = makeScales(c.batch * c.n * blocks, exact, rng);
  std::vector<float> acc(c.batch * c.m * c.n);
  std::uniform_int_distribution<int> small(-64, 64);
  for (float &x : acc)
    x = exact ? small(rng) / 16.0f : std::ldexp(float(small(rng)), 20);

  emulation::EmulatorStats stats;
  auto results =
      run(*module,
          {emulation::EmulatorArgument::buffer(numerics::packCodes(
               getElementType(c.elementA), codesA, {c.batch * c.m, c.k})),
           emulation::EmulatorArgument::buffer(scalesA),
           emulation::EmulatorArgument::buffer(numerics::packCodes(
               getElementType(c.elementB), codesB, {c.batch * c.n, c.k})),
           emulation::EmulatorArgument::buffer(scalesB),
           emulation::EmulatorArgument::buffer(asBytes(acc))},
          &stats);
  ASSERT_EQ(results.size(), 1u);
  EXPECT_GT(stats.mfmas, 0u);
  std::vector<float> kernel = decodeGemmResult(results[0], acc.size(), c.bf16);

  int bad = 0;
  for (int64_t batch = 0; batch < c.batch; ++batch) {
    numerics::GemmOperand opA, opB;
    opA.codes = codesA.data() + batch * c.m * c.k;
    opA.rows = c.m;
    opA.k = c.k;
    opA.elementType = getElementType(c.elementA);
    opA.scales = scalesA.data() + batch * c.m * blocks;
    opA.scaleRowStride = blocks;
    opB = opA;
    opB.codes = codesB.data() + batch * c.n * c.k;
    opB.rows = c.n;
    opB.elementType = getElementType(c.elementB);
    opB.scales = scalesB.data() + batch * c.n * blocks;
    bad += compareWithGemm(opA, opB, acc.data() + batch * c.m * c.n,
                           kernel.data() + batch * c.m * c.n, exact, c.bf16,
                           "batch " + std::to_string(batch));
  }
  EXPECT_EQ(bad, 0);
}

TEST_P(GemmKernelTest, ExactDataBitForBit) {
  if (kUnderAddressSanitizer)
    GTEST_SKIP() << kFullRangeCoversExactUnderASan;
  check(/*exact=*/true);
}
TEST_P(GemmKernelTest, FullRangeWithinReassociationBound) {
  check(/*exact=*/false);
}

std::vector<GemmCase> gemmCases() {
  return {
      // Tile multiples (16x16x128: 64x64 tiles, K steps of 128).
      {1, 128, 64, 256, "f4E2M1FN", "f4E2M1FN", "16x16x128"},
      {1, 128, 128, 256, "f4E2M1FN", "f4E2M1FN", "32x32x64"},
      // Ragged M, N and K (K = 10 blocks, not a whole K step).
      {1, 100, 72, 320, "f4E2M1FN", "f8E4M3FN", "16x16x128"},
      {1, 130, 40, 192, "f8E5M2", "f4E2M1FN", "32x32x64"},
      {1, 48, 80, 96, "f8E4M3FN", "f8E5M2", "16x16x128"},
      // 16x16x128 on 128x128 tiles (4x4 instructions per wave): a tile
      // multiple, ragged M, N and K.
      {1, 128, 128, 256, "f4E2M1FN", "f4E2M1FN", "16x16x128/128"},
      {1, 130, 72, 320, "f4E2M1FN", "f8E4M3FN", "16x16x128/128"},
      // The main loop runs two K steps per iteration (buffer 0, buffer 1):
      // 5 steps (two iterations, no odd step) and 4 steps (one iteration
      // and a peeled odd step), each before the peeled last step.
      {1, 40, 24, 640, "f4E2M1FN", "f4E2M1FN", "16x16x128"},
      {1, 72, 40, 480, "f8E4M3FN", "f4E2M1FN", "32x32x64"},
      // The grouped tile order ([RAS1], bands of 8 row tiles): 10 x 3
      // tiles of 64 (a second band of two rows), ragged.
      {1, 620, 150, 128, "f4E2M1FN", "f4E2M1FN", "16x16x128"},
      // A batch; expert batches ([ROLE7], the shapes of
      // test/Pipelines/Inputs/moe_experts.mlir: 4 experts' Fprop in MXFP4, a
      // Dgrad in MXFP8).
      {2, 40, 24, 160, "f4E2M1FN", "f4E2M1FN", "auto"},
      {4, 32, 128, 64, "f4E2M1FN", "f4E2M1FN", "auto"},
      {4, 32, 64, 128, "f8E5M2", "f8E4M3FN", "auto"},
      // bf16 epilogue: tile multiples, ragged M and even N (32-bit pair
      // stores), odd N (one guarded bf16 store per element), a batch.
      {1, 128, 64, 256, "f4E2M1FN", "f4E2M1FN", "16x16x128", true},
      {1, 128, 128, 256, "f4E2M1FN", "f4E2M1FN", "32x32x64", true},
      {1, 100, 72, 320, "f4E2M1FN", "f8E4M3FN", "16x16x128", true},
      {1, 130, 41, 192, "f8E5M2", "f4E2M1FN", "32x32x64", true},
      {1, 130, 41, 192, "f4E2M1FN", "f4E2M1FN", "16x16x128/128", true},
      {2, 40, 24, 160, "f4E2M1FN", "f4E2M1FN", "auto", true},
  };
}

INSTANTIATE_TEST_SUITE_P(Gfx950, GemmKernelTest,
                         ::testing::ValuesIn(gemmCases()),
                         [](const ::testing::TestParamInfo<GemmCase> &info) {
                           const GemmCase &c = info.param;
                           return sanitizeTestName(
                               std::to_string(c.batch) + "x" +
                               std::to_string(c.m) + "x" + std::to_string(c.n) +
                               "x" + std::to_string(c.k) + "_" +
                               c.elementA.substr(3) + "_" +
                               c.elementB.substr(3) + "_" + c.mfma +
                               (c.bf16 ? "_bf16" : ""));
                         });

} // namespace
