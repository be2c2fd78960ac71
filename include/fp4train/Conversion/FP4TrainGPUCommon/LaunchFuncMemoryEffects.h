//===- LaunchFuncMemoryEffects.h - Effects of gpu.launch_func ---*- C++ -*-===//
//
// An external model both GPU pipelines (ROCm and CUDA) need: upstream's
// gpu.launch_func declares no memory effects.
//
//===----------------------------------------------------------------------===//

#ifndef FP4TRAIN_CONVERSION_FP4TRAINGPUCOMMON_LAUNCHFUNCMEMORYEFFECTS_H
#define FP4TRAIN_CONVERSION_FP4TRAINGPUCOMMON_LAUNCHFUNCMEMORYEFFECTS_H

namespace mlir {
class DialectRegistry;

namespace fp4train {

/// Declares the memory effects of gpu.launch_func (reads and writes of its
/// memref operands, and of unknown memory), which upstream leaves undeclared.
/// Ownership-based buffer deallocation refuses ops with unknown effects, and
/// it must run after kernel outlining (it cannot look into gpu.launch
/// bodies, whose gpu.barrier has no declared effects either); with this
/// model it sees a launch as a use of its buffers.
void registerGPULaunchFuncMemoryEffectsModel(DialectRegistry &registry);

} // namespace fp4train
} // namespace mlir

#endif // FP4TRAIN_CONVERSION_FP4TRAINGPUCOMMON_LAUNCHFUNCMEMORYEFFECTS_H
