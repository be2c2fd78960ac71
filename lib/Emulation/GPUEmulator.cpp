//===- GPUEmulator.cpp - The instruction set of each chip -----------------===//
//
// A chip's instruction set follows from its MMA kind in the table of targets
// (fp4train/Target/GPUTarget.h), so every chip a pipeline takes runs here.
// Adding a kind of MMA: an InstructionSet in its own library under
// lib/Emulation/<Target>/, its factory in InstructionSets.h, one case here.
//
//===----------------------------------------------------------------------===//

#include "fp4train/Emulation/GPUEmulator.h"

#include "fp4train/Emulation/InstructionSets.h"

#include "llvm/ADT/StringExtras.h"

using namespace mlir;
using namespace mlir::fp4train;
using namespace mlir::fp4train::emulation;

std::unique_ptr<InstructionSet>
mlir::fp4train::emulation::createInstructionSet(const GPUTarget &target) {
  switch (target.mma) {
  case GPUMMAKind::ScaledMFMA:
    return createCDNA4InstructionSet(target);
  case GPUMMAKind::WarpFP8:
    return createWarpFP8InstructionSet(target);
  case GPUMMAKind::WarpBlockScaled:
    return createWarpBlockScaledInstructionSet(target);
  case GPUMMAKind::Tcgen05BlockScaled:
    return createTcgen05InstructionSet(target);
  }
  llvm_unreachable("unknown GPUMMAKind");
}

llvm::Expected<std::vector<std::vector<uint8_t>>>
mlir::fp4train::emulation::emulate(ModuleOp module, StringRef name,
                                   ArrayRef<EmulatorArgument> arguments,
                                   const GPUTarget &target,
                                   EmulatorStats *stats,
                                   const EmulatorHooks *hooks) {
  return emulate(module, name, arguments, *createInstructionSet(target), stats,
                 hooks);
}

llvm::Expected<std::vector<std::vector<uint8_t>>>
mlir::fp4train::emulation::emulate(ModuleOp module, StringRef name,
                                   ArrayRef<EmulatorArgument> arguments,
                                   StringRef chip, EmulatorStats *stats,
                                   const EmulatorHooks *hooks) {
  std::optional<GPUChip> parsed = parseGPUChip(chip);
  if (!parsed) {
    SmallVector<StringRef> known;
    for (const GPUTarget &target : getGPUTargets())
      known.push_back(target.name);
    return llvm::createStringError(
        llvm::inconvertibleErrorCode(),
        "emulate: no instruction set for chip '" + chip +
            "' (known: " + llvm::join(known, ", ") + ")");
  }
  return emulate(module, name, arguments, getGPUTarget(*parsed), stats, hooks);
}

llvm::Expected<std::vector<std::vector<uint8_t>>>
mlir::fp4train::emulation::emulate(ModuleOp module, StringRef name,
                                   ArrayRef<EmulatorArgument> arguments,
                                   EmulatorStats *stats) {
  return emulate(module, name, arguments, getGPUTarget(GPUChip::GFX950), stats);
}
