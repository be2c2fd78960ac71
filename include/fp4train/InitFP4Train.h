//===- InitFP4Train.h - Register what fp4train tools need -------*- C++ -*-===//
//
// One place that lists the dialects, interface models and passes a training
// graph and its lowerings need. fp4-opt, the C API and the JIT driver all
// register through it, so they accept the same IR and the same pipelines.
//
//===----------------------------------------------------------------------===//

#ifndef FP4TRAIN_INITFP4TRAIN_H
#define FP4TRAIN_INITFP4TRAIN_H

namespace mlir {
class DialectRegistry;

namespace fp4train {

/// Adds the fp4train dialect, the upstream dialects of a training graph and
/// of its CPU, ROCDL and NVVM lowerings, and their external interface models
/// (bufferization, inlining, conversion to LLVM) to `registry`.
void registerAllDialects(DialectRegistry &registry);

/// Registers the fp4train passes and pipelines and the upstream passes used
/// to lower training graphs, with the global pass registry.
void registerAllPasses();

} // namespace fp4train
} // namespace mlir

#endif // FP4TRAIN_INITFP4TRAIN_H
