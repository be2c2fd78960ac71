//===- VectorizeContractions.cpp - f32 contractions as vector loops -------===//
//
// Lowers f32 contractions on buffers whose result's contiguous dimension n
// is contiguous in every input that uses it into loops over vectors of n:
// each vector lane is one output, accumulated in a register over the
// reduction loops with elementwise vector arith.mulf and arith.addf. Lanes
// are independent outputs and each keeps its sequence of rounded operations
// in increasing reduction order, so results are bit-identical to
// convert-linalg-to-loops (no vector.contract, no fma, no reduction across
// lanes).
//
//===----------------------------------------------------------------------===//

#include "fp4train/Dialect/FP4Train/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StructuredOpsUtils.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

namespace mlir {
namespace fp4train {
#define GEN_PASS_DEF_FP4TRAINVECTORIZECONTRACTIONS
#include "fp4train/Dialect/FP4Train/Transforms/Passes.h.inc"
} // namespace fp4train
} // namespace mlir

using namespace mlir;
using namespace mlir::fp4train;

/// The allocation or block argument that `buffer` views.
static Value getRootBuffer(Value buffer) {
  while (auto view = buffer.getDefiningOp<ViewLikeOpInterface>())
    buffer = view.getViewSource();
  return buffer;
}

/// Whether the buffers `a` and `b` are known not to overlap: distinct
/// allocations, or an allocation and a function argument (which existed
/// before it). A loop's block argument may carry any buffer, so it is no
/// known root.
static bool areDisjoint(Value a, Value b) {
  Value rootA = getRootBuffer(a), rootB = getRootBuffer(b);
  if (rootA == rootB)
    return false;
  auto isAllocation = [](Value root) {
    return root.getDefiningOp<memref::AllocOp>() ||
           root.getDefiningOp<memref::AllocaOp>();
  };
  auto isFunctionArgument = [](Value root) {
    auto argument = dyn_cast<BlockArgument>(root);
    return argument && argument.getOwner()->isEntryBlock() &&
           isa<FunctionOpInterface>(argument.getOwner()->getParentOp());
  };
  auto isKnown = [&](Value root) {
    return isAllocation(root) || isFunctionArgument(root);
  };
  return isKnown(rootA) && isKnown(rootB) &&
         (isAllocation(rootA) || isAllocation(rootB));
}

static bool hasUnitInnerStride(Value buffer) {
  auto type = cast<MemRefType>(buffer.getType());
  SmallVector<int64_t> strides;
  int64_t offset;
  return type.getRank() > 0 &&
         succeeded(type.getStridesAndOffset(strides, offset)) &&
         strides.back() == 1;
}

/// The loop of the output's last index, when `op` can be lowered: an f32
/// contraction on buffers, every operand that uses the loop has it as its
/// contiguous last index, the body is mulf/addf/subf on its own values
/// only, and the output overlaps no input.
static std::optional<unsigned> getVectorDim(linalg::LinalgOp op) {
  if (!op.hasPureBufferSemantics() || op.getNumDpsInits() != 1 ||
      op.getNumDpsInputs() != 2 || !linalg::isaContractionOpInterface(op) ||
      !op.hasOnlyProjectedPermutations())
    return std::nullopt;
  Type f32 = Float32Type::get(op->getContext());
  for (Value operand : op->getOperands())
    if (getElementTypeOrSelf(operand.getType()) != f32)
      return std::nullopt;

  OpOperand *output = op.getDpsInitOperand(0);
  AffineMap outputMap = op.getMatchingIndexingMap(output);
  if (outputMap.getNumResults() == 0)
    return std::nullopt;
  auto inner = dyn_cast<AffineDimExpr>(outputMap.getResults().back());
  if (!inner)
    return std::nullopt;
  for (OpOperand &operand : op->getOpOperands()) {
    AffineMap map = op.getMatchingIndexingMap(&operand);
    std::optional<unsigned> position = map.getResultPosition(inner);
    if (position && (*position + 1 != map.getNumResults() ||
                     !hasUnitInnerStride(operand.get())))
      return std::nullopt;
    if (&operand != output && !areDisjoint(operand.get(), output->get()))
      return std::nullopt;
  }
  // Every body value becomes a vector: no op or value from outside.
  Block *body = op.getBlock();
  for (Operation &bodyOp : body->without_terminator())
    if (!isa<arith::MulFOp, arith::AddFOp, arith::SubFOp>(bodyOp) ||
        llvm::any_of(bodyOp.getOperands(), [&](Value operand) {
          return operand.getParentBlock() != body;
        }))
      return std::nullopt;
  if (body->getTerminator()->getOperand(0).getParentBlock() != body)
    return std::nullopt;
  return inner.getPosition();
}

namespace {

/// Emits the vector loop nest of one contraction.
class ContractionEmitter {
public:
  ContractionEmitter(RewriterBase &rewriter, linalg::LinalgOp op,
                     unsigned vectorDim, int64_t width, int64_t unroll)
      : rewriter(rewriter), op(op), loc(op.getLoc()), vectorDim(vectorDim),
        width(width), unroll(unroll),
        vectorType(VectorType::get({width}, rewriter.getF32Type())) {}

  void emit() {
    rewriter.setInsertionPoint(op);
    for (Range range : op.createLoopRanges(rewriter, loc))
      sizes.push_back(
          getValueOrCreateConstantIndexOp(rewriter, loc, range.size));
    zero = arith::ConstantIndexOp::create(rewriter, loc, 0);
    one = arith::ConstantIndexOp::create(rewriter, loc, 1);
    padding = arith::ConstantOp::create(
        rewriter, loc, DenseElementsAttr::get(vectorType, 0.0f));

    SmallVector<unsigned> parallel;
    SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
    for (unsigned d = 0, e = iterators.size(); d < e; ++d) {
      if (d == vectorDim)
        continue;
      (iterators[d] == utils::IteratorType::parallel ? parallel : reduction)
          .push_back(d);
    }
    SmallVector<Value> lbs(parallel.size(), zero), ubs,
        steps(parallel.size(), one);
    for (unsigned d : parallel)
      ubs.push_back(sizes[d]);
    scf::buildLoopNest(rewriter, loc, lbs, ubs, steps,
                       [&](OpBuilder &b, Location loc, ValueRange ivs) {
                         SmallVector<Value> point(sizes.size());
                         for (auto [d, iv] : llvm::zip_equal(parallel, ivs))
                           point[d] = iv;
                         emitVectorLoops(b, point);
                       });
    rewriter.eraseOp(op);
  }

private:
  /// Full blocks of `unroll` vectors, then single vectors masked to the end.
  void emitVectorLoops(OpBuilder &b, SmallVector<Value> point) {
    Value size = sizes[vectorDim];
    Value block = arith::ConstantIndexOp::create(b, loc, width * unroll);
    Value rest = arith::RemSIOp::create(b, loc, size, block);
    Value fullEnd = arith::SubIOp::create(b, loc, size, rest);
    scf::ForOp::create(
        b, loc, zero, fullEnd, block, {},
        [&](OpBuilder &b, Location loc, Value start, ValueRange) {
          emitBlock(b, point, start, unroll, /*masked=*/false);
          scf::YieldOp::create(b, loc);
        });
    Value step = arith::ConstantIndexOp::create(b, loc, width);
    scf::ForOp::create(
        b, loc, fullEnd, size, step, {},
        [&](OpBuilder &b, Location loc, Value start, ValueRange) {
          emitBlock(b, point, start, 1, /*masked=*/true);
          scf::YieldOp::create(b, loc);
        });
  }

  SmallVector<Value> getIndices(AffineMap map, ArrayRef<Value> point) {
    SmallVector<Value> indices;
    for (AffineExpr result : map.getResults())
      indices.push_back(point[cast<AffineDimExpr>(result).getPosition()]);
    return indices;
  }

  Value load(OpBuilder &b, Value buffer, ValueRange indices, Value mask) {
    if (mask)
      return vector::MaskedLoadOp::create(b, loc, vectorType, buffer, indices,
                                          mask, padding);
    return vector::LoadOp::create(b, loc, vectorType, buffer, indices);
  }

  /// `count` vectors of outputs from `start` along the vector dimension:
  /// loaded into registers, updated over the reduction loops in their
  /// order, stored back.
  void emitBlock(OpBuilder &b, SmallVector<Value> point, Value start,
                 int64_t count, bool masked) {
    Value mask;
    if (masked) {
      Value left = arith::SubIOp::create(b, loc, sizes[vectorDim], start);
      mask = vector::CreateMaskOp::create(
          b, loc, VectorType::get({width}, b.getI1Type()), left);
    }
    SmallVector<Value> starts;
    for (int64_t u = 0; u < count; ++u)
      starts.push_back(
          u == 0 ? start
                 : arith::AddIOp::create(
                       b, loc, start,
                       arith::ConstantIndexOp::create(b, loc, u * width)));

    OpOperand *output = op.getDpsInitOperand(0);
    AffineMap outputMap = op.getMatchingIndexingMap(output);
    SmallVector<Value> accumulators;
    for (Value at : starts) {
      point[vectorDim] = at;
      accumulators.push_back(
          load(b, output->get(), getIndices(outputMap, point), mask));
    }

    SmallVector<Value> lbs(reduction.size(), zero), ubs,
        steps(reduction.size(), one);
    for (unsigned d : reduction)
      ubs.push_back(sizes[d]);
    scf::LoopNest nest = scf::buildLoopNest(
        b, loc, lbs, ubs, steps, accumulators,
        [&](OpBuilder &b, Location loc, ValueRange ivs,
            ValueRange iterArgs) -> scf::ValueVector {
          for (auto [d, iv] : llvm::zip_equal(reduction, ivs))
            point[d] = iv;
          Block *body = op.getBlock();
          // Operands that do not use the vector dimension: one scalar load
          // broadcast to every lane.
          SmallVector<Value> broadcasts;
          for (OpOperand *input : op.getDpsInputOperands()) {
            AffineMap map = op.getMatchingIndexingMap(input);
            Value scalar;
            if (!map.getResultPosition(
                    getAffineDimExpr(vectorDim, b.getContext()))) {
              scalar = memref::LoadOp::create(b, loc, input->get(),
                                              getIndices(map, point));
              scalar = vector::BroadcastOp::create(b, loc, vectorType, scalar);
            }
            broadcasts.push_back(scalar);
          }
          scf::ValueVector results;
          for (auto [u, at] : llvm::enumerate(starts)) {
            point[vectorDim] = at;
            IRMapping mapping;
            for (auto [i, input] : llvm::enumerate(op.getDpsInputOperands())) {
              Value value = broadcasts[i];
              if (!value)
                value = load(
                    b, input->get(),
                    getIndices(op.getMatchingIndexingMap(input), point), mask);
              mapping.map(body->getArgument(i), value);
            }
            mapping.map(body->getArgument(op.getNumDpsInputs()), iterArgs[u]);
            for (Operation &bodyOp : body->without_terminator()) {
              OperationState state(loc, bodyOp.getName());
              for (Value operand : bodyOp.getOperands())
                state.addOperands(mapping.lookup(operand));
              state.addTypes(vectorType);
              state.addAttributes(bodyOp.getAttrs());
              mapping.map(bodyOp.getResult(0), b.create(state)->getResult(0));
            }
            results.push_back(
                mapping.lookup(body->getTerminator()->getOperand(0)));
          }
          return results;
        });

    for (auto [at, result] : llvm::zip_equal(starts, nest.results)) {
      point[vectorDim] = at;
      SmallVector<Value> indices = getIndices(outputMap, point);
      if (mask)
        vector::MaskedStoreOp::create(b, loc, output->get(), indices, mask,
                                      result);
      else
        vector::StoreOp::create(b, loc, result, output->get(), indices);
    }
  }

  RewriterBase &rewriter;
  linalg::LinalgOp op;
  Location loc;
  unsigned vectorDim;
  int64_t width, unroll;
  VectorType vectorType;
  SmallVector<Value> sizes;
  SmallVector<unsigned> reduction;
  Value zero, one, padding;
};

struct VectorizeContractionsPass
    : public fp4train::impl::FP4TrainVectorizeContractionsBase<
          VectorizeContractionsPass> {
  using Base::Base;

  void runOnOperation() override {
    if (width <= 0 || unroll <= 0) {
      getOperation()->emitError("width and unroll must be positive");
      return signalPassFailure();
    }
    SmallVector<std::pair<linalg::LinalgOp, unsigned>> work;
    getOperation()->walk([&](linalg::LinalgOp op) {
      if (std::optional<unsigned> dim = getVectorDim(op))
        work.emplace_back(op, *dim);
    });
    IRRewriter rewriter(&getContext());
    for (auto [op, dim] : work)
      ContractionEmitter(rewriter, op, dim, width, unroll).emit();
  }
};

} // namespace
