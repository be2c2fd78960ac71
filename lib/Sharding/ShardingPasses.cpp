//===- ShardingPasses.cpp - Partitioning steps and lowering them to MPI ---===//
//
// shard-partition behind its checks (MLIR 22's pass assumes a fully
// annotated function and asserts, or without assertions dereferences, where
// it is not), fp4train-partition (the partition of the functions that hold
// annotations) and fp4train-shard-to-mpi (upstream's conversion, then the
// grids it leaves behind).
//
//===----------------------------------------------------------------------===//

#include "fp4train/Sharding/Passes.h"

#include "fp4train/Sharding/Layout.h"

#include "ShardingUtils.h"

#include "fp4train/Dialect/FP4Train/IR/FP4TrainDialect.h"
#include "fp4train/Dialect/FP4Train/Transforms/RoleAnalysis.h"

#include "mlir/Analysis/SliceAnalysis.h"
#include "mlir/Conversion/ConvertToLLVM/ToLLVMPass.h"
#include "mlir/Conversion/ShardToMPI/ShardToMPI.h"
#include "mlir/Dialect/DLTI/DLTI.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Shard/Transforms/Passes.h"
#include "mlir/Dialect/Shard/Transforms/Transforms.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "mlir/Transforms/RegionUtils.h"

namespace mlir::fp4train {
#define GEN_PASS_DEF_CHECKEDPARTITION
#define GEN_PASS_DEF_FP4TRAINSHARDSTEP
#define GEN_PASS_DEF_FP4TRAINPARTITION
#define GEN_PASS_DEF_FP4TRAINSHARDTOMPI
#define GEN_PASS_DEF_FP4TRAINMPITOLLVM
#include "fp4train/Sharding/Passes.h.inc"
} // namespace mlir::fp4train

using namespace mlir;
using namespace mlir::fp4train;
using namespace mlir::fp4train::sharding;
using shard::ShardingArray;

/// A ranked tensor of rank > 0: what the pass expects annotations on.
static bool needsAnnotation(Value value) {
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

static LogicalResult checkBlock(Block &block, Operation *function) {
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
  }
  return success();
}

/// The first op of `function` that uses a value the function does not
/// define: what MLIR 22's partition leaves when a model does not map one of
/// its results. (The verifier would report it by printing the function,
/// which dereferences the missing type.)
static Operation *findUnpartitionedUse(FunctionOpInterface function) {
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

/// Removes the annotations upstream's propagation puts on scalars: its
/// linalg models annotate a scalar operand (the value of a linalg.fill)
/// with a sharding that names no grid, which does not verify.
static void dropScalarAnnotations(FunctionOpInterface function) {
  SmallVector<shard::ShardOp> scalars;
  // The op's accessors assume the ranked tensor its definition requires.
  function.walk([&](shard::ShardOp annotation) {
    if (!isa<RankedTensorType>(annotation->getOperand(0).getType()))
      scalars.push_back(annotation);
  });
  for (shard::ShardOp annotation : scalars) {
    Operation *sharding = annotation->getOperand(1).getDefiningOp();
    annotation->getResult(0).replaceAllUsesWith(annotation->getOperand(0));
    annotation.erase();
    if (sharding && sharding->use_empty())
      sharding->erase();
  }
}

/// Makes the bodies of the linalg.generic ops of `function` read only their
/// own operands. MLIR 22's linalg partition clones an op with a mapping of
/// its operands alone, so a body that reads a value defined outside it (a
/// constant, the learning rate) would keep reading the unpartitioned
/// function. Constants are cloned into the body; other scalars become
/// rank-0 tensor inputs, filled by `linalg.fill` (upstream's models give a
/// scalar input of linalg.generic, and the operand of tensor.splat, a
/// sharding without a grid). Nothing computed changes.
static void isolateGenericBodies(func::FuncOp function) {
  MLIRContext *ctx = function.getContext();
  IRRewriter rewriter(ctx);
  SmallVector<linalg::GenericOp> generics;
  function.walk(
      [&](linalg::GenericOp generic) { generics.push_back(generic); });
  for (linalg::GenericOp generic : generics) {
    Region &region = generic.getRegion();
    llvm::SetVector<Value> captured;
    getUsedValuesDefinedAbove(region, captured);
    Block &body = region.front();
    SmallVector<Value> scalars;
    for (Value value : captured) {
      Operation *producer = value.getDefiningOp();
      if (producer && producer->hasTrait<OpTrait::ConstantLike>()) {
        rewriter.setInsertionPointToStart(&body);
        Value copy = rewriter.clone(*producer)->getResult(0);
        replaceAllUsesInRegionWith(value, copy, region);
      } else if (value.getType().isIntOrIndexOrFloat()) {
        scalars.push_back(value);
      }
    }
    if (scalars.empty())
      continue;
    unsigned numInputs = generic.getNumDpsInputs();
    SmallVector<Value> inputs(generic.getDpsInputs());
    SmallVector<AffineMap> maps = generic.getIndexingMapsArray();
    AffineMap scalarMap = AffineMap::get(generic.getNumLoops(), 0, {}, ctx);
    for (auto [index, scalar] : llvm::enumerate(scalars)) {
      BlockArgument argument = body.insertArgument(
          numInputs + index, scalar.getType(), scalar.getLoc());
      replaceAllUsesInRegionWith(scalar, argument, region);
      inputs.push_back(scalar);
      maps.insert(maps.begin() + numInputs + index, scalarMap);
    }
    rewriter.setInsertionPoint(generic);
    auto isolated = linalg::GenericOp::create(
        rewriter, generic.getLoc(), generic.getResultTypes(), inputs,
        generic.getDpsInits(), maps, generic.getIteratorTypesArray(),
        /*bodyBuild=*/nullptr);
    isolated.getRegion().takeBody(region);
    isolated->setDiscardableAttrs(generic->getDiscardableAttrDictionary());
    rewriter.replaceOp(generic, isolated->getResults());
  }
}

/// Rewrites the masked accumulation `select(c, out + x, out)` of a linalg
/// body (a scatter-add: an embedding's gradient) into
/// `out + select(c, x, -0.0)`. -0.0 is the exact identity of addf, so every
/// result keeps its bits, and the body combines with one op, the form
/// MLIR 22's partition of a split reduction needs (checkSplitReduction).
static void normalizeMaskedSums(func::FuncOp function) {
  function.walk([](linalg::GenericOp generic) {
    if (generic.getNumDpsInits() != 1)
      return;
    BlockArgument out = generic.getRegionOutputArgs().front();
    auto yield = cast<linalg::YieldOp>(generic.getBody()->getTerminator());
    auto select = yield.getOperand(0).getDefiningOp<arith::SelectOp>();
    if (!select || !select->hasOneUse())
      return;
    bool keepsIfFalse = select.getFalseValue() == out;
    if (keepsIfFalse == (select.getTrueValue() == out))
      return;
    Value combined =
        keepsIfFalse ? select.getTrueValue() : select.getFalseValue();
    auto add = combined.getDefiningOp<arith::AddFOp>();
    if (!add || !add->hasOneUse() ||
        (add.getLhs() == out) == (add.getRhs() == out))
      return;
    bool outFirst = add.getLhs() == out;
    Value x = outFirst ? add.getRhs() : add.getLhs();
    auto type = cast<FloatType>(x.getType());
    OpBuilder b(select);
    Location loc = select.getLoc();
    Value identity = arith::ConstantOp::create(
        b, loc,
        b.getFloatAttr(type, APFloat::getZero(type.getFloatSemantics(),
                                              /*Negative=*/true)));
    Value masked = arith::SelectOp::create(b, loc, select.getCondition(),
                                           keepsIfFalse ? x : identity,
                                           keepsIfFalse ? identity : x);
    Value sum =
        arith::AddFOp::create(b, loc, outFirst ? out : masked,
                              outFirst ? masked : out, add.getFastmath());
    yield->setOperand(0, sum);
    select.erase();
    add.erase();
  });
}

/// Gives every use of a tensor.empty or a constant linalg.fill of `function`
/// its own copy. Steps written by hand share one zero tensor between
/// contractions of different layouts (activations split by the batch,
/// weight gradients replicated), which propagation would split one way and
/// then reshard (gather) for the others; a copy per use takes each user's
/// sharding. Nothing computed changes.
static void privatizeInits(func::FuncOp function) {
  SmallVector<Operation *> shared;
  function.walk([&](Operation *op) {
    if (isa<tensor::EmptyOp, linalg::FillOp>(op) && op->getNumResults() == 1 &&
        !op->getResult(0).hasOneUse() && !op->getResult(0).use_empty())
      shared.push_back(op);
  });
  OpBuilder b(function.getContext());
  for (Operation *op : shared) {
    SmallVector<OpOperand *> uses =
        llvm::map_to_vector(llvm::drop_begin(op->getResult(0).getUses()),
                            [](OpOperand &use) { return &use; });
    for (OpOperand *use : uses) {
      b.setInsertionPoint(op);
      IRMapping map;
      // A fill of a shared tensor.empty gets its own empty as well.
      if (auto fill = dyn_cast<linalg::FillOp>(op))
        if (Operation *init = fill.getOutputs()[0].getDefiningOp();
            init && isa<tensor::EmptyOp>(init))
          map.map(init->getResult(0), b.clone(*init)->getResult(0));
      use->set(b.clone(*op, map)->getResult(0));
    }
  }
}

/// Gives every tensor argument of `function` that is not annotated on its
/// own (one use, a shard.shard) a replicated annotation on `grid` that all
/// its uses read: an argument nothing splits is whole on every process.
static LogicalResult annotateArguments(func::FuncOp function) {
  SmallVector<shard::GridOp> grids;
  SymbolTableCollection symbols;
  function.walk([&](shard::ShardingOp sharding) {
    shard::GridOp grid =
        shard::getGrid(sharding, sharding.getGridAttr(), symbols);
    if (grid && !llvm::is_contained(grids, grid))
      grids.push_back(grid);
  });
  Block &entry = function.getBody().front();
  OpBuilder b = OpBuilder::atBlockBegin(&entry);
  Value replicated;
  for (BlockArgument argument : entry.getArguments()) {
    if (!needsAnnotation(argument) ||
        (argument.hasOneUse() &&
         isa<shard::ShardOp>(*argument.getUsers().begin())))
      continue;
    if (grids.size() != 1)
      return function.emitOpError("uses ")
             << grids.size() << " grids; annotate argument "
             << argument.getArgNumber()
             << " with a shard.shard that names its own";
    if (!replicated)
      replicated = shard::ShardingOp::create(
          b, function.getLoc(),
          makeSharding(FlatSymbolRefAttr::get(function.getContext(),
                                              grids.front().getSymName()),
                       {}, function.getContext()));
    auto annotation =
        shard::ShardOp::create(b, argument.getLoc(), argument, replicated);
    argument.replaceAllUsesExcept(annotation.getResult(), annotation);
  }
  return success();
}

namespace {

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

} // namespace

/// fp4train-partition's preparation of the sandbox's function (see each
/// step), then sharding-propagation (forward, then backward, so that what
/// only the users of a value decide, such as the zeros a contraction
/// accumulates into, is annotated too) and the checks shard-partition
/// relies on.
static LogicalResult prepareAndPropagate(Sandbox &sandbox) {
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
  isolateGenericBodies(function);
  normalizeMaskedSums(function);
  privatizeInits(function);
  if (failed(annotateArguments(function)))
    return failure();
  shard::ShardingPropagationOptions options;
  options.traversal = shard::TraversalOrder::ForwardBackward;
  if (failed(sandbox.run(shard::createShardingPropagation(options))))
    return failure();
  dropScalarAnnotations(function);
  if (failed(mlir::verify(function)))
    return failure();
  for (Block &block : function.getBody())
    if (llvm::any_of(block, llvm::IsaPred<shard::ShardOp>) &&
        failed(checkBlock(block, function)))
      return failure();
  return success();
}

/// Runs upstream's shard-partition on a copy of `function` and moves the
/// result into `function` once it is whole; `prepare` first prepares and
/// propagates (prepareAndPropagate), otherwise the annotations must be
/// complete and checked.
static LogicalResult partitionInSandbox(FunctionOpInterface function,
                                        bool prepare) {
  Sandbox sandbox(function);
  FunctionOpInterface copy = sandbox.copy;
  if (prepare && failed(prepareAndPropagate(sandbox)))
    return failure();
  if (failed(sandbox.run(shard::createPartition())))
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

/// Whether `module` holds an op of the mpi dialect.
static bool usesMPI(ModuleOp module) {
  return module
      .walk([](Operation *op) {
        return isa<mpi::MPIDialect>(op->getDialect()) ? WalkResult::interrupt()
                                                      : WalkResult::advance();
      })
      .wasInterrupted();
}

/// The MPI lowering asks the module which MPI's ABI to call; this project
/// runs on MPICH (scripts/setup.sh). A module that names its own keeps it.
static void setDefaultMPIImplementation(ModuleOp module) {
  constexpr llvm::StringLiteral kMapAttrName = "dlti.map";
  if (module->hasAttr(kMapAttrName))
    return;
  MLIRContext *ctx = module.getContext();
  DataLayoutEntryInterface entry =
      DataLayoutEntryAttr::get(StringAttr::get(ctx, "MPI:Implementation"),
                               StringAttr::get(ctx, "MPICH"));
  module->setAttr(kMapAttrName, MapAttr::get(ctx, {entry}));
}

struct ShardStepPass
    : public mlir::fp4train::impl::FP4TrainShardStepBase<ShardStepPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    int64_t data = dp, tensor = tp;
    auto fail = [&](const Twine &message) {
      module.emitError("fp4train-shard-step: ") << message;
      signalPassFailure();
    };
    if (data < 1 || tensor < 1)
      return fail("dp and tp must be at least 1, got dp=" + Twine(data) +
                  " tp=" + Twine(tensor));
    // ARG:DIM of each parameter split across the tp processes.
    llvm::SmallDenseMap<unsigned, int64_t> tensorSplits;
    for (const std::string &entry : tpSplit) {
      auto [arg, dim] = StringRef(entry).split(':');
      unsigned argNumber;
      int64_t dimension;
      if (arg.getAsInteger(10, argNumber) || dim.getAsInteger(10, dimension) ||
          dimension < 0 ||
          !tensorSplits.try_emplace(argNumber, dimension).second)
        return fail("tp-split entry '" + entry +
                    "' is not ARG:DIM (argument and dimension numbers, each "
                    "argument once)");
    }
    if (tensor > 1 && tensorSplits.empty())
      return fail("tp=" + Twine(tensor) +
                  " needs tp-split, the parameters to split (ARG:DIM)");
    if (tensor == 1 && !tensorSplits.empty())
      return fail("tp-split needs tp greater than 1");
    if (data == 1 && tensor == 1)
      return;

    StringRef gridName = tensor == 1 ? "dp" : data == 1 ? "tp" : "dp_tp";
    if (SymbolTable::lookupSymbolIn(module, gridName))
      return fail("the module already has a symbol named '" + gridName + "'");
    SmallVector<int64_t> shape;
    std::optional<shard::GridAxis> dataAxis, tensorAxis;
    if (data > 1) {
      dataAxis = shape.size();
      shape.push_back(data);
    }
    if (tensor > 1) {
      tensorAxis = shape.size();
      shape.push_back(tensor);
    }
    MLIRContext *ctx = module.getContext();
    OpBuilder b = OpBuilder::atBlockBegin(module.getBody());
    auto grid = shard::GridOp::create(b, module.getLoc(), gridName, shape);
    auto gridRef = FlatSymbolRefAttr::get(ctx, grid.getSymName());
    // The sharding that splits dimension `dim` of a rank-`rank` tensor
    // along `axis`.
    auto splitAlong = [&](int64_t rank, int64_t dim, shard::GridAxis axis) {
      shard::ShardingArray axes(rank);
      axes[dim].push_back(axis);
      return makeSharding(gridRef, axes, ctx);
    };

    for (auto function : module.getOps<func::FuncOp>()) {
      if (function.isExternal())
        continue;
      auto isParam = [&](unsigned i) {
        return bool(function.getArgAttr(i, FP4TrainDialect::kParamAttrName));
      };
      if (llvm::none_of(llvm::seq(function.getNumArguments()), isParam))
        continue;
      for (auto [argNumber, dim] : tensorSplits) {
        auto type = argNumber < function.getNumArguments()
                        ? dyn_cast<RankedTensorType>(
                              function.getArgumentTypes()[argNumber])
                        : RankedTensorType();
        if (!type || !isParam(argNumber) || dim >= type.getRank())
          return fail("tp-split " + Twine(argNumber) + ":" + Twine(dim) +
                      " does not name a dimension of a parameter tensor of @" +
                      function.getName());
      }
      Block &entry = function.getBody().front();
      OpBuilder body = OpBuilder::atBlockBegin(&entry);
      for (BlockArgument argument : entry.getArguments()) {
        auto type = dyn_cast<RankedTensorType>(argument.getType());
        unsigned number = argument.getArgNumber();
        if (!type || type.getRank() == 0)
          continue;
        std::optional<shard::Sharding> sharding;
        int64_t dim = 0, parts = 1;
        StringRef option;
        if (!isParam(number) && dataAxis) {
          sharding = splitAlong(type.getRank(), 0, *dataAxis);
          parts = data;
          option = "dp";
        } else if (auto it = tensorSplits.find(number);
                   it != tensorSplits.end()) {
          dim = it->second;
          sharding = splitAlong(type.getRank(), dim, *tensorAxis);
          parts = tensor;
          option = "tp";
        }
        if (!sharding)
          continue;
        if (type.isDynamicDim(dim) || type.getDimSize(dim) % parts != 0) {
          function.emitOpError("cannot split argument ")
              << number << " (" << type << ") along dimension " << dim
              << " into " << parts << " equal parts (fp4train-shard-step "
              << option << "=" << parts << ")";
          return signalPassFailure();
        }
        Value value =
            shard::ShardingOp::create(body, function.getLoc(), *sharding);
        auto annotation =
            shard::ShardOp::create(body, argument.getLoc(), argument, value,
                                   /*annotate_for_users=*/true);
        argument.replaceAllUsesExcept(annotation.getResult(), annotation);
      }
      annotateParameterResults(function, gridRef, tensorSplits, tensorAxis);
    }
  }

  /// A training step returns the loss and then one tensor per parameter,
  /// in order (its update or gradient, of the parameter's type): each such
  /// result gets its parameter's split, so that the partition gathers or
  /// slices it into the layout of the parameter it belongs to (a bias
  /// gradient summed over split features comes back whole for a whole
  /// bias).
  void annotateParameterResults(
      func::FuncOp function, FlatSymbolRefAttr grid,
      const llvm::SmallDenseMap<unsigned, int64_t> &tensorSplits,
      std::optional<shard::GridAxis> tensorAxis) {
    SmallVector<unsigned> params;
    for (unsigned i : llvm::seq(function.getNumArguments()))
      if (function.getArgAttr(i, FP4TrainDialect::kParamAttrName))
        params.push_back(i);
    if (function.getNumResults() != params.size() + 1)
      return;
    MLIRContext *ctx = function.getContext();
    function.walk([&](func::ReturnOp ret) {
      OpBuilder b(ret);
      for (auto [result, param] : llvm::enumerate(params)) {
        OpOperand &operand = ret->getOpOperand(result + 1);
        auto type = dyn_cast<RankedTensorType>(operand.get().getType());
        if (!type || type.getRank() == 0 ||
            type != function.getArgumentTypes()[param])
          continue;
        // A whole parameter is replicated.
        shard::ShardingArray axes(type.getRank());
        if (auto it = tensorSplits.find(param); it != tensorSplits.end())
          axes[it->second].push_back(*tensorAxis);
        Value sharding = shard::ShardingOp::create(
            b, ret.getLoc(), makeSharding(grid, axes, ctx));
        operand.set(
            shard::ShardOp::create(b, ret.getLoc(), operand.get(), sharding)
                .getResult());
      }
    });
  }
};

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

/// [SH7] Lowers each shard.all_gather to an all-reduce that MLIR 22 does
/// lower: every process places its shard, as integers of the element's
/// width, at its position in a tensor of zeros of the gathered shape, and a
/// bitwise-or all-reduce over the gather's grid axes combines them. Each
/// element has one process that holds it and zeros elsewhere, so the result
/// is the gathered tensor bit for bit (negative zeros and NaN payloads
/// included). It moves the whole tensor through the reduction instead of
/// each shard once: MLIR 22's mpi dialect has no allgather.
static LogicalResult lowerAllGathers(ModuleOp module) {
  SmallVector<shard::AllGatherOp> gathers;
  module.walk([&](shard::AllGatherOp gather) { gathers.push_back(gather); });
  SymbolTableCollection symbols;
  for (shard::AllGatherOp gather : gathers) {
    auto shardType = cast<RankedTensorType>(gather.getInput().getType());
    auto wholeType = cast<RankedTensorType>(gather.getResult().getType());
    Type element = shardType.getElementType();
    unsigned bits =
        element.isIntOrFloat() ? element.getIntOrFloatBitWidth() : 0;
    if (!llvm::is_contained({8u, 16u, 32u, 64u}, bits))
      return gather.emitOpError("gathers elements of type ")
             << element << ", which have no MPI integer type of their width";
    if (!shardType.hasStaticShape() || !wholeType.hasStaticShape())
      return gather.emitOpError("gathers a tensor of dynamic shape");
    shard::GridOp grid = shard::getGrid(gather, gather.getGridAttr(), symbols);
    if (!grid)
      return failure();

    ImplicitLocOpBuilder b(gather.getLoc(), gather);
    Type integer = b.getIntegerType(bits);
    auto shardBits = shardType.clone(integer);
    auto wholeBits = wholeType.clone(integer);
    Value shard = gather.getInput();
    if (element != integer)
      shard = arith::BitcastOp::create(b, shardBits, shard);
    Value zeros = arith::ConstantOp::create(
        b, DenseElementsAttr::get(wholeBits, b.getIntegerAttr(integer, 0)));
    ShardingArray axes(shardType.getRank());
    int64_t gatherAxis = gather.getGatherAxis().getSExtValue();
    axes[gatherAxis].assign(gather.getGridAxes().begin(),
                            gather.getGridAxes().end());
    SmallVector<OpFoldResult> offsets = getAsOpFoldResult(
        buildShardOrigin(b, grid, axes, shardType.getShape()));
    SmallVector<OpFoldResult> sizes =
        getAsIndexOpFoldResult(b.getContext(), shardType.getShape());
    SmallVector<OpFoldResult> strides(shardType.getRank(), b.getIndexAttr(1));
    Value placed =
        tensor::InsertSliceOp::create(b, shard, zeros, offsets, sizes, strides);
    Value combined = shard::AllReduceOp::create(
        b, placed, gather.getGrid(), gather.getGridAxes(),
        shard::ReductionKind::BitwiseOr);
    if (element != integer)
      combined = arith::BitcastOp::create(b, wholeType, combined);
    gather.getResult().replaceAllUsesWith(combined);
    gather.erase();
  }
  return success();
}

struct ShardToMPIPass
    : public mlir::fp4train::impl::FP4TrainShardToMPIBase<ShardToMPIPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    // Upstream's conversion fails on the first op it cannot lower, with a
    // legalization error; name it first.
    WalkResult unsupported = module.walk([](Operation *op) {
      if (op->getDialect() &&
          op->getDialect()->getNamespace() ==
              shard::ShardDialect::getDialectNamespace() &&
          !isa<shard::GridOp, shard::ShardingOp, shard::AllReduceOp,
               shard::AllGatherOp, shard::ProcessMultiIndexOp,
               shard::ProcessLinearIndexOp, shard::GridShapeOp,
               shard::NeighborsLinearIndicesOp, shard::UpdateHaloOp,
               shard::ShardShapeOp, shard::GetShardingOp, shard::AllSliceOp>(
              op)) {
        op->emitOpError("has no MPI lowering in MLIR 22 (it lowers "
                        "shard.all_reduce, shard.all_slice, the process "
                        "indices, the grid shape and halo updates; fp4train "
                        "shard.all_gather): a partitioned step must not "
                        "need it");
        return WalkResult::interrupt();
      }
      // MLIR 22 maps the other kinds (generic, average) to no MPI
      // operation and reaches llvm_unreachable.
      if (auto reduce = dyn_cast<shard::AllReduceOp>(op)) {
        shard::ReductionKind kind = reduce.getReduction();
        if (kind == shard::ReductionKind::Generic ||
            kind == shard::ReductionKind::Average) {
          reduce.emitOpError("reduces by '")
              << shard::stringifyReductionKind(kind)
              << "', which MLIR 22's MPI lowering has no MPI operation for";
          return WalkResult::interrupt();
        }
      }
      return WalkResult::advance();
    });
    if (unsupported.wasInterrupted())
      return signalPassFailure();
    if (failed(lowerAllGathers(module)))
      return signalPassFailure();

    // MLIR 22's MPI lowering takes no rank-0 buffer: reduce a scalar (the
    // loss) as a one-element vector.
    SmallVector<shard::AllReduceOp> scalarReductions;
    module.walk([&](shard::AllReduceOp reduce) {
      auto type = dyn_cast<RankedTensorType>(reduce.getInput().getType());
      if (type && type.getRank() == 0)
        scalarReductions.push_back(reduce);
    });
    for (shard::AllReduceOp reduce : scalarReductions) {
      OpBuilder b(reduce);
      Location loc = reduce.getLoc();
      auto type = cast<RankedTensorType>(reduce.getInput().getType());
      Value vector = tensor::ExpandShapeOp::create(
          b, loc, RankedTensorType::get({1}, type.getElementType()),
          reduce.getInput(), ArrayRef<ReassociationIndices>{});
      Value reduced = shard::AllReduceOp::create(
          b, loc, vector, reduce.getGrid(), reduce.getGridAxes(),
          reduce.getReduction());
      reduce.getResult().replaceAllUsesWith(tensor::CollapseShapeOp::create(
          b, loc, reduce.getResult().getType(), reduced,
          ArrayRef<ReassociationIndices>{}));
      reduce.erase();
    }

    // A slice needs no communication: each process takes its part (upstream
    // patterns, which convert-shard-to-mpi does not run).
    SymbolTableCollection symbols;
    RewritePatternSet slices(module.getContext());
    shard::populateAllSliceOpLoweringPatterns(slices, symbols);
    if (failed(applyPatternsGreedily(module, std::move(slices))))
      return signalPassFailure();

    OpPassManager pipeline(ModuleOp::getOperationName());
    pipeline.addPass(createConvertShardToMPIPass());
    if (failed(runPipeline(pipeline, module)))
      return signalPassFailure();
    // MLIR 22's conversion reports an op it cannot legalize (the process
    // index on a grid of dynamic shape) without failing.
    WalkResult left = module.walk([](Operation *op) {
      if (op->getDialect() &&
          op->getDialect()->getNamespace() ==
              shard::ShardDialect::getDialectNamespace() &&
          !isa<shard::GridOp, shard::ShardingOp>(op)) {
        op->emitOpError("is left by convert-shard-to-mpi");
        return WalkResult::interrupt();
      }
      return WalkResult::advance();
    });
    if (left.wasInterrupted())
      return signalPassFailure();

    // The grids have no LLVM translation; once nothing refers to them they
    // are gone.
    for (auto grid : llvm::make_early_inc_range(module.getOps<shard::GridOp>()))
      if (SymbolTable::symbolKnownUseEmpty(grid, module))
        grid.erase();

    if (usesMPI(module))
      setDefaultMPIImplementation(module);
  }
};

/// [SH6] Gives every `MPI_Comm_split` call of `module` (one per collective
/// upstream's lowering emits) a cache: a module global holding the
/// communicator it made the first time, which later calls of the same call
/// site return without splitting again. Each call site's color and key
/// depend only on the rank and the grid, and every process runs the same
/// call sites in the same order, so every process makes (and afterwards
/// skips) each split together. Without it a long run exhausts MPICH's
/// context ids (about two thousand communicators per process).
static void cacheCommunicatorSplits(ModuleOp module) {
  SmallVector<LLVM::CallOp> splits;
  module.walk([&](LLVM::CallOp call) {
    if (call.getCallee() == "MPI_Comm_split")
      splits.push_back(call);
  });
  if (splits.empty())
    return;
  MLIRContext *ctx = module.getContext();
  Location loc = module.getLoc();
  OpBuilder b = OpBuilder::atBlockEnd(module.getBody());
  Type i8 = IntegerType::get(ctx, 8), i32 = IntegerType::get(ctx, 32);
  auto ptr = LLVM::LLVMPointerType::get(ctx);
  // The communicator's type is the implementation's (i32 for MPICH, a
  // pointer for Open MPI): that of the split's first operand.
  Type comm = splits.front().getArgOperands()[0].getType();

  // i32 split(comm world, i32 color, i32 key, ptr out, ptr cache, ptr ready)
  constexpr llvm::StringLiteral kHelper = "__fp4train_comm_split_cached";
  auto helper = LLVM::LLVMFuncOp::create(
      b, loc, kHelper,
      LLVM::LLVMFunctionType::get(i32, {comm, i32, i32, ptr, ptr, ptr}),
      LLVM::Linkage::Internal);
  Block *entry = helper.addEntryBlock(b);
  Region &body = helper.getBody();
  Block *hit = b.createBlock(&body), *miss = b.createBlock(&body),
        *keep = b.createBlock(&body), *done = b.createBlock(&body);
  auto args = entry->getArguments();
  Value world = args[0], color = args[1], key = args[2], out = args[3],
        cache = args[4], ready = args[5];

  b.setInsertionPointToEnd(entry);
  Value zero8 = LLVM::ConstantOp::create(b, loc, i8, 0);
  Value made =
      LLVM::ICmpOp::create(b, loc, LLVM::ICmpPredicate::ne,
                           LLVM::LoadOp::create(b, loc, i8, ready), zero8);
  LLVM::CondBrOp::create(b, loc, made, hit, miss);

  b.setInsertionPointToEnd(hit);
  LLVM::StoreOp::create(b, loc, LLVM::LoadOp::create(b, loc, comm, cache), out);
  LLVM::ReturnOp::create(b, loc,
                         ValueRange{LLVM::ConstantOp::create(b, loc, i32, 0)});

  b.setInsertionPointToEnd(miss);
  Value code = LLVM::CallOp::create(b, loc, TypeRange{i32}, "MPI_Comm_split",
                                    ValueRange{world, color, key, out})
                   .getResult();
  Value succeeded =
      LLVM::ICmpOp::create(b, loc, LLVM::ICmpPredicate::eq, code,
                           LLVM::ConstantOp::create(b, loc, i32, 0));
  LLVM::CondBrOp::create(b, loc, succeeded, keep, done);

  b.setInsertionPointToEnd(keep);
  LLVM::StoreOp::create(b, loc, LLVM::LoadOp::create(b, loc, comm, out), cache);
  LLVM::StoreOp::create(b, loc, LLVM::ConstantOp::create(b, loc, i8, 1), ready);
  LLVM::BrOp::create(b, loc, done);

  b.setInsertionPointToEnd(done);
  LLVM::ReturnOp::create(b, loc, ValueRange{code});

  for (auto [index, split] : llvm::enumerate(splits)) {
    std::string name = ("__fp4train_comm_" + llvm::Twine(index)).str();
    b.setInsertionPoint(helper);
    auto global = [&](llvm::StringRef suffix, Type type, Attribute init) {
      return LLVM::GlobalOp::create(b, loc, type, /*isConstant=*/false,
                                    LLVM::Linkage::Internal,
                                    (name + suffix).str(), init);
    };
    auto cached = global("", comm, LLVM::ZeroAttr::get(ctx));
    auto flag = global("_ready", i8, b.getIntegerAttr(i8, 0));
    b.setInsertionPoint(split);
    Value cachePtr = LLVM::AddressOfOp::create(b, loc, cached);
    Value readyPtr = LLVM::AddressOfOp::create(b, loc, flag);
    SmallVector<Value> operands(split.getArgOperands());
    operands.append({cachePtr, readyPtr});
    auto call = LLVM::CallOp::create(b, split.getLoc(), helper, operands);
    split.replaceAllUsesWith(call.getResults());
    split.erase();
  }
}

struct MPIToLLVMPass
    : public mlir::fp4train::impl::FP4TrainMPIToLLVMBase<MPIToLLVMPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (!usesMPI(module))
      return;
    setDefaultMPIImplementation(module);
    ConvertToLLVMPassOptions options;
    options.filterDialects = {mpi::MPIDialect::getDialectNamespace().str()};
    OpPassManager pipeline(ModuleOp::getOperationName());
    pipeline.addPass(createConvertToLLVMPass(options));
    if (failed(runPipeline(pipeline, module)))
      return signalPassFailure();
    cacheCommunicatorSplits(module);
    // The conversion is partial: an op it has no pattern for stays, and
    // the casts to its types would be left unreconciled.
    module.walk([&](Operation *op) {
      if (!isa<mpi::MPIDialect>(op->getDialect()))
        return WalkResult::advance();
      op->emitOpError("has no LLVM lowering in MLIR 22 (a rank-0 buffer or "
                      "an op the MPI lowering lacks, such as mpi.comm_size)");
      signalPassFailure();
      return WalkResult::interrupt();
    });
  }
};

} // namespace

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

void mlir::fp4train::registerShardingPasses() {
  shard::registerShardingPropagation();
  registerCheckedPartition();
  registerFP4TrainShardStep();
  registerFP4TrainPartition();
  registerFP4TrainShardToMPI();
  registerFP4TrainMPIToLLVM();
}
