//===- SM100KernelEmulationTest.cpp - sm_100a/sm_103a kernels vs numerics -===//
//
// [CHK4] (docs/semantics.md) for the tcgen05 chips: the kernels
// buildCUDAKernelPipeline (recipe none) generates for sm_100a and sm_103a (the
// same tcgen05 GEMM, as NVVM ops on sm_100a and as llvm.call_intrinsic
// "llvm.nvvm.tcgen05.*" on sm_103a, [PTX1] in docs/nvvm.md) are executed by the
// emulator on that chip's instruction set (the kernel's warp roles as fibers
// that switch at mbarrier waits), whose tcgen05 / mbarrier / cp.async ops are
// the PTX models of lib/Emulation/PTX (written independently of the lowering),
// and compared with the numerics library on the same inputs:
//  - GEMM kernels ([GEMM1]) on tcgen05.mma.cta_group::1 M = N = 128:
//    kind::mxf4nvf4.block16 (NVFP4, UE4M3, 1-D and 16x16 blocks, global
//    scales), kind::mxf4nvf4.block32 (MXFP4, UE8M0), kind::mxf8f6f4 (MXFP8
//    E4M3 x E4M3, E4M3 x E5M2); whole tiles with K over more stages than
//    the 4-stage ring (the mbarrier phases wrap), ragged M, N and K (a
//    partial last stage), a batch, f32 results and the bf16 epilogue:
//      * bit for bit on data whose every partial sum is exact in f32 (the
//        value ranges of the sm_120a test: every E2M1 code, FP8 magnitudes
//        in [0.5, 4), E8M0 scales 2^-1..2^1, UE4M3 scales and global
//        scales that are powers of two), so any misplaced operand byte,
//        swizzle chunk, scale byte, SF id or TMEM cell changes the result;
//      * on full-range data within the reassociation bound of
//        compareWithGemm: the kernel rounds once per MMA (K = 64: 4 NVFP4
//        or 2 MXFP4 blocks; K = 32: 1 MXFP8 block, as the model's
//        exact-then-round-once assumption says) plus twice in the
//        epilogue, [GEMM1] once per block plus twice:
//          |kernel - library| <= 2 (nb + 2) 2^-24 (g Σ_b |term_b| + |acc|)
//                                + 2^-149,   nb = K / block size;
//  - negative checks: the lowered module with one instruction-descriptor
//    field (N), one shared-memory descriptor field (A's swizzle mode) or the
//    scale layout (the TMEM column of A's scale atoms) rewritten in the IR,
//    or without its tcgen05.commits, must not match (mismatches, or an
//    emulator error that is not a missing op);
//  - the quantize and Hadamard kernels, which the tcgen05 chips share with
//    sm_120a (the same cases, bit for bit);
//  - sr=hardware (cvt.rs.satfinite.e2m1x4.f32 fed the top byte of each
//    element's [SR1] word): the scales of [MX1], and codes equal to [SR1]'s
//    except exactly where the instruction's 8-bit decision and [SR1]'s
//    22-bit one part (lib/Emulation/PTX/CvtRsE2M1x4.cpp), [SR1] one code up
//    there.
//
//===----------------------------------------------------------------------===//

#include "KernelEmulationTestUtils.h"
#include "ReferenceValues.h"

#include "fp4train/Numerics/BlockQuant.h"
#include "fp4train/Numerics/Philox.h"
#include "fp4train/Pipelines/Pipelines.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"

#include <cmath>
#include <functional>
#include <tuple>

using namespace mlir;
using namespace mlir::fp4train;
using namespace ::fp4train::emulation_test;
namespace numerics = ::fp4train::numerics;

namespace {

const std::vector<std::string> kChips = {"sm_100a", "sm_103a"};

/// A fixture whose parameter is (chip, case).
template <typename Case>
class SM100KernelTest
    : public KernelEmulationFixture,
      public ::testing::WithParamInterface<std::tuple<std::string, Case>> {
protected:
  const std::string &getChip() const { return std::get<0>(this->GetParam()); }
  const Case &getCase() const { return std::get<1>(this->GetParam()); }

  /// Parses `source` and lowers it with buildCUDAKernelPipeline.
  OwningOpRef<ModuleOp> compile(const std::string &source) {
    CUDAPipelineOptions options;
    options.recipe = "none";
    options.chip = *parseGPUChip(getChip());
    options.gemmWorkgroups = gemmWorkgroups;
    options.gemmCtaPair = gemmCtaPair;
    return ::fp4train::emulation_test::compile(
        context, source,
        [&](OpPassManager &pm) { buildCUDAKernelPipeline(pm, options); });
  }
  std::vector<std::vector<uint8_t>>
  run(ModuleOp module, std::vector<emulation::EmulatorArgument> arguments,
      emulation::EmulatorStats *stats) {
    return KernelEmulationFixture::run(module, std::move(arguments), getChip(),
                                       stats);
  }
  CompileFn getCompile() {
    compileFn = [this](const std::string &source) { return compile(source); };
    return compileFn;
  }
  RunFn getRun() {
    runFn = [this](ModuleOp module,
                   std::vector<emulation::EmulatorArgument> arguments,
                   emulation::EmulatorStats *stats) {
      return run(module, std::move(arguments), stats);
    };
    return runFn;
  }

  /// The persistent GEMM's grid (0: the default, at least one workgroup
  /// per tile in these cases).
  unsigned gemmWorkgroups = 0;
  /// gemm-cta-pair: the GEMM on CTA pairs ([PAIR1] in docs/nvvm.md).
  bool gemmCtaPair = false;

private:
  std::function<OwningOpRef<ModuleOp>(const std::string &)> compileFn;
  std::function<std::vector<std::vector<uint8_t>>(
      ModuleOp, std::vector<emulation::EmulatorArgument>,
      emulation::EmulatorStats *)>
      runFn;
};

template <typename Case>
std::string getChipTestName(
    const ::testing::TestParamInfo<std::tuple<std::string, Case>> &info,
    std::string (*getName)(const Case &)) {
  return sanitizeTestName(std::get<0>(info.param)) + "_" +
         getName(std::get<1>(info.param));
}

//===----------------------------------------------------------------------===//
// Quantize and Hadamard kernels (shared with sm_120a)
//===----------------------------------------------------------------------===//

using SM100QuantizeKernelTest = SM100KernelTest<QuantizeCase>;

TEST_P(SM100QuantizeKernelTest, MatchesLibrary) {
  checkQuantizeKernel(getCase(), getCompile(), getRun());
}

INSTANTIATE_TEST_SUITE_P(
    SM100, SM100QuantizeKernelTest,
    ::testing::Combine(::testing::ValuesIn(kChips),
                       ::testing::ValuesIn(getQuantizeCases())),
    [](const auto &info) {
      return getChipTestName<QuantizeCase>(info, getQuantizeTestName);
    });

using SM100HadamardKernelTest = SM100KernelTest<HadamardCase>;

TEST_P(SM100HadamardKernelTest, MatchesLibrary) {
  checkHadamardKernel(getCase(), getCompile(), getRun());
}

INSTANTIATE_TEST_SUITE_P(
    SM100, SM100HadamardKernelTest,
    ::testing::Combine(::testing::ValuesIn(kChips),
                       ::testing::ValuesIn(getHadamardCases())),
    [](const auto &info) {
      return getChipTestName<HadamardCase>(info, getHadamardTestName);
    });

//===----------------------------------------------------------------------===//
// sr=hardware
//===----------------------------------------------------------------------===//

class SM100HardwareSRTest : public KernelEmulationFixture,
                            public ::testing::WithParamInterface<std::string> {
};

TEST_P(SM100HardwareSRTest, DiffersFromSR1OnlyWherePredicted) {
  const std::vector<int64_t> shape = {64, 512};
  const std::string tensor = "tensor<64x512xf32>";
  const std::string scaled =
      "!fp4train.scaled<64x512xf4E2M1FN, block = [1, 32], scale = f8E8M0FNU>";
  CUDAPipelineOptions options;
  options.recipe = "none";
  options.chip = *parseGPUChip(GetParam());
  options.sr = NVVMStochasticRounding::Hardware;
  OwningOpRef<ModuleOp> module = ::fp4train::emulation_test::compile(
      context,
      "func.func @main(%x: " + tensor + ", %seed: i64) -> " + scaled +
          " {\n  %q = fp4train.quantize %x rounding = stochastic "
          "seed(%seed) : " +
          tensor + " -> " + scaled + "\n  return %q : " + scaled + "\n}\n",
      [&](OpPassManager &pm) { buildCUDAKernelPipeline(pm, options); });
  ASSERT_TRUE(module);

  const int64_t count = product(shape);
  std::vector<float> data = makeQuantizeData(count, "f32", false, 7);
  const uint64_t seed = 0x0123456789ABCDEFull;
  emulation::EmulatorStats stats;
  auto results =
      emulation::emulate(*module, "main",
                         {emulation::EmulatorArgument::buffer(asBytes(data)),
                          emulation::EmulatorArgument::bits(seed)},
                         GetParam(), &stats);
  ASSERT_TRUE(static_cast<bool>(results))
      << llvm::toString(results.takeError());
  ASSERT_EQ(results->size(), 2u);
  // One cvt.rs per four elements, executed per warp.
  EXPECT_GT(stats.conversions, 0u);

  numerics::QuantConfig config;
  config.format = numerics::Format::MXFP4;
  config.blockSize = 32;
  config.rounding = numerics::Rounding::Stochastic;
  config.seed = seed;
  auto expected = numerics::quantize(data.data(), shape, config);
  ASSERT_TRUE(static_cast<bool>(expected)) << expected.error().message;
  EXPECT_EQ(compareCodes((*results)[1], expected->scales, "scale"), 0);

  const std::vector<uint8_t> codes = loadStoredCodes((*results)[0], *expected);
  ASSERT_EQ(codes.size(), expected->codes.size());
  int predicted = 0, unexplained = 0;
  for (int64_t i = 0; i < count; ++i) {
    const int scaleCode = expected->scales[i / 32];
    const float v = data[i] * std::ldexp(1.0f, 127 - scaleCode);
    const bool differs =
        cvtRsDiffersFromSR1(v, numerics::stochasticRoundingWord(seed, i));
    predicted += differs;
    const int want = expected->codes[i] - (differs ? 1 : 0);
    if (codes[i] != want && unexplained++ < 5)
      ADD_FAILURE() << "element " << i << " (" << v << " scaled): kernel "
                    << int(codes[i]) << ", [SR1] " << int(expected->codes[i])
                    << (differs ? " (predicted to differ)" : "");
  }
  EXPECT_EQ(unexplained, 0);
  // 32k draws: the window (below 2^-8 of them) is not empty.
  EXPECT_GT(predicted, 0);
}

INSTANTIATE_TEST_SUITE_P(SM100, SM100HardwareSRTest,
                         ::testing::ValuesIn(kChips),
                         [](const ::testing::TestParamInfo<std::string> &info) {
                           return sanitizeTestName(info.param);
                         });

//===----------------------------------------------------------------------===//
// GEMM kernels
//===----------------------------------------------------------------------===//

using SM100GemmKernelTest = SM100KernelTest<GemmCase>;

TEST_P(SM100GemmKernelTest, ExactDataBitForBit) {
  // sm_103a skips the full-range cases under ASan (below), so it keeps these.
  if (kUnderAddressSanitizer && getChip() != "sm_103a")
    GTEST_SKIP() << kFullRangeCoversExactUnderASan;
  EXPECT_EQ(checkGemmKernel(getCase(), GemmData::Exact, /*bitForBit=*/true,
                            getCompile(), getRun()),
            0);
}

TEST_P(SM100GemmKernelTest, FullRangeWithinReassociationBound) {
  // sm_103a's kernel is sm_100a's with the intrinsics called by name, which
  // the exact-data cases pin bit for bit; the bound is the same model's.
  if (kUnderAddressSanitizer && getChip() == "sm_103a")
    GTEST_SKIP() << "sm_100a runs the full-range cases under ASan";
  EXPECT_EQ(checkGemmKernel(getCase(), GemmData::FullRange,
                            /*bitForBit=*/false, getCompile(), getRun()),
            0);
}

std::vector<GemmCase> getTcgen05GemmCases() {
  // One workgroup per 128 x 128 tile; a stage is 256 E2M1 / 128 8-bit
  // elements of K, four MMAs.
  return {
      // NVFP4 (kind::mxf4nvf4.block16, UE4M3 4X) with global scales: one
      // tile over 5 stages (the 4-stage ring wraps); ragged M, N and K =
      // 320 (a 1/4 last stage); 1-D x 16x16 (the weight layout), tiled and
      // ragged; a batch of 2-D-blocked weights.
      {1, 128, 128, 1280, "nvfp4", "nvfp4"},
      {1, 130, 70, 320, "nvfp4", "nvfp4"},
      {1, 128, 128, 256, "nvfp4", "nvfp4-2d"},
      {1, 100, 80, 160, "nvfp4", "nvfp4-2d"},
      {2, 40, 32, 160, "nvfp4", "nvfp4-2d"},
      // K = 144 = 16 (mod 32): rows of 72 stored bytes, loaded 8 at a time
      // ([PK1], getGemmChunkBytes).
      {1, 100, 80, 144, "nvfp4", "nvfp4-2d"},
      // MXFP4 (kind::mxf4nvf4.block32, UE8M0 2X, SF ids 0 and 2).
      {1, 128, 128, 512, "mxfp4", "mxfp4"},
      {1, 130, 70, 320, "mxfp4", "mxfp4"},
      {2, 40, 24, 160, "mxfp4", "mxfp4"},
      // MXFP8 (kind::mxf8f6f4, UE8M0 1X, SF ids 0..3): 5 stages; ragged.
      {1, 128, 128, 640, "e4m3", "e4m3"},
      {1, 130, 70, 320, "e4m3", "e5m2"},
      {1, 100, 72, 96, "e4m3", "e4m3"},
      // The grouped tile order ([RAS1], bands of 8 row tiles): a 3 x 3 grid
      // (one band), and 9 x 3 tiles (a second band of one row), ragged.
      {1, 300, 260, 64, "e4m3", "e4m3"},
      {1, 1100, 260, 32, "e4m3", "e4m3"},
      // Expert batches ([ROLE7], test/Pipelines/Inputs/moe_experts.mlir):
      // 4 experts' Fprop, 2-D-blocked NVFP4 weights, and a Dgrad in MXFP8.
      {4, 32, 128, 64, "nvfp4", "nvfp4-2d"},
      {4, 32, 128, 64, "e5m2", "e4m3"},
      // bf16 epilogue: a whole tile, ragged odd N, NVFP4 and MXFP8.
      {1, 128, 128, 256, "mxfp4", "mxfp4", true},
      {1, 130, 41, 192, "mxfp4", "mxfp4", true},
      {1, 130, 80, 320, "nvfp4", "nvfp4-2d", true},
      {1, 100, 72, 96, "e4m3", "e5m2", true},
  };
}

INSTANTIATE_TEST_SUITE_P(
    SM100, SM100GemmKernelTest,
    ::testing::Combine(::testing::ValuesIn(kChips),
                       ::testing::ValuesIn(getTcgen05GemmCases())),
    [](const auto &info) {
      return getChipTestName<GemmCase>(info, getGemmTestName);
    });

//===----------------------------------------------------------------------===//
// The persistent tile loop: fewer workgroups than tiles
//===----------------------------------------------------------------------===//

/// A GEMM on `workgroups` workgroups (gemm-workgroups), fewer than its
/// tiles: each walks several tiles of the grouped order ([RAS1]), the
/// stage ring and its mbarrier phases run on across tiles, and the two TMEM
/// accumulators alternate (a workgroup with 3 or more tiles waits for the
/// epilogue to free one).
struct PersistentCase {
  unsigned workgroups;
  GemmCase gemm;
};

std::string getPersistentTestName(const PersistentCase &c) {
  return std::to_string(c.workgroups) + "wg_" + getGemmTestName(c.gemm);
}

void PrintTo(const PersistentCase &c, std::ostream *os) {
  *os << getPersistentTestName(c);
}

using SM100PersistentGemmKernelTest = SM100KernelTest<PersistentCase>;

TEST_P(SM100PersistentGemmKernelTest, ExactDataBitForBit) {
  gemmWorkgroups = getCase().workgroups;
  EXPECT_EQ(checkGemmKernel(getCase().gemm, GemmData::Exact,
                            /*bitForBit=*/true, getCompile(), getRun()),
            0);
}

std::vector<PersistentCase> getPersistentCases() {
  return {
      // NVFP4, 3 x 3 ragged tiles of 2 K steps on 2 workgroups (5 and 4
      // tiles: 10 steps through the 4-stage ring, each accumulator used
      // 2-3 times).
      {2, {1, 300, 260, 320, "nvfp4", "nvfp4"}},
      // MXFP4, 3 batch entries of 2 x 1 tiles on 4 workgroups: workgroup 0
      // takes (batch 0, tile 0) and (batch 2, tile 0).
      {4, {3, 130, 70, 160, "mxfp4", "mxfp4"}},
      // MXFP8 (cp.async two steps behind): 3 x 1 tiles of one K step on 2
      // workgroups, so workgroup 1 has a single step, fewer than the lag.
      {2, {1, 300, 100, 96, "e4m3", "e4m3"}},
      {3, {1, 200, 250, 384, "e4m3", "e5m2"}},
      // One workgroup over every tile of a 2-entry batch, bf16 epilogue.
      {1, {2, 130, 41, 192, "mxfp4", "mxfp4", true}},
      // 9 x 3 tiles in two bands on 5 workgroups.
      {5, {1, 1100, 260, 32, "e4m3", "e4m3"}},
  };
}

INSTANTIATE_TEST_SUITE_P(
    SM100, SM100PersistentGemmKernelTest,
    ::testing::Combine(::testing::ValuesIn(kChips),
                       ::testing::ValuesIn(getPersistentCases())),
    [](const auto &info) {
      return getChipTestName<PersistentCase>(info, getPersistentTestName);
    });

//===----------------------------------------------------------------------===//
// CTA pairs: 256 x 128 tiles, cta_group::2 MMAs
//===----------------------------------------------------------------------===//

/// gemm-cta-pair ([PAIR1]): clusters of two workgroups, each staging 128
/// rows of A and 64 of B^T, the even CTA issuing the pair's M = 256 MMAs.
/// Every GEMM case at the default grid (one pair per tile here), and the
/// persistent cases on pairs (`workgroups` rounded down to even).
using SM100PairGemmKernelTest = SM100KernelTest<PersistentCase>;

TEST_P(SM100PairGemmKernelTest, ExactDataBitForBit) {
  gemmWorkgroups = getCase().workgroups;
  gemmCtaPair = true;
  EXPECT_EQ(checkGemmKernel(getCase().gemm, GemmData::Exact,
                            /*bitForBit=*/true, getCompile(), getRun()),
            0);
}

std::vector<PersistentCase> getPairCases() {
  std::vector<PersistentCase> cases;
  for (const GemmCase &gemm : getTcgen05GemmCases())
    cases.push_back({0, gemm});
  for (const PersistentCase &c : getPersistentCases())
    if (c.workgroups >= 2)
      cases.push_back(c);
  // One pair over every tile: 2 x 3 pair tiles of 2 K steps.
  cases.push_back({2, {1, 400, 300, 320, "nvfp4", "nvfp4"}});
  return cases;
}

INSTANTIATE_TEST_SUITE_P(
    SM100, SM100PairGemmKernelTest,
    ::testing::Combine(::testing::ValuesIn(kChips),
                       ::testing::ValuesIn(getPairCases())),
    [](const auto &info) {
      return getChipTestName<PersistentCase>(info, getPersistentTestName);
    });

//===----------------------------------------------------------------------===//
// Negative checks: a broken field in the lowered module is noticed
//===----------------------------------------------------------------------===//

/// A deliberate bug, applied to every tcgen05.mma of the lowered module
/// (the NVVM op on sm_100a, the llvm.call_intrinsic on sm_103a; both take
/// D, A desc, B desc, idesc, enable-input-d, scale A, scale B first).
enum class Break {
  /// Instruction descriptor bits 17-22 (N >> 3, PTX ISA 9.7.16.4.2 Table
  /// 44): N = 64 instead of 128, so columns 64-127 of each tile are lost.
  InstrDescriptorN,
  /// Shared-memory descriptor of A bits 61-63 (PTX ISA 9.7.16.4.1 Table 40):
  /// the 64-byte swizzle instead of the 128-byte one the tiles are stored in.
  SmemDescriptorSwizzle,
  /// The scale layout: A's scale factors read 4 TMEM columns further (the
  /// next scale atom), the wrong K blocks' or B's scales.
  ScaleColumn,
  /// No tcgen05.commit: the epilogue waits for a phase nobody completes (a
  /// deadlock between the fibers of the roles, not a hang).
  MissingCommit,
  /// The code tensor maps without swizzle: the TMA boxes land row-major,
  /// not in the 128-byte swizzled layout the MMA descriptors read.
  TensorMapSwizzle,
  /// The code tensor maps' box 64 rows instead of 128: half of each stage
  /// never arrives, and the transaction count the producer expects is never
  /// met (a deadlock).
  TensorMapBox,
  /// The tile order: workgroup 2i + 1 walks the tiles of workgroup 2i
  /// (block id x with bit 0 cleared), so half of the tiles are never
  /// computed.
  TileOrder,
  /// [PAIR1] The pair's commits without .multicast::cluster: only the even
  /// CTA's barriers hear them, and the odd CTA's producers and epilogue
  /// wait forever.
  PairCommitUnicast,
  /// [PAIR1] The odd CTA's TMA loads without .cta_group::2: they may then
  /// signal only an mbarrier of their own CTA, not the even CTA's.
  PairTmaGroup,
};

struct BreakCase {
  Break what;
  GemmCase gemm;
  /// The kernel on CTA pairs (gemm-cta-pair).
  bool pair = false;
};

std::string getBreakTestName(const BreakCase &c) {
  const char *what = c.what == Break::InstrDescriptorN ? "idesc_n"
                     : c.what == Break::SmemDescriptorSwizzle
                         ? "smem_desc_swizzle"
                     : c.what == Break::ScaleColumn       ? "scale_column"
                     : c.what == Break::MissingCommit     ? "missing_commit"
                     : c.what == Break::TensorMapSwizzle  ? "tensor_map_swizzle"
                     : c.what == Break::TensorMapBox      ? "tensor_map_box"
                     : c.what == Break::TileOrder         ? "tile_order"
                     : c.what == Break::PairCommitUnicast ? "commit_unicast"
                                                          : "tma_group";
  return std::string(c.pair ? "pair_" : "") + what + "_" +
         getGemmTestName(c.gemm);
}

void PrintTo(const BreakCase &c, std::ostream *os) {
  *os << getBreakTestName(c);
}

/// Applies `what` to every tensor map (host nvgpu.tma.create.descriptor) of
/// `module`; returns how many it changed.
int breakTensorMaps(ModuleOp module, Break what) {
  SmallVector<nvgpu::TmaCreateDescriptorOp> maps;
  module.walk([&](nvgpu::TmaCreateDescriptorOp op) { maps.push_back(op); });
  for (nvgpu::TmaCreateDescriptorOp map : maps) {
    if (what == Break::TensorMapBox) {
      // Box (batch, rows, K bytes): rows 128 -> 64.
      OpBuilder b(map);
      map.getBoxDimensionsMutable()[1].set(
          arith::ConstantIndexOp::create(b, map.getLoc(), 64));
      continue;
    }
    nvgpu::TensorMapDescriptorType type = map.getTensorMap().getType();
    map.getTensorMap().setType(nvgpu::TensorMapDescriptorType::get(
        type.getContext(), type.getTensor(),
        nvgpu::TensorMapSwizzleKind::SWIZZLE_NONE, type.getL2promo(),
        type.getOob(), type.getInterleave()));
  }
  return maps.size();
}

/// Clears bit 0 of every block id x read (gpu.block_id x) of `module`'s
/// kernels; returns how many it changed.
int breakTileOrder(ModuleOp module) {
  SmallVector<gpu::BlockIdOp> reads;
  module.walk([&](gpu::BlockIdOp op) {
    if (op.getDimension() == gpu::Dimension::x)
      reads.push_back(op);
  });
  for (gpu::BlockIdOp read : reads) {
    OpBuilder b(read->getBlock(), std::next(read->getIterator()));
    Value mask = arith::ConstantIndexOp::create(b, read.getLoc(), ~int64_t{1});
    auto cleared = arith::AndIOp::create(b, read.getLoc(), read, mask);
    read.getResult().replaceAllUsesExcept(cleared, cleared);
  }
  return reads.size();
}

/// Applies a pair break (PairCommitUnicast, PairTmaGroup) to `module`;
/// returns how many ops it changed.
int breakPair(ModuleOp module, Break what) {
  int changed = 0;
  SmallVector<Operation *> ops;
  module.walk([&](Operation *op) { ops.push_back(op); });
  for (Operation *op : ops) {
    if (what == Break::PairTmaGroup) {
      if (auto load =
              dyn_cast<NVVM::CpAsyncBulkTensorGlobalToSharedClusterOp>(op);
          load && load.getGroupAttr()) {
        load.removeGroupAttr();
        ++changed;
      }
      continue;
    }
    if (auto commit = dyn_cast<NVVM::Tcgen05CommitOp>(op);
        commit && commit.getMulticastMask()) {
      commit.getMulticastMaskMutable().clear();
      ++changed;
    } else if (auto call = dyn_cast<LLVM::CallIntrinsicOp>(op);
               call &&
               call.getIntrin() == "llvm.nvvm.tcgen05.commit.mc.shared.cg2") {
      OpBuilder b(call);
      LLVM::CallIntrinsicOp::create(
          b, call.getLoc(),
          b.getStringAttr("llvm.nvvm.tcgen05.commit.shared.cg2"),
          ValueRange{call.getArgs()[0]});
      call.erase();
      ++changed;
    }
  }
  return changed;
}

/// Applies `what` to every tcgen05.mma of `module` (or to what else the
/// break names); returns how many ops it changed.
int breakModule(ModuleOp module, Break what) {
  if (what == Break::TensorMapSwizzle || what == Break::TensorMapBox)
    return breakTensorMaps(module, what);
  if (what == Break::TileOrder)
    return breakTileOrder(module);
  if (what == Break::PairCommitUnicast || what == Break::PairTmaGroup)
    return breakPair(module, what);
  SmallVector<Operation *> mmas;
  if (what == Break::MissingCommit) {
    module.walk([&](Operation *op) {
      auto call = dyn_cast<LLVM::CallIntrinsicOp>(op);
      if (isa<NVVM::Tcgen05CommitOp>(op) ||
          (call && call.getIntrin().starts_with("llvm.nvvm.tcgen05.commit")))
        mmas.push_back(op);
    });
    for (Operation *commit : mmas)
      commit->erase();
    return mmas.size();
  }
  module.walk([&](Operation *op) {
    if (isa<NVVM::Tcgen05MMABlockScaleOp>(op))
      mmas.push_back(op);
    else if (auto call = dyn_cast<LLVM::CallIntrinsicOp>(op))
      if (call.getIntrin().starts_with("llvm.nvvm.tcgen05.mma."))
        mmas.push_back(op);
  });
  for (Operation *mma : mmas) {
    OpBuilder b(mma);
    Location loc = mma->getLoc();
    auto xorWith = [&](unsigned operand, uint64_t bits) {
      Value old = mma->getOperand(operand);
      Value mask = arith::ConstantOp::create(
          b, loc, b.getIntegerAttr(old.getType(), bits));
      mma->setOperand(operand, arith::XOrIOp::create(b, loc, old, mask));
    };
    switch (what) {
    case Break::InstrDescriptorN:
      xorWith(3, uint64_t{(128 >> 3) ^ (64 >> 3)} << 17);
      break;
    case Break::SmemDescriptorSwizzle:
      // Layout type (bits 61-63): SWIZZLE_128B (2) becomes SWIZZLE_64B (4).
      xorWith(1, uint64_t{0x2 ^ 0x4} << 61);
      break;
    case Break::MissingCommit:
    case Break::TensorMapSwizzle:
    case Break::TensorMapBox:
    case Break::TileOrder:
    case Break::PairCommitUnicast:
    case Break::PairTmaGroup:
      break;
    case Break::ScaleColumn: {
      Value ptr = mma->getOperand(5);
      Value address = LLVM::PtrToIntOp::create(b, loc, b.getI32Type(), ptr);
      Value moved = arith::AddIOp::create(
          b, loc, address,
          arith::ConstantOp::create(b, loc, b.getI32IntegerAttr(4)));
      mma->setOperand(5,
                      LLVM::IntToPtrOp::create(b, loc, ptr.getType(), moved));
      break;
    }
    }
  }
  return mmas.size();
}

using SM100BrokenGemmKernelTest = SM100KernelTest<BreakCase>;

TEST_P(SM100BrokenGemmKernelTest, IsNoticed) {
  const BreakCase &c = getCase();
  gemmCtaPair = c.pair;
  int broken = 0;
  std::string error;
  const int bad = checkGemmKernel(
      c.gemm, GemmData::Exact, /*bitForBit=*/true, getCompile(),
      [&](ModuleOp module, std::vector<emulation::EmulatorArgument> arguments,
          emulation::EmulatorStats *stats) {
        auto results =
            emulation::emulate(module, "main", arguments, getChip(), stats);
        if (results)
          return std::move(*results);
        error = llvm::toString(results.takeError());
        return std::vector<std::vector<uint8_t>>();
      },
      [&](ModuleOp module) { broken = breakModule(module, c.what); },
      /*report=*/false);
  ASSERT_GT(broken, 0) << "nothing to break in the lowered module";
  RecordProperty("outcome",
                 bad < 0 ? error : std::to_string(bad) + " mismatches");
  // Either the emulator rejects the broken kernel or its result differs.
  EXPECT_NE(bad, 0);
  if (bad < 0)
    EXPECT_FALSE(error.empty());
  // Not an op the emulator lacks: the models saw the broken field.
  EXPECT_EQ(error.find("not supported"), std::string::npos) << error;
  if (c.what == Break::MissingCommit || c.what == Break::TensorMapBox ||
      c.what == Break::PairCommitUnicast)
    EXPECT_NE(error.find("can complete it (a missing arrive"),
              std::string::npos)
        << error;
  if (c.what == Break::PairTmaGroup)
    EXPECT_NE(error.find("writes CTA 1 but signals an mbarrier of CTA 0: "
                         "without .cta_group::2 both lie in the same CTA"),
              std::string::npos)
        << error;
}

std::vector<BreakCase> getBreakCases() {
  std::vector<BreakCase> cases;
  // K = 320 and 512: every case loads its codes by TMA.
  for (Break what : {Break::InstrDescriptorN, Break::SmemDescriptorSwizzle,
                     Break::ScaleColumn, Break::MissingCommit,
                     Break::TensorMapSwizzle, Break::TensorMapBox})
    for (GemmCase gemm :
         std::vector<GemmCase>{{1, 130, 70, 320, "nvfp4", "nvfp4"},
                               {1, 128, 128, 512, "mxfp4", "mxfp4"},
                               {1, 130, 70, 320, "e4m3", "e5m2"}})
      cases.push_back({what, gemm});
  // Two tiles on two workgroups (one tile would have no order to break).
  for (GemmCase gemm :
       std::vector<GemmCase>{{1, 130, 70, 320, "nvfp4", "nvfp4"},
                             {1, 256, 128, 512, "mxfp4", "mxfp4"}})
    cases.push_back({Break::TileOrder, gemm});
  // [PAIR1] The pair kernel: its MMAs' fields, its TMA boxes and tile
  // order as above, and what only a pair has.
  for (Break what :
       {Break::InstrDescriptorN, Break::ScaleColumn, Break::MissingCommit,
        Break::TensorMapBox, Break::TileOrder, Break::PairCommitUnicast,
        Break::PairTmaGroup})
    cases.push_back({what, {1, 300, 260, 320, "nvfp4", "nvfp4"}, true});
  return cases;
}

INSTANTIATE_TEST_SUITE_P(
    SM100, SM100BrokenGemmKernelTest,
    ::testing::Combine(::testing::ValuesIn(kChips),
                       ::testing::ValuesIn(getBreakCases())),
    [](const auto &info) {
      return getChipTestName<BreakCase>(info, getBreakTestName);
    });

} // namespace
