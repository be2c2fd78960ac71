//===- FP4TrainShardingModels.cpp - Partitioning the fp4train ops ---------===//
//
// ShardingInterface models of the fp4train ops (docs/sharding.md).
//
// A block-scaled value cannot carry a `shard.shard` annotation (the shard ops
// take ranked tensors), so its sharding is that of the logical tensor it
// holds: the tensor it was quantized or packed from, through transposes.
// Propagation reads the shardings of scaled operands that way; partition
// gives every scaled value the local type of its shard. Each model checks
// what partitioning must not change:
// - [SH1] a split along a blocked dimension falls on whole blocks (and a
//   rotated dimension on whole rotations);
// - [SH2] an NVFP4 quantize with a computed amax on a split tensor encodes
//   with the amax of the whole tensor: local amax, all-reduce (max);
// - [SH3] a stochastic quantize of a shard indexes [SR1] by the element's
//   position in the whole tensor (the `at ... of` form of quantize);
// - [SH5] a scaled_matmul split along K sums its [GEMM1] partial products
//   with an all-reduce (sum) and then adds the accumulator.
//
//===----------------------------------------------------------------------===//

#include "fp4train/Sharding/ShardingModels.h"

#include "fp4train/Dialect/FP4Train/IR/FP4TrainOps.h"
#include "fp4train/Dialect/FP4Train/Transforms/ContractionLayout.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/Dialect/Shard/Interfaces/ShardingInterface.h"
#include "mlir/Dialect/Shard/Interfaces/ShardingInterfaceImpl.h"
#include "mlir/Dialect/Shard/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"

#include "ShardingUtils.h"

using namespace mlir;
using namespace mlir::fp4train;
using namespace mlir::fp4train::sharding;
using shard::GridAxis;
using shard::GridOp;
using shard::Sharding;
using shard::ShardingArray;
using shard::ShardingOption;

//===----------------------------------------------------------------------===//
// The logical sharding of a block-scaled value
//===----------------------------------------------------------------------===//

/// The split axes of the logical tensor that `value` holds, one list per
/// dimension, with the grid; nullopt when nothing says how it is split.
static std::optional<std::pair<FlatSymbolRefAttr, ShardingArray>>
getLogicalSplit(Value value) {
  if (auto ranked = dyn_cast<RankedTensorType>(value.getType())) {
    auto annotation = value.getDefiningOp<shard::ShardOp>();
    if (!annotation)
      return std::nullopt;
    Sharding sharding(annotation.getSharding());
    return std::make_pair(sharding.getGridAttr(),
                          getSplitAxes(sharding, ranked.getRank()));
  }
  Operation *producer = value.getDefiningOp();
  if (auto quantize = dyn_cast_or_null<QuantizeOp>(producer))
    return getLogicalSplit(quantize.getInput());
  if (auto pack = dyn_cast_or_null<PackOp>(producer))
    return getLogicalSplit(pack.getValues());
  if (auto transpose = dyn_cast_or_null<TransposeOp>(producer)) {
    auto split = getLogicalSplit(transpose.getInput());
    if (split && split->second.size() >= 2)
      std::swap(split->second[split->second.size() - 2], split->second.back());
    return split;
  }
  return std::nullopt;
}

/// The sharding option of an op whose loops are the dimensions of one
/// logical tensor, from the first of `candidates` that is known.
static ShardingOption getOptionFromLogicalSplit(
    ArrayRef<std::optional<std::pair<FlatSymbolRefAttr, ShardingArray>>>
        candidates) {
  for (const auto &candidate : candidates)
    if (candidate && candidate->first)
      return ShardingOption(candidate->second, candidate->first);
  return ShardingOption::makeEmpty();
}

/// The sharding of a ranked operand or result given the split axes of its
/// dimensions; null for scalars and block-scaled values (they carry none).
static Sharding getAnnotation(Type type, const ShardingOption &option,
                              ShardingArray axes) {
  auto ranked = dyn_cast<RankedTensorType>(type);
  if (!ranked)
    return Sharding();
  if (ranked.getRank() == 0)
    return Sharding(option.grid);
  axes.resize(ranked.getRank());
  return makeSharding(option.grid, std::move(axes), type.getContext());
}

/// The option's split axes padded to `rank` dimensions.
static ShardingArray getAxes(const ShardingOption &option, int64_t rank) {
  ShardingArray axes = option.shardingArray;
  axes.resize(rank);
  return axes;
}

//===----------------------------------------------------------------------===//
// Ops over one logical tensor
//===----------------------------------------------------------------------===//

namespace {

/// quantize, dequantize, hadamard, pack, unpack and transpose: their loops
/// are the dimensions of the one logical tensor they read and write.
template <typename ConcreteModel, typename Op>
struct LogicalTensorModel
    : public shard::ShardingInterface::ExternalModel<ConcreteModel, Op> {
  static int64_t getLogicalRank(Operation *op) {
    Type type = op->getOperand(0).getType();
    if (auto scaled = dyn_cast<ScaledTensorType>(type))
      return scaled.getRank();
    return cast<RankedTensorType>(type).getRank();
  }

  SmallVector<utils::IteratorType> getLoopIteratorTypes(Operation *op) const {
    return SmallVector<utils::IteratorType>(getLogicalRank(op),
                                            utils::IteratorType::parallel);
  }

  SmallVector<AffineMap> getIndexingMaps(Operation *op) const {
    int64_t rank = getLogicalRank(op);
    MLIRContext *ctx = op->getContext();
    SmallVector<AffineMap> maps;
    auto mapOf = [&](Type type) {
      // Every tensor of the op is the logical tensor (transpose's result is
      // its operand's, whose dimensions the loops follow).
      if (type.isIntOrIndexOrFloat())
        return AffineMap::get(rank, 0, {}, ctx);
      return AffineMap::getMultiDimIdentityMap(rank, ctx);
    };
    for (Type type : op->getOperandTypes())
      maps.push_back(mapOf(type));
    for (Type type : op->getResultTypes())
      maps.push_back(mapOf(type));
    return maps;
  }

  FailureOr<ShardingOption>
  getShardingOption(Operation *op, ArrayRef<Sharding> operandShardings,
                    ArrayRef<Sharding> resultShardings) const {
    // Block-scaled operands first: they cannot be resharded.
    SmallVector<std::optional<std::pair<FlatSymbolRefAttr, ShardingArray>>>
        candidates;
    for (Value operand : op->getOperands())
      if (isa<ScaledTensorType>(operand.getType()))
        candidates.push_back(getLogicalSplit(operand));
    int64_t rank = getLogicalRank(op);
    auto fromAnnotation = [&](const Sharding &sharding, Type type) {
      auto ranked = dyn_cast<RankedTensorType>(type);
      if (!sharding || !ranked || ranked.getRank() != rank)
        return;
      candidates.push_back(
          std::make_pair(sharding.getGridAttr(), getSplitAxes(sharding, rank)));
    };
    for (auto [sharding, type] :
         llvm::zip(operandShardings, op->getOperandTypes()))
      fromAnnotation(sharding, type);
    for (auto [sharding, type] :
         llvm::zip(resultShardings, op->getResultTypes()))
      fromAnnotation(sharding, type);
    return getOptionFromLogicalSplit(candidates);
  }

  FailureOr<std::vector<Sharding>>
  getShardingAnnotations(Operation *op, const ShardingOption &option) const {
    int64_t rank = getLogicalRank(op);
    std::vector<Sharding> result;
    auto add = [&](Type type) {
      result.push_back(getAnnotation(type, option, getAxes(option, rank)));
    };
    for (Type type : op->getOperandTypes())
      add(type);
    for (Type type : op->getResultTypes())
      add(type);
    return result;
  }

  LogicalResult addShardingAnnotations(Operation *op, OpBuilder &b,
                                       const ShardingOption &option) const {
    return addAnnotations(*static_cast<const ConcreteModel *>(this), op, b,
                          option);
  }
};

/// The logical split of the op being partitioned, from its block-scaled
/// operand or its annotated operand or result; checks that every annotated
/// tensor of the op agrees with it (a block-scaled value cannot be
/// resharded on the way).
template <typename Model>
static FailureOr<std::pair<GridOp, ShardingArray>> getPartitionSplit(
    const Model &model, Operation *op, ArrayRef<Sharding> operandShardings,
    ArrayRef<Sharding> resultShardings, SymbolTableCollection &symbols) {
  FailureOr<ShardingOption> option =
      model.getShardingOption(op, operandShardings, resultShardings);
  if (failed(option))
    return failure();
  int64_t rank = Model::getLogicalRank(op);
  if (option->empty || !option->grid)
    return std::make_pair(GridOp(), ShardingArray(rank));
  GridOp grid = shard::getGrid(op, option->grid, symbols);
  if (!grid)
    return op->emitOpError("names the unknown grid ") << option->grid;
  ShardingArray axes = getAxes(*option, rank);
  auto check = [&](const Sharding &sharding, Type type,
                   StringRef what) -> LogicalResult {
    auto ranked = dyn_cast<RankedTensorType>(type);
    if (!sharding || !ranked || ranked.getRank() != rank)
      return success();
    if (failed(checkPlainSharding(op, sharding, what)))
      return failure();
    if (getSplitAxes(sharding, rank) != axes ||
        sharding.getGridAttr() != option->grid)
      return op->emitOpError("has its ")
             << what << " sharded as " << describeSplit(sharding, rank)
             << " but the block-scaled tensor it belongs to as "
             << describeSplit(option->grid, axes)
             << " (reshard the high-precision tensor before it is quantized)";
    return success();
  };
  for (auto [index, pair] :
       llvm::enumerate(llvm::zip(operandShardings, op->getOperandTypes())))
    if (failed(check(std::get<0>(pair), std::get<1>(pair),
                     "operand " + std::to_string(index))))
      return failure();
  for (auto [index, pair] :
       llvm::enumerate(llvm::zip(resultShardings, op->getResultTypes())))
    if (failed(check(std::get<0>(pair), std::get<1>(pair),
                     "result " + std::to_string(index))))
      return failure();
  return std::make_pair(grid, std::move(axes));
}

/// The shard shape of `type`'s logical tensor under `axes` ([SH1]); the
/// whole shape without a grid.
static FailureOr<SmallVector<int64_t>>
getScaledShardShape(Operation *op, ScaledTensorType type, GridOp grid,
                    const ShardingArray &axes) {
  if (!grid)
    return SmallVector<int64_t>(type.getShape());
  return getShardShape(op, type.getShape(), type.getBlockShape(), grid, axes,
                       "block");
}

static ScaledTensorType withShape(ScaledTensorType type,
                                  ArrayRef<int64_t> shape) {
  return ScaledTensorType::get(shape, type.getElementType(),
                               type.getBlockShape(), type.getScaleType(),
                               type.getHasGlobalScale());
}

static RankedTensorType withShape(RankedTensorType type,
                                  ArrayRef<int64_t> shape) {
  return RankedTensorType::get(shape, type.getElementType());
}

//===----------------------------------------------------------------------===//
// quantize
//===----------------------------------------------------------------------===//

/// [NV1] amax of a shard, all-reduced (max) over the grid axes that split
/// the tensor [SH2]. The amax is the integer max of the sign-cleared bit
/// patterns (exact, NaN-propagating); those are non-negative as i32, so the
/// collective's signed max is the same max.
static Value buildGlobalAmax(ImplicitLocOpBuilder &b, Value shard, GridOp grid,
                             ArrayRef<GridAxis> axes) {
  Type i32 = b.getI32Type();
  Value local = buildTensorAmaxBits(b, b.getLoc(), shard);
  auto vectorType = RankedTensorType::get({1}, i32);
  Value vector = tensor::ExpandShapeOp::create(
      b, vectorType, local, ArrayRef<ReassociationIndices>{});
  Value reduced = shard::AllReduceOp::create(b, vector, grid.getSymName(), axes,
                                             shard::ReductionKind::Max);
  Value bits = tensor::ExtractOp::create(
      b, reduced, ValueRange{arith::ConstantIndexOp::create(b, 0)});
  return arith::BitcastOp::create(b, b.getF32Type(), bits);
}

} // namespace

FailureOr<QuantizeOp> mlir::fp4train::sharding::buildShardQuantize(
    ImplicitLocOpBuilder &b, QuantizeOp quantize, Value shard, Value seed,
    Value amax, GridOp grid, const ShardingArray &axes) {
  ScaledTensorType type = quantize.getResult().getType();
  FailureOr<SmallVector<int64_t>> local =
      getScaledShardShape(quantize, type, grid, axes);
  if (failed(local))
    return failure();
  SmallVector<int64_t> shape = std::move(*local);
  SmallVector<GridAxis> splitAxes = getAllAxes(axes);

  // [SH2] One tensor, one scale.
  if (type.getHasGlobalScale() && !amax && !splitAxes.empty())
    amax = buildGlobalAmax(b, shard, grid, splitAxes);

  // [SH3] Stochastic rounding by the position in the whole tensor.
  SmallVector<Value> origin;
  DenseI64ArrayAttr logicalShape;
  if (quantize.getRounding() == RoundingMode::stochastic &&
      !splitAxes.empty()) {
    origin = buildShardOrigin(b, grid, axes, shape);
    logicalShape = b.getDenseI64ArrayAttr(type.getShape());
  }
  return QuantizeOp::create(b, withShape(type, shape), shard, seed, amax,
                            origin, logicalShape, quantize.getRounding(),
                            quantize.getScaleMode());
}

namespace {

struct QuantizeModel : public LogicalTensorModel<QuantizeModel, QuantizeOp> {
  LogicalResult partition(Operation *op, ArrayRef<Value> partitioned,
                          ArrayRef<Sharding> operandShardings,
                          ArrayRef<Sharding> resultShardings, IRMapping &map,
                          SymbolTableCollection &symbols, OpBuilder &b) const {
    auto quantize = cast<QuantizeOp>(op);
    if (quantize.isPart())
      return op->emitOpError("already quantizes a part of a sharded tensor "
                             "and cannot be partitioned again");
    auto split = getPartitionSplit(*this, op, operandShardings, resultShardings,
                                   symbols);
    if (failed(split))
      return failure();
    auto [grid, axes] = *split;
    ImplicitLocOpBuilder ib(op->getLoc(), b);
    Value seed = quantize.getSeed() ? map.lookup(quantize.getSeed()) : Value();
    Value amax = quantize.getAmax() ? map.lookup(quantize.getAmax()) : Value();
    FailureOr<QuantizeOp> local = buildShardQuantize(
        ib, quantize, partitioned[0], seed, amax, grid, axes);
    if (failed(local))
      return failure();
    map.map(quantize.getResult(), local->getResult());
    return success();
  }
};

//===----------------------------------------------------------------------===//
// dequantize, hadamard, transpose, pack, unpack
//===----------------------------------------------------------------------===//

/// Clones `op` with the partitioned operands and gives its results
/// `resultTypes`.
static void cloneWithTypes(Operation *op, IRMapping &map, OpBuilder &b,
                           TypeRange resultTypes) {
  Operation *clone = b.clone(*op, map);
  for (auto [result, type] : llvm::zip_equal(clone->getResults(), resultTypes))
    result.setType(type);
}

struct DequantizeModel
    : public LogicalTensorModel<DequantizeModel, DequantizeOp> {
  LogicalResult partition(Operation *op, ArrayRef<Value> partitioned,
                          ArrayRef<Sharding> operandShardings,
                          ArrayRef<Sharding> resultShardings, IRMapping &map,
                          SymbolTableCollection &symbols, OpBuilder &b) const {
    if (failed(getPartitionSplit(*this, op, operandShardings, resultShardings,
                                 symbols)))
      return failure();
    auto local = cast<ScaledTensorType>(partitioned[0].getType());
    auto resultType = cast<RankedTensorType>(op->getResult(0).getType());
    cloneWithTypes(op, map, b, withShape(resultType, local.getShape()));
    return success();
  }
};

struct HadamardModel : public LogicalTensorModel<HadamardModel, HadamardOp> {
  LogicalResult partition(Operation *op, ArrayRef<Value> partitioned,
                          ArrayRef<Sharding> operandShardings,
                          ArrayRef<Sharding> resultShardings, IRMapping &map,
                          SymbolTableCollection &symbols, OpBuilder &b) const {
    auto hadamard = cast<HadamardOp>(op);
    auto split = getPartitionSplit(*this, op, operandShardings, resultShardings,
                                   symbols);
    if (failed(split))
      return failure();
    auto [grid, axes] = *split;
    RankedTensorType type = hadamard.getInput().getType();
    SmallVector<int64_t> shape(type.getShape());
    if (grid) {
      // [SH1] A rotation block stays on one shard; the random signs depend
      // on seed and step only, the same on every rank [SH3].
      SmallVector<int64_t> rotation(type.getRank(), 1);
      rotation[hadamard.getDim()] = hadamard.getRotation().getSize();
      FailureOr<SmallVector<int64_t>> local =
          getShardShape(op, type.getShape(), rotation, grid, axes, "rotation");
      if (failed(local))
        return failure();
      shape = *local;
    }
    cloneWithTypes(op, map, b, withShape(type, shape));
    return success();
  }
};

struct TransposeModel : public LogicalTensorModel<TransposeModel, TransposeOp> {
  LogicalResult partition(Operation *op, ArrayRef<Value> partitioned,
                          ArrayRef<Sharding>, ArrayRef<Sharding>,
                          IRMapping &map, SymbolTableCollection &,
                          OpBuilder &b) const {
    auto local = cast<ScaledTensorType>(partitioned[0].getType());
    SmallVector<int64_t> shape(local.getShape());
    std::swap(shape[shape.size() - 2], shape.back());
    auto resultType = cast<ScaledTensorType>(op->getResult(0).getType());
    cloneWithTypes(op, map, b, withShape(resultType, shape));
    return success();
  }
};

/// pack and unpack: the values and the scales of a block-scaled tensor are
/// split along the same grid axes, the scales by whole blocks.
struct PackModel : public LogicalTensorModel<PackModel, PackOp> {
  LogicalResult partition(Operation *op, ArrayRef<Value> partitioned,
                          ArrayRef<Sharding> operandShardings,
                          ArrayRef<Sharding> resultShardings, IRMapping &map,
                          SymbolTableCollection &symbols, OpBuilder &b) const {
    auto split = getPartitionSplit(*this, op, operandShardings, resultShardings,
                                   symbols);
    if (failed(split))
      return failure();
    auto [grid, axes] = *split;
    auto type = cast<ScaledTensorType>(op->getResult(0).getType());
    FailureOr<SmallVector<int64_t>> shape =
        getScaledShardShape(op, type, grid, axes);
    if (failed(shape))
      return failure();
    cloneWithTypes(op, map, b, withShape(type, *shape));
    return success();
  }
};

struct UnpackModel : public LogicalTensorModel<UnpackModel, UnpackOp> {
  LogicalResult partition(Operation *op, ArrayRef<Value> partitioned,
                          ArrayRef<Sharding> operandShardings,
                          ArrayRef<Sharding> resultShardings, IRMapping &map,
                          SymbolTableCollection &symbols, OpBuilder &b) const {
    if (failed(getPartitionSplit(*this, op, operandShardings, resultShardings,
                                 symbols)))
      return failure();
    auto local = cast<ScaledTensorType>(partitioned[0].getType());
    SmallVector<Type> types = {local.getValuesTensorType(),
                               local.getScalesTensorType()};
    if (local.getHasGlobalScale())
      types.push_back(b.getF32Type());
    cloneWithTypes(op, map, b, types);
    return success();
  }
};

} // namespace

//===----------------------------------------------------------------------===//
// scaled_matmul
//===----------------------------------------------------------------------===//

/// The tiles of a whole block-scaled value that this process's shard along
/// `dimAxes` covers, sliced locally (no communication): the codes and
/// scales of whole blocks ([SH1]), which are the ones quantizing the shard
/// gives, with the whole tensor's global scale ([SH2]) and its global
/// stochastic-rounding positions ([SH3]).
static FailureOr<Value> sliceWholeScaled(Operation *op, ImplicitLocOpBuilder &b,
                                         Value whole, GridOp grid,
                                         const ShardingArray &dimAxes) {
  auto type = cast<ScaledTensorType>(whole.getType());
  FailureOr<SmallVector<int64_t>> shape =
      getScaledShardShape(op, type, grid, dimAxes);
  if (failed(shape))
    return failure();
  ScaledTensorType local = withShape(type, *shape);
  SmallVector<Value> origin = buildShardOrigin(b, grid, dimAxes, *shape);
  auto unpack = UnpackOp::create(b, whole);
  ArrayRef<int64_t> block = type.getBlockShape();
  SmallVector<OpFoldResult> valueOffsets, scaleOffsets, valueSizes, scaleSizes;
  for (auto [dim, extent] : llvm::enumerate(*shape)) {
    valueOffsets.push_back(origin[dim]);
    scaleOffsets.push_back(
        arith::DivUIOp::create(b, origin[dim],
                               arith::ConstantIndexOp::create(b, block[dim]))
            .getResult());
    valueSizes.push_back(b.getIndexAttr(extent));
    scaleSizes.push_back(b.getIndexAttr(extent / block[dim]));
  }
  SmallVector<OpFoldResult> strides(shape->size(), b.getIndexAttr(1));
  Value values = tensor::ExtractSliceOp::create(
      b, local.getValuesTensorType(), unpack.getValues(), valueOffsets,
      valueSizes, strides);
  Value scales = tensor::ExtractSliceOp::create(
      b, local.getScalesTensorType(), unpack.getScales(), scaleOffsets,
      scaleSizes, strides);
  return PackOp::create(b, local, values, scales, unpack.getGlobalScale())
      .getResult();
}

namespace {

/// Loops batch..., M, N, K; lhs is (batch, M, K), rhs (batch, N, K), the
/// accumulator and the result (batch, M, N); an alpha ([TE2]) is a scalar
/// every process holds whole.
struct ScaledMatmulModel
    : public shard::ShardingInterface::ExternalModel<ScaledMatmulModel,
                                                     ScaledMatmulOp> {
  static int64_t getBatchRank(Operation *op) {
    return cast<ScaledMatmulOp>(op).getAcc().getType().getRank() - 2;
  }

  /// Operand/result dimension -> loop, for lhs, rhs, acc and result.
  static SmallVector<SmallVector<int64_t>> getDimToLoop(Operation *op) {
    int64_t batch = getBatchRank(op);
    SmallVector<int64_t> prefix;
    for (int64_t i = 0; i < batch; ++i)
      prefix.push_back(i);
    int64_t m = batch, n = batch + 1, k = batch + 2;
    auto with = [&](int64_t a, int64_t b2) {
      SmallVector<int64_t> dims = prefix;
      dims.append({a, b2});
      return dims;
    };
    return {with(m, k), with(n, k), with(m, n), with(m, n)};
  }

  SmallVector<utils::IteratorType> getLoopIteratorTypes(Operation *op) const {
    SmallVector<utils::IteratorType> types(getBatchRank(op) + 2,
                                           utils::IteratorType::parallel);
    types.push_back(utils::IteratorType::reduction);
    return types;
  }

  SmallVector<shard::ReductionKind>
  getReductionLoopIteratorKinds(Operation *) const {
    return {shard::ReductionKind::Sum};
  }

  SmallVector<AffineMap> getIndexingMaps(Operation *op) const {
    int64_t loops = getBatchRank(op) + 3;
    SmallVector<AffineMap> maps;
    for (ArrayRef<int64_t> dims : getDimToLoop(op)) {
      SmallVector<AffineExpr> exprs;
      for (int64_t loop : dims)
        exprs.push_back(getAffineDimExpr(loop, op->getContext()));
      maps.push_back(AffineMap::get(loops, 0, exprs, op->getContext()));
    }
    // Operands, then the result: alpha's (empty) map comes before it.
    if (cast<ScaledMatmulOp>(op).getAlpha())
      maps.insert(maps.end() - 1, AffineMap::get(loops, 0, op->getContext()));
    return maps;
  }

  FailureOr<ShardingOption>
  getShardingOption(Operation *op, ArrayRef<Sharding> operandShardings,
                    ArrayRef<Sharding> resultShardings) const {
    auto matmul = cast<ScaledMatmulOp>(op);
    SmallVector<SmallVector<int64_t>> dimToLoop = getDimToLoop(op);
    int64_t loops = getBatchRank(op) + 3;
    ShardingArray option(loops);
    FlatSymbolRefAttr grid;
    auto fill = [&](FlatSymbolRefAttr g, const ShardingArray &axes,
                    ArrayRef<int64_t> dims) -> LogicalResult {
      if (!g)
        return success();
      if (grid && grid != g)
        return failure();
      grid = g;
      for (auto [dim, loop] : llvm::enumerate(dims)) {
        if (dim >= axes.size() || axes[dim].empty())
          continue;
        if (!option[loop].empty() && option[loop] != axes[dim])
          return failure();
        for (size_t other = 0; other < option.size(); ++other)
          if (int64_t(other) != loop &&
              llvm::any_of(axes[dim], [&](GridAxis axis) {
                return llvm::is_contained(option[other], axis);
              }))
            return failure();
        option[loop] = axes[dim];
      }
      return success();
    };
    // The block-scaled operands first: they cannot be resharded.
    Value scaledOperands[] = {matmul.getLhs(), matmul.getRhs()};
    for (auto [index, operand] : llvm::enumerate(scaledOperands))
      if (auto split = getLogicalSplit(operand))
        if (failed(fill(split->first, split->second, dimToLoop[index])))
          return failure();
    int64_t rank = matmul.getAcc().getType().getRank();
    if (Sharding acc = operandShardings[2])
      if (failed(
              fill(acc.getGridAttr(), getSplitAxes(acc, rank), dimToLoop[2])))
        return failure();
    if (Sharding result = resultShardings[0])
      if (failed(fill(result.getGridAttr(), getSplitAxes(result, rank),
                      dimToLoop[3])))
        return failure();
    if (!grid)
      return ShardingOption::makeEmpty();
    return ShardingOption(option, grid);
  }

  FailureOr<std::vector<Sharding>>
  getShardingAnnotations(Operation *op, const ShardingOption &option) const {
    SmallVector<SmallVector<int64_t>> dimToLoop = getDimToLoop(op);
    int64_t loops = getBatchRank(op) + 3;
    ShardingArray axes = getAxes(option, loops);
    std::vector<Sharding> result;
    for (auto [index, dims] : llvm::enumerate(dimToLoop)) {
      ShardingArray own;
      for (int64_t loop : dims)
        own.push_back(axes[loop]);
      Type type = index < 3 ? op->getOperand(index).getType()
                            : op->getResult(0).getType();
      result.push_back(getAnnotation(type, option, own));
    }
    // Operands, then the result: alpha, a scalar, has no annotation.
    if (cast<ScaledMatmulOp>(op).getAlpha())
      result.insert(result.end() - 1, Sharding());
    return result;
  }

  LogicalResult addShardingAnnotations(Operation *op, OpBuilder &b,
                                       const ShardingOption &option) const {
    return addAnnotations(*this, op, b, option);
  }

  LogicalResult partition(Operation *op, ArrayRef<Value> partitioned,
                          ArrayRef<Sharding> operandShardings,
                          ArrayRef<Sharding> resultShardings, IRMapping &map,
                          SymbolTableCollection &symbols, OpBuilder &b) const {
    auto matmul = cast<ScaledMatmulOp>(op);
    FailureOr<ShardingOption> option =
        getShardingOption(op, operandShardings, resultShardings);
    if (failed(option))
      return op->emitOpError("has operands, accumulator and result split "
                             "along conflicting grid axes");
    Value lhs = partitioned[0], rhs = partitioned[1], acc = partitioned[2];
    auto accType = cast<RankedTensorType>(acc.getType());
    if (option->empty) {
      cloneWithTypes(op, map, b, accType);
      return success();
    }
    int64_t loops = getBatchRank(op) + 3;
    ShardingArray axes = getAxes(*option, loops);
    GridOp grid = shard::getGrid(op, option->grid, symbols);
    if (!grid)
      return op->emitOpError("names the unknown grid ") << option->grid;

    // The shards of the operands must be the tiles of the option: a
    // block-scaled operand cannot be resharded here.
    SmallVector<SmallVector<int64_t>> dimToLoop = getDimToLoop(op);
    auto expected = [&](ArrayRef<int64_t> shape,
                        ArrayRef<int64_t> dims) -> SmallVector<int64_t> {
      SmallVector<int64_t> local(shape);
      for (auto [dim, loop] : llvm::enumerate(dims))
        local[dim] /= shard::collectiveProcessGroupSize(axes[loop], grid);
      return local;
    };
    ImplicitLocOpBuilder ib(op->getLoc(), b);
    // A whole operand (quantized before the split, e.g. the activation of
    // a row-parallel layer gathered whole) is sliced into its tiles.
    auto tiles = [&](Value operand, ScaledTensorType global,
                     ArrayRef<int64_t> dims) -> FailureOr<Value> {
      auto local = cast<ScaledTensorType>(operand.getType());
      if (local.getShape() == ArrayRef(expected(global.getShape(), dims)))
        return operand;
      if (local.getShape() != global.getShape())
        return failure();
      ShardingArray dimAxes(global.getRank());
      for (auto [dim, loop] : llvm::enumerate(dims))
        dimAxes[dim] = axes[loop];
      return sliceWholeScaled(op, ib, operand, grid, dimAxes);
    };
    FailureOr<Value> lhsTiles =
        tiles(lhs, matmul.getLhs().getType(), dimToLoop[0]);
    FailureOr<Value> rhsTiles =
        tiles(rhs, matmul.getRhs().getType(), dimToLoop[1]);
    if (failed(lhsTiles) || failed(rhsTiles))
      return op->emitOpError("has block-scaled operands whose shards (")
             << lhs.getType() << ", " << rhs.getType()
             << ") are not the tiles its sharding needs "
             << describeSplit(option->grid, axes)
             << " (shard the tensors before they are quantized)";
    lhs = *lhsTiles;
    rhs = *rhsTiles;

    ArrayRef<GridAxis> kAxes = axes[loops - 1];
    if (kAxes.empty()) {
      IRMapping local = map;
      local.map(matmul.getLhs(), lhs);
      local.map(matmul.getRhs(), rhs);
      Operation *clone = b.clone(*op, local);
      clone->getResult(0).setType(accType);
      map.map(op->getResult(0), clone->getResult(0));
      return success();
    }
    // [SH5] Partial [GEMM1] products over each shard's K range, summed by
    // an all-reduce, then added to the accumulator.
    Value zero = arith::ConstantOp::create(ib, ib.getF32FloatAttr(0.0f));
    Value zeros =
        linalg::FillOp::create(ib, zero,
                               tensor::EmptyOp::create(ib, accType.getShape(),
                                                       accType.getElementType())
                                   .getResult())
            .getResult(0);
    Value alpha = matmul.getAlpha() ? partitioned[3] : Value();
    Value partial = ScaledMatmulOp::create(ib, lhs, rhs, zeros, alpha);
    Value sum = shard::AllReduceOp::create(ib, partial, grid.getSymName(),
                                           kAxes, shard::ReductionKind::Sum);
    Value result =
        linalg::AddOp::create(
            ib, ValueRange{acc, sum},
            ValueRange{tensor::EmptyOp::create(ib, accType.getShape(),
                                               accType.getElementType())
                           .getResult()})
            .getResult(0);
    map.map(matmul.getResult(), result);
    return success();
  }
};

} // namespace

void mlir::fp4train::registerShardingInterfaceModels(
    DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *ctx, FP4TrainDialect *) {
    QuantizeOp::attachInterface<QuantizeModel>(*ctx);
    DequantizeOp::attachInterface<DequantizeModel>(*ctx);
    HadamardOp::attachInterface<HadamardModel>(*ctx);
    TransposeOp::attachInterface<TransposeModel>(*ctx);
    PackOp::attachInterface<PackModel>(*ctx);
    UnpackOp::attachInterface<UnpackModel>(*ctx);
    ScaledMatmulOp::attachInterface<ScaledMatmulModel>(*ctx);
  });
  registerTensorShardingModels(registry);
  registerElementwiseShardingModels(registry);
}
