//===- KernelEmulationTestUtils.cpp - Kernel tests: shared helpers --------===//
//
// The fixture (compiling test IR, emulating @main on a chip), the quantize
// input data and the bitwise comparisons of kernel results with the
// numerics library that the quantize, Hadamard and GEMM checks share.
//
//===----------------------------------------------------------------------===//

#include "KernelEmulationTestUtils.h"

#include "fp4train/InitFP4Train.h"
#include "fp4train/Numerics/Storage.h"

#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/APFloat.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstring>

namespace fp4train::emulation_test {

std::string join(const std::vector<int64_t> &values, const char *separator) {
  std::string s;
  for (size_t i = 0; i < values.size(); ++i)
    s += (i ? separator : "") + std::to_string(values[i]);
  return s;
}

int64_t product(const std::vector<int64_t> &shape) {
  int64_t n = 1;
  for (int64_t s : shape)
    n *= s;
  return n;
}

std::vector<uint8_t> asBytes(const std::vector<float> &values) {
  std::vector<uint8_t> bytes(values.size() * 4);
  std::memcpy(bytes.data(), values.data(), bytes.size());
  return bytes;
}

std::string sanitizeTestName(std::string name) {
  for (char &ch : name)
    if (!isalnum(static_cast<unsigned char>(ch)))
      ch = '_';
  return name;
}

mlir::OwningOpRef<mlir::ModuleOp>
compile(mlir::MLIRContext &context, const std::string &source,
        llvm::function_ref<void(mlir::OpPassManager &)> buildPipeline) {
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::parseSourceString<mlir::ModuleOp>(source, &context);
  if (!module) {
    ADD_FAILURE() << "cannot parse:\n" << source;
    return nullptr;
  }
  mlir::PassManager pm(&context);
  buildPipeline(pm);
  if (mlir::failed(pm.run(*module))) {
    ADD_FAILURE() << "pipeline failed on:\n" << source;
    return nullptr;
  }
  return module;
}

KernelEmulationFixture::KernelEmulationFixture() : context(makeRegistry()) {
  context.loadAllAvailableDialects();
}

mlir::DialectRegistry KernelEmulationFixture::makeRegistry() {
  mlir::DialectRegistry registry;
  mlir::fp4train::registerAllDialects(registry);
  return registry;
}

std::vector<std::vector<uint8_t>> KernelEmulationFixture::run(
    mlir::ModuleOp module,
    std::vector<mlir::fp4train::emulation::EmulatorArgument> arguments,
    llvm::StringRef chip, mlir::fp4train::emulation::EmulatorStats *stats) {
  auto results = mlir::fp4train::emulation::emulate(module, "main", arguments,
                                                    chip, stats);
  if (!results) {
    ADD_FAILURE() << llvm::toString(results.takeError());
    return {};
  }
  return std::move(*results);
}

//===----------------------------------------------------------------------===//
// Quantize inputs and results
//===----------------------------------------------------------------------===//

/// `x` rounded to `semantics` (nearest even, APFloat: independent of the
/// kernels), as a float.
static float roundTo(const llvm::fltSemantics &semantics, float x) {
  llvm::APFloat value(x);
  bool losesInfo;
  value.convert(semantics, llvm::APFloat::rmNearestTiesToEven, &losesInfo);
  value.convert(llvm::APFloat::IEEEsingle(), llvm::APFloat::rmNearestTiesToEven,
                &losesInfo);
  return value.convertToFloat();
}

float roundToBF16(float x) { return roundTo(llvm::APFloat::BFloat(), x); }

static const llvm::fltSemantics &getInputSemantics(const std::string &input) {
  return input == "bf16" ? llvm::APFloat::BFloat() : llvm::APFloat::IEEEhalf();
}

std::vector<float> makeQuantizeData(int64_t count, const std::string &input,
                                    bool specials, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal;
  std::uniform_int_distribution<int> exponent(-14, 14);
  std::vector<float> data(count);
  for (float &x : data)
    x = std::ldexp(normal(rng), exponent(rng));
  if (specials && count >= 256) {
    std::fill(data.begin() + 32, data.begin() + 64, 0.0f);
    data[70] = std::ldexp(1.0f, -140);
    data[71] = -std::ldexp(1.0f, -130);
    data[100] = 2.5f;
    data[101] = -0.25f;
    data[130] = INFINITY;
    data[200] = NAN;
    data[230] = -INFINITY;
    // A block whose largest value floor scales map past maxFinite.
    for (int i = 0; i < 32; ++i)
      data[160 + i] = (i & 1 ? -1.0f : 1.0f) * (1.0f + i / 31.0f) * 7.9f;
  }
  if (input == "f32")
    return data;
  for (float &x : data)
    x = roundTo(getInputSemantics(input), x);
  return data;
}

std::vector<uint8_t> encodeInput(const std::vector<float> &data,
                                 const std::string &input) {
  if (input == "f32")
    return asBytes(data);
  std::vector<uint8_t> bytes(data.size() * 2);
  for (size_t i = 0; i < data.size(); ++i) {
    llvm::APFloat value(data[i]);
    bool lost;
    value.convert(getInputSemantics(input), llvm::APFloat::rmNearestTiesToEven,
                  &lost);
    const uint16_t bits =
        static_cast<uint16_t>(value.bitcastToAPInt().getZExtValue());
    std::memcpy(bytes.data() + 2 * i, &bits, 2);
  }
  return bytes;
}

int compareCodes(const std::vector<uint8_t> &kernel,
                 const std::vector<uint8_t> &library, const char *what,
                 const std::vector<float> *inputs) {
  EXPECT_EQ(kernel.size(), library.size()) << what;
  int bad = 0;
  for (size_t i = 0; i < std::min(kernel.size(), library.size()); ++i)
    if (kernel[i] != library[i] && bad++ < 5) {
      std::string input =
          inputs ? " of " + std::to_string((*inputs)[i]) : std::string();
      ADD_FAILURE() << what << " " << i << input << ": kernel "
                    << int(kernel[i]) << ", library " << int(library[i]);
    }
  return bad;
}

std::vector<uint8_t> loadStoredCodes(const std::vector<uint8_t> &stored,
                                     numerics::ElementType type,
                                     const std::vector<int64_t> &shape) {
  EXPECT_EQ(int64_t(stored.size()), numerics::getStoredBytes(type, shape))
      << "stored codes";
  if (int64_t(stored.size()) != numerics::getStoredBytes(type, shape))
    return stored;
  return numerics::unpackCodes(type, stored, shape);
}

std::vector<uint8_t>
loadStoredCodes(const std::vector<uint8_t> &stored,
                const numerics::QuantizedTensor &expected) {
  return loadStoredCodes(
      stored, numerics::getElementType(expected.config.format), expected.shape);
}

int compareFloatBits(const std::vector<uint8_t> &kernel,
                     const std::vector<float> &library, const char *what) {
  EXPECT_EQ(kernel.size(), 4 * library.size()) << what;
  if (kernel.size() != 4 * library.size())
    return 1;
  int bad = 0;
  for (size_t i = 0; i < library.size(); ++i) {
    float got;
    std::memcpy(&got, kernel.data() + 4 * i, 4);
    if (numerics::floatToBits(got) != numerics::floatToBits(library[i]) &&
        bad++ < 5)
      ADD_FAILURE() << what << " " << i << ": kernel " << got << ", library "
                    << library[i];
  }
  return bad;
}

numerics::QuantConfig getLibraryConfig(numerics::Format format, bool stochastic,
                                       uint64_t seed,
                                       std::optional<float> amax) {
  numerics::QuantConfig config;
  config.format = format;
  config.blockSize = format == numerics::Format::NVFP4 ? 16 : 32;
  if (stochastic) {
    config.rounding = numerics::Rounding::Stochastic;
    config.seed = seed;
  }
  config.amax = amax;
  return config;
}

int compareQuantized(const std::vector<std::vector<uint8_t>> &results,
                     const numerics::QuantizedTensor &expected,
                     const std::vector<float> &inputs) {
  int bad = compareCodes(loadStoredCodes(results[0], expected), expected.codes,
                         "code", &inputs);
  bad += compareCodes(results[1], expected.scales, "scale");
  if (expected.config.format != numerics::Format::NVFP4)
    return bad;
  EXPECT_EQ(results[2].size(), 4u);
  if (results[2].size() != 4u)
    return bad + 1;
  uint32_t bits;
  std::memcpy(&bits, results[2].data(), 4);
  EXPECT_EQ(bits, numerics::floatToBits(expected.globalDecodeScale))
      << "S_dec: kernel " << numerics::bitsToFloat(bits) << ", library "
      << expected.globalDecodeScale;
  return bad;
}

} // namespace fp4train::emulation_test
