//===- GemmKernelChecks.cpp - GEMM kernels vs [GEMM1] ---------------------===//
//
// The GEMM operand data (element and scale codes that are or are not exact
// in f32, scales at the edges of the finite range), the comparison of a
// kernel's result with numerics::blockScaledGemm, and checkGemmKernel,
// which compiles an fp4train.scaled_matmul for a chip, emulates it and
// compares.
//
//===----------------------------------------------------------------------===//

#include "KernelEmulationTestUtils.h"

#include "fp4train/Numerics/Storage.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"

#include <cmath>
#include <cstring>

namespace fp4train::emulation_test {

//===----------------------------------------------------------------------===//
// GEMM operands and the comparison with [GEMM1]
//===----------------------------------------------------------------------===//

numerics::ElementType getElementType(const std::string &element) {
  if (element == "f4E2M1FN")
    return numerics::ElementType::E2M1;
  if (element == "f8E4M3FN")
    return numerics::ElementType::E4M3FN;
  return numerics::ElementType::E5M2;
}

std::vector<uint8_t> makeCodes(int64_t count, const std::string &element,
                               bool exact, std::mt19937 &rng) {
  std::vector<uint8_t> codes(count);
  std::uniform_int_distribution<int> byte(0, 255);
  for (uint8_t &code : codes) {
    for (;;) {
      int c = byte(rng);
      if (element == "f4E2M1FN") {
        code = c & 0xF;
        break;
      }
      const int magnitude = c & 0x7F;
      if (element == "f8E4M3FN") {
        const int exponent = magnitude >> 3;
        if (magnitude == 0x7F)
          continue; // NaN
        if (exact && magnitude != 0 && (exponent < 6 || exponent > 8))
          continue;
      } else {
        const int exponent = magnitude >> 2;
        if (exponent == 31)
          continue; // Inf / NaN
        if (exact && magnitude != 0 && (exponent < 14 || exponent > 16))
          continue;
      }
      code = static_cast<uint8_t>(c);
      break;
    }
  }
  return codes;
}

std::vector<uint8_t> makeScales(int64_t count, bool exact, std::mt19937 &rng) {
  std::uniform_int_distribution<int> wide(127 - 20, 127 + 20);
  std::uniform_int_distribution<int> narrow(126, 128);
  std::vector<uint8_t> scales(count);
  for (uint8_t &s : scales)
    s = static_cast<uint8_t>(exact ? narrow(rng) : wide(rng));
  return scales;
}

std::vector<float> decodeGemmResult(const std::vector<uint8_t> &bytes,
                                    size_t count, bool bf16) {
  std::vector<float> result(count);
  EXPECT_EQ(bytes.size(), count * (bf16 ? 2 : 4));
  if (bytes.size() != count * (bf16 ? 2 : 4))
    return result;
  if (!bf16) {
    std::memcpy(result.data(), bytes.data(), bytes.size());
    return result;
  }
  for (size_t i = 0; i < count; ++i) {
    uint32_t bits = (uint32_t(bytes[2 * i + 1]) << 8 | bytes[2 * i]) << 16;
    std::memcpy(&result[i], &bits, 4);
  }
  return result;
}

int compareWithGemm(const numerics::GemmOperand &a,
                    const numerics::GemmOperand &b, const float *acc,
                    const float *kernel, bool exact, bool bf16,
                    const std::string &where, bool report) {
  const int64_t m = a.rows, n = b.rows, k = a.k;
  std::vector<float> expected(m * n);
  numerics::Status status =
      numerics::blockScaledGemm(a, b, acc, expected.data());
  EXPECT_TRUE(static_cast<bool>(status)) << status.error().message;
  if (!status)
    return 1;
  const int64_t blocks = k / a.blockSize;
  auto scale = [](const numerics::GemmOperand &op, int64_t row,
                  int64_t block) -> double {
    const uint8_t code =
        op.scales[(row / op.scaleRowGroup) * op.scaleRowStride + block];
    return op.scaleType == numerics::ScaleType::E8M0
               ? std::ldexp(1.0, code - 127)
               : numerics::decodeE4M3FN(code);
  };
  const double g = double(a.globalDecodeScale) * b.globalDecodeScale;
  int bad = 0;
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      const float got = kernel[i * n + j];
      const float want =
          bf16 ? roundToBF16(expected[i * n + j]) : expected[i * n + j];
      double bound = 0;
      if (!exact) {
        double terms = 0;
        for (int64_t blk = 0; blk < blocks; ++blk) {
          double p = 0;
          for (int64_t kk = blk * a.blockSize; kk < (blk + 1) * a.blockSize;
               ++kk)
            p += std::fabs(
                double(numerics::decodeElement(a.elementType,
                                               a.codes[i * k + kk])) *
                numerics::decodeElement(b.elementType, b.codes[j * k + kk]));
          terms += p * scale(a, i, blk) * scale(b, j, blk);
        }
        const double magnitude = g * terms + std::fabs(acc[i * n + j]);
        bound = 2.0 * (blocks + 2) * std::ldexp(magnitude, -24) +
                std::ldexp(1.0, -149);
        // Both sides rounded to bf16: at most one bf16 ulp more.
        if (bf16)
          bound += std::ldexp(std::fabs(double(want)) + bound, -7);
      }
      const bool ok =
          exact ? numerics::floatToBits(got) == numerics::floatToBits(want)
                : std::fabs(double(got) - want) <= bound;
      if (!ok && bad++ < 5 && report)
        ADD_FAILURE() << where << " C[" << i << "," << j << "]: kernel " << got
                      << ", library " << want << " (bound " << bound << ")";
    }
  return bad;
}

//===----------------------------------------------------------------------===//
// GEMM kernels
//===----------------------------------------------------------------------===//

std::string getGemmTestName(const GemmCase &c) {
  return sanitizeTestName(std::to_string(c.batch) + "x" + std::to_string(c.m) +
                          "x" + std::to_string(c.n) + "x" +
                          std::to_string(c.k) + "_" + c.formatA + "_" +
                          c.formatB + (c.bf16 ? "_bf16" : ""));
}

void PrintTo(const GemmCase &c, std::ostream *os) { *os << getGemmTestName(c); }

static bool isNVFP4(const std::string &format) {
  return format.rfind("nvfp4", 0) == 0;
}

namespace {

/// One operand's codes (one per byte), scales and global decode scale; the
/// arguments are what the 1:N type conversion passes for a !fp4train.scaled
/// value: the [PK1] stored codes, the scale codes, then the f32 S_dec for
/// NVFP4.
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
    arguments.push_back(emulation::EmulatorArgument::buffer(numerics::packCodes(
        getElementType(getElement()), codes, {batch * rows, k})));
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

} // namespace

/// Random operand data: `exact` keeps every partial sum exact in f32 (as
/// makeCodes and makeScales do); UE4M3 powers of two 2^-1..2^1 are 0x30,
/// 0x38, 0x40.
static GemmInput makeGemmInput(const std::string &format, int64_t batch,
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
static void makeExtremeScales(GemmInput &input, std::mt19937 &rng) {
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

/// FullRange scales with about one E8M0 code in 64 replaced by one of
/// 0x00..0x35 or 0xBA..0xFE (2^-127..2^-74, 2^59..2^127: outside the window
/// in which the sm_90a kernels fuse the E8M0 scaling into one fma, for
/// every element type), so that in one kernel some warps' K steps take the
/// fused scaling and others the exact one (UE4M3: a random finite code).
static void makeMixedScales(GemmInput &input, std::mt19937 &rng) {
  std::uniform_int_distribution<int> pick(0, 63), outside(0, 0x35 + 0x45),
      e4m3(0x00, 0x7E);
  for (uint8_t &s : input.scales) {
    if (pick(rng))
      continue;
    if (input.isNV()) {
      s = static_cast<uint8_t>(e4m3(rng));
      continue;
    }
    const int code = outside(rng);
    s = static_cast<uint8_t>(code <= 0x35 ? code : 0xBA + code - 0x36);
  }
}

/// E8M0 scales as the sm_90a wgmma kernel's scale fold ([WG2]) meets them:
/// for each 128-row tile of B^T (a workgroup's columns) and block, a
/// reference r in 62..185 and row codes r - 0..8 (every table distance),
/// except that in about one tile and block in four one row's code lies 9..20
/// below r (not foldable), and about one row block in 16 is zero codes with
/// scale code 0 (which the fold ignores). A's codes lie in 100..150 but for
/// about one in 32 at the ends of the range (0..8, 246..254: terms that
/// underflow, and factors sa·2^r past f32's range), so some warps take the
/// folded block's exact path. MX operands only.
static void makeFoldScales(GemmInput &a, GemmInput &b, std::mt19937 &rng) {
  std::uniform_int_distribution<int> rowCode(100, 150), pick32(0, 31),
      extreme(0, 17), reference(62, 185), distance(0, 8), far(9, 20),
      pick4(0, 3), pick16(0, 15);
  for (uint8_t &s : a.scales) {
    const int code = extreme(rng);
    s = static_cast<uint8_t>(pick32(rng) ? rowCode(rng)
                             : code <= 8 ? code
                                         : 246 + code - 9);
  }
  const int64_t blocks = b.getScaleColumns();
  for (int64_t batch = 0; batch < b.batch; ++batch)
    for (int64_t tile = 0; tile < b.rows; tile += 128)
      for (int64_t block = 0; block < blocks; ++block) {
        const int r = reference(rng);
        const int64_t rows = std::min<int64_t>(128, b.rows - tile);
        std::uniform_int_distribution<int64_t> anyRow(0, rows - 1);
        const int64_t unfoldable = pick4(rng) ? -1 : anyRow(rng);
        for (int64_t row = 0; row < rows; ++row) {
          const int64_t global = batch * b.rows + tile + row;
          uint8_t &s = b.scales[global * blocks + block];
          s = static_cast<uint8_t>(row == unfoldable ? r - far(rng)
                                                     : r - distance(rng));
          if (row != unfoldable && !pick16(rng)) {
            s = 0;
            for (int64_t i = 0; i < 32; ++i)
              b.codes[global * b.k + block * 32 + i] = 0;
          }
        }
      }
}

/// Scale codes at the edges of that window for E2M1 x E2M1 (54 and 185:
/// terms down to 2^-148, among the f32 subnormals, and up to 1152 · 2^116,
/// accumulators overflowing to Inf); UE4M3 its smallest (2^-9) and largest
/// (448) codes.
static void makeWindowEdgeScales(GemmInput &input, std::mt19937 &rng) {
  std::uniform_int_distribution<int> pick(0, 1);
  for (uint8_t &s : input.scales)
    s = static_cast<uint8_t>(input.isNV() ? (pick(rng) ? 0x01 : 0x7E)
                                          : (pick(rng) ? 54 : 185));
}

int checkGemmKernel(const GemmCase &c, GemmData data, bool bitForBit,
                    CompileFn compileSource, RunFn run,
                    llvm::function_ref<void(mlir::ModuleOp)> mutate,
                    bool report) {
  const bool exact = data == GemmData::Exact;
  std::mt19937 rng(exact ? 21 : 22);
  GemmInput a = makeGemmInput(c.formatA, c.batch, c.m, c.k, exact, rng);
  GemmInput b = makeGemmInput(c.formatB, c.batch, c.n, c.k, exact, rng);
  if (data == GemmData::ExtremeScales) {
    makeExtremeScales(a, rng);
    makeExtremeScales(b, rng);
  } else if (data == GemmData::MixedScales) {
    makeMixedScales(a, rng);
    makeMixedScales(b, rng);
  } else if (data == GemmData::FoldScales) {
    makeFoldScales(a, b, rng);
  } else if (data == GemmData::WindowEdgeScales) {
    makeWindowEdgeScales(a, rng);
    makeWindowEdgeScales(b, rng);
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
      " {\n  %c = fp4train.scaled_matmul %a, %b, %acc : " + a.getType() + ", " +
      b.getType() + ", " + accType + truncation + "\n  return " +
      (c.bf16 ? "%t" : "%c") + " : " + resultType + "\n}\n";
  mlir::OwningOpRef<mlir::ModuleOp> module = compileSource(source);
  if (!module) {
    if (report)
      ADD_FAILURE() << "the scaled_matmul did not compile";
    return -1;
  }
  if (mutate)
    mutate(*module);

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
  if (results.size() != 1u) {
    if (report)
      ADD_FAILURE() << "the kernel gave " << results.size() << " results";
    return -1;
  }
  if (report) {
    // The GEMM kernel, and where the target writes the operands in their
    // staged types first ([WG4]), one kernel per operand before it.
    unsigned launches = 0;
    module->walk([&](mlir::gpu::LaunchFuncOp) { ++launches; });
    EXPECT_TRUE(launches == 1 || launches == 3) << launches << " launches";
    EXPECT_EQ(stats.launches, launches);
    EXPECT_GT(stats.mfmas, 0u);
  }
  std::vector<float> kernel = decodeGemmResult(results[0], acc.size(), c.bf16);

  int bad = 0;
  for (int64_t batch = 0; batch < c.batch; ++batch)
    bad += compareWithGemm(a.getOperand(batch), b.getOperand(batch),
                           acc.data() + batch * c.m * c.n,
                           kernel.data() + batch * c.m * c.n, bitForBit, c.bf16,
                           "batch " + std::to_string(batch), report);
  return bad;
}

} // namespace fp4train::emulation_test
