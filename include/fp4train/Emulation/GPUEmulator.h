//===- GPUEmulator.h - Lane-exact CPU execution of GPU kernels -*- C++ -*-===//
//
// The emulator of [CHK4] (docs/semantics.md) for a chip of the table of
// targets: the interpreter of fp4train/Emulation/Interpreter.h with the
// instruction set of the chip's MMA kind (fp4train/Emulation/
// InstructionSets.h). It runs what the kernel pipelines produce
// (buildROCmKernelPipeline, buildCUDAKernelPipeline): host code on memrefs,
// gpu.launch_func of outlined kernels whose MMAs and conversions are already
// ROCDL or NVVM ops.
//
//===----------------------------------------------------------------------===//

#ifndef FP4TRAIN_EMULATION_GPUEMULATOR_H
#define FP4TRAIN_EMULATION_GPUEMULATOR_H

#include "fp4train/Emulation/Interpreter.h"
#include "fp4train/Target/GPUTarget.h"

#include <memory>

namespace mlir::fp4train::emulation {

/// The instruction set that runs `target`'s kernels, by its MMA kind.
std::unique_ptr<InstructionSet> createInstructionSet(const GPUTarget &target);

/// emulate() on the instruction set of `target`.
llvm::Expected<std::vector<std::vector<uint8_t>>>
emulate(ModuleOp module, StringRef name, ArrayRef<EmulatorArgument> arguments,
        const GPUTarget &target, EmulatorStats *stats = nullptr,
        const EmulatorHooks *hooks = nullptr);

/// emulate() on the chip named `chip` (gfx950, sm_120a); a name that is not
/// in the table of targets is an error that lists the known ones.
llvm::Expected<std::vector<std::vector<uint8_t>>>
emulate(ModuleOp module, StringRef name, ArrayRef<EmulatorArgument> arguments,
        StringRef chip, EmulatorStats *stats = nullptr,
        const EmulatorHooks *hooks = nullptr);

/// emulate() on gfx950, the chip of the ROCm kernel pipeline.
llvm::Expected<std::vector<std::vector<uint8_t>>>
emulate(ModuleOp module, StringRef name, ArrayRef<EmulatorArgument> arguments,
        EmulatorStats *stats = nullptr);

} // namespace mlir::fp4train::emulation

#endif // FP4TRAIN_EMULATION_GPUEMULATOR_H
