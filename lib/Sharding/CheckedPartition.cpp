//===- CheckedPartition.cpp - shard-partition behind its checks -----------===//
//
// The pass fp4-opt registers as `shard-partition`: upstream's, after the
// checks of what it assumes (PartitionChecks.cpp) and on a copy of the
// function, so that what it cannot partition is an error and never an
// abort or a half-partitioned function.
//
//===----------------------------------------------------------------------===//

#include "Partition.h"

#include "fp4train/Sharding/Passes.h"

namespace mlir::fp4train {
#define GEN_PASS_DEF_CHECKEDPARTITION
#include "fp4train/Sharding/Passes.h.inc"
} // namespace mlir::fp4train

using namespace mlir;
using namespace mlir::fp4train;
using namespace mlir::fp4train::sharding;

namespace {

struct CheckedPartitionPass
    : public mlir::fp4train::impl::CheckedPartitionBase<CheckedPartitionPass> {
  using Base::Base;

  void runOnOperation() override {
    FunctionOpInterface function = getOperation();
    for (Block &block : function.getFunctionBody()) {
      // Upstream partitions the blocks that hold annotations.
      if (llvm::none_of(block, llvm::IsaPred<shard::ShardOp>))
        continue;
      if (failed(checkBlock(block, function)))
        return signalPassFailure();
    }
    if (failed(partitionInSandbox(function, /*prepare=*/false)))
      signalPassFailure();
  }
};

} // namespace
