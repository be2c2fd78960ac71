//===- ShardingUtils.h - Helpers of the sharding models ---------*- C++ -*-===//

#ifndef FP4TRAIN_LIB_SHARDING_SHARDINGUTILS_H
#define FP4TRAIN_LIB_SHARDING_SHARDINGUTILS_H

#include "fp4train/Dialect/FP4Train/IR/FP4TrainOps.h"

#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/Dialect/Shard/Interfaces/ShardingInterface.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"

#include <string>
#include <vector>

namespace mlir {
class DialectRegistry;

namespace fp4train::sharding {

/// The split axes of `sharding`, one (possibly empty) list per dimension of
/// a rank-`rank` tensor.
shard::ShardingArray getSplitAxes(const shard::Sharding &sharding,
                                  int64_t rank);

/// The sharding on `grid` that splits each dimension along `axes`
/// (replicated, `[[]]`, when none is split).
shard::Sharding makeSharding(FlatSymbolRefAttr grid, shard::ShardingArray axes,
                             MLIRContext *context);

/// Every grid axis of `axes`, in dimension order.
SmallVector<shard::GridAxis> getAllAxes(const shard::ShardingArray &axes);

/// `@grid [[0], [], [1]]`, for diagnostics.
std::string describeSplit(FlatSymbolRefAttr grid,
                          const shard::ShardingArray &axes);
std::string describeSplit(const shard::Sharding &sharding, int64_t rank);

/// Whether `sharding` has neither halos nor explicit shard offsets.
bool isPlainSharding(const shard::Sharding &sharding);

/// Rejects shardings with halos or explicit shard offsets: the models split
/// tensors evenly.
LogicalResult checkPlainSharding(Operation *op, const shard::Sharding &sharding,
                                 StringRef what);

/// Rejects a grid that MLIR 22's partition cannot divide by: an axis of
/// size 0, or axes whose product (the number of processes) does not fit in
/// int64 (upstream's shard sizes divide by it, and a wrapped product of 0
/// is a division by zero). `op` is what the error is reported on.
LogicalResult checkGridShape(Operation *op, shard::GridOp grid);

/// [SH8] Rejects an annotation that partitioning cannot honour exactly, before
/// upstream's code reads it: a grid that checkGridShape rejects, a split
/// axis that is not an axis of the grid or that appears twice, and a split
/// of a static dimension that the grid axes do not divide into equal shards
/// (MLIR 22 would drop the remainder). Splits over dynamic grid axes are
/// left to the partition.
LogicalResult checkAnnotation(shard::ShardOp annotation,
                              SymbolTableCollection &symbols);

/// The shape of one shard of a `shape` tensor split along `axes` on
/// `grid`, or an error naming `op`, the dimension, the grid axes and the
/// sizes when the grid does not divide a dimension or a shard would cut one
/// of the `blockShape` blocks ([SH1]; `blockName` says what a block is).
FailureOr<SmallVector<int64_t>>
getShardShape(Operation *op, ArrayRef<int64_t> shape,
              ArrayRef<int64_t> blockShape, shard::GridOp grid,
              const shard::ShardingArray &axes, StringRef blockName);

/// [SH3] Where this process's shard starts in the whole tensor: for each
/// dimension, the process's linear index along the grid axes that split it
/// times the shard size (`shardShape`), 0 for whole dimensions.
SmallVector<Value> buildShardOrigin(ImplicitLocOpBuilder &b, shard::GridOp grid,
                                    const shard::ShardingArray &axes,
                                    ArrayRef<int64_t> shardShape);

/// The quantize of this process's shard `shard` (split along `axes` on
/// `grid`) that gives the tiles of `quantize` of the whole tensor: the
/// shard's scaled type ([SH1], an error on `quantize` when a block would
/// straddle shards), the whole tensor's computed amax ([SH2]) and its
/// global stochastic-rounding positions ([SH3]). `seed` and `amax` are the
/// process's values of the quantize's operands.
FailureOr<fp4train::QuantizeOp>
buildShardQuantize(ImplicitLocOpBuilder &b, fp4train::QuantizeOp quantize,
                   Value shard, Value seed, Value amax, shard::GridOp grid,
                   const shard::ShardingArray &axes);

/// Annotates the ranked operands and results of `op` with `annotations` (in
/// operand-then-result order, as getShardingAnnotations returns them): the
/// addShardingAnnotations of the project's models.
LogicalResult insertAnnotations(Operation *op, OpBuilder &b,
                                ArrayRef<shard::Sharding> annotations);

/// addShardingAnnotations of a model whose getShardingAnnotations says
/// everything: its annotations, inserted.
template <typename Model>
LogicalResult addAnnotations(const Model &model, Operation *op, OpBuilder &b,
                             const shard::ShardingOption &option) {
  FailureOr<std::vector<shard::Sharding>> annotations =
      model.getShardingAnnotations(op, option);
  if (failed(annotations))
    return failure();
  return insertAnnotations(op, b, *annotations);
}

/// Whether `module` holds an op of the mpi dialect.
bool usesMPI(ModuleOp module);

/// Names MPICH as the MPI whose ABI the mpi dialect's lowering calls, unless
/// `module` names its own (a `dlti.map`).
void setDefaultMPIImplementation(ModuleOp module);

/// Attaches the models of tensor.expand_shape and tensor.collapse_shape.
void registerTensorShardingModels(DialectRegistry &registry);

/// Attaches upstream's elementwise model to the arith and math ops a step
/// applies to scalars or whole tensors (ElementwiseShardingModels.cpp).
void registerElementwiseShardingModels(DialectRegistry &registry);

} // namespace fp4train::sharding
} // namespace mlir

#endif // FP4TRAIN_LIB_SHARDING_SHARDINGUTILS_H
