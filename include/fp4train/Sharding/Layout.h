//===- Layout.h - How a sharded step's boundary is split -------*- C++ -*-===//
//
// The hosts of a partitioned step (fp4-train under mpiexec) hand each
// process its shards of the arguments and put the results back together:
// they need, for each argument and result of the step as written, which
// grid axes split which dimension. getStepLayout answers from the same
// preparation and propagation fp4train-partition runs (docs/sharding.md).
//
//===----------------------------------------------------------------------===//

#ifndef FP4TRAIN_SHARDING_LAYOUT_H
#define FP4TRAIN_SHARDING_LAYOUT_H

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace mlir::fp4train {

/// One argument or result of a step: its shape as written (global) and,
/// per dimension, the grid axes that split it (in the order they linearize
/// the shard index; empty: not split). Not a tensor, or rank 0: no
/// dimensions, whole on every process.
struct BoundaryLayout {
  std::vector<int64_t> globalShape;
  std::vector<std::vector<int16_t>> splitAxes;

  bool isSplit() const;
  /// The extent and origin along each dimension of the shard that the
  /// process at `coordinates` (one per grid axis) holds.
  std::vector<int64_t>
  getShardShape(const std::vector<int64_t> &gridShape) const;
  std::vector<int64_t>
  getShardOrigin(const std::vector<int64_t> &gridShape,
                 const std::vector<int64_t> &coordinates) const;
  /// How many processes hold each element (the grid axes that do not split
  /// it).
  int64_t getReplication(const std::vector<int64_t> &gridShape) const;
};

struct StepLayout {
  /// The grid's name and shape.
  std::string grid;
  std::vector<int64_t> gridShape;
  std::vector<BoundaryLayout> arguments, results;

  int64_t getNumProcesses() const;
  /// The grid coordinates of process `rank` (row-major over the grid, the
  /// order convert-shard-to-mpi ranks processes in).
  std::vector<int64_t> getCoordinates(int64_t rank) const;
};

/// The layout of `function`'s boundary over its module's grid, or
/// std::nullopt when the module has no shard.grid or `function` no
/// annotation (an unsharded step, which fp4train-partition leaves alone).
/// Fails, with an error on `function`, where fp4train-partition would, and
/// where the module has more than one grid or a result stays partial.
FailureOr<std::optional<StepLayout>> getStepLayout(func::FuncOp function);

} // namespace mlir::fp4train

#endif // FP4TRAIN_SHARDING_LAYOUT_H
