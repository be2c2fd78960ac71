//===- Wgmma.cpp - wgmma.mma_async m64nNk32 FP8 and its descriptor --------===//
//
// The sources and assumptions are in fp4train/Emulation/Wgmma.h.
//
//===----------------------------------------------------------------------===//

#include "fp4train/Emulation/Wgmma.h"

#include "BlockScaleArithmetic.h"

#include "llvm/Support/FormatVariadic.h"

using namespace fp4train::emulation::ptx;
using namespace fp4train::emulation::ptx::detail;

std::string
fp4train::emulation::ptx::decodeWgmmaDescriptor(uint64_t bits,
                                                SmemDescriptor *desc) {
  auto field = [&](unsigned lo, unsigned width) {
    return static_cast<uint32_t>((bits >> lo) & ((uint64_t{1} << width) - 1));
  };
  if (field(14, 2) || field(30, 2) || field(46, 3) || field(52, 10))
    return llvm::formatv("wgmma matrix descriptor {0:x16}: reserved bits "
                         "(14-15, 30-31, 46-48, 52-61) are not zero",
                         bits);
  desc->startAddress = field(0, 14) << 4;
  desc->leadingByteOffset = field(16, 14) << 4;
  desc->strideByteOffset = field(32, 14) << 4;
  desc->baseOffset = field(49, 3);
  desc->leadingAbsolute = false;
  // §9.7.15.5.1.2.2: 0 interleave (no swizzling), 1 128B, 2 64B, 3 32B.
  static constexpr SwizzleMode kModes[] = {SwizzleMode::None, SwizzleMode::B128,
                                           SwizzleMode::B64, SwizzleMode::B32};
  desc->swizzle = kModes[field(62, 2)];
  return {};
}

std::pair<unsigned, unsigned>
fp4train::emulation::ptx::getWgmmaAccumulatorPosition(unsigned thread,
                                                      unsigned i) {
  const unsigned warp = thread / kWarpSize, lane = thread % kWarpSize;
  return {16 * warp + lane / 4 + 8 * ((i / 2) % 2),
          8 * (i / 4) + 2 * (lane % 4) + i % 2};
}

std::string
fp4train::emulation::ptx::wgmma(const WgmmaConfig &config, uint64_t descA,
                                uint64_t descB, SharedMemory &smem,
                                llvm::ArrayRef<std::vector<uint32_t>> c,
                                std::vector<std::vector<uint32_t>> *d) {
  auto isFP8 = [](ElementType type) {
    return type == ElementType::E4M3 || type == ElementType::E5M2;
  };
  const bool f16 =
      config.typeA == ElementType::F16 && config.typeB == ElementType::F16;
  if (!f16 && (!isFP8(config.typeA) || !isFP8(config.typeB)))
    return "the modelled wgmma takes e4m3/e5m2 or f16 x f16 operands";
  const unsigned N = config.n;
  const unsigned K = getWgmmaK(config), bits = f16 ? 16 : 8;
  if (N < 8 || N > 256 || N % 8)
    return llvm::formatv("wgmma m64nNk{0} needs N a multiple of 8 in [8, "
                         "256], not {1}",
                         K, N);
  constexpr unsigned M = 64;
  const unsigned registers = N / 2;
  if (c.size() != kWarpgroupSize)
    return "the accumulator needs the registers of all 128 threads";
  for (const std::vector<uint32_t> &thread : c)
    if (thread.size() != registers)
      return llvm::formatv("m64n{0}k{1} with .f32 D takes {2} registers per "
                           "thread",
                           N, K, registers);

  std::vector<uint32_t> codesA, codesB;
  SmemDescriptor a, b;
  if (std::string error = decodeWgmmaDescriptor(descA, &a); !error.empty())
    return "A: " + error;
  if (std::string error = decodeWgmmaDescriptor(descB, &b); !error.empty())
    return "B: " + error;
  if (std::string error = readKMajorOperand(a, smem, M, K, bits, &codesA);
      !error.empty())
    return "A: " + error;
  if (std::string error = readKMajorOperand(b, smem, N, K, bits, &codesB);
      !error.empty())
    return "B: " + error;

  std::vector<Value> matA(M * K), matB(size_t{N} * K);
  for (unsigned i = 0; i < M * K; ++i)
    matA[i] = decodeElement(config.typeA, codesA[i]);
  for (unsigned i = 0; i < N * K; ++i)
    matB[i] = decodeElement(config.typeB, codesB[i]);

  std::vector<std::vector<uint32_t>> result(kWarpgroupSize,
                                            std::vector<uint32_t>(registers));
  for (unsigned thread = 0; thread < kWarpgroupSize; ++thread)
    for (unsigned i = 0; i < registers; ++i) {
      auto [row, col] = getWgmmaAccumulatorPosition(thread, i);
      // Without the accumulator the sum starts from -0, the identity of
      // IEEE addition: a sum of -0 products stays -0.
      ExactAccumulator acc(config.accumulate ? c[thread][i] : 0x80000000u);
      for (unsigned k = 0; k < K; ++k) {
        const Value factors[4] = {kUnitScale, matA[row * K + k], kUnitScale,
                                  matB[size_t{col} * K + k]};
        acc.addProduct(factors);
      }
      result[thread][i] = acc.round();
    }
  *d = std::move(result);
  return {};
}
