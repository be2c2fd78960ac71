//===- Npy.cpp - Minimal NumPy .npy reader and writer ---------------------===//
//
// The header is a Python dict literal; only the three keys NumPy writes are
// understood: 'descr', 'fortran_order' and 'shape'. Element bytes are copied
// as is, which assumes a little-endian host (as every supported target is).
//
//===----------------------------------------------------------------------===//

#include "fp4train/Numerics/Npy.h"

#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <limits>
#include <string_view>

namespace fp4train::numerics {

static constexpr char kMagic[] = "\x93NUMPY";
static constexpr size_t kMagicSize = 6;

static size_t getElementSize(NpyDType dtype) {
  return dtype == NpyDType::Float32 ? 4 : dtype == NpyDType::UInt16 ? 2 : 1;
}

const char *getNpyDescriptor(NpyDType dtype) {
  return dtype == NpyDType::Float32  ? "<f4"
         : dtype == NpyDType::UInt16 ? "<u2"
                                     : "|u1";
}

int64_t NpyArray::getNumElements() const {
  int64_t count = 1;
  for (int64_t dim : shape)
    count *= dim;
  return count;
}

std::vector<float> NpyArray::toFloats() const {
  int64_t count = getNumElements();
  std::vector<float> values(count);
  for (int64_t i = 0; i < count; ++i) {
    switch (dtype) {
    case NpyDType::Float32:
      std::memcpy(&values[i], &bytes[4 * i], 4);
      break;
    case NpyDType::UInt16: {
      uint32_t bits = uint32_t(bytes[2 * i]) | uint32_t(bytes[2 * i + 1]) << 8;
      bits <<= 16;
      std::memcpy(&values[i], &bits, 4);
      break;
    }
    case NpyDType::UInt8:
      values[i] = float(bytes[i]);
      break;
    }
  }
  return values;
}

namespace {

/// A cursor over the header dict text.
class HeaderParser {
public:
  explicit HeaderParser(std::string_view text) : text(text) {}

  /// Positions the cursor after `'key':`; false when the key is absent.
  bool seekKey(std::string_view key) {
    std::string quoted = "'" + std::string(key) + "'";
    size_t at = text.find(quoted);
    if (at == std::string_view::npos)
      return false;
    pos = at + quoted.size();
    skipSpace();
    if (!consume(':'))
      return false;
    skipSpace();
    return true;
  }

  std::optional<std::string_view> parseString() {
    if (pos >= text.size() || (text[pos] != '\'' && text[pos] != '"'))
      return std::nullopt;
    char quote = text[pos++];
    size_t end = text.find(quote, pos);
    if (end == std::string_view::npos)
      return std::nullopt;
    std::string_view result = text.substr(pos, end - pos);
    pos = end + 1;
    return result;
  }

  std::optional<bool> parseBool() {
    if (text.substr(pos, 4) == "True")
      return true;
    if (text.substr(pos, 5) == "False")
      return false;
    return std::nullopt;
  }

  /// Parses `(d0, d1, ...)`, allowing a trailing comma and `()`.
  std::optional<std::vector<int64_t>> parseShape() {
    if (!consume('('))
      return std::nullopt;
    std::vector<int64_t> shape;
    for (;;) {
      skipSpace();
      if (consume(')'))
        return shape;
      if (pos >= text.size() || !std::isdigit((unsigned char)text[pos]))
        return std::nullopt;
      int64_t dim = 0;
      while (pos < text.size() && std::isdigit((unsigned char)text[pos])) {
        if (dim > (std::numeric_limits<int64_t>::max() - 9) / 10)
          return std::nullopt;
        dim = dim * 10 + (text[pos++] - '0');
      }
      shape.push_back(dim);
      skipSpace();
      if (!consume(',') && (pos >= text.size() || text[pos] != ')'))
        return std::nullopt;
    }
  }

private:
  void skipSpace() {
    while (pos < text.size() && std::isspace((unsigned char)text[pos]))
      ++pos;
  }
  bool consume(char c) {
    if (pos < text.size() && text[pos] == c) {
      ++pos;
      return true;
    }
    return false;
  }

  std::string_view text;
  size_t pos = 0;
};

} // namespace

Expected<NpyArray> parseNpy(const uint8_t *data, size_t size,
                            const std::string &name) {
  auto fail = [&](const std::string &message) {
    return makeError(name + ": " + message);
  };
  if (size < kMagicSize || std::memcmp(data, kMagic, kMagicSize) != 0)
    return fail("not a .npy file (bad magic string)");
  if (size < kMagicSize + 2)
    return fail("truncated .npy header");
  uint8_t major = data[6];
  if (major < 1 || major > 3)
    return fail("unsupported .npy version " + std::to_string(major) + "." +
                std::to_string(data[7]));
  size_t lengthBytes = major == 1 ? 2 : 4;
  size_t prefix = kMagicSize + 2 + lengthBytes;
  if (size < prefix)
    return fail("truncated .npy header");
  size_t headerLength = 0;
  for (size_t i = 0; i < lengthBytes; ++i)
    headerLength |= size_t(data[kMagicSize + 2 + i]) << (8 * i);
  if (size - prefix < headerLength)
    return fail("truncated .npy header");

  HeaderParser header(std::string_view(
      reinterpret_cast<const char *>(data + prefix), headerLength));
  if (!header.seekKey("descr"))
    return fail("corrupt .npy header: no 'descr'");
  std::optional<std::string_view> descr = header.parseString();
  if (!descr)
    return fail("corrupt .npy header: bad 'descr'");
  NpyArray array;
  if (*descr == "<f4")
    array.dtype = NpyDType::Float32;
  else if (*descr == "|u1" || *descr == "<u1")
    array.dtype = NpyDType::UInt8;
  else if (*descr == "<u2")
    array.dtype = NpyDType::UInt16;
  else
    return fail("unsupported dtype '" + std::string(*descr) +
                "' (expected '<f4' float32, '<u2' bfloat16 bits or '|u1')");

  if (!header.seekKey("fortran_order"))
    return fail("corrupt .npy header: no 'fortran_order'");
  std::optional<bool> fortranOrder = header.parseBool();
  if (!fortranOrder)
    return fail("corrupt .npy header: bad 'fortran_order'");
  if (*fortranOrder)
    return fail("Fortran-order arrays are not supported; save it in C order");

  if (!header.seekKey("shape"))
    return fail("corrupt .npy header: no 'shape'");
  std::optional<std::vector<int64_t>> shape = header.parseShape();
  if (!shape)
    return fail("corrupt .npy header: bad 'shape'");
  array.shape = std::move(*shape);

  size_t available = size - prefix - headerLength;
  size_t elementSize = getElementSize(array.dtype);
  size_t count = 1;
  for (int64_t dim : array.shape) {
    if (dim != 0 && count > std::numeric_limits<size_t>::max() / elementSize /
                                size_t(dim))
      return fail("corrupt .npy header: the shape is too large");
    count *= size_t(dim);
  }
  if (count > available / elementSize || count * elementSize != available)
    return fail(count * elementSize > available
                    ? "truncated data: expected " +
                          std::to_string(count * elementSize) +
                          " bytes, found " + std::to_string(available)
                    : "corrupt data: " +
                          std::to_string(available - count * elementSize) +
                          " bytes past the end of the array");
  const uint8_t *begin = data + prefix + headerLength;
  array.bytes.assign(begin, begin + available);
  return array;
}

Expected<NpyArray> readNpy(const std::string &path) {
  std::FILE *file = std::fopen(path.c_str(), "rb");
  if (!file)
    return makeError("cannot open '" + path + "': " + std::strerror(errno));
  std::vector<uint8_t> contents;
  uint8_t buffer[1 << 16];
  size_t got;
  while ((got = std::fread(buffer, 1, sizeof(buffer), file)) > 0)
    contents.insert(contents.end(), buffer, buffer + got);
  bool failed = std::ferror(file);
  std::fclose(file);
  if (failed)
    return makeError("cannot read '" + path + "'");
  return parseNpy(contents.data(), contents.size(), path);
}

std::vector<uint8_t> serializeNpy(NpyDType dtype,
                                  const std::vector<int64_t> &shape,
                                  const void *data) {
  std::string header = std::string("{'descr': '") + getNpyDescriptor(dtype) +
                       "', 'fortran_order': False, 'shape': (";
  int64_t count = 1;
  for (size_t i = 0; i < shape.size(); ++i) {
    header += (i ? ", " : "") + std::to_string(shape[i]);
    count *= shape[i];
  }
  // Python spells a one-element tuple "(5,)".
  header += shape.size() == 1 ? ",)" : ")";
  header += ", }";
  // Pad with spaces so the data starts on a 64-byte boundary.
  size_t total = kMagicSize + 4 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header += '\n';

  std::vector<uint8_t> out(kMagic, kMagic + kMagicSize);
  out.push_back(1);
  out.push_back(0);
  out.push_back(uint8_t(header.size()));
  out.push_back(uint8_t(header.size() >> 8));
  out.insert(out.end(), header.begin(), header.end());
  const uint8_t *bytes = static_cast<const uint8_t *>(data);
  out.insert(out.end(), bytes, bytes + count * getElementSize(dtype));
  return out;
}

Status writeNpy(const std::string &path, NpyDType dtype,
                const std::vector<int64_t> &shape, const void *data) {
  std::vector<uint8_t> contents = serializeNpy(dtype, shape, data);
  std::FILE *file = std::fopen(path.c_str(), "wb");
  if (!file)
    return makeError("cannot write '" + path + "': " + std::strerror(errno));
  bool ok = std::fwrite(contents.data(), 1, contents.size(), file) ==
            contents.size();
  ok &= std::fclose(file) == 0;
  if (!ok)
    return makeError("cannot write '" + path + "'");
  return Success{};
}

} // namespace fp4train::numerics
