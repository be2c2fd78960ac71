//===- TensorShardingModels.cpp - Partitioning tensor reshapes and slices -===//
//
// ShardingInterface models of tensor.expand_shape and tensor.collapse_shape,
// which MLIR 22 does not have and every framework-exported step uses (a
// batch of sequences is flattened into rows for its matmuls and back), and
// of tensor.extract_slice, tensor.insert_slice and tensor.concat (a fused
// QKV projection split into Q, K and V and its gradient concatenated, RoPE's
// halves), of tensor.pad (operands padded to whole blocks) and of
// tensor.extract (a scalar read from a reduction's result, such as the
// tensor amax of [TE2]). They depend on upstream only, written
// to be proposed there.
//
// A reshape groups the dimensions of its expanded side under the dimensions
// of its collapsed side. Its loops are the expanded dimensions. A collapsed
// dimension split along some grid axes is the same split of the major
// dimension of its group (the first one larger than 1): shards of the
// collapsed dimension are then contiguous runs of whole rows of the group,
// which is what the expanded side holds, provided that the grid divides
// the major dimension. Splitting another dimension of a group has no such
// counterpart and is not supported.
//
//===----------------------------------------------------------------------===//

#include "ShardingUtils.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"

using namespace mlir;
using namespace mlir::fp4train::sharding;
using shard::GridOp;
using shard::Sharding;
using shard::ShardingArray;
using shard::ShardingOption;

namespace {

template <typename Op>
struct ReshapeModel
    : public shard::ShardingInterface::ExternalModel<ReshapeModel<Op>, Op> {
  static constexpr bool kExpands = std::is_same_v<Op, tensor::ExpandShapeOp>;

  static RankedTensorType getExpandedType(Op op) {
    if constexpr (kExpands)
      return op.getResultType();
    else
      return op.getSrcType();
  }
  static RankedTensorType getCollapsedType(Op op) {
    if constexpr (kExpands)
      return op.getSrcType();
    else
      return op.getResultType();
  }

  /// The expanded dimension that carries the split of each collapsed one.
  static SmallVector<int64_t> getMajorDims(Op op) {
    ArrayRef<int64_t> expanded = getExpandedType(op).getShape();
    SmallVector<int64_t> major;
    for (const ReassociationIndices &group : op.getReassociationIndices()) {
      int64_t dim = group.front();
      for (int64_t candidate : group)
        if (expanded[candidate] != 1) {
          dim = candidate;
          break;
        }
      major.push_back(dim);
    }
    return major;
  }

  static ShardingArray toExpanded(Op op, const ShardingArray &collapsed) {
    ShardingArray expanded(getExpandedType(op).getRank());
    for (auto [dim, major] : llvm::enumerate(getMajorDims(op)))
      if (dim < collapsed.size())
        expanded[major] = collapsed[dim];
    return expanded;
  }

  /// The collapsed split of an expanded one; failure when a dimension other
  /// than a group's major one is split.
  static FailureOr<ShardingArray> toCollapsed(Op op,
                                              const ShardingArray &expanded) {
    SmallVector<int64_t> majors = getMajorDims(op);
    ShardingArray collapsed(majors.size());
    for (auto [dim, group] : llvm::enumerate(op.getReassociationIndices()))
      for (int64_t member : group) {
        if (member >= int64_t(expanded.size()) || expanded[member].empty())
          continue;
        if (member != majors[dim])
          return failure();
        collapsed[dim] = expanded[member];
      }
    return collapsed;
  }

  /// `expanded` without the splits of dimensions other than their group's
  /// major one, which no split of the collapsed side describes: the
  /// partition gathers the operand along them first (the heads of a
  /// batch-major B*H flattening, split by a column-parallel projection).
  static ShardingArray keepCollapsible(Op op, ShardingArray expanded) {
    SmallVector<int64_t> majors = getMajorDims(op);
    for (auto [dim, group] : llvm::enumerate(op.getReassociationIndices()))
      for (int64_t member : group)
        if (member != majors[dim] && member < int64_t(expanded.size()))
          expanded[member].clear();
    return expanded;
  }

  SmallVector<utils::IteratorType> getLoopIteratorTypes(Operation *op) const {
    return SmallVector<utils::IteratorType>(
        getExpandedType(cast<Op>(op)).getRank(), utils::IteratorType::parallel);
  }

  SmallVector<AffineMap> getIndexingMaps(Operation *op) const {
    auto reshape = cast<Op>(op);
    int64_t loops = getExpandedType(reshape).getRank();
    SmallVector<AffineExpr> majors;
    for (int64_t dim : getMajorDims(reshape))
      majors.push_back(getAffineDimExpr(dim, op->getContext()));
    AffineMap expanded =
        AffineMap::getMultiDimIdentityMap(loops, op->getContext());
    AffineMap collapsed = AffineMap::get(loops, 0, majors, op->getContext());
    return kExpands ? SmallVector<AffineMap>{collapsed, expanded}
                    : SmallVector<AffineMap>{expanded, collapsed};
  }

  FailureOr<ShardingOption>
  getShardingOption(Operation *op, ArrayRef<Sharding> operandShardings,
                    ArrayRef<Sharding> resultShardings) const {
    auto reshape = cast<Op>(op);
    int64_t expandedRank = getExpandedType(reshape).getRank();
    int64_t collapsedRank = getCollapsedType(reshape).getRank();
    const Sharding &expandedSharding =
        kExpands ? resultShardings[0] : operandShardings[0];
    const Sharding &collapsedSharding =
        kExpands ? operandShardings[0] : resultShardings[0];
    // The operand's sharding wins; the result's is used when it is alone.
    const Sharding &first =
        operandShardings[0] ? operandShardings[0] : resultShardings[0];
    if (!first)
      return ShardingOption::makeEmpty();
    if (&first == &expandedSharding)
      return ShardingOption(
          keepCollapsible(reshape,
                          getSplitAxes(expandedSharding, expandedRank)),
          expandedSharding.getGridAttr());
    return ShardingOption(
        toExpanded(reshape, getSplitAxes(collapsedSharding, collapsedRank)),
        collapsedSharding.getGridAttr());
  }

  FailureOr<std::vector<Sharding>>
  getShardingAnnotations(Operation *op, const ShardingOption &option) const {
    auto reshape = cast<Op>(op);
    ShardingArray expanded = option.shardingArray;
    expanded.resize(getExpandedType(reshape).getRank());
    FailureOr<ShardingArray> collapsed = toCollapsed(reshape, expanded);
    if (failed(collapsed))
      return failure();
    MLIRContext *ctx = op->getContext();
    Sharding expandedSharding = makeSharding(option.grid, expanded, ctx);
    Sharding collapsedSharding = makeSharding(option.grid, *collapsed, ctx);
    if (kExpands)
      return std::vector<Sharding>{collapsedSharding, expandedSharding};
    return std::vector<Sharding>{expandedSharding, collapsedSharding};
  }

  LogicalResult addShardingAnnotations(Operation *op, OpBuilder &b,
                                       const ShardingOption &option) const {
    return addAnnotations(*this, op, b, option);
  }

  LogicalResult partition(Operation *op, ArrayRef<Value> partitioned,
                          ArrayRef<Sharding> operandShardings,
                          ArrayRef<Sharding> resultShardings, IRMapping &map,
                          SymbolTableCollection &symbols, OpBuilder &b) const {
    auto reshape = cast<Op>(op);
    RankedTensorType expandedType = getExpandedType(reshape);
    RankedTensorType collapsedType = getCollapsedType(reshape);
    const Sharding &expandedSharding =
        kExpands ? resultShardings[0] : operandShardings[0];
    const Sharding &collapsedSharding =
        kExpands ? operandShardings[0] : resultShardings[0];
    Sharding any = expandedSharding ? expandedSharding : collapsedSharding;
    if (!any || shard::isFullReplication(any)) {
      b.clone(*op, map);
      return success();
    }
    for (const Sharding &sharding : {expandedSharding, collapsedSharding})
      if (sharding &&
          failed(checkPlainSharding(op, sharding, "operand or result")))
        return failure();
    GridOp grid = shard::getGrid(op, any.getGridAttr(), symbols);
    if (!grid)
      return op->emitOpError("names the unknown grid ") << any.getGridAttr();

    // Both sides must describe the same split.
    ShardingArray expanded =
        expandedSharding
            ? getSplitAxes(expandedSharding, expandedType.getRank())
            : toExpanded(reshape, getSplitAxes(collapsedSharding,
                                               collapsedType.getRank()));
    FailureOr<ShardingArray> collapsed = toCollapsed(reshape, expanded);
    if (failed(collapsed))
      return op->emitOpError("splits a dimension of a reshaped group other "
                             "than its major (first non-unit) one: ")
             << describeSplit(any.getGridAttr(), expanded);
    if (collapsedSharding &&
        getSplitAxes(collapsedSharding, collapsedType.getRank()) != *collapsed)
      return op->emitOpError("has operand and result shardings that do not "
                             "describe the same split: ")
             << describeSplit(collapsedSharding, collapsedType.getRank())
             << " and " << describeSplit(any.getGridAttr(), expanded);

    SmallVector<int64_t> unitBlocks(expandedType.getRank(), 1);
    FailureOr<SmallVector<int64_t>> expandedShape = getShardShape(
        op, expandedType.getShape(), unitBlocks, grid, expanded, "element");
    if (failed(expandedShape))
      return failure();
    SmallVector<int64_t> collapsedShape;
    for (const ReassociationIndices &group :
         reshape.getReassociationIndices()) {
      int64_t size = 1;
      for (int64_t member : group)
        size *= (*expandedShape)[member];
      collapsedShape.push_back(size);
    }
    auto localExpanded =
        RankedTensorType::get(*expandedShape, expandedType.getElementType());
    auto localCollapsed =
        RankedTensorType::get(collapsedShape, collapsedType.getElementType());
    Value source = partitioned[0];
    Value result;
    if constexpr (kExpands)
      result =
          tensor::ExpandShapeOp::create(b, op->getLoc(), localExpanded, source,
                                        reshape.getReassociationIndices());
    else
      result = tensor::CollapseShapeOp::create(
          b, op->getLoc(), localCollapsed, source,
          reshape.getReassociationIndices());
    map.map(op->getResult(0), result);
    return success();
  }
};

/// The model of an op whose operands and results all have the loops' shape
/// (the identity map each) and are split alike, save the dimensions it
/// reads or writes in part: tensor.extract_slice, tensor.insert_slice and
/// tensor.concat. A dimension such an op takes whole (offset 0, the full
/// size, stride 1; not the concatenated one) may be split: each process
/// applies the op to its shards. A split of any other dimension is dropped
/// from the op's sharding, so that the partition gathers the operand along
/// it first. `Derived` provides isWhole(op, dim) and, for the partition,
/// build(op, b, partitioned operands, local result type, split dims).
template <typename Derived, typename Op>
struct AlignedModel
    : public shard::ShardingInterface::ExternalModel<Derived, Op> {
  static RankedTensorType getType(Op op) {
    return cast<RankedTensorType>(op->getResult(0).getType());
  }

  static ShardingArray keepWhole(Op op, ShardingArray axes) {
    axes.resize(getType(op).getRank());
    for (auto [dim, split] : llvm::enumerate(axes))
      if (!Derived::isWhole(op, dim))
        split.clear();
    return axes;
  }

  SmallVector<utils::IteratorType> getLoopIteratorTypes(Operation *op) const {
    return SmallVector<utils::IteratorType>(getType(cast<Op>(op)).getRank(),
                                            utils::IteratorType::parallel);
  }

  SmallVector<AffineMap> getIndexingMaps(Operation *op) const {
    AffineMap identity = AffineMap::getMultiDimIdentityMap(
        getType(cast<Op>(op)).getRank(), op->getContext());
    return SmallVector<AffineMap>(op->getNumOperands() + 1, identity);
  }

  FailureOr<ShardingOption>
  getShardingOption(Operation *op, ArrayRef<Sharding> operandShardings,
                    ArrayRef<Sharding> resultShardings) const {
    int64_t rank = getType(cast<Op>(op)).getRank();
    // The first annotated operand wins; the result's when none is.
    for (const Sharding &sharding : operandShardings)
      if (sharding)
        return ShardingOption(
            keepWhole(cast<Op>(op), getSplitAxes(sharding, rank)),
            sharding.getGridAttr());
    if (resultShardings[0])
      return ShardingOption(
          keepWhole(cast<Op>(op), getSplitAxes(resultShardings[0], rank)),
          resultShardings[0].getGridAttr());
    return ShardingOption::makeEmpty();
  }

  FailureOr<std::vector<Sharding>>
  getShardingAnnotations(Operation *op, const ShardingOption &option) const {
    Sharding sharding =
        makeSharding(option.grid, keepWhole(cast<Op>(op), option.shardingArray),
                     op->getContext());
    return std::vector<Sharding>(op->getNumOperands() + 1, sharding);
  }

  LogicalResult addShardingAnnotations(Operation *op, OpBuilder &b,
                                       const ShardingOption &option) const {
    return addAnnotations(*this, op, b, option);
  }

  LogicalResult partition(Operation *op, ArrayRef<Value> partitioned,
                          ArrayRef<Sharding> operandShardings,
                          ArrayRef<Sharding> resultShardings, IRMapping &map,
                          SymbolTableCollection &symbols, OpBuilder &b) const {
    auto typed = cast<Op>(op);
    RankedTensorType type = getType(typed);
    const Sharding &result = resultShardings[0];
    if (!result || shard::isFullReplication(result)) {
      b.clone(*op, map);
      return success();
    }
    if (failed(checkPlainSharding(op, result, "result")))
      return failure();
    ShardingArray axes = getSplitAxes(result, type.getRank());
    for (const Sharding &sharding : operandShardings)
      if (!sharding || getSplitAxes(sharding, type.getRank()) != axes)
        return op->emitOpError("has operands split otherwise than its "
                               "result ")
               << describeSplit(result, type.getRank());
    for (auto [dim, split] : llvm::enumerate(axes))
      if (!split.empty() && !Derived::isWhole(typed, dim))
        return op->emitOpError("splits dimension ")
               << dim << ", which it reads or writes in part: "
               << describeSplit(result, type.getRank());
    GridOp grid = shard::getGrid(op, result.getGridAttr(), symbols);
    if (!grid)
      return op->emitOpError("names the unknown grid ") << result.getGridAttr();
    SmallVector<int64_t> unitBlocks(type.getRank(), 1);
    FailureOr<SmallVector<int64_t>> shape =
        getShardShape(op, type.getShape(), unitBlocks, grid, axes, "element");
    if (failed(shape))
      return failure();
    SmallVector<bool> split;
    for (const SmallVector<shard::GridAxis> &dim : axes)
      split.push_back(!dim.empty());
    Value local = Derived::build(
        typed, b, partitioned,
        RankedTensorType::get(*shape, type.getElementType()), split);
    map.map(op->getResult(0), local);
    return success();
  }
};

/// Whether `dim` of a slice with these static offsets, sizes and strides of
/// a `whole` tensor is taken whole.
static bool isWholeDim(ArrayRef<int64_t> offsets, ArrayRef<int64_t> sizes,
                       ArrayRef<int64_t> strides, ArrayRef<int64_t> whole,
                       int64_t dim) {
  return offsets[dim] == 0 && strides[dim] == 1 &&
         !ShapedType::isDynamic(whole[dim]) && sizes[dim] == whole[dim];
}

/// The static offsets, sizes and strides of a slice whose split dimensions
/// (`split`) are taken whole, in a shard of shape `local`.
template <typename SliceOp>
static void getLocalSlice(SliceOp op, ArrayRef<int64_t> local,
                          ArrayRef<bool> split,
                          SmallVectorImpl<OpFoldResult> &offsets,
                          SmallVectorImpl<OpFoldResult> &sizes,
                          SmallVectorImpl<OpFoldResult> &strides) {
  offsets = op.getMixedOffsets();
  sizes = op.getMixedSizes();
  strides = op.getMixedStrides();
  Builder b(op.getContext());
  for (auto [dim, isSplit] : llvm::enumerate(split))
    if (isSplit)
      sizes[dim] = b.getIndexAttr(local[dim]);
}

struct ExtractSliceModel
    : public AlignedModel<ExtractSliceModel, tensor::ExtractSliceOp> {
  static bool isWhole(tensor::ExtractSliceOp op, int64_t dim) {
    // Rank-reducing slices have no per-dimension counterpart: none is split.
    if (op.getSourceType().getRank() != op.getType().getRank())
      return false;
    return isWholeDim(op.getStaticOffsets(), op.getStaticSizes(),
                      op.getStaticStrides(), op.getSourceType().getShape(),
                      dim);
  }
  static Value build(tensor::ExtractSliceOp op, OpBuilder &b,
                     ArrayRef<Value> operands, RankedTensorType local,
                     ArrayRef<bool> split) {
    SmallVector<OpFoldResult> offsets, sizes, strides;
    getLocalSlice(op, local.getShape(), split, offsets, sizes, strides);
    return tensor::ExtractSliceOp::create(b, op.getLoc(), local, operands[0],
                                          offsets, sizes, strides);
  }
};

struct InsertSliceModel
    : public AlignedModel<InsertSliceModel, tensor::InsertSliceOp> {
  static bool isWhole(tensor::InsertSliceOp op, int64_t dim) {
    if (op.getSourceType().getRank() != op.getDestType().getRank())
      return false;
    return isWholeDim(op.getStaticOffsets(), op.getStaticSizes(),
                      op.getStaticStrides(), op.getDestType().getShape(), dim);
  }
  static Value build(tensor::InsertSliceOp op, OpBuilder &b,
                     ArrayRef<Value> operands, RankedTensorType local,
                     ArrayRef<bool> split) {
    SmallVector<OpFoldResult> offsets, sizes, strides;
    getLocalSlice(op, local.getShape(), split, offsets, sizes, strides);
    return tensor::InsertSliceOp::create(b, op.getLoc(), operands[0],
                                         operands[1], offsets, sizes, strides);
  }
};

struct ConcatModel : public AlignedModel<ConcatModel, tensor::ConcatOp> {
  static bool isWhole(tensor::ConcatOp op, int64_t dim) {
    return dim != int64_t(op.getDim());
  }
  static Value build(tensor::ConcatOp op, OpBuilder &b,
                     ArrayRef<Value> operands, RankedTensorType local,
                     ArrayRef<bool>) {
    return tensor::ConcatOp::create(b, op.getLoc(), local, op.getDim(),
                                    operands);
  }
};

/// tensor.pad (the quantize pass pads a contraction's operands to whole
/// blocks): a dimension it pads by nothing may be split, each process
/// padding its shard along the others; a padded one is gathered first. A pad
/// by amounts known only at run time or by a value other than a constant
/// splits nothing.
struct PadModel : public AlignedModel<PadModel, tensor::PadOp> {
  static bool isWhole(tensor::PadOp op, int64_t dim) {
    if (!op.getLow().empty() || !op.getHigh().empty())
      return false;
    Value padding = op.getConstantPaddingValue();
    if (!padding || !matchPattern(padding, m_Constant()))
      return false;
    return op.getStaticLow()[dim] == 0 && op.getStaticHigh()[dim] == 0;
  }
  static Value build(tensor::PadOp op, OpBuilder &b, ArrayRef<Value> operands,
                     RankedTensorType local, ArrayRef<bool>) {
    // A constant (isWhole): cloned, the pad's body staying behind.
    Operation *constant = op.getConstantPaddingValue().getDefiningOp();
    Value padding = b.clone(*constant)->getResult(0);
    return tensor::PadOp::create(b, op.getLoc(), local, operands[0],
                                 op.getMixedLowPad(), op.getMixedHighPad(),
                                 padding, op.getNofold());
  }
};

/// tensor.extract reads one element, which every process needs whole: the
/// source is asked for fully replicated, so the partition gathers a split
/// source or all-reduces a partial one (a reduction's rank-0 result) before
/// the read, and every process reads the same value.
struct ExtractModel
    : public shard::ShardingInterface::ExternalModel<ExtractModel,
                                                     tensor::ExtractOp> {
  static int64_t getRank(Operation *op) {
    return cast<tensor::ExtractOp>(op).getTensor().getType().getRank();
  }

  SmallVector<utils::IteratorType> getLoopIteratorTypes(Operation *op) const {
    return SmallVector<utils::IteratorType>(getRank(op),
                                            utils::IteratorType::parallel);
  }

  /// The source's dimensions are the loops; the indices and the result are
  /// scalars.
  SmallVector<AffineMap> getIndexingMaps(Operation *op) const {
    int64_t rank = getRank(op);
    SmallVector<AffineMap> maps(op->getNumOperands() + 1,
                                AffineMap::get(rank, 0, op->getContext()));
    maps[0] = AffineMap::getMultiDimIdentityMap(rank, op->getContext());
    return maps;
  }

  FailureOr<ShardingOption>
  getShardingOption(Operation *op, ArrayRef<Sharding> operandShardings,
                    ArrayRef<Sharding>) const {
    if (!operandShardings[0])
      return ShardingOption::makeEmpty();
    return ShardingOption(ShardingArray(getRank(op)),
                          operandShardings[0].getGridAttr());
  }

  FailureOr<std::vector<Sharding>>
  getShardingAnnotations(Operation *op, const ShardingOption &option) const {
    std::vector<Sharding> annotations(op->getNumOperands() + 1);
    annotations[0] =
        makeSharding(option.grid, ShardingArray(getRank(op)), op->getContext());
    return annotations;
  }

  LogicalResult addShardingAnnotations(Operation *op, OpBuilder &b,
                                       const ShardingOption &option) const {
    return addAnnotations(*this, op, b, option);
  }

  LogicalResult partition(Operation *op, ArrayRef<Value>,
                          ArrayRef<Sharding> operandShardings,
                          ArrayRef<Sharding>, IRMapping &map,
                          SymbolTableCollection &, OpBuilder &b) const {
    if (operandShardings[0] && !shard::isFullReplication(operandShardings[0]))
      return op->emitOpError("reads an element of a tensor that is not "
                             "whole on every process");
    b.clone(*op, map);
    return success();
  }
};

} // namespace

void mlir::fp4train::sharding::registerTensorShardingModels(
    DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *ctx, tensor::TensorDialect *) {
    tensor::ExpandShapeOp::attachInterface<ReshapeModel<tensor::ExpandShapeOp>>(
        *ctx);
    tensor::CollapseShapeOp::attachInterface<
        ReshapeModel<tensor::CollapseShapeOp>>(*ctx);
    tensor::ExtractSliceOp::attachInterface<ExtractSliceModel>(*ctx);
    tensor::InsertSliceOp::attachInterface<InsertSliceModel>(*ctx);
    tensor::ConcatOp::attachInterface<ConcatModel>(*ctx);
    tensor::PadOp::attachInterface<PadModel>(*ctx);
    tensor::ExtractOp::attachInterface<ExtractModel>(*ctx);
  });
}
