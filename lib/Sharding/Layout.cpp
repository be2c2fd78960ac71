//===- Layout.cpp - How a sharded step's boundary is split ----------------===//
//
// The arithmetic of fp4train/Sharding/Layout.h: even splits, shard indices
// linearized over the splitting axes in their order ([SH3]), processes
// ranked row-major over the grid. getStepLayout is in TrialPartition.cpp,
// beside the preparation it shares with fp4train-partition.
//
//===----------------------------------------------------------------------===//

#include "fp4train/Sharding/Layout.h"

#include <functional>
#include <numeric>

using namespace mlir::fp4train;

bool BoundaryLayout::isSplit() const {
  for (const std::vector<int16_t> &axes : splitAxes)
    if (!axes.empty())
      return true;
  return false;
}

/// How many shards the grid axes `axes` cut a dimension into.
static int64_t getNumShards(const std::vector<int16_t> &axes,
                            const std::vector<int64_t> &gridShape) {
  int64_t shards = 1;
  for (int16_t axis : axes)
    shards *= gridShape[axis];
  return shards;
}

std::vector<int64_t>
BoundaryLayout::getShardShape(const std::vector<int64_t> &gridShape) const {
  std::vector<int64_t> shape = globalShape;
  for (size_t dim = 0; dim < splitAxes.size() && dim < shape.size(); ++dim)
    shape[dim] /= getNumShards(splitAxes[dim], gridShape);
  return shape;
}

std::vector<int64_t>
BoundaryLayout::getShardOrigin(const std::vector<int64_t> &gridShape,
                               const std::vector<int64_t> &coordinates) const {
  std::vector<int64_t> shape = getShardShape(gridShape);
  std::vector<int64_t> origin(globalShape.size(), 0);
  for (size_t dim = 0; dim < splitAxes.size() && dim < shape.size(); ++dim) {
    int64_t index = 0;
    for (int16_t axis : splitAxes[dim])
      index = index * gridShape[axis] + coordinates[axis];
    origin[dim] = index * shape[dim];
  }
  return origin;
}

int64_t
BoundaryLayout::getReplication(const std::vector<int64_t> &gridShape) const {
  int64_t processes = std::accumulate(gridShape.begin(), gridShape.end(),
                                      int64_t(1), std::multiplies<>());
  int64_t shards = 1;
  for (const std::vector<int16_t> &axes : splitAxes)
    shards *= getNumShards(axes, gridShape);
  return processes / shards;
}

int64_t StepLayout::getNumProcesses() const {
  return std::accumulate(gridShape.begin(), gridShape.end(), int64_t(1),
                         std::multiplies<>());
}

std::vector<int64_t> StepLayout::getCoordinates(int64_t rank) const {
  std::vector<int64_t> coordinates(gridShape.size());
  for (size_t axis = gridShape.size(); axis-- > 0;) {
    coordinates[axis] = rank % gridShape[axis];
    rank /= gridShape[axis];
  }
  return coordinates;
}
