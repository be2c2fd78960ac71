//===- GPUEmulator.h - Lane-exact CPU execution of gfx950 kernels -*- C++ -*-===//
//
// Executes a module produced by buildROCmKernelPipeline (host code on
// memrefs, gpu.launch_func of outlined kernels whose scaled MFMAs and
// conversions are already ROCDL intrinsics) on the CPU, as DESIGN.md §7.4
// asks: every workgroup runs with all its threads in lockstep, grouped into
// 64-lane waves; each ROCDL matrix or conversion intrinsic is executed by the
// instruction model of fp4train/Emulation/CDNA4.h on the registers the lanes
// hold. Control flow diverges per lane under an execution mask (scf.if,
// scf.for with per-lane bounds).
//
// Besides computing the results, the emulator checks what a GPU would not
// report: every global and LDS access is bounds-checked, LDS accesses of
// different waves between two barriers that touch the same byte (and at
// least one writes) are reported as a race — lockstep execution would
// otherwise hide a missing barrier —, a barrier or an MFMA reached by part
// of a wave or workgroup is an error, and an op the emulator does not know
// is an error naming it.
//
//===----------------------------------------------------------------------===//

#ifndef FP4TRAIN_EMULATION_GPUEMULATOR_H
#define FP4TRAIN_EMULATION_GPUEMULATOR_H

#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <vector>

namespace mlir::fp4train::emulation {

/// An argument of the emulated host function: the bytes of a memref
/// argument (row-major, its static shape), or the bits of a scalar (integer,
/// index or float argument; floats as their bit pattern).
struct EmulatorArgument {
  std::vector<uint8_t> bytes;
  uint64_t scalar = 0;

  static EmulatorArgument buffer(std::vector<uint8_t> bytes) {
    return {std::move(bytes), 0};
  }
  static EmulatorArgument bits(uint64_t value) { return {{}, value}; }
};

/// What the emulated kernels executed.
struct EmulatorStats {
  uint64_t launches = 0;
  uint64_t workgroups = 0;
  /// Ops executed per wave (an op executed by a whole workgroup of four
  /// waves counts four).
  uint64_t waveOps = 0;
  uint64_t mfmas = 0;
  uint64_t conversions = 0;
  uint64_t barriers = 0;
};

/// Runs host function `name` of `module` with `arguments` (one per function
/// argument) and returns the bytes of every memref result, row-major. Errors
/// name the op (with its location) and, for kernel errors, the workgroup and
/// lane.
llvm::Expected<std::vector<std::vector<uint8_t>>>
emulate(ModuleOp module, llvm::StringRef name,
        llvm::ArrayRef<EmulatorArgument> arguments,
        EmulatorStats *stats = nullptr);

} // namespace mlir::fp4train::emulation

#endif // FP4TRAIN_EMULATION_GPUEMULATOR_H
