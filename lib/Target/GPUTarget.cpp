//===- GPUTarget.cpp - The table of chips ---------------------------------===//
//
// One row per chip; docs/targets.md explains each column.
//
//===----------------------------------------------------------------------===//

#include "fp4train/Target/GPUTarget.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"

#include <cassert>
#include <limits>

using namespace mlir::fp4train;

/// CUDA's limit on a block's static shared memory.
static constexpr int64_t kCUDAStaticSharedBytes = 48 * 1024;
/// No limit: the AMD kernels declare all of their LDS statically.
static constexpr int64_t kUnlimited = std::numeric_limits<int64_t>::max();

static const GPUTarget kTargets[] = {
    // chip, name, summary,
    //   vendor, mma, subgroup, ptx, cvt.rs, by intrinsic name, wgmma,
    //   static smem
    {GPUChip::GFX950, "gfx950",
     "AMD MI350X/MI355X (CDNA4): v_mfma_scale_f32_*_f8f6f4", GPUVendor::AMD,
     GPUMMAKind::ScaledMFMA, 64, "", false, false, false, kUnlimited},
    {GPUChip::SM89, "sm_89",
     "NVIDIA Ada (L4, L40S): FP8 mma.sync, block scales in f32",
     GPUVendor::NVIDIA, GPUMMAKind::WarpFP8, 32, "+ptx87", false, false, false,
     kCUDAStaticSharedBytes},
    {GPUChip::SM90a, "sm_90a",
     "NVIDIA Hopper (H100, H200): FP8 wgmma / mma.sync, block scales in f32",
     GPUVendor::NVIDIA, GPUMMAKind::WarpFP8, 32, "+ptx87", false, false, true,
     kCUDAStaticSharedBytes},
    {GPUChip::SM100a, "sm_100a", "NVIDIA B200/GB200: tcgen05.mma block_scale",
     GPUVendor::NVIDIA, GPUMMAKind::Tcgen05BlockScaled, 32, "+ptx88", true,
     false, false, kCUDAStaticSharedBytes},
    {GPUChip::SM103a, "sm_103a", "NVIDIA B300/GB300: tcgen05.mma block_scale",
     GPUVendor::NVIDIA, GPUMMAKind::Tcgen05BlockScaled, 32, "+ptx88", true,
     true, false, kCUDAStaticSharedBytes},
    {GPUChip::SM120a, "sm_120a",
     "NVIDIA RTX 50 / RTX PRO Blackwell: mma.sync block_scale",
     GPUVendor::NVIDIA, GPUMMAKind::WarpBlockScaled, 32, "+ptx87", false, false,
     false, kCUDAStaticSharedBytes},
    {GPUChip::SM121a, "sm_121a",
     "NVIDIA GB10 (DGX Spark): mma.sync block_scale", GPUVendor::NVIDIA,
     GPUMMAKind::WarpBlockScaled, 32, "+ptx88", false, false, false,
     kCUDAStaticSharedBytes},
};

llvm::ArrayRef<GPUTarget> mlir::fp4train::getGPUTargets() { return kTargets; }

const GPUTarget &mlir::fp4train::getGPUTarget(GPUChip chip) {
  const GPUTarget &target = kTargets[static_cast<size_t>(chip)];
  assert(target.chip == chip && "the table is in the order of GPUChip");
  return target;
}

std::optional<GPUChip> mlir::fp4train::parseGPUChip(llvm::StringRef name) {
  for (const GPUTarget &target : kTargets)
    if (target.name == name)
      return target.chip;
  return std::nullopt;
}

std::string mlir::fp4train::getGPUChipNames(GPUVendor vendor) {
  llvm::SmallVector<llvm::StringRef> names;
  for (const GPUTarget &target : kTargets)
    if (target.vendor == vendor)
      names.push_back(target.name);
  return llvm::join(names, ", ");
}
