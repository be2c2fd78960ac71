//===- BlockLayout.h - Where the blocks of a row-major tensor lie -*- C++
//-*-===//
//
// Private to the numerics library: the mapping from a block number (in the
// row-major order of the scale tensor) to the offsets of its elements, shared
// by quantization, dequantization and the Hadamard rotation.
//
//===----------------------------------------------------------------------===//

#ifndef FP4TRAIN_LIB_NUMERICS_BLOCKLAYOUT_H
#define FP4TRAIN_LIB_NUMERICS_BLOCKLAYOUT_H

#include <cstdint>
#include <vector>

namespace fp4train::numerics {

/// Product of all dimensions.
inline int64_t getNumElements(const std::vector<int64_t> &shape) {
  int64_t count = 1;
  for (int64_t dim : shape)
    count *= dim;
  return count;
}

/// Block b starts at element base(b) and holds its element (r, c) at
/// base(b) + r·rowStride + c·colStride, for r < rows and c < cols.
struct BlockLayout {
  int64_t numBlocks;
  int64_t rows, rowStride, cols, colStride;
  // base(b) = (t / period)·periodStride + (t % period)·unitStride
  //           + (b % lanes)·laneStride, with t = b / lanes.
  int64_t lanes, laneStride, period, periodStride, unitStride;

  int64_t size() const { return rows * cols; }
  /// Block b occupies elements [b·size(), (b + 1)·size()).
  bool isContiguous() const { return rows == 1 && colStride == 1; }
  int64_t base(int64_t block) const {
    int64_t t = block / lanes;
    return t / period * periodStride + t % period * unitStride +
           block % lanes * laneStride;
  }
  /// Calls fn(k, offset) for the k-th element of the block, row-major.
  template <typename Fn> void forEachElement(int64_t block, Fn fn) const {
    int64_t start = base(block);
    for (int64_t r = 0, k = 0; r < rows; ++r)
      for (int64_t c = 0; c < cols; ++c, ++k)
        fn(k, start + r * rowStride + c * colStride);
  }
};

/// 1-D blocks of `blockSize` elements along `axis` (non-negative), or, when
/// `twoDimensional`, blockSize×blockSize tiles over the last two dimensions.
/// The blocked dimensions must be divisible by blockSize.
inline BlockLayout makeBlockLayout(const std::vector<int64_t> &shape,
                                   int64_t axis, int64_t blockSize,
                                   bool twoDimensional) {
  size_t rank = shape.size();
  if (twoDimensional) {
    int64_t rows = shape[rank - 2], cols = shape[rank - 1];
    int64_t tiles = getNumElements(shape) / (blockSize * blockSize);
    return {tiles,
            /*rows=*/blockSize,
            /*rowStride=*/cols,
            /*cols=*/blockSize,
            /*colStride=*/1,
            /*lanes=*/cols / blockSize,
            /*laneStride=*/blockSize,
            /*period=*/rows / blockSize,
            /*periodStride=*/rows * cols,
            /*unitStride=*/blockSize * cols};
  }
  int64_t length = shape[axis];
  int64_t inner = 1;
  for (size_t i = size_t(axis) + 1; i < rank; ++i)
    inner *= shape[i];
  return {getNumElements(shape) / blockSize,
          /*rows=*/1,
          /*rowStride=*/0,
          /*cols=*/blockSize,
          /*colStride=*/inner,
          /*lanes=*/inner,
          /*laneStride=*/1,
          /*period=*/length / blockSize,
          /*periodStride=*/length * inner,
          /*unitStride=*/blockSize * inner};
}

} // namespace fp4train::numerics

#endif // FP4TRAIN_LIB_NUMERICS_BLOCKLAYOUT_H
