//===- PhiloxTest.cpp - Philox4x32-10 and [SR1] word layout tests ---------===//

#include "fp4train/Numerics/Philox.h"

#include "gtest/gtest.h"

#include <vector>

using namespace fp4train::numerics;

namespace {

// Known-answer vectors of Random123 (kat_vectors, philox4x32 with 10 rounds).
TEST(Philox, KnownAnswers) {
  EXPECT_EQ(philox4x32_10({0, 0, 0, 0}, {0, 0}),
            (std::array<uint32_t, 4>{0x6627e8d5, 0xe169c58d, 0xbc57ac4c,
                                     0x9b00dbd8}));
  EXPECT_EQ(philox4x32_10({0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff},
                          {0xffffffff, 0xffffffff}),
            (std::array<uint32_t, 4>{0x408f276d, 0x41c83b0e, 0xa20bc7c6,
                                     0x6d5451fd}));
  EXPECT_EQ(philox4x32_10({0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344},
                          {0xa4093822, 0x299f31d0}),
            (std::array<uint32_t, 4>{0xd16cfe09, 0x94fdcceb, 0x5001e420,
                                     0x24126ea1}));
}

TEST(Philox, SixtyFourBitWrapperSplitsWords) {
  uint64_t counter = 0x0123456789abcdefull, key = 0xfedcba9876543210ull;
  EXPECT_EQ(
      philox4x32_10(counter, key),
      philox4x32_10({0x89abcdef, 0x01234567, 0, 0}, {0x76543210, 0xfedcba98}));
}

TEST(Philox, StochasticRoundingWordLayout) {
  uint64_t seed = 0x1234567890ull;
  for (uint64_t index : {0ull, 1ull, 3ull, 4ull, 1027ull, (1ull << 40) + 2}) {
    EXPECT_EQ(stochasticRoundingWord(seed, index),
              philox4x32_10(index >> 2, seed)[index & 3]);
  }
  // The bulk fill agrees with the element function at any alignment.
  for (uint64_t first : {0ull, 1ull, 2ull, 3ull, 4ull, 13ull}) {
    uint32_t words[11];
    fillStochasticRoundingWords(seed, first, 11, words);
    for (uint64_t j = 0; j < 11; ++j)
      EXPECT_EQ(words[j], stochasticRoundingWord(seed, first + j));
  }
}

// The bulk generator runs Philox on many counters at once in its own code;
// it must agree word for word with Random123 at every alignment and length,
// for keys with both words busy, and across carries of the 64-bit counter
// from its low word into its high word.
TEST(Philox, BulkFillMatchesReference) {
  const uint64_t seeds[] = {
      0, 1, 0xffffffffull, 0x100000000ull, 0x0123456789abcdefull, ~0ull};
  const uint64_t counters[] = {0,
                               1,
                               0xfffffff0ull,  // low word carries
                               0x1fffffffaull, // second carry
                               0x00000001ffffffffull,
                               0x7ffffffffffffff0ull,
                               0x3ffffffffffffff0ull};
  std::vector<uint32_t> words(300);
  for (uint64_t seed : seeds)
    for (uint64_t counter : counters)
      for (uint64_t offset : {0ull, 1ull, 2ull, 3ull})
        for (int64_t count : {0, 1, 7, 63, 64, 65, 130, 300}) {
          uint64_t first = counter * 4 + offset;
          // Stay below 2^64 elements, where indices would wrap.
          if (first + uint64_t(count) < first)
            continue;
          fillStochasticRoundingWords(seed, first, count, words.data());
          for (int64_t j = 0; j < count; ++j) {
            uint64_t index = first + uint64_t(j);
            ASSERT_EQ(words[j],
                      philox4x32_10(
                          {uint32_t(index >> 2), uint32_t(index >> 34), 0u, 0u},
                          {uint32_t(seed), uint32_t(seed >> 32)})[index & 3])
                << "seed " << seed << " index " << index;
          }
        }
}

} // namespace
