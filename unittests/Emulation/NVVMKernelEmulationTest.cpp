//===- NVVMKernelEmulationTest.cpp - sm_120a / sm_90a kernels vs numerics -===//
//
// DESIGN.md §7.4 for NVIDIA: the kernels fp4train-to-nvvm generates for
// sm_120a and sm_90a are compiled by buildCUDAKernelPipeline (recipe none;
// the module gpu-to-nvvm would get next) and executed by the lockstep
// emulator on the chip's instruction set, whose nvvm.mma.block_scale (sm_120a),
// FP8 mma.sync and prmt (sm_90a) and nvvm.convert.* ops are the PTX models of
// lib/Emulation/PTX; the results are compared with the numerics library on
// the same inputs, every case on both chips:
//  - quantize kernels: codes, scales and the NVFP4 global decode scale bit
//    for bit: MXFP4 RNE (floor, rceil), MXFP8 E4M3 / E5M2 RNE, MXFP4 and
//    NVFP4 [SR1] with the library's seed, NVFP4 ([NV1], blocks of 16) with
//    amax_tensor computed by the reduction kernel or supplied; f32 and bf16
//    inputs; block counts that fill the 256-thread workgroups and ragged
//    ones; special values (zero block, subnormals, ties, ±Inf, NaN, blocks
//    floor scales clip);
//  - Hadamard kernels bit for bit against numerics::hadamardRotate;
//  - GEMM kernels ([GEMM1]) on mma.sync m16n8k64 (MXFP4, NVFP4 with 1-D
//    and 16x16 blocks and global scales) and m16n8k32 (MXFP8 E4M3 x E4M3,
//    E4M3 x E5M2): tile multiples (128x128 tiles, K steps of 128), ragged
//    M, N, K, a batch, f32 results and the bf16 epilogue (compared after
//    RNE to bf16):
//      * bit for bit on data whose every partial sum is exact in f32 (every
//        E2M1 code, FP8 magnitudes in [0.5, 4), E8M0 scales 2^-1..2^1,
//        UE4M3 scales and global scales that are powers of two), so any
//        misplaced fragment, scale byte or selector changes the result;
//      * on full-range data (every finite code, E8M0 scales 2^-20..2^20,
//        every finite nonzero UE4M3 scale, global scales that are not powers
//        of two) within the reassociation bound of compareWithGemm: the
//        kernel rounds once per mma (k64: 2 MX or 4 NVFP4 blocks; k32: 1
//        MXFP8 block) plus twice in the epilogue, [GEMM1] once per block
//        plus twice, so
//          |kernel - library| <= 2 (nb + 2) 2^-24 (g Σ_b |term_b| + |acc|)
//                                + 2^-149,   nb = K / block size;
//  - sm_90a: MXFP4 and NVFP4 bit for bit on every data set, also with
//    scales over the whole finite range (terms that overflow, underflow or
//    are f32 subnormals: ExtremeScalesBitForBit), since the FP8 mma.sync's
//    block sums of widened E2M1 are exact and each term is rounded once
//    (MmaSyncFP8.cpp); MXFP8 (one MMA per block, whose 32 FP8 products the
//    model rounds once) within the same bound on full-range data.
//
//===----------------------------------------------------------------------===//

#include "KernelEmulationTestUtils.h"

#include "fp4train/Numerics/BlockQuant.h"
#include "fp4train/Pipelines/Pipelines.h"

using namespace mlir;
using namespace mlir::fp4train;
using namespace ::fp4train::emulation_test;
namespace numerics = ::fp4train::numerics;

namespace {

/// The chips with an NVVM instruction set in the emulator.
const std::vector<std::string> kChips = {"sm_120a", "sm_90a"};

bool isSM90(const std::string &chip) { return chip == "sm_90a"; }

/// Parses `source` and lowers it with buildCUDAKernelPipeline for `chip`.
OwningOpRef<ModuleOp> compileForChip(MLIRContext &context,
                                     const std::string &chip,
                                     const std::string &source) {
  CUDAPipelineOptions options;
  options.recipe = "none";
  options.chip = chip;
  return compile(context, source, [&](OpPassManager &pm) {
    buildCUDAKernelPipeline(pm, options);
  });
}

/// A test on one chip: the parameter is (chip, case).
template <typename Case>
class NVVMKernelEmulationTest
    : public KernelEmulationFixture,
      public ::testing::WithParamInterface<std::tuple<std::string, Case>> {
protected:
  const std::string &getChip() const { return std::get<0>(this->GetParam()); }
  const Case &getCase() const { return std::get<1>(this->GetParam()); }
  OwningOpRef<ModuleOp> compile(const std::string &source) {
    return compileForChip(context, getChip(), source);
  }
  std::vector<std::vector<uint8_t>>
  run(ModuleOp module, std::vector<emulation::EmulatorArgument> arguments,
      emulation::EmulatorStats *stats = nullptr) {
    return KernelEmulationFixture::run(module, std::move(arguments),
                                       getChip(), stats);
  }
  /// The compile and run callbacks of the shared kernel checks.
  auto compiler() {
    return [this](const std::string &source) { return compile(source); };
  }
  auto runner() {
    return [this](ModuleOp module,
                  std::vector<emulation::EmulatorArgument> arguments,
                  emulation::EmulatorStats *stats) {
      return run(module, std::move(arguments), stats);
    };
  }
};

/// gtest parameter names: chip_case.
template <typename Case>
std::string getParamName(
    const ::testing::TestParamInfo<std::tuple<std::string, Case>> &info,
    std::string (*name)(const Case &)) {
  return sanitizeTestName(std::get<0>(info.param)) + "_" +
         name(std::get<1>(info.param));
}

//===----------------------------------------------------------------------===//
// Quantize kernels
//===----------------------------------------------------------------------===//

enum class Amax { None, Computed, Supplied };

struct QuantizeCase {
  std::vector<int64_t> shape;
  numerics::Format format;
  std::string input; // f32, bf16
  bool rceil;
  bool specials;
  bool stochastic = false;
  /// NVFP4 only: how amax_tensor is obtained.
  Amax amax = Amax::None;
  /// NVFP4 only: 16x16 blocks over the last two dimensions.
  bool twoD = false;
};

std::string getQuantizeTestName(const QuantizeCase &c) {
  std::string name = std::string(numerics::getFormatName(c.format)) + "_" +
                     c.input + "_" + join(c.shape, "x") +
                     (c.rceil ? "_rceil" : "_floor") +
                     (c.specials ? "_specials" : "") +
                     (c.stochastic ? "_sr" : "") +
                     (c.amax == Amax::Computed   ? "_amax_computed"
                      : c.amax == Amax::Supplied ? "_amax_supplied"
                                                 : "") +
                     (c.twoD ? "_2d" : "");
  return sanitizeTestName(name);
}

void PrintTo(const QuantizeCase &c, std::ostream *os) {
  *os << getQuantizeTestName(c);
}

using NVVMQuantizeKernelTest = NVVMKernelEmulationTest<QuantizeCase>;

TEST_P(NVVMQuantizeKernelTest, MatchesLibrary) {
  const QuantizeCase &c = getCase();
  const bool nv = c.format == numerics::Format::NVFP4;
  const int64_t blockSize = nv ? 16 : 32;
  std::vector<int64_t> block(c.shape.size(), 1);
  block.back() = blockSize;
  if (c.twoD)
    block[block.size() - 2] = blockSize;
  const std::string tensor =
      "tensor<" + join(c.shape, "x") + "x" + c.input + ">";
  const std::string scaled =
      "!fp4train.scaled<" + join(c.shape, "x") + "x" +
      getFormatElementName(c.format) + ", block = [" + join(block, ", ") +
      "], scale = " + (nv ? "f8E4M3FN, global>" : "f8E8M0FNU>");
  const bool supplied = c.amax == Amax::Supplied;
  const std::string source =
      "func.func @main(%x: " + tensor + (c.stochastic ? ", %seed: i64" : "") +
      (supplied ? ", %amax: f32" : "") + ") -> " + scaled + " {\n" +
      "  %q = fp4train.quantize %x" +
      (c.stochastic ? " rounding = stochastic" : "") +
      (c.rceil ? " scale_mode = rceil" : "") +
      (c.stochastic ? " seed(%seed)" : "") + (supplied ? " amax(%amax)" : "") +
      " : " + tensor + " -> " + scaled + "\n  return %q : " + scaled +
      "\n}\n";
  OwningOpRef<ModuleOp> module = compile(source);
  ASSERT_TRUE(module);

  const int64_t count = product(c.shape);
  std::vector<float> data = makeQuantizeData(count, c.input, c.specials, 7);
  // A computed amax_tensor over Inf/NaN would make every NVFP4 block NaN;
  // the supplied-amax cases keep them (per-block NaN/Inf handling).
  if (c.amax == Amax::Computed)
    for (float &x : data)
      if (!std::isfinite(x))
        x = -40000.0f;
  const uint64_t seed = 0x0123456789ABCDEFull;
  // Delayed scaling with an amax below the tensor's: the largest blocks'
  // scales saturate at 448.
  const float amax = 3000.0f;
  std::vector<emulation::EmulatorArgument> arguments = {
      emulation::EmulatorArgument::buffer(encodeInput(data, c.input))};
  if (c.stochastic)
    arguments.push_back(emulation::EmulatorArgument::bits(seed));
  if (supplied)
    arguments.push_back(
        emulation::EmulatorArgument::bits(numerics::floatToBits(amax)));
  emulation::EmulatorStats stats;
  auto results = run(*module, arguments, &stats);
  ASSERT_EQ(results.size(), nv ? 3u : 2u);
  // NVFP4 with a computed amax: the reduction kernel, then the quantize.
  EXPECT_EQ(stats.launches, c.amax == Amax::Computed ? 2u : 1u)
      << "the quantize op did not become the expected kernels";
  // Hardware conversions for RNE E2M1/E4M3 elements and E4M3 (NVFP4) scales
  // on sm_120a, for RNE E4M3 elements only on sm_90a (no FP4 conversion);
  // E5M2, SR and the MX scales are the integer recipes.
  if (isSM90(getChip()))
    EXPECT_EQ(stats.conversions > 0,
              !c.stochastic && c.format == numerics::Format::MXFP8E4M3);
  else if (!c.stochastic && c.format != numerics::Format::MXFP8E5M2)
    EXPECT_GT(stats.conversions, 0u);

  numerics::QuantConfig config = getLibraryConfig(
      c.format, c.stochastic, seed, supplied ? std::optional<float>(amax)
                                             : std::nullopt);
  config.twoDimensional = c.twoD;
  config.scaleMode =
      c.rceil ? numerics::ScaleMode::RCeil : numerics::ScaleMode::Floor;
  auto expected = numerics::quantize(data.data(), c.shape, config);
  ASSERT_TRUE(static_cast<bool>(expected)) << expected.error().message;
  EXPECT_EQ(compareQuantized(results, *expected, data), 0);
}

std::vector<QuantizeCase> quantizeCases() {
  using numerics::Format;
  std::vector<QuantizeCase> cases;
  // 256 blocks: one full workgroup, with the special values; 10 x 960: 300
  // blocks, a ragged second workgroup.
  for (Format format : {Format::MXFP4, Format::MXFP8E4M3, Format::MXFP8E5M2})
    for (bool rceil : {false, true}) {
      cases.push_back({{64, 128}, format, "f32", rceil, true});
      cases.push_back({{10, 960}, format, "f32", rceil, false});
    }
  cases.push_back({{40, 64}, Format::MXFP4, "bf16", false, true});
  cases.push_back({{33, 32}, Format::MXFP8E4M3, "bf16", true, false});
  cases.push_back({{40, 64}, Format::MXFP8E5M2, "bf16", false, true});
  // [SR1]: the kernel's Philox words against the library's, same seed.
  cases.push_back({{64, 128}, Format::MXFP4, "f32", false, true, true});
  cases.push_back({{10, 960}, Format::MXFP4, "f32", true, false, true});
  cases.push_back({{40, 64}, Format::MXFP4, "bf16", false, true, true});
  // [NV1] blocks of 16: 512 blocks (two full workgroups) and 300 (ragged).
  cases.push_back({{64, 128}, Format::NVFP4, "f32", false, true, false,
                   Amax::Computed});
  cases.push_back({{64, 128}, Format::NVFP4, "f32", false, true, false,
                   Amax::Supplied});
  cases.push_back({{20, 240}, Format::NVFP4, "f32", false, false, false,
                   Amax::Computed});
  cases.push_back({{3, 10, 160}, Format::NVFP4, "bf16", false, true, false,
                   Amax::Supplied});
  cases.push_back({{40, 64}, Format::NVFP4, "bf16", false, true, false,
                   Amax::Computed});
  cases.push_back({{64, 128}, Format::NVFP4, "f32", false, true, true,
                   Amax::Computed});
  // [NV1] 16x16 blocks (the weight layout): 48 x 320 is 3 bands of 20 column
  // blocks, a full and a ragged workgroup each; a batch dimension; SR.
  cases.push_back({{48, 320}, Format::NVFP4, "f32", false, false, false,
                   Amax::Computed, true});
  cases.push_back({{32, 256}, Format::NVFP4, "f32", false, true, false,
                   Amax::Supplied, true});
  cases.push_back({{2, 32, 64}, Format::NVFP4, "bf16", false, true, false,
                   Amax::Computed, true});
  cases.push_back({{32, 64}, Format::NVFP4, "f32", false, true, true,
                   Amax::Computed, true});
  return cases;
}

INSTANTIATE_TEST_SUITE_P(
    NVVM, NVVMQuantizeKernelTest,
    ::testing::Combine(::testing::ValuesIn(kChips),
                       ::testing::ValuesIn(quantizeCases())),
    [](const auto &info) { return getParamName(info, getQuantizeTestName); });

//===----------------------------------------------------------------------===//
// Hadamard kernels
//===----------------------------------------------------------------------===//

using NVVMHadamardKernelTest = NVVMKernelEmulationTest<HadamardCase>;

TEST_P(NVVMHadamardKernelTest, MatchesLibrary) {
  checkHadamardKernel(getCase(), this->compiler(), this->runner());
}

std::vector<HadamardCase> hadamardCases() {
  return {
      // Along the last dimension; 40 rows: workgroups the blocks do not fill.
      {{40, 256}, 16, 1, "fixed", false},
      {{40, 256}, 64, 1, "none", true},
      {{40, 256}, 256, 1, "random", false},
      {{40, 128}, 32, 1, "random", true},
      // Strided blocks: dimension 0 and the middle of a 3-D tensor.
      {{128, 24}, 128, 0, "fixed", true},
      {{3, 64, 5}, 64, 1, "random", false},
  };
}

INSTANTIATE_TEST_SUITE_P(
    NVVM, NVVMHadamardKernelTest,
    ::testing::Combine(::testing::ValuesIn(kChips),
                       ::testing::ValuesIn(hadamardCases())),
    [](const auto &info) { return getParamName(info, getHadamardTestName); });

//===----------------------------------------------------------------------===//
// Fused Hadamard + quantize kernels
//===----------------------------------------------------------------------===//

using NVVMHadamardQuantizeKernelTest =
    NVVMKernelEmulationTest<HadamardQuantizeCase>;

TEST_P(NVVMHadamardQuantizeKernelTest, MatchesLibrary) {
  checkHadamardQuantizeKernel(getCase(), this->compiler(), this->runner());
}

std::vector<HadamardQuantizeCase> hadamardQuantizeCases() {
  using numerics::Format;
  return {
      // The nvfp4 recipe's Wgrad operands (tokens last after the transpose):
      // RHT-16 with random signs, SR on dY, amax of the rotated tensor
      // computed (rotate+amax kernel, then rotate+quantize); 40 x 240 leaves
      // the last workgroup ragged.
      {{32, 64}, 16, "random", Format::NVFP4, "f32", true},
      {{40, 240}, 16, "random", Format::NVFP4, "f32", false},
      // NVFP4 with rotations larger than its blocks, supplied amax, a batch
      // and bf16 through arith.extf.
      {{40, 96}, 32, "fixed", Format::NVFP4},
      {{3, 10, 256}, 256, "fixed", Format::NVFP4, "bf16", false, false},
      // The mxfp4-hadamard recipe's: 32-point fixed rotation, MXFP4 RNE;
      // 40 x 256 is 2.5 workgroups.
      {{40, 256}, 32, "fixed", Format::MXFP4},
      {{64, 128}, 32, "random", Format::MXFP4, "f32", true},
      // n = 16 < B = 32, n = 128 and 256 (inverse), MXFP8 E4M3, bf16.
      {{40, 64}, 16, "none", Format::MXFP4},
      {{24, 512}, 128, "fixed", Format::MXFP8E4M3},
      {{12, 256}, 256, "random", Format::MXFP4, "f32", true, true, false,
       true},
      {{40, 64}, 64, "fixed", Format::MXFP4, "bf16"},
      // The rotation also returned: its Hadamard kernel stays for that use.
      {{40, 128}, 32, "fixed", Format::MXFP4, "f32", false, true, true},
  };
}

INSTANTIATE_TEST_SUITE_P(
    NVVM, NVVMHadamardQuantizeKernelTest,
    ::testing::Combine(::testing::ValuesIn(kChips),
                       ::testing::ValuesIn(hadamardQuantizeCases())),
    [](const auto &info) {
      return getParamName(info, getHadamardQuantizeTestName);
    });

//===----------------------------------------------------------------------===//
// GEMM kernels
//===----------------------------------------------------------------------===//

/// An operand's format: mxfp4, nvfp4 (1-D blocks of 16), nvfp4-2d (16x16
/// blocks, the weight layout), e4m3, e5m2 (MXFP8).
struct GemmCase {
  int64_t batch, m, n, k;
  std::string formatA, formatB;
  /// The result's only use is an arith.truncf to bf16 (the kernel's bf16
  /// epilogue); compared with the library's result rounded to bf16.
  bool bf16 = false;
};

std::string getGemmTestName(const GemmCase &c) {
  return sanitizeTestName(std::to_string(c.batch) + "x" + std::to_string(c.m) +
                          "x" + std::to_string(c.n) + "x" +
                          std::to_string(c.k) + "_" + c.formatA + "_" +
                          c.formatB + (c.bf16 ? "_bf16" : ""));
}

void PrintTo(const GemmCase &c, std::ostream *os) { *os << getGemmTestName(c); }

bool isNVFP4(const std::string &format) {
  return format.rfind("nvfp4", 0) == 0;
}

/// One operand's codes, scales and global decode scale, as the 1:N type
/// conversion passes a !fp4train.scaled argument (codes one per byte, scale
/// codes, then the f32 S_dec for NVFP4).
struct GemmInput {
  std::string format;
  int64_t batch, rows, k;
  std::vector<uint8_t> codes, scales;
  float globalDecodeScale = 1.0f;

  bool isNV() const { return isNVFP4(format); }
  bool is2D() const { return format == "nvfp4-2d"; }
  int64_t getBlockSize() const { return isNV() ? 16 : 32; }
  int64_t getScaleRows() const { return is2D() ? rows / 16 : rows; }
  int64_t getScaleColumns() const { return k / getBlockSize(); }
  std::string getElement() const {
    if (format == "e4m3")
      return "f8E4M3FN";
    if (format == "e5m2")
      return "f8E5M2";
    return "f4E2M1FN";
  }

  std::string getType() const {
    std::string shape = (batch > 1 ? std::to_string(batch) + "x" : "") +
                        std::to_string(rows) + "x" + std::to_string(k);
    std::string block = std::string(batch > 1 ? "[1, " : "[") +
                        (is2D() ? "16" : "1") + ", " +
                        std::to_string(getBlockSize()) + "]";
    return "!fp4train.scaled<" + shape + "x" + getElement() +
           ", block = " + block +
           (isNV() ? ", scale = f8E4M3FN, global>" : ", scale = f8E8M0FNU>");
  }

  void addArguments(std::vector<emulation::EmulatorArgument> &arguments) const {
    arguments.push_back(emulation::EmulatorArgument::buffer(codes));
    arguments.push_back(emulation::EmulatorArgument::buffer(scales));
    if (isNV())
      arguments.push_back(emulation::EmulatorArgument::bits(
          numerics::floatToBits(globalDecodeScale)));
  }

  /// Batch entry `b` as a [GEMM1] operand.
  numerics::GemmOperand getOperand(int64_t b) const {
    numerics::GemmOperand op;
    op.codes = codes.data() + b * rows * k;
    op.rows = rows;
    op.k = k;
    op.elementType = getElementType(getElement());
    op.scaleType =
        isNV() ? numerics::ScaleType::E4M3FN : numerics::ScaleType::E8M0;
    op.blockSize = getBlockSize();
    op.scales = scales.data() + b * getScaleRows() * getScaleColumns();
    op.scaleRowGroup = is2D() ? 16 : 1;
    op.scaleRowStride = getScaleColumns();
    op.globalDecodeScale = globalDecodeScale;
    return op;
  }
};

/// Random operand data: `exact` keeps every partial sum exact in f32 (see
/// the file comment); UE4M3 powers of two 2^-1..2^1 are 0x30, 0x38, 0x40.
GemmInput makeGemmInput(const std::string &format, int64_t batch,
                        int64_t rows, int64_t k, bool exact,
                        std::mt19937 &rng) {
  GemmInput input{format, batch, rows, k, {}, {}};
  input.codes = makeCodes(batch * rows * k, input.getElement(), exact, rng);
  const int64_t scaleCount =
      batch * input.getScaleRows() * input.getScaleColumns();
  if (!input.isNV()) {
    input.scales = makeScales(scaleCount, exact, rng);
    return input;
  }
  std::uniform_int_distribution<int> power(0, 2), finite(0x01, 0x7E);
  input.scales.resize(scaleCount);
  for (uint8_t &s : input.scales)
    s = static_cast<uint8_t>(exact ? 0x30 + 8 * power(rng) : finite(rng));
  std::uniform_int_distribution<int> exponent(-4, 2);
  std::uniform_real_distribution<float> mantissa(1.0f, 2.0f);
  input.globalDecodeScale =
      std::ldexp(exact ? 1.0f : mantissa(rng), exponent(rng));
  return input;
}

/// Scale codes over the whole finite range: E8M0 0x00..0xFE (2^-127 ..
/// 2^127), UE4M3 every code but NaN, subnormals and the sign bit included,
/// so that terms overflow, land among the f32 subnormals and underflow.
void makeExtremeScales(GemmInput &input, std::mt19937 &rng) {
  std::uniform_int_distribution<int> e8m0(0x00, 0xFE), e4m3(0x00, 0xFF);
  for (uint8_t &s : input.scales) {
    if (!input.isNV()) {
      s = static_cast<uint8_t>(e8m0(rng));
      continue;
    }
    do
      s = static_cast<uint8_t>(e4m3(rng));
    while ((s & 0x7F) == 0x7F);
  }
}

/// Whether the chip's kernel equals [GEMM1] bit for bit on any data: sm_90a
/// with E2M1 operands (exact block sums, one rounding per term).
bool isBitExactOnAnyData(const std::string &chip, const GemmCase &c) {
  return isSM90(chip) && c.formatA.find("fp4") != std::string::npos &&
         c.formatB.find("fp4") != std::string::npos;
}

class NVVMGemmKernelTest : public NVVMKernelEmulationTest<GemmCase> {
protected:
  enum class Data { Exact, FullRange, ExtremeScales };
  void check(Data data);
  void check(bool exact) { check(exact ? Data::Exact : Data::FullRange); }
};

void NVVMGemmKernelTest::check(Data data) {
  const GemmCase &c = getCase();
  const bool mixed = (c.formatA.find("fp4") == std::string::npos) !=
                     (c.formatB.find("fp4") == std::string::npos);
  if (mixed && !isSM90(getChip()))
    GTEST_SKIP() << getChip() << " rejects FP4 x FP8 operands";
  const bool exact = data == Data::Exact;
  std::mt19937 rng(exact ? 21 : 22);
  GemmInput a = makeGemmInput(c.formatA, c.batch, c.m, c.k, exact, rng);
  GemmInput b = makeGemmInput(c.formatB, c.batch, c.n, c.k, exact, rng);
  if (data == Data::ExtremeScales) {
    makeExtremeScales(a, rng);
    makeExtremeScales(b, rng);
  }
  const std::string accType =
      "tensor<" + (c.batch > 1 ? std::to_string(c.batch) + "x" : "") +
      std::to_string(c.m) + "x" + std::to_string(c.n) + "xf32>";
  std::string resultType = accType, truncation;
  if (c.bf16) {
    resultType = accType.substr(0, accType.size() - 4) + "bf16>";
    truncation = "\n  %t = arith.truncf %c : " + accType + " to " + resultType;
  }
  const std::string source =
      "func.func @main(%a: " + a.getType() + ", %b: " + b.getType() +
      ", %acc: " + accType + ") -> " + resultType +
      " {\n  %c = fp4train.scaled_matmul %a, %b, %acc : " + a.getType() +
      ", " + b.getType() + ", " + accType + truncation + "\n  return " +
      (c.bf16 ? "%t" : "%c") + " : " + resultType + "\n}\n";
  OwningOpRef<ModuleOp> module = compile(source);
  ASSERT_TRUE(module);

  std::vector<float> acc(c.batch * c.m * c.n);
  std::uniform_int_distribution<int> small(-64, 64);
  for (float &x : acc)
    x = exact ? small(rng) / 16.0f : std::ldexp(float(small(rng)), 20);
  std::vector<emulation::EmulatorArgument> arguments;
  a.addArguments(arguments);
  b.addArguments(arguments);
  arguments.push_back(emulation::EmulatorArgument::buffer(asBytes(acc)));

  emulation::EmulatorStats stats;
  auto results = run(*module, arguments, &stats);
  ASSERT_EQ(results.size(), 1u);
  EXPECT_EQ(stats.launches, 1u);
  EXPECT_GT(stats.mfmas, 0u);
  std::vector<float> kernel = decodeGemmResult(results[0], acc.size(), c.bf16);

  int bad = 0;
  for (int64_t batch = 0; batch < c.batch; ++batch)
    bad += compareWithGemm(a.getOperand(batch), b.getOperand(batch),
                           acc.data() + batch * c.m * c.n,
                           kernel.data() + batch * c.m * c.n,
                           exact || isBitExactOnAnyData(getChip(), c), c.bf16,
                           "batch " + std::to_string(batch));
  EXPECT_EQ(bad, 0);
}

TEST_P(NVVMGemmKernelTest, ExactDataBitForBit) { check(/*exact=*/true); }
TEST_P(NVVMGemmKernelTest, FullRangeWithinReassociationBound) {
  check(/*exact=*/false);
}
// sm_90a's FP4 kernels: bit for bit also where terms overflow, underflow or
// are subnormal (the exactness argument of MmaSyncFP8.cpp).
TEST_P(NVVMGemmKernelTest, ExtremeScalesBitForBit) {
  if (!isBitExactOnAnyData(getChip(), getCase()))
    GTEST_SKIP() << "the block sums of this chip and format are not exact";
  check(Data::ExtremeScales);
}

std::vector<GemmCase> gemmCases() {
  return {
      // MXFP4 (m16n8k64 kind::mxf4, 2X UE8M0): a 128x128 tile, two K steps;
      // ragged M, N and K (3 blocks: a partial K step); a batch.
      {1, 128, 128, 256, "mxfp4", "mxfp4"},
      {1, 100, 72, 96, "mxfp4", "mxfp4"},
      {2, 40, 24, 160, "mxfp4", "mxfp4"},
      // NVFP4 (kind::mxf4nvf4, 4X UE4M3) with global scales: 1-D x 1-D,
      // 1-D x 16x16 (the weight layout, scales [N/16, K/16]); ragged M, N
      // and K = 160 (10 blocks); a batch of 2-D-blocked weights.
      {1, 128, 128, 256, "nvfp4", "nvfp4"},
      {1, 100, 72, 160, "nvfp4", "nvfp4"},
      {1, 128, 128, 256, "nvfp4", "nvfp4-2d"},
      {1, 100, 80, 160, "nvfp4", "nvfp4-2d"},
      {2, 40, 32, 160, "nvfp4", "nvfp4-2d"},
      // MXFP8 (m16n8k32 kind::mxf8f6f4, 1X UE8M0).
      {1, 128, 128, 256, "e4m3", "e4m3"},
      {1, 100, 72, 96, "e4m3", "e5m2"},
      // MXFP4 x MXFP8 (sm_90a only: the E2M1 side widened, the FP8 side in
      // the same permuted K order).
      {1, 100, 72, 96, "mxfp4", "e4m3"},
      {1, 64, 40, 128, "e5m2", "mxfp4"},
      // bf16 epilogue: tile multiples, ragged M with even N (pair stores),
      // odd N (guarded single stores), NVFP4 and MXFP8.
      {1, 128, 128, 256, "mxfp4", "mxfp4", true},
      {1, 130, 41, 192, "mxfp4", "mxfp4", true},
      {1, 100, 80, 160, "nvfp4", "nvfp4-2d", true},
      {1, 100, 72, 96, "e4m3", "e5m2", true},
  };
}

INSTANTIATE_TEST_SUITE_P(
    NVVM, NVVMGemmKernelTest,
    ::testing::Combine(::testing::ValuesIn(kChips),
                       ::testing::ValuesIn(gemmCases())),
    [](const auto &info) { return getParamName(info, getGemmTestName); });

} // namespace
