//===- GPUEmulator.cpp - The table of instruction sets --------------------===//
//
// Adding a target: an InstructionSet in its own library under
// lib/Emulation/<Target>/, its factory in InstructionSets.h, one row here.
//
//===----------------------------------------------------------------------===//

#include "fp4train/Emulation/GPUEmulator.h"

#include "fp4train/Emulation/InstructionSets.h"

#include "llvm/ADT/STLExtras.h"

using namespace mlir;
using namespace mlir::fp4train::emulation;

ArrayRef<InstructionSetEntry> mlir::fp4train::emulation::getInstructionSets() {
  static const InstructionSetEntry table[] = {
      {"gfx950", createGFX950InstructionSet},
      {"sm_100a", createSM100aInstructionSet},
      {"sm_103a", createSM103aInstructionSet},
      {"sm_120a", createSM120aInstructionSet},
      {"sm_90a", createSM90aInstructionSet},
  };
  return table;
}

std::unique_ptr<InstructionSet>
mlir::fp4train::emulation::createInstructionSet(StringRef chip) {
  for (const InstructionSetEntry &entry : getInstructionSets())
    if (entry.chip == chip)
      return entry.create();
  return nullptr;
}

llvm::Expected<std::vector<std::vector<uint8_t>>>
mlir::fp4train::emulation::emulate(ModuleOp module, StringRef name,
                                   ArrayRef<EmulatorArgument> arguments,
                                   StringRef chip, EmulatorStats *stats,
                                   const EmulatorHooks *hooks) {
  std::unique_ptr<InstructionSet> instructionSet = createInstructionSet(chip);
  if (!instructionSet) {
    std::string known;
    for (const InstructionSetEntry &entry : getInstructionSets())
      known += (known.empty() ? "" : ", ") + entry.chip.str();
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "emulate: no instruction set for chip '" +
                                       chip + "' (known: " + known + ")");
  }
  return emulate(module, name, arguments, *instructionSet, stats, hooks);
}

llvm::Expected<std::vector<std::vector<uint8_t>>>
mlir::fp4train::emulation::emulate(ModuleOp module, StringRef name,
                                   ArrayRef<EmulatorArgument> arguments,
                                   EmulatorStats *stats) {
  return emulate(module, name, arguments, "gfx950", stats);
}
