//===- CDNA4ModelTest.cpp - The instruction models on hand-worked cases ---===//
//
// Each expectation is worked out by hand from the documented semantics
// quoted in the model files (lib/Emulation/CDNA4/), independently of the
// kernels and of the numerics library the kernels are compared with.
//
//===----------------------------------------------------------------------===//

#include "fp4train/Emulation/CDNA4.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <vector>

using namespace fp4train::emulation::cdna4;

namespace {

uint32_t bits(float f) {
  uint32_t b;
  std::memcpy(&b, &f, 4);
  return b;
}

float value(uint32_t b) {
  float f;
  std::memcpy(&f, &b, 4);
  return f;
}

/// The f32 scale operand whose exponent field is `code`.
uint32_t scale(unsigned code) { return code << 23; }

TEST(CvtScalePkTest, Fp4RoundsToNearestEvenAndSaturates) {
  auto fp4 = [](float x, unsigned code = 127) {
    return cvtScaleToNarrow(NarrowFormat::FP4, bits(x), scale(code));
  };
  EXPECT_EQ(fp4(1.5f), 0x3);
  EXPECT_EQ(fp4(2.5f), 0x4);  // tie 2 | 3 -> 2 (even mantissa)
  EXPECT_EQ(fp4(0.25f), 0x0); // tie 0 | 0.5 -> 0
  EXPECT_EQ(fp4(0.75f), 0x2); // tie 0.5 | 1 -> 1
  EXPECT_EQ(fp4(-5.0f), 0xE); // tie 4 | 6 -> 4, negative
  EXPECT_EQ(fp4(7.0f), 0x7);  // tie 6 | (8) -> saturates to 6
  EXPECT_EQ(fp4(1e30f), 0x7);
  EXPECT_EQ(fp4(-0.0f), 0x8);
  EXPECT_EQ(fp4(NAN), 0x7);
  EXPECT_EQ(fp4(INFINITY), 0x7);
  EXPECT_EQ(fp4(12.0f, 130), 0x3);                // 12 / 2^3 = 1.5
  EXPECT_EQ(fp4(std::ldexp(1.5f, -127), 0), 0x3); // code 0 is 2^-127
  EXPECT_EQ(fp4(std::ldexp(1.0f, -140), 0), 0x0); // 2^-13 -> 0
  EXPECT_EQ(fp4(1.0f, 255), 0x7);                 // NaN scale
}

TEST(CvtScalePkTest, Fp8AndBf8) {
  auto fp8 = [](float x) {
    return cvtScaleToNarrow(NarrowFormat::FP8, bits(x), scale(127));
  };
  auto bf8 = [](float x) {
    return cvtScaleToNarrow(NarrowFormat::BF8, bits(x), scale(127));
  };
  EXPECT_EQ(fp8(448.0f), 0x7E);
  EXPECT_EQ(fp8(464.0f), 0x7E); // tie 448 | 480 -> 448 (even)
  EXPECT_EQ(fp8(480.0f), 0x7F); // past 448: the host model's 0x7F
  EXPECT_EQ(fp8(std::ldexp(1.0f, -9)), 0x01);
  EXPECT_EQ(fp8(std::ldexp(1.0f, -10)), 0x00);
  EXPECT_EQ(fp8(-std::ldexp(3.0f, -10)), 0x82); // 1.5 * 2^-9 -> 2 * 2^-9
  EXPECT_EQ(fp8(NAN), 0x7F);
  EXPECT_EQ(bf8(57344.0f), 0x7B);
  EXPECT_EQ(bf8(65536.0f), 0x7B);
  EXPECT_EQ(bf8(-INFINITY), 0xFB);
  EXPECT_EQ(bf8(NAN), 0x7E);
  EXPECT_EQ(bf8(std::ldexp(1.0f, -16)), 0x01);
}

TEST(CvtScalePkTest, PackingIntoTheTiedRegister) {
  EXPECT_EQ(cvtScalePkFp4(0xAABBCCDD, bits(1.0f), bits(-1.0f), scale(127), 2),
            0xAAA2CCDDu);
  EXPECT_EQ(cvtScalePkFp8(NarrowFormat::FP8, 0xAABBCCDD, bits(1.0f),
                          bits(-2.0f), scale(127), 1),
            0xC038CCDDu);
}

TEST(CvtScaleSrPkFp4Test, AddsTheTop22BitsOfTheSeed) {
  auto sr = [](float x, uint32_t seed) {
    return cvtScaleSrToFp4(bits(x), seed, scale(127));
  };
  // 1.25 lies half way between 1 and 1.5: fraction 2^21 of 2^22.
  EXPECT_EQ(sr(1.25f, 0), 0x2);
  EXPECT_EQ(sr(1.25f, 0x7FFFFFFF), 0x2); // (seed >> 10) = 2^21 - 1: no carry
  EXPECT_EQ(sr(1.25f, 0x80000000), 0x3); // 2^21: carry
  EXPECT_EQ(sr(-1.25f, 0xFFFFFFFF), 0xB);
  // Below 1 the significand is shifted onto the 0.5 grid, truncating.
  EXPECT_EQ(sr(0.3f, 0), 0x0);
  EXPECT_EQ(sr(0.3f, 0xFFFFFFFF), 0x1);
  EXPECT_EQ(sr(0.75f, 0xFFFFFFFF), 0x2); // carry into the normal binade
  // Exact values never move; the top binade saturates.
  EXPECT_EQ(sr(4.0f, 0xFFFFFFFF), 0x6);
  EXPECT_EQ(sr(5.0f, 0xFFFFFFFF), 0x7);
  EXPECT_EQ(sr(6.5f, 0xFFFFFFFF), 0x7);
  EXPECT_EQ(sr(9.0f, 0), 0x7);
  EXPECT_EQ(sr(-0.0f, 0xFFFFFFFF), 0x8);
  // Both elements of the pair use the same seed.
  EXPECT_EQ(
      cvtScaleSrPkFp4(0, bits(1.25f), bits(-1.25f), 0x80000000, scale(127), 0),
      0xB3u);
}

/// A wave's operands for one scaled MFMA, all zero, scales 1.0.
struct Wave {
  std::vector<MatrixRegs> a, b;
  std::vector<uint32_t> scaleA, scaleB, c, d;
  explicit Wave(ScaledMfmaShape shape)
      : a(kWaveSize, MatrixRegs{}), b(kWaveSize, MatrixRegs{}),
        scaleA(kWaveSize, 127), scaleB(kWaveSize, 127),
        c(kWaveSize * getAccumulatorsPerLane(shape)), d(c.size()) {}
};

/// Sets FP4 element `index` of a lane's registers to `code`.
void setFp4(MatrixRegs &regs, unsigned index, uint32_t code) {
  regs[index / 8] |= code << (4 * (index % 8));
}

TEST(ScaledMfmaTest, OneProductLandsInItsOutputSlot32x32) {
  Wave w(ScaledMfmaShape::M32N32K64);
  // A[3][40] = 1.0 (E2M1 0x2): row 3, K group 1 -> lane 35, element 8.
  setFp4(w.a[35], 8, 0x2);
  // B[40][5] = 3.0 (0x5): column 5, K group 1 -> lane 37, element 8.
  setFp4(w.b[37], 8, 0x5);
  // The A scale of lane 35 in byte 1 (opsel 1): 2^1; other bytes garbage.
  w.scaleA[35] = 0xEE008011;
  for (unsigned l = 0; l < kWaveSize; ++l)
    if (l != 35)
      w.scaleA[l] = 0x00007F00;
  ASSERT_EQ(scaledMfma(ScaledMfmaShape::M32N32K64, 4, 4, 1, 0, w.a, w.b,
                       w.scaleA, w.scaleB, w.c, w.d.data()),
            "");
  // D[3][5]: lane 5 + 32 * ((3 / 4) % 2) = 5, value 4 * (3 / 8) + 3 = 3.
  for (unsigned i = 0; i < w.d.size(); ++i)
    EXPECT_EQ(value(w.d[i]), i == 5 * 16 + 3 ? 6.0f : 0.0f) << "slot " << i;
}

TEST(ScaledMfmaTest, OneProductLandsInItsOutputSlot16x16) {
  Wave w(ScaledMfmaShape::M16N16K128);
  // A[9][100]: row 9, K group 3 -> lane 57, element 4; B[100][14] -> lane 62.
  setFp4(w.a[57], 4, 0x3); // 1.5
  setFp4(w.b[62], 4, 0xC); // -2
  ASSERT_EQ(scaledMfma(ScaledMfmaShape::M16N16K128, 4, 4, 0, 0, w.a, w.b,
                       w.scaleA, w.scaleB, w.c, w.d.data()),
            "");
  // D[9][14]: lane 14 + 16 * (9 / 4) = 46, value 9 % 4 = 1.
  for (unsigned i = 0; i < w.d.size(); ++i)
    EXPECT_EQ(value(w.d[i]), i == 46 * 4 + 1 ? -3.0f : 0.0f) << "slot " << i;
}

TEST(ScaledMfmaTest, SumsExactlyAndRoundsOnce) {
  Wave w(ScaledMfmaShape::M16N16K128);
  // D[0][0] over K groups 0, 1, 2 (lanes 0, 16, 32): 2^24 + 0.5 - 2^24.
  // Summed in f32 in K order this is 0 (2^24 + 0.5 rounds to 2^24); the
  // instruction sums exactly and rounds once: 0.5.
  setFp4(w.a[0], 0, 0x2);
  setFp4(w.b[0], 0, 0x2);
  w.scaleA[0] = 127 + 24;
  setFp4(w.a[16], 0, 0x2);
  setFp4(w.b[16], 0, 0x1);
  setFp4(w.a[32], 0, 0xA);
  setFp4(w.b[32], 0, 0x2);
  w.scaleA[32] = 127 + 24;
  ASSERT_EQ(scaledMfma(ScaledMfmaShape::M16N16K128, 4, 4, 0, 0, w.a, w.b,
                       w.scaleA, w.scaleB, w.c, w.d.data()),
            "");
  EXPECT_EQ(value(w.d[0]), 0.5f);
}

TEST(ScaledMfmaTest, Fp8OperandsAndSpecials) {
  Wave w(ScaledMfmaShape::M16N16K128);
  // FP8 (cbsz 0): element 31 of lane 0 is byte 31 -> register 7, bits 24..31.
  w.a[0][7] = 0x38u << 24; // 1.0
  w.b[0][7] = 0xC0u << 24; // -2.0
  ASSERT_EQ(scaledMfma(ScaledMfmaShape::M16N16K128, 0, 0, 0, 0, w.a, w.b,
                       w.scaleA, w.scaleB, w.c, w.d.data()),
            "");
  EXPECT_EQ(value(w.d[0]), -2.0f);
  // A NaN scale poisons its row's outputs only.
  w.scaleA[0] = 0xFF;
  ASSERT_EQ(scaledMfma(ScaledMfmaShape::M16N16K128, 0, 0, 0, 0, w.a, w.b,
                       w.scaleA, w.scaleB, w.c, w.d.data()),
            "");
  EXPECT_TRUE(std::isnan(value(w.d[0])));
  EXPECT_EQ(value(w.d[1]), 0.0f); // D[1][0]
  EXPECT_NE(scaledMfma(ScaledMfmaShape::M16N16K128, 5, 0, 0, 0, w.a, w.b,
                       w.scaleA, w.scaleB, w.c, w.d.data()),
            "");
}

} // namespace
