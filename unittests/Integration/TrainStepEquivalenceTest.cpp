//===- TrainStepEquivalenceTest.cpp - Whole quantized steps, both paths ---===//
//
// Issue 5 / [CHK2] (docs/semantics.md) on whole training steps: each bundled
// example, quantized by a recipe with fp4train-cpu-pipeline, runs once through
// the exact expansion (numerics=ir) and once through the runtime calls into the
// numerics library's reference path (numerics=runtime), on the same inputs and
// step; the loss and every returned tensor (updated parameters or gradients)
// must agree bit for bit. Stochastic rounding and random Hadamard signs depend
// on the step argument, so both paths see the same random bits.
//
//===----------------------------------------------------------------------===//

#include "JitTestUtils.h"

#include "llvm/Support/MemoryBuffer.h"

#include <cstdint>

using namespace mlir;
using namespace mlir::fp4train;
using ::fp4train::testing::Buffers;
using ::fp4train::testing::expectPathsAgree;
using ::fp4train::testing::makeData;

namespace {

struct StepCase {
  const char *example;
  /// Index of the step argument (the examples' headers name it).
  int stepArg;
  const char *recipe;
};

std::string caseName(const ::testing::TestParamInfo<StepCase> &info) {
  std::string name = std::string(info.param.example) + "_" + info.param.recipe;
  for (char &c : name)
    if (c == '-')
      c = '_';
  return name;
}

class TrainStepEquivalenceTest : public ::testing::TestWithParam<StepCase> {};

TEST_P(TrainStepEquivalenceTest, SameBits) {
  const StepCase &c = GetParam();
  std::string path =
      std::string(FP4TRAIN_SOURCE_DIR) + "/examples/" + c.example + ".mlir";
  auto file = llvm::MemoryBuffer::getFile(path);
  ASSERT_TRUE(bool(file)) << path;
  expectPathsAgree(
      (*file)->getBuffer().str(), "train_step",
      [&](OpPassManager &pm, CPUNumerics numerics) {
        CPUPipelineOptions options;
        options.recipe = c.recipe;
        options.stepArg = c.stepArg;
        options.outParams = true;
        options.numerics = numerics;
        buildCPUPipeline(pm, options);
      },
      [](Buffers &buffers, const JitFunction &function) {
        for (auto [index, value] : llvm::enumerate(function.getArguments())) {
          if (value.kind == JitValue::Kind::Tensor) {
            // Unit-scale data, weights ~ 1/sqrt(fan-in): a realistic step.
            float scale = value.isParam && value.shape.size() == 2
                              ? 1.0f / std::sqrt(float(value.shape.back()))
                              : 1.0f;
            std::vector<float> data =
                makeData(value.getNumElements(), 101 + index, false, 0);
            for (float &x : data)
              x *= scale;
            std::memcpy(buffers.args[index].data(), data.data(),
                        data.size() * 4);
          } else if (value.kind == JitValue::Kind::F32) {
            *buffers.arg<float>(index) = 0.05f; // learning rate
          } else {
            *buffers.arg<int64_t>(index) = 7; // training step
          }
        }
      });
}

INSTANTIATE_TEST_SUITE_P(
    Examples, TrainStepEquivalenceTest,
    // "none" quantizes nothing: a check of the harness itself.
    ::testing::Values(StepCase{"mlp_train_step", 9, "none"},
                      StepCase{"mlp_train_step", 9, "nvfp4"},
                      StepCase{"mlp_train_step", 9, "mxfp4-hadamard"},
                      StepCase{"mlp_train_step_jax", 9, "nvfp4"},
                      StepCase{"mlp_train_step_jax", 9, "mxfp4-sr"},
                      StepCase{"transformer_block_train_step", 10, "nvfp4"},
                      StepCase{"transformer_block_train_step", 10,
                               "mxfp4-hadamard"},
                      StepCase{"transformer_block_train_step", 10, "mxfp8"}),
    caseName);

} // namespace
