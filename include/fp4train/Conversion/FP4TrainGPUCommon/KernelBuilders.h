//===- KernelBuilders.h - Target-neutral fp4train GPU kernels ----*- C++
//-*-===//
//
// The kernel patterns every GPU target shares: the Hadamard rotation (no
// target-specific instruction at all) and the quantize kernel (the block
// scale rules of [MX1]/[MX2]/[MX3]/[NV1] and [SR1] in the exact codecs of the
// CPU expansion; only the final RNE encode may use a hardware conversion,
// through TargetInfoBase::buildConvertRNE), and their fusion for a quantize
// of a rotation along its blocks, and the transposed view of 16x16-blocked
// codes and scales. All produce exactly the tensors
// of fp4train-expand's 1:N type conversion, so the rest of a module does not
// see which ops run on the GPU. Patterns have benefit 2, over the expansion's
// (the fused one 3, over the separate kernels').
//
//===----------------------------------------------------------------------===//

#ifndef FP4TRAIN_CONVERSION_FP4TRAINGPUCOMMON_KERNELBUILDERS_H
#define FP4TRAIN_CONVERSION_FP4TRAINGPUCOMMON_KERNELBUILDERS_H

#include "mlir/Transforms/DialectConversion.h"

#include <memory>

namespace mlir::fp4train {
class HadamardOp;
class QuantizeOp;
class TargetInfoBase;

/// True when the Hadamard kernel takes `op`: any size 16..256, any
/// dimension, none/fixed/random signs, forward or inverse, a static shape,
/// and a grid that fits (every rotation of a realistic tensor).
bool isHadamardKernelShape(HadamardOp op);

/// Adds the pattern lowering the hadamard ops of isHadamardKernelShape to a
/// gpu.launch of a fast Walsh-Hadamard kernel bit-identical to the numerics
/// library (docs/amdgpu.md, "Hadamard kernel").
void populateHadamardKernelPatterns(TypeConverter &converter,
                                    RewritePatternSet &patterns);

/// True when the shared quantize kernel takes `op`: MXFP4 / MXFP8 (E8M0
/// scales of 32-element blocks) or NVFP4 (E4M3 scales of 16-element blocks
/// with the f32 global scale, amax computed or supplied), blocks along the
/// last dimension (block shape [1, ..., 1, B]) or, for NVFP4, 16x16 blocks
/// over the last two ([1, ..., 16, 16]), round to nearest even or [SR1]
/// stochastic rounding (E2M1), from f32, bf16 or f16, with a grid that fits
/// a launch.
bool isQuantizeKernelShape(QuantizeOp op);

/// Adds the pattern lowering the quantize ops of isQuantizeKernelShape to a
/// gpu.launch of a kernel with one lane per block, on `target`'s
/// buildConvertRNE hook.
void populateQuantizeKernelPatterns(
    TypeConverter &converter, RewritePatternSet &patterns,
    std::shared_ptr<const TargetInfoBase> target);

/// The hadamard op whose rotation the fused rotate-then-quantize kernel
/// computes for `op` (docs/amdgpu.md, "Fused Hadamard and quantize kernel"),
/// or null: `op`'s input is a hadamard of isHadamardKernelShape along the
/// last dimension, and `op` a quantize of isQuantizeKernelShape with 1-D
/// blocks (along that dimension) that `target` runs.
HadamardOp getFusedHadamard(QuantizeOp op, const TargetInfoBase &target);

/// Adds the pattern (benefit 3, over the separate kernels') lowering the
/// quantize ops of getFusedHadamard to one rotate-and-quantize kernel (two
/// for NVFP4 with a computed amax: rotate-and-amax, rotate-and-quantize);
/// their hadamard op is erased, or becomes the Hadamard kernel when it has
/// other uses.
void populateHadamardQuantizeKernelPatterns(
    TypeConverter &converter, RewritePatternSet &patterns,
    std::shared_ptr<const TargetInfoBase> target);

/// Adds the pattern lowering fp4train.transpose (the transposed view of a
/// 16x16-blocked tensor) of a static shape whose blocked dimensions are the
/// last two to two shared-memory tiled transpose kernels, one for the codes
/// and one for the scale codes (the global scale passes through), so that
/// the quantized weight of Dgrad stays on the device.
void populateTransposeKernelPatterns(TypeConverter &converter,
                                     RewritePatternSet &patterns);

/// The one conversion of a GPU target pass over `root`: fp4train-expand's
/// 1:N type conversion, the target's kernel patterns (`populateKernels`,
/// benefit 2) and the expansion's patterns for every fp4train op that stays
/// on the host, so that the i8 codes and scales flow between kernels and
/// host code without casts; afterwards no fp4train op or type is left. The
/// pass has reported what the chip cannot run before.
LogicalResult applyFP4TrainGPUConversion(
    Operation *root,
    function_ref<void(TypeConverter &, RewritePatternSet &)> populateKernels);

} // namespace mlir::fp4train

#endif // FP4TRAIN_CONVERSION_FP4TRAINGPUCOMMON_KERNELBUILDERS_H
