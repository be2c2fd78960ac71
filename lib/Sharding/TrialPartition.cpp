//===- TrialPartition.cpp - Partitioning a copy first ---------------------===//
//
// The partition of one function in a sandbox module (upstream's passes run
// on a copy, and the function changes only once the copy is whole), with
// fp4train-partition's preparation and propagation before it; and the
// layout of a sharded step's boundary that hosts read from the same
// preparation (fp4train/Sharding/Layout.h).
//
//===----------------------------------------------------------------------===//

#include "Partition.h"

#include "fp4train/Dialect/FP4Train/IR/FP4TrainDialect.h"
#include "fp4train/Sharding/Layout.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Shard/Transforms/Passes.h"
#include "mlir/IR/Verifier.h"

using namespace mlir;
using namespace mlir::fp4train;
using namespace mlir::fp4train::sharding;

/// fp4train-partition's preparation of the sandbox's function (see each
/// step), then sharding-propagation (forward, then backward, so that what
/// only the users of a value decide, such as the zeros a contraction
/// accumulates into, is annotated too) and the checks shard-partition
/// relies on.
LogicalResult sharding::prepareAndPropagate(Sandbox &sandbox) {
  auto function = cast<func::FuncOp>(sandbox.copy);
  // Shards of a grid of unknown shape have no static type, and MLIR 22's
  // MPI lowering cannot index its processes.
  SymbolTableCollection symbols;
  WalkResult unfit = function.walk([&](shard::ShardingOp sharding) {
    shard::GridOp grid =
        shard::getGrid(sharding, sharding.getGridAttr(), symbols);
    if (grid && llvm::any_of(grid.getShape(), ShapedType::isDynamic)) {
      sharding.emitOpError("splits over grid @")
          << grid.getSymName()
          << ", whose shape is not static: fp4train partitions over grids "
             "of static shape";
      return WalkResult::interrupt();
    }
    if (grid && failed(checkGridShape(sharding, grid)))
      return WalkResult::interrupt();
    return WalkResult::advance();
  });
  // The user's annotations, before propagation carries them on.
  if (unfit.wasInterrupted() ||
      function
          .walk([&](shard::ShardOp annotation) {
            return failed(checkAnnotation(annotation, symbols))
                       ? WalkResult::interrupt()
                       : WalkResult::advance();
          })
          .wasInterrupted())
    return failure();
  dropConstantIndexedUnitDims(function);
  isolateGenericBodies(function);
  indexLoopsByIotas(function);
  normalizeMaskedSums(function);
  privatizeInits(function);
  if (failed(annotateWholeValues(function)))
    return failure();
  gatherCapturedTensors(function);
  shard::ShardingPropagationOptions options;
  options.traversal = shard::TraversalOrder::ForwardBackward;
  if (failed(sandbox.run(shard::createShardingPropagation(options))))
    return failure();
  dropScalarAnnotations(function);
  annotateUnusedResults(function);
  if (failed(mlir::verify(function)))
    return failure();
  for (Block &block : function.getBody())
    if (llvm::any_of(block, llvm::IsaPred<shard::ShardOp>) &&
        failed(checkBlock(block, function)))
      return failure();
  return success();
}

/// [SH10] MLIR 22 partitions only splat constants (another constant fails
/// the whole partition without a word). Each constant of distinct elements,
/// annotated whole by the preparation (annotateWholeValues), becomes a new
/// argument of `function` for the partition, which keeps a whole argument
/// as it is; returns their values, the arguments appended in this order.
static SmallVector<DenseElementsAttr> liftConstants(func::FuncOp function) {
  SmallVector<DenseElementsAttr> lifted;
  SmallVector<arith::ConstantOp> constants;
  function.walk([&](arith::ConstantOp constant) {
    if (isDistinctConstant(constant))
      constants.push_back(constant);
  });
  for (arith::ConstantOp constant : constants) {
    unsigned index = function.getNumArguments();
    if (failed(function.insertArgument(index, constant.getType(), {},
                                       constant.getLoc())))
      continue;
    constant.replaceAllUsesWith(function.getArgument(index));
    lifted.push_back(cast<DenseElementsAttr>(constant.getValue()));
    constant.erase();
  }
  return lifted;
}

/// Makes the last `constants.size()` arguments of the partitioned
/// `function` constants again (whole on every process).
static LogicalResult restoreConstants(func::FuncOp function,
                                      ArrayRef<DenseElementsAttr> constants) {
  unsigned first = function.getNumArguments() - constants.size();
  OpBuilder b = OpBuilder::atBlockBegin(&function.getBody().front());
  llvm::BitVector erased(function.getNumArguments());
  for (auto [offset, value] : llvm::enumerate(constants)) {
    BlockArgument argument = function.getArgument(first + offset);
    argument.replaceAllUsesWith(
        arith::ConstantOp::create(b, argument.getLoc(), value));
    erased.set(first + offset);
  }
  return function.eraseArguments(erased);
}

/// Runs upstream's shard-partition on a copy of `function` and moves the
/// result into `function` once it is whole; `prepare` first prepares and
/// propagates (prepareAndPropagate), otherwise the annotations must be
/// complete and checked.
LogicalResult sharding::partitionInSandbox(FunctionOpInterface function,
                                           bool prepare) {
  Sandbox sandbox(function);
  FunctionOpInterface copy = sandbox.copy;
  if (prepare && failed(prepareAndPropagate(sandbox)))
    return failure();
  auto copyFunction = cast<func::FuncOp>(copy.getOperation());
  SmallVector<DenseElementsAttr> constants = liftConstants(copyFunction);
  if (failed(sandbox.run(shard::createPartition())) ||
      failed(restoreConstants(copyFunction, constants)))
    return failure();
  // Checked before the verifier, which would print the broken function.
  if (Operation *broken = findUnpartitionedUse(copy))
    return function.emitOpError("cannot be partitioned: shard-partition "
                                "leaves '")
           << broken->getName()
           << "' reading a value it did not partition (an op whose "
              "sharding model MLIR 22 lacks or gets wrong)";
  if (failed(mlir::verify(copy)))
    return failure();
  function.getFunctionBody().takeBody(copy.getFunctionBody());
  function.setType(copy.getFunctionType());
  // The boundary the host passes: kept through bufferization and the LLVM
  // lowering, which erase the tensor types.
  function->setAttr(FP4TrainDialect::kProcessTypeAttrName,
                    TypeAttr::get(copy.getFunctionType()));
  return success();
}

/// The layout of one boundary value: its shape and, when it is a tensor of
/// rank > 0, the split axes of its annotation `sharding`.
static BoundaryLayout getBoundaryLayout(Type type, Value sharding) {
  BoundaryLayout layout;
  auto ranked = dyn_cast<RankedTensorType>(type);
  if (!ranked)
    return layout;
  layout.globalShape.assign(ranked.getShape().begin(), ranked.getShape().end());
  layout.splitAxes.resize(ranked.getRank());
  if (!sharding)
    return layout;
  for (auto [dim, axes] : llvm::enumerate(
           getSplitAxes(shard::Sharding(sharding), ranked.getRank())))
    layout.splitAxes[dim].assign(axes.begin(), axes.end());
  return layout;
}

FailureOr<std::optional<StepLayout>>
mlir::fp4train::getStepLayout(func::FuncOp function) {
  auto module = function->getParentOfType<ModuleOp>();
  SmallVector<shard::GridOp> grids;
  if (module)
    grids = llvm::to_vector(module.getOps<shard::GridOp>());
  // fp4train-partition leaves a function without annotations alone.
  bool annotated =
      function.walk([](shard::ShardOp) { return WalkResult::interrupt(); })
          .wasInterrupted();
  if (grids.empty() || !annotated)
    return std::optional<StepLayout>();
  if (grids.size() != 1)
    return function.emitOpError("runs on ")
           << grids.size() << " grids; a host runs a step on one";
  shard::GridOp grid = grids.front();
  if (grid.getRank() == 0 || llvm::any_of(grid.getShape(), [](int64_t n) {
        return ShapedType::isDynamic(n);
      }))
    return function.emitOpError("runs on grid @")
           << grid.getSymName() << " of no static shape";

  Sandbox sandbox(function);
  if (failed(prepareAndPropagate(sandbox)))
    return failure();
  auto copy = cast<func::FuncOp>(sandbox.copy);
  StepLayout layout;
  layout.grid = grid.getSymName().str();
  layout.gridShape.assign(grid.getShape().begin(), grid.getShape().end());
  for (BlockArgument argument : copy.getArguments()) {
    Value sharding;
    if (needsAnnotation(argument))
      sharding =
          cast<shard::ShardOp>(*argument.getUsers().begin()).getSharding();
    layout.arguments.push_back(getBoundaryLayout(argument.getType(), sharding));
  }
  // Every tensor a return takes comes from a shard.shard (checkBlock): the
  // split the partitioned function returns it with.
  copy.walk([&](func::ReturnOp ret) {
    for (Value operand : ret.getOperands()) {
      Value sharding;
      if (auto annotation = operand.getDefiningOp<shard::ShardOp>())
        sharding = annotation.getSharding();
      layout.results.push_back(getBoundaryLayout(operand.getType(), sharding));
    }
    return WalkResult::interrupt();
  });
  return std::optional<StepLayout>(std::move(layout));
}
