//===- RuntimeEquivalenceTest.cpp - fp4train-to-runtime vs fp4train-expand ===//
//
// The same module of fp4train ops lowered by the exact expansion and by the
// runtime calls must compute the same bits ([CHK2] in docs/semantics.md):
// codes, scales, global scales, dequantized values, rotations and products, for
// every format, scale mode, rounding, block shape, axis and batch, including a
// sliced (strided) operand, which the runtime reads through its strides.
// ExpandExecutionTest ties the expansion to the numerics library; this test
// ties the runtime lowering to the expansion.
//===----------------------------------------------------------------------===//

#include "JitTestUtils.h"

#include <cstdint>

using namespace mlir;
using namespace mlir::fp4train;
using ::fp4train::testing::Buffers;
using ::fp4train::testing::expectPathsAgree;
using ::fp4train::testing::makeData;

namespace {

struct OpCase {
  std::string name;
  std::string source;
  bool specials;
};

void PrintTo(const OpCase &c, std::ostream *os) { *os << c.name; }

class RuntimeEquivalenceTest : public ::testing::TestWithParam<OpCase> {};

TEST_P(RuntimeEquivalenceTest, SameBits) {
  const OpCase &c = GetParam();
  expectPathsAgree(
      c.source, "main",
      [](OpPassManager &pm, CPUNumerics numerics) {
        buildCPULoweringPipeline(pm, /*outParams=*/true, numerics);
      },
      [&](Buffers &buffers, const JitFunction &function) {
        for (auto [index, value] : llvm::enumerate(function.getArguments())) {
          if (value.kind == JitValue::Kind::Tensor) {
            std::vector<float> data =
                makeData(value.getNumElements(), 17 + index, c.specials);
            std::memcpy(buffers.args[index].data(), data.data(),
                        data.size() * 4);
          } else if (value.kind == JitValue::Kind::F32) {
            *buffers.arg<float>(index) = 700.0f; // a supplied amax
          } else {
            *buffers.arg<int64_t>(index) = 0x0123456789ABCDEFll + index;
          }
        }
      });
}

std::string join(const std::vector<int64_t> &values, const char *separator) {
  std::string s;
  for (size_t i = 0; i < values.size(); ++i)
    s += (i ? separator : "") + std::to_string(values[i]);
  return s;
}

std::string tensorType(const std::vector<int64_t> &shape,
                       const std::string &element) {
  return "tensor<" + join(shape, "x") + (shape.empty() ? "" : "x") + element +
         ">";
}

/// A block-scaled type and the names its parts go by.
struct Scaled {
  std::vector<int64_t> shape, block;
  std::string element, scale;
  bool global;

  std::string type() const {
    return "!fp4train.scaled<" + join(shape, "x") + "x" + element +
           ", block = [" + join(block, ", ") + "], scale = " + scale +
           (global ? ", global>" : ">");
  }
  std::vector<int64_t> scaleShape() const {
    std::vector<int64_t> result;
    for (size_t d = 0; d < shape.size(); ++d)
      result.push_back(shape[d] / block[d]);
    return result;
  }
};

Scaled mxfp4(std::vector<int64_t> shape, std::vector<int64_t> block) {
  return {shape, block, "f4E2M1FN", "f8E8M0FNU", false};
}
Scaled nvfp4(std::vector<int64_t> shape, std::vector<int64_t> block,
             bool global = true) {
  return {shape, block, "f4E2M1FN", "f8E4M3FN", global};
}
Scaled mxfp8(std::vector<int64_t> shape, std::vector<int64_t> block,
             const char *element) {
  return {shape, block, element, "f8E8M0FNU", false};
}

/// quantize (with `attrs`) + unpack + dequantize of %x, or of a slice of a
/// larger %x of shape `sliceOf`; returns codes, scales, the dequantized
/// values and the global scale as a 1-element tensor.
OpCase quantizeCase(std::string name, const Scaled &q, const std::string &attrs,
                    bool specials, std::vector<int64_t> sliceOf = {},
                    const std::string &prelude = "") {
  std::string tensor = tensorType(q.shape, "f32");
  std::string codes = tensorType(q.shape, q.element);
  std::string scales = tensorType(q.scaleShape(), q.scale);
  std::string input = sliceOf.empty() ? tensor : tensorType(sliceOf, "f32");
  std::string results =
      codes + ", " + scales + ", " + tensor + ", tensor<1xf32>";
  std::string source = "func.func @main(%x: " + input +
                       ", %seed: i64, %amax: f32) -> (" + results + ") {\n" +
                       prelude;
  std::string in = "%x";
  if (!sliceOf.empty()) {
    source += "  %in = tensor.extract_slice %x[1, 0] [" + join(q.shape, ", ") +
              "] [1, 1] : " + input + " to " + tensor + "\n";
    in = "%in";
  }
  source += "  %q = fp4train.quantize " + in + attrs + " : " + tensor + " -> " +
            q.type() + "\n";
  source += q.global ? "  %v, %s, %g = fp4train.unpack %q : " + q.type() + "\n"
                     : "  %v, %s = fp4train.unpack %q : " + q.type() +
                           "\n  %g = arith.constant 1.0 : f32\n";
  source += "  %gt = tensor.from_elements %g : tensor<1xf32>\n"
            "  %d = fp4train.dequantize %q : " +
            q.type() + " -> " + tensor +
            "\n  return %v, %s, %d, %gt : " + results + "\n}\n";
  return {std::move(name), source, specials};
}

/// The origins the part cases use.
const char *const kPartOrigins = "  %c8 = arith.constant 8 : index\n"
                                 "  %c16 = arith.constant 16 : index\n"
                                 "  %c64 = arith.constant 64 : index\n";

std::vector<OpCase> quantizeCases() {
  const std::string sr = " rounding = stochastic seed(%seed)";
  std::vector<OpCase> cases = {
      quantizeCase("mxfp4_floor", mxfp4({8, 96}, {1, 32}), "", true),
      quantizeCase("mxfp4_rceil_axis0", mxfp4({64, 12}, {32, 1}),
                   " scale_mode = rceil", true),
      quantizeCase("mxfp4_sr_rank3", mxfp4({2, 3, 64}, {1, 1, 32}), sr, false),
      quantizeCase("mxfp4_slice", mxfp4({6, 64}, {1, 32}), "", false, {9, 96}),
      quantizeCase("mxfp8_e4m3", mxfp8({8, 64}, {1, 32}, "f8E4M3FN"), "", true),
      quantizeCase("mxfp8_e5m2_rceil", mxfp8({8, 64}, {1, 32}, "f8E5M2"),
                   " scale_mode = rceil", true),
      quantizeCase("nvfp4", nvfp4({8, 64}, {1, 16}), "", false),
      quantizeCase("nvfp4_sr_axis0", nvfp4({48, 6}, {16, 1}), sr, false),
      quantizeCase("nvfp4_amax", nvfp4({8, 64}, {1, 16}), " amax(%amax)",
                   false),
      quantizeCase("nvfp4_2d_sr", nvfp4({32, 48}, {16, 16}), sr, false),
      quantizeCase("nvfp4_2d_rank3", nvfp4({2, 16, 32}, {1, 16, 16}), "",
                   false),
      quantizeCase("nvfp4_no_global", nvfp4({4, 64}, {1, 16}, false), "",
                   false),
      quantizeCase("nvfp4_specials", nvfp4({8, 64}, {1, 16}), "", true),
      // [SH3] Stochastic parts of larger tensors.
      quantizeCase("mxfp4_sr_part", mxfp4({8, 64}, {1, 32}),
                   sr + " at(%c8, %c64) of [32, 256]", false, {}, kPartOrigins),
      quantizeCase("nvfp4_sr_part_axis0", nvfp4({48, 6}, {16, 1}),
                   sr + " at(%c16, %c8) of [96, 16]", false, {}, kPartOrigins),
      quantizeCase("nvfp4_2d_sr_part", nvfp4({32, 48}, {16, 16}),
                   sr + " at(%c16, %c64) of [64, 112]", false, {},
                   kPartOrigins),
  };
  return cases;
}

INSTANTIATE_TEST_SUITE_P(Quantize, RuntimeEquivalenceTest,
                         ::testing::ValuesIn(quantizeCases()),
                         [](const auto &info) { return info.param.name; });

/// A forward or inverse rotation of %x along `dim`.
OpCase hadamardCase(std::string name, std::vector<int64_t> shape, int64_t dim,
                    const std::string &rotation, bool inverse) {
  std::string tensor = tensorType(shape, "f32");
  bool random = rotation.find("random") != std::string::npos;
  std::string source =
      "func.func @main(%x: " + tensor + ", %seed: i64, %step: i64) -> " +
      tensor + " {\n  %y = fp4train.hadamard %x with #fp4train.hadamard<" +
      rotation + "> along " + std::to_string(dim) +
      (random ? " seed(%seed) step(%step)" : "") + (inverse ? " inverse" : "") +
      " : " + tensor + "\n  return %y : " + tensor + "\n}\n";
  return {std::move(name), source, false};
}

std::vector<OpCase> hadamardCases() {
  std::string explicitSigns =
      "16, fixed, signs = [1, -1, 1, 1, -1, -1, 1, -1, 1, 1, 1, -1, -1, 1, "
      "-1, 1]";
  return {
      hadamardCase("none16", {3, 32}, 1, "16, none", false),
      hadamardCase("fixed16", {3, 32}, 1, "16, fixed", false),
      hadamardCase("fixed32_axis0", {64, 3}, 0, "32, fixed", false),
      hadamardCase("random64", {2, 128}, 1, "64, random", false),
      hadamardCase("random128_inverse_axis0", {256, 2}, 0, "128, random", true),
      hadamardCase("fixed256", {2, 256}, 1, "256, fixed", false),
      hadamardCase("explicit16", {4, 32}, 1, explicitSigns, false),
      hadamardCase("explicit16_inverse_axis0", {32, 5}, 0, explicitSigns, true),
  };
}

INSTANTIATE_TEST_SUITE_P(Hadamard, RuntimeEquivalenceTest,
                         ::testing::ValuesIn(hadamardCases()),
                         [](const auto &info) { return info.param.name; });

/// quantize both operands, scaled_matmul with %acc; `transposeRhs` quantizes
/// [K, N] in 16x16 tiles and feeds its transposed view (the Dgrad layout);
/// `alpha`, an f32 literal, is given as the GEMM's factor ([TE2]).
OpCase matmulCase(std::string name, const Scaled &lhs, Scaled rhs,
                  bool transposeRhs = false, const char *alpha = nullptr) {
  std::vector<int64_t> acc(lhs.shape.begin(), lhs.shape.end() - 1);
  acc.push_back(rhs.shape[rhs.shape.size() - 2]);
  std::string accType = tensorType(acc, "f32");
  Scaled rhsInput = rhs;
  if (transposeRhs)
    std::swap(rhsInput.shape[rhs.shape.size() - 1],
              rhsInput.shape[rhs.shape.size() - 2]);
  std::string source =
      "func.func @main(%a: " + tensorType(lhs.shape, "f32") +
      ", %b: " + tensorType(rhsInput.shape, "f32") + ", %acc: " + accType +
      ") -> " + accType +
      " {\n  %qa = fp4train.quantize %a : " + tensorType(lhs.shape, "f32") +
      " -> " + lhs.type() +
      "\n  %qb = fp4train.quantize %b : " + tensorType(rhsInput.shape, "f32") +
      " -> " + rhsInput.type() + "\n";
  std::string rhsValue = "%qb";
  if (transposeRhs) {
    source += "  %qbt = fp4train.transpose %qb : " + rhsInput.type() + " -> " +
              rhs.type() + "\n";
    rhsValue = "%qbt";
  }
  if (alpha)
    source += "  %alpha = arith.constant " + std::string(alpha) + " : f32\n";
  source += "  %c = fp4train.scaled_matmul %qa, " + rhsValue + ", %acc" +
            (alpha ? " alpha(%alpha)" : "") + " : " + lhs.type() + ", " +
            rhs.type() + ", " + accType + "\n  return %c : " + accType +
            "\n}\n";
  return {std::move(name), source, false};
}

std::vector<OpCase> matmulCases() {
  OpCase specials = matmulCase("mxfp4_specials", mxfp4({8, 256}, {1, 32}),
                               mxfp4({6, 256}, {1, 32}));
  specials.specials = true;
  return {
      matmulCase("mxfp4", mxfp4({8, 96}, {1, 32}), mxfp4({6, 96}, {1, 32})),
      specials,
      matmulCase("nvfp4", nvfp4({8, 64}, {1, 16}), nvfp4({6, 64}, {1, 16})),
      matmulCase("nvfp4_2d", nvfp4({8, 64}, {1, 16}),
                 nvfp4({32, 64}, {16, 16})),
      matmulCase("nvfp4_2d_transposed", nvfp4({8, 32}, {1, 16}),
                 nvfp4({48, 32}, {16, 16}), /*transposeRhs=*/true),
      matmulCase("mxfp4_batch", mxfp4({3, 4, 64}, {1, 1, 32}),
                 mxfp4({3, 5, 64}, {1, 1, 32})),
      matmulCase("nvfp4_2d_batch", nvfp4({2, 4, 48}, {1, 1, 16}),
                 nvfp4({2, 16, 48}, {1, 16, 16})),
      matmulCase("mxfp8_e5m2_e4m3", mxfp8({8, 64}, {1, 32}, "f8E5M2"),
                 mxfp8({6, 64}, {1, 32}, "f8E4M3FN")),
      matmulCase("mxfp8_e4m3_mxfp4", mxfp8({8, 64}, {1, 32}, "f8E4M3FN"),
                 mxfp4({6, 64}, {1, 32})),
      // [TE2] A factor of TransformerEngine's size (amaxes of a few units
      // over 7225344), and one on operands without global scales.
      matmulCase("nvfp4_2d_alpha", nvfp4({8, 64}, {1, 16}),
                 nvfp4({32, 64}, {16, 16}), false, "3.1e-06"),
      matmulCase("mxfp4_alpha", mxfp4({8, 96}, {1, 32}),
                 mxfp4({6, 96}, {1, 32}), false, "0.37"),
  };
}

INSTANTIATE_TEST_SUITE_P(ScaledMatmul, RuntimeEquivalenceTest,
                         ::testing::ValuesIn(matmulCases()),
                         [](const auto &info) { return info.param.name; });

} // namespace
