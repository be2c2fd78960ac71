//===- PartitionPreparation.cpp - Steps made partitionable ----------------===//
//
// Rewrites fp4train-partition applies to a copy of a step before upstream's
// propagation and partition, each leaving every computed value as it was:
// scalar reads isolated in linalg bodies, loop indices read from iotas,
// masked sums in the form a split
// reduction needs, shared inits privatized, and arguments annotated.
//
//===----------------------------------------------------------------------===//

#include "Partition.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/RegionUtils.h"

using namespace mlir;
using namespace mlir::fp4train;
using namespace mlir::fp4train::sharding;

/// Rewrites each linalg.generic of `function` that indexes an operand with a
/// constant, `(d0, d1, d2) -> (d0, d1, 0)` (the mean of a LayerNorm kept as
/// [B, T, 1], as torch-mlir and autograd-derived graphs write it), into one
/// without those unit dimensions between reshapes (upstream's dropUnitDims:
/// collapse_shape before, expand_shape after). MLIR 22's linalg sharding
/// model has no loop for a constant result and fails on such an op; the
/// reshapes have fp4train's models. Nothing computed changes.
void sharding::dropConstantIndexedUnitDims(func::FuncOp function) {
  SmallVector<linalg::GenericOp> generics;
  function.walk([&](linalg::GenericOp generic) {
    if (llvm::any_of(generic.getIndexingMapsArray(), [](AffineMap map) {
          return llvm::any_of(map.getResults(), [](AffineExpr expr) {
            return isa<AffineConstantExpr>(expr);
          });
        }))
      generics.push_back(generic);
  });
  linalg::ControlDropUnitDims options;
  IRRewriter rewriter(function.getContext());
  for (linalg::GenericOp generic : generics) {
    rewriter.setInsertionPoint(generic);
    FailureOr<linalg::DropUnitDimsResult> result =
        linalg::dropUnitDims(rewriter, generic, options);
    // An op it cannot rewrite (a constant index of a dimension that is not
    // a unit one) stays, and the partition names it.
    if (succeeded(result))
      rewriter.replaceOp(generic, result->replacements);
  }
}

/// Gives each unused tensor result of an op a shard.shard with the sharding
/// the op's model derives from its other annotations. Propagation annotates
/// a result at its uses only, and MLIR 22's partition of the op then
/// dereferences the grid of a result that has none: softmax's argmax, the
/// second result of the max that torch-mlir lowers aten.max.dim to, which
/// nothing reads.
void sharding::annotateUnusedResults(func::FuncOp function) {
  function.walk([&](shard::ShardingInterface op) {
    if (isa<shard::ShardOp>(op) ||
        llvm::none_of(op->getResults(), [](OpResult result) {
          return needsAnnotation(result) && result.use_empty();
        }))
      return;
    std::vector<shard::Sharding> operandShardings, resultShardings;
    for (OpOperand &operand : op->getOpOperands()) {
      FailureOr<std::pair<bool, shard::Sharding>> found =
          shard::getSharding(operand);
      operandShardings.push_back(succeeded(found) ? found->second
                                                  : shard::Sharding());
    }
    for (OpResult result : op->getResults()) {
      FailureOr<std::pair<bool, shard::Sharding>> found =
          shard::getSharding(result);
      resultShardings.push_back(succeeded(found) ? found->second
                                                 : shard::Sharding());
    }
    FailureOr<shard::ShardingOption> option =
        op.getShardingOption(operandShardings, resultShardings);
    if (failed(option) || option->empty)
      return;
    FailureOr<std::vector<shard::Sharding>> annotations =
        op.getShardingAnnotations(*option);
    if (failed(annotations))
      return;
    OpBuilder b(op->getContext());
    b.setInsertionPointAfter(op);
    for (OpResult result : op->getResults()) {
      shard::Sharding sharding =
          (*annotations)[op->getNumOperands() + result.getResultNumber()];
      if (!needsAnnotation(result) || !result.use_empty() || !sharding)
        continue;
      Value value = shard::ShardingOp::create(b, op->getLoc(), sharding);
      shard::ShardOp::create(b, op->getLoc(), result, value);
    }
  });
}

/// Removes the annotations upstream's propagation puts on scalars: its
/// linalg models annotate a scalar operand (the value of a linalg.fill)
/// with a sharding that names no grid, which does not verify.
void sharding::dropScalarAnnotations(FunctionOpInterface function) {
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

/// Replaces `generic` by the same op with `inputs` and indexing `maps` (its
/// inputs' and inits'), which has taken its body, whose block arguments
/// already match them.
static void replaceWithInputs(IRRewriter &rewriter, linalg::GenericOp generic,
                              ValueRange inputs, ArrayRef<AffineMap> maps) {
  rewriter.setInsertionPoint(generic);
  auto replacement = linalg::GenericOp::create(
      rewriter, generic.getLoc(), generic.getResultTypes(), inputs,
      generic.getDpsInits(), maps, generic.getIteratorTypesArray(),
      /*bodyBuild=*/nullptr);
  replacement.getRegion().takeBody(generic.getRegion());
  replacement->setDiscardableAttrs(generic->getDiscardableAttrDictionary());
  rewriter.replaceOp(generic, replacement->getResults());
}

/// Makes the bodies of the linalg.generic ops of `function` read only their
/// own operands. MLIR 22's linalg partition clones an op with a mapping of
/// its operands alone, so a body that reads a value defined outside it (a
/// constant, the learning rate) would keep reading the unpartitioned
/// function. Constants are cloned into the body; other scalars become
/// rank-0 tensor inputs, filled by `linalg.fill` (upstream's models give a
/// scalar input of linalg.generic, and the operand of tensor.splat, a
/// sharding without a grid). Nothing computed changes.
void sharding::isolateGenericBodies(func::FuncOp function) {
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
    replaceWithInputs(rewriter, generic, inputs, maps);
  }
}

/// [SH10] Replaces each `linalg.index` of a linalg.generic body by a read of
/// a constant iota along that loop, a new input of the op. MLIR 22's linalg
/// partition clones the body unchanged, so an index of a split loop would
/// count from 0 on every process (an `arange` over the tokens of a
/// data-parallel step, the places of a scatter over them); the iota is
/// replicated, sliced like any input of the loop, and holds the global
/// positions. Loops of dynamic extent keep their index. Nothing computed
/// changes.
void sharding::indexLoopsByIotas(func::FuncOp function) {
  MLIRContext *ctx = function.getContext();
  IRRewriter rewriter(ctx);
  SmallVector<linalg::GenericOp> generics;
  function.walk([&](linalg::GenericOp generic) {
    if (!generic.getBody()->getOps<linalg::IndexOp>().empty())
      generics.push_back(generic);
  });
  Type i64 = IntegerType::get(ctx, 64);
  for (linalg::GenericOp generic : generics) {
    SmallVector<int64_t> extents = generic.getStaticLoopRanges();
    // The loops whose index the body reads, each once, in order.
    llvm::SetVector<int64_t> loops;
    for (linalg::IndexOp index : generic.getBody()->getOps<linalg::IndexOp>())
      if (!ShapedType::isDynamic(extents[index.getDim()]))
        loops.insert(index.getDim());
    if (loops.empty())
      continue;
    rewriter.setInsertionPoint(generic);
    unsigned numInputs = generic.getNumDpsInputs();
    SmallVector<Value> inputs(generic.getDpsInputs());
    SmallVector<AffineMap> maps = generic.getIndexingMapsArray();
    Block &body = generic.getRegion().front();
    DenseMap<int64_t, BlockArgument> iotaOf;
    for (auto [position, loop] : llvm::enumerate(loops)) {
      auto type = RankedTensorType::get({extents[loop]}, i64);
      auto values = llvm::to_vector(llvm::seq<int64_t>(0, extents[loop]));
      inputs.push_back(arith::ConstantOp::create(
          rewriter, generic.getLoc(),
          DenseElementsAttr::get(type, ArrayRef<int64_t>(values))));
      maps.insert(maps.begin() + numInputs + position,
                  AffineMap::get(generic.getNumLoops(), 0,
                                 getAffineDimExpr(loop, ctx)));
      iotaOf[loop] =
          body.insertArgument(numInputs + position, i64, generic.getLoc());
    }
    for (linalg::IndexOp index : llvm::make_early_inc_range(
             generic.getBody()->getOps<linalg::IndexOp>())) {
      auto iota = iotaOf.find(index.getDim());
      if (iota == iotaOf.end())
        continue;
      rewriter.setInsertionPoint(index);
      rewriter.replaceOpWithNewOp<arith::IndexCastOp>(
          index, rewriter.getIndexType(), iota->second);
    }
    replaceWithInputs(rewriter, generic, inputs, maps);
  }
}

/// Rewrites the masked accumulation `select(c, out + x, out)` of a linalg
/// body (a scatter-add: an embedding's gradient) into
/// `out + select(c, x, -0.0)`. -0.0 is the exact identity of addf, so every
/// result keeps its bits, and the body combines with one op, the form
/// MLIR 22's partition of a split reduction needs (checkSplitReduction).
void sharding::normalizeMaskedSums(func::FuncOp function) {
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
void sharding::privatizeInits(func::FuncOp function) {
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
/// its uses read: an argument nothing splits is whole on every process. So
/// is every constant of distinct elements (an iota, a table torch-mlir
/// froze): propagation would otherwise split it where it is made, and MLIR
/// 22 partitions only splat constants, failing on others without a word.
/// The grids the annotations of `function` split over.
static SmallVector<shard::GridOp> getGrids(func::FuncOp function) {
  SmallVector<shard::GridOp> grids;
  SymbolTableCollection symbols;
  function.walk([&](shard::ShardingOp sharding) {
    shard::GridOp grid =
        shard::getGrid(sharding, sharding.getGridAttr(), symbols);
    if (grid && !llvm::is_contained(grids, grid))
      grids.push_back(grid);
  });
  return grids;
}

/// A shard.shard of `value` to a whole (replicated) tensor on `grid`, for
/// the users of the value when `forUsers`.
static shard::ShardOp annotateWhole(OpBuilder &b, Value value,
                                    shard::GridOp grid, bool forUsers) {
  MLIRContext *ctx = value.getContext();
  Value replicated = shard::ShardingOp::create(
      b, value.getLoc(),
      makeSharding(FlatSymbolRefAttr::get(ctx, grid.getSymName()), {}, ctx));
  return shard::ShardOp::create(b, value.getLoc(), value, replicated, forUsers);
}

/// [SH10] Gives each tensor a linalg body reads from outside its op (a
/// gather: `tensor.extract %table[%id, %j]`, as torch-mlir lowers
/// embeddings, `index_select` and indexing) a whole copy for that op to
/// read. MLIR 22's partition maps such a capture to the value's shard, so a
/// gather from a split tensor (tokens of a data-parallel step) would read
/// its global positions from one process's rows; whole, it reads them right
/// (an all-gather where the tensor is split, nothing where it is whole).
void sharding::gatherCapturedTensors(func::FuncOp function) {
  SmallVector<shard::GridOp> grids = getGrids(function);
  if (grids.size() != 1)
    return;
  SmallVector<linalg::LinalgOp> ops;
  function.walk([&](linalg::LinalgOp op) { ops.push_back(op); });
  for (linalg::LinalgOp op : ops) {
    Region &region = op->getRegion(0);
    llvm::SetVector<Value> captured;
    getUsedValuesDefinedAbove(region, captured);
    for (Value value : captured) {
      if (!needsAnnotation(value))
        continue;
      OpBuilder b(op);
      shard::ShardOp whole =
          annotateWhole(b, value, grids.front(), /*forUsers=*/true);
      replaceAllUsesInRegionWith(value, whole.getResult(), region);
    }
  }
}

bool sharding::isDistinctConstant(arith::ConstantOp constant) {
  auto elements = dyn_cast<DenseElementsAttr>(constant.getValue());
  return elements && !elements.isSplat() && needsAnnotation(constant);
}

LogicalResult sharding::annotateWholeValues(func::FuncOp function) {
  SmallVector<shard::GridOp> grids = getGrids(function);
  auto annotate = [&](OpBuilder &b, Value value) {
    auto annotation = annotateWhole(b, value, grids.front(), false);
    value.replaceAllUsesExcept(annotation.getResult(), annotation);
  };
  auto annotatedAlone = [](Value value) {
    return value.hasOneUse() && isa<shard::ShardOp>(*value.getUsers().begin());
  };
  Block &entry = function.getBody().front();
  for (BlockArgument argument : entry.getArguments()) {
    if (!needsAnnotation(argument) || annotatedAlone(argument))
      continue;
    if (grids.size() != 1)
      return function.emitOpError("uses ")
             << grids.size() << " grids; annotate argument "
             << argument.getArgNumber()
             << " with a shard.shard that names its own";
    OpBuilder b = OpBuilder::atBlockBegin(&entry);
    annotate(b, argument);
  }
  if (grids.size() != 1)
    return success();
  function.walk([&](arith::ConstantOp constant) {
    if (!isDistinctConstant(constant) || annotatedAlone(constant))
      return;
    OpBuilder b(constant->getContext());
    b.setInsertionPointAfter(constant);
    annotate(b, constant);
  });
  return success();
}
