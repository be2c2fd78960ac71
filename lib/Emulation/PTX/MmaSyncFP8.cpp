//===- MmaSyncFP8.cpp - mma.sync ... .f32.{e4m3,e5m2}.{e4m3,e5m2}.f32 model
//===//
//
// Sources: PTX ISA (docs.nvidia.com/cuda/parallel-thread-execution, 8.4 to
// 9.x):
//  - §9.7.14.5.14 "mma": `mma.sync.aligned.m16n8k32.row.col.f32.atype.btype
//    .f32 d, a, b, c` with .atype/.btype in {.e4m3, .e5m2} (sm_89+, PTX
//    8.4) and the .m16n8k16 shape for them (PTX 8.7); A is four .b32
//    registers (k16: two), B two (k16: one), C and D four .f32;
//    D = A·B + C.
//  - §9.7.14.5.x "Matrix Fragments for mma.m16n8k32" (8-bit .atype) and
//    "for mma.m16n8k16" (8-bit): groupID = %laneid >> 2, threadID_in_group
//    = %laneid % 4; k32: a_i (i = 0..15, four per register, low byte
//    first) at row groupID + 8·((i / 4) % 2), column 4·threadID_in_group +
//    (i % 4) + 16·(i >= 8); b_i (i = 0..7) at row 4·threadID_in_group +
//    (i % 4) + 16·(i >= 4), column groupID; k16: a_i (i = 0..7) at row
//    groupID + 8·(i >= 4), column 4·threadID_in_group + i % 4, b_i (i =
//    0..3) at row 4·threadID_in_group + i, column groupID; c_i/d_i at row
//    groupID + 8·(i >= 2), column 2·threadID_in_group + i % 2.
//  - §5.2.3: e4m3 (bias 7, subnormals, no Inf, S.1111.111 NaN), e5m2 (bias
//    15, subnormals, IEEE Inf/NaN).
//
// Arithmetic: BlockScaleArithmetic.h with unit scales, shared with the
// block-scaled models: C + Σ a·b exactly, rounded once to f32 — an
// assumption: the ISA leaves the internal precision open.
//
//===----------------------------------------------------------------------===//

#include "BlockScaleArithmetic.h"

#include <vector>

using namespace fp4train::emulation::ptx;
using namespace fp4train::emulation::ptx::detail;

std::string fp4train::emulation::ptx::mmaSyncFP8(
    const MmaSyncFP8Config &config, llvm::ArrayRef<std::array<uint32_t, 4>> a,
    llvm::ArrayRef<std::array<uint32_t, 2>> b,
    llvm::ArrayRef<std::array<uint32_t, 4>> c, std::array<uint32_t, 4> *d) {
  auto isFP8 = [](ElementType type) {
    return type == ElementType::E4M3 || type == ElementType::E5M2;
  };
  if (!isFP8(config.typeA) || !isFP8(config.typeB))
    return "the FP8 mma.sync takes e4m3 or e5m2 operands only";
  if (config.k != 32 && config.k != 16)
    return "the FP8 mma.sync has shapes m16n8k32 and m16n8k16 only, not k" +
           std::to_string(config.k);
  if (a.size() != kWarpSize || b.size() != kWarpSize || c.size() != kWarpSize)
    return "every operand needs the registers of all 32 lanes";

  constexpr unsigned M = 16, N = 8;
  const unsigned K = config.k;
  std::vector<Value> matA(M * K), matB(K * N);
  for (unsigned lane = 0; lane < kWarpSize; ++lane) {
    const unsigned g = lane / 4, t = lane % 4;
    // Element i of the lane's A fragment is byte i % 4 of register i / 4.
    for (unsigned i = 0; i < K / 2; ++i) {
      const unsigned row = K == 32 ? g + 8 * ((i / 4) % 2) : g + 8 * (i / 4);
      const unsigned col = 4 * t + i % 4 + (K == 32 && i >= 8 ? 16 : 0);
      const uint32_t code = (a[lane][i / 4] >> (8 * (i % 4))) & 0xFF;
      matA[row * K + col] = decodeElement(config.typeA, code);
    }
    for (unsigned i = 0; i < K / 4; ++i) {
      const unsigned row = 4 * t + i % 4 + (i >= 4 ? 16 : 0);
      const uint32_t code = (b[lane][i / 4] >> (8 * (i % 4))) & 0xFF;
      matB[row * N + g] = decodeElement(config.typeB, code);
    }
  }
  computeD16x8(
      c, K,
      [&](unsigned row, unsigned col, unsigned k, Value(&factors)[4]) {
        factors[0] = kUnitScale;
        factors[1] = matA[row * K + k];
        factors[2] = kUnitScale;
        factors[3] = matB[k * N + col];
      },
      d);
  return {};
}
