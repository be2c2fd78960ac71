//===- NpyTest.cpp - .npy reader and writer tests -------------------------===//

#include "fp4train/Numerics/Npy.h"

#include "gtest/gtest.h"

#include <cstring>

using namespace fp4train::numerics;

namespace {

std::vector<uint8_t> fileWithHeader(const std::string &dict, size_t dataBytes) {
  std::vector<uint8_t> file = {
      0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, uint8_t(dict.size()), 0};
  file.insert(file.end(), dict.begin(), dict.end());
  file.resize(file.size() + dataBytes, 0);
  return file;
}

std::string parseError(const std::vector<uint8_t> &file) {
  Expected<NpyArray> array = parseNpy(file.data(), file.size(), "x.npy");
  return array ? "ok" : array.error().message;
}

TEST(Npy, RoundTrips) {
  float values[6] = {1, -2, 3.5f, 0, 1e-3f, 7};
  std::vector<uint8_t> file = serializeNpy(NpyDType::Float32, {2, 3}, values);
  EXPECT_EQ((10 + file[8] + (file[9] << 8)) % 64, 0);
  Expected<NpyArray> array = parseNpy(file.data(), file.size(), "x.npy");
  ASSERT_TRUE(bool(array));
  EXPECT_EQ(array->dtype, NpyDType::Float32);
  EXPECT_EQ(array->shape, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(array->toFloats(), std::vector<float>(values, values + 6));

  uint8_t bytes[5] = {1, 2, 3, 4, 255};
  file = serializeNpy(NpyDType::UInt8, {5}, bytes);
  std::string text(file.begin(), file.end());
  EXPECT_NE(text.find("'shape': (5,)"), std::string::npos);
  array = parseNpy(file.data(), file.size(), "x.npy");
  ASSERT_TRUE(bool(array));
  EXPECT_EQ(array->bytes, std::vector<uint8_t>(bytes, bytes + 5));

  float scalar = 4;
  file = serializeNpy(NpyDType::Float32, {}, &scalar);
  array = parseNpy(file.data(), file.size(), "x.npy");
  ASSERT_TRUE(bool(array));
  EXPECT_TRUE(array->shape.empty());
  EXPECT_EQ(array->toFloats(), std::vector<float>{4});
}

TEST(Npy, Int32TokenIds) {
  int32_t ids[3] = {0, 255, -7};
  std::vector<uint8_t> file = serializeNpy(NpyDType::Int32, {3}, ids);
  Expected<NpyArray> array = parseNpy(file.data(), file.size(), "x.npy");
  ASSERT_TRUE(bool(array));
  EXPECT_EQ(array->dtype, NpyDType::Int32);
  EXPECT_EQ(array->toFloats(), (std::vector<float>{0.0f, 255.0f, -7.0f}));
}

TEST(Npy, BFloat16Bits) {
  uint16_t bits[2] = {0x3F80, 0xC040}; // 1.0, -3.0
  std::vector<uint8_t> file = serializeNpy(NpyDType::UInt16, {2}, bits);
  Expected<NpyArray> array = parseNpy(file.data(), file.size(), "x.npy");
  ASSERT_TRUE(bool(array));
  EXPECT_EQ(array->toFloats(), (std::vector<float>{1.0f, -3.0f}));
}

TEST(Npy, Errors) {
  EXPECT_EQ(parseError({'P', 'K'}),
            "x.npy: not a .npy file (bad magic string)");
  EXPECT_EQ(parseError({0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, 80, 0, '{'}),
            "x.npy: truncated .npy header");
  EXPECT_EQ(
      parseError(fileWithHeader(
          "{'descr': '<f8', 'fortran_order': False, 'shape': (2,), }", 16)),
      "x.npy: unsupported dtype '<f8' (expected '<f4' float32, '<u2' "
      "bfloat16 bits, '<i4' or '|u1')");
  EXPECT_EQ(
      parseError(fileWithHeader(
          "{'descr': '<f4', 'fortran_order': True, 'shape': (2, 2), }", 16)),
      "x.npy: Fortran-order arrays are not supported; save it in C order");
  EXPECT_EQ(
      parseError(fileWithHeader(
          "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 2), }", 12)),
      "x.npy: truncated data: expected 16 bytes, found 12");
  EXPECT_EQ(
      parseError(fileWithHeader(
          "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 2), }", 20)),
      "x.npy: corrupt data: 4 bytes past the end of the array");
  EXPECT_EQ(
      parseError(fileWithHeader(
          "{'descr': '<f4', 'fortran_order': False, 'shape': (2, x), }", 16)),
      "x.npy: corrupt .npy header: bad 'shape'");
  EXPECT_EQ(parseError(fileWithHeader("{'fortran_order': False}", 0)),
            "x.npy: corrupt .npy header: no 'descr'");
  EXPECT_EQ(parseError(fileWithHeader(
                "{'descr': '<f4', 'fortran_order': False, 'shape': "
                "(99999999999, 99999999999), }",
                16)),
            "x.npy: corrupt .npy header: the shape is too large");
  Expected<NpyArray> missing = readNpy("/nonexistent/file.npy");
  ASSERT_FALSE(bool(missing));
  EXPECT_EQ(missing.error().message,
            "cannot open '/nonexistent/file.npy': No such file or directory");
  EXPECT_EQ(parseError(fileWithHeader("'descr': '<f4'", 0)),
            "x.npy: corrupt .npy header: not a dict literal");
}

// Keys are read as tokens of the dict: a key spelled inside a string value
// (here a double-quoted one, as NumPy may write for user metadata) is not
// taken for the real one.
TEST(Npy, KeysInsideStringValues) {
  std::vector<uint8_t> file = fileWithHeader(
      "{'note': \"'shape': (64,), 'descr': '|u1'\", 'descr': '<f4', "
      "'fortran_order': False, 'shape': (2, 32), }",
      256);
  Expected<NpyArray> array = parseNpy(file.data(), file.size(), "x.npy");
  ASSERT_TRUE(bool(array)) << array.error().message;
  EXPECT_EQ(array->dtype, NpyDType::Float32);
  EXPECT_EQ(array->shape, (std::vector<int64_t>{2, 32}));
}

// A header past 64 KiB (a high-rank shape) does not fit version 1.0's
// 16-bit length: the writer switches to version 2.0 rather than storing the
// length modulo 2^16 (a corrupt file).
TEST(Npy, LongHeadersUseVersion2) {
  std::vector<int64_t> shape(30000, 1);
  shape[0] = 3;
  float values[3] = {1, 2, 3};
  std::vector<uint8_t> file = serializeNpy(NpyDType::Float32, shape, values);
  EXPECT_EQ(file[6], 2);
  size_t length =
      file[8] | file[9] << 8 | file[10] << 16 | size_t(file[11]) << 24;
  EXPECT_GT(length, 0xFFFFu);
  EXPECT_EQ((12 + length) % 64, 0u);
  Expected<NpyArray> array = parseNpy(file.data(), file.size(), "x.npy");
  ASSERT_TRUE(bool(array)) << array.error().message;
  EXPECT_EQ(array->shape, shape);
  EXPECT_EQ(array->toFloats(), std::vector<float>(values, values + 3));

  // Short headers stay version 1.0.
  file = serializeNpy(NpyDType::Float32, {3}, values);
  EXPECT_EQ(file[6], 1);
}

} // namespace
