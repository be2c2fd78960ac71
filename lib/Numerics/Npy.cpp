//===- Npy.cpp - Minimal NumPy .npy reader and writer ---------------------===//
//
// The header is a Python dict literal; only the three keys NumPy writes are
// understood: 'descr', 'fortran_order' and 'shape'. Element bytes are copied
// as is, which assumes a little-endian host (as every supported target is).
//
//===----------------------------------------------------------------------===//

#include "fp4train/Numerics/Npy.h"
#include "fp4train/Numerics/ElementCount.h"
#include "fp4train/Numerics/Files.h"

#include <cassert>
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
  switch (dtype) {
  case NpyDType::Float32:
  case NpyDType::Int32:
    return 4;
  case NpyDType::UInt16:
    return 2;
  case NpyDType::UInt8:
    return 1;
  }
  return 1;
}

const char *getNpyDescriptor(NpyDType dtype) {
  switch (dtype) {
  case NpyDType::Float32:
    return "<f4";
  case NpyDType::UInt16:
    return "<u2";
  case NpyDType::Int32:
    return "<i4";
  case NpyDType::UInt8:
    return "|u1";
  }
  return "|u1";
}

int64_t NpyArray::getNumElements() const {
  // parseNpy rejects shapes whose byte size overflows.
  std::optional<int64_t> count = checkedNumElements(shape);
  assert(count && "element count overflow in a parsed .npy shape");
  return *count;
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
    case NpyDType::Int32: {
      int32_t value;
      std::memcpy(&value, &bytes[4 * i], 4);
      values[i] = float(value);
      break;
    }
    }
  }
  return values;
}

namespace {

/// A cursor over the header dict text.
class HeaderParser {
public:
  explicit HeaderParser(std::string_view text) : text(text) {}

  /// The dict's entries, keys to the text of their values, read as Python
  /// tokens (so a key spelled inside a string value is not taken for one);
  /// nothing when the text is not a flat dict of strings, booleans and
  /// tuples.
  std::optional<std::vector<std::pair<std::string_view, std::string_view>>>
  parseDict() {
    std::vector<std::pair<std::string_view, std::string_view>> entries;
    skipSpace();
    if (!consume('{'))
      return std::nullopt;
    for (;;) {
      skipSpace();
      if (consume('}'))
        break;
      std::optional<std::string_view> key = parseString();
      if (!key)
        return std::nullopt;
      skipSpace();
      if (!consume(':'))
        return std::nullopt;
      skipSpace();
      size_t begin = pos;
      if (!skipValue())
        return std::nullopt;
      entries.emplace_back(*key, text.substr(begin, pos - begin));
      skipSpace();
      if (!consume(',') && (pos >= text.size() || text[pos] != '}'))
        return std::nullopt;
    }
    skipSpace();
    if (pos != text.size())
      return std::nullopt;
    return entries;
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
    if (text.substr(pos) == "True")
      return true;
    if (text.substr(pos) == "False")
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
  /// Skips a string, a tuple without nested strings, or a bare word.
  bool skipValue() {
    if (pos < text.size() && (text[pos] == '\'' || text[pos] == '"'))
      return parseString().has_value();
    if (consume('(')) {
      size_t end = text.find(')', pos);
      if (end == std::string_view::npos ||
          text.substr(pos, end - pos).find_first_of("'\"(") !=
              std::string_view::npos)
        return false;
      pos = end + 1;
      return true;
    }
    size_t begin = pos;
    while (pos < text.size() &&
           (std::isalnum((unsigned char)text[pos]) || text[pos] == '_'))
      ++pos;
    return pos > begin;
  }

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

  auto entries = HeaderParser(std::string_view(
                                  reinterpret_cast<const char *>(data + prefix),
                                  headerLength))
                     .parseDict();
  if (!entries)
    return fail("corrupt .npy header: not a dict literal");
  // A parser over the value of `key`, or nothing when the key is absent.
  auto value = [&](std::string_view key) -> std::optional<HeaderParser> {
    for (auto &[name, text] : *entries)
      if (name == key)
        return HeaderParser(text);
    return std::nullopt;
  };

  std::optional<HeaderParser> descrValue = value("descr");
  if (!descrValue)
    return fail("corrupt .npy header: no 'descr'");
  std::optional<std::string_view> descr = descrValue->parseString();
  if (!descr)
    return fail("corrupt .npy header: bad 'descr'");
  NpyArray array;
  if (*descr == "<f4")
    array.dtype = NpyDType::Float32;
  else if (*descr == "|u1" || *descr == "<u1")
    array.dtype = NpyDType::UInt8;
  else if (*descr == "<u2")
    array.dtype = NpyDType::UInt16;
  else if (*descr == "<i4")
    array.dtype = NpyDType::Int32;
  else
    return fail("unsupported dtype '" + std::string(*descr) +
                "' (expected '<f4' float32, '<u2' bfloat16 bits, '<i4' or "
                "'|u1')");

  std::optional<HeaderParser> fortranValue = value("fortran_order");
  if (!fortranValue)
    return fail("corrupt .npy header: no 'fortran_order'");
  std::optional<bool> fortranOrder = fortranValue->parseBool();
  if (!fortranOrder)
    return fail("corrupt .npy header: bad 'fortran_order'");
  if (*fortranOrder)
    return fail("Fortran-order arrays are not supported; save it in C order");

  std::optional<HeaderParser> shapeValue = value("shape");
  if (!shapeValue)
    return fail("corrupt .npy header: no 'shape'");
  std::optional<std::vector<int64_t>> shape = shapeValue->parseShape();
  if (!shape)
    return fail("corrupt .npy header: bad 'shape'");
  array.shape = std::move(*shape);

  size_t available = size - prefix - headerLength;
  size_t elementSize = getElementSize(array.dtype);
  size_t count = 1;
  for (int64_t dim : array.shape) {
    if (dim != 0 && count > size_t(std::numeric_limits<int64_t>::max()) /
                                elementSize / size_t(dim))
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
  Expected<std::vector<uint8_t>> contents = readFile(path);
  if (!contents)
    return contents.error();
  return parseNpy(contents->data(), contents->size(), path);
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
  // Version 1.0 stores the header length in 16 bits; a longer header (a
  // high-rank shape) needs version 2.0 and its 32-bit length, as NumPy does.
  size_t lengthBytes = 2;
  auto padded = [&] {
    size_t total = kMagicSize + 2 + lengthBytes + header.size() + 1;
    return header.size() + 1 + (64 - total % 64) % 64;
  };
  if (padded() > 0xFFFF)
    lengthBytes = 4;
  // Pad with spaces so the data starts on a 64-byte boundary.
  header.resize(padded() - 1, ' ');
  header += '\n';

  std::vector<uint8_t> out(kMagic, kMagic + kMagicSize);
  out.push_back(lengthBytes == 2 ? 1 : 2);
  out.push_back(0);
  for (size_t i = 0; i < lengthBytes; ++i)
    out.push_back(uint8_t(header.size() >> (8 * i)));
  out.insert(out.end(), header.begin(), header.end());
  const uint8_t *bytes = static_cast<const uint8_t *>(data);
  out.insert(out.end(), bytes, bytes + count * getElementSize(dtype));
  return out;
}

Status writeNpy(const std::string &path, NpyDType dtype,
                const std::vector<int64_t> &shape, const void *data) {
  return writeFiles({{path, serializeNpy(dtype, shape, data)}});
}

} // namespace fp4train::numerics
