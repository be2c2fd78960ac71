//===- JitTestUtils.h - Run one module through both CPU paths ---*- C++ -*-===//
//
// Helpers of the equivalence tests: compile a module with a CPU pipeline
// under numerics=ir and numerics=runtime (JitFunction), call both on the
// same inputs and compare every output byte, NaN by class only (IEEE leaves
// NaN payloads and signs open, and the two paths produce them differently).
//
//===----------------------------------------------------------------------===//

#ifndef FP4TRAIN_UNITTESTS_INTEGRATION_JITTESTUTILS_H
#define FP4TRAIN_UNITTESTS_INTEGRATION_JITTESTUTILS_H

#include "fp4train/InitFP4Train.h"
#include "fp4train/Numerics/Formats.h"
#include "fp4train/Pipelines/Pipelines.h"
#include "fp4train/Runtime/JitFunction.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <vector>

namespace fp4train::testing {

/// Host buffers for every argument and result of a JitFunction.
struct Buffers {
  std::vector<std::vector<uint8_t>> args, outs;
  std::vector<const void *> argPointers;
  std::vector<void *> outPointers;

  Buffers(const mlir::fp4train::JitFunction &function) {
    for (const mlir::fp4train::JitValue &value : function.getArguments())
      args.emplace_back(value.kind == mlir::fp4train::JitValue::Kind::Tensor
                            ? value.getNumElements() * value.elementBytes
                            : 8);
    for (const mlir::fp4train::JitValue &value : function.getResults())
      outs.emplace_back(value.getNumElements() * value.elementBytes);
    for (auto &arg : args)
      argPointers.push_back(arg.data());
    for (auto &out : outs)
      outPointers.push_back(out.data());
  }

  template <typename T> T *arg(size_t i) {
    return reinterpret_cast<T *>(args[i].data());
  }
};

/// Deterministic data over many binades; with `specials`, also a zero block,
/// subnormals, an E2M1 tie, ±Inf and a NaN (where `count` allows).
inline std::vector<float> makeData(int64_t count, uint32_t seed, bool specials,
                                   int spread = 12) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal;
  std::uniform_int_distribution<int> exponent(-spread, spread);
  std::vector<float> data(count);
  for (float &x : data)
    x = std::ldexp(normal(rng), exponent(rng));
  if (specials && count >= 256) {
    std::fill(data.begin() + 32, data.begin() + 64, 0.0f);
    data[70] = std::ldexp(1.0f, -140);
    data[100] = 2.5f;
    data[130] = INFINITY;
    data[200] = NAN;
    data[230] = -INFINITY;
  }
  return data;
}

/// Compiles `source` (fresh parse) with `buildPipeline` and `numerics`, and
/// JITs function `name`.
inline std::unique_ptr<mlir::fp4train::JitFunction> compileSource(
    mlir::MLIRContext &context, const std::string &source,
    const std::string &name,
    const std::function<void(mlir::OpPassManager &,
                             mlir::fp4train::CPUNumerics)> &buildPipeline,
    mlir::fp4train::CPUNumerics numerics) {
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::parseSourceString<mlir::ModuleOp>(source, &context);
  if (!module) {
    ADD_FAILURE() << "cannot parse:\n" << source;
    return nullptr;
  }
  auto function = mlir::fp4train::JitFunction::compile(
      *module, name,
      [&](mlir::OpPassManager &pm) { buildPipeline(pm, numerics); });
  if (!function) {
    ADD_FAILURE() << llvm::toString(function.takeError());
    return nullptr;
  }
  return std::move(*function);
}

/// Compares two result buffers of `value`'s type; reports the first few
/// differences under `what`.
inline void expectSameBits(const std::string &what,
                           const mlir::fp4train::JitValue &value,
                           const std::vector<uint8_t> &ir,
                           const std::vector<uint8_t> &runtime) {
  int64_t count = value.getNumElements(), bad = 0;
  for (int64_t i = 0; i < count; ++i) {
    bool same;
    std::string irText, rtText;
    if (value.elementBytes == 4) {
      float a, b;
      std::memcpy(&a, ir.data() + 4 * i, 4);
      std::memcpy(&b, runtime.data() + 4 * i, 4);
      same = (std::isnan(a) && std::isnan(b)) ||
             numerics::floatToBits(a) == numerics::floatToBits(b);
      irText = std::to_string(a);
      rtText = std::to_string(b);
    } else {
      same = ir[i] == runtime[i];
      irText = std::to_string(ir[i]);
      rtText = std::to_string(runtime[i]);
    }
    if (!same && bad++ < 4)
      ADD_FAILURE() << what << "[" << i << "]: ir " << irText << ", runtime "
                    << rtText;
  }
  EXPECT_EQ(bad, 0) << what << ": " << bad << " of " << count << " differ";
}

/// Runs `source`'s function `name` under both numerics paths on the inputs
/// `fill` writes, and expects every output to agree bit for bit.
inline void expectPathsAgree(
    const std::string &source, const std::string &name,
    const std::function<void(mlir::OpPassManager &,
                             mlir::fp4train::CPUNumerics)> &buildPipeline,
    const std::function<void(Buffers &, const mlir::fp4train::JitFunction &)>
        &fill) {
  mlir::DialectRegistry registry;
  mlir::fp4train::registerAllDialects(registry);
  mlir::MLIRContext context(registry);
  auto ir = compileSource(context, source, name, buildPipeline,
                          mlir::fp4train::CPUNumerics::IR);
  auto runtime = compileSource(context, source, name, buildPipeline,
                               mlir::fp4train::CPUNumerics::Runtime);
  if (!ir || !runtime)
    return;
  Buffers irBuffers(*ir), runtimeBuffers(*runtime);
  fill(irBuffers, *ir);
  for (size_t i = 0; i < irBuffers.args.size(); ++i)
    std::copy(irBuffers.args[i].begin(), irBuffers.args[i].end(),
              runtimeBuffers.args[i].begin());
  llvm::cantFail(ir->call(irBuffers.argPointers, irBuffers.outPointers));
  llvm::cantFail(
      runtime->call(runtimeBuffers.argPointers, runtimeBuffers.outPointers));
  for (size_t i = 0; i < irBuffers.outs.size(); ++i)
    expectSameBits("result " + std::to_string(i), ir->getResults()[i],
                   irBuffers.outs[i], runtimeBuffers.outs[i]);
}

} // namespace fp4train::testing

#endif // FP4TRAIN_UNITTESTS_INTEGRATION_JITTESTUTILS_H
