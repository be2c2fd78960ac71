//===- QuantizeKernelChecks.cpp - Quantize kernels vs numerics ------------===//
//
// checkQuantizeKernel compiles an fp4train.quantize for a chip, emulates it
// and compares codes, scales and the NVFP4 S_dec bit for bit with
// numerics::quantize; getQuantizeCases are the cases every NVIDIA chip
// runs.
//
//===----------------------------------------------------------------------===//

#include "KernelEmulationTestUtils.h"

#include <cmath>

namespace fp4train::emulation_test {

std::string getElementName(numerics::Format format) {
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

std::string getQuantizeTestName(const QuantizeCase &c) {
  std::string name =
      std::string(numerics::getFormatName(c.format)) + "_" + c.input + "_" +
      join(c.shape, "x") + (c.rceil ? "_rceil" : "_floor") +
      (c.specials ? "_specials" : "") + (c.stochastic ? "_sr" : "") +
      (c.amax == Amax::Computed   ? "_amax_computed"
       : c.amax == Amax::Supplied ? "_amax_supplied"
                                  : "") +
      (c.twoD ? "_2d" : "");
  return sanitizeTestName(name);
}

void PrintTo(const QuantizeCase &c, std::ostream *os) {
  *os << getQuantizeTestName(c);
}

void checkQuantizeKernel(const QuantizeCase &c, CompileFn compileSource,
                         RunFn run, bool fp4Conversions) {
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
      " : " + tensor + " -> " + scaled + "\n  return %q : " + scaled + "\n}\n";
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

  numerics::QuantConfig config =
      getLibraryConfig(c.format, c.stochastic, seed,
                       supplied ? std::optional<float>(amax) : std::nullopt);
  config.twoDimensional = c.twoD;
  config.scaleMode =
      c.rceil ? numerics::ScaleMode::RCeil : numerics::ScaleMode::Floor;
  auto expected = numerics::quantize(data.data(), c.shape, config);
  ASSERT_TRUE(static_cast<bool>(expected)) << expected.error().message;
  EXPECT_EQ(compareQuantized(results, *expected, data), 0);
}

std::vector<QuantizeCase> getQuantizeCases() {
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
  cases.push_back(
      {{64, 128}, Format::NVFP4, "f32", false, true, false, Amax::Computed});
  cases.push_back(
      {{64, 128}, Format::NVFP4, "f32", false, true, false, Amax::Supplied});
  cases.push_back(
      {{20, 240}, Format::NVFP4, "f32", false, false, false, Amax::Computed});
  cases.push_back({{3, 10, 160},
                   Format::NVFP4,
                   "bf16",
                   false,
                   true,
                   false,
                   Amax::Supplied});
  cases.push_back(
      {{40, 64}, Format::NVFP4, "bf16", false, true, false, Amax::Computed});
  cases.push_back(
      {{64, 128}, Format::NVFP4, "f32", false, true, true, Amax::Computed});
  // [NV1] 16x16 blocks (the weight layout): 48 x 320 is 3 bands of 20 column
  // blocks, a full and a ragged workgroup each; a batch dimension; SR.
  cases.push_back({{48, 320},
                   Format::NVFP4,
                   "f32",
                   false,
                   false,
                   false,
                   Amax::Computed,
                   true});
  cases.push_back({{32, 256},
                   Format::NVFP4,
                   "f32",
                   false,
                   true,
                   false,
                   Amax::Supplied,
                   true});
  cases.push_back({{2, 32, 64},
                   Format::NVFP4,
                   "bf16",
                   false,
                   true,
                   false,
                   Amax::Computed,
                   true});
  cases.push_back({{32, 64},
                   Format::NVFP4,
                   "f32",
                   false,
                   true,
                   true,
                   Amax::Computed,
                   true});
  return cases;
}

} // namespace fp4train::emulation_test
