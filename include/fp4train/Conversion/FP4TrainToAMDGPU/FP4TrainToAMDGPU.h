//===- FP4TrainToAMDGPU.h - Lower fp4train to AMD CDNA4 ---------*- C++ -*-===//
//
// Lowers fp4train.scaled_matmul to a gpu.launch of a block-scaled GEMM kernel
// built on amdgpu.scaled_mfma (gfx950). See docs/amdgpu.md for the tiling,
// the LDS layout and the fragment layouts the kernel relies on.
//
//===----------------------------------------------------------------------===//

#ifndef FP4TRAIN_CONVERSION_FP4TRAINTOAMDGPU_FP4TRAINTOAMDGPU_H
#define FP4TRAIN_CONVERSION_FP4TRAINTOAMDGPU_FP4TRAINTOAMDGPU_H

#include "fp4train/Support/EnumOption.h"
#include "fp4train/Target/GPUTarget.h"

#include "mlir/Transforms/DialectConversion.h"
#include "llvm/Support/CommandLine.h"

#include <optional>
#include <string>

namespace mlir {
namespace fp4train {
class HadamardOp;
class QuantizeOp;

/// The scaled MFMA instruction a GEMM kernel is built on.
enum class ScaledMFMAKind {
  /// v_mfma_scale_f32_32x32x64_f8f6f4: 128x128 workgroup tiles.
  M32N32K64,
  /// v_mfma_scale_f32_16x16x128_f8f6f4: 64x64 or 128x128 workgroup tiles.
  M16N16K128,
};

/// A GEMM kernel's instruction and square workgroup tile (64 or 128): 4
/// waves in a 2x2 grid, each with (tile / 2 / M)^2 instructions.
struct ScaledMFMAConfig {
  ScaledMFMAKind kind;
  int64_t tile;
};

/// What the pass options force (the `mfma` and `tile` options); unset
/// fields follow selectScaledMFMAConfig's rule.
struct ScaledMFMAOptions {
  std::optional<ScaledMFMAKind> kind;
  std::optional<int64_t> tile;
};

/// The `mfma` option of fp4train-to-amdgpu and the ROCm pipelines.
enum class MFMAOption { Auto, M32N32K64, M16N16K128 };

/// The `tile` option of fp4train-to-amdgpu and the ROCm pipelines.
enum class MFMATileOption { Auto, Tile64, Tile128 };

/// The values of the `mfma` option, defined once for the pass and the
/// pipelines (so `--help` lists them and a bad one gets one message).
inline llvm::cl::ValuesClass getMFMAOptionValues() {
  return llvm::cl::values(
      clEnumValN(MFMAOption::Auto, "auto", "the size rule of docs/amdgpu.md"),
      clEnumValN(MFMAOption::M32N32K64, "32x32x64",
                 "v_mfma_scale_f32_32x32x64_f8f6f4"),
      clEnumValN(MFMAOption::M16N16K128, "16x16x128",
                 "v_mfma_scale_f32_16x16x128_f8f6f4"));
}

/// The values of the `tile` option.
inline llvm::cl::ValuesClass getMFMATileOptionValues() {
  return llvm::cl::values(
      clEnumValN(MFMATileOption::Auto, "auto",
                 "the size rule of docs/amdgpu.md"),
      clEnumValN(MFMATileOption::Tile64, "64", "64x64 (16x16x128 only)"),
      clEnumValN(MFMATileOption::Tile128, "128", "128x128"));
}

/// What the `mfma` and `tile` options force.
inline ScaledMFMAOptions getScaledMFMAOptions(MFMAOption mfma,
                                              MFMATileOption tile) {
  ScaledMFMAOptions options;
  if (mfma == MFMAOption::M32N32K64)
    options.kind = ScaledMFMAKind::M32N32K64;
  else if (mfma == MFMAOption::M16N16K128)
    options.kind = ScaledMFMAKind::M16N16K128;
  if (tile != MFMATileOption::Auto)
    options.tile = tile == MFMATileOption::Tile64 ? 64 : 128;
  return options;
}

/// The documented choice (docs/amdgpu.md) of the `auto` modes: a GEMM is
/// large when its 128x128 grid alone has at least one workgroup per compute
/// unit of an MI355X (256). Large: 128x128 tiles, on 32x32x64 unless
/// 16x16x128 is forced; small: 16x16x128 on 64x64 tiles (4x finer), unless
/// 32x32x64 or tile 128 is forced. A forced tile of 64 implies 16x16x128
/// (the pass rejects it with 32x32x64).
ScaledMFMAConfig selectScaledMFMAConfig(const ScaledMFMAOptions &options,
                                        int64_t batch, int64_t m, int64_t n);

/// Adds the patterns lowering fp4train.scaled_matmul (MX operands: E2M1, E4M3
/// or E5M2 elements with E8M0 scales) to a gpu.launch on `target` (an AMD
/// chip with scaled MFMA), the
/// quantize ops of isQuantizeOnGPU to quantize kernels and the hadamard ops
/// of isHadamardKernelShape (FP4TrainGPUCommon/KernelBuilders.h) to the
/// shared Hadamard kernel.
/// `converter` is the 1:N type conversion of fp4train-expand
/// (FP4TrainTypeConverter). `mfma` forces an instruction and/or
/// tile; selectScaledMFMAConfig decides the rest per op. The pattern has
/// benefit 2, so it wins over fp4train-expand's scaled_matmul pattern when both
/// are populated (as the pass does, for the ops without a GPU lowering). Ops
/// the chip cannot run are left alone: run checkFP4TrainAMDGPUSupport first for
/// the diagnostics.
void populateFP4TrainToAMDGPUConversionPatterns(TypeConverter &converter,
                                                RewritePatternSet &patterns,
                                                const GPUTarget &target,
                                                ScaledMFMAOptions mfma = {});

/// The rule for quantize kernels: true when `op` quantizes to an MX format
/// (f4E2M1FN, f8E4M3FN or f8E5M2 elements, E8M0 scales, no global scale)
/// with round-to-nearest-even, or with [SR1] stochastic rounding to
/// f4E2M1FN (MXFP4-SR), in 1-D blocks of 32 along the last dimension (block
/// shape [1, ..., 1, 32]), from f32, bf16 or f16, on a chip with the scaled
/// conversions (gfx950). Every other quantize (NVFP4 with either rounding,
/// 2-D blocks, blocks along another dimension) stays on the host.
bool isQuantizeOnGPU(QuantizeOp op, const GPUTarget &target);

/// Adds the pattern lowering the quantize ops of isQuantizeOnGPU to the
/// shared quantize kernel (FP4TrainGPUCommon/KernelBuilders.h), one lane per
/// block, its element encodes on amdgpu.packed_scaled_trunc (RNE) or
/// rocdl.cvt.scalef32.sr.pk.fp4.f32 (SR); benefit 2, over fp4train-expand's
/// quantize pattern; and the fused rotate-and-quantize kernel for those
/// quantize ops whose input is a hadamard along their blocks (benefit 3,
/// populateHadamardQuantizeKernelPatterns).
/// populateFP4TrainToAMDGPUConversionPatterns includes them.
void populateFP4TrainQuantizeToAMDGPUPatterns(TypeConverter &converter,
                                              RewritePatternSet &patterns,
                                              const GPUTarget &target);

/// Emits an error naming the chip and the format on every op under `root`
/// that populateFP4TrainToAMDGPUConversionPatterns cannot lower on `target`
/// (a chip without scaled MFMA; NVFP4 operands, whose E4M3 block scales
/// gfx950 cannot consume; grids past the launch limits). `mfma` is the
/// forced instruction and tile, as for the patterns.
LogicalResult checkFP4TrainAMDGPUSupport(Operation *root,
                                         const GPUTarget &target,
                                         ScaledMFMAOptions mfma = {});

} // namespace fp4train
} // namespace mlir

FP4TRAIN_ENUM_OPTION_PARSER(mlir::fp4train::MFMAOption)
FP4TRAIN_ENUM_OPTION_PARSER(mlir::fp4train::MFMATileOption)

#endif // FP4TRAIN_CONVERSION_FP4TRAINTOAMDGPU_FP4TRAINTOAMDGPU_H
