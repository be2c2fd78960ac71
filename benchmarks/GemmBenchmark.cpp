//===- GemmBenchmark.cpp - Emulated FP4 linear layer vs f32 SGEMM ---------===//
//
// The emulated linear layer Y = X·Wᵀ at M = N = K = 2048: quantize X and W
// (MXFP4, or NVFP4 with 16×16 weight tiles), then the [GEMM1] block-scaled
// matmul; the matmul alone on pre-quantized operands; and the baselines that
// run.sh divides by, measured in the same process on the same threads:
//  - OpenBLAS SGEMM of the same shape. The kernel OpenBLAS picked
//    (openblas_get_corename) goes into the label and its build configuration
//    into the JSON context. OpenBLAS fixes its kernel when the library loads,
//    from OPENBLAS_CORETYPE if set, so run.sh measures the fastest kernel by
//    running BM_Sgemm again in a child process without that variable;
//  - the f32 FMA peak: independent FMA chains that never leave registers,
//    with the widest vectors the CPU has.
// GFLOP/s counts 2·M·N·K for every GEMM, so the FP4 figures are
// "f32-equivalent" rates.
//
//===----------------------------------------------------------------------===//

#include "fp4train/Numerics/BlockGemmKernels.h"
#include "fp4train/Numerics/BlockQuant.h"
#include "fp4train/Numerics/Parallel.h"

#include <benchmark/benchmark.h>
#include <cblas.h>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include <cstdlib>
#include <random>
#include <string>
#include <vector>

using namespace fp4train::numerics;

namespace {

constexpr int64_t kM = 2048, kN = 2048, kK = 2048;

std::vector<float> randomMatrix(int64_t rows, int64_t cols, unsigned seed) {
  std::vector<float> data(rows * cols);
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  for (float &x : data)
    x = normal(rng);
  return data;
}

const std::vector<float> &getActivations() {
  static const std::vector<float> x = randomMatrix(kM, kK, 1);
  return x;
}
const std::vector<float> &getWeights() {
  static const std::vector<float> w = randomMatrix(kN, kK, 2);
  return w;
}

void setFlopRate(benchmark::State &state, double flopsPerIteration) {
  state.counters["GFLOP/s"] =
      benchmark::Counter(flopsPerIteration * double(state.iterations()) / 1e9,
                         benchmark::Counter::kIsRate);
  state.counters["threads"] = getNumThreads();
}

//===----------------------------------------------------------------------===//
// f32 FMA peak
//===----------------------------------------------------------------------===//

/// Chains per thread: enough independent FMAs to cover the FMA latency on
/// every pipe (4 cycles × 2 pipes on current x86 cores, with margin).
constexpr int kChains = 12;
constexpr int64_t kFmaIterations = 1 << 22;

#if defined(__x86_64__)
__attribute__((target("avx2,fma"))) float fmaLoopAVX2(int64_t iterations) {
  __m256 acc[kChains];
  for (int c = 0; c < kChains; ++c)
    acc[c] = _mm256_set1_ps(0.001f * float(c));
  // Converges to the fixed point 0.1: no overflow, no subnormals.
  const __m256 x = _mm256_set1_ps(0.999999f), y = _mm256_set1_ps(1e-7f);
  for (int64_t i = 0; i < iterations; ++i)
    for (int c = 0; c < kChains; ++c)
      acc[c] = _mm256_fmadd_ps(acc[c], x, y);
  for (int c = 1; c < kChains; ++c)
    acc[0] = _mm256_add_ps(acc[0], acc[c]);
  return _mm256_cvtss_f32(acc[0]);
}

__attribute__((target("avx512f"))) float fmaLoopAVX512(int64_t iterations) {
  // Twice the chains: 32 registers, and 2 × 512-bit pipes on some cores.
  __m512 acc[2 * kChains];
  for (int c = 0; c < 2 * kChains; ++c)
    acc[c] = _mm512_set1_ps(0.001f * float(c));
  const __m512 x = _mm512_set1_ps(0.999999f), y = _mm512_set1_ps(1e-7f);
  for (int64_t i = 0; i < iterations; ++i)
    for (int c = 0; c < 2 * kChains; ++c)
      acc[c] = _mm512_fmadd_ps(acc[c], x, y);
  for (int c = 1; c < 2 * kChains; ++c)
    acc[0] = _mm512_add_ps(acc[0], acc[c]);
  return _mm512_reduce_add_ps(acc[0]);
}
#endif

void BM_FmaPeak(benchmark::State &state) {
  int64_t flopsPerThread = 0;
  float (*loop)(int64_t) = nullptr;
  std::string isa = "none";
#if defined(__x86_64__)
  if (__builtin_cpu_supports("avx512f")) {
    loop = fmaLoopAVX512;
    flopsPerThread = kFmaIterations * 2 * kChains * 16 * 2;
    isa = "avx512";
  } else if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {
    loop = fmaLoopAVX2;
    flopsPerThread = kFmaIterations * kChains * 8 * 2;
    isa = "avx2";
  }
#endif
  if (!loop) {
    state.SkipWithError("no vector FMA on this CPU");
    return;
  }
  unsigned threads = getNumThreads();
  std::vector<float> sink(threads);
  for (auto _ : state) {
    parallelFor(threads, 1, [&](int64_t begin, int64_t end) {
      for (int64_t t = begin; t < end; ++t)
        sink[t] = loop(kFmaIterations);
    });
    benchmark::DoNotOptimize(sink.data());
  }
  setFlopRate(state, double(flopsPerThread) * threads);
  state.SetLabel(isa);
}

//===----------------------------------------------------------------------===//
// OpenBLAS SGEMM
//===----------------------------------------------------------------------===//

void BM_Sgemm(benchmark::State &state) {
  const std::vector<float> &x = getActivations(), &w = getWeights();
  std::vector<float> y(kM * kN);
  openblas_set_num_threads(int(getNumThreads()));
  for (auto _ : state) {
    // Y = X·Wᵀ with W stored [N, K], the layout of the FP4 operands.
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, kM, kN, kK, 1.0f,
                x.data(), kK, w.data(), kK, 0.0f, y.data(), kN);
    benchmark::DoNotOptimize(y.data());
  }
  setFlopRate(state, 2.0 * kM * kN * kK);
  const char *forced = std::getenv("OPENBLAS_CORETYPE");
  state.SetLabel(std::string("openblas ") + openblas_get_corename() +
                 (forced ? " (OPENBLAS_CORETYPE=" + std::string(forced) + ")"
                         : std::string(" (autodetected)")));
}

//===----------------------------------------------------------------------===//
// Block-scaled matmul and the emulated linear layer
//===----------------------------------------------------------------------===//

/// 0: MXFP4 (32-blocks on both sides); 1: NVFP4 (16-blocks on X, 16×16
/// tiles on W, [NV1]); 2: MXFP8 E4M3 on both sides (the mxfp8 recipe's
/// Fprop); 3: MXFP8 E5M2 × E4M3 (its Dgrad and Wgrad). Round to nearest
/// even.
struct LinearConfig {
  QuantConfig x, w;
};

LinearConfig getLinearConfig(int64_t formatIndex) {
  static const Format xFormats[] = {Format::MXFP4, Format::NVFP4,
                                    Format::MXFP8E4M3, Format::MXFP8E5M2};
  LinearConfig config;
  Format format = xFormats[formatIndex];
  config.x.format = format;
  config.x.blockSize = getDefaultBlockSize(format);
  config.w = config.x;
  config.w.twoDimensional = format == Format::NVFP4;
  if (format == Format::MXFP8E5M2)
    config.w.format = Format::MXFP8E4M3;
  return config;
}

std::string getLabel(const LinearConfig &config) {
  std::string formats(getFormatName(config.x.format));
  if (config.w.format != config.x.format)
    formats += " x " + std::string(getFormatName(config.w.format));
  return formats + " " + std::string(getGemmKernelName(getDefaultGemmKernel()));
}

/// Quantizes X and W into `qx`, `qw` and multiplies them into `y`.
Status runLinear(const LinearConfig &config, QuantizedTensor &qx,
                 QuantizedTensor &qw, std::vector<float> &y, bool quantize) {
  if (quantize) {
    if (Status status =
            quantizeInto(getActivations().data(), {kM, kK}, config.x, qx);
        !status)
      return status;
    if (Status status =
            quantizeInto(getWeights().data(), {kN, kK}, config.w, qw);
        !status)
      return status;
  }
  Expected<GemmOperand> a = makeGemmOperand(qx), b = makeGemmOperand(qw);
  if (!a)
    return a.error();
  if (!b)
    return b.error();
  return blockScaledGemm(*a, *b, nullptr, y.data());
}

/// Argument: the formats (getLinearConfig). The operands are quantized once.
void BM_ScaledMatmul(benchmark::State &state) {
  LinearConfig config = getLinearConfig(state.range(0));
  QuantizedTensor qx, qw;
  std::vector<float> y(kM * kN);
  if (Status status = runLinear(config, qx, qw, y, /*quantize=*/true); !status)
    state.SkipWithError(status.error().message.c_str());
  for (auto _ : state) {
    if (Status status = runLinear(config, qx, qw, y, /*quantize=*/false);
        !status)
      state.SkipWithError(status.error().message.c_str());
    benchmark::DoNotOptimize(y.data());
  }
  setFlopRate(state, 2.0 * kM * kN * kK);
  state.SetLabel(getLabel(config));
}

/// Argument: the formats (getLinearConfig). Quantization buffers are reused
/// across iterations, as a training loop would.
void BM_LinearLayer(benchmark::State &state) {
  LinearConfig config = getLinearConfig(state.range(0));
  QuantizedTensor qx, qw;
  std::vector<float> y(kM * kN);
  for (auto _ : state) {
    if (Status status = runLinear(config, qx, qw, y, /*quantize=*/true);
        !status)
      state.SkipWithError(status.error().message.c_str());
    benchmark::DoNotOptimize(y.data());
  }
  setFlopRate(state, 2.0 * kM * kN * kK);
  state.SetLabel(getLabel(config));
}

} // namespace

BENCHMARK(BM_FmaPeak)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_Sgemm)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_ScaledMatmul)
    ->DenseRange(0, 3)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK(BM_LinearLayer)
    ->DenseRange(0, 3)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

int main(int argc, char **argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv))
    return 1;
  benchmark::AddCustomContext("openblas_core", openblas_get_corename());
  benchmark::AddCustomContext("openblas_config", openblas_get_config());
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
