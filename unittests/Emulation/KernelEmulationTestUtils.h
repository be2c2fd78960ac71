//===- KernelEmulationTestUtils.h - Kernels vs numerics: shared helpers ---===//
//
// What the gfx950 and NVIDIA kernel emulation tests share: compiling test
// IR with a kernel pipeline, emulating @main on a chip, the input data
// (quantize inputs over many binades with special values, GEMM element and
// scale codes that are or are not exact in f32) and the comparison of a
// GEMM kernel's result with [GEMM1] (bit for bit, or within the f32
// reassociation bound stated at compareWithGemm), and the quantize,
// Hadamard and GEMM checks with the cases every NVIDIA chip runs.
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
#include "fp4train/Numerics/Storage.h"

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

namespace emulation = mlir::fp4train::emulation;

/// Whether this binary runs under AddressSanitizer (make test-sanitize),
/// where the emulator runs about five times slower: a few cases that only
/// repeat, on another chip, what others check are skipped there (the
/// normal build runs them).
#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define FP4TRAIN_UNDER_ASAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define FP4TRAIN_UNDER_ASAN 1
#endif
#ifdef FP4TRAIN_UNDER_ASAN
inline constexpr bool kUnderAddressSanitizer = true;
#else
inline constexpr bool kUnderAddressSanitizer = false;
#endif

/// Compiles test IR (a kernel pipeline for one chip).
using CompileFn = llvm::function_ref<mlir::OwningOpRef<mlir::ModuleOp>(
    const std::string &)>;
/// Emulates @main of a compiled module on one chip.
using RunFn = llvm::function_ref<std::vector<std::vector<uint8_t>>(
    mlir::ModuleOp, std::vector<emulation::EmulatorArgument>,
    emulation::EmulatorStats *)>;

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

/// [PK1] A kernel's stored codes of a tensor of `shape` and element `type`,
/// one code per byte again; a size mismatch is a failure (and gives the
/// stored bytes unchanged, so that the comparison reports it).
inline std::vector<uint8_t> loadStoredCodes(const std::vector<uint8_t> &stored,
                                            numerics::ElementType type,
                                            const std::vector<int64_t> &shape) {
  EXPECT_EQ(int64_t(stored.size()), numerics::getStoredBytes(type, shape))
      << "stored codes";
  if (int64_t(stored.size()) != numerics::getStoredBytes(type, shape))
    return stored;
  return numerics::unpackCodes(type, stored, shape);
}

/// loadStoredCodes of a quantize kernel's codes, in `expected`'s format.
inline std::vector<uint8_t>
loadStoredCodes(const std::vector<uint8_t> &stored,
                const numerics::QuantizedTensor &expected) {
  return loadStoredCodes(stored,
                         numerics::getElementType(expected.config.format),
                         expected.shape);
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

inline std::string getElementName(numerics::Format format) {
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

inline std::string getQuantizeTestName(const QuantizeCase &c) {
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

inline void PrintTo(const QuantizeCase &c, std::ostream *os) {
  *os << getQuantizeTestName(c);
}

/// Compiles an fp4train.quantize of `c` with `compileSource`, emulates it
/// with `run` and compares codes, scales and the NVFP4 S_dec bit for bit
/// with numerics::quantize.
/// `fp4Conversions`: the chip converts to E2M1 in hardware (not sm_90a).
inline void checkQuantizeKernel(const QuantizeCase &c, CompileFn compileSource,
                                RunFn run, bool fp4Conversions = true) {
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
      getElementName(c.format) + ", block = [" + join(block, ", ") +
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
  mlir::OwningOpRef<mlir::ModuleOp> module = compileSource(source);
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
  // Hardware conversions for RNE E2M1/E4M3 elements and E4M3 (NVFP4) scales,
  // or for RNE E4M3 elements only without FP4 conversions (sm_90a); E5M2, SR
  // and the MX scales are the integer recipes.
  if (!fp4Conversions)
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

/// The quantize cases every NVIDIA chip runs.
inline std::vector<QuantizeCase> getQuantizeCases() {
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
      "!fp4train.scaled<" + shape + "x" + getElementName(c.format) +
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

/// The Hadamard cases every NVIDIA chip runs.
inline std::vector<HadamardCase> getHadamardCases() {
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
                           const std::string &where, bool report = true) {
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
      if (!ok && bad++ < 5 && report)
        ADD_FAILURE() << where << " C[" << i << "," << j << "]: kernel "
                      << got << ", library " << want << " (bound " << bound
                      << ")";
    }
  return bad;
}

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

inline std::string getGemmTestName(const GemmCase &c) {
  return sanitizeTestName(std::to_string(c.batch) + "x" + std::to_string(c.m) +
                          "x" + std::to_string(c.n) + "x" +
                          std::to_string(c.k) + "_" + c.formatA + "_" +
                          c.formatB + (c.bf16 ? "_bf16" : ""));
}

inline void PrintTo(const GemmCase &c, std::ostream *os) {
  *os << getGemmTestName(c);
}

inline bool isNVFP4(const std::string &format) {
  return format.rfind("nvfp4", 0) == 0;
}

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
    arguments.push_back(emulation::EmulatorArgument::buffer(
        numerics::packCodes(getElementType(getElement()), codes,
                            {batch * rows, k})));
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
inline GemmInput makeGemmInput(const std::string &format, int64_t batch,
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
inline void makeExtremeScales(GemmInput &input, std::mt19937 &rng) {
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
inline void makeMixedScales(GemmInput &input, std::mt19937 &rng) {
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

/// Scale codes at the edges of that window for E2M1 x E2M1 (54 and 185:
/// terms down to 2^-148, among the f32 subnormals, and up to 1152 · 2^116,
/// accumulators overflowing to Inf); UE4M3 its smallest (2^-9) and largest
/// (448) codes.
inline void makeWindowEdgeScales(GemmInput &input, std::mt19937 &rng) {
  std::uniform_int_distribution<int> pick(0, 1);
  for (uint8_t &s : input.scales)
    s = static_cast<uint8_t>(input.isNV() ? (pick(rng) ? 0x01 : 0x7E)
                                          : (pick(rng) ? 54 : 185));
}

/// The operand data checkGemmKernel draws.
enum class GemmData {
  /// Every partial sum exact in f32 (makeGemmInput's `exact`).
  Exact,
  /// Every finite element code, scales 2^-20..2^20 (E8M0) or every finite
  /// nonzero UE4M3.
  FullRange,
  /// FullRange elements with makeExtremeScales.
  ExtremeScales,
  /// FullRange elements with makeMixedScales.
  MixedScales,
  /// FullRange elements with makeWindowEdgeScales.
  WindowEdgeScales,
};

/// Compiles an fp4train.scaled_matmul of `c` with `compileSource`, applies
/// `mutate` (when given) to the lowered module, emulates it with `run` on
/// `data` and compares with [GEMM1] (compareWithGemm: bit for bit when
/// `bitForBit`, else within the reassociation bound).
/// Returns the number of mismatching elements, or -1 when the module did
/// not compile or the run gave no result; with `report` false nothing is
/// reported as a failure (the negative checks expect mismatches).
inline int checkGemmKernel(const GemmCase &c, GemmData data, bool bitForBit,
                           CompileFn compileSource, RunFn run,
                           llvm::function_ref<void(mlir::ModuleOp)> mutate = {},
                           bool report = true) {
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
      " {\n  %c = fp4train.scaled_matmul %a, %b, %acc : " + a.getType() +
      ", " + b.getType() + ", " + accType + truncation + "\n  return " +
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
    EXPECT_EQ(stats.launches, 1u);
    EXPECT_GT(stats.mfmas, 0u);
  }
  std::vector<float> kernel = decodeGemmResult(results[0], acc.size(), c.bf16);

  int bad = 0;
  for (int64_t batch = 0; batch < c.batch; ++batch)
    bad += compareWithGemm(a.getOperand(batch), b.getOperand(batch),
                           acc.data() + batch * c.m * c.n,
                           kernel.data() + batch * c.m * c.n, bitForBit,
                           c.bf16, "batch " + std::to_string(batch), report);
  return bad;
}

} // namespace fp4train::emulation_test

#endif // FP4TRAIN_UNITTESTS_EMULATION_KERNELEMULATIONTESTUTILS_H
