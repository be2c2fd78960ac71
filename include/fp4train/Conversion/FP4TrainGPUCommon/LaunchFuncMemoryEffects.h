//===- LaunchFuncMemoryEffects.h - Effects of gpu.launch_func ---*- C++ -*-===//
//
// External models the GPU pipelines need: upstream's gpu.launch_func (both
// pipelines) and nvgpu.tma.create.descriptor (CUDA) declare no memory
// effects.
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

/// Declares that nvgpu.tma.create.descriptor reads its tensor (the host
/// encodes a TMA tensor map of it; upstream declares no effects, which
/// buffer deallocation refuses). The map holds the tensor's address, not a
/// use of it: a launch that reads through a map must take the tensor's
/// memref too, so that deallocation keeps the buffer alive until the launch
/// (and fp4train-gpu-device-memory gives the map the device twin).
void registerTensorMapMemoryEffectsModel(DialectRegistry &registry);

} // namespace fp4train
} // namespace mlir

#endif // FP4TRAIN_CONVERSION_FP4TRAINGPUCOMMON_LAUNCHFUNCMEMORYEFFECTS_H
