//===- ShardingModels.h - How fp4train steps are partitioned ----*- C++ -*-===//
//
// ShardingInterface models for the fp4train ops and for the upstream ops of
// training graphs that MLIR 22 leaves without one, so that upstream's
// sharding-propagation and shard-partition run on a quantized step
// (docs/sharding.md, [SH1]-[SH5]).
//
//===----------------------------------------------------------------------===//

#ifndef FP4TRAIN_SHARDING_SHARDINGMODELS_H
#define FP4TRAIN_SHARDING_SHARDINGMODELS_H

namespace mlir {
class DialectRegistry;

namespace fp4train {

/// Attaches the models to the fp4train ops and to tensor.expand_shape and
/// tensor.collapse_shape when their dialects are loaded.
void registerShardingInterfaceModels(DialectRegistry &registry);

/// Declares the memory effects of the mpi ops that communicate (MLIR 22
/// declares none), so that buffer deallocation accepts a partitioned step
/// and nothing removes or reorders its communication.
void registerMPIMemoryEffectsModels(DialectRegistry &registry);

} // namespace fp4train
} // namespace mlir

#endif // FP4TRAIN_SHARDING_SHARDINGMODELS_H
