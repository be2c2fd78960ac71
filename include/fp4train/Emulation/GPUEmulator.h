//===- GPUEmulator.h - Lane-exact CPU execution of GPU kernels -*- C++ -*-===//
//
// The emulator of [CHK4] (docs/semantics.md) by chip name: the interpreter of
// fp4train/Emulation/Interpreter.h with the instruction set registered for
// the chip (fp4train/Emulation/InstructionSets.h): gfx950 for the kernels
// the ROCm kernel pipeline (buildROCmKernelPipeline) produces — host code on
// memrefs, gpu.launch_func of outlined kernels whose scaled MFMAs and
// conversions are already ROCDL intrinsics —, sm_120a for kernels on NVVM's
// block-scaled mma and conversions.
//
//===----------------------------------------------------------------------===//

#ifndef FP4TRAIN_EMULATION_GPUEMULATOR_H
#define FP4TRAIN_EMULATION_GPUEMULATOR_H

#include "fp4train/Emulation/Interpreter.h"

#include <memory>

namespace mlir::fp4train::emulation {

/// A row of the table of instruction sets.
struct InstructionSetEntry {
  StringRef chip;
  std::unique_ptr<InstructionSet> (*create)();
};

/// Every chip the emulator executes, in the order of the table.
ArrayRef<InstructionSetEntry> getInstructionSets();

/// The instruction set of `chip`, or null if no set is registered for it.
std::unique_ptr<InstructionSet> createInstructionSet(StringRef chip);

/// emulate() on the instruction set of `chip`; an unknown chip is an error
/// that lists the known ones.
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
