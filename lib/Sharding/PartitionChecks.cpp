//===- PartitionChecks.cpp - What shard-partition assumes -----------------===//
//
// MLIR 22's shard-partition assumes a fully and consistently annotated
// function and asserts, or without assertions dereferences, where it is
// not: the checks that run before it (docs/sharding.md, "What
// shard-partition checks first"), and the check of what it leaves.
//
//===----------------------------------------------------------------------===//

#include "Partition.h"

#include "mlir/Analysis/SliceAnalysis.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/SymbolTable.h"

using namespace mlir;
using namespace mlir::fp4train;
using namespace mlir::fp4train::sharding;
using shard::ShardingArray;

/// A ranked tensor of rank > 0: what the pass expects annotations on.
bool sharding::needsAnnotation(Value value) {
  auto type = dyn_cast<RankedTensorType>(value.getType());
  return type && type.getRank() > 0;
}

static void trimTrailingEmpty(ShardingArray &axes) {
  while (!axes.empty() && axes.back().empty())
    axes.pop_back();
}

/// The split the pass reaches from `from` in its one resharding step
/// towards `to`: it tries moving the last axis of a dimension to another,
/// then splitting one more axis off a dimension, then gathering the last
/// one, and takes the first that `from` and `to` look like.
static std::optional<ShardingArray> getReshardStep(ShardingArray from,
                                                   ShardingArray to) {
  size_t rank = std::max(from.size(), to.size());
  from.resize(rank);
  to.resize(rank);
  auto prefix = [](ArrayRef<shard::GridAxis> axes) { return axes.drop_back(); };
  for (size_t source = 0; source < rank; ++source)
    for (size_t target = 0; target < rank; ++target) {
      if (source == target || from[source].empty() || to[target].empty() ||
          from[source].back() != to[target].back() ||
          prefix(from[source]) != prefix(to[target]))
        continue;
      ShardingArray result = from;
      result[target].push_back(result[source].pop_back_val());
      return result;
    }
  for (size_t dim = 0; dim < rank; ++dim)
    if (from[dim].size() + 1 == to[dim].size() &&
        ArrayRef(from[dim]) == prefix(to[dim])) {
      ShardingArray result = from;
      result[dim].push_back(to[dim].back());
      return result;
    }
  for (size_t dim = 0; dim < rank; ++dim)
    if (to[dim].size() + 1 == from[dim].size() &&
        prefix(from[dim]) == ArrayRef(to[dim])) {
      ShardingArray result = from;
      result[dim].pop_back();
      return result;
    }
  return std::nullopt;
}

static LogicalResult checkReshard(shard::ShardOp source,
                                  shard::ShardOp target) {
  shard::Sharding from = source.getSharding(), to = target.getSharding();
  if (from == to ||
      (shard::isFullReplication(from) && shard::isFullReplication(to)))
    return success();
  int64_t rank = source.getType().getRank();
  if (from.getGridAttr() != to.getGridAttr())
    return target.emitOpError("reshards between grids ")
           << from.getGridAttr() << " and " << to.getGridAttr()
           << ", which shard-partition does not implement";
  bool plain = isPlainSharding(from) && isPlainSharding(to);
  ShardingArray fromAxes = getSplitAxes(from, rank);
  ShardingArray toAxes = getSplitAxes(to, rank);
  // MLIR 22 implements a change of static halo sizes alone, and with it
  // gives the shard's users sizes it never set: training steps have no
  // halos, and none is taken.
  if (!plain)
    return target.emitOpError(
        "reshards with halos or explicit shard offsets, which fp4train's "
        "partition does not support (steps split into equal shards)");
  std::optional<ShardingArray> step = getReshardStep(fromAxes, toAxes);
  if (step) {
    trimTrailingEmpty(*step);
    trimTrailingEmpty(toAxes);
  }
  if (!step || *step != toAxes)
    return target.emitOpError("reshards ")
           << describeSplit(from, rank) << " into " << describeSplit(to, rank)
           << ", which shard-partition does not implement in one step (it "
              "splits, gathers or moves one grid axis at a time: chain "
              "shard.shard ops through the steps between)";
  return success();
}

/// What MLIR 22's partition of a linalg op with a split reduction loop
/// assumes without checking (it asserts, or without assertions throws from
/// an empty std::optional): one init, and a body that combines into it with
/// one op that has a neutral element (the init of the processes that do not
/// add the original one) of the result's element type.
static LogicalResult checkSplitReduction(linalg::LinalgOp op) {
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  std::optional<unsigned> splitLoop;
  for (OpOperand &operand : op->getOpOperands()) {
    auto annotation = operand.get().getDefiningOp<shard::ShardOp>();
    auto type = dyn_cast<RankedTensorType>(operand.get().getType());
    if (!annotation || !type)
      continue;
    ShardingArray axes = getSplitAxes(annotation.getSharding(), type.getRank());
    AffineMap map = op.getMatchingIndexingMap(&operand);
    for (auto [dim, expr] : llvm::enumerate(map.getResults())) {
      auto loop = dyn_cast<AffineDimExpr>(expr);
      if (loop && dim < axes.size() && !axes[dim].empty() &&
          iterators[loop.getPosition()] == utils::IteratorType::reduction)
        splitLoop = loop.getPosition();
    }
  }
  if (!splitLoop)
    return success();
  SmallVector<Operation *> combiners;
  if (op.getNumDpsInits() == 1)
    matchReduction(op.getRegionOutputArgs(), 0, combiners);
  Type element = getElementTypeOrSelf(op->getResult(0).getType());
  if (combiners.size() == 1 && arith::getNeutralElement(combiners.front()) &&
      combiners.front()->getResult(0).getType() == element)
    return success();
  return op->emitOpError("splits its reduction loop ")
         << *splitLoop
         << " across processes, which MLIR 22's partition implements only "
            "for one init combined by one op with a neutral element (add, "
            "mul, max, min, and, or, xor); split another dimension or "
            "rewrite the reduction";
}

LogicalResult sharding::checkBlock(Block &block, Operation *function) {
  for (BlockArgument argument : block.getArguments()) {
    if (!needsAnnotation(argument))
      continue;
    if (!argument.hasOneUse() ||
        !isa<shard::ShardOp>(*argument.getUsers().begin()))
      return function->emitOpError("has argument ")
             << argument.getArgNumber()
             << " without exactly one use, a shard.shard: shard-partition "
                "needs every tensor annotated (run sharding-propagation "
                "first)";
  }
  SymbolTableCollection symbols;
  for (Operation &op : block) {
    if (auto target = dyn_cast<shard::ShardOp>(op)) {
      if (failed(checkAnnotation(target, symbols)))
        return failure();
      if (auto source = target.getSrc().getDefiningOp<shard::ShardOp>())
        if (failed(checkReshard(source, target)))
          return failure();
      continue;
    }
    if (isa<shard::ShardingOp, shard::GetShardingOp>(op))
      continue;
    if (auto linalgOp = dyn_cast<linalg::LinalgOp>(op))
      if (failed(checkSplitReduction(linalgOp)))
        return failure();
    for (OpOperand &operand : op.getOpOperands()) {
      if (!needsAnnotation(operand.get()))
        continue;
      auto annotation = operand.get().getDefiningOp<shard::ShardOp>();
      if (!annotation)
        return op.emitOpError("has tensor operand ")
               << operand.getOperandNumber()
               << " without a shard.shard annotation: shard-partition needs "
                  "every tensor annotated (run sharding-propagation first)";
      // MLIR 22 partitions the computing ops (linalg's among them) as if
      // their shards were even: with halos it reads sizes it never set.
      if (!isPlainSharding(annotation.getSharding()))
        return op.emitOpError("has tensor operand ")
               << operand.getOperandNumber()
               << " sharded with halos or explicit shard offsets, which "
                  "shard-partition supports for the shard ops only";
    }
    // MLIR 22 partitions an op by its results' shardings and dereferences
    // the grid of one that has none (a result nobody uses).
    for (OpResult result : op.getResults())
      if (needsAnnotation(result) &&
          llvm::none_of(result.getUsers(), llvm::IsaPred<shard::ShardOp>))
        return op.emitOpError("has result ")
               << result.getResultNumber()
               << " without a shard.shard annotation: shard-partition needs "
                  "every tensor annotated (run sharding-propagation first)";
  }
  return success();
}

/// The first op of `function` that uses a value the function does not
/// define: what MLIR 22's partition leaves when a model does not map one of
/// its results. (The verifier would report it by printing the function,
/// which dereferences the missing type.)
Operation *sharding::findUnpartitionedUse(FunctionOpInterface function) {
  Region &body = function.getFunctionBody();
  Operation *broken = nullptr;
  function.walk([&](Operation *op) {
    for (Value operand : op->getOperands())
      if (!operand || !operand.getType() || !operand.getParentRegion() ||
          !body.isAncestor(operand.getParentRegion())) {
        broken = op;
        return WalkResult::interrupt();
      }
    return WalkResult::advance();
  });
  return broken;
}
