//===- MmaBlockScale.cpp - mma.sync ... .block_scale model ----------------===//
//
// Sources: PTX ISA (docs.nvidia.com/cuda/parallel-thread-execution, PTX 8.7
// to 9.x):
//  - §9.7.14.5.14 "mma": syntax and operand types of the block-scaled forms
//    (scale-a-data/scale-b-data .b32, the u16 selectors), "When .kind is
//    .kind::mxf8f6f4 ... e2m1 resides in central 4 bits of the 8-bit
//    container ... .e3m2 or .e2m3 ... in the lower 6 bits"; kind::mxf4 and
//    kind::mxf4nvf4 pack E2M1 without padding.
//  - §9.7.14.3 "Block Scaling for mma.sync": D = (A * scale_A)(B * scale_B)
//    + C, Table 35 (scale matrix shapes M x {1,2,4}), Table 36 (valid kind,
//    stype and scale_vec), the thread-id rule (A: thread-id-a 0 picks the
//    lanes with %laneid % 4 in {0,1}, 1 picks {2,3}; B: %laneid % 4 ==
//    thread-id-b), the byte-id rule (1X: one byte; 2X: byte pair 0-1 or 2-3;
//    4X: all four bytes, byte-id 0) and Table 37 (valid selector values).
//  - §9.7.14.5.x "Matrix Fragments for mma.m16n8k64 / mma.m16n8k32": the A,
//    B, C/D fragment formulas (groupID = %laneid >> 2, threadID_in_group =
//    %laneid % 4), elements numbered low to high within each register.
//  - §5.2.3 "Alternate Floating-Point Data Formats": e4m3 (no Inf, 0x7f/0xff
//    NaN), e5m2, e2m1/e2m3/e3m2 (no Inf/NaN), ue8m0 (0xff NaN), ue4m3 (7 bits,
//    bias 7, 0x7f NaN, MSB of the byte padded with zero).
//
// Two facts are only in the ISA's figures (43 and 45), which the model takes
// from NVIDIA CUTLASS's SM120 SFALayout / scale-register packing (and which a
// published hardware probe of the 1X form agrees with): in the selected A
// thread pair the lower lane holds row g and the upper one row g + 8, so row m
// comes from lane 4(m % 8) + 2·thread-id-a + m / 8; and K block j of a 2X/4X
// scale is byte byte-id + j.
//
// Arithmetic (BlockScaleArithmetic.h, shared with the tcgen05.mma model so
// that both NVIDIA models agree): the ISA does not specify the internal
// precision of the dot product. The model computes C + Σ_k (sA·a)(sB·b)
// exactly (a 704-bit fixed point accumulator) and rounds once to f32, nearest
// even, subnormals kept; that single rounding is an assumption. NaN/Inf
// follow IEEE (see the header). The bit 7 of a UE4M3 scale byte and the
// padding bits of mxf8f6f4 containers are ignored.
//
//===----------------------------------------------------------------------===//

#include "BlockScaleArithmetic.h"

#include <vector>

using namespace fp4train::emulation::ptx;

namespace {

using detail::computeD16x8;
using detail::decodeElement;
using detail::decodeScale;
using detail::Value;

/// The element code of slot `slot` of a register: a nibble for the packed
/// E2M1 of kind::mxf4/mxf4nvf4, else a byte container (mxf8f6f4).
uint32_t extract(uint32_t reg, unsigned slot, bool packedFp4,
                 ElementType type) {
  if (packedFp4)
    return (reg >> (4 * slot)) & 0xF;
  return detail::unpadContainer((reg >> (8 * slot)) & 0xFF, type);
}

std::string validate(const MmaBlockScaleConfig &config, unsigned byteIdA,
                     unsigned threadIdA, unsigned byteIdB, unsigned threadIdB) {
  // Table 36.
  switch (config.kind) {
  case BlockScaleKind::MXF8F6F4:
    if (config.scaleVec != ScaleVec::X1 ||
        config.scaleFormat != ScaleFormat::UE8M0)
      return "kind::mxf8f6f4 requires scale_vec::1X with ue8m0 scales";
    break;
  case BlockScaleKind::MXF4:
    if (config.scaleVec != ScaleVec::X2 ||
        config.scaleFormat != ScaleFormat::UE8M0)
      return "kind::mxf4 requires scale_vec::2X with ue8m0 scales";
    break;
  case BlockScaleKind::MXF4NVF4:
    if (config.scaleVec == ScaleVec::X1)
      return "kind::mxf4nvf4 requires scale_vec::2X or scale_vec::4X";
    if (config.scaleVec == ScaleVec::X2 &&
        config.scaleFormat != ScaleFormat::UE8M0)
      return "kind::mxf4nvf4 with scale_vec::2X requires ue8m0 scales";
    break;
  }
  if (config.kind != BlockScaleKind::MXF8F6F4 &&
      (config.typeA != ElementType::E2M1 || config.typeB != ElementType::E2M1))
    return "kind::mxf4 and kind::mxf4nvf4 take e2m1 operands only";
  // Table 37.
  auto badByteId = [&](unsigned id) {
    switch (config.scaleVec) {
    case ScaleVec::X1:
      return id > 3;
    case ScaleVec::X2:
      return id != 0 && id != 2;
    case ScaleVec::X4:
      return id != 0;
    }
    return true;
  };
  if (badByteId(byteIdA) || badByteId(byteIdB))
    return "byte-id " + std::to_string(badByteId(byteIdA) ? byteIdA : byteIdB) +
           " is not valid for scale_vec::" +
           std::to_string(static_cast<unsigned>(config.scaleVec)) + "X";
  if (threadIdA > 1)
    return "thread-id-a " + std::to_string(threadIdA) + " is not 0 or 1";
  if (threadIdB > 3)
    return "thread-id-b " + std::to_string(threadIdB) + " is not in 0..3";
  return {};
}

} // namespace

unsigned fp4train::emulation::ptx::getMmaBlockScaleK(BlockScaleKind kind) {
  return kind == BlockScaleKind::MXF8F6F4 ? 32 : 64;
}

std::string fp4train::emulation::ptx::mmaBlockScale(
    const MmaBlockScaleConfig &config,
    llvm::ArrayRef<std::array<uint32_t, 4>> a,
    llvm::ArrayRef<std::array<uint32_t, 2>> b,
    llvm::ArrayRef<std::array<uint32_t, 4>> c, llvm::ArrayRef<uint32_t> scaleA,
    unsigned byteIdA, unsigned threadIdA, llvm::ArrayRef<uint32_t> scaleB,
    unsigned byteIdB, unsigned threadIdB, std::array<uint32_t, 4> *d) {
  if (std::string error =
          validate(config, byteIdA, threadIdA, byteIdB, threadIdB);
      !error.empty())
    return error;
  if (a.size() != kWarpSize || b.size() != kWarpSize || c.size() != kWarpSize ||
      scaleA.size() != kWarpSize || scaleB.size() != kWarpSize)
    return "every operand needs the registers of all 32 lanes";

  constexpr unsigned M = 16, N = 8;
  const unsigned K = getMmaBlockScaleK(config.kind);
  const bool packedFp4 = K == 64;
  const unsigned perReg = packedFp4 ? 8 : 4; // elements per register
  const unsigned blocks = static_cast<unsigned>(config.scaleVec);
  const unsigned blockSize = K / blocks;

  // Gather the matrices from the fragments.
  std::vector<Value> matA(M * K), matB(K * N);
  for (unsigned lane = 0; lane < kWarpSize; ++lane) {
    const unsigned g = lane / 4, t = lane % 4;
    for (unsigned r = 0; r < 4; ++r)
      for (unsigned j = 0; j < perReg; ++j) {
        const unsigned row = g + 8 * (r % 2);
        const unsigned k = (K / 2) * (r / 2) + perReg * t + j;
        matA[row * K + k] = decodeElement(
            config.typeA, extract(a[lane][r], j, packedFp4, config.typeA));
      }
    for (unsigned r = 0; r < 2; ++r)
      for (unsigned j = 0; j < perReg; ++j) {
        const unsigned k = (K / 2) * r + perReg * t + j;
        matB[k * N + g] = decodeElement(
            config.typeB, extract(b[lane][r], j, packedFp4, config.typeB));
      }
  }
  // Scales per (row, block) and (column, block).
  std::vector<Value> sfA(M * blocks), sfB(N * blocks);
  for (unsigned row = 0; row < M; ++row) {
    const uint32_t reg = scaleA[4 * (row % 8) + 2 * threadIdA + row / 8];
    for (unsigned j = 0; j < blocks; ++j)
      sfA[row * blocks + j] =
          decodeScale(config.scaleFormat, (reg >> (8 * (byteIdA + j))) & 0xFF);
  }
  for (unsigned col = 0; col < N; ++col) {
    const uint32_t reg = scaleB[4 * col + threadIdB];
    for (unsigned j = 0; j < blocks; ++j)
      sfB[col * blocks + j] =
          decodeScale(config.scaleFormat, (reg >> (8 * (byteIdB + j))) & 0xFF);
  }

  computeD16x8(
      c, K,
      [&](unsigned row, unsigned col, unsigned k, Value(&factors)[4]) {
        factors[0] = sfA[row * blocks + k / blockSize];
        factors[1] = matA[row * K + k];
        factors[2] = sfB[col * blocks + k / blockSize];
        factors[3] = matB[k * N + col];
      },
      d);
  return {};
}
