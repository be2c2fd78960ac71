//===- Npy.h - Minimal NumPy .npy reader and writer ------------*- C++ -*-===//
//
// Reads and writes version 1.0-3.0 .npy files holding little-endian float32,
// uint8 or uint16 (bfloat16 bits) arrays in C order, with one-line errors for
// everything else.
//
//===----------------------------------------------------------------------===//

#ifndef FP4TRAIN_NUMERICS_NPY_H
#define FP4TRAIN_NUMERICS_NPY_H

#include "fp4train/Numerics/Error.h"

#include <cstdint>
#include <string>
#include <vector>

namespace fp4train::numerics {

/// The supported element types and their .npy descriptors.
enum class NpyDType : uint8_t {
  Float32, ///< '<f4'
  UInt8,   ///< '|u1'
  UInt16,  ///< '<u2' (also how bfloat16 tensors are stored)
  Int32,   ///< '<i4' (token ids)
};

/// An array as read from or written to a .npy file.
struct NpyArray {
  NpyDType dtype = NpyDType::Float32;
  std::vector<int64_t> shape;
  /// Raw little-endian element bytes, C order.
  std::vector<uint8_t> bytes;

  int64_t getNumElements() const;
  /// The elements as f32: float32 as is, uint16 as bfloat16 bits, uint8 as
  /// integers.
  std::vector<float> toFloats() const;
};

/// The descriptor string of a dtype ('<f4', '|u1', '<u2', '<i4').
const char *getNpyDescriptor(NpyDType dtype);

/// Parses the contents of a .npy file; `name` prefixes error messages.
Expected<NpyArray> parseNpy(const uint8_t *data, size_t size,
                            const std::string &name);

/// Reads a .npy file.
Expected<NpyArray> readNpy(const std::string &path);

/// Serializes an array as a version 1.0 .npy file, or 2.0 when the header
/// outgrows 1.0's 16-bit length (header padded to 64 bytes).
std::vector<uint8_t> serializeNpy(NpyDType dtype,
                                  const std::vector<int64_t> &shape,
                                  const void *data);

/// Writes an array to a .npy file, through a temporary renamed into place
/// once complete (writeFiles in Files.h).
Status writeNpy(const std::string &path, NpyDType dtype,
                const std::vector<int64_t> &shape, const void *data);

} // namespace fp4train::numerics

#endif // FP4TRAIN_NUMERICS_NPY_H
