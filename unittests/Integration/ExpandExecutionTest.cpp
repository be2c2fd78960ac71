//===- ExpandExecutionTest.cpp - Execute fp4train-expand, compare bits ----===//
//
// [CHK2] (docs/semantics.md): the expanded MLIR executed on the CPU must agree
// with the numerics library bit for bit. Each test writes a small module in
// text, runs the CPU lowering (fp4train-expand, bufferization, LLVM) in
// process, JITs it with MLIR's ExecutionEngine, feeds it the same inputs as the
// library and compares every element code, scale code and f32 result. NaN
// results compare by class only (IEEE leaves NaN payloads and signs open).
//
//===----------------------------------------------------------------------===//

#include "fp4train/InitFP4Train.h"
#include "fp4train/Numerics/BlockGemm.h"
#include "fp4train/Numerics/BlockQuant.h"
#include "fp4train/Numerics/Hadamard.h"
#include "fp4train/Pipelines/Pipelines.h"

#include "mlir/ExecutionEngine/ExecutionEngine.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <optional>
#include <random>
#include <string>
#include <vector>

using namespace mlir;
namespace numerics = ::fp4train::numerics;

namespace {

/// A ranked strided memref descriptor {allocated, aligned, offset, sizes,
/// strides} over a byte buffer, as the C interface passes it.
struct Memref {
  std::vector<uint8_t> bytes;
  std::vector<int64_t> shape;
  std::vector<int64_t> descriptor;

  Memref(std::vector<int64_t> shape, size_t elementSize) : shape(shape) {
    int64_t count = 1;
    for (int64_t d : shape)
      count *= d;
    bytes.resize(count * elementSize + 64);
    auto data = reinterpret_cast<int64_t>(bytes.data());
    descriptor = {int64_t(data), int64_t(data), 0};
    descriptor.insert(descriptor.end(), shape.begin(), shape.end());
    std::vector<int64_t> strides(shape.size(), 1);
    for (int64_t d = int64_t(shape.size()) - 2; d >= 0; --d)
      strides[d] = strides[d + 1] * shape[d + 1];
    descriptor.insert(descriptor.end(), strides.begin(), strides.end());
  }
  template <typename T> T *data() {
    return reinterpret_cast<T *>(bytes.data());
  }
  /// The packed-call argument: a pointer to the C-interface argument, which
  /// is itself a pointer to the descriptor.
  void *descriptorPointer() {
    pointer = descriptor.data();
    return &pointer;
  }
  void *pointer = nullptr;
};

std::string shapeString(const std::vector<int64_t> &shape) {
  std::string s;
  for (int64_t d : shape)
    s += std::to_string(d) + "x";
  return s;
}

/// Lowers `source` with the CPU pipeline (results as out-parameters) and
/// calls `main` with `packed`: a pointer to each C-interface argument.
/// Compiles `source` through the quantize pipeline with `quantizeOptions`
/// (its option text; none when empty) and the CPU lowering, and runs `main`
/// on the packed arguments.
void compileAndRun(const std::string &source, std::vector<void *> packed,
                   const std::string &quantizeOptions = "") {
  static bool initialized = [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
    return true;
  }();
  (void)initialized;
  DialectRegistry registry;
  mlir::fp4train::registerAllDialects(registry);
  registerBuiltinDialectTranslation(registry);
  registerLLVMDialectTranslation(registry);
  MLIRContext context(registry);
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(source, &context);
  ASSERT_TRUE(module) << source;
  PassManager pm(&context);
  if (!quantizeOptions.empty()) {
    auto options = mlir::fp4train::QuantizePipelineOptions::createFromString(
        quantizeOptions);
    ASSERT_TRUE(options) << quantizeOptions;
    mlir::fp4train::buildQuantizePipeline(pm, *options);
  }
  mlir::fp4train::buildCPULoweringPipeline(pm, /*outParams=*/true);
  ASSERT_TRUE(succeeded(pm.run(*module))) << source;
  auto engine = ExecutionEngine::create(*module);
  ASSERT_TRUE(bool(engine)) << llvm::toString(engine.takeError());
  llvm::Error error = (*engine)->invokePacked("_mlir_ciface_main", packed);
  ASSERT_FALSE(bool(error)) << llvm::toString(std::move(error));
}

bool sameFloat(float a, float b) {
  if (std::isnan(a) || std::isnan(b))
    return std::isnan(a) && std::isnan(b);
  return numerics::floatToBits(a) == numerics::floatToBits(b);
}

/// Counts mismatches and reports the first few.
template <typename T, typename Eq>
void expectEqual(const char *what, const T *got, const T *want, int64_t count,
                 Eq eq) {
  int64_t bad = 0;
  for (int64_t i = 0; i < count; ++i)
    if (!eq(got[i], want[i]) && bad++ < 4)
      ADD_FAILURE() << what << "[" << i << "]: expanded " << double(got[i])
                    << " (0x" << std::hex
                    << uint64_t(numerics::floatToBits(float(got[i])))
                    << "), library " << std::dec << double(want[i]) << " (0x"
                    << std::hex
                    << uint64_t(numerics::floatToBits(float(want[i]))) << ")"
                    << std::dec;
  EXPECT_EQ(bad, 0) << what << ": " << bad << " of " << count << " differ";
}

void expectCodes(const char *what, const uint8_t *got,
                 const std::vector<uint8_t> &want) {
  int64_t bad = 0;
  for (size_t i = 0; i < want.size(); ++i)
    if (got[i] != want[i] && bad++ < 4)
      ADD_FAILURE() << what << "[" << i << "]: expanded 0x" << std::hex
                    << int(got[i]) << ", library 0x" << int(want[i]);
  EXPECT_EQ(bad, 0) << what << ": " << bad << " of " << want.size()
                    << " differ";
}

void expectFloats(const char *what, const float *got, const float *want,
                  int64_t count) {
  expectEqual(what, got, want, count, sameFloat);
}

/// Deterministic test data over many binades, with the special inputs of [FMT1]
/// (docs/semantics.md) when `specials` is set: a NaN, ±Inf, an all-zero block,
/// subnormals, exact ties and values past the element range.
std::vector<float> makeData(int64_t count, uint32_t seed, bool specials) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal;
  std::uniform_int_distribution<int> exponent(-12, 12);
  std::vector<float> data(count);
  for (float &x : data)
    x = std::ldexp(normal(rng), exponent(rng));
  if (specials && count >= 256) {
    for (int64_t i = 0; i < 32; ++i)
      data[32 + i] = 0.0f;             // a zero block
    data[70] = std::ldexp(1.0f, -140); // subnormals
    data[71] = -std::ldexp(3.0f, -146);
    data[100] = 2.5f; // E2M1 tie
    data[101] = -0.25f;
    data[130] = std::numeric_limits<float>::infinity(); // [MX3]
    data[200] = std::nanf("");
    data[230] = -std::numeric_limits<float>::infinity();
    // A block of exact ties under an MX scale of 2^0 (E2M1) / 2^-6 (E4M3) /
    // 2^-13 (E5M2): amax 6 fixes the scale, the rest are midpoints.
    const float ties[] = {6.0f,  2.5f,         -0.75f,      5.0f,
                          3.5f,  0.25f,        1.25f,       -1.75f,
                          -5.0f, 1.0625f / 64, 1.125f / 64, -1.1875f / 64};
    for (size_t i = 0; i < sizeof(ties) / sizeof(ties[0]); ++i)
      data[96 + i] = ties[i];
  }
  return data;
}

//===----------------------------------------------------------------------===//
// quantize + unpack + dequantize
//===----------------------------------------------------------------------===//

struct QuantCase {
  const char *format; // mxfp4, nvfp4, mxfp8-e4m3, mxfp8-e5m2
  const char *scaleMode;
  bool stochastic;
  int64_t axis;
  bool twoD;
  bool suppliedAmax;
  bool specials;
  std::vector<int64_t> shape;
  bool global = true; // NVFP4 only
  /// [SH3] When set, the tensor is the part at `origin` of a tensor of
  /// `logicalShape`.
  std::vector<int64_t> logicalShape = {}, origin = {};
};

std::string elementTypeName(numerics::Format f) {
  switch (f) {
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

/// `!fp4train.scaled<...>` of a library configuration.
std::string scaledType(const std::vector<int64_t> &shape,
                       const numerics::QuantConfig &config, bool global) {
  bool nv = config.format == numerics::Format::NVFP4;
  std::string block;
  int64_t rank = shape.size();
  for (int64_t d = 0; d < rank; ++d) {
    bool blocked = config.twoDimensional ? d >= rank - 2 : d == config.axis;
    block += (d ? ", " : "") + std::to_string(blocked ? config.blockSize : 1);
  }
  return "!fp4train.scaled<" + shapeString(shape) +
         elementTypeName(config.format) + ", block = [" + block +
         "], scale = " + (nv ? "f8E4M3FN" : "f8E8M0FNU") +
         (nv && global ? ", global>" : ">");
}

std::string quantizeAttrs(const numerics::QuantConfig &config, bool amax) {
  std::string s;
  if (config.rounding == numerics::Rounding::Stochastic)
    s += " rounding = stochastic";
  if (config.scaleMode == numerics::ScaleMode::RCeil)
    s += " scale_mode = rceil";
  if (config.rounding == numerics::Rounding::Stochastic)
    s += " seed(%seed)";
  if (amax)
    s += " amax(%amax)";
  if (!config.origin.empty()) {
    s += " at(";
    for (size_t d = 0; d < config.origin.size(); ++d)
      s += (d ? ", %o" : "%o") + std::to_string(d);
    s += ") of [";
    for (size_t d = 0; d < config.logicalShape.size(); ++d)
      s += (d ? ", " : "") + std::to_string(config.logicalShape[d]);
    s += "]";
  }
  return s;
}

/// The index constants %o0... of a part's origin.
std::string originConstants(const numerics::QuantConfig &config) {
  std::string s;
  for (size_t d = 0; d < config.origin.size(); ++d)
    s += "  %o" + std::to_string(d) + " = arith.constant " +
         std::to_string(config.origin[d]) + " : index\n";
  return s;
}

class QuantizeTest : public ::testing::TestWithParam<QuantCase> {};

TEST_P(QuantizeTest, MatchesLibrary) {
  const QuantCase &c = GetParam();
  numerics::QuantConfig config;
  config.format = *numerics::parseFormat(c.format);
  config.scaleMode = *numerics::parseScaleMode(c.scaleMode);
  config.blockSize = numerics::getDefaultBlockSize(config.format);
  config.axis = c.axis;
  config.twoDimensional = c.twoD;
  config.rounding = c.stochastic ? numerics::Rounding::Stochastic
                                 : numerics::Rounding::NearestEven;
  config.seed = 0x0123456789ABCDEFull;
  bool nv = config.format == numerics::Format::NVFP4;
  // Without a global scale, [NV1] runs with S_enc = S_dec = 1, which is the
  // library's two-level rule for amax_tensor = 2688.
  if (c.suppliedAmax)
    config.amax = 1000.0f;
  if (nv && !c.global)
    config.amax = 2688.0f;
  config.logicalShape = c.logicalShape;
  config.origin = c.origin;

  int64_t count = 1;
  for (int64_t d : c.shape)
    count *= d;
  std::vector<float> data = makeData(count, 7 + c.shape[0], c.specials);
  auto expected = numerics::quantize(data.data(), c.shape, config);
  ASSERT_TRUE(bool(expected)) << expected.error().message;
  numerics::QuantizedTensor &q = *expected;
  std::vector<float> dequantized = numerics::dequantize(q);

  std::string type = scaledType(c.shape, q.config, c.global);
  std::string tensor = "tensor<" + shapeString(c.shape) + "f32>";
  std::string codes =
      "tensor<" + shapeString(c.shape) + elementTypeName(config.format) + ">";
  std::string scales = "tensor<" + shapeString(q.scaleShape) +
                       (nv ? "f8E4M3FN" : "f8E8M0FNU") + ">";
  bool hasGlobal = nv && c.global;
  std::string source =
      "func.func @main(%x: " + tensor + ", %seed: i64, %amax: f32) -> (" +
      codes + ", " + scales + ", " + tensor +
      ", tensor<1xf32>) attributes {llvm.emit_c_interface} {\n" +
      originConstants(config) + "  %q = fp4train.quantize %x" +
      quantizeAttrs(config, c.suppliedAmax) + " : " + tensor + " -> " + type +
      "\n" + (hasGlobal ? "  %v, %s, %g = " : "  %v, %s = ") +
      "fp4train.unpack %q : " + type + "\n" +
      (hasGlobal ? "" : "  %g = arith.constant 1.0 : f32\n") +
      "  %gt = tensor.from_elements %g : tensor<1xf32>\n"
      "  %d = fp4train.dequantize %q : " +
      type + " -> " + tensor +
      "\n"
      "  return %v, %s, %d, %gt : " +
      codes + ", " + scales + ", " + tensor + ", tensor<1xf32>\n}\n";

  Memref x(c.shape, 4), outCodes(c.shape, 1), outScales(q.scaleShape, 1),
      outValues(c.shape, 4), outGlobal({1}, 4);
  std::memcpy(x.data<float>(), data.data(), count * 4);
  uint64_t seed = config.seed;
  float amax = c.suppliedAmax ? *config.amax : 0.0f;
  compileAndRun(source,
                {x.descriptorPointer(), &seed, &amax,
                 outCodes.descriptorPointer(), outScales.descriptorPointer(),
                 outValues.descriptorPointer(), outGlobal.descriptorPointer()});
  if (HasFatalFailure())
    return;
  expectCodes("codes", outCodes.data<uint8_t>(), q.codes);
  expectCodes("scales", outScales.data<uint8_t>(), q.scales);
  expectFloats("dequantized", outValues.data<float>(), dequantized.data(),
               count);
  if (hasGlobal)
    expectFloats("S_dec", outGlobal.data<float>(), &q.globalDecodeScale, 1);
}

std::vector<QuantCase> quantCases() {
  std::vector<QuantCase> cases;
  for (const char *format : {"mxfp4", "mxfp8-e4m3", "mxfp8-e5m2"})
    for (const char *mode : {"floor", "rceil"})
      for (bool specials : {false, true}) {
        cases.push_back(
            {format, mode, false, 1, false, false, specials, {8, 96}});
        cases.push_back(
            {format, mode, false, 0, false, false, specials, {64, 12}});
      }
  for (bool sr : {false, true}) {
    cases.push_back({"mxfp4", "floor", sr, 1, false, false, true, {6, 128}});
    cases.push_back({"mxfp4", "rceil", sr, 0, false, false, false, {64, 10}});
    cases.push_back({"mxfp4", "floor", sr, 2, false, false, false, {2, 3, 64}});
    cases.push_back({"nvfp4", "floor", sr, 1, false, false, false, {8, 64}});
    cases.push_back({"nvfp4", "floor", sr, 0, false, false, false, {48, 6}});
    cases.push_back({"nvfp4", "floor", sr, 1, false, true, false, {8, 64}});
    cases.push_back({"nvfp4", "floor", sr, 1, true, false, false, {32, 48}});
    cases.push_back({"nvfp4", "floor", sr, 1, true, true, false, {2, 16, 32}});
    cases.push_back({"nvfp4", "floor", sr, 1, false, false, true, {8, 64}});
  }
  // [SH3] Stochastic parts of larger tensors, 1-D along either dimension,
  // rank 3 and 2-D tiles.
  cases.push_back({"mxfp4",
                   "floor",
                   true,
                   1,
                   false,
                   false,
                   false,
                   {6, 128},
                   true,
                   {18, 256},
                   {6, 128}});
  cases.push_back({"mxfp4",
                   "rceil",
                   true,
                   0,
                   false,
                   false,
                   false,
                   {64, 10},
                   true,
                   {128, 30},
                   {64, 20}});
  cases.push_back({"mxfp4",
                   "floor",
                   true,
                   2,
                   false,
                   false,
                   false,
                   {2, 3, 64},
                   true,
                   {4, 3, 128},
                   {2, 0, 64}});
  cases.push_back({"nvfp4",
                   "floor",
                   true,
                   1,
                   true,
                   true,
                   false,
                   {32, 48},
                   true,
                   {64, 96},
                   {32, 48}});
  QuantCase noGlobal = {"nvfp4", "floor", false, 1,
                        false,   false,   false, {4, 64}};
  noGlobal.global = false;
  cases.push_back(noGlobal);
  return cases;
}

INSTANTIATE_TEST_SUITE_P(Expand, QuantizeTest,
                         ::testing::ValuesIn(quantCases()));

//===----------------------------------------------------------------------===//
// hadamard
//===----------------------------------------------------------------------===//

struct HadamardCase {
  int64_t size;
  const char *signs;
  bool inverse;
  int64_t axis;
};

class HadamardTest : public ::testing::TestWithParam<HadamardCase> {};

TEST_P(HadamardTest, MatchesLibrary) {
  const HadamardCase &c = GetParam();
  std::vector<int64_t> shape = c.axis == 1
                                   ? std::vector<int64_t>{3, 2 * c.size}
                                   : std::vector<int64_t>{2 * c.size, 3};
  int64_t count = 6 * c.size;
  std::vector<float> data = makeData(count, 11, false);
  std::vector<float> expected = data;
  numerics::HadamardConfig config;
  config.size = c.size;
  config.signs = *numerics::parseHadamardSigns(c.signs);
  config.seed = 0xFEEDull << 33 | 5;
  config.step = 0x1234567890ull;
  config.axis = c.axis;
  ASSERT_TRUE(bool(
      numerics::hadamardRotate(expected.data(), shape, config, c.inverse)));

  std::string tensor = "tensor<" + shapeString(shape) + "f32>";
  bool random = config.signs == numerics::HadamardSigns::Random;
  std::string source = "func.func @main(%x: " + tensor +
                       ", %seed: i64, %step: i64) -> " + tensor +
                       " attributes {llvm.emit_c_interface} {\n"
                       "  %y = fp4train.hadamard %x with #fp4train.hadamard<" +
                       std::to_string(c.size) + ", " + c.signs + "> along " +
                       std::to_string(c.axis) +
                       (random ? " seed(%seed) step(%step)" : "") +
                       (c.inverse ? " inverse" : "") + " : " + tensor +
                       "\n  return %y : " + tensor + "\n}\n";
  Memref x(shape, 4), y(shape, 4);
  std::memcpy(x.data<float>(), data.data(), count * 4);
  uint64_t seed = config.seed, step = config.step;
  compileAndRun(source,
                {x.descriptorPointer(), &seed, &step, y.descriptorPointer()});
  if (HasFatalFailure())
    return;
  expectFloats("rotated", y.data<float>(), expected.data(), count);
}

std::vector<HadamardCase> hadamardCases() {
  std::vector<HadamardCase> cases;
  for (int64_t n : {16, 32, 64, 128, 256})
    for (const char *signs : {"none", "fixed", "random"})
      cases.push_back({n, signs, false, n == 32 ? 0 : 1});
  for (const char *signs : {"fixed", "random"})
    cases.push_back({16, signs, true, 1});
  cases.push_back({128, "random", true, 0});
  return cases;
}

INSTANTIATE_TEST_SUITE_P(Expand, HadamardTest,
                         ::testing::ValuesIn(hadamardCases()));

//===----------------------------------------------------------------------===//
// scaled_matmul
//===----------------------------------------------------------------------===//

struct GemmCase {
  const char *lhsFormat;
  const char *rhsFormat;
  bool rhs2D;
  int64_t batch; // 0: rank 2
  int64_t m, n, k;
  bool specials;
};

class ScaledMatmulTest : public ::testing::TestWithParam<GemmCase> {};

TEST_P(ScaledMatmulTest, MatchesLibrary) {
  const GemmCase &c = GetParam();
  auto configFor = [&](const char *format, bool twoD) {
    numerics::QuantConfig config;
    config.format = *numerics::parseFormat(format);
    config.blockSize = numerics::getDefaultBlockSize(config.format);
    config.axis = -1;
    config.twoDimensional = twoD;
    return config;
  };
  numerics::QuantConfig lhsConfig = configFor(c.lhsFormat, false);
  numerics::QuantConfig rhsConfig = configFor(c.rhsFormat, c.rhs2D);
  int64_t batches = c.batch ? c.batch : 1;
  auto withBatch = [&](std::vector<int64_t> shape) {
    if (c.batch)
      shape.insert(shape.begin(), c.batch);
    return shape;
  };
  std::vector<int64_t> lhsShape = withBatch({c.m, c.k});
  std::vector<int64_t> rhsShape = withBatch({c.n, c.k});
  std::vector<int64_t> accShape = withBatch({c.m, c.n});
  std::vector<float> a = makeData(batches * c.m * c.k, 3, c.specials);
  std::vector<float> b = makeData(batches * c.n * c.k, 4, false);
  std::vector<float> acc = makeData(batches * c.m * c.n, 5, false);
  auto qa = numerics::quantize(a.data(), lhsShape, lhsConfig);
  auto qb = numerics::quantize(b.data(), rhsShape, rhsConfig);
  ASSERT_TRUE(bool(qa) && bool(qb));

  // The library GEMM on each batch, reading the whole-tensor quantization.
  std::vector<float> expected(acc.size());
  auto operand = [](const numerics::QuantizedTensor &q, int64_t batch,
                    int64_t rows, int64_t k) {
    numerics::GemmOperand op;
    int64_t block = q.config.blockSize;
    int64_t scaleRows = q.config.twoDimensional ? rows / block : rows;
    op.codes = q.codes.data() + batch * rows * k;
    op.rows = rows;
    op.k = k;
    op.elementType = numerics::getElementType(q.config.format);
    op.scaleType = numerics::getScaleType(q.config.format);
    op.blockSize = block;
    op.scales = q.scales.data() + batch * scaleRows * (k / block);
    op.scaleRowGroup = q.config.twoDimensional ? block : 1;
    op.scaleRowStride = k / block;
    op.globalDecodeScale = q.globalDecodeScale;
    return op;
  };
  for (int64_t batch = 0; batch < batches; ++batch)
    ASSERT_TRUE(bool(numerics::blockScaledGemm(
        operand(*qa, batch, c.m, c.k), operand(*qb, batch, c.n, c.k),
        acc.data() + batch * c.m * c.n, expected.data() + batch * c.m * c.n)));

  std::string lhsType = scaledType(lhsShape, qa->config, true);
  std::string rhsType = scaledType(rhsShape, qb->config, true);
  auto tensor = [](const std::vector<int64_t> &shape) {
    return "tensor<" + shapeString(shape) + "f32>";
  };
  std::string source =
      "func.func @main(%a: " + tensor(lhsShape) + ", %b: " + tensor(rhsShape) +
      ", %acc: " + tensor(accShape) + ") -> " + tensor(accShape) +
      " attributes {llvm.emit_c_interface} {\n"
      "  %qa = fp4train.quantize %a : " +
      tensor(lhsShape) + " -> " + lhsType +
      "\n  %qb = fp4train.quantize %b : " + tensor(rhsShape) + " -> " +
      rhsType + "\n  %c = fp4train.scaled_matmul %qa, %qb, %acc : " + lhsType +
      ", " + rhsType + ", " + tensor(accShape) +
      "\n  return %c : " + tensor(accShape) + "\n}\n";
  Memref ma(lhsShape, 4), mb(rhsShape, 4), macc(accShape, 4), mc(accShape, 4);
  std::memcpy(ma.data<float>(), a.data(), a.size() * 4);
  std::memcpy(mb.data<float>(), b.data(), b.size() * 4);
  std::memcpy(macc.data<float>(), acc.data(), acc.size() * 4);
  compileAndRun(source, {ma.descriptorPointer(), mb.descriptorPointer(),
                         macc.descriptorPointer(), mc.descriptorPointer()});
  if (HasFatalFailure())
    return;
  expectFloats("C", mc.data<float>(), expected.data(), expected.size());
}

std::vector<GemmCase> gemmCases() {
  return {
      {"mxfp4", "mxfp4", false, 0, 8, 6, 96, false},
      {"mxfp4", "mxfp4", false, 0, 8, 6, 256, true},
      {"nvfp4", "nvfp4", false, 0, 8, 6, 64, false},
      {"nvfp4", "nvfp4", true, 0, 8, 32, 64, false},
      {"nvfp4", "nvfp4", true, 2, 4, 16, 48, false},
      {"mxfp4", "mxfp4", false, 3, 4, 5, 64, false},
      {"mxfp8-e4m3", "mxfp8-e4m3", false, 0, 8, 6, 64, false},
      {"mxfp8-e5m2", "mxfp8-e4m3", false, 0, 8, 6, 64, false},
      {"mxfp8-e5m2", "mxfp8-e5m2", false, 0, 8, 6, 64, false},
      {"mxfp8-e5m2", "mxfp8-e4m3", false, 0, 8, 6, 256, true},
      {"mxfp8-e4m3", "mxfp4", false, 0, 8, 6, 64, false},
      {"mxfp8-e5m2", "mxfp4", false, 0, 8, 6, 256, true},
  };
}

INSTANTIATE_TEST_SUITE_P(Expand, ScaledMatmulTest,
                         ::testing::ValuesIn(gemmCases()));

/// [TE2] An f32 matmul quantized under nvfp4 with gemm-alpha=amax equals the
/// library's [GEMM1] on the library's quantization of X (1x16) and W (16x16
/// tiles) whose factor is TransformerEngine's alpha of their amaxes.
TEST(TEGemmAlphaTest, QuantizePassMatchesLibrary) {
  const int64_t m = 8, n = 32, k = 64;
  std::vector<float> x = makeData(m * k, 7, false);
  std::vector<float> y0 = makeData(m * n, 9, false);
  numerics::QuantConfig xConfig, wConfig;
  xConfig.format = wConfig.format = numerics::Format::NVFP4;
  xConfig.blockSize = wConfig.blockSize = 16;
  xConfig.axis = wConfig.axis = -1;
  wConfig.twoDimensional = true;
  auto qx = numerics::quantize(x.data(), {m, k}, xConfig);
  ASSERT_TRUE(bool(qx));

  // A weight whose amax makes TE's alpha differ from the product of the
  // decode scales (they agree for many amaxes), so that the test tells
  // them apart.
  std::vector<float> w;
  std::optional<numerics::QuantizedTensor> qw;
  float alpha = 0.0f;
  for (float magnitude = 1.0f; magnitude < 2.0f; magnitude += 1.0f / 64) {
    w = makeData(n * k, 8, false);
    for (float &value : w)
      value *= magnitude;
    auto quantized = numerics::quantize(w.data(), {n, k}, wConfig);
    ASSERT_TRUE(bool(quantized));
    alpha = numerics::teGemmAlpha(qx->amax, quantized->amax);
    if (alpha != qx->globalDecodeScale * quantized->globalDecodeScale) {
      qw = std::move(*quantized);
      break;
    }
  }
  ASSERT_TRUE(qw) << "no weight scale in [1, 2) tells the factors apart";

  auto operand = [&](const numerics::QuantizedTensor &q, int64_t rows,
                     float factor) {
    numerics::GemmOperand op;
    op.codes = q.codes.data();
    op.rows = rows;
    op.k = k;
    op.elementType = numerics::getElementType(q.config.format);
    op.scaleType = numerics::getScaleType(q.config.format);
    op.blockSize = 16;
    op.scales = q.scales.data();
    op.scaleRowGroup = q.config.twoDimensional ? 16 : 1;
    op.scaleRowStride = k / 16;
    op.globalDecodeScale = factor;
    return op;
  };
  // g = alpha · 1 = alpha.
  std::vector<float> expected(m * n);
  ASSERT_TRUE(bool(numerics::blockScaledGemm(operand(*qx, m, alpha),
                                             operand(*qw, n, 1.0f), y0.data(),
                                             expected.data())));

  std::string source = R"(
func.func @main(%x: tensor<8x64xf32>, %w: tensor<32x64xf32> {fp4train.param},
                %y0: tensor<8x32xf32>) -> tensor<8x32xf32>
    attributes {llvm.emit_c_interface} {
  %y = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>,
                                      affine_map<(m, n, k) -> (n, k)>,
                                      affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %w : tensor<8x64xf32>, tensor<32x64xf32>)
      outs(%y0 : tensor<8x32xf32>) -> tensor<8x32xf32>
  return %y : tensor<8x32xf32>
}
)";
  Memref mx({m, k}, 4), mw({n, k}, 4), my0({m, n}, 4), my({m, n}, 4);
  std::memcpy(mx.data<float>(), x.data(), x.size() * 4);
  std::memcpy(mw.data<float>(), w.data(), w.size() * 4);
  std::memcpy(my0.data<float>(), y0.data(), y0.size() * 4);
  compileAndRun(source,
                {mx.descriptorPointer(), mw.descriptorPointer(),
                 my0.descriptorPointer(), my.descriptorPointer()},
                "recipe=nvfp4 gemm-alpha=amax roles=fprop");
  if (HasFatalFailure())
    return;
  expectFloats("Y", my.data<float>(), expected.data(), expected.size());
}

} // namespace
