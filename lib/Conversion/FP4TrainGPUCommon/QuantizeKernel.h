//===- QuantizeKernel.h - The quantize kernel's builder ----------*- C++
//-*-===//
//
// The pieces of the quantize kernel (QuantizeKernel.cpp) that the fused
// rotate-then-quantize kernels (HadamardQuantizeKernel.cpp) reuse: what one
// op's kernel computes (QuantizeConfig), the per-block encode ([MX1]/[MX2]/
// [MX3]/[NV1] scale codes, RNE or [SR1] element codes, the stores), the
// block amax, the workgroup amax reduction, and the host side (the [NV1]
// global scales, the code and scale buffers, the op's converted results).
// Internal to FP4TrainGPUCommon.
//
//===----------------------------------------------------------------------===//

#ifndef FP4TRAIN_LIB_CONVERSION_FP4TRAINGPUCOMMON_QUANTIZEKERNEL_H
#define FP4TRAIN_LIB_CONVERSION_FP4TRAINGPUCOMMON_QUANTIZEKERNEL_H

#include "fp4train/Conversion/FP4TrainGPUCommon/TargetInfoBase.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"

namespace mlir::fp4train {
class QuantizeOp;
class ScaledTensorType;

namespace quantize_kernel {

/// Threads per workgroup (one block each) of the quantize kernels, and the
/// words of the amax reduction's shared buffer.
inline constexpr int64_t kThreads = 256;

/// What the quantize kernel of one op computes.
struct QuantizeConfig {
  Type element;
  int64_t blockSize, numBlocks;
  bool nv, rceil;
  /// [NV1] 16x16 blocks over the last two dimensions (the weight layout):
  /// the tensor as rows x `columns`, `columnBlocks` = columns / 16 blocks
  /// per row band of 16 rows, `rowBlocks` bands.
  bool twoD = false;
  int64_t columns = 0, columnBlocks = 0, rowBlocks = 0;
  /// [SR1] seed (i64), null for RNE.
  Value seed;
  /// [NV1] S_enc and S_dec (f32), null for MX.
  Value globalEncode, globalDecode;
};

/// The configuration of `op` (of isQuantizeKernelShape) with its converted
/// seed operand; the global scales are set by buildGlobalScales.
QuantizeConfig getQuantizeConfig(QuantizeOp op, Value seed);

class QuantizeKernelBuilder {
public:
  QuantizeKernelBuilder(OpBuilder &b, Location loc,
                        const TargetInfoBase &target,
                        const QuantizeConfig &config, Value input)
      : b(b), loc(loc), target(target), config(config), input(input) {}

  /// The quantize kernel: writes `codes` and `scales`.
  void buildQuantize(gpu::LaunchOp launch, Value codes, Value scales);
  /// The 16x16-block quantize kernel: a workgroup of 16 x 16 lanes takes a
  /// band of 16 rows and 16 column blocks, lane (r, c) the 16 elements of
  /// row r in column block c; the lanes of a block combine their row amaxes
  /// through shared memory (`shared`, 256 words).
  void buildQuantize2D(gpu::LaunchOp launch, Value codes, Value scales);
  /// The amax kernel: writes one magnitude word per workgroup to `partial`.
  void buildAbsMax(gpu::LaunchOp launch, Value partial);

  /// The magnitude bits (i32) of the amax of `x` (vectors of 4 f32): their
  /// unsigned integer max (NaN > Inf > finite, order-free).
  Value blockAbsMaxBits(ImplicitLocOpBuilder &ib, ArrayRef<Value> x);
  /// Encodes the elements `x` of one block, whose amax has the magnitude
  /// bits `amaxBits`, to `codes` at element offset `base`, and its scale
  /// code to `scales[scaleIndex]` (only where `writeScale` holds, when
  /// given). `linearBlock` = base / B indexes the [SR1] words.
  void encodeBlock(ImplicitLocOpBuilder &ib, ArrayRef<Value> x, Value amaxBits,
                   Value base, Value linearBlock, Value codes, Value scales,
                   Value scaleIndex, Value writeScale);
  /// The workgroup's max of the threads' magnitude words `bits` (thread
  /// `tid` of kThreads, through the i32 workgroup buffer `shared`), stored
  /// by thread 0 to `partial[group]`.
  void reduceAbsMax(Value bits, Value tid, Value shared, Value partial,
                    Value group);

private:
  Value index(int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); }
  /// The linear block of the thread, and whether it is in range (null when
  /// the grid has no excess threads).
  std::pair<Value, Value> getBlock(gpu::LaunchOp launch);
  /// The block's elements as vector<4xf32>.
  SmallVector<Value> loadBlock(Value base);
  void quantizeBlock(Value block, Value codes, Value scales);
  /// [SR1] The codes of the scaled values `v`, one vector<2xi8> of [PK1]
  /// bytes per vector<4xf32>.
  SmallVector<Value>
  convertStochastic(ImplicitLocOpBuilder &ib, Value block,
                    const TargetInfoBase::ScaledBlock &scaled);

  OpBuilder &b;
  Location loc;
  const TargetInfoBase &target;
  const QuantizeConfig &config;
  Value input;
};

/// [NV1] Sets the global scales of `config` for `type`: from the supplied
/// `amax`, else from the amax kernel `buildAmaxKernel` launches (it returns
/// the i32 buffer of its per-workgroup magnitude words), reduced on the
/// host; S_enc = S_dec = 1 without a global scale in the type. MX formats
/// have none.
void buildGlobalScales(OpBuilder &b, Location loc, ScaledTensorType type,
                       QuantizeConfig &config, Value amax,
                       function_ref<Value()> buildAmaxKernel);

/// A fresh i32 buffer of `groups` words, and the i32 workgroup buffer of
/// kThreads words, of an amax kernel.
Value allocAbsMaxPartial(OpBuilder &b, Location loc, int64_t groups);
Type getAbsMaxSharedType(OpBuilder &b, const TargetInfoBase &target);

/// The code and scale buffers of `type`'s kernel (flat, one byte each).
std::pair<Value, Value> allocQuantizeOutputs(OpBuilder &b, Location loc,
                                             ScaledTensorType type,
                                             const QuantizeConfig &config);
/// The converted results of the quantize op (codes, scales[, S_dec]) from
/// the kernel's buffers.
SmallVector<Value> getQuantizeResults(OpBuilder &b, Location loc,
                                      ScaledTensorType type,
                                      const QuantizeConfig &config, Value codes,
                                      Value scales);

} // namespace quantize_kernel
} // namespace mlir::fp4train

#endif // FP4TRAIN_LIB_CONVERSION_FP4TRAINGPUCOMMON_QUANTIZEKERNEL_H
