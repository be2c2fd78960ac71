//===- InstructionSets.h - The targets the emulator executes ---*- C++ -*-===//
//
// One InstructionSet per chip, each in its own library next to the models
// it dispatches to:
//
//   gfx950   lib/Emulation/CDNA4/ROCDLInstructions.cpp  FP4TrainCDNA4Emulation
//            ROCDL intrinsics on the CDNA4 models (CDNA4.h), 64-lane waves
//   sm_120a, lib/Emulation/PTX/NVVMInstructions.cpp     FP4TrainNVVMEmulation
//   sm_90a   NVVM ops on the PTX models (PTX.h), 32-lane warps
//   sm_100a, lib/Emulation/PTX/Tcgen05Instructions.cpp  FP4TrainNVVMEmulation
//   sm_103a  tcgen05 / mbarrier NVVM ops and llvm.nvvm.tcgen05.* intrinsics
//            on the tcgen05 models (Tcgen05.h), per-CTA tensor memory
//
// GPUEmulator.h puts them in a table by chip name.
//
//===----------------------------------------------------------------------===//

#ifndef FP4TRAIN_EMULATION_INSTRUCTIONSETS_H
#define FP4TRAIN_EMULATION_INSTRUCTIONSETS_H

#include "fp4train/Emulation/Interpreter.h"

#include <memory>

namespace mlir::fp4train::emulation {

/// CDNA4: the scaled MFMAs and scaled conversions of rocdl.
std::unique_ptr<InstructionSet> createGFX950InstructionSet();

/// NVIDIA sm_120a: nvvm.mma.block_scale, the packed FP4/FP8/UE8M0
/// conversions, barriers and the special-register reads.
std::unique_ptr<InstructionSet> createSM120aInstructionSet();
/// NVIDIA sm_90a (and sm_89): the FP8 mma.sync (m16n8k32 / m16n8k16 as
/// llvm.call_intrinsic), prmt, cvt.rn.satfinite.e4m3x2.f32, barriers and
/// special registers.
std::unique_ptr<InstructionSet> createSM90aInstructionSet();

/// NVIDIA sm_100a / sm_103a: tcgen05 (alloc, cp, mma.block_scale, commit,
/// ld, st, fence, wait) as NVVM ops or llvm.call_intrinsic, mbarrier, and
/// the conversions, barriers and special registers sm_120a has.
std::unique_ptr<InstructionSet> createSM100aInstructionSet();
std::unique_ptr<InstructionSet> createSM103aInstructionSet();

} // namespace mlir::fp4train::emulation

#endif // FP4TRAIN_EMULATION_INSTRUCTIONSETS_H
