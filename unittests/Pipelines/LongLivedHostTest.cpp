//===- LongLivedHostTest.cpp - Bad modules leave the context usable -------===//
//
// The guarantee of docs/robustness.md for a compiler that embeds fp4train:
// a module that cannot be parsed, verified or lowered makes the parse or the
// pipeline return failure with its diagnostics reported to the context's
// handler, and the same MLIRContext compiles the next module normally. Runs
// 1,000 bad modules (each distinct malformed or unsupported input in turn,
// through the quantize, CPU, ROCm and CUDA pipelines), then a good one
// through every pipeline, in one context.
//
//===----------------------------------------------------------------------===//

#include "fp4train/InitFP4Train.h"
#include "fp4train/Pipelines/Pipelines.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"

#include "gtest/gtest.h"

#include <functional>
#include <string>
#include <vector>

using namespace mlir;
using namespace mlir::fp4train;

namespace {

/// Y = X . W^T with W a parameter, `k` the contraction size, `m` the rows.
std::string fprop(const std::string &m, int k) {
  std::string x = "tensor<" + m + "x" + std::to_string(k) + "xf32>";
  std::string w = "tensor<64x" + std::to_string(k) + "xf32>";
  std::string y = "tensor<" + m + "x64xf32>";
  return "func.func @fprop(%x: " + x + ", %w: " + w +
         " {fp4train.param}, %init: " + y + ") -> " + y +
         " {\n"
         "  %y = linalg.matmul indexing_maps = ["
         "affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, "
         "affine_map<(m, n, k) -> (m, n)>]\n"
         "      ins(%x, %w : " +
         x + ", " + w + ") outs(%init : " + y + ") -> " + y +
         "\n  return %y : " + y + "\n}\n";
}

using Pipeline = std::function<void(OpPassManager &)>;

/// The pipeline `build` under the mxfp4 recipe with `set` applied to its
/// options.
template <typename Options, typename Set>
Pipeline pipeline(void (*build)(OpPassManager &, const Options &), Set set) {
  return [build, set](OpPassManager &pm) {
    Options options;
    options.recipe = "mxfp4";
    set(options);
    build(pm, options);
  };
}
template <typename Set> Pipeline quantize(Set set) {
  return pipeline(buildQuantizePipeline, set);
}
template <typename Set> Pipeline cpu(Set set) {
  return pipeline(buildCPUPipeline, set);
}
template <typename Set> Pipeline rocm(Set set) {
  return pipeline(buildROCmPipeline, set);
}
template <typename Set> Pipeline cuda(Set set) {
  return pipeline(buildCUDAPipeline, set);
}

struct BadInput {
  const char *what;
  std::string source;
  Pipeline pipeline;
};

class LongLivedHost : public ::testing::Test {
protected:
  LongLivedHost() : context(makeRegistry()) {}
  static DialectRegistry makeRegistry() {
    DialectRegistry registry;
    registerAllDialects(registry);
    return registry;
  }

  /// Parses and lowers `source`; returns whether both succeeded.
  bool compile(const std::string &source, const Pipeline &pipeline) {
    OwningOpRef<ModuleOp> module =
        parseSourceString<ModuleOp>(source, &context);
    if (!module)
      return false;
    PassManager pm(&context);
    pipeline(pm);
    return succeeded(pm.run(*module));
  }

  MLIRContext context;
};

TEST_F(LongLivedHost, ThousandBadModulesThenAGoodOne) {
  auto none = [](auto &) {};
  std::vector<BadInput> bad = {
      {"syntax error", "func.func @f( {", quantize(none)},
      {"dynamic non-rotated hadamard dimension",
       "func.func @h(%x: tensor<?x64xf32>) -> tensor<?x64xf32> {\n"
       "  %0 = fp4train.hadamard %x with #fp4train.hadamard<16, none> along 1 "
       ": tensor<?x64xf32>\n  return %0 : tensor<?x64xf32>\n}\n",
       cpu(none)},
      {"element count overflow",
       "func.func private @f(!fp4train.scaled<2147483648x4294967296xf4E2M1FN, "
       "block = [1, 32], scale = f8E8M0FNU>)\n",
       rocm(none)},
      {"dynamic contraction", fprop("?", 128), quantize(none)},
      {"K not a multiple of the block with pad=0", fprop("8", 40),
       quantize([](auto &o) { o.pad = false; })},
      {"unknown recipe", fprop("8", 128),
       cpu([](auto &o) { o.recipe = "fp3"; })},
      {"unknown weight layout", fprop("8", 128),
       cpu([](auto &o) { o.weightLayout = "jax"; })},
      {"recipe option out of range", fprop("8", 128), quantize([](auto &o) {
         RecipeOverrides overrides;
         overrides.hadamard = 24u;
         o.overrides.setValue(overrides);
       })},
      {"report to a full device", fprop("8", 128),
       quantize([](auto &o) { o.report = "/dev/full"; })},
      {"NVIDIA chip on ROCm", fprop("64", 128),
       rocm([](auto &o) { o.chip = GPUChip::SM120a; })},
      {"tile 64 on 32x32x64", fprop("64", 128), rocm([](auto &o) {
         o.mfma = MFMAOption::M32N32K64;
         o.tile = MFMATileOption::Tile64;
       })},
      {"NVFP4 on gfx950", fprop("64", 128),
       rocm([](auto &o) { o.recipe = "nvfp4"; })},
      {"AMD chip on CUDA", fprop("64", 128),
       cuda([](auto &o) { o.chip = GPUChip::GFX950; })},
      {"dynamic contraction on CUDA", fprop("?", 128), cuda(none)},
  };

  std::vector<std::string> errors;
  ScopedDiagnosticHandler handler(&context, [&](Diagnostic &diagnostic) {
    if (diagnostic.getSeverity() == DiagnosticSeverity::Error)
      errors.push_back(diagnostic.str());
    return success();
  });

  for (int i = 0; i < 1000; ++i) {
    const BadInput &input = bad[i % bad.size()];
    errors.clear();
    ASSERT_FALSE(compile(input.source, input.pipeline))
        << "module " << i << " (" << input.what << ") compiled";
    ASSERT_FALSE(errors.empty())
        << "module " << i << " (" << input.what << ") failed silently";
  }

  // The same context, the same handler: a good module goes through every
  // pipeline without an error.
  errors.clear();
  std::string good = fprop("64", 128);
  EXPECT_TRUE(compile(good, quantize(none)));
  EXPECT_TRUE(compile(good, cpu(none)));
  EXPECT_TRUE(compile(good, rocm(none)));
  EXPECT_TRUE(compile(good, cuda([](auto &o) { o.recipe = "nvfp4"; })));
  EXPECT_TRUE(errors.empty()) << errors.front();
}

} // namespace
