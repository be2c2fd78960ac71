//===- QuantizeMatmuls.cpp - Recipe-driven block-scaled GEMMs -------------===//
//
// Rewrites the Fprop, Dgrad and Wgrad contractions of a training step into
// hadamard? -> quantize -> scaled_matmul sequences chosen by a recipe
// (docs/recipes.md). Roles come from the shared RoleAnalysis ([ROLE1]-[ROLE7]).
//
//===----------------------------------------------------------------------===//

#include "fp4train/Dialect/FP4Train/IR/FP4TrainRecipes.h"
#include "fp4train/Dialect/FP4Train/Transforms/ContractionLayout.h"
#include "fp4train/Dialect/FP4Train/Transforms/Passes.h"
#include "fp4train/Dialect/FP4Train/Transforms/RecipeOptions.h"
#include "fp4train/Dialect/FP4Train/Transforms/RoleAnalysis.h"
#include "fp4train/Numerics/BlockQuant.h"
#include "fp4train/Numerics/ElementCount.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/MathExtras.h"

#include <set>

namespace mlir {
namespace fp4train {
#define GEN_PASS_DEF_FP4TRAINQUANTIZEMATMULS
#include "fp4train/Dialect/FP4Train/Transforms/Passes.h.inc"
} // namespace fp4train
} // namespace mlir

using namespace mlir;
using namespace mlir::fp4train;

//===----------------------------------------------------------------------===//
// Planning
//===----------------------------------------------------------------------===//

namespace {
/// How one input operand of a contraction is quantized.
struct OperandPlan {
  QuantSpecAttr spec;
  /// Which recipe operand this is: "lhs" (X or dY) or "rhs".
  StringRef recipeOperand;
  /// 16x16 blocks: the weight of Fprop/Dgrad under `weights_2d`.
  bool twoD = false;
  /// For a 2-D weight: the operand's K-major layout is `[in, out]` (Dgrad),
  /// so the weight is quantized as `[out, in]` and read transposed.
  bool transposedWeight = false;
};

/// What happens to one contraction.
struct ContractionPlan {
  ContractionRole info;
  /// The recipe for its role; null when it stays in high precision.
  GemmRecipeAttr gemm;
  /// Why it stays in high precision (empty when quantized).
  std::string keptReason;
  OperandPlan operands[2];
  /// K is padded to a multiple of this: the K block, or the Hadamard size.
  int64_t kAlign = 1;
  /// K after zero padding.
  int64_t paddedK = 0;
  /// [MOE1] The batch dimension indexes experts and an operand is NVFP4
  /// with per-expert global scales: the contraction is quantized and
  /// multiplied expert by expert.
  bool perExpert = false;
};
} // namespace

/// Parameters whose GEMMs keep the graph's precision, with the reason: the
/// first `keep_first` and last `keep_last` weights in the program order of
/// their Fprop, and every weight of the first `keep_first_blocks` and last
/// `keep_last_blocks` decoder blocks ([BLK1]), and routers unless the
/// recipe quantizes them ([MOE1]). A block count the step cannot satisfy
/// is an error on `function`.
static FailureOr<llvm::DenseMap<unsigned, StringRef>>
findKeptWeights(FunctionOpInterface function, ArrayRef<ContractionRole> roles,
                RecipeAttr recipe) {
  llvm::SetVector<unsigned> layers;
  std::set<int64_t> blocks;
  for (const ContractionRole &info : roles) {
    if (info.role == Role::fprop && info.param)
      layers.insert(*info.param);
    if (info.role && info.block)
      blocks.insert(*info.block);
  }
  llvm::DenseMap<unsigned, StringRef> kept;
  for (auto [index, param] : llvm::enumerate(layers)) {
    if (index < recipe.getKeepFirst())
      kept[param] = "keep-first";
    else if (index + recipe.getKeepLast() >= layers.size())
      kept[param] = "keep-last";
  }

  unsigned first = recipe.getKeepFirstBlocks();
  unsigned last = recipe.getKeepLastBlocks();
  for (auto [count, option] : {std::pair(first, "keep-first-blocks"),
                               std::pair(last, "keep-last-blocks")}) {
    if (count == 0 || count <= blocks.size())
      continue;
    InFlightDiagnostic diag = function.emitError()
                              << option << "=" << count << " ";
    if (blocks.empty())
      diag << "needs decoder blocks, but no weight of the step has an '"
           << FP4TrainDialect::kBlockAttrName << "' attribute";
    else
      diag << "is more than the step's " << blocks.size() << " decoder blocks";
    return diag;
  }
  // [MOE1] Routers keep the graph's precision unless the recipe says.
  if (!recipe.getQuantizeRouter())
    for (const ContractionRole &info : roles)
      if (info.router)
        kept[*info.param] = "router";
  SmallVector<int64_t> order(blocks.begin(), blocks.end());
  for (const ContractionRole &info : roles) {
    if (!info.param || !info.block || kept.count(*info.param))
      continue;
    size_t index = llvm::find(order, *info.block) - order.begin();
    if (index < first)
      kept[*info.param] = "keep-first-blocks";
    else if (index + last >= order.size())
      kept[*info.param] = "keep-last-blocks";
  }
  return kept;
}

static ContractionPlan
planContraction(FunctionOpInterface function, const ContractionRole &info,
                RecipeAttr recipe,
                const llvm::DenseMap<unsigned, StringRef> &kept) {
  ContractionPlan plan;
  plan.info = info;
  if (!info.role) {
    plan.keptReason = "role other";
    return plan;
  }
  Role role = *info.role;
  GemmRecipeAttr gemm = recipe.getForRole(role);
  if (!gemm) {
    plan.keptReason = (recipe.hasRole(role) ? "recipe keeps " : "roles keep ") +
                      stringifyRole(role).str() + " in high precision";
    return plan;
  }
  if (info.param && kept.count(*info.param)) {
    plan.keptReason = kept.lookup(*info.param).str();
    return plan;
  }
  linalg::LinalgOp op = info.op;
  // The rewrite casts operands and accumulator through f32: an integer
  // contraction (an int8 GEMM, an index computation) is left as it is.
  for (OpOperand &operand : op->getOpOperands()) {
    Type element =
        cast<RankedTensorType>(operand.get().getType()).getElementType();
    if (!isa<Float32Type, BFloat16Type, Float16Type>(element)) {
      std::string reason;
      llvm::raw_string_ostream os(reason);
      os << (op.isDpsInit(&operand) ? "accumulator" : "operand")
         << " element type " << element << " is not f32, bf16 or f16";
      plan.keptReason = reason;
      return plan;
    }
  }
  if (info.m == 1 && info.n == 1) {
    plan.keptReason = "no M or N dimension";
    return plan;
  }

  plan.gemm = gemm;
  // Recipe `lhs` is X (Fprop) or dY (Dgrad, Wgrad); `rhs` is the weight
  // (Fprop, Dgrad) or X (Wgrad). Map them onto the IR's operands.
  unsigned lhsOperand;
  if (role == Role::wgrad) {
    // A bare user-written role has no operand: the textbook dY^T . X.
    lhsOperand = info.gradOperand.value_or(0);
  } else {
    lhsOperand = 1 - info.weightOperand.value_or(1);
    OperandPlan &weight = plan.operands[1 - lhsOperand];
    weight.twoD = recipe.getWeights_2d();
    // K is `in` for Fprop and `out` for Dgrad; the K-major layout of the
    // weight is [out, in] exactly when K is `in`.
    weight.transposedWeight = role == Role::dgrad;
  }
  plan.operands[lhsOperand].spec = gemm.getLhs();
  plan.operands[lhsOperand].recipeOperand = "lhs";
  plan.operands[1 - lhsOperand].spec = gemm.getRhs();
  plan.operands[1 - lhsOperand].recipeOperand = "rhs";

  plan.perExpert =
      recipe.getPerExpertGlobalScale() &&
      llvm::is_contained({gemm.getLhs().getFormat(), gemm.getRhs().getFormat()},
                         Format::nvfp4) &&
      isExpertContraction(function, info);

  plan.kAlign = getKBlockSize(gemm.getLhs().getFormat());
  if (HadamardAttr hadamard = gemm.getHadamard())
    plan.kAlign = std::max(plan.kAlign, hadamard.getSize());
  plan.paddedK = llvm::alignTo(info.k, plan.kAlign);
  return plan;
}

//===----------------------------------------------------------------------===//
// Rewriting
//===----------------------------------------------------------------------===//

namespace {
/// Builds the quantized sequence of the contractions of one function.
class ContractionRewriter {
public:
  /// `numContractions`: how many contractions the function has ([SR1]
  /// seeds of expert slices are numbered after them).
  ContractionRewriter(Value step, unsigned numContractions)
      : step(step), numContractions(numContractions) {}

  /// Rewrites the contraction of `plan`, the `index`-th of its function.
  LogicalResult rewrite(const ContractionPlan &plan, unsigned index);

private:
  /// `(step << 32) + 2 * index + operand`: the [SR1] seed of one operand of
  /// contraction `index`, or of its slice `expert` ([MOE1]), numbered as
  /// contraction `index + numContractions * (expert + 1)`.
  Value stochasticSeed(OpBuilder &b, Location loc, unsigned index,
                       unsigned operand, std::optional<int64_t> expert);
  Value constantI64(OpBuilder &b, Location loc, int64_t value) {
    return arith::ConstantOp::create(b, loc, b.getI64IntegerAttr(value));
  }
  /// The K-major operand `value` padded to `paddedK` (and, for 16x16
  /// blocks, its rows to whole tiles), ready to quantize; a Dgrad 2-D
  /// weight stays in its own `[out, in]` layout ([NV1]).
  Value prepareOperand(OpBuilder &b, Location loc, Value value,
                       const OperandPlan &plan, int64_t paddedK);
  /// Quantizes the prepared operand `value`, or its slice `expert` along
  /// the batch dimension, as `plan` says: a K-major `[batch..., rows', K']`
  /// block-scaled tensor. With `amax`, the NVFP4 tensor amax is computed
  /// here, given to the quantize op, and returned there ([TE2]).
  Value quantizeOperand(OpBuilder &b, Location loc, Value value,
                        const OperandPlan &plan, Value seed,
                        std::optional<int64_t> expert, Value *amax = nullptr);

  Value step;
  unsigned numContractions;
};
} // namespace

/// The slice `[index, :, ...]` of `value` along its leading dimension, of
/// size 1 there (same rank).
static Value extractLeadingSlice(OpBuilder &b, Location loc, Value value,
                                 int64_t index) {
  auto type = cast<ShapedType>(value.getType());
  SmallVector<OpFoldResult> offsets(type.getRank(), b.getIndexAttr(0));
  SmallVector<OpFoldResult> strides(type.getRank(), b.getIndexAttr(1));
  SmallVector<OpFoldResult> sizes =
      getAsIndexOpFoldResult(b.getContext(), type.getShape());
  offsets[0] = b.getIndexAttr(index);
  sizes[0] = b.getIndexAttr(1);
  return tensor::ExtractSliceOp::create(b, loc, value, offsets, sizes, strides);
}

/// `dest` with `slice` (size 1 along the leading dimension) written at
/// `index` along it.
static Value insertLeadingSlice(OpBuilder &b, Location loc, Value slice,
                                Value dest, int64_t index) {
  auto type = cast<ShapedType>(slice.getType());
  SmallVector<OpFoldResult> offsets(type.getRank(), b.getIndexAttr(0));
  SmallVector<OpFoldResult> strides(type.getRank(), b.getIndexAttr(1));
  offsets[0] = b.getIndexAttr(index);
  return tensor::InsertSliceOp::create(
      b, loc, slice, dest, offsets,
      getAsIndexOpFoldResult(b.getContext(), type.getShape()), strides);
}

Value ContractionRewriter::stochasticSeed(OpBuilder &b, Location loc,
                                          unsigned index, unsigned operand,
                                          std::optional<int64_t> expert) {
  int64_t number = index;
  if (expert)
    number += int64_t(numContractions) * (*expert + 1);
  Value shifted = arith::ShLIOp::create(b, loc, step, constantI64(b, loc, 32));
  return arith::AddIOp::create(b, loc, shifted,
                               constantI64(b, loc, 2 * number + operand));
}

Value ContractionRewriter::prepareOperand(OpBuilder &b, Location loc,
                                          Value value, const OperandPlan &plan,
                                          int64_t paddedK) {
  auto type = cast<RankedTensorType>(value.getType());
  int64_t rank = type.getRank();
  if (!plan.twoD)
    return padDimWithZeros(b, loc, value, rank - 1, paddedK);

  // [NV1] 2-D weight blocks: quantize the weight in its own [out, in]
  // layout, padded to whole 16x16 tiles, so Fprop and Dgrad quantize the
  // same value (CSE merges them); Dgrad reads it through a transposed view.
  Value weight =
      plan.transposedWeight ? transposeLastTwo(b, loc, value) : value;
  int64_t paddedRows = llvm::alignTo(type.getDimSize(rank - 2), 16);
  int64_t paddedOut = plan.transposedWeight ? paddedK : paddedRows;
  int64_t paddedIn = plan.transposedWeight ? paddedRows : paddedK;
  weight = padDimWithZeros(b, loc, weight, rank - 2, paddedOut);
  return padDimWithZeros(b, loc, weight, rank - 1, paddedIn);
}

Value ContractionRewriter::quantizeOperand(OpBuilder &b, Location loc,
                                           Value value, const OperandPlan &plan,
                                           Value seed,
                                           std::optional<int64_t> expert,
                                           Value *amax) {
  if (expert)
    value = extractLeadingSlice(b, loc, value, *expert);
  if (amax)
    *amax = arith::BitcastOp::create(
        b, loc, b.getF32Type(),
        tensor::ExtractOp::create(b, loc, buildTensorAmaxBits(b, loc, value),
                                  ValueRange{}));
  auto type = cast<RankedTensorType>(value.getType());
  int64_t rank = type.getRank();
  Format format = plan.spec.getFormat();
  std::optional<int64_t> dim2;
  if (plan.twoD)
    dim2 = rank - 2;
  auto resultType = ScaledTensorType::getForFormat(
      b.getContext(), format, type.getShape(), rank - 1, dim2,
      /*hasGlobalScale=*/format == Format::nvfp4);
  bool stochastic = plan.spec.getRounding() == RoundingMode::stochastic;
  Value quantized =
      QuantizeOp::create(b, loc, resultType, value, stochastic ? seed : Value(),
                         amax ? *amax : Value(), /*origin=*/ValueRange(),
                         /*logical_shape=*/DenseI64ArrayAttr(),
                         plan.spec.getRounding(), plan.spec.getScaleMode());
  if (!plan.twoD || !plan.transposedWeight)
    return quantized;
  SmallVector<int64_t> shape(resultType.getShape());
  std::swap(shape[rank - 2], shape[rank - 1]);
  auto viewType = ScaledTensorType::get(
      b.getContext(), shape, resultType.getElementType(),
      resultType.getBlockShape(), resultType.getScaleType(),
      resultType.getHasGlobalScale());
  return TransposeOp::create(b, loc, viewType, quantized);
}

LogicalResult ContractionRewriter::rewrite(const ContractionPlan &plan,
                                           unsigned index) {
  linalg::LinalgOp op = plan.info.op;
  Location loc = op.getLoc();
  FailureOr<linalg::ContractionDimensions> dims =
      linalg::inferContractionDims(op);
  if (failed(dims))
    return op.emitError("cannot infer the contraction dimensions");
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();

  OpBuilder b(op);
  OpOperand *inputs[2] = {op.getDpsInputOperand(0), op.getDpsInputOperand(1)};
  OpOperand *init = op.getDpsInitOperand(0);
  DimGroups groups[2] = {{dims->batch, dims->m, dims->k},
                         {dims->batch, dims->n, dims->k}};
  DimGroups resultGroups = {dims->batch, dims->m, dims->n};

  Value operands[2];
  for (unsigned i = 0; i < 2; ++i)
    operands[i] = toGroupedLayout(b, loc, inputs[i]->get(),
                                  op.getMatchingIndexingMap(inputs[i]), ranges,
                                  groups[i]);

  // [H1] The same rotation on both operands along K keeps the product.
  if (HadamardAttr hadamard = plan.gemm.getHadamard()) {
    Value seed, hadamardStep;
    if (hadamard.isRandom()) {
      seed = constantI64(b, loc, index);
      hadamardStep = step;
    }
    for (Value &operand : operands) {
      auto type = cast<RankedTensorType>(operand.getType());
      int64_t rank = type.getRank();
      operand = castElements(b, loc, operand, b.getF32Type());
      operand = padDimWithZeros(b, loc, operand, rank - 1, plan.paddedK);
      operand = HadamardOp::create(b, loc, operand, rank - 1, hadamard, seed,
                                   hadamardStep);
      // [H2] TransformerEngine rotates a bf16 operand with a bf16 GEMM: its
      // rotated values are rounded to bf16 before amax and quantization.
      if (plan.gemm.getHadamardPrecision() == HadamardPrecision::operand) {
        operand = castElements(b, loc, operand, type.getElementType());
        operand = castElements(b, loc, operand, b.getF32Type());
      }
    }
  }
  for (unsigned i = 0; i < 2; ++i)
    operands[i] =
        prepareOperand(b, loc, operands[i], plan.operands[i], plan.paddedK);

  /// The K-major quantized operands of the whole batch, or of one expert,
  /// and with `alpha = amax` the factor of their product ([TE2]).
  bool amaxAlpha = plan.gemm.getAlpha() == GemmAlpha::amax;
  auto quantizeBoth = [&](std::optional<int64_t> expert) {
    std::array<Value, 3> quantized;
    Value amax[2];
    for (unsigned i = 0; i < 2; ++i) {
      Value seed;
      if (plan.operands[i].spec.getRounding() == RoundingMode::stochastic)
        seed = stochasticSeed(b, loc, index, i, expert);
      quantized[i] =
          quantizeOperand(b, loc, operands[i], plan.operands[i], seed, expert,
                          amaxAlpha ? &amax[i] : nullptr);
    }
    // TransformerEngine's alpha = amax_a · amax_b · f32(1 / (6² · 448²)),
    // left to right in f32 (the product commutes exactly).
    if (amaxAlpha)
      quantized[2] = arith::MulFOp::create(
          b, loc, arith::MulFOp::create(b, loc, amax[0], amax[1]),
          arith::ConstantOp::create(
              b, loc,
              b.getF32FloatAttr(::fp4train::numerics::kTEGemmAlphaFactor)));
    return quantized;
  };

  // [GEMM1] accumulates onto the contraction's init, in f32, padded to the
  // quantized operands' rows.
  Value acc =
      toGroupedLayout(b, loc, init->get(), op.getMatchingIndexingMap(init),
                      ranges, resultGroups);
  auto accType = cast<RankedTensorType>(acc.getType());
  acc = castElements(b, loc, acc, b.getF32Type());
  int64_t rank = accType.getRank();
  // [MOE1] Per-expert global scales: each expert's slice is quantized on
  // its own (and multiplied on its own below).
  SmallVector<std::array<Value, 3>> quantized;
  if (plan.perExpert) {
    for (int64_t expert = 0, e = accType.getDimSize(0); expert < e; ++expert)
      quantized.push_back(quantizeBoth(expert));
  } else {
    quantized.push_back(quantizeBoth(std::nullopt));
  }
  for (unsigned i = 0; i < 2; ++i) {
    int64_t rows =
        cast<ScaledTensorType>(quantized[0][i].getType()).getShape()[rank - 2];
    acc = padDimWithZeros(b, loc, acc, rank - 2 + i, rows);
  }
  Value result = acc;
  if (!plan.perExpert) {
    result = ScaledMatmulOp::create(b, loc, acc.getType(), quantized[0][0],
                                    quantized[0][1], acc, quantized[0][2]);
  } else {
    for (auto [expert, pair] : llvm::enumerate(quantized)) {
      Value slice = extractLeadingSlice(b, loc, acc, expert);
      slice = ScaledMatmulOp::create(b, loc, slice.getType(), pair[0], pair[1],
                                     slice, pair[2]);
      result = insertLeadingSlice(b, loc, slice, result, expert);
    }
  }
  result = sliceToShape(b, loc, result, accType.getShape());
  result = castElements(b, loc, result, accType.getElementType());
  result = fromGroupedLayout(b, loc, result,
                             op.getIndexingMapMatchingResult(op->getResult(0)),
                             ranges, resultGroups);
  op->getResult(0).replaceAllUsesWith(result);
  op->erase();
  return success();
}

//===----------------------------------------------------------------------===//
// Report
//===----------------------------------------------------------------------===//

static llvm::json::Object describeOperand(const OperandPlan &plan,
                                          bool perExpert) {
  Format format = plan.spec.getFormat();
  llvm::json::Array block;
  if (plan.twoD)
    block.push_back(16);
  block.push_back(plan.twoD ? 16 : getKBlockSize(format));
  llvm::json::Object object{
      {"recipe_operand", plan.recipeOperand},
      {"format", stringifyFormat(format)},
      {"block", std::move(block)},
      {"rounding", stringifyRoundingMode(plan.spec.getRounding())},
  };
  if (format != Format::nvfp4)
    object["scale_mode"] = stringifyScaleMode(plan.spec.getScaleMode());
  else
    object["global_scale"] = perExpert ? "expert" : "tensor";
  return object;
}

static llvm::json::Object describePlan(const ContractionPlan &plan) {
  llvm::json::Object object = describeRole(plan.info);
  object["quantized"] = plan.keptReason.empty();
  if (!plan.keptReason.empty()) {
    object["kept"] = plan.keptReason;
    return object;
  }
  object["kept"] = nullptr;
  llvm::json::Array operands;
  for (const OperandPlan &operand : plan.operands)
    operands.push_back(describeOperand(operand, plan.perExpert));
  object["operands"] = std::move(operands);
  if (HadamardAttr hadamard = plan.gemm.getHadamard())
    object["hadamard"] = llvm::json::Object{
        {"size", hadamard.getSize()},
        {"signs", stringifyHadamardSigns(hadamard.getSigns())},
        {"precision",
         stringifyHadamardPrecision(plan.gemm.getHadamardPrecision())}};
  else
    object["hadamard"] = nullptr;
  object["padded_k"] = plan.paddedK;
  // [TE2] Only the exception is said: the others multiply global scales.
  if (plan.gemm.getAlpha() == GemmAlpha::amax)
    object["alpha"] = stringifyGemmAlpha(GemmAlpha::amax);
  return object;
}

//===----------------------------------------------------------------------===//
// The pass
//===----------------------------------------------------------------------===//

namespace {
struct QuantizeMatmulsPass
    : public mlir::fp4train::impl::FP4TrainQuantizeMatmulsBase<
          QuantizeMatmulsPass> {
  using Base::Base;
  /// A clone (one per thread of a nested pass manager, made after
  /// initialize) gets its own option objects, whose values
  /// copyOptionValuesFrom copies, and the resolved recipe.
  QuantizeMatmulsPass(const QuantizeMatmulsPass &other)
      : Base(other), resolvedRecipe(other.resolvedRecipe) {}

  /// Options are checked once, before any IR is touched.
  LogicalResult initialize(MLIRContext *context) override {
    Location loc = UnknownLoc::get(context);
    resolvedRecipe = parseRecipe(loc, recipe);
    if (resolvedRecipe)
      resolvedRecipe = overrides.getValue().apply(loc, resolvedRecipe);
    return success(resolvedRecipe != nullptr);
  }

  void runOnOperation() override {
    ModuleOp module = getOperation();
    llvm::json::Array report;
    for (auto function : module.getOps<FunctionOpInterface>()) {
      if (function.isExternal())
        continue;
      if (failed(runOnFunction(function, resolvedRecipe, report)))
        return signalPassFailure();
    }
    if (failed(
            writeReport(module, this->report, std::move(report), reportFormat)))
      return signalPassFailure();
  }

  LogicalResult runOnFunction(FunctionOpInterface function, RecipeAttr recipe,
                              llvm::json::Array &report) {
    // The roles fp4train-annotate-roles found, read from the IR.
    SmallVector<ContractionRole> roles =
        llvm::map_to_vector(getContractions(function), readRoleAnnotation);
    markRouters(function, roles);
    FailureOr<llvm::DenseMap<unsigned, StringRef>> kept =
        findKeptWeights(function, roles, recipe);
    if (failed(kept))
      return failure();

    SmallVector<ContractionPlan> plans;
    for (const ContractionRole &info : roles) {
      ContractionPlan &plan =
          plans.emplace_back(planContraction(function, info, recipe, *kept));
      if (!plan.gemm)
        continue;
      linalg::LinalgOp op = info.op;
      if (llvm::any_of(op.getStaticLoopRanges(), ShapedType::isDynamic))
        return op.emitError("cannot quantize a ")
               << stringifyRole(*info.role)
               << " contraction with dynamic shapes: block scales need "
                  "static dimensions";
      // A !fp4train.scaled type must count its elements in int64 (the
      // type's verifier); a quantized operand of a shape past that would be
      // IR that no later pass or parser accepts. Padding K to a multiple of
      // kAlign at most multiplies a count by kAlign.
      for (Value operand : op->getOperands()) {
        auto shaped = dyn_cast<ShapedType>(operand.getType());
        if (!shaped)
          continue;
        SmallVector<int64_t> padded(shaped.getShape());
        if (plan.paddedK != info.k)
          padded.push_back(plan.kAlign);
        if (!::fp4train::checkedNumElements(padded))
          return op.emitError("cannot quantize a ")
                 << stringifyRole(*info.role) << " contraction on "
                 << operand.getType() << ": its element count"
                 << (plan.paddedK != info.k ? ", padded along K," : "")
                 << " does not fit in int64";
      }
      if (!pad && plan.paddedK != info.k)
        return op.emitError("K = ")
               << info.k << " is not a multiple of " << plan.kAlign
               << " (the K block or Hadamard size of the "
               << stringifyRole(*info.role)
               << " recipe), and pad=0 forbids zero padding";
      if (!pad && llvm::any_of(plan.operands, [&](const OperandPlan &p) {
            return p.twoD && (p.recipeOperand == "rhs") &&
                   (info.weightOperand == 0 ? info.m : info.n) % 16 != 0;
          }))
        return op.emitError("the weight's ")
               << (info.weightOperand == 0 ? info.m : info.n)
               << " rows are not a multiple of the 16x16 block, and pad=0 "
                  "forbids zero padding";
    }

    // [SR1] seeds of expert slices ([MOE1]) are numbered after the
    // contractions; every number must leave the step's 32 bits alone.
    for (ContractionPlan &plan : plans)
      if (plan.perExpert &&
          2 * uint64_t(plans.size()) * (uint64_t(plan.info.batch) + 1) >
              (uint64_t(1) << 32))
        return plan.info.op.emitError("per-expert global scales for ")
               << plan.info.batch << " experts in a function of "
               << plans.size()
               << " contractions number more stochastic-rounding seeds than "
                  "fit in 32 bits; use per-expert-global-scale=0";

    Value step;
    if (llvm::any_of(plans, [](const ContractionPlan &p) { return p.gemm; })) {
      FailureOr<Value> stepValue = getStep(function);
      if (failed(stepValue))
        return failure();
      step = *stepValue;
    }
    ContractionRewriter rewriter(step, plans.size());
    for (auto [index, plan] : llvm::enumerate(plans)) {
      report.push_back(describePlan(plan));
      if (plan.gemm && failed(rewriter.rewrite(plan, index)))
        return failure();
    }
    return success();
  }

  /// The training step as an i64 at the function entry: argument `step-arg`
  /// or the constant 0.
  FailureOr<Value> getStep(FunctionOpInterface function) {
    Block &entry = function.getFunctionBody().front();
    OpBuilder b = OpBuilder::atBlockBegin(&entry);
    Location loc = function.getLoc();
    if (stepArg < 0)
      return Value(arith::ConstantOp::create(b, loc, b.getI64IntegerAttr(0)));
    if (static_cast<unsigned>(stepArg) >= entry.getNumArguments())
      return function.emitError("step-arg=")
             << static_cast<int>(stepArg)
             << " names no argument: the function has "
             << entry.getNumArguments();
    Value arg = entry.getArgument(stepArg);
    auto type = dyn_cast<IntegerType>(arg.getType());
    if (!type && !arg.getType().isIndex())
      return function.emitError("step-arg=")
             << static_cast<int>(stepArg) << " names an argument of type "
             << arg.getType() << "; expected an integer";
    if (!type)
      return Value(arith::IndexCastOp::create(b, loc, b.getI64Type(), arg));
    if (type.getWidth() < 64)
      return Value(arith::ExtUIOp::create(b, loc, b.getI64Type(), arg));
    if (type.getWidth() > 64)
      return Value(arith::TruncIOp::create(b, loc, b.getI64Type(), arg));
    return arg;
  }

  /// The recipe overrides ([RO1]), options like the generated ones.
  RecipeOverrideOptions overrides{*this};
  RecipeAttr resolvedRecipe;
};
} // namespace

std::unique_ptr<Pass> mlir::fp4train::createFP4TrainQuantizeMatmuls(
    const FP4TrainQuantizeMatmulsOptions &options,
    const RecipeOverrides &overrides) {
  auto pass = std::make_unique<QuantizeMatmulsPass>(options);
  pass->overrides.setValue(overrides);
  return pass;
}
