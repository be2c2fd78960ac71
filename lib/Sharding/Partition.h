//===- Partition.h - Checked trial partitioning of a function ---*- C++ -*-===//
//
// What the partitioning passes and the host's step layout share:
// the checks of what MLIR 22's shard-partition assumes
// (PartitionChecks.cpp), fp4train-partition's preparation of a step
// (PartitionPreparation.cpp), and the partition of a copy of a function
// that replaces it only once whole (TrialPartition.cpp).
//
//===----------------------------------------------------------------------===//

#ifndef FP4TRAIN_LIB_SHARDING_PARTITION_H
#define FP4TRAIN_LIB_SHARDING_PARTITION_H

#include "ShardingUtils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassManager.h"

#include <memory>

namespace mlir::fp4train::sharding {

//===----------------------------------------------------------------------===//
// Checks (PartitionChecks.cpp)
//===----------------------------------------------------------------------===//

/// A ranked tensor of rank > 0: what the partition expects annotations on.
bool needsAnnotation(Value value);

/// Reports (on `function` or the op at fault) the first violation in
/// `block` of what MLIR 22's shard-partition assumes of a block that holds
/// annotations: every tensor argument and operand annotated, [SH8] on every
/// annotation, reshards it implements, no halos, split reductions it can
/// combine (docs/sharding.md).
LogicalResult checkBlock(Block &block, Operation *function);

/// The first op of `function` that uses a value the function does not
/// define: what MLIR 22's partition leaves when a model does not map one of
/// its results.
Operation *findUnpartitionedUse(FunctionOpInterface function);

//===----------------------------------------------------------------------===//
// Preparation (PartitionPreparation.cpp); nothing computed changes
//===----------------------------------------------------------------------===//

/// Rewrites linalg.generic ops that index a unit dimension with a constant
/// into ops without it, between reshapes.
void dropConstantIndexedUnitDims(func::FuncOp function);
/// Annotates the tensor results nothing uses, as the op's model splits them.
void annotateUnusedResults(func::FuncOp function);
/// Drops the gridless annotations propagation puts on scalars.
void dropScalarAnnotations(FunctionOpInterface function);
/// Makes linalg.generic bodies read only their own operands.
void isolateGenericBodies(func::FuncOp function);
/// Replaces linalg.index in linalg.generic bodies by reads of constant iotas.
void indexLoopsByIotas(func::FuncOp function);
/// Gives each tensor a linalg body reads from outside a whole copy.
void gatherCapturedTensors(func::FuncOp function);
/// select(c, out + x, out) becomes out + select(c, x, -0.0).
void normalizeMaskedSums(func::FuncOp function);
/// Gives every use of a tensor.empty or constant fill its own copy.
void privatizeInits(func::FuncOp function);
/// Annotates every unannotated tensor argument, and every constant of
/// distinct elements, as replicated.
LogicalResult annotateWholeValues(func::FuncOp function);
/// A ranked tensor constant of distinct elements (not a splat): what MLIR
/// 22's partition cannot partition ([SH10]).
bool isDistinctConstant(arith::ConstantOp constant);

//===----------------------------------------------------------------------===//
// Trial partitioning (TrialPartition.cpp)
//===----------------------------------------------------------------------===//

/// A copy of a function, with its module's grids, in a module of its own:
/// upstream's passes run on it unverified in between, and the function is
/// replaced (or read) only once the copy is whole.
struct Sandbox {
  explicit Sandbox(FunctionOpInterface function)
      : module(ModuleOp::create(function.getLoc())) {
    OpBuilder b = OpBuilder::atBlockEnd(module->getBody());
    if (auto parent = function->getParentOfType<ModuleOp>())
      for (auto grid : parent.getOps<shard::GridOp>())
        b.clone(*grid);
    copy = cast<FunctionOpInterface>(b.clone(*function));
  }

  LogicalResult run(std::unique_ptr<Pass> pass) {
    PassManager pm(module->getContext(), ModuleOp::getOperationName());
    pm.enableVerifier(false);
    pm.nest(copy->getName()).addPass(std::move(pass));
    return pm.run(*module);
  }

  OwningOpRef<ModuleOp> module;
  FunctionOpInterface copy;
};

/// fp4train-partition's preparation of the sandbox's function, then
/// sharding-propagation and the checks shard-partition relies on.
LogicalResult prepareAndPropagate(Sandbox &sandbox);

/// Runs upstream's shard-partition on a copy of `function` and moves the
/// result into `function` once it is whole; `prepare` first prepares and
/// propagates (prepareAndPropagate), otherwise the annotations must be
/// complete and checked.
LogicalResult partitionInSandbox(FunctionOpInterface function, bool prepare);

} // namespace mlir::fp4train::sharding

#endif // FP4TRAIN_LIB_SHARDING_PARTITION_H
