//===- ShardStep.cpp - Data and tensor parallelism as annotations ---------===//
//
// fp4train-shard-step: a grid and the shard.shard annotations of data,
// (Megatron) tensor and expert parallelism on every training step of a
// module.
//
//===----------------------------------------------------------------------===//

#include "ShardingUtils.h"

#include "fp4train/Dialect/FP4Train/IR/FP4TrainDialect.h"
#include "fp4train/Dialect/FP4Train/Transforms/RoleAnalysis.h"
#include "fp4train/Sharding/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/SymbolTable.h"

namespace mlir::fp4train {
#define GEN_PASS_DEF_FP4TRAINSHARDSTEP
#include "fp4train/Sharding/Passes.h.inc"
} // namespace mlir::fp4train

using namespace mlir;
using namespace mlir::fp4train;
using namespace mlir::fp4train::sharding;
using shard::ShardingArray;

namespace {

/// A parameter's split: the dimension and the grid axis it is split along.
using ParamSplits = llvm::SmallDenseMap<unsigned, std::pair<int64_t, int>>;

/// [SH11] The expert weights of `function`: the parameters of its expert
/// contractions ([MOE1]: rank 3, the one batch loop over the experts, whose
/// dimension is the first in the layouts the front ends write, `[E, out,
/// in]` and `[E, in, out]`).
static FailureOr<llvm::SmallSetVector<unsigned, 8>>
getExpertWeights(func::FuncOp function) {
  FailureOr<SmallVector<ContractionRole>> roles =
      analyzeRoles(function, /*extraParams=*/{}, WeightLayout::OutIn);
  if (failed(roles))
    return failure();
  llvm::SmallSetVector<unsigned, 8> experts;
  for (const ContractionRole &info : *roles)
    if (info.param && isExpertContraction(function, info))
      experts.insert(*info.param);
  return experts;
}

struct ShardStepPass
    : public mlir::fp4train::impl::FP4TrainShardStepBase<ShardStepPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    int64_t data = dp, tensor = tp, expert = ep;
    auto fail = [&](const Twine &message) {
      module.emitError("fp4train-shard-step: ") << message;
      signalPassFailure();
    };
    if (data < 1 || tensor < 1 || expert < 1)
      return fail("dp, tp and ep must be at least 1, got dp=" + Twine(data) +
                  " tp=" + Twine(tensor) + " ep=" + Twine(expert));
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
    if (data == 1 && tensor == 1 && expert == 1)
      return;

    // One grid axis per kind of parallelism asked for, in this order; the
    // grid is named after them (@dp, @tp, @ep, @dp_tp, @dp_ep, ...).
    SmallVector<int64_t> shape;
    SmallVector<StringRef> names;
    auto addAxis = [&](int64_t processes, StringRef name) {
      std::optional<shard::GridAxis> axis;
      if (processes > 1) {
        axis = shape.size();
        shape.push_back(processes);
        names.push_back(name);
      }
      return axis;
    };
    std::optional<shard::GridAxis> dataAxis = addAxis(data, "dp");
    std::optional<shard::GridAxis> tensorAxis = addAxis(tensor, "tp");
    std::optional<shard::GridAxis> expertAxis = addAxis(expert, "ep");
    std::string gridName = llvm::join(names, "_");
    if (SymbolTable::lookupSymbolIn(module, gridName))
      return fail("the module already has a symbol named '" + gridName + "'");
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
      ParamSplits splits;
      for (auto [argNumber, dim] : tensorSplits) {
        auto type = argNumber < function.getNumArguments()
                        ? dyn_cast<RankedTensorType>(
                              function.getArgumentTypes()[argNumber])
                        : RankedTensorType();
        if (!type || !isParam(argNumber) || dim >= type.getRank())
          return fail("tp-split " + Twine(argNumber) + ":" + Twine(dim) +
                      " does not name a dimension of a parameter tensor of @" +
                      function.getName());
        splits[argNumber] = {dim, *tensorAxis};
      }
      if (expertAxis) {
        FailureOr<llvm::SmallSetVector<unsigned, 8>> experts =
            getExpertWeights(function);
        if (failed(experts))
          return signalPassFailure();
        if (experts->empty())
          return fail("ep=" + Twine(expert) + " splits expert weights, and @" +
                      function.getName() +
                      " has none (no contraction of a rank-3 parameter "
                      "batched over its experts)");
        for (unsigned param : *experts)
          if (!splits.try_emplace(param, 0, *expertAxis).second)
            return fail("argument " + Twine(param) + " of @" +
                        function.getName() +
                        " is an expert weight, which ep splits; tp-split "
                        "names it too");
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
        } else if (auto it = splits.find(number); it != splits.end()) {
          auto [splitDim, axis] = it->second;
          dim = splitDim;
          sharding = splitAlong(type.getRank(), dim, axis);
          bool isExpert = expertAxis && axis == *expertAxis;
          parts = isExpert ? expert : tensor;
          option = isExpert ? "ep" : "tp";
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
      annotateParameterResults(function, gridRef, splits);
    }
  }

  /// A training step returns the loss and then one tensor per parameter,
  /// in order (its update or gradient, of the parameter's type): each such
  /// result gets its parameter's split, so that the partition gathers or
  /// slices it into the layout of the parameter it belongs to (a bias
  /// gradient summed over split features comes back whole for a whole
  /// bias).
  void annotateParameterResults(func::FuncOp function, FlatSymbolRefAttr grid,
                                const ParamSplits &splits) {
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
        if (auto it = splits.find(param); it != splits.end())
          axes[it->second.first].push_back(it->second.second);
        Value sharding = shard::ShardingOp::create(
            b, ret.getLoc(), makeSharding(grid, axes, ctx));
        operand.set(
            shard::ShardOp::create(b, ret.getLoc(), operand.get(), sharding)
                .getResult());
      }
    });
  }
};

} // namespace
