//===- InterchangeContractions.cpp - Vectorizable f32 contraction loops ---===//
//
// Puts the loop over the result's contiguous dimension innermost in f32
// contractions, the reductions just outside it, so that
// fp4train-vectorize-contractions can lower them to vector loops across
// independent outputs. Only loops over
// distinct outputs move: each output element keeps its sequence of rounded
// multiplies and adds in increasing reduction order, so results stay
// bit-identical (the JIT is compared bit for bit against the emulator and
// the runtime library).
//
//===----------------------------------------------------------------------===//

#include "fp4train/Dialect/FP4Train/Transforms/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StructuredOpsUtils.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir {
namespace fp4train {
#define GEN_PASS_DEF_FP4TRAININTERCHANGECONTRACTIONS
#include "fp4train/Dialect/FP4Train/Transforms/Passes.h.inc"
} // namespace fp4train
} // namespace mlir

using namespace mlir;
using namespace mlir::fp4train;

namespace {

/// How a contraction is rewritten: the new loop order and, per input, the
/// permutation that moves the innermost dimension to its last index (empty
/// when the input already has it last or does not use it).
struct ContractionPlan {
  /// interchangeGenericOp's vector: new loop i is old loop order[i].
  SmallVector<unsigned> order;
  SmallVector<SmallVector<int64_t>> transposes;
};

} // namespace

/// Returns the plan for `op`, or nullopt when `op` is no f32 contraction on
/// tensors or its loops are in the target order already.
static std::optional<ContractionPlan> planContraction(linalg::LinalgOp op) {
  if (!op.hasPureTensorSemantics() || op.getNumDpsInits() != 1 ||
      op.getNumDpsInputs() != 2 || !linalg::isaContractionOpInterface(op))
    return std::nullopt;
  Type f32 = Float32Type::get(op->getContext());
  for (Value operand : op->getOperands())
    if (getElementTypeOrSelf(operand.getType()) != f32)
      return std::nullopt;
  if (!op.hasOnlyProjectedPermutations())
    return std::nullopt;

  AffineMap outputMap = op.getMatchingIndexingMap(op.getDpsInitOperand(0));
  if (outputMap.getNumResults() == 0)
    return std::nullopt;
  auto inner = dyn_cast<AffineDimExpr>(outputMap.getResults().back());
  if (!inner)
    return std::nullopt;
  unsigned n = inner.getPosition();

  ContractionPlan plan;
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  for (unsigned d = 0, e = iterators.size(); d < e; ++d)
    if (d != n && iterators[d] == utils::IteratorType::parallel)
      plan.order.push_back(d);
  for (unsigned d = 0, e = iterators.size(); d < e; ++d)
    if (iterators[d] == utils::IteratorType::reduction)
      plan.order.push_back(d);
  plan.order.push_back(n);

  bool anyTranspose = false;
  for (OpOperand *input : op.getDpsInputOperands()) {
    AffineMap map = op.getMatchingIndexingMap(input);
    std::optional<unsigned> position = map.getResultPosition(inner);
    SmallVector<int64_t> &permutation = plan.transposes.emplace_back();
    if (!position || *position + 1 == map.getNumResults())
      continue;
    for (unsigned i = 0, e = map.getNumResults(); i < e; ++i)
      if (i != *position)
        permutation.push_back(i);
    permutation.push_back(*position);
    anyTranspose = true;
  }

  bool identity =
      llvm::equal(plan.order, llvm::seq<unsigned>(0, iterators.size()));
  if (identity && !anyTranspose)
    return std::nullopt;
  return plan;
}

/// Rewrites `op` by `plan`: transposed copies of the inputs that need them,
/// then a linalg.generic with the loops in the plan's order.
static LogicalResult rewriteContraction(RewriterBase &rewriter,
                                        linalg::LinalgOp op,
                                        const ContractionPlan &plan) {
  Location loc = op.getLoc();
  rewriter.setInsertionPoint(op);
  SmallVector<NamedAttribute> discardable =
      llvm::to_vector(op->getDiscardableAttrs());

  // Transposed copies are exact, and cost O(N*K) against the O(M*N*K) loop.
  SmallVector<Value> inputs;
  SmallVector<AffineMap> maps;
  for (auto [input, permutation] :
       llvm::zip_equal(op.getDpsInputOperands(), plan.transposes)) {
    Value value = input->get();
    AffineMap map = op.getMatchingIndexingMap(input);
    if (!permutation.empty()) {
      SmallVector<OpFoldResult> sizes =
          tensor::getMixedSizes(rewriter, loc, value);
      Value empty = tensor::EmptyOp::create(
          rewriter, loc, applyPermutation(sizes, permutation),
          getElementTypeOrSelf(value.getType()));
      value =
          linalg::TransposeOp::create(rewriter, loc, value, empty, permutation)
              ->getResult(0);
      map = AffineMap::get(map.getNumDims(), 0,
                           applyPermutation(map.getResults(), permutation),
                           map.getContext());
    }
    inputs.push_back(value);
    maps.push_back(map);
  }
  maps.push_back(op.getMatchingIndexingMap(op.getDpsInitOperand(0)));

  auto generic = dyn_cast<linalg::GenericOp>(op.getOperation());
  if (!generic) {
    FailureOr<linalg::GenericOp> generalized =
        linalg::generalizeNamedOp(rewriter, op);
    if (failed(generalized))
      return failure();
    generic = *generalized;
  }
  rewriter.modifyOpInPlace(generic, [&] {
    generic.getInputsMutable().assign(inputs);
    generic.setIndexingMapsAttr(rewriter.getAffineMapArrayAttr(maps));
    for (NamedAttribute attribute : discardable)
      generic->setAttr(attribute.getName(), attribute.getValue());
  });
  return linalg::interchangeGenericOp(rewriter, generic, plan.order);
}

namespace {
struct InterchangeContractionsPass
    : public fp4train::impl::FP4TrainInterchangeContractionsBase<
          InterchangeContractionsPass> {
  using Base::Base;

  void runOnOperation() override {
    SmallVector<std::pair<linalg::LinalgOp, ContractionPlan>> work;
    getOperation()->walk([&](linalg::LinalgOp op) {
      if (std::optional<ContractionPlan> plan = planContraction(op))
        work.emplace_back(op, std::move(*plan));
    });
    IRRewriter rewriter(&getContext());
    for (auto &[op, plan] : work)
      if (failed(rewriteContraction(rewriter, op, plan))) {
        op.emitOpError("could not be interchanged");
        return signalPassFailure();
      }
  }
};
} // namespace
