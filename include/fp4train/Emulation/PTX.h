//===- PTX.h - CPU models of sm_120a block-scaled MMA and conversions -===//
//
// Lane-level models of the PTX instructions that the fp4train-to-nvvm
// kernels use on sm_120a, for the lane-exact emulation of DESIGN.md §7.4.
// The implementations live under lib/Emulation/PTX/ (library
// FP4TrainPTXModels), written from NVIDIA's PTX ISA documentation.
//
//===----------------------------------------------------------------------===//

#ifndef FP4TRAIN_EMULATION_PTX_H
#define FP4TRAIN_EMULATION_PTX_H

#include "llvm/ADT/ArrayRef.h"

#include <array>
#include <cstdint>
#include <string>

namespace fp4train::emulation::ptx {
inline constexpr unsigned kWarpSize = 32;
enum class BlockScaleKind { MXF8F6F4, MXF4, MXF4NVF4 };
enum class ScaleFormat { UE8M0, UE4M3 };
enum class ScaleVec { X1 = 1, X2 = 2, X4 = 4 };
enum class ElementType { E2M1, E2M3, E3M2, E4M3, E5M2 };
struct MmaBlockScaleConfig {
  BlockScaleKind kind;
  ScaleVec scaleVec;
  ScaleFormat scaleFormat;
  ElementType typeA = ElementType::E2M1, typeB = ElementType::E2M1; // mxf8f6f4 only
};
/// One warp's mma.sync.aligned.m16n8k64 (kind::mxf4/mxf4nvf4) or m16n8k32 (kind::mxf8f6f4)
/// .row.col...block_scale, f32 C/D: a 32x4 regs, b 32x2, c 32x4 (f32 bits), scale regs per
/// lane and the selectors; writes d (32x4, may alias c). Returns "" or why invalid.
std::string mmaBlockScale(const MmaBlockScaleConfig &config,
                          llvm::ArrayRef<std::array<uint32_t, 4>> a,
                          llvm::ArrayRef<std::array<uint32_t, 2>> b,
                          llvm::ArrayRef<std::array<uint32_t, 4>> c,
                          llvm::ArrayRef<uint32_t> scaleA, unsigned byteIdA, unsigned threadIdA,
                          llvm::ArrayRef<uint32_t> scaleB, unsigned byteIdB, unsigned threadIdB,
                          std::array<uint32_t, 4> *d);
/// cvt.rn.satfinite.e2m1x2.f32 d, hi, lo: the byte with hi's code in bits 7..4.
uint8_t cvtRnSatfiniteE2M1x2(uint32_t hiBits, uint32_t loBits);
/// cvt.rn.satfinite.e4m3x2.f32 d, hi, lo: hi's code in bits 15..8.
uint16_t cvtRnSatfiniteE4M3x2(uint32_t hiBits, uint32_t loBits);
/// cvt.rp.satfinite.ue8m0x2.f32 d, hi, lo.
uint16_t cvtRpSatfiniteUE8M0x2(uint32_t hiBits, uint32_t loBits);
}

#endif // FP4TRAIN_EMULATION_PTX_H
