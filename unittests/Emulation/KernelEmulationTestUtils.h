//===- KernelEmulationTestUtils.h - Kernels vs numerics: shared helpers ---===//
//
// What the gfx950 and sm_120a kernel emulation tests share: compiling test
// IR with a kernel pipeline, emulating @main on a chip, the input data
// (quantize inputs over many binades with special values, GEMM element and
// scale codes that are or are not exact in f32) and the comparison of a
// GEMM kernel's result with [GEMM1] (bit for bit, or within the f32
// reassociation bound stated at compareWithGemm).
//
//===----------------------------------------------------------------------===//

#ifndef FP4TRAIN_UNITTESTS_EMULATION_KERNELEMULATIONTESTUTILS_H
#define FP4TRAIN_UNITTESTS_EMULATION_KERNELEMULATIONTESTUTILS_H

#include "fp4train/Emulation/GPUEmulator.h"
#include "fp4train/InitFP4Train.h"
#include "fp4train/Numerics/BlockGemm.h"
#include "fp4train/Numerics/BlockQuant.h"
#include "fp4train/Numerics/Formats.h"
#include "fp4train/Numerics/Hadamard.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/APFloat.h"
#include "llvm/ADT/STLFunctionalExtras.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

namespace fp4train::emulation_test {

inline std::string join(const std::vector<int64_t> &values,
                        const char *separator) {
  std::string s;
  for (size_t i = 0; i < values.size(); ++i)
    s += (i ? separator : "") + std::to_string(values[i]);
  return s;
}

inline int64_t product(const std::vector<int64_t> &shape) {
  int64_t n = 1;
  for (int64_t s : shape)
    n *= s;
  return n;
}

inline std::vector<uint8_t> asBytes(const std::vector<float> &values) {
  std::vector<uint8_t> bytes(values.size() * 4);
  std::memcpy(bytes.data(), values.data(), bytes.size());
  return bytes;
}

/// `name` with every character that is not a letter or digit replaced by
/// '_' (a gtest parameter name).
inline std::string sanitizeTestName(std::string name) {
  for (char &ch : name)
    if (!isalnum(static_cast<unsigned char>(ch)))
      ch = '_';
  return name;
}

/// Parses `source` and lowers it with the passes `buildPipeline` adds.
inline mlir::OwningOpRef<mlir::ModuleOp>
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

/// A context with every fp4train dialect loaded, and @main emulated on a
/// chip.
class KernelEmulationFixture : public ::testing::Test {
protected:
  KernelEmulationFixture() : context(makeRegistry()) {
    context.loadAllAvailableDialects();
  }
  static mlir::DialectRegistry makeRegistry() {
    mlir::DialectRegistry registry;
    mlir::fp4train::registerAllDialects(registry);
    return registry;
  }

  /// Emulates @main of `module` on `arguments` on `chip`.
  std::vector<std::vector<uint8_t>>
  run(mlir::ModuleOp module,
      std::vector<mlir::fp4train::emulation::EmulatorArgument> arguments,
      llvm::StringRef chip,
      mlir::fp4train::emulation::EmulatorStats *stats = nullptr) {
    auto results = mlir::fp4train::emulation::emulate(module, "main",
                                                      arguments, chip, stats);
    if (!results) {
      ADD_FAILURE() << llvm::toString(results.takeError());
      return {};
    }
    return std::move(*results);
  }

  mlir::MLIRContext context;
};

//===----------------------------------------------------------------------===//
// Quantize inputs
//===----------------------------------------------------------------------===//

/// `x` rounded to `semantics` (nearest even, APFloat: independent of the
/// kernels), as a float.
inline float roundTo(const llvm::fltSemantics &semantics, float x) {
  llvm::APFloat value(x);
  bool losesInfo;
  value.convert(semantics, llvm::APFloat::rmNearestTiesToEven, &losesInfo);
  value.convert(llvm::APFloat::IEEEsingle(),
                llvm::APFloat::rmNearestTiesToEven, &losesInfo);
  return value.convertToFloat();
}

inline float roundToBF16(float x) {
  return roundTo(llvm::APFloat::BFloat(), x);
}

inline const llvm::fltSemantics &getInputSemantics(const std::string &input) {
  return input == "bf16" ? llvm::APFloat::BFloat()
                         : llvm::APFloat::IEEEhalf();
}

/// Values over many binades, rounded to `input`'s precision (f32, bf16,
/// f16); with `specials` (and at least 256 values), a zero block,
/// subnormals, ties, ±Inf and NaN, and values that floor scales push past
/// the largest element.
inline std::vector<float> makeQuantizeData(int64_t count,
                                           const std::string &input,
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

/// The bytes of `data` as a tensor of `input` (exact: the data is already
/// rounded to it).
inline std::vector<uint8_t> encodeInput(const std::vector<float> &data,
                                        const std::string &input) {
  if (input == "f32")
    return asBytes(data);
  std::vector<uint8_t> bytes(data.size() * 2);
  for (size_t i = 0; i < data.size(); ++i) {
    llvm::APFloat value(data[i]);
    bool lost;
    value.convert(getInputSemantics(input),
                  llvm::APFloat::rmNearestTiesToEven, &lost);
    const uint16_t bits =
        static_cast<uint16_t>(value.bitcastToAPInt().getZExtValue());
    std::memcpy(bytes.data() + 2 * i, &bits, 2);
  }
  return bytes;
}

/// Counts the bytes where `kernel` and `library` differ, reporting the first
/// few as "`what` I: kernel K, library L".
inline int compareCodes(const std::vector<uint8_t> &kernel,
                        const std::vector<uint8_t> &library, const char *what,
                        const std::vector<float> *inputs = nullptr) {
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

/// Counts the elements where the f32 bytes `kernel` and `library` differ
/// in their bits, reporting the first few as "`what` I: kernel K, library L".
inline int compareFloatBits(const std::vector<uint8_t> &kernel,
                            const std::vector<float> &library,
                            const char *what) {
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

/// The library's configuration of a quantize with 1-D blocks along the last
/// dimension (16 for NVFP4, 32 otherwise), [SR1] with `seed` when
/// `stochastic`, and an NVFP4 amax_tensor `amax` when supplied.
inline numerics::QuantConfig getLibraryConfig(numerics::Format format,
                                              bool stochastic, uint64_t seed,
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

/// Compares a quantize op's results (codes, scales[, S_dec]) with the
/// library's `expected`, of `inputs`; returns the number of mismatches.
inline int compareQuantized(const std::vector<std::vector<uint8_t>> &results,
                            const numerics::QuantizedTensor &expected,
                            const std::vector<float> &inputs) {
  int bad = compareCodes(results[0], expected.codes, "code", &inputs);
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

/// Compiles test IR with a chip's kernel pipeline, and emulates @main.
using CompileFn =
    llvm::function_ref<mlir::OwningOpRef<mlir::ModuleOp>(const std::string &)>;
using RunFn = llvm::function_ref<std::vector<std::vector<uint8_t>>(
    mlir::ModuleOp, std::vector<mlir::fp4train::emulation::EmulatorArgument>,
    mlir::fp4train::emulation::EmulatorStats *)>;

//===----------------------------------------------------------------------===//
// Hadamard kernels
//===----------------------------------------------------------------------===//

struct HadamardCase {
  std::vector<int64_t> shape;
  int64_t size;
  int64_t axis;
  std::string signs; // none, fixed, random
  bool inverse;
};

inline void PrintTo(const HadamardCase &c, std::ostream *os) {
  *os << "n=" << c.size << " " << c.signs << " along " << c.axis << " of "
      << join(c.shape, "x") << (c.inverse ? " inverse" : "");
}

inline std::string getHadamardTestName(const HadamardCase &c) {
  return "n" + std::to_string(c.size) + "_" + c.signs + "_axis" +
         std::to_string(c.axis) + "_" + join(c.shape, "x") +
         (c.inverse ? "_inverse" : "");
}

/// Compiles an fp4train.hadamard of `c` with `compileSource`, emulates it
/// with `run` and compares the rotated tensor bit for bit with
/// numerics::hadamardRotate (random signs: the same seed and step).
inline void checkHadamardKernel(
    const HadamardCase &c,
    CompileFn compileSource, RunFn run) {
  using mlir::fp4train::emulation::EmulatorArgument;
  const bool random = c.signs == "random";
  const std::string tensor = "tensor<" + join(c.shape, "x") + "xf32>";
  const std::string source =
      "func.func @main(%x: " + tensor +
      (random ? ", %seed: i64, %step: i64" : "") + ") -> " + tensor +
      " {\n  %r = fp4train.hadamard %x with #fp4train.hadamard<" +
      std::to_string(c.size) + ", " + c.signs + "> along " +
      std::to_string(c.axis) + (random ? " seed(%seed) step(%step)" : "") +
      (c.inverse ? " inverse" : "") + " : " + tensor +
      "\n  return %r : " + tensor + "\n}\n";
  mlir::OwningOpRef<mlir::ModuleOp> module = compileSource(source);
  ASSERT_TRUE(module);

  const int64_t count = product(c.shape);
  std::vector<float> data = makeQuantizeData(count, "f32", count >= 256, 5);
  // Finite data: NaN payloads are the hardware's business.
  for (float &x : data)
    if (!std::isfinite(x))
      x = -3.0e38f;
  const uint64_t seed = 0xFEEDFACE12345678ull, step = 41;
  std::vector<EmulatorArgument> arguments = {
      EmulatorArgument::buffer(asBytes(data))};
  if (random) {
    arguments.push_back(EmulatorArgument::bits(seed));
    arguments.push_back(EmulatorArgument::bits(step));
  }
  mlir::fp4train::emulation::EmulatorStats stats;
  auto results = run(*module, arguments, &stats);
  ASSERT_EQ(results.size(), 1u);
  EXPECT_EQ(stats.launches, 1u) << "the rotation did not become a kernel";

  numerics::HadamardConfig config;
  config.size = c.size;
  config.signs = *numerics::parseHadamardSigns(c.signs);
  config.seed = seed;
  config.step = step;
  config.axis = c.axis;
  std::vector<float> expected = data;
  numerics::Status status =
      numerics::hadamardRotate(expected.data(), c.shape, config, c.inverse);
  ASSERT_TRUE(static_cast<bool>(status)) << status.error().message;
  EXPECT_EQ(compareFloatBits(results[0], expected, "element"), 0);
}

//===----------------------------------------------------------------------===//
// Fused Hadamard + quantize kernels
//===----------------------------------------------------------------------===//

/// `%r = fp4train.hadamard %x ... along <last>` then `fp4train.quantize %r`
/// with 1-D blocks along the last dimension (the Wgrad form of the Hadamard
/// recipes).
struct HadamardQuantizeCase {
  std::vector<int64_t> shape;
  int64_t size;
  std::string signs; // none, fixed, random
  numerics::Format format;
  std::string input = "f32"; // f32, or bf16 through arith.extf
  bool stochastic = false;
  /// NVFP4: amax_tensor computed from the rotated tensor (else supplied).
  bool computedAmax = true;
  /// @main also returns the rotation (a use the fused kernel does not take).
  bool returnRotation = false;
  bool inverse = false;
};

inline std::string getFormatElementName(numerics::Format format) {
  switch (format) {
  case numerics::Format::MXFP4:
  case numerics::Format::NVFP4:
    return "f4E2M1FN";
  case numerics::Format::MXFP8E4M3:
    return "f8E4M3FN";
  case numerics::Format::MXFP8E5M2:
    return "f8E5M2";
  }
  return "";
}

inline std::string getHadamardQuantizeTestName(const HadamardQuantizeCase &c) {
  const bool nv = c.format == numerics::Format::NVFP4;
  return sanitizeTestName(
      std::string(numerics::getFormatName(c.format)) + "_" + c.input + "_" +
      join(c.shape, "x") + "_n" + std::to_string(c.size) + "_" + c.signs +
      (c.stochastic ? "_sr" : "") +
      (nv ? (c.computedAmax ? "_amax_computed" : "_amax_supplied") : "") +
      (c.returnRotation ? "_rotation_used" : "") +
      (c.inverse ? "_inverse" : ""));
}

inline void PrintTo(const HadamardQuantizeCase &c, std::ostream *os) {
  *os << getHadamardQuantizeTestName(c);
}

/// Compiles `c` with `compileSource`, emulates it with `run` and compares
/// the codes, scales and NVFP4 S_dec bit for bit with numerics::
/// hadamardRotate followed by numerics::quantize on the same data (the same
/// seeds), and the rotation itself when @main returns it. Expects one
/// launch (the fused kernel), two for NVFP4 with a computed amax (the
/// rotate+amax kernel first), one more for a returned rotation (the
/// Hadamard kernel).
inline void checkHadamardQuantizeKernel(
    const HadamardQuantizeCase &c,
    CompileFn compileSource, RunFn run) {
  using mlir::fp4train::emulation::EmulatorArgument;
  const bool nv = c.format == numerics::Format::NVFP4;
  const bool random = c.signs == "random";
  const bool supplied = nv && !c.computedAmax;
  const int64_t blockSize = nv ? 16 : 32;
  std::vector<int64_t> block(c.shape.size(), 1);
  block.back() = blockSize;
  const std::string shape = join(c.shape, "x");
  const std::string tensor = "tensor<" + shape + "xf32>";
  const std::string scaled =
      "!fp4train.scaled<" + shape + "x" + getFormatElementName(c.format) +
      ", block = [" + join(block, ", ") +
      "], scale = " + (nv ? "f8E4M3FN, global>" : "f8E8M0FNU>");
  std::string source = "func.func @main(%x: tensor<" + shape + "x" + c.input +
                       ">" + (random ? ", %hseed: i64, %step: i64" : "") +
                       (c.stochastic ? ", %seed: i64" : "") +
                       (supplied ? ", %amax: f32" : "") + ") -> (" + scaled +
                       (c.returnRotation ? ", " + tensor : "") + ") {\n";
  std::string rotated = "%x";
  if (c.input != "f32") {
    source += "  %e = arith.extf %x : tensor<" + shape + "x" + c.input +
              "> to " + tensor + "\n";
    rotated = "%e";
  }
  source += "  %r = fp4train.hadamard " + rotated +
            " with #fp4train.hadamard<" + std::to_string(c.size) + ", " +
            c.signs + "> along " + std::to_string(c.shape.size() - 1) +
            (random ? " seed(%hseed) step(%step)" : "") +
            (c.inverse ? " inverse" : "") + " : " + tensor + "\n" +
            "  %q = fp4train.quantize %r" +
            (c.stochastic ? " rounding = stochastic seed(%seed)" : "") +
            (supplied ? " amax(%amax)" : "") + " : " + tensor + " -> " +
            scaled + "\n  return %q" + (c.returnRotation ? ", %r" : "") +
            " : " + scaled + (c.returnRotation ? ", " + tensor : "") +
            "\n}\n";
  mlir::OwningOpRef<mlir::ModuleOp> module = compileSource(source);
  ASSERT_TRUE(module);

  const int64_t count = product(c.shape);
  std::vector<float> data = makeQuantizeData(count, c.input, count >= 256, 11);
  // Finite data (NaN payloads of a rotation are the hardware's; an Inf
  // amax_tensor would make every NVFP4 block NaN), exact in bf16.
  for (float &x : data)
    if (!std::isfinite(x))
      x = -32768.0f;
  const uint64_t hadamardSeed = 0xFEEDFACE12345678ull, step = 41;
  const uint64_t seed = 0x0123456789ABCDEFull;
  const float amax = 3000.0f;
  std::vector<EmulatorArgument> arguments = {
      EmulatorArgument::buffer(encodeInput(data, c.input))};
  if (random) {
    arguments.push_back(EmulatorArgument::bits(hadamardSeed));
    arguments.push_back(EmulatorArgument::bits(step));
  }
  if (c.stochastic)
    arguments.push_back(EmulatorArgument::bits(seed));
  if (supplied)
    arguments.push_back(EmulatorArgument::bits(numerics::floatToBits(amax)));
  mlir::fp4train::emulation::EmulatorStats stats;
  auto results = run(*module, arguments, &stats);
  ASSERT_EQ(results.size(), (nv ? 3u : 2u) + (c.returnRotation ? 1u : 0u));
  EXPECT_EQ(stats.launches, 1u + (nv && c.computedAmax ? 1u : 0u) +
                                (c.returnRotation ? 1u : 0u))
      << "the rotation and quantize did not become the fused kernel";

  numerics::HadamardConfig rotation;
  rotation.size = c.size;
  rotation.signs = *numerics::parseHadamardSigns(c.signs);
  rotation.seed = hadamardSeed;
  rotation.step = step;
  rotation.axis = int64_t(c.shape.size()) - 1;
  std::vector<float> expectedRotation = data;
  numerics::Status status = numerics::hadamardRotate(
      expectedRotation.data(), c.shape, rotation, c.inverse);
  ASSERT_TRUE(static_cast<bool>(status)) << status.error().message;
  numerics::QuantConfig config = getLibraryConfig(
      c.format, c.stochastic, seed, supplied ? std::optional<float>(amax)
                                             : std::nullopt);
  auto expected = numerics::quantize(expectedRotation.data(), c.shape, config);
  ASSERT_TRUE(static_cast<bool>(expected)) << expected.error().message;
  int bad = compareQuantized(results, *expected, expectedRotation);
  if (c.returnRotation)
    bad += compareFloatBits(results.back(), expectedRotation, "rotated element");
  EXPECT_EQ(bad, 0);
}

//===----------------------------------------------------------------------===//
// GEMM operands and the comparison with [GEMM1]
//===----------------------------------------------------------------------===//

inline numerics::ElementType getElementType(const std::string &element) {
  if (element == "f4E2M1FN")
    return numerics::ElementType::E2M1;
  if (element == "f8E4M3FN")
    return numerics::ElementType::E4M3FN;
  return numerics::ElementType::E5M2;
}

/// Random element codes: `exact` draws from values whose products and sums
/// stay exact in f32 (E2M1: all codes; FP8: magnitudes in [0.5, 4) or 0),
/// otherwise from every finite code.
inline std::vector<uint8_t> makeCodes(int64_t count,
                                      const std::string &element, bool exact,
                                      std::mt19937 &rng) {
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

/// E8M0 scale codes: 2^-1..2^1 when `exact`, else 2^-20..2^20.
inline std::vector<uint8_t> makeScales(int64_t count, bool exact,
                                       std::mt19937 &rng) {
  std::uniform_int_distribution<int> wide(127 - 20, 127 + 20);
  std::uniform_int_distribution<int> narrow(126, 128);
  std::vector<uint8_t> scales(count);
  for (uint8_t &s : scales)
    s = static_cast<uint8_t>(exact ? narrow(rng) : wide(rng));
  return scales;
}

/// Decodes a GEMM result of `count` elements: f32, or bf16 widened.
inline std::vector<float> decodeGemmResult(const std::vector<uint8_t> &bytes,
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

/// Compares `kernel` (a.rows x b.rows, row-major; bf16 values widened when
/// `bf16`) with [GEMM1] of `a` x `b` on `acc` (numerics::blockScaledGemm,
/// rounded to bf16 nearest even when `bf16`):
///  - `exact`: bit for bit;
///  - otherwise within the f32 reassociation bound of the two orders. The
///    kernel rounds once per MMA instruction (each covers one or more K
///    blocks) plus twice in the epilogue (g · T, + acc), [GEMM1] once per
///    block plus twice, so with nb = K / blockSize blocks
///      |kernel - library| <= 2 (nb + 2) 2^-24 (g Σ_b |term_b| + |acc|)
///                            + 2^-149,
///    term_b = sa sb Σ_{k∈b} |a b|, g the product of the global decode
///    scales; bf16 adds one bf16 ulp.
/// Returns the number of mismatches, the first few reported with `where`.
inline int compareWithGemm(const numerics::GemmOperand &a,
                           const numerics::GemmOperand &b, const float *acc,
                           const float *kernel, bool exact, bool bf16,
                           const std::string &where) {
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
      const float want = bf16 ? roundToBF16(expected[i * n + j])
                              : expected[i * n + j];
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
      const bool ok = exact ? numerics::floatToBits(got) ==
                                  numerics::floatToBits(want)
                            : std::fabs(double(got) - want) <= bound;
      if (!ok && bad++ < 5)
        ADD_FAILURE() << where << " C[" << i << "," << j << "]: kernel "
                      << got << ", library " << want << " (bound " << bound
                      << ")";
    }
  return bad;
}

} // namespace fp4train::emulation_test

#endif // FP4TRAIN_UNITTESTS_EMULATION_KERNELEMULATIONTESTUTILS_H
