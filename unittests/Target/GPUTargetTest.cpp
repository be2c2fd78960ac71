//===- GPUTargetTest.cpp - The table of chips -----------------------------===//
//
// The invariants the code relies on when it reads a row (docs/targets.md):
// rows in the order of GPUChip, names unique and parsed back, vendor fields
// consistent, and an emulator instruction set for every row.
//
//===----------------------------------------------------------------------===//

#include "fp4train/Target/GPUTarget.h"

#include "fp4train/Emulation/GPUEmulator.h"

#include "llvm/ADT/StringSet.h"

#include <gtest/gtest.h>

using namespace mlir::fp4train;

namespace {

TEST(GPUTargetTest, RowsAreInTheOrderOfTheEnum) {
  llvm::ArrayRef<GPUTarget> targets = getGPUTargets();
  ASSERT_EQ(targets.size(), static_cast<size_t>(GPUChip::SM121a) + 1);
  for (auto [index, target] : llvm::enumerate(targets)) {
    EXPECT_EQ(static_cast<size_t>(target.chip), index) << target.name.str();
    EXPECT_EQ(&getGPUTarget(target.chip), &target) << target.name.str();
  }
}

TEST(GPUTargetTest, NamesAreUniqueAndParseBack) {
  llvm::StringSet<> names;
  for (const GPUTarget &target : getGPUTargets()) {
    EXPECT_TRUE(names.insert(target.name).second) << target.name.str();
    EXPECT_EQ(parseGPUChip(target.name), target.chip) << target.name.str();
    EXPECT_FALSE(target.summary.empty()) << target.name.str();
  }
  for (llvm::StringRef name :
       {"sm_80", "sm_90", "sm_100f", "gfx942", "", "SM_90A"})
    EXPECT_EQ(parseGPUChip(name), std::nullopt) << name.str();
}

TEST(GPUTargetTest, VendorFieldsAgree) {
  for (const GPUTarget &target : getGPUTargets()) {
    SCOPED_TRACE(target.name.str());
    bool amd = target.vendor == GPUVendor::AMD;
    EXPECT_EQ(amd, target.mma == GPUMMAKind::ScaledMFMA);
    EXPECT_EQ(amd, target.name.starts_with("gfx"));
    EXPECT_EQ(target.subgroupSize, amd ? 64u : 32u);
    // Every NVIDIA chip names its PTX version ([PTX2]); AMD has none.
    EXPECT_EQ(amd, target.ptxFeature.empty());
    if (!amd)
      EXPECT_TRUE(target.ptxFeature.starts_with("+ptx"));
    // cvt.rs and the intrinsics by name are tcgen05-chip features.
    if (target.hasStochasticE2M1Conversion || target.nvvmOpsByIntrinsicName)
      EXPECT_EQ(target.mma, GPUMMAKind::Tcgen05BlockScaled);
    // wgmma is an FP8-kind chip's warpgroup MMA (sm_90a).
    if (target.hasWgmma)
      EXPECT_EQ(target.mma, GPUMMAKind::WarpFP8);
  }
  EXPECT_EQ(getGPUChipNames(GPUVendor::AMD), "gfx950");
  EXPECT_EQ(getGPUChipNames(GPUVendor::NVIDIA),
            "sm_89, sm_90a, sm_100a, sm_103a, sm_120a, sm_121a");
}

TEST(GPUTargetTest, EveryChipHasAnInstructionSet) {
  for (const GPUTarget &target : getGPUTargets()) {
    std::unique_ptr<emulation::InstructionSet> set =
        emulation::createInstructionSet(target);
    ASSERT_TRUE(set) << target.name.str();
    EXPECT_EQ(set->getName(), target.name);
    EXPECT_EQ(set->getSubgroupSize(), target.subgroupSize) << target.name.str();
  }
}

} // namespace
