//===- GPUTarget.h - The GPUs fp4train generates code for -------*- C++ -*-===//
//
// One description per chip, resolved once from the `chip=` option: the
// conversion passes (kernel choice, conversions, limits), the pipelines
// (llc's PTX version), fp4-gpu-prepare and the emulator (which instruction
// set runs the kernels) all read the same row. docs/targets.md has the
// table. Adding a chip is one row in GPUTarget.cpp and one enumerator here.
//
//===----------------------------------------------------------------------===//

#ifndef FP4TRAIN_TARGET_GPUTARGET_H
#define FP4TRAIN_TARGET_GPUTARGET_H

#include "fp4train/Support/EnumOption.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <optional>

namespace mlir::fp4train {

/// Every chip a pipeline takes.
enum class GPUChip { GFX950, SM89, SM90a, SM100a, SM103a, SM120a, SM121a };

enum class GPUVendor { AMD, NVIDIA };

/// The tensor-core instruction a chip's block-scaled GEMM kernel runs on.
enum class GPUMMAKind {
  /// v_mfma_scale_f32_{16x16x128,32x32x64}_f8f6f4 (CDNA4).
  ScaledMFMA,
  /// FP8 mma.sync m16n8k32 without block scaling or FP4: one MMA per K
  /// block, the scales applied in f32 ([GEMM1] order).
  WarpFP8,
  /// mma.sync ... block_scale (the sm_12x family).
  WarpBlockScaled,
  /// tcgen05.mma ... block_scale, accumulators and scales in tensor memory.
  Tcgen05BlockScaled,
};

/// What the code generators and the emulator need to know about one chip.
struct GPUTarget {
  GPUChip chip;
  /// The name users and LLVM spell: gfx950, sm_120a.
  llvm::StringLiteral name;
  /// One line for `--help`: the products and the GEMM instruction.
  llvm::StringLiteral summary;
  GPUVendor vendor;
  GPUMMAKind mma;
  /// Lanes per subgroup (wave, warp).
  unsigned subgroupSize;
  /// NVIDIA: the PTX ISA version llc must target for the chip's
  /// instructions, as an LLVM feature ("+ptx88"; [PTX2]); empty on AMD.
  llvm::StringLiteral ptxFeature;
  /// NVIDIA: a stochastic E2M1 conversion (cvt.rs.satfinite.e2m1x4.f32)
  /// that `sr=hardware` may select; not [SR1] ([PTX5]).
  bool hasStochasticE2M1Conversion;
  /// MLIR 22's NVVM ops reject the chip in their per-op target check, so
  /// the kernels call the same LLVM intrinsics through llvm.call_intrinsic
  /// ([PTX1]).
  bool nvvmOpsByIntrinsicName;
  /// NVIDIA: the warpgroup MMA (wgmma.mma_async, sm_90a), which the FP8
  /// kind's GEMMs with E8M0 scales use ([WG1]).
  bool hasWgmma;
  /// The most shared memory (LDS) a kernel may declare statically; beyond
  /// it a kernel takes dynamic shared memory (CUDA: 48 KiB, the launcher
  /// opts the kernel in to more).
  int64_t maxStaticSharedBytes;

  bool isNVIDIA() const { return vendor == GPUVendor::NVIDIA; }
};

/// Every chip, in the order of GPUChip.
llvm::ArrayRef<GPUTarget> getGPUTargets();

/// The description of `chip`.
const GPUTarget &getGPUTarget(GPUChip chip);

/// The chip named `name` (gfx950, sm_120a), or std::nullopt.
std::optional<GPUChip> parseGPUChip(llvm::StringRef name);

/// The names of `vendor`'s chips, ", "-separated, for messages.
std::string getGPUChipNames(GPUVendor vendor);

/// The values of a `chip` option of `vendor`'s passes and pipelines, from
/// the table: an llvm::cl modifier, like llvm::cl::values.
struct GPUChipValues {
  GPUVendor vendor;

  template <typename Opt> void apply(Opt &option) const {
    for (const GPUTarget &target : getGPUTargets())
      if (target.vendor == vendor)
        option.getParser().addLiteralOption(target.name, target.chip,
                                            target.summary);
  }
};

inline GPUChipValues getGPUChipValues(GPUVendor vendor) { return {vendor}; }

} // namespace mlir::fp4train

FP4TRAIN_ENUM_OPTION_PARSER(mlir::fp4train::GPUChip)

#endif // FP4TRAIN_TARGET_GPUTARGET_H
