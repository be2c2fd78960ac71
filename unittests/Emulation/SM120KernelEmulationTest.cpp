//===- SM120KernelEmulationTest.cpp - sm_120a kernels vs numerics ---------===//
//
// DESIGN.md §7.4 for NVIDIA: the kernels fp4train-to-nvvm generates for
// sm_120a are compiled by buildCUDAKernelPipeline (recipe none; the module
// gpu-to-nvvm would get next) and executed by the lockstep emulator on the
// sm_120a instruction set, whose nvvm.mma.block_scale and nvvm.convert.*
// ops are the PTX models of lib/Emulation/PTX; the results are compared
// with the numerics library on the same inputs:
//  - quantize kernels: codes, scales and the NVFP4 global decode scale bit
//    for bit: MXFP4 RNE (floor, rceil), MXFP8 E4M3 / E5M2 RNE, MXFP4 and
//    NVFP4 [SR1] with the library's seed, NVFP4 ([NV1], blocks of 16) with
//    amax_tensor computed by the reduction kernel or supplied; f32 and bf16
//    inputs; block counts that fill the 256-thread workgroups and ragged
//    ones; special values (zero block, subnormals, ties, ±Inf, NaN, blocks
//    floor scales clip);
//  - Hadamard kernels bit for bit against numerics::hadamardRotate;
//  - GEMM kernels ([GEMM1]) on mma.sync m16n8k64 (MXFP4, NVFP4 with 1-D
//    and 16x16 blocks and global scales) and m16n8k32 (MXFP8 E4M3 x E4M3,
//    E4M3 x E5M2): tile multiples (128x128 tiles, K steps of 128), ragged
//    M, N, K, a batch, f32 results and the bf16 epilogue (compared after
//    RNE to bf16):
//      * bit for bit on data whose every partial sum is exact in f32 (every
//        E2M1 code, FP8 magnitudes in [0.5, 4), E8M0 scales 2^-1..2^1,
//        UE4M3 scales and global scales that are powers of two), so any
//        misplaced fragment, scale byte or selector changes the result;
//      * on full-range data (every finite code, E8M0 scales 2^-20..2^20,
//        every finite nonzero UE4M3 scale, global scales that are not powers
//        of two) within the reassociation bound of compareWithGemm: the
//        kernel rounds once per mma (k64: 2 MX or 4 NVFP4 blocks; k32: 1
//        MXFP8 block) plus twice in the epilogue, [GEMM1] once per block
//        plus twice, so
//          |kernel - library| <= 2 (nb + 2) 2^-24 (g Σ_b |term_b| + |acc|)
//                                + 2^-149,   nb = K / block size.
//
//===----------------------------------------------------------------------===//

#include "KernelEmulationTestUtils.h"

#include "fp4train/Numerics/BlockQuant.h"
#include "fp4train/Pipelines/Pipelines.h"

using namespace mlir;
using namespace mlir::fp4train;
using namespace ::fp4train::emulation_test;
namespace numerics = ::fp4train::numerics;

namespace {

constexpr const char *kChip = "sm_120a";

/// Parses `source` and lowers it with buildCUDAKernelPipeline for sm_120a.
OwningOpRef<ModuleOp> compileForSM120(MLIRContext &context,
                                      const std::string &source) {
  CUDAPipelineOptions options;
  options.recipe = "none";
  options.chip = kChip;
  return compile(context, source, [&](OpPassManager &pm) {
    buildCUDAKernelPipeline(pm, options);
  });
}

class SM120KernelEmulationTest : public KernelEmulationFixture {
protected:
  OwningOpRef<ModuleOp> compile(const std::string &source) {
    return compileForSM120(context, source);
  }
  std::vector<std::vector<uint8_t>>
  run(ModuleOp module, std::vector<emulation::EmulatorArgument> arguments,
      emulation::EmulatorStats *stats = nullptr) {
    return KernelEmulationFixture::run(module, std::move(arguments), kChip,
                                       stats);
  }
};

//===----------------------------------------------------------------------===//
// Quantize kernels
//===----------------------------------------------------------------------===//

class SM120QuantizeKernelTest
    : public SM120KernelEmulationTest,
      public ::testing::WithParamInterface<QuantizeCase> {};

TEST_P(SM120QuantizeKernelTest, MatchesLibrary) {
  checkQuantizeKernel(
      GetParam(), [&](const std::string &source) { return compile(source); },
      [&](ModuleOp module, std::vector<emulation::EmulatorArgument> arguments,
          emulation::EmulatorStats *stats) {
        return run(module, std::move(arguments), stats);
      });
}

INSTANTIATE_TEST_SUITE_P(
    SM120, SM120QuantizeKernelTest, ::testing::ValuesIn(getQuantizeCases()),
    [](const ::testing::TestParamInfo<QuantizeCase> &info) {
      return getQuantizeTestName(info.param);
    });

//===----------------------------------------------------------------------===//
// Hadamard kernels
//===----------------------------------------------------------------------===//

class SM120HadamardKernelTest
    : public SM120KernelEmulationTest,
      public ::testing::WithParamInterface<HadamardCase> {};

TEST_P(SM120HadamardKernelTest, MatchesLibrary) {
  checkHadamardKernel(
      GetParam(), [&](const std::string &source) { return compile(source); },
      [&](ModuleOp module, std::vector<emulation::EmulatorArgument> arguments,
          emulation::EmulatorStats *stats) {
        return run(module, std::move(arguments), stats);
      });
}

INSTANTIATE_TEST_SUITE_P(
    SM120, SM120HadamardKernelTest, ::testing::ValuesIn(getHadamardCases()),
    [](const ::testing::TestParamInfo<HadamardCase> &info) {
      return getHadamardTestName(info.param);
    });

//===----------------------------------------------------------------------===//
// GEMM kernels
//===----------------------------------------------------------------------===//

class SM120GemmKernelTest : public SM120KernelEmulationTest,
                            public ::testing::WithParamInterface<GemmCase> {
protected:
  void check(bool exact) {
    EXPECT_EQ(checkGemmKernel(
                  GetParam(), exact,
                  [&](const std::string &source) { return compile(source); },
                  [&](ModuleOp module,
                      std::vector<emulation::EmulatorArgument> arguments,
                      emulation::EmulatorStats *stats) {
                    return run(module, std::move(arguments), stats);
                  }),
              0);
  }
};

TEST_P(SM120GemmKernelTest, ExactDataBitForBit) { check(/*exact=*/true); }
TEST_P(SM120GemmKernelTest, FullRangeWithinReassociationBound) {
  check(/*exact=*/false);
}

std::vector<GemmCase> gemmCases() {
  return {
      // MXFP4 (m16n8k64 kind::mxf4, 2X UE8M0): a 128x128 tile, two K steps;
      // ragged M, N and K (3 blocks: a partial K step); a batch.
      {1, 128, 128, 256, "mxfp4", "mxfp4"},
      {1, 100, 72, 96, "mxfp4", "mxfp4"},
      {2, 40, 24, 160, "mxfp4", "mxfp4"},
      // NVFP4 (kind::mxf4nvf4, 4X UE4M3) with global scales: 1-D x 1-D,
      // 1-D x 16x16 (the weight layout, scales [N/16, K/16]); ragged M, N
      // and K = 160 (10 blocks); a batch of 2-D-blocked weights.
      {1, 128, 128, 256, "nvfp4", "nvfp4"},
      {1, 100, 72, 160, "nvfp4", "nvfp4"},
      {1, 128, 128, 256, "nvfp4", "nvfp4-2d"},
      {1, 100, 80, 160, "nvfp4", "nvfp4-2d"},
      {2, 40, 32, 160, "nvfp4", "nvfp4-2d"},
      // MXFP8 (m16n8k32 kind::mxf8f6f4, 1X UE8M0).
      {1, 128, 128, 256, "e4m3", "e4m3"},
      {1, 100, 72, 96, "e4m3", "e5m2"},
      // bf16 epilogue: tile multiples, ragged M with even N (pair stores),
      // odd N (guarded single stores), NVFP4 and MXFP8.
      {1, 128, 128, 256, "mxfp4", "mxfp4", true},
      {1, 130, 41, 192, "mxfp4", "mxfp4", true},
      {1, 100, 80, 160, "nvfp4", "nvfp4-2d", true},
      {1, 100, 72, 96, "e4m3", "e5m2", true},
  };
}

INSTANTIATE_TEST_SUITE_P(
    SM120, SM120GemmKernelTest,
                         ::testing::ValuesIn(gemmCases()),
                         [](const ::testing::TestParamInfo<GemmCase> &info) {
                           return getGemmTestName(info.param);
                         });

} // namespace
