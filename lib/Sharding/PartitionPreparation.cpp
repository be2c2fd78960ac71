//===- PartitionPreparation.cpp - Steps made partitionable ----------------===//
//
// Rewrites fp4train-partition applies to a copy of a step before upstream's
// propagation and partition, each leaving every computed value as it was:
// scalar reads isolated in linalg bodies, masked sums in the form a split
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
/// its uses read: an argument nothing splits is whole on every process.
LogicalResult sharding::annotateArguments(func::FuncOp function) {
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
