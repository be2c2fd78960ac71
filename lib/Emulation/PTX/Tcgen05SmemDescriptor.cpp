//===- Tcgen05SmemDescriptor.cpp - Matrix descriptors and K-major layouts -===//
//
// Sources: PTX ISA
//  - §9.7.16.4.1 "Shared Memory Descriptor", Table 40: bits 0..13 start
//    address, 16..29 leading dimension byte offset (or absolute address, bit
//    52 = 1, sm_103a), 32..45 stride dimension byte offset, each
//    matrix-descriptor-encode(x) = (x & 0x3FFFF) >> 4; bits 46..48 the fixed
//    constant 0b001; 49..51 the matrix base offset; 53..60 fixed 0; 61..63
//    the swizzling mode (0 none, 1 128-byte with 32-byte atomic swizzling,
//    2 128-byte, 4 64-byte, 6 32-byte; 3, 5, 7 invalid). Table 41: the
//    repeating pattern starts at a 1024 / 512 / 256-byte boundary for the
//    128 / 64 / 32-byte swizzles; otherwise base offset = (pattern start
//    addr >> 7) & 7.
//  - §9.7.16.3 "Major-ness supported by Strides": for K-major operands SBO is
//    the offset from the first 8 rows to the next 8 rows; LBO (no swizzling)
//    the stride from the first to the second column of the 8x2 tile of
//    128-bit elements, and is not used by the swizzled layouts.
//  - §9.7.16.3.3 "Canonical Layouts", K-major, in units of T = 128 / bits
//    elements: none ((8,m),(T,2k)):((1T,SBO),(1,LBO)); 32B
//    ((8,m),(T,2k)):((2T,SBO),(1,T)); 64B ((8,m),(T,2k)):((4T,SBO),(1,T));
//    128B ((8,m),(T,2k)):((8T,SBO),(1,T)), composed with Swizzle<0|1|2|3,4,3>
//    (CuTe: bits [4, 4 + B) of the byte offset XOR bits [7, 7 + B)).
//  - §9.7.16.10.4.6: E2M1 for kind::mxf4/mxf4nvf4 is two elements per byte
//    in shared memory, no padding.
//
// Assumptions (docs/emulation.md): the swizzle XOR is applied to the byte
// address the canonical layout gives, with the row phase (address bits 7..9)
// counted from the base offset, ((addr >> 7) - base offset); the lower k of
// an E2M1 pair is the low nibble (the little-endian sub-byte order of the
// PTX ISA's packed types and CUTLASS's subbyte containers). The leading
// dimension absolute-address mode (bit 52) and the 128-byte swizzle with
// 32-byte atomicity are rejected as not modelled.
//
//===----------------------------------------------------------------------===//

#include "fp4train/Emulation/Tcgen05.h"

#include "llvm/Support/FormatVariadic.h"

using namespace fp4train::emulation::ptx;

std::string
fp4train::emulation::ptx::decodeSmemDescriptor(uint64_t bits,
                                               SmemDescriptor *desc) {
  auto field = [&](unsigned lo, unsigned width) {
    return static_cast<uint32_t>((bits >> lo) & ((uint64_t{1} << width) - 1));
  };
  if (field(14, 2) || field(30, 2))
    return llvm::formatv("shared memory descriptor {0:x16}: reserved bits "
                         "14-15 / 30-31 are not zero",
                         bits);
  if (field(46, 3) != 1)
    return llvm::formatv("shared memory descriptor {0:x16}: bits 46-48 are "
                         "{1}, not the fixed constant 0b001 sm_100 requires",
                         bits, field(46, 3));
  if (field(53, 8))
    return llvm::formatv("shared memory descriptor {0:x16}: bits 53-60 must "
                         "be zero",
                         bits);
  const uint32_t swizzle = field(61, 3);
  if (swizzle == 3 || swizzle == 5 || swizzle == 7)
    return llvm::formatv("shared memory descriptor {0:x16}: swizzling mode "
                         "{1} is invalid",
                         bits, swizzle);
  desc->startAddress = field(0, 14) << 4;
  desc->leadingByteOffset = field(16, 14) << 4;
  desc->strideByteOffset = field(32, 14) << 4;
  desc->baseOffset = field(49, 3);
  desc->leadingAbsolute = field(52, 1) != 0;
  desc->swizzle = static_cast<SwizzleMode>(swizzle);
  return {};
}

unsigned fp4train::emulation::ptx::getSwizzleBytes(SwizzleMode mode) {
  switch (mode) {
  case SwizzleMode::None:
    return 16;
  case SwizzleMode::B32:
    return 32;
  case SwizzleMode::B64:
    return 64;
  case SwizzleMode::B128:
  case SwizzleMode::B128Atom32:
    return 128;
  }
  return 16;
}

std::string
fp4train::emulation::ptx::getKMajorAddress(const SmemDescriptor &desc,
                                           unsigned row, unsigned kByte,
                                           uint32_t *address) {
  if (desc.leadingAbsolute)
    return "the leading dimension absolute-address mode (descriptor bit 52) "
           "is not modelled";
  if (desc.swizzle == SwizzleMode::B128Atom32)
    return "128-byte swizzling with 32-byte atomicity is not modelled";
  const unsigned width = getSwizzleBytes(desc.swizzle);
  uint64_t unswizzled =
      uint64_t{desc.startAddress} + uint64_t{row / 8} * desc.strideByteOffset;
  if (desc.swizzle == SwizzleMode::None) {
    // 8 rows x 16 bytes core matrices; the next 16 bytes of K are LBO away.
    unswizzled += (row % 8) * 16 +
                  uint64_t{kByte / 16} * desc.leadingByteOffset + kByte % 16;
    *address = static_cast<uint32_t>(unswizzled);
    return {};
  }
  if (kByte >= width)
    return llvm::formatv("K byte {0} lies outside the {1}-byte swizzle row",
                         kByte, width);
  unswizzled += (row % 8) * width + kByte;
  const uint32_t chunks = width / 16 - 1; // 1, 3 or 7: Swizzle<1|2|3, 4, 3>
  const uint32_t phase =
      (static_cast<uint32_t>(unswizzled >> 7) - desc.baseOffset) & chunks;
  *address = static_cast<uint32_t>(unswizzled) ^ (phase << 4);
  return {};
}

std::string fp4train::emulation::ptx::readKMajorOperand(
    const SmemDescriptor &desc, SharedMemory &smem, unsigned rows, unsigned k,
    unsigned elementBits, std::vector<uint32_t> *codes) {
  if (elementBits != 4 && elementBits != 8 && elementBits != 16)
    return "operand containers must be 4, 8 or 16 bits";
  const unsigned rowBytes = k * elementBits / 8;
  codes->assign(size_t{rows} * k, 0);
  for (unsigned row = 0; row < rows; ++row)
    for (unsigned byte = 0; byte < rowBytes; ++byte) {
      uint32_t address;
      if (std::string error = getKMajorAddress(desc, row, byte, &address);
          !error.empty())
        return error;
      uint8_t value;
      if (std::string error = smem.read(address, 1, &value); !error.empty())
        return error;
      if (elementBits == 16) {
        (*codes)[size_t{row} * k + byte / 2] |= uint32_t{value}
                                                << (8 * (byte % 2));
      } else if (elementBits == 8) {
        (*codes)[size_t{row} * k + byte] = value;
      } else {
        (*codes)[size_t{row} * k + 2 * byte] = value & 0xF;
        (*codes)[size_t{row} * k + 2 * byte + 1] = value >> 4;
      }
    }
  return {};
}
