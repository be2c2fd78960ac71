//===- Tcgen05ModelTest.cpp - hand-worked checks of the tcgen05 models ----===//
//
// Each case writes its expectation from the PTX ISA's tables, independently
// of the models (Tcgen05.h): descriptor bits are assembled here field by
// field (§9.7.16.4.1 Table 40, §9.7.16.4.2 Tables 43/44), operand bytes are
// placed at addresses worked out from the canonical K-major layouts
// (§9.7.16.3.3), the scale factors at the tensor-memory cells of
// §9.7.16.10.7, and the MMA is compared with a scalar reference computed here
// in double (exact for the chosen ranges, then rounded once to f32, the
// model's documented arithmetic). Negative cases break a descriptor field,
// the swizzle or the scale layout and show that the model's result or error
// changes.
//
//===----------------------------------------------------------------------===//

#include "fp4train/Emulation/Tcgen05.h"

#include "ReferenceValues.h"

#include "gtest/gtest.h"

#include <random>

using namespace fp4train::emulation::ptx;
using namespace fp4train::emulation_test;

namespace {

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//

/// A flat shared memory that remembers which bytes were written.
class TestSharedMemory : public SharedMemory {
public:
  explicit TestSharedMemory(size_t size) : bytes(size), written(size) {}
  std::string read(uint32_t address, unsigned size, uint8_t *out) override {
    for (unsigned i = 0; i < size; ++i) {
      if (address + i >= bytes.size())
        return "shared address " + std::to_string(address + i) +
               " out of bounds";
      if (!written[address + i])
        return "shared byte " + std::to_string(address + i) + " unwritten";
      out[i] = bytes[address + i];
    }
    return {};
  }
  void write(uint32_t address, uint8_t value) {
    bytes.at(address) = value;
    written.at(address) = 1;
  }
  /// Sets the nibble of element `k` (low nibble for even k) of byte address.
  void writeNibble(uint32_t address, unsigned k, uint8_t code) {
    uint8_t &b = bytes.at(address);
    b = k % 2 ? (b & 0x0F) | code << 4 : (b & 0xF0) | code;
    written.at(address) = 1;
  }
  std::vector<uint8_t> bytes, written;
};

/// A descriptor from its fields (bytes), assembled per Table 40.
uint64_t makeDesc(uint32_t start, uint32_t lbo, uint32_t sbo, unsigned swizzle,
                  unsigned baseOffset = 0) {
  return uint64_t{(start & 0x3FFFF) >> 4} |
         uint64_t{(lbo & 0x3FFFF) >> 4} << 16 |
         uint64_t{(sbo & 0x3FFFF) >> 4} << 32 | uint64_t{1} << 46 |
         uint64_t{baseOffset} << 49 | uint64_t{swizzle} << 61;
}

/// An instruction descriptor for the FP4 kinds (Table 44).
uint32_t makeFp4Idesc(unsigned n, bool ue8m0, unsigned sfIdA = 0,
                      unsigned sfIdB = 0) {
  return sfIdB << 4 | 1u << 7 | 1u << 10 | (n >> 3) << 17 |
         uint32_t{ue8m0} << 23 | (128u >> 7) << 27 | sfIdA << 29;
}

/// Byte address of byte `kb` of row `r` of a K-major operand, worked from
/// the canonical layouts: no swizzle: core matrices of 8 rows x 16 bytes,
/// LBO between 16-byte K chunks, SBO between 8-row groups; swizzled with row
/// width W: row r % 8 at W (r % 8), 8-row groups SBO apart, then the 16-byte
/// chunk index XOR-ed with address bits 7.. (Swizzle<log2(W/16), 4, 3> on
/// byte addresses: the row for 128B, row / 2 for 64B, row / 4 for 32B; atoms
/// at 8 W-aligned addresses).
uint32_t expectedAddress(unsigned swizzleBytes, uint32_t start, uint32_t lbo,
                         uint32_t sbo, unsigned r, unsigned kb) {
  if (swizzleBytes == 0)
    return start + (r / 8) * sbo + (r % 8) * 16 + (kb / 16) * lbo + kb % 16;
  const unsigned chunk =
      (kb / 16) ^ (((r % 8) * swizzleBytes >> 7) & (swizzleBytes / 16 - 1));
  return start + (r / 8) * sbo + (r % 8) * swizzleBytes + chunk * 16 + kb % 16;
}

//===----------------------------------------------------------------------===//
// Shared memory descriptor
//===----------------------------------------------------------------------===//

TEST(Tcgen05SmemDescriptorTest, DecodesEveryField) {
  // start 0x1230, LBO 256 (encoded 16), SBO 1024 (64), base offset 3,
  // 128-byte swizzle (2), the 0b001 at bits 46..48.
  const uint64_t bits = 0x123ull | 16ull << 16 | 64ull << 32 | 1ull << 46 |
                        3ull << 49 | 2ull << 61;
  SmemDescriptor desc;
  ASSERT_EQ(decodeSmemDescriptor(bits, &desc), "");
  EXPECT_EQ(desc.startAddress, 0x1230u);
  EXPECT_EQ(desc.leadingByteOffset, 256u);
  EXPECT_EQ(desc.strideByteOffset, 1024u);
  EXPECT_EQ(desc.baseOffset, 3u);
  EXPECT_FALSE(desc.leadingAbsolute);
  EXPECT_EQ(desc.swizzle, SwizzleMode::B128);
  for (auto [code, mode] :
       {std::pair<unsigned, SwizzleMode>{0, SwizzleMode::None},
        {1, SwizzleMode::B128Atom32},
        {4, SwizzleMode::B64},
        {6, SwizzleMode::B32}}) {
    ASSERT_EQ(decodeSmemDescriptor(makeDesc(0, 0, 0, code), &desc), "");
    EXPECT_EQ(desc.swizzle, mode) << code;
  }
}

TEST(Tcgen05SmemDescriptorTest, RejectsBrokenFixedBitsAndSwizzleCodes) {
  SmemDescriptor desc;
  const uint64_t good = makeDesc(0x400, 128, 256, 2);
  // sm_100's fixed constant 0b001 at bits 46..48 missing (the wgmma format).
  EXPECT_NE(decodeSmemDescriptor(good & ~(1ull << 46), &desc)
                .find("bits 46-48 are 0, not the fixed constant 0b001"),
            std::string::npos);
  for (uint64_t code : {3ull, 5ull, 7ull})
    EXPECT_NE(
        decodeSmemDescriptor((good & ~(7ull << 61)) | code << 61, &desc)
            .find("swizzling mode " + std::to_string(code) + " is invalid"),
        std::string::npos);
  EXPECT_NE(decodeSmemDescriptor(good | 1ull << 14, &desc).find("reserved"),
            std::string::npos);
  EXPECT_NE(decodeSmemDescriptor(good | 1ull << 55, &desc).find("53-60"),
            std::string::npos);
}

TEST(Tcgen05SmemDescriptorTest, KMajorAddressesPerSwizzleMode) {
  SmemDescriptor desc;
  uint32_t address;
  // No swizzle, LBO 128, SBO 256: row 9 (group 1, row 1), K byte 20 (chunk
  // 1, byte 4): 256 + 16 + 128 + 4.
  ASSERT_EQ(decodeSmemDescriptor(makeDesc(0, 128, 256, 0), &desc), "");
  ASSERT_EQ(getKMajorAddress(desc, 9, 20, &address), "");
  EXPECT_EQ(address, 404u);
  // 128B: row 3, chunk 1 -> chunk 1 ^ 3 = 2: 3 * 128 + 32.
  ASSERT_EQ(decodeSmemDescriptor(makeDesc(0, 16, 1024, 2), &desc), "");
  ASSERT_EQ(getKMajorAddress(desc, 3, 16, &address), "");
  EXPECT_EQ(address, 416u);
  // ... and row 11 is the next atom (SBO 1024), same phase.
  ASSERT_EQ(getKMajorAddress(desc, 11, 16 + 5, &address), "");
  EXPECT_EQ(address, 1024u + 416 + 5);
  // 64B: row 5 at 320, address bits 7-8 = 2: chunk 0 -> 2: 320 + 32.
  ASSERT_EQ(decodeSmemDescriptor(makeDesc(0, 16, 512, 4), &desc), "");
  ASSERT_EQ(getKMajorAddress(desc, 5, 0, &address), "");
  EXPECT_EQ(address, 352u);
  // 32B: row 6 at 192, address bit 7 = 1: chunk 1 -> 0; row 7 too; row 3
  // (96, bit 7 = 0) keeps its chunk.
  ASSERT_EQ(decodeSmemDescriptor(makeDesc(0, 16, 256, 6), &desc), "");
  ASSERT_EQ(getKMajorAddress(desc, 6, 16, &address), "");
  EXPECT_EQ(address, 192u);
  ASSERT_EQ(getKMajorAddress(desc, 3, 16, &address), "");
  EXPECT_EQ(address, 112u);
  ASSERT_EQ(getKMajorAddress(desc, 7, 16, &address), "");
  EXPECT_EQ(address, 224u);
  // The 128B pattern starting 32 bytes into an atom (a K step): row 1's
  // first chunk is chunk 2 of the row, 2 ^ 1 = 3.
  ASSERT_EQ(decodeSmemDescriptor(makeDesc(0x2000 + 32, 16, 1024, 2), &desc),
            "");
  ASSERT_EQ(getKMajorAddress(desc, 1, 0, &address), "");
  EXPECT_EQ(address, 0x2000u + 128 + 48);
}

TEST(Tcgen05SmemDescriptorTest, UnmodelledModesAreErrors) {
  SmemDescriptor desc;
  uint32_t address;
  ASSERT_EQ(decodeSmemDescriptor(makeDesc(0, 0, 1024, 1), &desc), "");
  EXPECT_NE(getKMajorAddress(desc, 0, 0, &address).find("32-byte atomicity"),
            std::string::npos);
  ASSERT_EQ(decodeSmemDescriptor(makeDesc(0, 0, 1024, 2) | 1ull << 52, &desc),
            "");
  EXPECT_NE(getKMajorAddress(desc, 0, 0, &address).find("absolute-address"),
            std::string::npos);
}

//===----------------------------------------------------------------------===//
// Instruction descriptor
//===----------------------------------------------------------------------===//

TEST(Tcgen05InstrDescriptorTest, DecodesNvfp4AndMxfp4Fields) {
  InstrDescriptor d;
  // NVFP4: mxf4nvf4, UE4M3 (bit 23 = 0), N = 256, M = 128.
  const uint32_t nvfp4 = 1u << 7 | 1u << 10 | 32u << 17 | 1u << 27;
  ASSERT_EQ(
      decodeInstrDescriptor(BlockScaleKind::MXF4NVF4, ScaleVec::X4, nvfp4, &d),
      "");
  EXPECT_EQ(d.m, 128u);
  EXPECT_EQ(d.n, 256u);
  EXPECT_EQ(d.k, 64u);
  EXPECT_EQ(d.scaleFormat, ScaleFormat::UE4M3);
  EXPECT_EQ(d.typeA, ElementType::E2M1);
  EXPECT_FALSE(d.negateA || d.negateB || d.transposeA || d.transposeB);
  // MXFP4: mxf4, UE8M0, N = 64, SF ids A 2 (bits 29-30), B 2 (bits 4-5),
  // negate B (bit 14).
  const uint32_t mxfp4 = 2u << 4 | 1u << 7 | 1u << 10 | 1u << 14 | 8u << 17 |
                         1u << 23 | 1u << 27 | 2u << 29;
  ASSERT_EQ(
      decodeInstrDescriptor(BlockScaleKind::MXF4, ScaleVec::X2, mxfp4, &d), "");
  EXPECT_EQ(d.n, 64u);
  EXPECT_EQ(d.scaleFormat, ScaleFormat::UE8M0);
  EXPECT_EQ(d.scaleFactorIdA, 2u);
  EXPECT_EQ(d.scaleFactorIdB, 2u);
  EXPECT_TRUE(d.negateB);
  // mxf8f6f4: E4M3 (0) x E5M2 (1), K = 32, SF ids 3 and 1.
  const uint32_t mxf8 =
      1u << 4 | 0u << 7 | 1u << 10 | 16u << 17 | 1u << 23 | 1u << 27 | 3u << 29;
  ASSERT_EQ(
      decodeInstrDescriptor(BlockScaleKind::MXF8F6F4, ScaleVec::X1, mxf8, &d),
      "");
  EXPECT_EQ(d.typeA, ElementType::E4M3);
  EXPECT_EQ(d.typeB, ElementType::E5M2);
  EXPECT_EQ(d.k, 32u);
  EXPECT_EQ(d.n, 128u);
  EXPECT_EQ(d.scaleFactorIdA, 3u);
  EXPECT_EQ(d.scaleFactorIdB, 1u);
}

TEST(Tcgen05InstrDescriptorTest, RejectsInvalidCombinations) {
  InstrDescriptor d;
  const uint32_t good = makeFp4Idesc(128, /*ue8m0=*/false);
  auto error = [&](BlockScaleKind kind, ScaleVec vec, uint32_t bits) {
    return decodeInstrDescriptor(kind, vec, bits, &d);
  };
  ASSERT_EQ(error(BlockScaleKind::MXF4NVF4, ScaleVec::X4, good), "");
  auto has = [](const std::string &message, const char *what) {
    return message.find(what) != std::string::npos;
  };
  // M = 256 (bit 28) needs cta_group::2; M = 0.
  EXPECT_TRUE(
      has(error(BlockScaleKind::MXF4NVF4, ScaleVec::X4, good | 1u << 28),
          "M = 384"));
  EXPECT_TRUE(
      has(error(BlockScaleKind::MXF4NVF4, ScaleVec::X4, good & ~(1u << 27)),
          "M = 0"));
  EXPECT_TRUE(has(error(BlockScaleKind::MXF4NVF4, ScaleVec::X4, good | 1u),
                  "reserved"));
  EXPECT_TRUE(has(error(BlockScaleKind::MXF4NVF4, ScaleVec::X4, good | 1u << 2),
                  "sparse"));
  EXPECT_TRUE(
      has(error(BlockScaleKind::MXF4NVF4, ScaleVec::X4, good | 1u << 31),
          "K = 96"));
  EXPECT_TRUE(
      has(error(BlockScaleKind::MXF4NVF4, ScaleVec::X4, good | 1u << 15),
          "K-major"));
  // N = 0.
  EXPECT_TRUE(
      has(error(BlockScaleKind::MXF4NVF4, ScaleVec::X4, good & ~(0x3Fu << 17)),
          "N = 0"));
  // atype E2M1 must be code 1 for the FP4 kinds (5 is mxf8f6f4's code).
  EXPECT_TRUE(has(error(BlockScaleKind::MXF4NVF4, ScaleVec::X4,
                        (good & ~(7u << 7)) | 5u << 7),
                  "E2M1 (code 1)"));
  // UE4M3 with block32 (2X); mxf4 with UE4M3.
  EXPECT_TRUE(
      has(error(BlockScaleKind::MXF4NVF4, ScaleVec::X2, good), "UE4M3 scales"));
  EXPECT_TRUE(has(error(BlockScaleKind::MXF4, ScaleVec::X2, good), "UE4M3"));
  // SF ids: 2X takes 0 or 2, 4X only 0.
  EXPECT_TRUE(has(error(BlockScaleKind::MXF4, ScaleVec::X2,
                        makeFp4Idesc(128, true, /*sfIdA=*/1)),
                  "scale factor A id 1"));
  EXPECT_TRUE(has(error(BlockScaleKind::MXF4NVF4, ScaleVec::X4,
                        makeFp4Idesc(128, false, 0, /*sfIdB=*/2)),
                  "scale factor B id 2"));
  // mxf8f6f4: type code 2 is not a type; bit 31 is reserved.
  const uint32_t mxf8 = 8u << 17 | 1u << 23 | 1u << 27;
  EXPECT_TRUE(has(error(BlockScaleKind::MXF8F6F4, ScaleVec::X1, mxf8 | 2u << 7),
                  "atype 2"));
  EXPECT_TRUE(
      has(error(BlockScaleKind::MXF8F6F4, ScaleVec::X1, mxf8 | 1u << 31),
          "reserved"));
}

TEST(Tcgen05InstrDescriptorTest, CtaPairShapes) {
  InstrDescriptor d;
  auto decode = [&](uint32_t bits, unsigned ctaGroup) {
    return decodeInstrDescriptor(BlockScaleKind::MXF4NVF4, ScaleVec::X4, bits,
                                 &d, ctaGroup);
  };
  auto has = [](const std::string &message, const char *what) {
    return message.find(what) != std::string::npos;
  };
  // M >> 7 = 2 at bits 27-28: M = 256, the pair's shape (Layout A).
  const uint32_t m256 = 1u << 7 | 1u << 10 | 16u << 17 | 2u << 27;
  ASSERT_EQ(decode(m256, 2), "");
  EXPECT_EQ(d.m, 256u);
  EXPECT_EQ(d.n, 128u);
  EXPECT_TRUE(has(decode(m256, 1), "cta_group::1 block-scaled MMAs are M = "
                                   "128"));
  // M = 128 with cta_group::2 is Layout B (64 rows per CTA): not modelled.
  EXPECT_TRUE(has(decode((m256 & ~(3u << 27)) | 1u << 27, 2),
                  "M = 128 with cta_group::2"));
  // cta_group::2 takes N in steps of 16.
  EXPECT_TRUE(has(decode((m256 & ~(0x3Fu << 17)) | 3u << 17, 2),
                  "N = 24: cta_group::2 takes N in steps of 16"));
}

//===----------------------------------------------------------------------===//
// Tensor memory
//===----------------------------------------------------------------------===//

TEST(Tcgen05TensorMemoryTest, AllocationRules) {
  TensorMemory tmem;
  uint32_t a, b;
  ASSERT_EQ(tmem.alloc(128, &a), "");
  EXPECT_EQ(a, 0u);
  ASSERT_EQ(tmem.alloc(32, &b), "");
  EXPECT_EQ(b, 128u); // lane 0, column 128
  EXPECT_NE(tmem.alloc(64, &b).find("must not increase"), std::string::npos);
  EXPECT_NE(tmem.alloc(48, &b).find("power of 2"), std::string::npos);
  uint32_t word;
  EXPECT_NE(tmem.read(5, 3, "test", &word).find("nothing has written"),
            std::string::npos);
  EXPECT_NE(tmem.read(0, 200, "test", &word).find("not allocated"),
            std::string::npos);
  EXPECT_NE(tmem.read(128, 0, "test", &word).find("outside"),
            std::string::npos);
  ASSERT_EQ(tmem.write(5, 3, 42), "");
  ASSERT_EQ(tmem.read(5, 3, "test", &word), "");
  EXPECT_EQ(word, 42u);
  EXPECT_NE(tmem.dealloc(0, 64).find("allocated with 128"), std::string::npos);
  EXPECT_NE(tmem.dealloc(64, 32).find("not a tcgen05.alloc result"),
            std::string::npos);
  EXPECT_NE(tmem.checkAllDeallocated().find("still allocated"),
            std::string::npos);
  ASSERT_EQ(tmem.dealloc(0, 128), "");
  ASSERT_EQ(tmem.dealloc(128, 32), "");
  EXPECT_EQ(tmem.checkAllDeallocated(), "");
  tmem.relinquishAllocPermit();
  EXPECT_NE(tmem.alloc(32, &a).find("relinquish"), std::string::npos);
}

TEST(Tcgen05TensorMemoryTest, FullTensorMemoryCannotGrow) {
  TensorMemory tmem;
  uint32_t a;
  ASSERT_EQ(tmem.alloc(512, &a), "");
  EXPECT_NE(tmem.alloc(32, &a).find("no free aligned range"),
            std::string::npos);
}

//===----------------------------------------------------------------------===//
// tcgen05.cp, tcgen05.ld / st
//===----------------------------------------------------------------------===//

TEST(Tcgen05CpTest, Warpx4MulticastsEachRowToAllPartitions) {
  // 32 rows of 16 bytes, no swizzle: core matrices of 8 x 16 bytes, SBO 128
  // (so the rows are simply 16 bytes apart from 0x400).
  TestSharedMemory smem(4096);
  for (unsigned i = 0; i < 512; ++i)
    smem.write(0x400 + i, static_cast<uint8_t>(i * 7 + 1));
  TensorMemory tmem;
  uint32_t base;
  ASSERT_EQ(tmem.alloc(32, &base), "");
  ASSERT_EQ(tcgen05Cp(CpShape::S32x128b, CpMulticast::Warpx4, base + 4,
                      makeDesc(0x400, 0, 128, 0), tmem, smem, 1),
            "");
  for (unsigned r = 0; r < 32; ++r)
    for (unsigned w = 0; w < 4; ++w)
      for (unsigned c = 0; c < 4; ++c) {
        uint32_t word;
        ASSERT_EQ(tmem.read(32 * w + r, 4 + c, "test", &word), "");
        uint32_t expected = 0;
        for (unsigned b = 0; b < 4; ++b)
          expected |= uint32_t(uint8_t((16 * r + 4 * c + b) * 7 + 1)) << 8 * b;
        EXPECT_EQ(word, expected)
            << "row " << r << " warp " << w << " col " << c;
      }
  EXPECT_NE(tcgen05Cp(CpShape::S32x128b, CpMulticast::None, base,
                      makeDesc(0x400, 0, 128, 0), tmem, smem, 1)
                .find("requires .warpx4"),
            std::string::npos);
}

TEST(Tcgen05CpTest, Rows128x256bThroughLbo) {
  // 128 rows of 32 bytes, no swizzle: byte b of row r at
  // (r / 8) * SBO + (r % 8) * 16 + (b / 16) * LBO + b % 16.
  TestSharedMemory smem(16384);
  const uint32_t lbo = 2048, sbo = 128;
  for (unsigned r = 0; r < 128; ++r)
    for (unsigned b = 0; b < 32; ++b)
      smem.write(expectedAddress(0, 0, lbo, sbo, r, b),
                 static_cast<uint8_t>(r + 3 * b));
  TensorMemory tmem;
  uint32_t base;
  ASSERT_EQ(tmem.alloc(32, &base), "");
  ASSERT_EQ(tcgen05Cp(CpShape::S128x256b, CpMulticast::None, base,
                      makeDesc(0, lbo, sbo, 0), tmem, smem, 1),
            "");
  for (unsigned r : {0u, 9u, 77u, 127u})
    for (unsigned c = 0; c < 8; ++c) {
      uint32_t word;
      ASSERT_EQ(tmem.read(r, c, "test", &word), "");
      for (unsigned b = 0; b < 4; ++b)
        EXPECT_EQ((word >> 8 * b) & 0xFF, uint8_t(r + 3 * (4 * c + b)));
    }
}

TEST(Tcgen05LdTest, WarpsSeeTheirLaneQuarter) {
  TensorMemory tmem;
  uint32_t base;
  ASSERT_EQ(tmem.alloc(32, &base), "");
  for (unsigned lane = 0; lane < 128; ++lane)
    for (unsigned c = 0; c < 32; ++c)
      ASSERT_EQ(tmem.write(lane, c, lane << 8 | c), "");
  std::vector<uint32_t> regs;
  // 32x32b.x4 by warp 1 at lane 32, column 2: thread t gets lane 32 + t,
  // registers columns 2..5.
  ASSERT_EQ(tcgen05Ld(LdStShape::S32x32b, 4, 32u << 16 | 2, 1, tmem, &regs),
            "");
  for (unsigned t = 0; t < 32; ++t)
    for (unsigned i = 0; i < 4; ++i)
      EXPECT_EQ(regs[4 * t + i], (32 + t) << 8 | (2 + i));
  EXPECT_NE(tcgen05Ld(LdStShape::S32x32b, 4, 0, 1, tmem, &regs)
                .find("warp 1 of the warpgroup accesses tensor memory lanes "
                      "32-63 only"),
            std::string::npos);
  // 16x256b.x1 by warp 2 at lane 72: thread t = 4g + q, r0/r1 lane 72 + g,
  // columns 2q, 2q + 1; r2/r3 lane 80 + g.
  ASSERT_EQ(tcgen05Ld(LdStShape::S16x256b, 1, 72u << 16, 2, tmem, &regs), "");
  for (unsigned t = 0; t < 32; ++t) {
    const unsigned g = t / 4, q = t % 4;
    EXPECT_EQ(regs[4 * t + 0], (72 + g) << 8 | (2 * q));
    EXPECT_EQ(regs[4 * t + 1], (72 + g) << 8 | (2 * q + 1));
    EXPECT_EQ(regs[4 * t + 2], (80 + g) << 8 | (2 * q));
    EXPECT_EQ(regs[4 * t + 3], (80 + g) << 8 | (2 * q + 1));
  }
  // st then ld round-trips.
  std::vector<uint32_t> values(32 * 2);
  for (unsigned i = 0; i < values.size(); ++i)
    values[i] = 1000 + i;
  ASSERT_EQ(tcgen05St(LdStShape::S32x32b, 2, 96u << 16 | 30, 3, values, tmem),
            "");
  ASSERT_EQ(tcgen05Ld(LdStShape::S32x32b, 2, 96u << 16 | 30, 3, tmem, &regs),
            "");
  EXPECT_EQ(regs, values);
}

TEST(Tcgen05LdTest, LoadOfAPendingAsyncResultIsAnError) {
  TensorMemory tmem;
  uint32_t base;
  ASSERT_EQ(tmem.alloc(32, &base), "");
  for (unsigned lane = 0; lane < 32; ++lane)
    ASSERT_EQ(tmem.write(lane, 0, lane, /*asyncOp=*/7), "");
  std::vector<uint32_t> regs;
  EXPECT_NE(tcgen05Ld(LdStShape::S32x32b, 1, 0, 0, tmem, &regs)
                .find("asynchronous tcgen05 operation #7"),
            std::string::npos);
  tmem.completeOp(7);
  EXPECT_EQ(tcgen05Ld(LdStShape::S32x32b, 1, 0, 0, tmem, &regs), "");
}

//===----------------------------------------------------------------------===//
// mbarrier
//===----------------------------------------------------------------------===//

TEST(MbarrierTest, PhasesArrivalsAndTransactions) {
  Mbarrier bar;
  uint64_t state;
  bool completed;
  EXPECT_NE(bar.arrive(1, &state, &completed).find("not initialized"),
            std::string::npos);
  ASSERT_EQ(bar.init(2), "");
  EXPECT_FALSE(bar.isPhaseComplete(0));
  ASSERT_EQ(bar.arrive(1, &state, &completed), "");
  EXPECT_FALSE(completed);
  ASSERT_EQ(bar.arrive(1, &state, &completed), "");
  EXPECT_TRUE(completed);
  EXPECT_EQ(state, 0u);
  // Phase 0 done: parity 0 completes, parity 1 (the current) does not.
  EXPECT_TRUE(bar.isPhaseComplete(0));
  EXPECT_FALSE(bar.isPhaseComplete(1));
  // Phase 1 waits for both arrivals and 64 bytes of transactions.
  ASSERT_EQ(bar.expectTx(64), "");
  ASSERT_EQ(bar.arrive(2, &state, &completed), "");
  EXPECT_FALSE(completed);
  ASSERT_EQ(bar.completeTx(32, &completed), "");
  EXPECT_FALSE(completed);
  ASSERT_EQ(bar.completeTx(32, &completed), "");
  EXPECT_TRUE(completed);
  EXPECT_TRUE(bar.isPhaseComplete(1));
  EXPECT_EQ(bar.getPhase(), 2u);
  EXPECT_NE(bar.arrive(3, &state, &completed).find("2 pending arrivals"),
            std::string::npos);
  EXPECT_NE(bar.init(0).find("outside"), std::string::npos);
}

//===----------------------------------------------------------------------===//
// tcgen05.mma ... .block_scale against a scalar reference
//===----------------------------------------------------------------------===//

/// One MMA's inputs, laid out by the ISA's formulas, and the reference.
struct MmaCase {
  BlockScaleKind kind;
  ScaleVec vec;
  unsigned n;
  unsigned swizzleA, swizzleB; // 0 (none), 32, 64, 128 bytes
  unsigned sfIdA = 0, sfIdB = 0;
  bool ue8m0;
  bool accumulate = false;
  bool negateA = false;
};

class MmaFixture {
public:
  /// `garbage`: every shared byte starts written with noise, so that a
  /// broken layout reads wrong values instead of unwritten bytes.
  explicit MmaFixture(const MmaCase &c, bool garbage = false)
      : c(c), placedSfIdA(c.sfIdA), smem(1 << 16) {
    if (garbage) {
      std::mt19937 noise(99);
      for (uint32_t i = 0; i < smem.bytes.size(); ++i)
        smem.write(i, static_cast<uint8_t>(noise()));
    }
    const bool fp4 = c.kind != BlockScaleKind::MXF8F6F4;
    k = fp4 ? 64 : 32;
    blocks = static_cast<unsigned>(c.vec);
    std::mt19937 rng(1234 + c.n + c.swizzleA);
    a.resize(128 * k);
    b.resize(c.n * k);
    for (uint8_t &x : a)
      x = fp4 ? rng() % 16 : randomE4M3(rng);
    for (uint8_t &x : b)
      x = fp4 ? rng() % 16 : randomE4M3(rng);
    sa.resize(128 * blocks);
    sb.resize(c.n * blocks);
    // Scales within 2^-2..2^2 so that the reference sum is exact in double.
    for (uint8_t &s : sa)
      s = c.ue8m0 ? 125 + rng() % 5 : (5 + rng() % 5) << 3 | rng() % 8;
    for (uint8_t &s : sb)
      s = c.ue8m0 ? 125 + rng() % 5 : (5 + rng() % 5) << 3 | rng() % 8;
    cInit.resize(128 * c.n);
    for (float &x : cInit)
      x = c.accumulate ? static_cast<float>(int(rng() % 64) - 32) / 4 : 0;
  }

  static uint8_t randomE4M3(std::mt19937 &rng) {
    // Magnitudes in [2^-3, 2^3): exponent field 4..9.
    return (rng() % 2) << 7 | (4 + rng() % 6) << 3 | rng() % 8;
  }

  /// Places A at 0x0000 and B at 0x8000 in their layouts.
  void placeOperands() {
    const unsigned bytesPerRow =
        k * (c.kind != BlockScaleKind::MXF8F6F4 ? 4 : 8) / 8;
    auto place = [&](const std::vector<uint8_t> &codes, unsigned rows,
                     uint32_t start, unsigned swizzle, uint32_t lbo) {
      for (unsigned r = 0; r < rows; ++r)
        for (unsigned kb = 0; kb < bytesPerRow; ++kb) {
          const uint32_t address =
              expectedAddress(swizzle, start, lbo, sboOf(swizzle), r, kb);
          if (c.kind != BlockScaleKind::MXF8F6F4) {
            smem.writeNibble(address, 0, codes[r * k + 2 * kb]);
            smem.writeNibble(address, 1, codes[r * k + 2 * kb + 1]);
          } else {
            smem.write(address, codes[r * k + kb]);
          }
        }
    };
    place(a, 128, 0x0000, c.swizzleA, lboOf(c.swizzleA, 128));
    place(b, c.n, 0x8000, c.swizzleB, lboOf(c.swizzleB, c.n));
  }
  /// Interleaved: the second 16-byte K chunk of every row after all rows'
  /// first chunks (core matrices of 128 bytes, 8-row groups 128 apart).
  static uint32_t lboOf(unsigned swizzle, unsigned rows) {
    return swizzle ? 16 : (rows + 7) / 8 * 128;
  }
  static uint32_t sboOf(unsigned swizzle) {
    return swizzle ? 8 * swizzle : 128;
  }
  static unsigned swizzleCode(unsigned bytes) {
    return bytes == 0 ? 0 : bytes == 32 ? 6 : bytes == 64 ? 4 : 2;
  }

  /// Writes the scales at their cells: row r in lane r % 32 of all four
  /// partitions, column base + r / 32, byte sfId + j.
  void placeScales(TensorMemory &tmem, uint32_t columnA, uint32_t columnB) {
    auto place = [&](const std::vector<uint8_t> &s, unsigned count,
                     uint32_t column, unsigned sfId) {
      for (unsigned r = 0; r < count; ++r) {
        uint32_t word = 0x7F7F7F7Fu;
        for (unsigned j = 0; j < blocks; ++j) {
          word &= ~(0xFFu << 8 * (sfId + j));
          word |= uint32_t{s[r * blocks + j]} << 8 * (sfId + j);
        }
        if (rowPerLaneScales) {
          ASSERT_EQ(tmem.write(r, column, word), "");
          continue;
        }
        for (unsigned p = 0; p < 4; ++p)
          ASSERT_EQ(tmem.write(32 * p + r % 32, column + r / 32, word), "");
      }
    };
    place(sa, 128, columnA, placedSfIdA);
    place(sb, c.n, columnB, c.sfIdB);
  }

  double element(uint8_t code) const {
    return c.kind != BlockScaleKind::MXF8F6F4 ? e2m1Value(code)
                                              : e4m3Value(code);
  }
  double scale(uint8_t code) const {
    return c.ue8m0 ? ue8m0Value(code) : ue4m3Value(code);
  }
  float reference(unsigned m, unsigned n) const {
    double sum = cInit[m * c.n + n];
    const unsigned bs = k / blocks;
    for (unsigned i = 0; i < k; ++i)
      sum += (c.negateA ? -1 : 1) * scale(sa[m * blocks + i / bs]) *
             element(a[m * k + i]) * scale(sb[n * blocks + i / bs]) *
             element(b[n * k + i]);
    return static_cast<float>(sum);
  }

  uint32_t idesc() const {
    uint32_t bits = (c.n >> 3) << 17 | 1u << 27 | uint32_t{c.ue8m0} << 23 |
                    c.sfIdA << 29 | c.sfIdB << 4 | uint32_t{c.negateA} << 13;
    if (c.kind != BlockScaleKind::MXF8F6F4)
      bits |= 1u << 7 | 1u << 10; // E2M1
    return bits;                  // else E4M3 x E4M3 (codes 0)
  }

  /// Runs the MMA with D at column 0, scales at columns 256 and 264, and
  /// returns the model's error; `d` gets D.
  std::string run(std::vector<float> *d, uint64_t descA, uint64_t descB,
                  bool breakScales = false) {
    TensorMemory tmem;
    uint32_t base;
    EXPECT_EQ(tmem.alloc(512, &base), "");
    placeOperands();
    placeScales(tmem, 256, 264);
    if (breakScales) // A row 5's scales in lane 5 of partition 2 only
      EXPECT_EQ(tmem.write(64 + 5, 256, 0x38383838), "");
    for (unsigned m = 0; m < 128; ++m)
      for (unsigned n = 0; n < c.n; ++n)
        EXPECT_EQ(tmem.write(m, n, bitsOf(cInit[m * c.n + n])), "");
    Tcgen05MmaOperands ops;
    ops.kind = c.kind;
    ops.scaleVec = c.vec;
    ops.d = 0;
    ops.a = descA;
    ops.bDesc = descB;
    ops.idesc = idesc();
    ops.enableInputD = c.accumulate;
    ops.scaleA = 256;
    ops.scaleB = 264;
    std::string error = tcgen05MmaBlockScale(ops, tmem, smem, 1);
    if (!error.empty())
      return error;
    d->resize(128 * c.n);
    for (unsigned m = 0; m < 128; ++m)
      for (unsigned n = 0; n < c.n; ++n) {
        uint32_t word;
        EXPECT_EQ(tmem.read(m, n, "test", &word), "");
        (*d)[m * c.n + n] = floatOf(word);
      }
    return {};
  }
  uint64_t descA() const {
    return makeDesc(0x0000, lboOf(c.swizzleA, 128), sboOf(c.swizzleA),
                    swizzleCode(c.swizzleA));
  }
  uint64_t descB() const {
    return makeDesc(0x8000, lboOf(c.swizzleB, c.n), sboOf(c.swizzleB),
                    swizzleCode(c.swizzleB));
  }
  /// The number of D elements that differ from the reference.
  unsigned mismatches(const std::vector<float> &d) const {
    unsigned count = 0;
    for (unsigned m = 0; m < 128; ++m)
      for (unsigned n = 0; n < c.n; ++n)
        count += bitsOf(d[m * c.n + n]) != bitsOf(reference(m, n));
    return count;
  }

  MmaCase c;
  /// Deliberate breakage of the scale layout (the negative tests).
  bool rowPerLaneScales = false;
  unsigned placedSfIdA;
  TestSharedMemory smem;
  unsigned k, blocks;
  std::vector<uint8_t> a, b, sa, sb;
  std::vector<float> cInit;
};

class Tcgen05MmaTest : public ::testing::TestWithParam<MmaCase> {};

TEST_P(Tcgen05MmaTest, MatchesTheScalarReference) {
  MmaFixture f(GetParam());
  std::vector<float> d;
  ASSERT_EQ(f.run(&d, f.descA(), f.descB()), "");
  EXPECT_EQ(f.mismatches(d), 0u);
}

INSTANTIATE_TEST_SUITE_P(
    Layouts, Tcgen05MmaTest,
    ::testing::Values(
        // NVFP4: block16 (4X), UE4M3, A 128B-swizzled, B interleaved.
        MmaCase{BlockScaleKind::MXF4NVF4, ScaleVec::X4, 256, 128, 0, 0, 0,
                false},
        // NVFP4 accumulating, N = 8, A 32B, B 64B.
        MmaCase{BlockScaleKind::MXF4NVF4, ScaleVec::X4, 8, 32, 64, 0, 0, false,
                true},
        // MXFP4 on mxf4nvf4 block32 (2X, UE8M0), SF ids 2 / 0.
        MmaCase{BlockScaleKind::MXF4NVF4, ScaleVec::X2, 64, 64, 128, 2, 0,
                true},
        // MXFP4 on kind::mxf4, SF ids 0 / 2, negated A, N = 136.
        MmaCase{BlockScaleKind::MXF4, ScaleVec::X2, 136, 0, 32, 0, 2, true,
                true, true},
        // MXFP8 E4M3 on kind::mxf8f6f4 (1X), SF ids 3 / 1.
        MmaCase{BlockScaleKind::MXF8F6F4, ScaleVec::X1, 32, 128, 128, 3, 1,
                true, true}),
    [](const ::testing::TestParamInfo<MmaCase> &info) {
      const MmaCase &c = info.param;
      const char *kind = c.kind == BlockScaleKind::MXF8F6F4 ? "mxf8f6f4"
                         : c.kind == BlockScaleKind::MXF4   ? "mxf4"
                                                            : "mxf4nvf4";
      return std::string(kind) + "_x" +
             std::to_string(static_cast<unsigned>(c.vec)) + "_n" +
             std::to_string(c.n) + "_a" + std::to_string(c.swizzleA) + "_b" +
             std::to_string(c.swizzleB);
    });

TEST(Tcgen05MmaBrokenLayoutTest, WrongSwizzleModeChangesTheResult) {
  MmaFixture f(
      {BlockScaleKind::MXF4NVF4, ScaleVec::X4, 64, 128, 0, 0, 0, false},
      /*garbage=*/true);
  std::vector<float> d;
  // A laid out with the 128B swizzle but described as 64B (SBO adjusted).
  ASSERT_EQ(f.run(&d, makeDesc(0, 16, 1024, 4), f.descB()), "");
  EXPECT_GT(f.mismatches(d), 1000u);
  // ... or as not swizzled.
  ASSERT_EQ(f.run(&d, makeDesc(0, 16, 1024, 0), f.descB()), "");
  EXPECT_GT(f.mismatches(d), 1000u);
}

TEST(Tcgen05MmaBrokenLayoutTest, WrongStrideOffsetsChangeTheResult) {
  MmaFixture f(
      {BlockScaleKind::MXF4NVF4, ScaleVec::X4, 64, 128, 0, 0, 0, false},
      /*garbage=*/true);
  std::vector<float> d;
  // SBO of A halved: 8-row groups read from the wrong atoms.
  ASSERT_EQ(f.run(&d, makeDesc(0, 16, 512, 2), f.descB()), "");
  EXPECT_GT(f.mismatches(d), 1000u);
  // LBO of the interleaved B off by 16 bytes: the second K chunk of each row
  // comes from the wrong core matrix.
  ASSERT_EQ(f.run(&d, f.descA(), makeDesc(0x8000, 1024 + 16, 128, 0)), "");
  EXPECT_GT(f.mismatches(d), 1000u);
}

TEST(Tcgen05MmaBrokenLayoutTest, ScaleLayoutIsChecked) {
  MmaFixture f(
      {BlockScaleKind::MXF4NVF4, ScaleVec::X4, 64, 128, 0, 0, 0, false});
  std::vector<float> d;
  // Scales not duplicated across the four 32-lane partitions.
  EXPECT_NE(f.run(&d, f.descA(), f.descB(), /*breakScales=*/true)
                .find("scale_A of row 5: lane 5 holds"),
            std::string::npos);
  // Row r's scales in lane r of one column (the accumulator's layout)
  // instead of lane r % 32, column r / 32.
  f.rowPerLaneScales = true;
  EXPECT_NE(f.run(&d, f.descA(), f.descB()).find("duplicated to all four"),
            std::string::npos);
  // MXFP4 scales placed in half word 1 (SF id 2) but read with SF id 0.
  MmaFixture g({BlockScaleKind::MXF4, ScaleVec::X2, 64, 128, 0, 0, 0, true});
  ASSERT_EQ(g.run(&d, g.descA(), g.descB()), "");
  EXPECT_EQ(g.mismatches(d), 0u);
  g.placedSfIdA = 2; // half word 0 of each cell now holds 0x7F7F (2^0)
  ASSERT_EQ(g.run(&d, g.descA(), g.descB()), "");
  EXPECT_GT(g.mismatches(d), 1000u);
}

TEST(Tcgen05MmaBrokenLayoutTest, MissingOperandsAreErrors) {
  MmaFixture f(
      {BlockScaleKind::MXF4NVF4, ScaleVec::X4, 64, 128, 0, 0, 0, false});
  std::vector<float> d;
  // B described 1 KiB further than where it was written.
  EXPECT_NE(
      f.run(&d, f.descA(), makeDesc(0xC000, 1024, 128, 0)).find("unwritten"),
      std::string::npos);
  // A broken descriptor constant.
  EXPECT_NE(f.run(&d, f.descA() & ~(1ull << 46), f.descB()).find("A: shared"),
            std::string::npos);
}

TEST(Tcgen05MmaKStepTest, TwoMmasAlongKInOneSwizzleAtom) {
  // A K = 128 MXFP4 tile (64 bytes a row) in one 128B-swizzled atom row:
  // the second MMA's descriptors start 32 bytes further (the swizzle applies
  // to the resulting addresses), its scales are the second half word of the
  // cells (SF id 2 with scale_vec::2X), and it accumulates (enable-input-d).
  constexpr unsigned N = 16, K = 128, blocks = 4;
  std::mt19937 rng(7);
  std::vector<uint8_t> a(128 * K), b(N * K), sa(128 * blocks), sb(N * blocks);
  for (uint8_t &x : a)
    x = rng() % 16;
  for (uint8_t &x : b)
    x = rng() % 16;
  for (uint8_t &s : sa)
    s = 125 + rng() % 5;
  for (uint8_t &s : sb)
    s = 125 + rng() % 5;
  TestSharedMemory smem(1 << 16);
  auto place = [&](const std::vector<uint8_t> &codes, unsigned rows,
                   uint32_t start) {
    for (unsigned r = 0; r < rows; ++r)
      for (unsigned kb = 0; kb < K / 2; ++kb) {
        const uint32_t address = expectedAddress(128, start, 16, 1024, r, kb);
        smem.writeNibble(address, 0, codes[r * K + 2 * kb]);
        smem.writeNibble(address, 1, codes[r * K + 2 * kb + 1]);
      }
  };
  place(a, 128, 0);
  place(b, N, 0x8000);
  TensorMemory tmem;
  uint32_t base;
  ASSERT_EQ(tmem.alloc(64, &base), "");
  // Cell of row r: bytes 0-1 the K blocks 0-1 (first MMA), 2-3 blocks 2-3.
  auto placeScales = [&](const std::vector<uint8_t> &s, unsigned count,
                         uint32_t column) {
    for (unsigned r = 0; r < count; ++r) {
      uint32_t word = 0;
      for (unsigned j = 0; j < blocks; ++j)
        word |= uint32_t{s[r * blocks + j]} << 8 * j;
      for (unsigned p = 0; p < 4; ++p)
        ASSERT_EQ(tmem.write(32 * p + r % 32, column + r / 32, word), "");
    }
  };
  placeScales(sa, 128, 32);
  placeScales(sb, N, 40);
  Tcgen05MmaOperands ops;
  ops.kind = BlockScaleKind::MXF4NVF4;
  ops.scaleVec = ScaleVec::X2;
  ops.d = 0;
  ops.scaleA = 32;
  ops.scaleB = 40;
  for (unsigned step = 0; step < 2; ++step) {
    ops.a = makeDesc(32 * step, 16, 1024, 2);
    ops.bDesc = makeDesc(0x8000 + 32 * step, 16, 1024, 2);
    ops.idesc = makeFp4Idesc(N, /*ue8m0=*/true, 2 * step, 2 * step);
    ops.enableInputD = step == 1;
    ASSERT_EQ(tcgen05MmaBlockScale(ops, tmem, smem, 1 + step), "");
  }
  unsigned mismatches = 0;
  for (unsigned m = 0; m < 128; ++m)
    for (unsigned n = 0; n < N; ++n) {
      double sum = 0; // every partial sum is exact in f32 here
      for (unsigned k = 0; k < K; ++k)
        sum += ue8m0Value(sa[m * blocks + k / 32]) * e2m1Value(a[m * K + k]) *
               ue8m0Value(sb[n * blocks + k / 32]) * e2m1Value(b[n * K + k]);
      uint32_t word;
      ASSERT_EQ(tmem.read(m, n, "test", &word), "");
      mismatches += word != bitsOf(static_cast<float>(sum));
    }
  EXPECT_EQ(mismatches, 0u);
}

} // namespace
