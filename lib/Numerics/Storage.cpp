//===- Storage.cpp - [PK1] stored element codes ---------------------------===//

#include "fp4train/Numerics/Storage.h"

#include <cstring>

namespace fp4train::numerics {

namespace {

/// Rows and row length of a tensor of `shape` (a scalar is one row of one).
void getRows(const std::vector<int64_t> &shape, int64_t &rows,
             int64_t &rowLength) {
  rowLength = shape.empty() ? 1 : shape.back();
  rows = 1;
  for (size_t i = 0; i + 1 < shape.size(); ++i)
    rows *= shape[i];
}

} // namespace

int64_t getStoredBytes(ElementType type, const std::vector<int64_t> &shape) {
  int64_t rows, rowLength;
  getRows(shape, rows, rowLength);
  return rows * getStoredRowBytes(type, rowLength);
}

void packCodes(ElementType type, const uint8_t *codes, int64_t rows,
               int64_t rowLength, uint8_t *stored) {
  if (!isPackedStorage(type)) {
    std::memcpy(stored, codes, size_t(rows * rowLength));
    return;
  }
  const int64_t rowBytes = getStoredRowBytes(type, rowLength);
  for (int64_t r = 0; r < rows; ++r) {
    const uint8_t *in = codes + r * rowLength;
    uint8_t *out = stored + r * rowBytes;
    for (int64_t j = 0; j < rowLength / 2; ++j)
      out[j] = uint8_t((in[2 * j] & 0x0F) | (in[2 * j + 1] & 0x0F) << 4);
    if (rowLength % 2)
      out[rowBytes - 1] = in[rowLength - 1] & 0x0F;
  }
}

void unpackCodes(ElementType type, const uint8_t *stored, int64_t rows,
                 int64_t rowLength, uint8_t *codes) {
  if (!isPackedStorage(type)) {
    std::memcpy(codes, stored, size_t(rows * rowLength));
    return;
  }
  const int64_t rowBytes = getStoredRowBytes(type, rowLength);
  for (int64_t r = 0; r < rows; ++r) {
    const uint8_t *in = stored + r * rowBytes;
    uint8_t *out = codes + r * rowLength;
    for (int64_t j = 0; j < rowLength / 2; ++j) {
      out[2 * j] = in[j] & 0x0F;
      out[2 * j + 1] = in[j] >> 4;
    }
    if (rowLength % 2)
      out[rowLength - 1] = in[rowBytes - 1] & 0x0F;
  }
}

std::vector<uint8_t> packCodes(ElementType type,
                               const std::vector<uint8_t> &codes,
                               const std::vector<int64_t> &shape) {
  int64_t rows, rowLength;
  getRows(shape, rows, rowLength);
  std::vector<uint8_t> stored(
      size_t(rows * getStoredRowBytes(type, rowLength)));
  packCodes(type, codes.data(), rows, rowLength, stored.data());
  return stored;
}

std::vector<uint8_t> unpackCodes(ElementType type,
                                 const std::vector<uint8_t> &stored,
                                 const std::vector<int64_t> &shape) {
  int64_t rows, rowLength;
  getRows(shape, rows, rowLength);
  std::vector<uint8_t> codes(size_t(rows * rowLength));
  unpackCodes(type, stored.data(), rows, rowLength, codes.data());
  return codes;
}

} // namespace fp4train::numerics
