//===- FP4TrainPartition.cpp - Partitioning annotated steps ---------------===//
//
// fp4train-partition: each function that holds annotations is prepared,
// propagated and partitioned (TrialPartition.cpp); gathers that feed only
// a quantize become gathers of codes and scales ([SH4]); and the
// collectives are reported.
//
//===----------------------------------------------------------------------===//

#include "Partition.h"

#include "fp4train/Dialect/FP4Train/Transforms/RoleAnalysis.h"
#include "fp4train/Sharding/Passes.h"

#include "mlir/IR/ImplicitLocOpBuilder.h"

namespace mlir::fp4train {
#define GEN_PASS_DEF_FP4TRAINPARTITION
#include "fp4train/Sharding/Passes.h.inc"
} // namespace mlir::fp4train

using namespace mlir;
using namespace mlir::fp4train;
using namespace mlir::fp4train::sharding;
using shard::ShardingArray;

/// The number of bytes of `type`'s elements.
static int64_t getNumBytes(ShapedType type) {
  return (type.getNumElements() * type.getElementTypeBitWidth() + 7) / 8;
}

/// Appends one object per collective of the partitioned `function` to
/// `report` (the fp4train-partition report, Passes.td).
static void
describeCollectives(func::FuncOp function, llvm::json::Array &report,
                    const llvm::DenseMap<Operation *, int64_t> &replaced) {
  SymbolTableCollection symbols;
  function.walk([&](Operation *op) {
    if (!isa<shard::AllReduceOp, shard::AllGatherOp, shard::AllSliceOp,
             shard::AllToAllOp, shard::ReduceScatterOp, shard::BroadcastOp,
             shard::GatherOp, shard::ScatterOp, shard::ReduceOp, shard::ShiftOp,
             shard::SendOp, shard::RecvOp>(op))
      return;
    auto type = dyn_cast<ShapedType>(op->getOperand(0).getType());
    auto gridName = op->getAttrOfType<FlatSymbolRefAttr>("grid");
    auto axes = op->getAttrOfType<DenseI16ArrayAttr>("grid_axes");
    if (!type || !type.hasStaticShape() || !gridName || !axes)
      return;
    shard::GridOp grid = shard::getGrid(op, gridName, symbols);
    int64_t processes = 1;
    for (int16_t axis : axes.asArrayRef())
      processes *= grid ? grid.getShape()[axis] : 1;
    std::string element;
    llvm::raw_string_ostream(element) << type.getElementType();
    report.push_back(llvm::json::Object{
        {"function", function.getName().str()},
        {"loc", formatLocation(op->getLoc())},
        {"collective", op->getName().stripDialect().str()},
        {"grid", gridName.getValue().str()},
        {"grid_axes", llvm::json::Array(axes.asArrayRef())},
        {"processes", processes},
        {"shape", llvm::json::Array(type.getShape())},
        {"element", element},
        {"bytes", getNumBytes(type)},
    });
    // [SH4] What the gather of the unquantized tensor would have moved.
    if (auto it = replaced.find(op); it != replaced.end())
      report.back().getAsObject()->insert({"replaces_bytes", it->second});
  });
}

/// Gathers `value` along `axis` over `axes` of `grid` into `wholeType`.
/// Elements narrower than a byte (FP4 codes) travel one to a byte: MPI has
/// no narrower type, and [SH7] gathers bytes.
static Value gatherWhole(ImplicitLocOpBuilder &b, Value value,
                         RankedTensorType wholeType, shard::AllGatherOp like) {
  auto shardType = cast<RankedTensorType>(value.getType());
  unsigned bits = shardType.getElementTypeBitWidth();
  auto gather = [&](Value input, Type element) {
    return shard::AllGatherOp::create(
        b, wholeType.clone(element), like.getGridAttr(), like.getGridAxesAttr(),
        input, like.getGatherAxisAttr());
  };
  if (bits >= 8)
    return gather(value, wholeType.getElementType());
  Type narrow = b.getIntegerType(bits), byte = b.getI8Type();
  Value bytes = arith::ExtUIOp::create(
      b, shardType.clone(byte),
      arith::BitcastOp::create(b, shardType.clone(narrow), value));
  Value gathered = gather(bytes, byte);
  return arith::BitcastOp::create(
      b, wholeType,
      arith::TruncIOp::create(b, wholeType.clone(narrow), gathered));
}

/// [SH4] Rewrites each gather whose only use is a quantize of the gathered
/// tensor into the quantize of each process's shard ([SH1]-[SH3]: the tiles
/// of the whole tensor's quantization) and gathers of its codes and block
/// scales, packed into the whole block-scaled tensor: bit for bit the same
/// value, in about a quarter of the bytes. A gather whose blocks would
/// straddle shards is left alone. Records, for each new gather, the bytes
/// the replaced one moved.
static void
quantizeBeforeGathers(func::FuncOp function,
                      llvm::DenseMap<Operation *, int64_t> &replaced) {
  SmallVector<std::pair<shard::AllGatherOp, QuantizeOp>> candidates;
  function.walk([&](shard::AllGatherOp gather) {
    // The partition may leave casts to the same type in between.
    Value gathered = gather.getResult();
    while (gathered.hasOneUse())
      if (auto cast = dyn_cast<tensor::CastOp>(*gathered.user_begin());
          cast && cast.getType() == gathered.getType())
        gathered = cast.getResult();
      else
        break;
    if (!gathered.hasOneUse())
      return;
    auto quantize = dyn_cast<QuantizeOp>(*gathered.user_begin());
    if (quantize && quantize.getInput() == gathered && !quantize.isPart())
      candidates.emplace_back(gather, quantize);
  });
  SymbolTableCollection symbols;
  for (auto [gather, quantize] : candidates) {
    auto shardType = cast<RankedTensorType>(gather.getInput().getType());
    ScaledTensorType wholeType = quantize.getResult().getType();
    int64_t axis = gather.getGatherAxis().getSExtValue();
    shard::GridOp grid = shard::getGrid(gather, gather.getGridAttr(), symbols);
    if (!grid || !shardType.hasStaticShape() ||
        shardType.getDimSize(axis) % wholeType.getBlockShape()[axis] != 0)
      continue;
    ShardingArray axes(shardType.getRank());
    axes[axis].assign(gather.getGridAxes().begin(), gather.getGridAxes().end());
    ImplicitLocOpBuilder b(quantize.getLoc(), quantize);
    FailureOr<QuantizeOp> shardQuantize =
        buildShardQuantize(b, quantize, gather.getInput(), quantize.getSeed(),
                           quantize.getAmax(), grid, axes);
    if (failed(shardQuantize))
      continue;
    auto unpack = UnpackOp::create(b, shardQuantize->getResult());
    Value values = gatherWhole(b, unpack.getValues(),
                               wholeType.getValuesTensorType(), gather);
    Value scales = gatherWhole(b, unpack.getScales(),
                               wholeType.getScalesTensorType(), gather);
    // The global scale is the whole tensor's on every process ([SH2]).
    Value whole =
        PackOp::create(b, wholeType, values, scales, unpack.getGlobalScale());
    int64_t unquantized = getNumBytes(shardType);
    for (Value gathered : {values, scales})
      for (Operation *op = gathered.getDefiningOp(); op;
           op = op->getNumOperands() ? op->getOperand(0).getDefiningOp()
                                     : nullptr)
        if (isa<shard::AllGatherOp>(op)) {
          // The codes' gather stands for the f32 one; the scales' adds.
          replaced[op] = gathered == values ? unquantized : 0;
          break;
        }
    Value input = quantize.getInput();
    quantize.getResult().replaceAllUsesWith(whole);
    quantize.erase();
    // The gather and the casts after it.
    while (Operation *producer = input.getDefiningOp()) {
      input = producer->getNumOperands() ? producer->getOperand(0) : Value();
      producer->erase();
      if (producer == gather.getOperation() || !input)
        break;
    }
  }
}

namespace {

struct PartitionPass
    : public mlir::fp4train::impl::FP4TrainPartitionBase<PartitionPass> {
  using Base::Base;

  void runOnOperation() override {
    SmallVector<func::FuncOp> annotated;
    for (auto function : getOperation().getOps<func::FuncOp>())
      if (function.walk([](shard::ShardOp) { return WalkResult::interrupt(); })
              .wasInterrupted())
        annotated.push_back(function);
    llvm::DenseMap<Operation *, int64_t> replaced;
    for (func::FuncOp function : annotated) {
      if (failed(partitionInSandbox(function, /*prepare=*/true)))
        return signalPassFailure();
      quantizeBeforeGathers(function, replaced);
    }
    if (!report.empty()) {
      llvm::json::Array collectives;
      for (func::FuncOp function : annotated)
        describeCollectives(function, collectives, replaced);
      if (failed(writeReport(getOperation(), report, std::move(collectives))))
        return signalPassFailure();
    }
  }
};

} // namespace
