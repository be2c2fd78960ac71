//===- StorageTest.cpp - [PK1] stored element codes -----------------------===//

#include "fp4train/Numerics/Storage.h"

#include "gtest/gtest.h"

#include <random>

using namespace fp4train::numerics;

namespace {

TEST(Storage, E2M1IsTwoPerByteLowNibbleFirst) {
  // Two rows of four: element 2j in bits 3..0 of byte j, 2j + 1 in 7..4.
  std::vector<uint8_t> codes = {0x1, 0x2, 0x3, 0xF, 0x8, 0x0, 0x7, 0x9};
  std::vector<uint8_t> stored = packCodes(ElementType::E2M1, codes, {2, 4});
  EXPECT_EQ(stored, (std::vector<uint8_t>{0x21, 0xF3, 0x08, 0x97}));
  EXPECT_EQ(unpackCodes(ElementType::E2M1, stored, {2, 4}), codes);
  EXPECT_EQ(getStoredBytes(ElementType::E2M1, {2, 4}), 4);
}

TEST(Storage, OddRowsEndInAZeroNibble) {
  // Rows of three: each row starts on a byte, its last byte has a zero high
  // nibble, and unpacking ignores whatever that nibble holds.
  std::vector<uint8_t> codes = {0x1, 0x2, 0x3, 0x4, 0x5, 0x6};
  std::vector<uint8_t> stored = packCodes(ElementType::E2M1, codes, {2, 3});
  EXPECT_EQ(stored, (std::vector<uint8_t>{0x21, 0x03, 0x54, 0x06}));
  EXPECT_EQ(getStoredRowBytes(ElementType::E2M1, 3), 2);
  stored[1] |= 0xA0;
  stored[3] |= 0xB0;
  EXPECT_EQ(unpackCodes(ElementType::E2M1, stored, {2, 3}), codes);
}

TEST(Storage, HighBitsOfInputCodesAreIgnored) {
  std::vector<uint8_t> codes = {0xF1, 0xE2};
  EXPECT_EQ(packCodes(ElementType::E2M1, codes, {2}),
            std::vector<uint8_t>{0x21});
}

TEST(Storage, FP8IsOnePerByte) {
  std::vector<uint8_t> codes = {0x00, 0x7E, 0xFE, 0x80, 0x12};
  for (ElementType type : {ElementType::E4M3FN, ElementType::E5M2}) {
    EXPECT_FALSE(isPackedStorage(type));
    EXPECT_EQ(packCodes(type, codes, {5}), codes);
    EXPECT_EQ(unpackCodes(type, codes, {5}), codes);
    EXPECT_EQ(getStoredBytes(type, {5}), 5);
  }
}

TEST(Storage, RoundTripsEveryCode) {
  std::mt19937 rng(3);
  std::uniform_int_distribution<int> code(0, 15);
  for (int64_t rowLength : {1, 2, 7, 32, 33}) {
    std::vector<int64_t> shape = {3, 2, rowLength};
    std::vector<uint8_t> codes(size_t(6 * rowLength));
    for (uint8_t &c : codes)
      c = uint8_t(code(rng));
    std::vector<uint8_t> stored = packCodes(ElementType::E2M1, codes, shape);
    EXPECT_EQ(int64_t(stored.size()), 6 * ((rowLength + 1) / 2));
    EXPECT_EQ(unpackCodes(ElementType::E2M1, stored, shape), codes)
        << "row length " << rowLength;
  }
}

} // namespace
