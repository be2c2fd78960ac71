//===- Tcgen05Descriptors.h - tcgen05 MMA descriptors ----------*- C++ -*-===//
//
// The two descriptor words of `tcgen05.mma`, built field by field from the
// PTX ISA tables (no MLIR dependency, so the gtests check them against the
// tables directly):
//
//  - the shared-memory matrix descriptor (PTX ISA 9.7.16.4.1 "Shared Memory
//    Descriptor"), a 64-bit word. Addresses and byte offsets are stored
//    right-shifted by 4 in 14-bit fields; the caller shifts the run-time start
//    address itself (nvvm.tcgen05.mma_smem_desc would not shift, [PTX4] in
//    docs/nvvm.md), so the constant part here leaves that field zero;
//  - the instruction descriptor of the block-scaled kinds (PTX ISA
//    9.7.16.4.2 "Instruction Descriptor", the table of .kind::mxf8f6f4,
//    .kind::mxf4 and .kind::mxf4nvf4), a 32-bit word.
//
//===----------------------------------------------------------------------===//

#ifndef FP4TRAIN_CONVERSION_FP4TRAINTONVVM_TCGEN05DESCRIPTORS_H
#define FP4TRAIN_CONVERSION_FP4TRAINTONVVM_TCGEN05DESCRIPTORS_H

#include <cstdint>

namespace mlir::fp4train::tcgen05 {

/// Swizzle modes of the shared-memory descriptor, bits 61-63.
enum class Swizzle : uint64_t {
  None = 0,
  B128Atom32 = 1, ///< 128-byte swizzle with 32-byte atomicity
  B128 = 2,
  B64 = 4,
  B32 = 6,
};

/// The fields of a shared-memory matrix descriptor, in bytes.
struct SmemDescriptor {
  /// Leading-dimension byte offset (bits 16-29, >> 4): K-direction distance
  /// between core matrices; unused by swizzled K-major layouts whose K extent
  /// fits in one swizzle row.
  uint64_t leadingByteOffset = 16;
  /// Stride-dimension byte offset (bits 32-45, >> 4): distance between
  /// groups of 8 rows (M or N direction).
  uint64_t strideByteOffset = 0;
  /// Matrix base offset (bits 49-51): 0 when every swizzle pattern starts on
  /// its own alignment, which the kernels guarantee.
  uint64_t baseOffset = 0;
  Swizzle swizzle = Swizzle::None;

  /// The descriptor with a zero start address (bits 0-13). Bits 46-48 hold
  /// the fixed constant 0b001 the ISA requires of tcgen05 descriptors; bit
  /// 52 (leading-dimension stride mode) is 0: relative byte offsets.
  constexpr uint64_t encode() const {
    return ((leadingByteOffset >> 4) & 0x3FFF) << 16 |
           ((strideByteOffset >> 4) & 0x3FFF) << 32 | uint64_t(1) << 46 |
           (baseOffset & 0x7) << 49 | static_cast<uint64_t>(swizzle) << 61;
  }
  /// The start-address field (bits 0-13) of a shared-memory byte address.
  static constexpr uint64_t encodeAddress(uint64_t address) {
    return (address >> 4) & 0x3FFF;
  }
};

/// Element types of the A/B fields (bits 7-9, 10-12).
enum class ElementType : uint32_t {
  /// .kind::mxf8f6f4 encodings.
  E4M3 = 0,
  E5M2 = 1,
  /// .kind::mxf4 / .kind::mxf4nvf4 encoding of E2M1.
  E2M1Packed = 1,
};

/// Scale type (bit 23).
enum class ScaleType : uint32_t { UE4M3 = 0, UE8M0 = 1 };

/// The fields of a block-scaled instruction descriptor.
struct BlockScaledInstrDescriptor {
  ElementType aType = ElementType::E4M3, bType = ElementType::E4M3;
  ScaleType scaleType = ScaleType::UE8M0;
  /// Byte (of each 32-bit tensor-memory column) where the instruction's
  /// scale factors of A start (bits 29-30) and of B (bits 4-5): 0 for
  /// scale_vec::4X, 0 or 2 for 2X, 0-3 for 1X.
  uint32_t scaleFactorIdA = 0, scaleFactorIdB = 0;
  /// 1 = MN-major; the kernels use K-major (0) operands only.
  uint32_t transposeA = 0, transposeB = 0;
  uint32_t m = 128, n = 128;

  /// Bits 0-2 (sparsity) and 13-14 (negation) stay 0: dense, no negation;
  /// bit 31 (.kind::mxf4nvf4 K = 96) stays 0: the dense K of 64 (FP4) or
  /// 32 (8-bit).
  constexpr uint32_t encode() const {
    return (scaleFactorIdB & 0x3) << 4 | static_cast<uint32_t>(aType) << 7 |
           static_cast<uint32_t>(bType) << 10 | (transposeA & 1) << 15 |
           (transposeB & 1) << 16 | ((n >> 3) & 0x3F) << 17 |
           static_cast<uint32_t>(scaleType) << 23 | ((m >> 7) & 0x3) << 27 |
           (scaleFactorIdA & 0x3) << 29;
  }
};

} // namespace mlir::fp4train::tcgen05

#endif // FP4TRAIN_CONVERSION_FP4TRAINTONVVM_TCGEN05DESCRIPTORS_H
