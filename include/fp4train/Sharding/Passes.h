//===- Passes.h - Passes of sharded steps -----------------------*- C++ -*-===//

#ifndef FP4TRAIN_SHARDING_PASSES_H
#define FP4TRAIN_SHARDING_PASSES_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/DLTI/DLTI.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MPI/IR/MPI.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Shard/IR/ShardDialect.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Pass/Pass.h"

namespace mlir::fp4train {

#define GEN_PASS_DECL
#include "fp4train/Sharding/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "fp4train/Sharding/Passes.h.inc"

/// Registers the sharding passes: upstream's sharding-propagation, this
/// project's checked shard-partition (in place of upstream's registration),
/// fp4train-partition, fp4train-shard-to-mpi and fp4train-mpi-to-llvm.
void registerShardingPasses();

} // namespace mlir::fp4train

#endif // FP4TRAIN_SHARDING_PASSES_H
