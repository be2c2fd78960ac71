//===- ElementwiseShardingModels.cpp - arith and math ops on shards -------===//
//
// MLIR 22 gives arith.constant alone a sharding model, and its propagation
// rejects every other op without one. A training step computes scalars
// outside its linalg ops (the stochastic-rounding seed of a step, a scaled
// learning rate), and a graph may apply arith/math ops to whole tensors.
// Both are elementwise: the model below has one parallel loop per dimension
// of the result (none for a scalar), maps a tensor operand by the identity
// and a scalar operand (arith.select's condition) to no dimension, and
// partitions by applying the op to its operands' shards; a scalar op is
// replicated. (Upstream's ElementwiseShardingInterface reads the first
// operand's type and gives a scalar op no maps, which its verifier rejects.)
//
//===----------------------------------------------------------------------===//

#include "ShardingUtils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Shard/Interfaces/ShardingInterfaceImpl.h"
#include "mlir/IR/DialectRegistry.h"

using namespace mlir;

namespace {

template <typename Op>
struct ElementwiseModel
    : public shard::ShardingInterface::ExternalModel<ElementwiseModel<Op>, Op> {
  static int64_t getRank(Operation *op) {
    auto type = dyn_cast<RankedTensorType>(op->getResult(0).getType());
    return type ? type.getRank() : 0;
  }

  SmallVector<utils::IteratorType> getLoopIteratorTypes(Operation *op) const {
    return SmallVector<utils::IteratorType>(getRank(op),
                                            utils::IteratorType::parallel);
  }

  SmallVector<AffineMap> getIndexingMaps(Operation *op) const {
    int64_t rank = getRank(op);
    MLIRContext *ctx = op->getContext();
    auto mapOf = [&](Type type) {
      return isa<RankedTensorType>(type)
                 ? AffineMap::getMultiDimIdentityMap(rank, ctx)
                 : AffineMap::get(rank, 0, {}, ctx);
    };
    SmallVector<AffineMap> maps;
    for (Type type : op->getOperandTypes())
      maps.push_back(mapOf(type));
    for (Type type : op->getResultTypes())
      maps.push_back(mapOf(type));
    return maps;
  }

  /// A scalar op is replicated: nothing to propagate through it (and
  /// upstream's default, which verifies the model first, takes tensor
  /// results only).
  FailureOr<shard::ShardingOption>
  getShardingOption(Operation *op, ArrayRef<shard::Sharding> operandShardings,
                    ArrayRef<shard::Sharding> resultShardings) const {
    if (!isa<RankedTensorType>(op->getResult(0).getType()))
      return shard::ShardingOption::makeEmpty();
    return shard::detail::defaultGetShardingOption(op, operandShardings,
                                                   resultShardings);
  }

  LogicalResult partition(Operation *op, ArrayRef<Value> partitionedOperands,
                          ArrayRef<shard::Sharding> operandShardings,
                          ArrayRef<shard::Sharding> resultShardings,
                          IRMapping &partitionMap,
                          SymbolTableCollection &symbolTable,
                          OpBuilder &builder) const {
    shard::partitionTriviallyShardableOperation(
        *op, partitionedOperands, operandShardings, resultShardings,
        partitionMap, symbolTable, builder);
    return success();
  }
};

} // namespace

template <typename... Ops> static void attachElementwise(MLIRContext &ctx) {
  (Ops::template attachInterface<ElementwiseModel<Ops>>(ctx), ...);
}

void mlir::fp4train::sharding::registerElementwiseShardingModels(
    DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *ctx, arith::ArithDialect *) {
    attachElementwise<
        arith::AddFOp, arith::AddIOp, arith::AndIOp, arith::BitcastOp,
        arith::CeilDivSIOp, arith::CeilDivUIOp, arith::CmpFOp, arith::CmpIOp,
        arith::DivFOp, arith::DivSIOp, arith::DivUIOp, arith::ExtFOp,
        arith::ExtSIOp, arith::ExtUIOp, arith::FloorDivSIOp, arith::FPToSIOp,
        arith::FPToUIOp, arith::IndexCastOp, arith::IndexCastUIOp,
        arith::MaximumFOp, arith::MaxNumFOp, arith::MaxSIOp, arith::MaxUIOp,
        arith::MinimumFOp, arith::MinNumFOp, arith::MinSIOp, arith::MinUIOp,
        arith::MulFOp, arith::MulIOp, arith::NegFOp, arith::OrIOp,
        arith::RemFOp, arith::RemSIOp, arith::RemUIOp, arith::SelectOp,
        arith::ShLIOp, arith::ShRSIOp, arith::ShRUIOp, arith::SIToFPOp,
        arith::SubFOp, arith::SubIOp, arith::TruncFOp, arith::TruncIOp,
        arith::UIToFPOp, arith::XOrIOp>(*ctx);
  });
  registry.addExtension(+[](MLIRContext *ctx, math::MathDialect *) {
    attachElementwise<math::AbsFOp, math::CeilOp, math::CosOp, math::ErfOp,
                      math::ExpOp, math::Exp2Op, math::FloorOp, math::LogOp,
                      math::Log2Op, math::PowFOp, math::RoundEvenOp,
                      math::RsqrtOp, math::SinOp, math::SqrtOp, math::TanhOp>(
        *ctx);
  });
}
