//===- QuantizeBenchmark.cpp - Quantization throughput --------------------===//
//
// Quantizes an 8192×8192 f32 tensor to MXFP4 and NVFP4, RNE and SR, with and
// without a 16-point Hadamard rotation (and NVFP4 RNE once more with the
// amax supplied, which shows the cost of its amax pass), and copies the same
// bytes with memcpy on the same threads, so run.sh can report each throughput
// as a fraction of the machine's copy bandwidth measured in the same run.
// Throughput counts the f32 input bytes.
//
//===----------------------------------------------------------------------===//

#include "fp4train/Numerics/BlockQuant.h"
#include "fp4train/Numerics/Hadamard.h"
#include "fp4train/Numerics/Parallel.h"

#include <benchmark/benchmark.h>

#include <cstring>
#include <random>
#include <vector>

using namespace fp4train::numerics;

namespace {

constexpr int64_t kRows = 8192, kCols = 8192;

const std::vector<float> &getInput() {
  static const std::vector<float> input = [] {
    std::vector<float> data(kRows * kCols);
    std::mt19937 rng(42);
    std::normal_distribution<float> normal(0.0f, 1.0f);
    for (float &x : data)
      x = normal(rng);
    return data;
  }();
  return input;
}

void setThroughput(benchmark::State &state) {
  state.SetBytesProcessed(int64_t(state.iterations()) * kRows * kCols *
                          int64_t(sizeof(float)));
  state.counters["threads"] = getNumThreads();
}

void BM_Memcpy(benchmark::State &state) {
  const std::vector<float> &input = getInput();
  std::vector<float> output(input.size());
  for (auto _ : state) {
    parallelFor(int64_t(input.size()), 1 << 16,
                [&](int64_t begin, int64_t end) {
                  std::memcpy(&output[begin], &input[begin],
                              size_t(end - begin) * sizeof(float));
                });
    benchmark::DoNotOptimize(output.data());
  }
  setThroughput(state);
}

/// Arguments: format (0 mxfp4, 1 nvfp4), rounding (0 rne, 1 sr), Hadamard
/// size (0 or 16), NVFP4 amax supplied (1, delayed scaling: no amax pass) or
/// computed (0). The output buffers are reused across iterations, as a
/// training loop would.
void BM_Quantize(benchmark::State &state) {
  Format format = state.range(0) ? Format::NVFP4 : Format::MXFP4;
  QuantConfig config;
  config.format = format;
  config.blockSize = getDefaultBlockSize(format);
  config.rounding =
      state.range(1) ? Rounding::Stochastic : Rounding::NearestEven;
  config.seed = 1;
  if (state.range(3))
    config.amax = 4.0f;
  HadamardConfig rotation;
  rotation.size = state.range(2);
  rotation.signs = HadamardSigns::Fixed;
  // Rotation works in place, so it runs on a private copy; rotating it again
  // every iteration keeps the values' distribution (the map is orthogonal).
  std::vector<float> data = getInput();
  QuantizedTensor q;
  for (auto _ : state) {
    if (rotation.size && !hadamardRotate(data.data(), {kRows, kCols}, rotation))
      state.SkipWithError("rotation failed");
    Status status = quantizeInto(data.data(), {kRows, kCols}, config, q);
    if (!status)
      state.SkipWithError(status.error().message.c_str());
    benchmark::DoNotOptimize(q.codes.data());
  }
  setThroughput(state);
  state.SetLabel(std::string(getFormatName(format)) + "/" +
                 std::string(getRoundingName(config.rounding)) +
                 (rotation.size ? "/hadamard16" : "") +
                 (config.amax ? "/amax-given" : ""));
}

} // namespace

BENCHMARK(BM_Memcpy)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_Quantize)
    ->ArgsProduct({{0, 1}, {0, 1}, {0, 16}, {0}})
    ->Args({1, 0, 0, 1})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

BENCHMARK_MAIN();
