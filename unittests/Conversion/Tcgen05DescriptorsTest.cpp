//===- Tcgen05DescriptorsTest.cpp - tcgen05 descriptors vs the PTX ISA ---===//
//
// Each field of the shared-memory and instruction descriptors is set alone
// and must land on the bits of PTX ISA 9.7.16.4.1 / 9.7.16.4.2; then the
// exact words the GEMM kernels use are pinned.
//
//===----------------------------------------------------------------------===//

#include "fp4train/Conversion/FP4TrainToNVVM/Tcgen05Descriptors.h"

#include <gtest/gtest.h>

using namespace mlir::fp4train::tcgen05;

namespace {

/// Bits [lo, hi] of `word`.
uint64_t bits(uint64_t word, int lo, int hi) {
  return (word >> lo) & ((uint64_t(1) << (hi - lo + 1)) - 1);
}

TEST(Tcgen05SmemDescriptor, FieldsLandOnTheISABits) {
  SmemDescriptor d;
  d.leadingByteOffset = 0;
  uint64_t empty = d.encode();
  // Only the fixed constant 0b001 at bits 46-48.
  EXPECT_EQ(empty, uint64_t(1) << 46);

  d.leadingByteOffset = 0x3FFF << 4;
  EXPECT_EQ(bits(d.encode(), 16, 29), 0x3FFFu);
  EXPECT_EQ(d.encode() & ~(uint64_t(0x3FFF) << 16), empty);
  d.leadingByteOffset = 0;

  d.strideByteOffset = 1024;
  EXPECT_EQ(bits(d.encode(), 32, 45), 64u);
  EXPECT_EQ(d.encode() & ~(uint64_t(0x3FFF) << 32), empty);
  d.strideByteOffset = 0;

  d.baseOffset = 5;
  EXPECT_EQ(bits(d.encode(), 49, 51), 5u);
  d.baseOffset = 0;

  for (auto [mode, code] : {std::pair{Swizzle::None, 0},
                            {Swizzle::B128Atom32, 1},
                            {Swizzle::B128, 2},
                            {Swizzle::B64, 4},
                            {Swizzle::B32, 6}}) {
    d.swizzle = mode;
    EXPECT_EQ(bits(d.encode(), 61, 63), uint64_t(code));
    EXPECT_EQ(bits(d.encode(), 0, 60), bits(empty, 0, 60));
  }
}

TEST(Tcgen05SmemDescriptor, AddressIsShiftedAndMasked) {
  // The ISA stores address >> 4 in 14 bits (shared windows up to 256 KiB).
  EXPECT_EQ(SmemDescriptor::encodeAddress(0x400), 0x40u);
  EXPECT_EQ(SmemDescriptor::encodeAddress(0x3FFF0), 0x3FFFu);
  EXPECT_EQ(SmemDescriptor::encodeAddress(0x40000), 0u);
}

TEST(Tcgen05SmemDescriptor, KernelWords) {
  // Operand tiles: K-major, 128-byte swizzle, 8-row groups 1024 bytes apart.
  SmemDescriptor operand{16, 1024, 0, Swizzle::B128};
  EXPECT_EQ(operand.encode(), 0x4000404000010000ull);
  // Scale-factor atoms for tcgen05.cp 32x128b: no swizzle, 8 rows of 16
  // bytes per core matrix, core matrices 128 bytes apart.
  SmemDescriptor scales{16, 128, 0, Swizzle::None};
  EXPECT_EQ(scales.encode(), 0x0000400800010000ull);
}

TEST(Tcgen05InstrDescriptor, FieldsLandOnTheISABits) {
  BlockScaledInstrDescriptor d;
  d.m = 0;
  d.n = 0;
  d.scaleType = ScaleType::UE4M3;
  EXPECT_EQ(d.encode(), 0u);

  d.scaleFactorIdB = 3;
  EXPECT_EQ(d.encode(), 3u << 4);
  d.scaleFactorIdB = 0;
  d.aType = static_cast<ElementType>(5);
  EXPECT_EQ(d.encode(), 5u << 7);
  d.aType = ElementType::E4M3;
  d.bType = static_cast<ElementType>(5);
  EXPECT_EQ(d.encode(), 5u << 10);
  d.bType = ElementType::E4M3;
  d.transposeA = 1;
  EXPECT_EQ(d.encode(), 1u << 15);
  d.transposeA = 0;
  d.transposeB = 1;
  EXPECT_EQ(d.encode(), 1u << 16);
  d.transposeB = 0;
  d.n = 256;
  EXPECT_EQ(d.encode(), 32u << 17);
  d.n = 8;
  EXPECT_EQ(d.encode(), 1u << 17);
  d.n = 0;
  d.scaleType = ScaleType::UE8M0;
  EXPECT_EQ(d.encode(), 1u << 23);
  d.scaleType = ScaleType::UE4M3;
  // M >> 7 in bits 27-28 (equivalently M >> 4 in bits 24-28 for M = 128 or
  // 256, the only values cta_group::1 / ::2 block scaling takes).
  d.m = 128;
  EXPECT_EQ(d.encode(), 1u << 27);
  d.m = 256;
  EXPECT_EQ(d.encode(), 2u << 27);
  d.m = 0;
  d.scaleFactorIdA = 2;
  EXPECT_EQ(d.encode(), 2u << 29);
}

TEST(Tcgen05InstrDescriptor, KernelWords) {
  // NVFP4: kind::mxf4nvf4, E2M1 (1) x E2M1, UE4M3, M = N = 128.
  BlockScaledInstrDescriptor nvfp4{ElementType::E2M1Packed,
                                   ElementType::E2M1Packed, ScaleType::UE4M3};
  EXPECT_EQ(nvfp4.encode(), 0x08200480u);
  // MXFP4 second k64 of a scale word: scale factor id 2 on both operands.
  BlockScaledInstrDescriptor mxfp4{
      ElementType::E2M1Packed, ElementType::E2M1Packed, ScaleType::UE8M0, 2, 2};
  EXPECT_EQ(mxfp4.encode(), 0x48A004A0u);
  // MXFP8 E4M3 x E5M2 (kind::mxf8f6f4), fourth k32: id 3.
  BlockScaledInstrDescriptor mxfp8{ElementType::E4M3, ElementType::E5M2,
                                   ScaleType::UE8M0, 3, 3};
  EXPECT_EQ(mxfp8.encode(), 0x68A00430u);
}

} // namespace
