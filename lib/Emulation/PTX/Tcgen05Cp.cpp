//===- Tcgen05Cp.cpp - tcgen05.cp shared memory -> tensor memory ----------===//
//
// Sources: PTX ISA
//  - §9.7.16.9.2 "tcgen05.cp": an asynchronous copy from the shared memory
//    matrix that the 64-bit descriptor s-desc describes to tensor memory at
//    taddr; shapes .128x256b, .4x256b, .128x128b, .64x128b (requires
//    .warpx2::02_13 or .warpx2::01_23) and .32x128b (requires .warpx4);
//    with .warpx2 "the data being copied is multicasted into warp pairs and
//    each warp in the warp pair receive half of the data" (pairs 0-2 / 1-3
//    or 0-1 / 2-3); with .warpx4 the data "is multicasted into all 4 warps".
//  - §9.7.16.2.3 "Data Movement Shape": lane x size, lanes of tensor memory
//    by bits across its columns.
//  - §9.7.16.4.1 and §9.7.16.3: the source is read through the descriptor
//    as a K-major matrix whose rows are the copied rows (getKMajorAddress:
//    8-row groups SBO apart, 16-byte core matrix columns LBO apart).
//
// Where the ISA is silent (it draws no figure of the source side), the model
// takes row r of the shape to lane taddr.lane + r (or, multicast, lane r % 32
// of each receiving warp's 32-lane partition) and byte 4c .. 4c + 3 of the
// row to column taddr.column + c. Decompression (.b8x16.b6x16_p32 /
// .b4x16_p64) is not modelled.
//
//===----------------------------------------------------------------------===//

#include "fp4train/Emulation/Tcgen05.h"

#include "llvm/Support/FormatVariadic.h"

using namespace fp4train::emulation::ptx;

std::string fp4train::emulation::ptx::tcgen05Cp(
    CpShape shape, CpMulticast multicast, uint32_t taddr, uint64_t sdesc,
    TensorMemory &tmem, SharedMemory &smem, uint32_t asyncOp) {
  unsigned rows = 0, rowBytes = 0;
  CpMulticast required = CpMulticast::None;
  switch (shape) {
  case CpShape::S128x256b:
    rows = 128, rowBytes = 32;
    break;
  case CpShape::S4x256b:
    rows = 4, rowBytes = 32;
    break;
  case CpShape::S128x128b:
    rows = 128, rowBytes = 16;
    break;
  case CpShape::S64x128b:
    rows = 64, rowBytes = 16;
    break;
  case CpShape::S32x128b:
    rows = 32, rowBytes = 16, required = CpMulticast::Warpx4;
    break;
  }
  if (shape == CpShape::S64x128b) {
    if (multicast != CpMulticast::Warpx2_01_23 &&
        multicast != CpMulticast::Warpx2_02_13)
      return "tcgen05.cp.64x128b requires .warpx2::02_13 or .warpx2::01_23";
  } else if (multicast != required) {
    return required == CpMulticast::Warpx4
               ? "tcgen05.cp.32x128b requires .warpx4"
               : "this tcgen05.cp shape takes no multicast";
  }
  SmemDescriptor desc;
  if (std::string error = decodeSmemDescriptor(sdesc, &desc); !error.empty())
    return "tcgen05.cp source: " + error;
  const TmemAddress at = TmemAddress::decode(taddr);
  if (multicast != CpMulticast::None && at.lane != 0)
    return llvm::formatv("tcgen05.cp with multicast to lane {0}: the "
                         "multicast shapes fill whole 32-lane partitions from "
                         "lane 0",
                         at.lane);

  // The destination lanes of source row r.
  auto lanesOf = [&](unsigned r) -> std::vector<unsigned> {
    switch (multicast) {
    case CpMulticast::None:
      return {at.lane + r};
    case CpMulticast::Warpx4:
      return {r, 32 + r, 64 + r, 96 + r};
    case CpMulticast::Warpx2_01_23: {
      const unsigned pair = r / 32; // warps 0,1 or 2,3
      return {64 * pair + r % 32, 64 * pair + 32 + r % 32};
    }
    case CpMulticast::Warpx2_02_13: {
      const unsigned pair = r / 32; // warps 0,2 or 1,3
      return {32 * pair + r % 32, 32 * pair + 64 + r % 32};
    }
    }
    return {};
  };
  for (unsigned r = 0; r < rows; ++r) {
    std::vector<uint8_t> bytes(rowBytes);
    for (unsigned byte = 0; byte < rowBytes; ++byte) {
      uint32_t address;
      if (std::string error = getKMajorAddress(desc, r, byte, &address);
          !error.empty())
        return "tcgen05.cp source: " + error;
      if (std::string error = smem.read(address, 1, &bytes[byte]);
          !error.empty())
        return error;
    }
    for (unsigned lane : lanesOf(r))
      for (unsigned c = 0; c < rowBytes / 4; ++c) {
        const uint32_t word = bytes[4 * c] | bytes[4 * c + 1] << 8 |
                              bytes[4 * c + 2] << 16 |
                              uint32_t{bytes[4 * c + 3]} << 24;
        if (std::string error = tmem.write(lane, at.column + c, word, asyncOp);
            !error.empty())
          return "tcgen05.cp destination: " + error;
      }
  }
  return {};
}
