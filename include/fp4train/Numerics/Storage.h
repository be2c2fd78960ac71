//===- Storage.h - How element codes are stored in memory -------*- C++ -*-===//
//
// [PK1] The storage layout of a block-scaled tensor's element codes, the one
// definition every path (the MLIR expansion, the runtime, the GPU kernels and
// their emulation) reads and writes:
//
//  - E2M1 codes are stored two per byte along the last dimension: element 2j
//    of a row in bits 3..0 of the row's byte j, element 2j + 1 in bits 7..4.
//    A row of odd length ends in a byte whose high nibble is zero. A tensor
//    of shape [..., n] is stored as [..., ceil(n / 2)] bytes.
//  - FP8 codes (E4M3FN, E5M2) are stored one per byte, in the tensor's shape.
//
// This is the order in which the block-scaled MMA instructions of every
// target take E2M1 operands in registers and shared memory (the lower K in
// the low nibble), so a kernel moves stored codes without repacking them.
// Scale codes are always one per byte. QuantizedTensor::codes stays one code
// per byte (bits 3..0 for E2M1): it is the computation's form, these
// functions convert to and from the stored form.
//
//===----------------------------------------------------------------------===//

#ifndef FP4TRAIN_NUMERICS_STORAGE_H
#define FP4TRAIN_NUMERICS_STORAGE_H

#include "fp4train/Numerics/Formats.h"

#include <cstdint>
#include <vector>

namespace fp4train::numerics {

/// Whether `type`'s codes are stored two per byte.
constexpr bool isPackedStorage(ElementType type) {
  return type == ElementType::E2M1;
}

/// Bytes that store one row of `rowLength` codes.
constexpr int64_t getStoredRowBytes(ElementType type, int64_t rowLength) {
  return isPackedStorage(type) ? (rowLength + 1) / 2 : rowLength;
}

/// Bytes that store a tensor of `shape` (the last dimension is the row).
int64_t getStoredBytes(ElementType type, const std::vector<int64_t> &shape);

/// Stores `rows` rows of `rowLength` codes, one per byte (E2M1 in bits 3..0;
/// bits 7..4 are ignored), into rows of getStoredRowBytes bytes.
void packCodes(ElementType type, const uint8_t *codes, int64_t rows,
               int64_t rowLength, uint8_t *stored);
/// The inverse of packCodes: one code per byte (E2M1 in bits 3..0, bits 7..4
/// zero). A padding nibble is not read.
void unpackCodes(ElementType type, const uint8_t *stored, int64_t rows,
                 int64_t rowLength, uint8_t *codes);

/// packCodes / unpackCodes of a whole tensor of `shape`.
std::vector<uint8_t> packCodes(ElementType type,
                               const std::vector<uint8_t> &codes,
                               const std::vector<int64_t> &shape);
std::vector<uint8_t> unpackCodes(ElementType type,
                                 const std::vector<uint8_t> &stored,
                                 const std::vector<int64_t> &shape);

} // namespace fp4train::numerics

#endif // FP4TRAIN_NUMERICS_STORAGE_H
