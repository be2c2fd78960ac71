//===- ShardingUtils.cpp - Helpers of the sharding models -----------------===//

#include "ShardingUtils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/DLTI/DLTI.h"
#include "mlir/Dialect/MPI/IR/MPI.h"
#include "mlir/Dialect/Shard/Transforms/Transforms.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace mlir::fp4train;
using namespace mlir::fp4train::sharding;
using shard::GridAxis;
using shard::Sharding;
using shard::ShardingArray;

ShardingArray sharding::getSplitAxes(const Sharding &sharding, int64_t rank) {
  ShardingArray axes(rank);
  if (!sharding)
    return axes;
  for (auto [dim, split] : llvm::enumerate(sharding.getSplitAxes()))
    if (int64_t(dim) < rank)
      axes[dim].assign(split.asArrayRef().begin(), split.asArrayRef().end());
  return axes;
}

Sharding sharding::makeSharding(FlatSymbolRefAttr grid, ShardingArray axes,
                                MLIRContext *context) {
  shard::removeTrailingEmptySubArray(axes);
  // Replication is written [[]]: an empty list does not parse back.
  if (axes.empty())
    axes.emplace_back();
  SmallVector<shard::GridAxesAttr> attrs;
  for (const SmallVector<GridAxis> &split : axes)
    attrs.push_back(shard::GridAxesAttr::get(context, split));
  return Sharding::get(grid, attrs);
}

SmallVector<GridAxis> sharding::getAllAxes(const ShardingArray &axes) {
  SmallVector<GridAxis> all;
  for (const SmallVector<GridAxis> &split : axes)
    all.append(split.begin(), split.end());
  return all;
}

std::string sharding::describeSplit(FlatSymbolRefAttr grid,
                                    const ShardingArray &axes) {
  std::string text = grid ? "@" + grid.getValue().str() + " [" : "[";
  for (auto [dim, split] : llvm::enumerate(axes)) {
    text += dim ? ", [" : "[";
    text += llvm::join(
        llvm::map_range(split, [](GridAxis a) { return std::to_string(a); }),
        ", ");
    text += "]";
  }
  return text + "]";
}

std::string sharding::describeSplit(const Sharding &sharding, int64_t rank) {
  return describeSplit(sharding.getGridAttr(), getSplitAxes(sharding, rank));
}

bool sharding::isPlainSharding(const Sharding &sharding) {
  return sharding.getStaticHaloSizes().empty() &&
         sharding.getDynamicHaloSizes().empty() &&
         sharding.getStaticShardedDimsOffsets().empty() &&
         sharding.getDynamicShardedDimsOffsets().empty();
}

LogicalResult sharding::checkPlainSharding(Operation *op,
                                           const Sharding &sharding,
                                           StringRef what) {
  if (isPlainSharding(sharding))
    return success();
  return op->emitOpError("has its ")
         << what
         << " sharded with halos or explicit shard offsets; fp4train "
            "partitions this op into equal shards only";
}

LogicalResult sharding::checkGridShape(Operation *op, shard::GridOp grid) {
  int64_t processes = 1;
  for (auto [axis, size] : llvm::enumerate(grid.getShape())) {
    if (ShapedType::isDynamic(size))
      continue;
    if (size < 1)
      return op->emitOpError("splits over grid @")
             << grid.getSymName() << ", whose axis " << axis << " has size "
             << size << ": every grid axis needs at least one process";
    if (llvm::MulOverflow(processes, size, processes))
      return op->emitOpError("splits over grid @")
             << grid.getSymName()
             << ", whose axes multiply past 2^63 processes";
  }
  return success();
}

LogicalResult sharding::checkAnnotation(shard::ShardOp annotation,
                                        SymbolTableCollection &symbols) {
  Sharding sharding(annotation.getSharding());
  shard::GridOp grid =
      shard::getGrid(annotation, sharding.getGridAttr(), symbols);
  if (!grid)
    return annotation.emitOpError("splits over ")
           << sharding.getGridAttr() << ", which is not a shard.grid";
  if (failed(checkGridShape(annotation, grid)))
    return failure();
  int64_t rank = annotation.getType().getRank();
  ArrayRef<shard::GridAxesAttr> splits = sharding.getSplitAxes();
  // Trailing empty entries split nothing (upstream writes `[[]]` for a
  // replicated rank-0 result).
  while (!splits.empty() && splits.back().empty())
    splits = splits.drop_back();
  if (int64_t(splits.size()) > rank)
    return annotation.emitOpError("splits ")
           << splits.size() << " dimensions of a rank-" << rank << " tensor";
  llvm::SmallDenseSet<GridAxis> seen;
  bool dynamic = false;
  for (auto [dim, split] : llvm::enumerate(splits))
    for (GridAxis axis : split.asArrayRef()) {
      if (axis < 0 || axis >= grid.getRank())
        return annotation.emitOpError("splits dimension ")
               << dim << " along axis " << axis << " of grid @"
               << grid.getSymName() << ", which has " << grid.getRank()
               << (grid.getRank() == 1 ? " axis" : " axes");
      if (!seen.insert(axis).second)
        return annotation.emitOpError("splits along grid axis ")
               << axis << " of @" << grid.getSymName() << " more than once";
      dynamic |= ShapedType::isDynamic(grid.getShape()[axis]);
    }
  if (dynamic)
    return success();
  // MLIR 22 sizes a shard by integer division and drops the remainder.
  SmallVector<int64_t> wholes(rank, 1);
  return getShardShape(annotation, annotation.getType().getShape(), wholes,
                       grid, getSplitAxes(sharding, rank), "element");
}

FailureOr<SmallVector<int64_t>>
sharding::getShardShape(Operation *op, ArrayRef<int64_t> shape,
                        ArrayRef<int64_t> blockShape, shard::GridOp grid,
                        const ShardingArray &axes, StringRef blockName) {
  SmallVector<int64_t> local(shape);
  for (auto [dim, split] : llvm::enumerate(axes)) {
    if (split.empty() || int64_t(dim) >= int64_t(shape.size()))
      continue;
    for (GridAxis axis : split)
      if (axis < 0 || axis >= grid.getRank() ||
          ShapedType::isDynamic(grid.getShape()[axis]))
        return op->emitOpError("splits dimension ")
               << dim << " along grid axis " << axis << " of @"
               << grid.getSymName()
               << ", which is not a static axis of that grid";
    int64_t shards = shard::collectiveProcessGroupSize(split, grid);
    auto axesText = [&, split = split] {
      return describeSplit({}, ShardingArray{split});
    };
    if (ShapedType::isDynamic(shape[dim]) || shape[dim] % shards != 0)
      return op->emitOpError("cannot split dimension ")
             << dim << " (size " << shape[dim] << ") into " << shards
             << " equal shards along grid axes " << axesText() << " of @"
             << grid.getSymName();
    local[dim] = shape[dim] / shards;
    if (local[dim] % blockShape[dim] != 0)
      return op->emitOpError("cannot split dimension ")
             << dim << " (size " << shape[dim] << ") into " << shards
             << " shards of " << local[dim] << " along grid axes " << axesText()
             << " of @" << grid.getSymName() << ": a shard must hold whole "
             << blockName << "s of " << blockShape[dim] << " [SH1]";
  }
  return local;
}

LogicalResult sharding::insertAnnotations(Operation *op, OpBuilder &b,
                                          ArrayRef<Sharding> annotations) {
  for (OpOperand &operand : op->getOpOperands())
    if (Sharding sharding = annotations[operand.getOperandNumber()];
        sharding && isa<RankedTensorType>(operand.get().getType()))
      shard::maybeInsertSourceShardingAnnotation(sharding, operand, b);
  for (OpResult result : op->getResults())
    if (Sharding sharding =
            annotations[op->getNumOperands() + result.getResultNumber()];
        sharding && isa<RankedTensorType>(result.getType()))
      shard::maybeInsertTargetShardingAnnotation(sharding, result, b);
  return success();
}

SmallVector<Value> sharding::buildShardOrigin(ImplicitLocOpBuilder &b,
                                              shard::GridOp grid,
                                              const ShardingArray &axes,
                                              ArrayRef<int64_t> shardShape) {
  SmallVector<Value> origin;
  for (auto [dim, size] : llvm::enumerate(shardShape)) {
    if (int64_t(dim) >= int64_t(axes.size()) || axes[dim].empty()) {
      origin.push_back(arith::ConstantIndexOp::create(b, 0));
      continue;
    }
    Value index =
        shard::createProcessLinearIndex(grid.getSymName(), axes[dim], b);
    origin.push_back(arith::MulIOp::create(
        b, index, arith::ConstantIndexOp::create(b, size)));
  }
  return origin;
}

/// Whether `module` holds an op of the mpi dialect.
bool sharding::usesMPI(ModuleOp module) {
  return module
      .walk([](Operation *op) {
        return isa<mpi::MPIDialect>(op->getDialect()) ? WalkResult::interrupt()
                                                      : WalkResult::advance();
      })
      .wasInterrupted();
}

/// The MPI lowering asks the module which MPI's ABI to call; this project
/// runs on MPICH (scripts/setup.sh). A module that names its own keeps it.
void sharding::setDefaultMPIImplementation(ModuleOp module) {
  constexpr llvm::StringLiteral kMapAttrName = "dlti.map";
  if (module->hasAttr(kMapAttrName))
    return;
  MLIRContext *ctx = module.getContext();
  DataLayoutEntryInterface entry =
      DataLayoutEntryAttr::get(StringAttr::get(ctx, "MPI:Implementation"),
                               StringAttr::get(ctx, "MPICH"));
  module->setAttr(kMapAttrName, MapAttr::get(ctx, {entry}));
}
