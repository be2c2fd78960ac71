//===- Passes.cpp - Registration of the sharding passes -------------------===//
//
// The passes of this directory (one per file) and upstream's
// sharding-propagation, which fp4train-partition runs and users run before
// the checked shard-partition.
//
//===----------------------------------------------------------------------===//

#include "fp4train/Sharding/Passes.h"

#include "mlir/Dialect/Shard/Transforms/Passes.h"

void mlir::fp4train::registerShardingPasses() {
  shard::registerShardingPropagation();
  registerCheckedPartition();
  registerFP4TrainShardStep();
  registerFP4TrainPartition();
  registerFP4TrainShardToMPI();
  registerFP4TrainMPIToLLVM();
}
