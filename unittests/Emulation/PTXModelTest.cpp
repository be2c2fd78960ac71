//===- PTXModelTest.cpp - hand-worked checks of the PTX models ------------===//
//
// Each case places values by the PTX ISA's fragment formulas (§9.7.14.5:
// groupID = lane >> 2, threadID_in_group = lane % 4, elements low to high in
// each register) and scale-selector rules (§9.7.14.3), written out here
// independently of the model, so a misplaced element, scale byte, lane or
// output slot fails.
//
//===----------------------------------------------------------------------===//

#include "fp4train/Emulation/PTX.h"

#include "ReferenceValues.h"

#include "fp4train/Numerics/Formats.h"

#include "gtest/gtest.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

using namespace fp4train::emulation::ptx;
using fp4train::emulation_test::bitsOf;
using fp4train::emulation_test::floatOf;

namespace {

constexpr uint32_t kE2M1One = 0x2, kE2M1MinusOne = 0xA;
constexpr uint8_t kUE8M0One = 0x7F, kUE4M3One = 0x38;

struct Warp {
  std::vector<std::array<uint32_t, 4>> a =
      std::vector<std::array<uint32_t, 4>>(32);
  std::vector<std::array<uint32_t, 2>> b =
      std::vector<std::array<uint32_t, 2>>(32);
  std::vector<std::array<uint32_t, 4>> c =
      std::vector<std::array<uint32_t, 4>>(32);
  std::vector<uint32_t> scaleA = std::vector<uint32_t>(32, 0xFFFFFFFFu);
  std::vector<uint32_t> scaleB = std::vector<uint32_t>(32, 0xFFFFFFFFu);
  std::array<uint32_t, 4> d[32];

  static void put(uint32_t &reg, unsigned shift, unsigned width, uint32_t v) {
    const uint32_t mask = ((1u << width) - 1) << shift;
    reg = (reg & ~mask) | ((v << shift) & mask);
  }
  // m16n8k64: A[row][k] is nibble k % 8 of register row / 8 + 2 (k / 32) of
  // lane 4 (row % 8) + (k % 32) / 8.
  void setA64(unsigned row, unsigned k, uint32_t code) {
    put(a[4 * (row % 8) + (k % 32) / 8][row / 8 + 2 * (k / 32)], 4 * (k % 8), 4,
        code);
  }
  // B[k][n] is nibble k % 8 of register k / 32 of lane 4n + (k % 32) / 8.
  void setB64(unsigned k, unsigned n, uint32_t code) {
    put(b[4 * n + (k % 32) / 8][k / 32], 4 * (k % 8), 4, code);
  }
  // m16n8k32: A[row][k] is byte k % 4 of register row / 8 + 2 (k / 16) of lane
  // 4 (row % 8) + (k % 16) / 4; B[k][n] byte k % 4 of register k / 16 of lane
  // 4n + (k % 16) / 4.
  void setA32(unsigned row, unsigned k, uint32_t byte) {
    put(a[4 * (row % 8) + (k % 16) / 4][row / 8 + 2 * (k / 16)], 8 * (k % 4), 8,
        byte);
  }
  void setB32(unsigned k, unsigned n, uint32_t byte) {
    put(b[4 * n + (k % 16) / 4][k / 16], 8 * (k % 4), 8, byte);
  }
  // D[row][col] is register 2 (row / 8) + col % 2 of lane 4 (row % 8) + col
  // / 2.
  uint32_t &cAt(unsigned row, unsigned col) {
    return c[4 * (row % 8) + col / 2][2 * (row / 8) + col % 2];
  }
  float dAt(unsigned row, unsigned col) const {
    return floatOf(d[4 * (row % 8) + col / 2][2 * (row / 8) + col % 2]);
  }
  uint32_t dBitsAt(unsigned row, unsigned col) const {
    return d[4 * (row % 8) + col / 2][2 * (row / 8) + col % 2];
  }
  // The A scale of row m, K block j: lane 4 (m % 8) + 2 tid + m / 8, byte
  // bid + j. The B scale of column n: lane 4n + tid, byte bid + j.
  void setScaleA(unsigned row, unsigned block, uint8_t code, unsigned bid = 0,
                 unsigned tid = 0) {
    put(scaleA[4 * (row % 8) + 2 * tid + row / 8], 8 * (bid + block), 8, code);
  }
  void setScaleB(unsigned col, unsigned block, uint8_t code, unsigned bid = 0,
                 unsigned tid = 0) {
    put(scaleB[4 * col + tid], 8 * (bid + block), 8, code);
  }
  void setAllScales(unsigned blocks, uint8_t code, unsigned bidA = 0,
                    unsigned tidA = 0, unsigned bidB = 0, unsigned tidB = 0) {
    for (unsigned j = 0; j < blocks; ++j) {
      for (unsigned m = 0; m < 16; ++m)
        setScaleA(m, j, code, bidA, tidA);
      for (unsigned n = 0; n < 8; ++n)
        setScaleB(n, j, code, bidB, tidB);
    }
  }
  std::string run(const MmaBlockScaleConfig &config, unsigned bidA = 0,
                  unsigned tidA = 0, unsigned bidB = 0, unsigned tidB = 0) {
    return mmaBlockScale(config, a, b, c, scaleA, bidA, tidA, scaleB, bidB,
                         tidB, d);
  }
};

const MmaBlockScaleConfig kMxfp4{BlockScaleKind::MXF4, ScaleVec::X2,
                                 ScaleFormat::UE8M0};
const MmaBlockScaleConfig kNvfp4{BlockScaleKind::MXF4NVF4, ScaleVec::X4,
                                 ScaleFormat::UE4M3};
MmaBlockScaleConfig mxf8(ElementType a, ElementType b) {
  return {BlockScaleKind::MXF8F6F4, ScaleVec::X1, ScaleFormat::UE8M0, a, b};
}

// One nonzero A element at every (row, k), B's row k all ones: D must be 1 in
// exactly that row.
TEST(PTXMmaBlockScale, EveryAPositionReachesItsRow) {
  for (unsigned row = 0; row < 16; ++row)
    for (unsigned k = 0; k < 64; ++k) {
      Warp w;
      w.setAllScales(2, kUE8M0One);
      w.setA64(row, k, kE2M1One);
      for (unsigned n = 0; n < 8; ++n)
        w.setB64(k, n, kE2M1One);
      ASSERT_EQ(w.run(kMxfp4), "");
      for (unsigned i = 0; i < 16; ++i)
        for (unsigned n = 0; n < 8; ++n)
          ASSERT_EQ(w.dAt(i, n), i == row ? 1.0f : 0.0f)
              << "A[" << row << "][" << k << "] -> D[" << i << "][" << n << "]";
    }
}

TEST(PTXMmaBlockScale, EveryBPositionReachesItsColumn) {
  for (unsigned k = 0; k < 64; ++k)
    for (unsigned col = 0; col < 8; ++col) {
      Warp w;
      w.setAllScales(2, kUE8M0One);
      w.setB64(k, col, kE2M1MinusOne);
      for (unsigned m = 0; m < 16; ++m)
        w.setA64(m, k, kE2M1One);
      ASSERT_EQ(w.run(kMxfp4), "");
      for (unsigned i = 0; i < 16; ++i)
        for (unsigned n = 0; n < 8; ++n)
          ASSERT_EQ(w.dAt(i, n), n == col ? -1.0f : 0.0f)
              << "B[" << k << "][" << col << "] -> D[" << i << "][" << n << "]";
    }
}

TEST(PTXMmaBlockScale, AccumulatorLayout) {
  Warp w;
  w.setAllScales(2, kUE8M0One);
  for (unsigned i = 0; i < 16; ++i)
    for (unsigned n = 0; n < 8; ++n)
      w.cAt(i, n) = bitsOf(static_cast<float>(100 * i + n));
  ASSERT_EQ(w.run(kMxfp4), "");
  for (unsigned i = 0; i < 16; ++i)
    for (unsigned n = 0; n < 8; ++n)
      EXPECT_EQ(w.dAt(i, n), static_cast<float>(100 * i + n));
  // c0 of lane 0 is D[0][0], c1 D[0][1], c2 D[8][0], c3 D[8][1]; lane 5 c0
  // is D[1][2].
  EXPECT_EQ(floatOf(w.d[0][2]), 800.0f);
  EXPECT_EQ(floatOf(w.d[0][1]), 1.0f);
  EXPECT_EQ(floatOf(w.d[5][0]), 102.0f);
}

TEST(PTXMmaBlockScale, NibbleOrderIsLowToHigh) {
  // Lane 0 register 0 nibble j is A[0][j]; lane 0 register 0 of B is B[j][0].
  Warp w;
  w.setAllScales(2, kUE8M0One);
  w.a[0][0] = 0x00000002u; // A[0][0] = 1
  w.b[0][0] = 0x00000070u; // B[1][0] = 6: no product with A[0][0]
  w.a[4][0] = 0x00000020u; // A[1][1] = 1 (lane 4 is groupID 1)
  ASSERT_EQ(w.run(kMxfp4), "");
  EXPECT_EQ(w.dAt(0, 0), 0.0f);
  EXPECT_EQ(w.dAt(1, 0), 6.0f);
}

// Every (row, block) scale byte scales exactly its 32 (2X) or 16 (4X)
// elements, for every allowed selector; unselected lanes and bytes hold NaN
// codes that must not be read.
TEST(PTXMmaBlockScale, ScaleBytesAndSelectorsMxfp4) {
  for (unsigned bidA : {0u, 2u})
    for (unsigned tidA : {0u, 1u})
      for (unsigned bidB : {0u, 2u})
        for (unsigned tidB : {0u, 1u, 2u, 3u})
          for (unsigned row = 0; row < 16; ++row)
            for (unsigned block = 0; block < 2; ++block) {
              Warp w;
              for (unsigned m = 0; m < 16; ++m)
                for (unsigned k = 0; k < 64; ++k)
                  w.setA64(m, k, kE2M1One);
              for (unsigned k = 0; k < 64; ++k)
                for (unsigned n = 0; n < 8; ++n)
                  w.setB64(k, n, kE2M1One);
              w.setAllScales(2, kUE8M0One, bidA, tidA, bidB, tidB);
              w.setScaleA(row, block, 0x80, bidA, tidA);     // 2.0
              w.setScaleB(row % 8, block, 0x81, bidB, tidB); // 4.0
              ASSERT_EQ(w.run(kMxfp4, bidA, tidA, bidB, tidB), "");
              for (unsigned i = 0; i < 16; ++i)
                for (unsigned n = 0; n < 8; ++n) {
                  float expected = 64;
                  if (i == row && n == row % 8)
                    expected = 32 + 32 * 8; // both scales on the same block
                  else if (i == row)
                    expected = 32 + 32 * 2;
                  else if (n == row % 8)
                    expected = 32 + 32 * 4;
                  ASSERT_EQ(w.dAt(i, n), expected)
                      << "sel (" << bidA << "," << tidA << "),(" << bidB << ","
                      << tidB << ") row " << row << " block " << block;
                }
            }
}

TEST(PTXMmaBlockScale, ScaleBytesAndSelectorsNvfp4) {
  for (unsigned tidA : {0u, 1u})
    for (unsigned tidB : {0u, 1u, 2u, 3u})
      for (unsigned row = 0; row < 16; ++row)
        for (unsigned block = 0; block < 4; ++block) {
          Warp w;
          std::fill(w.scaleA.begin(), w.scaleA.end(), 0x7F7F7F7Fu); // NaN
          std::fill(w.scaleB.begin(), w.scaleB.end(), 0x7F7F7F7Fu);
          for (unsigned m = 0; m < 16; ++m)
            for (unsigned k = 0; k < 64; ++k)
              w.setA64(m, k, kE2M1One);
          for (unsigned k = 0; k < 64; ++k)
            for (unsigned n = 0; n < 8; ++n)
              w.setB64(k, n, kE2M1One);
          w.setAllScales(4, kUE4M3One, 0, tidA, 0, tidB);
          w.setScaleA(row, block, 0x3C, 0, tidA);         // 1.5
          w.setScaleB(7 - row % 8, block, 0x30, 0, tidB); // 0.5
          ASSERT_EQ(w.run(kNvfp4, 0, tidA, 0, tidB), "");
          for (unsigned i = 0; i < 16; ++i)
            for (unsigned n = 0; n < 8; ++n) {
              const float sa = i == row ? 1.5f : 1.0f;
              const float sb = n == 7 - row % 8 ? 0.5f : 1.0f;
              ASSERT_EQ(w.dAt(i, n), 48 + 16 * sa * sb)
                  << "tid (" << tidA << "," << tidB << ") row " << row
                  << " block " << block;
            }
        }
}

// Which K elements a block scale covers: only the element in block j of the
// row sees scale j.
TEST(PTXMmaBlockScale, BlockBoundaries) {
  for (unsigned k = 0; k < 64; ++k) {
    Warp w;
    std::fill(w.scaleA.begin(), w.scaleA.end(), 0x38383838u);
    std::fill(w.scaleB.begin(), w.scaleB.end(), 0x38383838u);
    // Row 3's blocks 0..3 get scales 1, 2, 4, 8 (UE4M3 0x38, 0x40, 0x48, 0x50).
    for (unsigned j = 0; j < 4; ++j)
      w.setScaleA(3, j, static_cast<uint8_t>(0x38 + 8 * j));
    w.setA64(3, k, kE2M1One);
    w.setB64(k, 5, kE2M1One);
    ASSERT_EQ(w.run(kNvfp4), "");
    EXPECT_EQ(w.dAt(3, 5), static_cast<float>(1u << (k / 16))) << "k " << k;
  }
}

TEST(PTXMmaBlockScale, Mxf8f6f4LayoutAndScales) {
  for (unsigned row = 0; row < 16; ++row)
    for (unsigned k = 0; k < 32; ++k)
      for (unsigned col : {0u, 3u, 7u}) {
        Warp w;
        for (unsigned bid = 0; bid < 4; ++bid) {
          w.setAllScales(1, kUE8M0One, bid, 1, bid, 2);
        }
        w.setScaleA(row, 0, 0x80, 3, 1); // row's scale 2 in byte 3
        w.setA32(row, k, 0x38);          // E4M3 1.0
        w.setB32(k, col, 0xC0);          // E4M3 -2.0
        ASSERT_EQ(w.run(mxf8(ElementType::E4M3, ElementType::E4M3), 3, 1, 3, 2),
                  "");
        for (unsigned i = 0; i < 16; ++i)
          for (unsigned n = 0; n < 8; ++n)
            ASSERT_EQ(w.dAt(i, n), i == row && n == col ? -4.0f : 0.0f)
                << "A[" << row << "][" << k << "] B col " << col;
      }
}

TEST(PTXMmaBlockScale, Mxf8f6f4Containers) {
  struct Case {
    ElementType type;
    uint32_t byte;
    float value;
  };
  // 1.5 in each format's 8-bit container: E2M1 in bits 5..2, E3M2/E2M3 in
  // bits 5..0 (padding bits set to 1 where they must be ignored).
  const Case cases[] = {{ElementType::E4M3, 0x3C, 1.5f},
                        {ElementType::E5M2, 0x3E, 1.5f},
                        {ElementType::E3M2, 0xCE, 1.5f},
                        {ElementType::E2M3, 0xCC, 1.5f},
                        {ElementType::E2M1, 0xC3 | (0x3 << 2), 1.5f},
                        {ElementType::E2M1, 0x2F & ~0x3C, 0.0f},
                        {ElementType::E2M3, 0x01, 0.125f},
                        {ElementType::E3M2, 0x01, 0.0625f},
                        {ElementType::E5M2, 0x01, 1.0f / 65536}};
  for (const Case &cs : cases) {
    Warp w;
    w.setAllScales(1, kUE8M0One);
    w.setA32(9, 21, cs.byte);
    w.setB32(21, 6, 0x38); // E4M3 1.0
    ASSERT_EQ(w.run(mxf8(cs.type, ElementType::E4M3)), "");
    EXPECT_EQ(w.dAt(9, 6), cs.value) << "byte " << cs.byte;
  }
}

TEST(PTXMmaBlockScale, ExactSummation) {
  // 2^24 + 0.5 - 2^24: an f32 sum in K order gives 0.
  Warp w;
  w.setAllScales(2, kUE8M0One);
  w.setScaleA(0, 0, 127 + 24);
  w.setScaleA(0, 1, 127 + 24);
  w.cAt(0, 0) = bitsOf(0.5f);
  w.setA64(0, 0, kE2M1One);
  w.setA64(0, 32, kE2M1MinusOne);
  w.setB64(0, 0, kE2M1One);
  w.setB64(32, 0, kE2M1One);
  ASSERT_EQ(w.run(kMxfp4), "");
  EXPECT_EQ(w.dAt(0, 0), 0.5f);

  // 1 + 2^-24 + 2^-24: one rounding gives 1 + 2^-23 (two give 1).
  Warp v;
  v.setAllScales(2, kUE8M0One);
  v.setScaleA(2, 0, 127 - 24);
  v.setScaleA(2, 1, 127 - 24);
  v.cAt(2, 1) = bitsOf(1.0f);
  v.setA64(2, 7, kE2M1One);
  v.setA64(2, 40, kE2M1One);
  v.setB64(7, 1, kE2M1One);
  v.setB64(40, 1, kE2M1One);
  ASSERT_EQ(v.run(kMxfp4), "");
  EXPECT_EQ(v.dAt(2, 1), 1.0f + 0x1p-23f);

  // A tie rounds to even: 1 + 2^-24 stays 1; 1 + 3·2^-24 goes to 1 + 2^-22.
  Warp t;
  t.setAllScales(2, kUE8M0One);
  t.setScaleA(0, 0, 127 - 25);
  t.cAt(0, 0) = bitsOf(1.0f);
  t.setA64(0, 0, kE2M1One);
  t.setB64(0, 0, 0x4); // 2.0
  t.cAt(0, 1) = bitsOf(1.0f);
  t.setB64(0, 1, 0x5); // 3.0
  ASSERT_EQ(t.run(kMxfp4), "");
  EXPECT_EQ(t.dAt(0, 0), 1.0f);            // 1 + 2^-24: tie, even
  EXPECT_EQ(t.dAt(0, 1), 1.0f + 0x1p-23f); // 1 + 1.5·2^-24: above the tie
  // Subnormal results round on the 2^-149 grid: 2^-150 ties to 0, 1.5·2^-150
  // and 2.25·2^-150 go to 2^-149.
  Warp s;
  s.setAllScales(2, kUE8M0One);
  s.setScaleA(0, 0, 127 - 75);
  s.setScaleB(0, 0, 127 - 75);
  s.setScaleB(1, 0, 127 - 75);
  s.setScaleB(2, 0, 127 - 75);
  s.setA64(0, 0, 0x3); // 1.5
  s.setB64(0, 0, 0x3); // 1.5: 2.25·2^-150
  s.setB64(0, 1, 0x2); // 1.0: 1.5·2^-150
  s.setScaleA(1, 0, 127 - 75);
  s.setA64(1, 0, 0x2); // D[1][1] = 1.0 · 1.0 · 2^-150
  ASSERT_EQ(s.run(kMxfp4), "");
  EXPECT_EQ(s.dBitsAt(0, 0), 0x00000001u);
  EXPECT_EQ(s.dBitsAt(0, 1), 0x00000001u);
  EXPECT_EQ(s.dBitsAt(1, 1), 0x00000000u);
  EXPECT_EQ(s.dBitsAt(1, 0), 0x00000001u); // 1.5 · 2^-150
}

TEST(PTXMmaBlockScale, SpecialValues) {
  {
    // A NaN scale (UE8M0 0xFF) makes its row NaN, nothing else.
    Warp w;
    w.setAllScales(2, kUE8M0One);
    w.setScaleA(5, 1, 0xFF);
    ASSERT_EQ(w.run(kMxfp4), "");
    for (unsigned i = 0; i < 16; ++i)
      for (unsigned n = 0; n < 8; ++n)
        EXPECT_EQ(std::isnan(w.dAt(i, n)), i == 5);
  }
  {
    // UE4M3 0x7F is NaN; bit 7 is padding (0xB8 reads as 0x38 = 1.0).
    Warp w;
    w.setAllScales(4, kUE4M3One);
    w.setScaleB(2, 3, 0x7F);
    w.setScaleA(1, 0, 0xB8);
    w.setA64(1, 0, kE2M1One);
    w.setB64(0, 0, kE2M1One);
    ASSERT_EQ(w.run(kNvfp4), "");
    EXPECT_TRUE(std::isnan(w.dAt(0, 2)));
    EXPECT_EQ(w.dAt(1, 0), 1.0f);
  }
  {
    // E5M2 Inf times 0 is NaN, times 1 is Inf; Inf + -Inf is NaN; E4M3 NaN.
    Warp w;
    w.setAllScales(1, kUE8M0One);
    w.setA32(0, 0, 0x7C); // +Inf
    w.setB32(0, 1, 0x3C); // 1.0
    w.setA32(1, 0, 0x7C);
    w.setB32(0, 2, 0x3C);
    w.setA32(1, 1, 0xFC); // -Inf
    w.setB32(1, 2, 0x3C);
    ASSERT_EQ(w.run(mxf8(ElementType::E5M2, ElementType::E5M2)), "");
    EXPECT_TRUE(std::isnan(w.dAt(0, 0))); // Inf · 0
    EXPECT_EQ(w.dAt(0, 1), INFINITY);
    EXPECT_TRUE(std::isnan(w.dAt(1, 2))); // Inf - Inf
    Warp e;
    e.setAllScales(1, kUE8M0One);
    e.setA32(4, 4, 0x7F); // E4M3 NaN
    ASSERT_EQ(e.run(mxf8(ElementType::E4M3, ElementType::E4M3)), "");
    EXPECT_TRUE(std::isnan(e.dAt(4, 0)));
    EXPECT_EQ(e.dAt(5, 0), 0.0f);
  }
  {
    // Inf and NaN accumulators; -0 survives only an all -0 sum.
    Warp w;
    w.setAllScales(2, kUE8M0One);
    w.cAt(0, 0) = 0xFF800000u;
    w.cAt(0, 1) = 0x7FC00000u;
    w.cAt(0, 2) = 0x80000000u; // -0 + (+0 products) ...
    w.cAt(0, 3) = 0x80000000u;
    w.setA64(0, 0, 0x8);      // -0 in A[0][0]
    w.setB64(0, 3, kE2M1One); // -0 · 1 = -0 for column 3
    w.cAt(1, 0) = 0x00000000u;
    ASSERT_EQ(w.run(kMxfp4), "");
    EXPECT_EQ(w.dBitsAt(0, 0), 0xFF800000u);
    EXPECT_TRUE(std::isnan(w.dAt(0, 1)));
    EXPECT_EQ(w.dBitsAt(0, 2), 0x00000000u); // -0 + +0 = +0
    EXPECT_EQ(w.dBitsAt(0, 3), 0x00000000u); // other k give +0 products
    EXPECT_EQ(w.dBitsAt(1, 0), 0x00000000u);
    // All products -0 and C = -0: -0.
    Warp z;
    z.setAllScales(2, kUE8M0One);
    for (unsigned k = 0; k < 64; ++k)
      z.setA64(0, k, 0x8);
    z.cAt(0, 4) = 0x80000000u;
    ASSERT_EQ(z.run(kMxfp4), "");
    EXPECT_EQ(z.dBitsAt(0, 4), 0x80000000u);
  }
  {
    // Overflow to Inf after the exact sum.
    Warp w;
    w.setAllScales(2, 0xFE);
    w.setA64(0, 0, 0x7); // 6
    w.setB64(0, 0, 0x7);
    ASSERT_EQ(w.run(kMxfp4), "");
    EXPECT_EQ(w.dAt(0, 0), INFINITY);
  }
}

TEST(PTXMmaBlockScale, RejectsInvalidOperands) {
  Warp w;
  EXPECT_NE(w.run({BlockScaleKind::MXF4, ScaleVec::X4, ScaleFormat::UE4M3}),
            "");
  EXPECT_NE(w.run({BlockScaleKind::MXF4, ScaleVec::X2, ScaleFormat::UE4M3}),
            "");
  EXPECT_NE(w.run({BlockScaleKind::MXF4NVF4, ScaleVec::X2, ScaleFormat::UE4M3}),
            "");
  EXPECT_NE(w.run({BlockScaleKind::MXF4NVF4, ScaleVec::X1, ScaleFormat::UE8M0}),
            "");
  EXPECT_NE(w.run({BlockScaleKind::MXF8F6F4, ScaleVec::X2, ScaleFormat::UE8M0,
                   ElementType::E4M3, ElementType::E4M3}),
            "");
  EXPECT_NE(w.run({BlockScaleKind::MXF4, ScaleVec::X2, ScaleFormat::UE8M0,
                   ElementType::E4M3, ElementType::E2M1}),
            "");
  EXPECT_NE(w.run(kMxfp4, 1, 0, 0, 0), "");
  EXPECT_NE(w.run(kMxfp4, 0, 0, 3, 0), "");
  EXPECT_NE(w.run(kNvfp4, 2, 0, 0, 0), "");
  EXPECT_NE(w.run(kNvfp4, 0, 2, 0, 0), "");
  EXPECT_NE(w.run(kNvfp4, 0, 0, 0, 4), "");
  EXPECT_NE(w.run(mxf8(ElementType::E4M3, ElementType::E4M3), 4, 0, 0, 0), "");
  EXPECT_EQ(w.run(mxf8(ElementType::E4M3, ElementType::E4M3), 3, 1, 3, 3), "");
  EXPECT_EQ(w.run(kNvfp4, 0, 1, 0, 3), "");
  w.a.pop_back();
  EXPECT_NE(w.run(kMxfp4), "");
}

//===----------------------------------------------------------------------===//
// Conversions
//===----------------------------------------------------------------------===//

TEST(PTXCvt, E2M1x2) {
  // Ties to even on {0, .5, 1, 1.5, 2, 3, 4, 6}.
  const std::pair<float, uint8_t> cases[] = {
      {0.0f, 0x0},
      {0.25f, 0x0},
      {0.2500001f, 0x1},
      {0.5f, 0x1},
      {0.75f, 0x2},
      {1.0f, 0x2},
      {1.25f, 0x2},
      {1.5f, 0x3},
      {1.75f, 0x4},
      {2.5f, 0x4},
      {3.0f, 0x5},
      {3.5f, 0x6},
      {5.0f, 0x6},
      {5.0001f, 0x7},
      {6.0f, 0x7},
      {7.0f, 0x7},
      {1e30f, 0x7},
      {INFINITY, 0x7},
      {-INFINITY, 0xF},
      {-6.5f, 0xF},
      {-0.0f, 0x8},
      {-0.1f, 0x8},
      {-1.5f, 0xB},
      {1e-40f, 0x0},
      {std::numeric_limits<float>::quiet_NaN(), 0x7},
      {-std::numeric_limits<float>::quiet_NaN(), 0x7}};
  for (auto [x, code] : cases)
    EXPECT_EQ(cvtRnSatfiniteE2M1(bitsOf(x)), code) << x;
  // `hi` (PTX operand a) goes to bits 7..4.
  EXPECT_EQ(cvtRnSatfiniteE2M1x2(bitsOf(1.0f), bitsOf(0.5f)), 0x21);
  EXPECT_EQ(cvtRnSatfiniteE2M1x2(bitsOf(-6.0f), bitsOf(3.0f)), 0xF5);
}

TEST(PTXCvt, RsE2M1x4Rounding) {
  // |x| between neighbours n·q and (n+1)·q rounds up iff
  // floor(F · 256) + r >= 256 (F the fraction): 1.25 (F = 1/2) up from
  // r = 128; 0.3 (q = 0.5, F = 0.6, floor(153.6) = 153) up from r = 103.
  const std::tuple<float, uint8_t, uint8_t> cases[] = {
      {1.25f, 127, 0x2},
      {1.25f, 128, 0x3},
      {-1.25f, 128, 0xB},
      {0.3f, 102, 0x0},
      {0.3f, 103, 0x1},
      {5.0f, 127, 0x6},
      {5.0f, 128, 0x7},
      {1.75f, 192, 0x4},
      {3.5f, 255, 0x6},
      {3.5f, 127, 0x5},
      {2.0f, 255, 0x4},
      {6.0f, 0, 0x7},
      {7.9f, 0, 0x7},
      {1e30f, 0, 0x7},
      {INFINITY, 0, 0x7},
      {-INFINITY, 0, 0xF},
      {-0.0f, 255, 0x8},
      {1e-40f, 255, 0x0},
      // A fraction below 2^-8 never rounds up: the low dropped bits are
      // truncated.
      {0.5f + 0x1p-10f, 255, 0x1},
      {0.001f, 255, 0x0},
      {std::numeric_limits<float>::quiet_NaN(), 0, 0x7},
      {-std::numeric_limits<float>::quiet_NaN(), 255, 0x7}};
  for (auto [x, random, code] : cases)
    EXPECT_EQ(cvtRsSatfiniteE2M1(bitsOf(x), random), code)
        << x << " with random bits " << int(random);
}

TEST(PTXCvt, RsE2M1x4Placement) {
  // d[15:12] = a, d[11:8] = b, d[7:4] = e, d[3:0] = f; a rounds with rbits
  // 31..24, e with 23..16, b with 15..8, f with 7..0. 1.25 rounds to 1.5
  // (code 3) iff its byte is >= 128, else to 1.0 (code 2).
  const uint32_t x = bitsOf(1.25f);
  EXPECT_EQ(cvtRsSatfiniteE2M1x4(x, x, x, x, 0x80000000u), 0x3222);
  EXPECT_EQ(cvtRsSatfiniteE2M1x4(x, x, x, x, 0x00008000u), 0x2322);
  EXPECT_EQ(cvtRsSatfiniteE2M1x4(x, x, x, x, 0x00800000u), 0x2232);
  EXPECT_EQ(cvtRsSatfiniteE2M1x4(x, x, x, x, 0x00000080u), 0x2223);
  EXPECT_EQ(cvtRsSatfiniteE2M1x4(bitsOf(-6.0f), bitsOf(0.5f), bitsOf(3.0f),
                                 bitsOf(0.0f), 0xFFFFFFFFu),
            0xF150);
}

// sr=hardware feeds each element the top byte of its [SR1] word. The
// decisions then differ exactly where CvtRsE2M1x4.cpp says: with
// A = floor(F · 2^22) and W = w >> 10 split into a top byte and 14 low bits,
// where the top bytes sum to 255 and the low parts carry ([SR1] rounds up,
// the instruction down). Everywhere else the codes are equal.
TEST(PTXCvt, RsE2M1x4AgainstSR1) {
  std::mt19937 rng(3);
  std::uniform_int_distribution<uint32_t> word;
  std::uniform_int_distribution<int> binade(-12, 2);
  std::uniform_real_distribution<float> mantissa(1.0f, 2.0f);
  int differing = 0, samples = 0;
  for (int i = 0; i < 200000; ++i) {
    const float v =
        std::ldexp(mantissa(rng), binade(rng)) * (word(rng) & 1 ? -1.0f : 1.0f);
    const uint32_t w = word(rng);
    const uint8_t hardware = cvtRsSatfiniteE2M1(bitsOf(v), w >> 24);
    const uint8_t library = fp4train::numerics::encodeE2M1Stochastic(v, w);
    const bool predicted = fp4train::emulation_test::cvtRsDiffersFromSR1(v, w);
    ++samples;
    if (!predicted) {
      ASSERT_EQ(hardware, library) << v << " word " << w;
      continue;
    }
    ++differing;
    // [SR1] one step up in magnitude, same sign.
    ASSERT_EQ(hardware + 1, library) << v << " word " << w;
  }
  // The window is below 2^-8 of the draws, and not empty.
  EXPECT_GT(differing, 0);
  EXPECT_LT(differing, samples / 256);
}

TEST(PTXCvt, E4M3x2) {
  const std::pair<float, uint8_t> cases[] = {
      {1.0f, 0x38},
      {1.0625f, 0x38},
      {1.1875f, 0x3A},
      {1.125f, 0x39},
      {448.0f, 0x7E},
      {464.0f, 0x7E},
      {500.0f, 0x7E},
      {1e30f, 0x7E},
      {INFINITY, 0x7E},
      {-INFINITY, 0xFE},
      {0x1p-6f, 0x08},
      {0x1p-9f, 0x01},
      {0x1p-10f, 0x00},
      {0x1.8p-10f, 0x01},
      {0x1.cp-7f, 0x07},
      {0x1.dp-7f, 0x07},
      {0x1.ep-7f, 0x08},
      {-0.0f, 0x80},
      {-0x1p-11f, 0x80},
      {-2.0f, 0xC0},
      {240.0f, 0x77},
      {std::numeric_limits<float>::quiet_NaN(), 0x7F},
      {-std::numeric_limits<float>::quiet_NaN(), 0xFF}};
  for (auto [x, code] : cases)
    EXPECT_EQ(cvtRnSatfiniteE4M3(bitsOf(x)), code) << x;
  EXPECT_EQ(cvtRnSatfiniteE4M3x2(bitsOf(1.0f), bitsOf(2.0f)), 0x3840);
}

TEST(PTXCvt, F16x2E4M3x2) {
  // Every finite code against the library's E4M3 value converted to f16
  // (exact), then the pair placement and the hand-worked edges.
  for (unsigned code = 0; code < 256; ++code) {
    const uint16_t bits = cvtRnF16E4M3(static_cast<uint8_t>(code));
    if ((code & 0x7F) == 0x7F) {
      EXPECT_EQ(bits, 0x7FFF) << code;
      continue;
    }
    const auto half = static_cast<_Float16>(
        fp4train::numerics::decodeE4M3FN(static_cast<uint8_t>(code)));
    uint16_t expected;
    std::memcpy(&expected, &half, 2);
    EXPECT_EQ(bits, expected) << code;
  }
  EXPECT_EQ(cvtRnF16E4M3(0x01), 0x1800); // 2^-9
  EXPECT_EQ(cvtRnF16E4M3(0x03), 0x1E00); // 3 * 2^-9
  EXPECT_EQ(cvtRnF16E4M3(0x7E), 0x5F00); // 448
  EXPECT_EQ(cvtRnF16E4M3(0x80), 0x8000); // -0
  EXPECT_EQ(cvtRnF16x2E4M3x2(0x3801), 0x3C001800u);
}

TEST(PTXCvt, UE8M0x2) {
  const std::pair<uint32_t, uint8_t> cases[] = {
      {bitsOf(1.0f), 0x7F},
      {bitsOf(1.5f), 0x80},
      {bitsOf(2.0f), 0x80},
      {bitsOf(2.0000002f), 0x81},
      {bitsOf(0.75f), 0x7F},
      {bitsOf(-4.0f), 0x81},
      {0x00400000u, 0x00},
      {0x00400001u, 0x01}, // 2^-127, just above
      {0x00000001u, 0x00},
      {0x00000000u, 0x00},
      {0x80000000u, 0x00},
      {bitsOf(0x1p127f), 0xFE},
      {bitsOf(0x1.000002p127f), 0xFE},
      {0x7F7FFFFFu, 0xFE},
      {0x7F800000u, 0xFE},
      {0xFF800000u, 0xFE},
      {0x7FC00000u, 0xFF},
      {0xFFC00001u, 0xFF}};
  for (auto [x, code] : cases)
    EXPECT_EQ(cvtRpSatfiniteUE8M0(x), code) << std::hex << x;
  EXPECT_EQ(cvtRpSatfiniteUE8M0x2(bitsOf(1.0f), bitsOf(2.0f)), 0x7F80);
}

//===----------------------------------------------------------------------===//
// mma.sync ... .f32.{e4m3,e5m2}.{e4m3,e5m2}.f32 (sm_89 / sm_90a)
//===----------------------------------------------------------------------===//

constexpr uint32_t kE4M3One = 0x38, kE4M3Two = 0x40, kE5M2One = 0x3C;

// m16n8k16 (8-bit): A[row][k] is byte k % 4 of register row / 8 of lane
// 4 (row % 8) + k / 4; B[k][n] byte k % 4 of the register of lane 4n + k / 4.
void setA16(Warp &w, unsigned row, unsigned k, uint32_t byte) {
  Warp::put(w.a[4 * (row % 8) + k / 4][row / 8], 8 * (k % 4), 8, byte);
}
void setB16(Warp &w, unsigned k, unsigned n, uint32_t byte) {
  Warp::put(w.b[4 * n + k / 4][0], 8 * (k % 4), 8, byte);
}

std::string runFP8(Warp &w, unsigned k, ElementType a = ElementType::E4M3,
                   ElementType b = ElementType::E4M3) {
  return mmaSyncFP8({k, a, b}, w.a, w.b, w.c, w.d);
}

TEST(PTXMmaSyncFP8, EveryAPositionReachesItsRow) {
  for (unsigned k : {32u, 16u})
    for (unsigned row = 0; row < 16; ++row)
      for (unsigned kk = 0; kk < k; ++kk) {
        Warp w;
        if (k == 32)
          w.setA32(row, kk, kE4M3Two);
        else
          setA16(w, row, kk, kE4M3Two);
        for (unsigned n = 0; n < 8; ++n) {
          if (k == 32)
            w.setB32(kk, n, kE4M3One);
          else
            setB16(w, kk, n, kE4M3One);
        }
        ASSERT_EQ(runFP8(w, k), "");
        for (unsigned i = 0; i < 16; ++i)
          for (unsigned n = 0; n < 8; ++n)
            ASSERT_EQ(w.dAt(i, n), i == row ? 2.0f : 0.0f)
                << "k" << k << " A[" << row << "][" << kk << "]";
      }
}

TEST(PTXMmaSyncFP8, EveryBPositionReachesItsColumn) {
  for (unsigned k : {32u, 16u})
    for (unsigned kk = 0; kk < k; ++kk)
      for (unsigned col = 0; col < 8; ++col) {
        Warp w;
        for (unsigned m = 0; m < 16; ++m) {
          if (k == 32)
            w.setA32(m, kk, kE4M3One);
          else
            setA16(w, m, kk, kE4M3One);
        }
        // E5M2 -1.
        if (k == 32)
          w.setB32(kk, col, 0x80 | kE5M2One);
        else
          setB16(w, kk, col, 0x80 | kE5M2One);
        ASSERT_EQ(runFP8(w, k, ElementType::E4M3, ElementType::E5M2), "");
        for (unsigned i = 0; i < 16; ++i)
          for (unsigned n = 0; n < 8; ++n)
            ASSERT_EQ(w.dAt(i, n), n == col ? -1.0f : 0.0f)
                << "k" << k << " B[" << kk << "][" << col << "]";
      }
}

// C is added, every D slot keeps its own C, subnormal E4M3 operands count,
// and the sum is rounded once: 64 + 2^-18 + 2^-18 is 64 + 2^-17 (exact),
// where rounding after each addition would give 64 (ties to even).
TEST(PTXMmaSyncFP8, AddsCAndRoundsOnce) {
  Warp w;
  for (unsigned m = 0; m < 16; ++m)
    for (unsigned n = 0; n < 8; ++n)
      w.cAt(m, n) = bitsOf(float(m * 8 + n));
  w.cAt(3, 5) = bitsOf(64.0f);
  w.setA32(3, 0, 0x01); // 2^-9
  w.setA32(3, 31, 0x01);
  w.setB32(0, 5, 0x01);
  w.setB32(31, 5, 0x01);
  ASSERT_EQ(runFP8(w, 32), "");
  for (unsigned m = 0; m < 16; ++m)
    for (unsigned n = 0; n < 8; ++n)
      if (m != 3 || n != 5)
        ASSERT_EQ(w.dAt(m, n), float(m * 8 + n));
  EXPECT_EQ(w.dAt(3, 5), 64.0f + 0x1p-17f);
}

TEST(PTXMmaSyncFP8, Specials) {
  // E4M3 NaN (0x7F), E5M2 Inf (0x7C) times 0 -> NaN; Inf alone -> Inf.
  Warp w;
  w.setA32(0, 0, 0x7F);
  w.setB32(0, 0, kE4M3One);
  w.setA32(1, 0, kE4M3One);
  w.setB32(0, 1, 0x7C);
  ASSERT_EQ(runFP8(w, 32, ElementType::E4M3, ElementType::E5M2), "");
  EXPECT_TRUE(std::isnan(w.dAt(0, 0)));
  EXPECT_EQ(w.dAt(1, 1), INFINITY);
  EXPECT_TRUE(std::isnan(w.dAt(0, 1))); // A[0][0] NaN times Inf
  EXPECT_TRUE(std::isnan(w.dAt(2, 1))); // 0 · Inf
}

TEST(PTXMmaSyncFP8, RejectsOtherTypesAndShapes) {
  Warp w;
  EXPECT_NE(runFP8(w, 32, ElementType::E2M1), "");
  EXPECT_NE(runFP8(w, 64), "");
}

//===----------------------------------------------------------------------===//
// prmt.b32
//===----------------------------------------------------------------------===//

TEST(PTXPrmt, DefaultMode) {
  const uint32_t a = 0x33221100, b = 0xF7665544;
  EXPECT_EQ(prmt(a, b, 0x3210), a);
  EXPECT_EQ(prmt(a, b, 0x7654), b);
  EXPECT_EQ(prmt(a, b, 0x0123), 0x00112233u);
  EXPECT_EQ(prmt(a, b, 0x4747), 0x44F744F7u);
  // Only c[15:0] counts.
  EXPECT_EQ(prmt(a, b, 0xFFFF3210), a);
  // Sign mode (nibbles F, B): byte 7 (0xF7) has bit 7 set, byte 3 (0x33)
  // not.
  EXPECT_EQ(prmt(a, b, 0xF7BF), 0xFFF700FFu);
  EXPECT_EQ(prmt(0x80, 0, 0x0008), 0x808080FFu);
}

} // namespace
