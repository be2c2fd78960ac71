//===- HadamardKernelChecks.cpp - Hadamard kernels vs numerics ------------===//
//
// checkHadamardKernel compiles an fp4train.hadamard for a chip, emulates it
// and compares the rotated tensor bit for bit with numerics::
// hadamardRotate; checkHadamardQuantizeKernel does the same for a rotation
// followed by a quantize (the fused kernel) against hadamardRotate then
// numerics::quantize; getHadamardCases are the cases every NVIDIA chip
// runs.
//
//===----------------------------------------------------------------------===//

#include "KernelEmulationTestUtils.h"

#include "fp4train/Numerics/Hadamard.h"

#include <cmath>

namespace fp4train::emulation_test {

//===----------------------------------------------------------------------===//
// Hadamard kernels
//===----------------------------------------------------------------------===//

void PrintTo(const HadamardCase &c, std::ostream *os) {
  *os << "n=" << c.size << " " << c.signs << " along " << c.axis << " of "
      << join(c.shape, "x") << (c.inverse ? " inverse" : "");
}

std::string getHadamardTestName(const HadamardCase &c) {
  return "n" + std::to_string(c.size) + "_" + c.signs + "_axis" +
         std::to_string(c.axis) + "_" + join(c.shape, "x") +
         (c.inverse ? "_inverse" : "");
}

void checkHadamardKernel(const HadamardCase &c, CompileFn compileSource,
                         RunFn run) {
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

std::vector<HadamardCase> getHadamardCases() {
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
// Fused Hadamard + quantize kernels
//===----------------------------------------------------------------------===//

std::string getHadamardQuantizeTestName(const HadamardQuantizeCase &c) {
  const bool nv = c.format == numerics::Format::NVFP4;
  return sanitizeTestName(
      std::string(numerics::getFormatName(c.format)) + "_" + c.input + "_" +
      join(c.shape, "x") + "_n" + std::to_string(c.size) + "_" + c.signs +
      (c.stochastic ? "_sr" : "") +
      (nv ? (c.computedAmax ? "_amax_computed" : "_amax_supplied") : "") +
      (c.returnRotation ? "_rotation_used" : "") +
      (c.inverse ? "_inverse" : ""));
}

void PrintTo(const HadamardQuantizeCase &c, std::ostream *os) {
  *os << getHadamardQuantizeTestName(c);
}

void checkHadamardQuantizeKernel(const HadamardQuantizeCase &c,
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
            " : " + scaled + (c.returnRotation ? ", " + tensor : "") + "\n}\n";
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
  numerics::QuantConfig config =
      getLibraryConfig(c.format, c.stochastic, seed,
                       supplied ? std::optional<float>(amax) : std::nullopt);
  auto expected = numerics::quantize(expectedRotation.data(), c.shape, config);
  ASSERT_TRUE(static_cast<bool>(expected)) << expected.error().message;
  int bad = compareQuantized(results, *expected, expectedRotation);
  if (c.returnRotation)
    bad +=
        compareFloatBits(results.back(), expectedRotation, "rotated element");
  EXPECT_EQ(bad, 0);
}

} // namespace fp4train::emulation_test
