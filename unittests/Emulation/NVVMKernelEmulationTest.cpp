//===- NVVMKernelEmulationTest.cpp - sm_120a / sm_90a kernels vs numerics -===//
//
// [CHK4] (docs/semantics.md) for NVIDIA: the kernels fp4train-to-nvvm generates
// for sm_120a and sm_90a are compiled by buildCUDAKernelPipeline (recipe none;
// the module gpu-to-nvvm would get next) and executed by the lockstep emulator
// on the chip's instruction set, whose nvvm.mma.block_scale (sm_120a), FP8
// mma.sync and prmt (sm_90a) and nvvm.convert.* ops are the PTX models of
// lib/Emulation/PTX; the results are compared with the numerics library on the
// same inputs, every case on both chips:
//  - quantize kernels: codes, scales and the NVFP4 global decode scale bit
//    for bit: MXFP4 RNE (floor, rceil), MXFP8 E4M3 / E5M2 RNE, MXFP4 and
//    NVFP4 [SR1] with the library's seed, NVFP4 ([NV1], blocks of 16) with
//    amax_tensor computed by the reduction kernel or supplied; f32 and bf16
//    inputs; block counts that fill the 256-thread workgroups and ragged
//    ones; special values (zero block, subnormals, ties, ±Inf, NaN, blocks
//    floor scales clip);
//  - Hadamard kernels bit for bit against numerics::hadamardRotate;
//  - the transposed view of a 16x16-blocked tensor: codes and scale codes
//    transposed byte for byte by the tiled kernel (ragged tiles, a batch),
//    the global scale unchanged;
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
//                                + 2^-149,   nb = K / block size;
//  - sm_90a: MXFP4 and NVFP4 bit for bit on every data set, also with
//    scales over the whole finite range (terms that overflow, underflow or
//    are f32 subnormals: ExtremeScalesBitForBit), since the FP8 mma.sync's
//    block sums of widened E2M1 are exact and each term is rounded once
//    (MmaSyncFP8.cpp); MXFP8 (one MMA per block, whose 32 FP8 products the
//    model rounds once) within the same bound on full-range data.
//
//===----------------------------------------------------------------------===//

#include "KernelEmulationTestUtils.h"

#include "fp4train/Numerics/BlockQuant.h"
#include "fp4train/Numerics/Hadamard.h"
#include "fp4train/Numerics/Storage.h"
#include "fp4train/Pipelines/Pipelines.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

#include <cstring>
#include <random>
#include <tuple>

using namespace mlir;
using namespace mlir::fp4train;
using namespace ::fp4train::emulation_test;
namespace numerics = ::fp4train::numerics;

namespace {

/// The chips with an NVVM instruction set in the emulator.
const std::vector<std::string> kChips = {"sm_120a", "sm_90a"};
/// The GEMM kernels: sm_90a's MX GEMMs are wgmma's ([WG1]), so sm_89 runs
/// the FP8 mma.sync kernel's MX path.
const std::vector<std::string> kGemmChips = {"sm_120a", "sm_90a", "sm_89"};

/// The chips with FP8 tensor cores and no block scaling (MmaSyncFP8.cpp).
bool isSM90(const std::string &chip) {
  return chip == "sm_90a" || chip == "sm_89";
}

/// Parses `source` and lowers it with buildCUDAKernelPipeline for `chip`.
OwningOpRef<ModuleOp> compileForChip(MLIRContext &context,
                                     const std::string &chip,
                                     const std::string &source) {
  CUDAPipelineOptions options;
  options.recipe = "none";
  options.chip = *parseGPUChip(chip);
  return compile(context, source, [&](OpPassManager &pm) {
    buildCUDAKernelPipeline(pm, options);
  });
}

/// A test on one chip: the parameter is (chip, case).
template <typename Case>
class NVVMKernelEmulationTest
    : public KernelEmulationFixture,
      public ::testing::WithParamInterface<std::tuple<std::string, Case>> {
protected:
  const std::string &getChip() const { return std::get<0>(this->GetParam()); }
  const Case &getCase() const { return std::get<1>(this->GetParam()); }
  OwningOpRef<ModuleOp> compile(const std::string &source) {
    return compileForChip(context, getChip(), source);
  }
  std::vector<std::vector<uint8_t>>
  run(ModuleOp module, std::vector<emulation::EmulatorArgument> arguments,
      emulation::EmulatorStats *stats = nullptr) {
    return KernelEmulationFixture::run(module, std::move(arguments), getChip(),
                                       stats);
  }
  /// The compile and run callbacks of the shared kernel checks.
  auto compiler() {
    return [this](const std::string &source) { return compile(source); };
  }
  auto runner() {
    return [this](ModuleOp module,
                  std::vector<emulation::EmulatorArgument> arguments,
                  emulation::EmulatorStats *stats) {
      return run(module, std::move(arguments), stats);
    };
  }
};

/// gtest parameter names: chip_case.
template <typename Case>
std::string getParamName(
    const ::testing::TestParamInfo<std::tuple<std::string, Case>> &info,
    std::string (*name)(const Case &)) {
  return sanitizeTestName(std::get<0>(info.param)) + "_" +
         name(std::get<1>(info.param));
}

//===----------------------------------------------------------------------===//
// Quantize kernels
//===----------------------------------------------------------------------===//

using NVVMQuantizeKernelTest = NVVMKernelEmulationTest<QuantizeCase>;

TEST_P(NVVMQuantizeKernelTest, MatchesLibrary) {
  checkQuantizeKernel(getCase(), this->compiler(), this->runner(),
                      /*fp4Conversions=*/!isSM90(getChip()));
}

INSTANTIATE_TEST_SUITE_P(
    NVVM, NVVMQuantizeKernelTest,
    ::testing::Combine(::testing::ValuesIn(kChips),
                       ::testing::ValuesIn(getQuantizeCases())),
    [](const auto &info) { return getParamName(info, getQuantizeTestName); });

//===----------------------------------------------------------------------===//
// Hadamard kernels
//===----------------------------------------------------------------------===//

using NVVMHadamardKernelTest = NVVMKernelEmulationTest<HadamardCase>;

TEST_P(NVVMHadamardKernelTest, MatchesLibrary) {
  checkHadamardKernel(getCase(), this->compiler(), this->runner());
}

INSTANTIATE_TEST_SUITE_P(
    NVVM, NVVMHadamardKernelTest,
    ::testing::Combine(::testing::ValuesIn(kChips),
                       ::testing::ValuesIn(getHadamardCases())),
    [](const auto &info) { return getParamName(info, getHadamardTestName); });

//===----------------------------------------------------------------------===//
// Fused Hadamard + quantize kernels
//===----------------------------------------------------------------------===//

using NVVMHadamardQuantizeKernelTest =
    NVVMKernelEmulationTest<HadamardQuantizeCase>;

TEST_P(NVVMHadamardQuantizeKernelTest, MatchesLibrary) {
  checkHadamardQuantizeKernel(getCase(), this->compiler(), this->runner());
}

std::vector<HadamardQuantizeCase> hadamardQuantizeCases() {
  using numerics::Format;
  return {
      // The nvfp4 recipe's Wgrad operands (tokens last after the transpose):
      // RHT-16 with random signs, SR on dY, amax of the rotated tensor
      // computed (rotate+amax kernel, then rotate+quantize); 40 x 240 leaves
      // the last workgroup ragged.
      {{32, 64}, 16, "random", Format::NVFP4, "f32", true},
      {{40, 240}, 16, "random", Format::NVFP4, "f32", false},
      // NVFP4 with rotations larger than its blocks, supplied amax, a batch
      // and bf16 through arith.extf.
      {{40, 96}, 32, "fixed", Format::NVFP4},
      {{3, 10, 256}, 256, "fixed", Format::NVFP4, "bf16", false, false},
      // The mxfp4-hadamard recipe's: 32-point fixed rotation, MXFP4 RNE;
      // 40 x 256 is 2.5 workgroups.
      {{40, 256}, 32, "fixed", Format::MXFP4},
      {{64, 128}, 32, "random", Format::MXFP4, "f32", true},
      // n = 16 < B = 32, n = 128 and 256 (inverse), MXFP8 E4M3, bf16.
      {{40, 64}, 16, "none", Format::MXFP4},
      {{24, 512}, 128, "fixed", Format::MXFP8E4M3},
      {{12, 256}, 256, "random", Format::MXFP4, "f32", true, true, false, true},
      {{40, 64}, 64, "fixed", Format::MXFP4, "bf16"},
      // The rotation also returned: its Hadamard kernel stays for that use.
      {{40, 128}, 32, "fixed", Format::MXFP4, "f32", false, true, true},
  };
}

INSTANTIATE_TEST_SUITE_P(
    NVVM, NVVMHadamardQuantizeKernelTest,
    ::testing::Combine(::testing::ValuesIn(kChips),
                       ::testing::ValuesIn(hadamardQuantizeCases())),
    [](const auto &info) {
      return getParamName(info, getHadamardQuantizeTestName);
    });

//===----------------------------------------------------------------------===//
// Transpose kernels
//===----------------------------------------------------------------------===//

/// The shape [..., rows, columns] of a 16x16-blocked NVFP4 tensor.
using TransposeCase = std::vector<int64_t>;

std::string getTransposeTestName(const TransposeCase &shape) {
  return join(shape, "x");
}

using NVVMTransposeKernelTest = NVVMKernelEmulationTest<TransposeCase>;

/// `bytes` ([outer, rows, columns] row-major) with the last two dimensions
/// swapped.
std::vector<uint8_t> transposeLastTwo(const std::vector<uint8_t> &bytes,
                                      int64_t rows, int64_t columns) {
  std::vector<uint8_t> result(bytes.size());
  const int64_t outer = bytes.size() / (rows * columns);
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t c = 0; c < columns; ++c)
        result[(o * columns + c) * rows + r] =
            bytes[(o * rows + r) * columns + c];
  return result;
}

TEST_P(NVVMTransposeKernelTest, MatchesByteTranspose) {
  std::vector<int64_t> shape = getCase();
  const int64_t rank = shape.size();
  const int64_t rows = shape[rank - 2], columns = shape[rank - 1];
  std::vector<int64_t> transposed = shape;
  std::swap(transposed[rank - 2], transposed[rank - 1]);
  const std::string block =
      "[" + std::string(rank == 3 ? "1, " : "") + "16, 16]";
  auto typeOf = [&](const std::vector<int64_t> &dims) {
    return "!fp4train.scaled<" + join(dims, "x") +
           "xf4E2M1FN, block = " + block + ", scale = f8E4M3FN, global>";
  };
  OwningOpRef<ModuleOp> module = compile(
      "func.func @main(%w: " + typeOf(shape) + ") -> " + typeOf(transposed) +
      " {\n  %t = fp4train.transpose %w : " + typeOf(shape) + " -> " +
      typeOf(transposed) + "\n  return %t : " + typeOf(transposed) + "\n}\n");
  ASSERT_TRUE(module);

  std::mt19937 rng(11);
  std::uniform_int_distribution<int> code(0, 15), byte(0, 255);
  std::vector<uint8_t> codes(product(shape)), scales(codes.size() / 256);
  for (uint8_t &c : codes)
    c = static_cast<uint8_t>(code(rng));
  for (uint8_t &s : scales)
    s = static_cast<uint8_t>(byte(rng));
  const float globalDecodeScale = 0.375f;
  emulation::EmulatorStats stats;
  auto results = run(*module,
                     {emulation::EmulatorArgument::buffer(numerics::packCodes(
                          numerics::ElementType::E2M1, codes, shape)),
                      emulation::EmulatorArgument::buffer(scales),
                      emulation::EmulatorArgument::bits(
                          numerics::floatToBits(globalDecodeScale))},
                     &stats);
  ASSERT_EQ(results.size(), 3u);
  // One kernel for the codes, one for the scales; nothing on the host.
  EXPECT_EQ(stats.launches, 2u);
  EXPECT_EQ(
      compareCodes(
          loadStoredCodes(results[0], numerics::ElementType::E2M1, transposed),
          transposeLastTwo(codes, rows, columns), "code"),
      0);
  EXPECT_EQ(compareCodes(results[1],
                         transposeLastTwo(scales, rows / 16, columns / 16),
                         "scale"),
            0);
  ASSERT_EQ(results[2].size(), 4u);
  uint32_t bits;
  std::memcpy(&bits, results[2].data(), 4);
  EXPECT_EQ(bits, numerics::floatToBits(globalDecodeScale));
}

INSTANTIATE_TEST_SUITE_P(
    NVVM, NVVMTransposeKernelTest,
    ::testing::Combine(::testing::ValuesIn(kChips),
                       // Whole 32 x 32 tiles; ragged rows and columns (48 x 80:
                       // partial tiles on both sides) with a batch; a single
                       // block, whose scale tensor is one byte.
                       ::testing::Values(TransposeCase{64, 96},
                                         TransposeCase{2, 48, 80},
                                         TransposeCase{16, 16})),
    [](const auto &info) { return getParamName(info, getTransposeTestName); });

//===----------------------------------------------------------------------===//
// GEMM kernels
//===----------------------------------------------------------------------===//

/// Whether the chip's kernel equals [GEMM1] bit for bit on any data: sm_90a
/// with E2M1 operands (exact block sums, one rounding per term).
bool isBitExactOnAnyData(const std::string &chip, const GemmCase &c) {
  return isSM90(chip) && c.formatA.find("fp4") != std::string::npos &&
         c.formatB.find("fp4") != std::string::npos;
}

class NVVMGemmKernelTest : public NVVMKernelEmulationTest<GemmCase> {
protected:
  void check(GemmData data);
  void check(bool exact) {
    check(exact ? GemmData::Exact : GemmData::FullRange);
  }
};

void NVVMGemmKernelTest::check(GemmData data) {
  const GemmCase &c = getCase();
  const bool mixed = (c.formatA.find("fp4") == std::string::npos) !=
                     (c.formatB.find("fp4") == std::string::npos);
  if (mixed && !isSM90(getChip()))
    GTEST_SKIP() << getChip() << " rejects FP4 x FP8 operands";
  const bool bitForBit =
      data == GemmData::Exact || isBitExactOnAnyData(getChip(), c);
  EXPECT_EQ(checkGemmKernel(
                c, data, bitForBit,
                [&](const std::string &source) { return compile(source); },
                [&](ModuleOp module,
                    std::vector<emulation::EmulatorArgument> arguments,
                    emulation::EmulatorStats *stats) {
                  return run(module, std::move(arguments), stats);
                }),
            0);
}

TEST_P(NVVMGemmKernelTest, ExactDataBitForBit) {
  if (kUnderAddressSanitizer)
    GTEST_SKIP() << kFullRangeCoversExactUnderASan;
  check(/*exact=*/true);
}
TEST_P(NVVMGemmKernelTest, FullRangeWithinReassociationBound) {
  check(/*exact=*/false);
}
// sm_90a's FP4 kernels: bit for bit also where terms overflow, underflow or
// are subnormal (the exactness argument of MmaSyncFP8.cpp).
TEST_P(NVVMGemmKernelTest, ExtremeScalesBitForBit) {
  if (!isBitExactOnAnyData(getChip(), getCase()))
    GTEST_SKIP() << "the block sums of this chip and format are not exact";
  check(GemmData::ExtremeScales);
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
      // K = 144 = 16 (mod 32): rows of 72 stored bytes, loaded 8 at a time
      // ([PK1], getGemmChunkBytes).
      {1, 100, 80, 144, "nvfp4", "nvfp4-2d"},
      // Two K steps per loop iteration (buffer 0, buffer 1): 5 steps (two
      // iterations) and 4 steps (one iteration and a peeled odd step).
      {1, 40, 24, 640, "mxfp4", "mxfp4"},
      {1, 72, 48, 480, "nvfp4", "nvfp4-2d"},
      // The grouped tile order ([RAS1], bands of 8 row tiles): 9 x 3 tiles
      // (a second band of one row), ragged.
      {1, 1100, 260, 64, "mxfp4", "mxfp4"},
      // MXFP8 (m16n8k32 kind::mxf8f6f4, 1X UE8M0).
      {1, 128, 128, 256, "e4m3", "e4m3"},
      {1, 100, 72, 96, "e4m3", "e5m2"},
      // MXFP4 x MXFP8 (sm_90a only: the E2M1 side widened, the FP8 side in
      // the same permuted K order).
      {1, 100, 72, 96, "mxfp4", "e4m3"},
      {1, 64, 40, 128, "e5m2", "mxfp4"},
      // Expert batches ([ROLE7], test/Pipelines/Inputs/moe_experts.mlir):
      // 4 experts' Fprop, 2-D-blocked NVFP4 weights, and a Dgrad in MXFP8.
      {4, 32, 128, 64, "nvfp4", "nvfp4-2d"},
      {4, 32, 128, 64, "e5m2", "e4m3"},
      // bf16 epilogue: tile multiples, ragged M with even N (pair stores),
      // odd N (guarded single stores), NVFP4 and MXFP8.
      {1, 128, 128, 256, "mxfp4", "mxfp4", true},
      {1, 130, 41, 192, "mxfp4", "mxfp4", true},
      {1, 100, 80, 160, "nvfp4", "nvfp4-2d", true},
      {1, 100, 72, 96, "e4m3", "e5m2", true},
  };
}

INSTANTIATE_TEST_SUITE_P(NVVM, NVVMGemmKernelTest,
                         ::testing::Combine(::testing::ValuesIn(kGemmChips),
                                            ::testing::ValuesIn(gemmCases())),
                         [](const auto &info) {
                           return getParamName(info, getGemmTestName);
                         });

/// sm_90a's scaling paths (MmaSyncFP8.cpp) on MXFP4 and NVFP4 cases.
class SM90GemmScalingTest : public NVVMGemmKernelTest {};

// sm_90a's E8M0 scaling: each warp fuses a K step's scaling into one fma
// per accumulator when all its scale codes lie in a window, else takes the
// exact three-product path (MmaSyncFP8.cpp). Both in one kernel, and the
// window's edges, bit for bit.
TEST_P(SM90GemmScalingTest, FusedAndExactScalingBitForBit) {
  check(GemmData::MixedScales);
  check(GemmData::WindowEdgeScales);
}

// The vote is what keeps extreme scales exact: with the fused loop forced
// on every warp, scales outside the window give other bits.
TEST_P(SM90GemmScalingTest, FusedScalingOutsideWindowIsNoticed) {
  const GemmCase &c = getCase();
  if (c.formatA != "mxfp4")
    GTEST_SKIP() << "NVFP4's UE4M3 scaling is always fused";
  // sm_90a's folded blocks ([WG2]) vote over the A rows alone: their A rows
  // outside the window (makeFoldScales) need the exact path too.
  for (GemmData data : {GemmData::ExtremeScales, GemmData::FoldScales}) {
    if (data == GemmData::FoldScales && getChip() != "sm_90a")
      continue;
    int votes = 0;
    const int bad = checkGemmKernel(
        c, data, /*bitForBit=*/true, compiler(), runner(),
        [&](ModuleOp module) {
          module.walk([&](NVVM::VoteSyncOp vote) {
            OpBuilder b(vote);
            vote.getRes().replaceAllUsesWith(arith::ConstantOp::create(
                b, vote.getLoc(), b.getBoolAttr(true)));
            vote.erase();
            ++votes;
          });
        },
        /*report=*/false);
    ASSERT_GT(votes, 0) << "no vote.sync in the lowered module";
    EXPECT_GT(bad, 0) << (data == GemmData::FoldScales ? "fold scales"
                                                       : "extreme scales");
  }
}

// [WG2] sm_90a's MXFP4 GEMM folds B^T's block scales into its staged codes
// where a tile's codes of a block lie within 8 of their largest: blocks
// folded at every distance, unfolded blocks, zero rows, and A rows outside
// the window (the folded block's exact path) in one kernel, bit for bit.
// sm_89 (mma.sync, no fold) runs the same data through its own paths.
TEST_P(SM90GemmScalingTest, FoldedScalingBitForBit) {
  if (getCase().formatA != "mxfp4")
    GTEST_SKIP() << "the fold is for E8M0 scales";
  check(GemmData::FoldScales);
}

// The fold's tables are what stage a folded block: with the entries of
// distances 6..8 (E4M3 subnormals) replaced by those of distance 0, the
// folded blocks give other bits.
TEST_P(SM90GemmScalingTest, WrongFoldTableIsNoticed) {
  if (getCase().formatA != "mxfp4" || getChip() != "sm_90a")
    GTEST_SKIP() << "only sm_90a's wgmma GEMM folds E8M0 scales";
  int tables = 0;
  const int bad = checkGemmKernel(
      getCase(), GemmData::FoldScales, /*bitForBit=*/true, compiler(), runner(),
      [&](ModuleOp module) {
        module.walk([&](arith::ConstantOp constant) {
          auto type = dyn_cast<VectorType>(constant.getType());
          // Nine distances of two words.
          if (!type || type.getNumElements() != 18 ||
              !type.getElementType().isInteger(32))
            return;
          auto words =
              llvm::to_vector(cast<DenseElementsAttr>(constant.getValue())
                                  .getValues<int32_t>());
          for (int d = 6; d <= 8; ++d)
            std::copy_n(words.begin(), 2, words.begin() + 2 * d);
          constant.setValueAttr(
              DenseElementsAttr::get(type, ArrayRef<int32_t>(words)));
          ++tables;
        });
      },
      /*report=*/false);
  // [WG4] The B^T staging kernel's (and the host's unused copy from before
  // the outlining).
  ASSERT_GT(tables, 0) << "no fold table in the lowered module";
  EXPECT_GT(bad, 0);
}

// [WG4] The GEMM reads the fold references of its own column tile: with
// every workgroup reading tile 0's, the other tiles' folded blocks take
// another reference and give other bits.
TEST_P(SM90GemmScalingTest, ReferencesOfAnotherTileAreNoticed) {
  const GemmCase &c = getCase();
  if (c.formatA != "mxfp4" || getChip() != "sm_90a" || c.n <= 128)
    GTEST_SKIP() << "needs sm_90a's MXFP4 fold and several column tiles";
  int loads = 0;
  const int bad = checkGemmKernel(
      c, GemmData::FoldScales, /*bitForBit=*/true, compiler(), runner(),
      [&](ModuleOp module) {
        // The references' buffer: batch x column tiles x 4 * K steps.
        const int64_t tiles = (c.n + 127) / 128, steps = (c.k + 127) / 128;
        module.walk([&](vector::LoadOp load) {
          MemRefType type = load.getMemRefType();
          if (type.getRank() != 3 || type.getDimSize(1) != tiles ||
              type.getDimSize(2) != 4 * steps ||
              !load->getParentOfType<gpu::GPUFuncOp>())
            return;
          OpBuilder b(load);
          load.getIndicesMutable()[1].assign(
              arith::ConstantIndexOp::create(b, load.getLoc(), 0));
          ++loads;
        });
      },
      /*report=*/false);
  ASSERT_GT(loads, 0) << "no load of the fold references in the GEMM";
  EXPECT_GT(bad, 0);
}

INSTANTIATE_TEST_SUITE_P(
    NVVM, SM90GemmScalingTest,
    ::testing::Combine(
        ::testing::Values("sm_90a", "sm_89"),
        ::testing::Values(GemmCase{1, 128, 128, 256, "mxfp4", "mxfp4"},
                          GemmCase{1, 200, 300, 288, "mxfp4", "mxfp4"},
                          GemmCase{1, 100, 72, 96, "mxfp4", "mxfp4"},
                          GemmCase{2, 40, 24, 160, "mxfp4", "mxfp4"},
                          GemmCase{1, 130, 41, 192, "mxfp4", "mxfp4", true},
                          GemmCase{1, 100, 72, 160, "nvfp4", "nvfp4"},
                          GemmCase{1, 100, 80, 160, "nvfp4", "nvfp4-2d"})),
    [](const auto &info) { return getParamName(info, getGemmTestName); });

/// [WG1] Deliberate bugs in sm_90a's wgmma kernel, applied to the lowered
/// module: each must give other bits or an emulator error.
enum class WgmmaBreak {
  /// A's descriptor swizzle (bits 62-63) 64-byte instead of 128-byte.
  DescriptorSwizzle,
  /// No fence.proxy.async after the staging stores: the wgmma reads shared
  /// memory through the asynchronous proxy without the order.
  StagingFence,
  /// No wgmma.wait_group: the scaling reads D while the MMA is in flight.
  Wait,
  /// [WG5] The tiles' tensor maps in the 64-byte swizzle.
  TileMapSwizzle,
  /// [WG5] The copy barrier expecting half of a stage's bytes.
  TileBytes,
  /// [WG5] B^T's copies through A's tensor map.
  TileMap,
};

/// True for the breaks of [WG5]'s tile copies, which only the GEMMs whose
/// operands are stored in their staged 8-bit types have (MXFP8, and MXFP4 x
/// MXFP4 written as E4M3 first, [WG4]); those have no staging stores of
/// codes for the fence to order.
static bool isTileCopyBreak(WgmmaBreak what) {
  return what == WgmmaBreak::TileMapSwizzle || what == WgmmaBreak::TileBytes ||
         what == WgmmaBreak::TileMap;
}

class SM90WgmmaBrokenTest
    : public KernelEmulationFixture,
      public ::testing::WithParamInterface<std::tuple<WgmmaBreak, GemmCase>> {
protected:
  /// Applies a [WG5] break to `module`; returns the ops it changed.
  static int breakTileCopies(ModuleOp module, WgmmaBreak what) {
    int changed = 0;
    if (what == WgmmaBreak::TileMapSwizzle)
      module.walk([&](nvgpu::TmaCreateDescriptorOp create) {
        auto type = create.getTensorMap().getType();
        create.getTensorMap().setType(nvgpu::TensorMapDescriptorType::get(
            type.getContext(), type.getTensor(),
            nvgpu::TensorMapSwizzleKind::SWIZZLE_64B, type.getL2promo(),
            type.getOob(), type.getInterleave()));
        ++changed;
      });
    if (what == WgmmaBreak::TileBytes)
      module.walk([&](NVVM::MBarrierExpectTxOp expect) {
        OpBuilder b(expect);
        expect->setOperand(1, arith::ConstantIntOp::create(
                                  b, expect.getLoc(), b.getI32Type(), 16384));
        ++changed;
      });
    if (what == WgmmaBreak::TileMap)
      module.walk([&](NVVM::CpAsyncBulkTensorGlobalToSharedClusterOp copy) {
        // The second copy of each group (B^T's) takes the first's map.
        NVVM::CpAsyncBulkTensorGlobalToSharedClusterOp first;
        for (Operation *op = copy->getPrevNode(); op && !first;
             op = op->getPrevNode())
          first = dyn_cast<NVVM::CpAsyncBulkTensorGlobalToSharedClusterOp>(op);
        if (!first)
          return;
        copy.getTmaDescriptorMutable().assign(first.getTmaDescriptor());
        ++changed;
      });
    return changed;
  }
};

TEST_P(SM90WgmmaBrokenTest, IsNoticed) {
  // Named copies, not a structured binding: the lambdas below capture them.
  const WgmmaBreak what = std::get<0>(GetParam());
  const GemmCase c = std::get<1>(GetParam());
  auto fp8 = [](const std::string &f) { return f == "e4m3" || f == "e5m2"; };
  const bool copied = (c.formatA == "mxfp4" && c.formatB == "mxfp4") ||
                      (fp8(c.formatA) && fp8(c.formatB));
  if (isTileCopyBreak(what) && !copied)
    GTEST_SKIP() << "this GEMM's threads store its tiles";
  if (what == WgmmaBreak::StagingFence && copied)
    GTEST_SKIP() << "[WG5] this GEMM's code tiles come by TMA: no staging "
                    "stores of codes for the fence to order";
  int broken = 0;
  std::string error;
  const int bad = checkGemmKernel(
      c, GemmData::Exact, /*bitForBit=*/false,
      [&](const std::string &source) {
        return compileForChip(context, "sm_90a", source);
      },
      [&](ModuleOp module, std::vector<emulation::EmulatorArgument> arguments,
          emulation::EmulatorStats *stats) {
        auto results =
            emulation::emulate(module, "main", arguments, "sm_90a", stats);
        if (results)
          return std::move(*results);
        error = llvm::toString(results.takeError());
        return std::vector<std::vector<uint8_t>>();
      },
      [&](ModuleOp module) {
        if (isTileCopyBreak(what)) {
          broken = breakTileCopies(module, what);
          return;
        }
        SmallVector<Operation *> ops;
        module.walk([&](Operation *op) {
          if ((what == WgmmaBreak::DescriptorSwizzle &&
               isa<NVVM::WgmmaMmaAsyncOp>(op)) ||
              (what == WgmmaBreak::StagingFence &&
               isa<NVVM::FenceProxyOp>(op)) ||
              (what == WgmmaBreak::Wait && isa<NVVM::WgmmaWaitGroupSyncOp>(op)))
            ops.push_back(op);
        });
        broken = ops.size();
        for (Operation *op : ops) {
          if (what != WgmmaBreak::DescriptorSwizzle) {
            op->erase();
            continue;
          }
          OpBuilder b(op);
          Value desc = op->getOperand(1);
          Value mask = arith::ConstantOp::create(
              b, op->getLoc(), b.getI64IntegerAttr(int64_t{3} << 62));
          op->setOperand(1, arith::XOrIOp::create(b, op->getLoc(), desc, mask));
        }
      },
      /*report=*/false);
  ASSERT_GT(broken, 0) << "nothing to break in the lowered module";
  EXPECT_NE(bad, 0);
  if (bad < 0)
    EXPECT_EQ(error.find("not supported"), std::string::npos) << error;
}

INSTANTIATE_TEST_SUITE_P(
    NVVM, SM90WgmmaBrokenTest,
    ::testing::Combine(
        ::testing::Values(WgmmaBreak::DescriptorSwizzle,
                          WgmmaBreak::StagingFence, WgmmaBreak::Wait,
                          WgmmaBreak::TileMapSwizzle, WgmmaBreak::TileBytes,
                          WgmmaBreak::TileMap),
        // MXFP4 and MXFP8 on e4m3/e5m2 wgmma ([WG1]); NVFP4 on f16 wgmma
        // ([WG3]).
        ::testing::Values(GemmCase{1, 128, 128, 256, "mxfp4", "mxfp4"},
                          GemmCase{1, 100, 72, 96, "e4m3", "e5m2"},
                          GemmCase{1, 128, 128, 256, "nvfp4", "nvfp4"})),
    [](const auto &info) {
      const WgmmaBreak what = std::get<0>(info.param);
      const char *name =
          what == WgmmaBreak::DescriptorSwizzle ? "descriptor_swizzle"
          : what == WgmmaBreak::StagingFence    ? "staging_fence"
          : what == WgmmaBreak::Wait            ? "wait"
          : what == WgmmaBreak::TileMapSwizzle  ? "tile_map_swizzle"
          : what == WgmmaBreak::TileBytes       ? "tile_bytes"
                                                : "tile_map";
      return std::string(name) + "_" + getGemmTestName(std::get<1>(info.param));
    });

} // namespace
