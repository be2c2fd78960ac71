//===- RoleAnalysis.cpp - Roles of the contractions of a training step ----===//
//
// [ROLE1]-[ROLE7] (docs/semantics.md). Two walks over use-def chains do it:
//
// - backward from a contraction operand through layout and cast ops to a
//   function argument, remembering which argument dimension each operand
//   dimension comes from, so that "which dimension of W is contracted" is
//   answered from the indexing maps, not from shapes (square weights stay
//   unambiguous);
// - forward from a contraction result through layout and elementwise ops to
//   a returned weight-shaped tensor or an elementwise update of a weight
//   (Wgrad).
//
//===----------------------------------------------------------------------===//

#include "fp4train/Dialect/FP4Train/Transforms/RoleAnalysis.h"

#include "fp4train/Dialect/FP4Train/IR/FP4TrainOps.h"

#include "mlir/Analysis/SliceAnalysis.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/LinalgInterfaces.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/ToolOutputFile.h"

using namespace mlir;
using namespace mlir::fp4train;

std::optional<WeightLayout> mlir::fp4train::parseWeightLayout(StringRef text) {
  if (text == "out-in")
    return WeightLayout::OutIn;
  if (text == "in-out")
    return WeightLayout::InOut;
  return std::nullopt;
}

StringRef mlir::fp4train::stringifyRoleOrOther(std::optional<Role> role) {
  return role ? stringifyRole(*role) : StringRef("other");
}

//===----------------------------------------------------------------------===//
// Layout steps
//===----------------------------------------------------------------------===//

namespace {
/// One layout or cast op seen from its result: the input it reads and, for
/// each result dimension, the input dimension it comes from (-1: none, e.g.
/// a broadcast dimension or a fusion of several input dimensions).
struct LayoutStep {
  Value input;
  SmallVector<int64_t> inputDim;
};

/// A value seen as a view of a function argument: `argDim[j]` is the
/// argument dimension that dimension j of the value comes from, or -1.
struct ArgumentView {
  BlockArgument argument;
  SmallVector<int64_t> argDim;
};
} // namespace

/// The first matrix dimension of a weight of rank `rank`: 0 for a matrix,
/// 1 for expert weights [E, out, in] ([ROLE7]).
static int64_t getMatrixBase(int64_t rank) { return rank - 2; }

static SmallVector<int64_t> identityDims(int64_t rank) {
  return llvm::to_vector(llvm::seq<int64_t>(0, rank));
}

/// Returns true for a linalg op that only copies (and possibly truncates or
/// extends) its single input, permuting dimensions at most: the generic form
/// of `arith.truncf` that bf16 graphs use.
static bool isCastLikeLinalgOp(linalg::LinalgOp op) {
  if (op.getNumDpsInputs() != 1 || op.getNumDpsInits() != 1 ||
      op.getNumParallelLoops() != op.getNumLoops() ||
      !op.hasPureTensorSemantics())
    return false;
  if (!op.getIndexingMapsArray()[1].isIdentity() ||
      !op.getIndexingMapsArray()[0].isPermutation())
    return false;
  return llvm::all_of(op.getBlock()->without_terminator(), [](Operation &op) {
    return isa<arith::TruncFOp, arith::ExtFOp>(op);
  });
}

/// The layout step that produces `result`, if its defining op is one.
static std::optional<LayoutStep> getLayoutStep(Value result) {
  Operation *op = result.getDefiningOp();
  if (!op || !isa<RankedTensorType>(result.getType()))
    return std::nullopt;
  int64_t rank = cast<RankedTensorType>(result.getType()).getRank();

  if (isa<tensor::CastOp, arith::TruncFOp, arith::ExtFOp>(op))
    return LayoutStep{op->getOperand(0), identityDims(rank)};

  // Sharding annotations and the collectives written in a sharded step
  // keep the logical tensor and its dimensions (docs/sharding.md).
  if (isa<shard::ShardOp, shard::AllGatherOp, shard::AllReduceOp,
          shard::AllSliceOp, shard::ReduceScatterOp>(op))
    return LayoutStep{op->getOperand(0), identityDims(rank)};

  if (auto transpose = dyn_cast<linalg::TransposeOp>(op))
    return LayoutStep{transpose.getInput(),
                      llvm::to_vector(transpose.getPermutation())};

  if (auto broadcast = dyn_cast<linalg::BroadcastOp>(op)) {
    SmallVector<int64_t> dims;
    int64_t next = 0;
    for (int64_t j = 0; j < rank; ++j)
      dims.push_back(llvm::is_contained(broadcast.getDimensions(), j) ? -1
                                                                      : next++);
    return LayoutStep{broadcast.getInput(), dims};
  }

  if (auto expand = dyn_cast<tensor::ExpandShapeOp>(op)) {
    SmallVector<int64_t> dims(rank, -1);
    for (auto [src, group] : llvm::enumerate(expand.getReassociationIndices()))
      for (int64_t r : group)
        dims[r] = src;
    return LayoutStep{expand.getSrc(), dims};
  }

  if (auto collapse = dyn_cast<tensor::CollapseShapeOp>(op)) {
    ArrayRef<int64_t> srcShape = collapse.getSrcType().getShape();
    SmallVector<int64_t> dims;
    for (ReassociationIndices group : collapse.getReassociationIndices()) {
      // A result dimension is a view of one source dimension only when the
      // others it fuses are unit dimensions.
      SmallVector<int64_t> nonUnit;
      for (int64_t s : group)
        if (srcShape[s] != 1)
          nonUnit.push_back(s);
      dims.push_back(nonUnit.size() == 1 ? nonUnit.front()
                     : nonUnit.empty()   ? group.front()
                                         : -1);
    }
    return LayoutStep{collapse.getSrc(), dims};
  }

  if (auto slice = dyn_cast<tensor::ExtractSliceOp>(op)) {
    llvm::SmallBitVector dropped = slice.getDroppedDims();
    SmallVector<int64_t> dims;
    for (int64_t s = 0, e = slice.getSourceType().getRank(); s < e; ++s)
      if (!dropped.test(s))
        dims.push_back(s);
    return LayoutStep{slice.getSource(), dims};
  }

  auto linalgOp = dyn_cast<linalg::LinalgOp>(op);
  if (linalgOp && isCastLikeLinalgOp(linalgOp)) {
    AffineMap inputMap = linalgOp.getIndexingMapsArray()[0];
    SmallVector<int64_t> dims(rank, -1);
    for (unsigned i = 0, e = inputMap.getNumResults(); i < e; ++i)
      dims[inputMap.getDimPosition(i)] = i;
    return LayoutStep{linalgOp.getDpsInputs()[0], dims};
  }
  return std::nullopt;
}

/// Follows `value` back through layout steps to an argument of `function`.
static std::optional<ArgumentView>
traceToArgument(Value value, FunctionOpInterface function) {
  auto type = dyn_cast<RankedTensorType>(value.getType());
  if (!type)
    return std::nullopt;
  SmallVector<int64_t> dims = identityDims(type.getRank());
  while (true) {
    if (auto arg = dyn_cast<BlockArgument>(value)) {
      if (arg.getOwner() != &function.getFunctionBody().front())
        return std::nullopt;
      return ArgumentView{arg, dims};
    }
    std::optional<LayoutStep> step = getLayoutStep(value);
    if (!step)
      return std::nullopt;
    for (int64_t &d : dims)
      if (d >= 0)
        d = step->inputDim[d];
    value = step->input;
  }
}

//===----------------------------------------------------------------------===//
// Wgrad: forward reach
//===----------------------------------------------------------------------===//

/// Returns true for an elementwise op whose `use` operand is read with an
/// identity map: the arithmetic of optimizer updates (`W - lr * g`, Adam's
/// moments, ...).
static bool isElementwiseUse(OpOperand &use) {
  Operation *op = use.getOwner();
  if (op->getNumResults() != 1 ||
      op->getResult(0).getType() != use.get().getType())
    return false;
  if (op->getDialect() && isa<arith::ArithDialect>(op->getDialect()))
    return true;
  auto linalgOp = dyn_cast<linalg::LinalgOp>(op);
  if (!linalgOp || !linalgOp.hasPureTensorSemantics() ||
      linalgOp.getNumParallelLoops() != linalgOp.getNumLoops())
    return false;
  return linalgOp.getMatchingIndexingMap(&use).isIdentity() &&
         linalgOp.getIndexingMapMatchingResult(linalgOp->getResult(0))
             .isIdentity();
}

namespace {
/// What a contraction result reaches.
struct GradientReach {
  bool reachesWeight = false;
  /// The weight it updates or whose shape it is returned with, when unique.
  std::optional<unsigned> param;
  /// For each result dimension, the weight dimension it becomes (-1 when
  /// the layout ops on the way do not say).
  SmallVector<int64_t> weightDim;
};

/// A value on the way from a contraction result to a weight gradient, with
/// the value dimension each result dimension has become (-1: unknown).
struct ReachedValue {
  Value value;
  SmallVector<int64_t> dimOfResult;
};
} // namespace

/// Maps `dims` (value dimensions of a step's input) to dimensions of the
/// step's result.
static SmallVector<int64_t> forwardThroughStep(const LayoutStep &step,
                                               ArrayRef<int64_t> dims) {
  SmallVector<int64_t> result;
  for (int64_t d : dims) {
    const auto *it = llvm::find(step.inputDim, d);
    bool unique = d >= 0 && it != step.inputDim.end() &&
                  llvm::count(step.inputDim, d) == 1;
    result.push_back(unique ? it - step.inputDim.begin() : -1);
  }
  return result;
}

static GradientReach
findWeightGradientUse(Value result, FunctionOpInterface function,
                      const llvm::SetVector<unsigned> &weights) {
  auto weightsOfShape = [&](Type type) {
    SmallVector<unsigned> matches;
    for (unsigned w : weights)
      if (function.getArgumentTypes()[w] == type)
        matches.push_back(w);
    return matches;
  };

  int64_t rank = cast<RankedTensorType>(result.getType()).getRank();
  SmallVector<ReachedValue> worklist = {{result, identityDims(rank)}};
  llvm::SmallPtrSet<Operation *, 16> visited;
  GradientReach reach;
  while (!worklist.empty()) {
    ReachedValue current = worklist.pop_back_val();
    for (OpOperand &use : current.value.getUses()) {
      Operation *user = use.getOwner();
      if (!visited.insert(user).second)
        continue;

      // A returned gradient of a weight's shape.
      if (user->hasTrait<OpTrait::ReturnLike>() &&
          user->getParentOp() == function.getOperation()) {
        SmallVector<unsigned> matches = weightsOfShape(current.value.getType());
        if (!matches.empty() && !reach.reachesWeight) {
          reach.reachesWeight = true;
          reach.weightDim = current.dimOfResult;
          if (matches.size() == 1)
            reach.param = matches.front();
        }
        continue;
      }

      // Layout ops keep it the same gradient.
      if (user->getNumResults() == 1) {
        std::optional<LayoutStep> step = getLayoutStep(user->getResult(0));
        if (step && step->input == current.value) {
          worklist.push_back({user->getResult(0),
                              forwardThroughStep(*step, current.dimOfResult)});
          continue;
        }
      }

      // Elementwise arithmetic: an update of a weight when another operand
      // is that weight, else more optimizer arithmetic to look through.
      if (!isElementwiseUse(use))
        continue;
      for (OpOperand &other : user->getOpOperands()) {
        if (&other == &use)
          continue;
        std::optional<ArgumentView> view =
            traceToArgument(other.get(), function);
        if (!view || !weights.contains(view->argument.getArgNumber()))
          continue;
        reach.reachesWeight = true;
        reach.param = view->argument.getArgNumber();
        reach.weightDim.clear();
        for (int64_t d : current.dimOfResult)
          reach.weightDim.push_back(d >= 0 ? view->argDim[d] : -1);
        return reach;
      }
      worklist.push_back({user->getResult(0), current.dimOfResult});
    }
  }
  return reach;
}

/// For a Wgrad contraction, the input operand that supplies the weight's
/// `out` dimension of the gradient, i.e. dY. Falls back to the textbook
/// orientation (dW = dY^T . X, or X^T . dY in JAX layout) when the layout
/// ops between the result and the weight hide the dimension.
static unsigned findGradOperand(linalg::LinalgOp op,
                                const linalg::ContractionDimensions &dims,
                                const GradientReach &reach,
                                WeightLayout layout) {
  // reach.weightDim has one entry per dimension of the gradient, which has
  // the weight's rank.
  int64_t outDim = getMatrixBase(int64_t(reach.weightDim.size())) +
                   (layout == WeightLayout::OutIn ? 0 : 1);
  unsigned fallback = layout == WeightLayout::OutIn ? 0 : 1;
  const auto *it = llvm::find(reach.weightDim, outDim);
  if (it == reach.weightDim.end())
    return fallback;
  AffineMap resultMap = op.getIndexingMapMatchingResult(op->getResult(0));
  auto dim = dyn_cast<AffineDimExpr>(
      resultMap.getResult(it - reach.weightDim.begin()));
  if (!dim)
    return fallback;
  if (llvm::is_contained(dims.m, dim.getPosition()))
    return 0;
  if (llvm::is_contained(dims.n, dim.getPosition()))
    return 1;
  return fallback;
}

//===----------------------------------------------------------------------===//
// The analysis
//===----------------------------------------------------------------------===//

/// Product of the static loop ranges of `dims`, or kDynamic.
static int64_t productOfLoops(ArrayRef<int64_t> ranges,
                              ArrayRef<unsigned> dims) {
  int64_t product = 1;
  for (unsigned d : dims) {
    if (ShapedType::isDynamic(ranges[d]))
      return ShapedType::kDynamic;
    product *= ranges[d];
  }
  return product;
}

/// Whether operand `operand` of `op`, a view of parameter `view`, uses it as
/// a weight: a matrix seen through two or more dimensions, or expert
/// weights [E, ·, ·] ([ROLE7]) whose expert dimension is a batch dimension
/// of the contraction, so that each expert's matrix meets its own tokens.
static bool isWeightUse(linalg::LinalgOp op, OpOperand &operand,
                        const ArgumentView &view,
                        const linalg::ContractionDimensions &dims) {
  int64_t rank = cast<RankedTensorType>(view.argument.getType()).getRank();
  if (view.argDim.size() < 2)
    return false;
  if (rank == 2)
    return true;
  if (rank != 3)
    return false;
  AffineMap map = op.getMatchingIndexingMap(&operand);
  for (unsigned r = 0, e = map.getNumResults(); r < e; ++r) {
    if (view.argDim[r] != 0)
      continue;
    auto dim = dyn_cast<AffineDimExpr>(map.getResult(r));
    return dim && llvm::is_contained(dims.batch, dim.getPosition());
  }
  return false;
}

/// Returns the role implied by which weight dimensions `op` contracts on
/// operand `operand`, a view of a weight: Fprop for the `in` dimension,
/// Dgrad for the `out` dimension.
static std::optional<Role> roleFromContractedDims(
    linalg::LinalgOp op, OpOperand &operand, const ArgumentView &view,
    const linalg::ContractionDimensions &dims, WeightLayout layout) {
  AffineMap map = op.getMatchingIndexingMap(&operand);
  llvm::SmallSetVector<int64_t, 2> contracted;
  for (unsigned r = 0, e = map.getNumResults(); r < e; ++r) {
    auto dim = dyn_cast<AffineDimExpr>(map.getResult(r));
    if (!dim || !llvm::is_contained(dims.k, dim.getPosition()))
      continue;
    contracted.insert(view.argDim[r]);
  }
  if (contracted.size() != 1)
    return std::nullopt;
  int64_t base =
      getMatrixBase(cast<RankedTensorType>(view.argument.getType()).getRank());
  int64_t inDim = base + (layout == WeightLayout::OutIn ? 1 : 0);
  int64_t outDim = base + (layout == WeightLayout::OutIn ? 0 : 1);
  if (contracted.front() == inDim)
    return Role::fprop;
  if (contracted.front() == outDim)
    return Role::dgrad;
  return std::nullopt;
}

/// The single dimension of `operand` (as laid out) that `op` contracts.
static std::optional<unsigned>
getContractedDim(linalg::LinalgOp op, OpOperand &operand,
                 const linalg::ContractionDimensions &dims) {
  AffineMap map = op.getMatchingIndexingMap(&operand);
  std::optional<unsigned> contracted;
  for (unsigned r = 0, e = map.getNumResults(); r < e; ++r) {
    auto dim = dyn_cast<AffineDimExpr>(map.getResult(r));
    if (!dim || !llvm::is_contained(dims.k, dim.getPosition()))
      continue;
    if (contracted)
      return std::nullopt;
    contracted = r;
  }
  return contracted;
}

/// The contraction's m, n, k and batch sizes, when its dimensions are known.
static void setSizes(ContractionRole &info,
                     const linalg::ContractionDimensions &dims) {
  SmallVector<int64_t> ranges = info.op.getStaticLoopRanges();
  info.m = productOfLoops(ranges, dims.m);
  info.n = productOfLoops(ranges, dims.n);
  info.k = productOfLoops(ranges, dims.k);
  info.batch = productOfLoops(ranges, dims.batch);
}

/// `value` with layout steps stripped: the tensor it is a view of.
static Value stripLayout(Value value) {
  while (std::optional<LayoutStep> step = getLayoutStep(value))
    value = step->input;
  return value;
}

/// Names the weight of each Wgrad that its uses could not name (a gradient
/// returned with a shape several weights share): the layer's other GEMMs
/// can, since its dY is the layer's Dgrad dY and its X the layer's Fprop
/// input.
static void matchWgradsToLayers(MutableArrayRef<ContractionRole> roles) {
  auto activationOf = [](const ContractionRole &info) {
    linalg::LinalgOp op = info.op;
    return stripLayout(op.getDpsInputs()[1 - *info.weightOperand]);
  };
  for (ContractionRole &wgrad : roles) {
    if (wgrad.role != Role::wgrad || wgrad.param || !wgrad.gradOperand)
      continue;
    linalg::LinalgOp op = wgrad.op;
    Value dy = stripLayout(op.getDpsInputs()[*wgrad.gradOperand]);
    Value x = stripLayout(op.getDpsInputs()[1 - *wgrad.gradOperand]);
    llvm::SmallSetVector<unsigned, 2> byGradient, byInput;
    for (const ContractionRole &other : roles) {
      if (!other.param || !other.weightOperand)
        continue;
      if (other.role == Role::dgrad && activationOf(other) == dy)
        byGradient.insert(*other.param);
      if (other.role == Role::fprop && activationOf(other) == x)
        byInput.insert(*other.param);
    }
    if (byGradient.size() == 1)
      wgrad.param = byGradient.front();
    else if (byInput.size() == 1)
      wgrad.param = byInput.front();
  }
}

FailureOr<SmallVector<ContractionRole>>
mlir::fp4train::analyzeRoles(FunctionOpInterface function,
                             ArrayRef<unsigned> extraParams,
                             WeightLayout layout) {
  ArrayRef<Type> argTypes = function.getArgumentTypes();
  llvm::SetVector<unsigned> params;
  for (unsigned i = 0, e = argTypes.size(); i < e; ++i)
    if (function.getArgAttr(i, FP4TrainDialect::kParamAttrName))
      params.insert(i);
  for (unsigned i : extraParams) {
    if (i >= argTypes.size())
      return function.emitError("params option names argument #")
             << i << ", but the function has " << argTypes.size()
             << " arguments";
    if (!isa<RankedTensorType>(argTypes[i]))
      return function.emitError("params option names argument #")
             << i << " of type " << argTypes[i]
             << ", but parameters must be ranked tensors";
    params.insert(i);
  }

  // Contractions in program order, and the weights among the parameters:
  // matrices (or expert weights, [ROLE7]) used through layout ops as a
  // contraction operand.
  SmallVector<linalg::LinalgOp> contractions = getContractions(function);
  llvm::SetVector<unsigned> weights;
  for (linalg::LinalgOp op : contractions) {
    FailureOr<linalg::ContractionDimensions> dims =
        linalg::inferContractionDims(op);
    if (failed(dims))
      continue;
    for (OpOperand *input : op.getDpsInputOperands())
      if (std::optional<ArgumentView> view =
              traceToArgument(input->get(), function))
        if (params.contains(view->argument.getArgNumber()) &&
            isWeightUse(op, *input, *view, *dims))
          weights.insert(view->argument.getArgNumber());
  }

  SmallVector<ContractionRole> roles;
  for (linalg::LinalgOp op : contractions) {
    ContractionRole &info = roles.emplace_back();
    info.op = op;
    FailureOr<linalg::ContractionDimensions> dims =
        linalg::inferContractionDims(op);
    if (succeeded(dims))
      setSizes(info, *dims);

    // Fprop / Dgrad: an operand is a view of a weight.
    bool readsWeight = false;
    for (OpOperand *input : op.getDpsInputOperands()) {
      std::optional<ArgumentView> view =
          traceToArgument(input->get(), function);
      if (!view || !weights.contains(view->argument.getArgNumber()))
        continue;
      readsWeight = true;
      if (info.param)
        continue;
      info.param = view->argument.getArgNumber();
      info.weightOperand = input->getOperandNumber();
      if (succeeded(dims)) {
        info.role = roleFromContractedDims(op, *input, *view, *dims, layout);
        info.contractedDim = getContractedDim(op, *input, *dims);
      }
    }
    // Wgrad: no weight operand, and the result becomes a weight gradient.
    if (!readsWeight) {
      GradientReach reach =
          findWeightGradientUse(op->getResult(0), function, weights);
      if (reach.reachesWeight) {
        info.role = Role::wgrad;
        info.param = reach.param;
        if (succeeded(dims))
          info.gradOperand = findGradOperand(op, *dims, reach, layout);
      }
    }

    if (auto role =
            op->getAttrOfType<RoleAttr>(FP4TrainDialect::kRoleAttrName)) {
      info.role = role.getValue();
      // A written annotation fills in what the analysis did not find.
      if (!info.param)
        info.param = role.getWeight();
      if (*info.role == Role::wgrad && !info.gradOperand)
        info.gradOperand = role.getOperand();
      if (*info.role != Role::wgrad && !info.weightOperand) {
        info.weightOperand = role.getOperand();
        info.contractedDim = role.getContracted();
      }
    }
    // dY of a Wgrad the layout ops hide (or one named by the user): the
    // textbook orientation, dW = dY^T . X (X^T . dY in JAX layout).
    if (info.role == Role::wgrad && !info.gradOperand)
      info.gradOperand = layout == WeightLayout::OutIn ? 0 : 1;
  }
  matchWgradsToLayers(roles);
  for (ContractionRole &info : roles)
    if (info.param)
      info.block = getParamBlock(function, *info.param);
  markRouters(function, roles);
  return roles;
}

bool mlir::fp4train::isExpertContraction(FunctionOpInterface function,
                                         const ContractionRole &info) {
  if (!info.param)
    return false;
  auto type =
      dyn_cast<RankedTensorType>(function.getArgumentTypes()[*info.param]);
  FailureOr<linalg::ContractionDimensions> dims =
      linalg::inferContractionDims(info.op);
  return type && type.getRank() == 3 && succeeded(dims) &&
         dims->batch.size() == 1;
}

void mlir::fp4train::markRouters(FunctionOpInterface function,
                                 MutableArrayRef<ContractionRole> roles) {
  llvm::SetVector<unsigned> routers;
  for (const ContractionRole &info : roles)
    if (info.param &&
        function.getArgAttr(*info.param, FP4TrainDialect::kRouterAttrName))
      routers.insert(*info.param);
  llvm::DenseMap<Operation *, int64_t> experts;
  for (const ContractionRole &info : roles)
    if (isExpertContraction(function, info))
      experts[info.op] = info.batch;
  for (const ContractionRole &info : roles) {
    if (experts.empty() || info.role != Role::fprop || !info.param ||
        routers.contains(*info.param) || experts.count(info.op) ||
        ShapedType::isDynamic(info.n))
      continue;
    SetVector<Operation *> slice;
    getForwardSlice(info.op->getResult(0), &slice);
    if (llvm::any_of(slice, [&](Operation *op) {
          auto it = experts.find(op);
          return it != experts.end() && it->second == info.n;
        }))
      routers.insert(*info.param);
  }
  for (ContractionRole &info : roles)
    info.router = info.param && routers.contains(*info.param);
}

SmallVector<linalg::LinalgOp>
mlir::fp4train::getContractions(FunctionOpInterface function) {
  SmallVector<linalg::LinalgOp> contractions;
  function.getFunctionBody().walk([&](linalg::LinalgOp op) {
    if (linalg::isaContractionOpInterface(op) && op.hasPureTensorSemantics())
      contractions.push_back(op);
  });
  return contractions;
}

std::optional<int64_t>
mlir::fp4train::getParamBlock(FunctionOpInterface function, unsigned param) {
  if (param >= function.getNumArguments())
    return std::nullopt;
  if (auto block = function.getArgAttrOfType<IntegerAttr>(
          param, FP4TrainDialect::kBlockAttrName))
    return block.getInt();
  return std::nullopt;
}

RoleAttr mlir::fp4train::getRoleAnnotation(const ContractionRole &info) {
  MLIRContext *context = info.op->getContext();
  if (*info.role == Role::wgrad)
    return RoleAttr::get(context, Role::wgrad, info.param, info.gradOperand,
                         std::nullopt);
  return RoleAttr::get(context, *info.role, info.param, info.weightOperand,
                       info.weightOperand ? info.contractedDim : std::nullopt);
}

ContractionRole mlir::fp4train::readRoleAnnotation(linalg::LinalgOp op) {
  ContractionRole info;
  info.op = op;
  FailureOr<linalg::ContractionDimensions> dims =
      linalg::inferContractionDims(op);
  if (succeeded(dims))
    setSizes(info, *dims);
  auto role = op->getAttrOfType<RoleAttr>(FP4TrainDialect::kRoleAttrName);
  if (!role)
    return info;
  info.role = role.getValue();
  info.param = role.getWeight();
  if (info.param)
    if (auto function = op->getParentOfType<FunctionOpInterface>())
      info.block = getParamBlock(function, *info.param);
  if (*info.role == Role::wgrad) {
    info.gradOperand = role.getOperand();
  } else {
    info.weightOperand = role.getOperand();
    info.contractedDim = role.getContracted();
  }
  return info;
}

//===----------------------------------------------------------------------===//
// Reports
//===----------------------------------------------------------------------===//

/// `file:line:col` of the first file location in `loc`, else its text.
std::string mlir::fp4train::formatLocation(Location loc) {
  if (auto fileLoc = loc->findInstanceOf<FileLineColLoc>())
    return llvm::formatv("{0}:{1}:{2}", fileLoc.getFilename().getValue(),
                         fileLoc.getLine(), fileLoc.getColumn());
  std::string text;
  llvm::raw_string_ostream os(text);
  loc.print(os);
  return text;
}

static llvm::json::Value sizeOrNull(int64_t size) {
  if (ShapedType::isDynamic(size))
    return nullptr;
  return size;
}

llvm::json::Object mlir::fp4train::describeRole(const ContractionRole &info) {
  llvm::json::Value param = nullptr, block = nullptr;
  if (info.param)
    param = *info.param;
  if (info.block)
    block = *info.block;
  llvm::json::Object object{
      {"loc", formatLocation(info.op->getLoc())},
      {"op", info.op->getName().getStringRef()},
      {"role", stringifyRoleOrOther(info.role)},
      {"param", std::move(param)},
      {"block", std::move(block)},
      {"m", sizeOrNull(info.m)},
      {"n", sizeOrNull(info.n)},
      {"k", sizeOrNull(info.k)},
      {"batch", sizeOrNull(info.batch)},
  };
  // [MOE2] Only routers say so: the other rows keep their shape.
  if (info.router)
    object["router"] = true;
  return object;
}

/// A JSON value as a table cell: `-` for null, text without quotes.
static std::string formatCell(const llvm::json::Value *value) {
  if (!value || value->getAsNull())
    return "-";
  if (std::optional<StringRef> text = value->getAsString())
    return text->str();
  if (std::optional<bool> flag = value->getAsBoolean())
    return *flag ? "yes" : "no";
  std::string text;
  llvm::raw_string_ostream os(text);
  os << *value;
  return text;
}

/// What the quantize report says one contraction became.
static std::string describeQuantization(const llvm::json::Object &row) {
  if (!row.getBoolean("quantized").value_or(false))
    return "kept: " + formatCell(row.get("kept"));
  std::string text;
  llvm::raw_string_ostream os(text);
  if (const llvm::json::Array *operands = row.getArray("operands")) {
    llvm::interleave(
        *operands, os,
        [&](const llvm::json::Value &operand) {
          const llvm::json::Object *o = operand.getAsObject();
          if (!o)
            return;
          os << formatCell(o->get("format")) << ' ';
          if (const llvm::json::Array *block = o->getArray("block"))
            llvm::interleave(
                *block, os, [&](const llvm::json::Value &size) { os << size; },
                "x");
          os << ' ' << formatCell(o->get("rounding"));
          // [MOE1] Per-tensor global scales are the rule; say the exception.
          if (o->getString("global_scale") == "expert")
            os << " per-expert";
        },
        " | ");
  }
  if (const llvm::json::Object *hadamard = row.getObject("hadamard"))
    os << " | Hadamard-" << formatCell(hadamard->get("size")) << ' '
       << formatCell(hadamard->get("signs"));
  return text;
}

std::string mlir::fp4train::formatReportTable(const llvm::json::Array &report) {
  SmallVector<SmallVector<std::string>> rows = {
      {"#", "role", "param", "block", "op", "m", "n", "k", "batch", "loc"}};
  bool quantizeReport = false;
  for (auto [index, value] : llvm::enumerate(report)) {
    const llvm::json::Object *row = value.getAsObject();
    if (!row)
      continue;
    SmallVector<std::string> &cells = rows.emplace_back();
    cells.push_back(std::to_string(index + 1));
    for (StringRef key :
         {"role", "param", "block", "op", "m", "n", "k", "batch", "loc"})
      cells.push_back(formatCell(row->get(key)));
    if (row->getBoolean("router").value_or(false))
      cells[1] += " (router)";
    if (row->get("quantized")) {
      quantizeReport = true;
      cells.push_back(describeQuantization(*row));
    }
  }
  if (quantizeReport)
    rows.front().push_back("quantized as");
  // Every column but the last is padded to its widest cell.
  SmallVector<size_t> widths(rows.front().size(), 0);
  for (const SmallVector<std::string> &cells : rows)
    for (auto [column, cell] : llvm::enumerate(cells))
      widths[column] = std::max(widths[column], cell.size());
  std::string text;
  llvm::raw_string_ostream os(text);
  for (const SmallVector<std::string> &cells : rows) {
    for (auto [column, cell] : llvm::enumerate(cells)) {
      os << cell;
      if (column + 1 < cells.size())
        os.indent(widths[column] - cell.size() + 2);
    }
    os << '\n';
  }
  return text;
}

LogicalResult mlir::fp4train::writeReport(Operation *anchor, StringRef path,
                                          llvm::json::Array report,
                                          ReportFormat format) {
  if (path.empty())
    return success();
  std::string error;
  std::unique_ptr<llvm::ToolOutputFile> file = openOutputFile(path, &error);
  if (!file)
    return anchor->emitError("cannot write the report: ") << error;
  if (format == ReportFormat::Table)
    file->os() << formatReportTable(report);
  else
    file->os() << llvm::formatv("{0:2}", llvm::json::Value(std::move(report)))
               << "\n";
  // A write error (a full disk) must be a diagnostic: left on the stream,
  // raw_fd_ostream's destructor would abort the host with "IO failure on
  // output stream".
  file->os().flush();
  if (std::error_code ec = file->os().error()) {
    file->os().clear_error();
    // A partial regular file is removed; a device (/dev/full) is not.
    if (!llvm::sys::fs::is_regular_file(path))
      file->keep();
    return anchor->emitError("cannot write the report to '")
           << path << "': " << ec.message();
  }
  file->keep();
  return success();
}
