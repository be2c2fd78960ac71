//===- ShardToMPI.cpp - Partitioned steps to MPI calls --------------------===//
//
// fp4train-shard-to-mpi: gathers as bitwise-or reductions ([SH7]), then
// upstream's convert-shard-to-mpi, then the grids it leaves behind.
//
//===----------------------------------------------------------------------===//

#include "ShardingUtils.h"

#include "fp4train/Sharding/Passes.h"

#include "mlir/Conversion/ShardToMPI/ShardToMPI.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Shard/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::fp4train {
#define GEN_PASS_DEF_FP4TRAINSHARDTOMPI
#include "fp4train/Sharding/Passes.h.inc"
} // namespace mlir::fp4train

using namespace mlir;
using namespace mlir::fp4train;
using namespace mlir::fp4train::sharding;
using shard::ShardingArray;

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

/// [SH9] Collectives of booleans travel as bytes: MPI has no 1-bit type
/// (MPICH aborts the process on MLIR 22's datatype for i1). Each i1
/// all-reduce and all-gather is zero-extended to i8, done, and truncated
/// back: or, and, max and min of 0/1 bytes are those of the booleans, and a
/// sum truncated to one bit is i1's sum (its xor).
static void widenBooleanCollectives(ModuleOp module) {
  SmallVector<Operation *> collectives;
  module.walk([&](Operation *op) {
    if (!isa<shard::AllReduceOp, shard::AllGatherOp>(op))
      return;
    auto type = cast<RankedTensorType>(op->getOperand(0).getType());
    if (type.getElementType().isInteger(1))
      collectives.push_back(op);
  });
  for (Operation *op : collectives) {
    ImplicitLocOpBuilder b(op->getLoc(), op);
    auto bytes = [&](Type type) {
      return cast<RankedTensorType>(type).clone(b.getI8Type());
    };
    Value wide = arith::ExtUIOp::create(b, bytes(op->getOperand(0).getType()),
                                        op->getOperand(0));
    Operation *widened = b.clone(*op);
    widened->setOperand(0, wide);
    widened->getResult(0).setType(bytes(op->getResult(0).getType()));
    Value narrow = arith::TruncIOp::create(b, op->getResult(0).getType(),
                                           widened->getResult(0));
    op->getResult(0).replaceAllUsesWith(narrow);
    op->erase();
  }
}

namespace {

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
    widenBooleanCollectives(module);
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

} // namespace
