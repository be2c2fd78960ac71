//===- Nvfp4Operands.h - NVFP4 operands of hand-written MMAs -*- C++ -*-======//
//
// The operands of the hand-written tcgen05 kernels' NVFP4 MMAs
// (Tcgen05KernelTest, ClusterKernelTest): random E2M1 codes and UE4M3
// scales, their 128-byte-swizzled and scale-atom shared-memory images, and
// the scalar reference, decoded on the test side (ReferenceValues.h).
//
//===----------------------------------------------------------------------===//

#ifndef FP4TRAIN_UNITTESTS_EMULATION_NVFP4OPERANDS_H
#define FP4TRAIN_UNITTESTS_EMULATION_NVFP4OPERANDS_H

#include "ReferenceValues.h"

#include <cstdint>
#include <random>
#include <vector>

namespace fp4train::emulation_test {

/// An M x N x K NVFP4 MMA's operands: E2M1 codes a[m][k], b[n][k] and
/// UE4M3 scales of 16-element blocks sa[m][j], sb[n][j] in [2^-2, 2^2], so
/// that the reference sum is exact in double.
struct Nvfp4Operands {
  unsigned m, n, k;
  std::vector<uint8_t> a, b, sa, sb;

  Nvfp4Operands(unsigned m, unsigned n, unsigned k, uint32_t seed)
      : m(m), n(n), k(k), a(m * k), b(n * k), sa(m * k / 16), sb(n * k / 16) {
    std::mt19937 rng(seed);
    for (uint8_t &x : a)
      x = rng() % 16;
    for (uint8_t &x : b)
      x = rng() % 16;
    for (uint8_t &s : sa)
      s = (5 + rng() % 5) << 3 | rng() % 8;
    for (uint8_t &s : sb)
      s = (5 + rng() % 5) << 3 | rng() % 8;
  }
  unsigned getBlocks() const { return k / 16; }

  float reference(unsigned row, unsigned col) const {
    const unsigned blocks = getBlocks();
    double sum = 0;
    for (unsigned i = 0; i < k; ++i)
      sum += ue4m3Value(sa[row * blocks + i / 16]) * e2m1Value(a[row * k + i]) *
             ue4m3Value(sb[col * blocks + i / 16]) * e2m1Value(b[col * k + i]);
    return static_cast<float>(sum);
  }

  /// Rows first .. first + rows - 1 of `codes` (K-major, two E2M1 per byte,
  /// low nibble first) in the 128-byte swizzle: row r at (r / 8) 1024 +
  /// (r % 8) 128, its 16-byte chunk c at chunk c ^ (r % 8).
  void swizzled(const std::vector<uint8_t> &codes, unsigned first,
                unsigned rows, uint8_t *image) const {
    for (unsigned r = 0; r < rows; ++r)
      for (unsigned byte = 0; byte < k / 2; ++byte) {
        const unsigned row = first + r;
        const unsigned chunk = (byte / 16) ^ (r % 8);
        image[(r / 8) * 1024 + (r % 8) * 128 + chunk * 16 + byte % 16] =
            codes[row * k + 2 * byte] | codes[row * k + 2 * byte + 1] << 4;
      }
  }

  /// The source of tcgen05.cp .32x128b.warpx4 for `scales` rows first ..
  /// first + 127 (those at or past `count` stay 0): 32 rows of 16 bytes,
  /// row r holding the four block scales of rows r, r + 32, r + 64, r + 96
  /// (K = 64: four blocks per 32-bit cell).
  void scaleAtom(const std::vector<uint8_t> &scales, unsigned first,
                 unsigned count, uint8_t *image) const {
    const unsigned blocks = getBlocks();
    for (unsigned r = 0; r < 32; ++r)
      for (unsigned j = 0; j < 4; ++j)
        for (unsigned blk = 0; blk < blocks; ++blk)
          if (first + r + 32 * j < count)
            image[16 * r + 4 * j + blk] =
                scales[(first + r + 32 * j) * blocks + blk];
  }
};

} // namespace fp4train::emulation_test

#endif // FP4TRAIN_UNITTESTS_EMULATION_NVFP4OPERANDS_H
