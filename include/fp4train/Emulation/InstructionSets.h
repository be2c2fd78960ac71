//===- InstructionSets.h - The targets the emulator executes ---*- C++ -*-===//
//
// One InstructionSet per kind of GPU MMA (GPUMMAKind), each in its own
// library next to the models it dispatches to, made for a chip of the table
// of targets (fp4train/Target/GPUTarget.h):
//
//   ScaledMFMA          lib/Emulation/CDNA4/ROCDLInstructions.cpp
//     gfx950            FP4TrainCDNA4Emulation: ROCDL intrinsics on the CDNA4
//                       models (CDNA4.h), 64-lane waves
//   WarpBlockScaled     lib/Emulation/PTX/NVVMInstructions.cpp
//     sm_120a, sm_121a  FP4TrainNVVMEmulation: NVVM ops on the PTX models
//   WarpFP8               (PTX.h), 32-lane warps
//     sm_89, sm_90a
//   Tcgen05BlockScaled  lib/Emulation/PTX/Tcgen05Instructions.cpp (+ one file
//                       per family, Tcgen05Common.h)
//     sm_100a, sm_103a  FP4TrainNVVMEmulation: tcgen05 / mbarrier NVVM ops and
//                       llvm.nvvm.tcgen05.* intrinsics on the tcgen05 models
//                       (Tcgen05.h), per-CTA tensor memory
//
// GPUEmulator.h picks the set by the chip's MMA kind.
//
//===----------------------------------------------------------------------===//

#ifndef FP4TRAIN_EMULATION_INSTRUCTIONSETS_H
#define FP4TRAIN_EMULATION_INSTRUCTIONSETS_H

#include "fp4train/Emulation/Interpreter.h"
#include "fp4train/Target/GPUTarget.h"

#include <memory>

namespace mlir::fp4train::emulation {

/// CDNA4: the scaled MFMAs and scaled conversions of rocdl.
std::unique_ptr<InstructionSet>
createCDNA4InstructionSet(const GPUTarget &target);

/// The block-scaled mma.sync chips: nvvm.mma.block_scale, the packed
/// FP4/FP8/UE8M0 conversions, barriers and the special-register reads.
std::unique_ptr<InstructionSet>
createWarpBlockScaledInstructionSet(const GPUTarget &target);

/// The FP8 mma.sync chips: the FP8 mma.sync (m16n8k32 / m16n8k16 as
/// llvm.call_intrinsic), prmt, cvt.rn.satfinite.e4m3x2.f32, barriers and
/// special registers.
std::unique_ptr<InstructionSet>
createWarpFP8InstructionSet(const GPUTarget &target);

/// The tcgen05 chips: tcgen05 (alloc, cp, mma.block_scale, commit, ld, st,
/// fence, wait) as NVVM ops or llvm.call_intrinsic, mbarrier, and the
/// conversions, barriers and special registers of the mma.sync chips.
std::unique_ptr<InstructionSet>
createTcgen05InstructionSet(const GPUTarget &target);

} // namespace mlir::fp4train::emulation

#endif // FP4TRAIN_EMULATION_INSTRUCTIONSETS_H
