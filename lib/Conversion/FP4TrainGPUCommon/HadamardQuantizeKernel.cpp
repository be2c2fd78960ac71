//===- HadamardQuantizeKernel.cpp - Rotate then quantize in one kernel ----===//
//
// A quantize whose input is a hadamard rotating along the quantize's block
// dimension (the last: the Wgrad operands of the Hadamard recipes, rotated
// along tokens after their transpose) becomes one kernel that loads the
// rotation's input, rotates exactly as the Hadamard kernel does and
// quantizes exactly as the quantize kernel does, so the rotated tensor never
// goes through global memory and the bits are those of the two kernels:
//
//  - the rotation is HadamardKernelBuilder::rotate ([H1]: the same loads,
//    sign multiplies, butterfly stages, phase-2 exchange and normalization),
//    the tensor viewed as [outer, rows, n, 1] (contiguous blocks), 256
//    threads holding the 4096 consecutive elements of a workgroup, 16 each;
//  - the quantize stage is QuantizeKernelBuilder::encodeBlock on blocks of
//    B = 32 (MX) or 16 (NVFP4) consecutive rotated elements: the same amax
//    bits, scale codes ([MX1]/[MX2]/[MX3]/[NV1]), RNE or [SR1] codes (the
//    Philox word of each element keyed by its linear index in the quantized
//    tensor, i.e. the block index of the whole tensor) and stores;
//  - with n = 16 and B = 16 a lane's 16 rotated registers are its quantize
//    block; otherwise (n > 16: a lane holds runs of R = 16 / L elements; or
//    n = 16 < B) the lanes stage their elements in shared memory, block b of
//    the workgroup in row b of B + 4 f32 (16-byte aligned rows, staggered
//    banks), one barrier, and thread t takes the workgroup's block t
//    (4096 / B blocks: all 256 threads for NVFP4, 128 for MX);
//  - NVFP4 with a computed amax_tensor runs the rotation twice, never
//    storing it: a rotate + amax kernel (each lane's magnitude bits of its
//    16 rotated elements, the quantize kernel's workgroup reduction; lanes
//    past the end hold the last block's values again, which leaves the max
//    unchanged), the host reduction and [NV1] global scales, then the
//    rotate + quantize kernel.
//
// A bf16/f16 tensor extended to f32 (arith.extf) right before the rotation
// is read in its own type and extended in the kernel (exact).
//
// The hadamard op itself is erased when every use is such a quantize;
// otherwise the Hadamard kernel still serves its other uses. Everything the
// fused kernel does not take (rotations along another dimension, 16x16
// NVFP4 blocks, quantize ops the chip runs on the host) keeps the two
// separate lowerings.
//
//===----------------------------------------------------------------------===//

#include "HadamardKernel.h"
#include "QuantizeKernel.h"

#include "fp4train/Conversion/FP4TrainGPUCommon/Buffers.h"
#include "fp4train/Conversion/FP4TrainGPUCommon/KernelBuilders.h"
#include "fp4train/Dialect/FP4Train/IR/FP4TrainOps.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mlir::fp4train;
using namespace mlir::fp4train::hadamard_kernel;
using quantize_kernel::QuantizeConfig;
using quantize_kernel::QuantizeKernelBuilder;

/// f32 padding of a staged block's shared-memory row.
static constexpr int64_t kStagePad = 4;
/// Elements of one workgroup (256 lanes of 16).
static constexpr int64_t kGroupElements = kThreads * kPerLane;

HadamardOp mlir::fp4train::getFusedHadamard(QuantizeOp op,
                                            const TargetInfoBase &target) {
  auto hadamard = op.getInput().getDefiningOp<HadamardOp>();
  if (!hadamard || !isQuantizeKernelShape(op) || !target.isQuantizeOnTarget(op))
    return {};
  ScaledTensorType type = op.getResult().getType();
  if (type.is2DBlocked() || int64_t(hadamard.getDim()) != type.getRank() - 1)
    return {};
  return isHadamardKernelShape(hadamard) ? hadamard : HadamardOp();
}

/// `x` (f32 scalars) as vectors of 4.
static SmallVector<Value> toQuads(ImplicitLocOpBuilder &b, ArrayRef<Value> x) {
  SmallVector<Value> quads;
  for (size_t i = 0; i < x.size(); i += 4)
    quads.push_back(vector::FromElementsOp::create(
        b, VectorType::get({4}, b.getF32Type()), x.slice(i, 4)));
  return quads;
}

namespace {

class HadamardQuantizeKernelBuilder {
public:
  HadamardQuantizeKernelBuilder(OpBuilder &b, Location loc,
                                const TargetInfoBase &target,
                                const HadamardShape &shape,
                                const QuantizeConfig &config, Value input,
                                Value signs, bool inverse)
      : b(b), loc(loc), shape(shape), config(config),
        rotation(b, loc, shape, input, signs, inverse),
        quantize(b, loc, target, config, /*input=*/Value()) {}

  /// Whether a lane's rotated registers are exactly one quantize block.
  static bool isLaneBlock(const HadamardShape &shape,
                          const QuantizeConfig &config) {
    return shape.lanesPerBlock() == 1 && config.blockSize == kPerLane;
  }
  /// f32 words of the launch's workgroup buffer: the rotation's exchange,
  /// reused to stage the quantize blocks.
  static int64_t getSharedWords(const HadamardShape &shape,
                                const QuantizeConfig &config) {
    if (isLaneBlock(shape, config))
      return 0;
    int64_t stage =
        kGroupElements / config.blockSize * (config.blockSize + kStagePad);
    return std::max(shape.exchangeWords(), stage);
  }

  /// Rotate, then quantize to `codes` and `scales`.
  void buildQuantize(gpu::LaunchOp launch, Value codes, Value scales);
  /// Rotate, then one magnitude word per workgroup to `partial`.
  void buildAbsMax(gpu::LaunchOp launch, Value partial);

private:
  Value index(int64_t v) { return rotation.index(v); }
  /// Encodes the block `block` (of the tensor) of elements `x` under `guard`
  /// (when not null).
  void encodeBlock(ArrayRef<Value> x, Value block, Value guard, Value codes,
                   Value scales);

  OpBuilder &b;
  Location loc;
  const HadamardShape &shape;
  const QuantizeConfig &config;
  HadamardKernelBuilder rotation;
  QuantizeKernelBuilder quantize;
};

} // namespace

void HadamardQuantizeKernelBuilder::encodeBlock(ArrayRef<Value> x, Value block,
                                                Value guard, Value codes,
                                                Value scales) {
  OpBuilder::InsertionGuard insertion(b);
  if (guard) {
    auto ifOp = scf::IfOp::create(b, loc, guard, /*withElse=*/false);
    b.setInsertionPointToStart(ifOp.thenBlock());
  }
  ImplicitLocOpBuilder ib(loc, b);
  SmallVector<Value> quads = toQuads(ib, x);
  Value base = rotation.mul(block, config.blockSize);
  quantize.encodeBlock(ib, quads, quantize.blockAbsMaxBits(ib, quads), base,
                       block, codes, scales, block, /*writeScale=*/Value());
}

void HadamardQuantizeKernelBuilder::buildQuantize(gpu::LaunchOp launch,
                                                  Value codes, Value scales) {
  RotatedLane lane = rotation.rotate(launch);
  const int64_t bs = config.blockSize;
  if (isLaneBlock(shape, config)) {
    // The lane's block of the rotation is the quantize block.
    Value block = arith::DivUIOp::create(b, loc, lane.base, index(bs));
    return encodeBlock(lane.x, block, lane.inRange, codes, scales);
  }

  // Stage: element e of the workgroup's 4096 goes to row e / B, column
  // e % B. Runs (R <= 16 <= B consecutive elements, R-aligned) never cross
  // a row.
  Value stage = launch.getWorkgroupAttributions().front();
  if (shape.lanesPerBlock() > 1)
    gpu::BarrierOp::create(b, loc); // the exchange's reads are done
  Value blockStart = rotation.mul(lane.groupBlock, shape.n);
  for (auto [i, start] : llvm::enumerate(lane.runStarts)) {
    Value e = rotation.add(blockStart, start);
    Value row = arith::DivUIOp::create(b, loc, e, index(bs));
    Value column = arith::RemUIOp::create(b, loc, e, index(bs));
    rotation.storeRun(ArrayRef<Value>(lane.x).slice(i * lane.run, lane.run),
                      stage,
                      rotation.add(rotation.mul(row, bs + kStagePad), column),
                      /*aligned=*/false);
  }
  gpu::BarrierOp::create(b, loc);

  // Thread t encodes the workgroup's block t, if it exists.
  const int64_t groupBlocks = kGroupElements / bs;
  Value block =
      rotation.add(rotation.mul(launch.getBlockIds().x, groupBlocks), lane.tid);
  Value guard;
  auto both = [&](Value condition) {
    guard = guard ? arith::AndIOp::create(b, loc, guard, condition).getResult()
                  : condition;
  };
  if (groupBlocks < kThreads)
    both(arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, lane.tid,
                               index(groupBlocks)));
  if (config.numBlocks % groupBlocks != 0)
    both(arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, block,
                               index(config.numBlocks)));
  OpBuilder::InsertionGuard insertion(b);
  if (guard) {
    auto ifOp = scf::IfOp::create(b, loc, guard, /*withElse=*/false);
    b.setInsertionPointToStart(ifOp.thenBlock());
  }
  SmallVector<Value> x = rotation.loadRun(
      stage, rotation.mul(lane.tid, bs + kStagePad), bs, /*aligned=*/false);
  encodeBlock(x, block, /*guard=*/Value(), codes, scales);
}

void HadamardQuantizeKernelBuilder::buildAbsMax(gpu::LaunchOp launch,
                                                Value partial) {
  RotatedLane lane = rotation.rotate(launch);
  ImplicitLocOpBuilder ib(loc, b);
  Value bits = quantize.blockAbsMaxBits(ib, toQuads(ib, lane.x));
  quantize.reduceAbsMax(bits, lane.tid,
                        launch.getWorkgroupAttributions().back(), partial,
                        launch.getBlockIds().x);
}

namespace {

/// Lowers the quantize uses of a rotation that getFusedHadamard accepts to
/// fused kernels, each recomputing the rotation, and the rotation itself to
/// the Hadamard kernel when it has other uses. The root is the hadamard op
/// (converted before its uses), so that the quantize ops are rewritten while
/// the rotation is intact.
struct HadamardQuantizeOpLowering : public OpConversionPattern<HadamardOp> {
  HadamardQuantizeOpLowering(TypeConverter &converter, MLIRContext *context,
                             std::shared_ptr<const TargetInfoBase> target)
      : OpConversionPattern(converter, context, /*benefit=*/3),
        target(std::move(target)) {}

  LogicalResult
  matchAndRewrite(HadamardOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    SmallVector<QuantizeOp> fused;
    bool otherUses = false;
    for (Operation *user : op->getUsers()) {
      auto quantize = dyn_cast<QuantizeOp>(user);
      if (!quantize || getFusedHadamard(quantize, *target) != op)
        otherUses = true;
      else if (!llvm::is_contained(fused, quantize))
        fused.push_back(quantize);
    }
    if (fused.empty())
      return rewriter.notifyMatchFailure(op, "no quantize to fuse");
    for (QuantizeOp quantize : fused) {
      OpBuilder::InsertionGuard guard(rewriter);
      rewriter.setInsertionPoint(quantize);
      rewriter.replaceOpWithMultiple(
          quantize, {buildFusedKernels(rewriter, op, adaptor, quantize)});
    }
    if (!otherUses) {
      rewriter.eraseOp(op);
      return success();
    }
    rewriter.replaceOp(op, hadamard_kernel::buildHadamardKernel(
                               rewriter, op.getLoc(), op, adaptor.getInput(),
                               adaptor.getSeed(), adaptor.getStep()));
    return success();
  }

  /// The kernels of the fused `quantize` of `op`; returns its converted
  /// results.
  SmallVector<Value> buildFusedKernels(ConversionPatternRewriter &rewriter,
                                       HadamardOp op, OpAdaptor adaptor,
                                       QuantizeOp quantize) const {
    Location loc = quantize.getLoc();
    ScaledTensorType type = quantize.getResult().getType();
    HadamardShape shape = *getHadamardShape(op);
    auto remapped = [&](Value v) {
      return v ? rewriter.getRemappedValue(v) : Value();
    };
    QuantizeConfig config = quantize_kernel::getQuantizeConfig(
        quantize, remapped(quantize.getSeed()));

    // A bf16/f16 source of an extension is read as is.
    Value source = adaptor.getInput();
    if (auto ext = op.getInput().getDefiningOp<arith::ExtFOp>())
      if (auto type = dyn_cast<RankedTensorType>(ext.getIn().getType());
          type && isa<BFloat16Type, Float16Type>(type.getElementType()))
        source = remapped(ext.getIn());
    Value input =
        toKernelBuffer(rewriter, loc, flattenTensor(rewriter, loc, source));
    Value signs =
        getSignsBuffer(rewriter, loc, op, adaptor.getSeed(), adaptor.getStep());
    auto buildKernel =
        [&](int64_t sharedWords, TypeRange extraShared,
            function_ref<void(HadamardQuantizeKernelBuilder &, gpu::LaunchOp)>
                body) {
          auto launch = createHadamardLaunch(rewriter, loc, shape, sharedWords,
                                             extraShared);
          OpBuilder::InsertionGuard guard(rewriter);
          rewriter.setInsertionPointToStart(&launch.getBody().front());
          HadamardQuantizeKernelBuilder builder(rewriter, loc, *target, shape,
                                                config, input, signs,
                                                op.getInverse());
          body(builder, launch);
          gpu::TerminatorOp::create(rewriter, loc);
        };

    quantize_kernel::buildGlobalScales(
        rewriter, loc, type, config, remapped(quantize.getAmax()), [&] {
          Value partial = quantize_kernel::allocAbsMaxPartial(rewriter, loc,
                                                              shape.groupsX());
          buildKernel(shape.exchangeWords(),
                      quantize_kernel::getAbsMaxSharedType(rewriter, *target),
                      [&](HadamardQuantizeKernelBuilder &builder,
                          gpu::LaunchOp launch) {
                        builder.buildAbsMax(launch, partial);
                      });
          return partial;
        });
    Value codes, scales;
    std::tie(codes, scales) =
        quantize_kernel::allocQuantizeOutputs(rewriter, loc, type, config);
    buildKernel(
        HadamardQuantizeKernelBuilder::getSharedWords(shape, config), {},
        [&](HadamardQuantizeKernelBuilder &builder, gpu::LaunchOp launch) {
          builder.buildQuantize(launch, codes, scales);
        });
    return quantize_kernel::getQuantizeResults(rewriter, loc, type, config,
                                               codes, scales);
  }

  std::shared_ptr<const TargetInfoBase> target;
};

} // namespace

void mlir::fp4train::populateHadamardQuantizeKernelPatterns(
    TypeConverter &converter, RewritePatternSet &patterns,
    std::shared_ptr<const TargetInfoBase> target) {
  patterns.add<HadamardQuantizeOpLowering>(converter, patterns.getContext(),
                                           std::move(target));
}
