//===- Tma.cpp - Tensor maps and the tiled TMA load -----------------------===//
//
// The sources and assumptions are in fp4train/Emulation/Tma.h.
//
//===----------------------------------------------------------------------===//

#include "fp4train/Emulation/Tma.h"

#include "llvm/Support/FormatVariadic.h"

#include <cstring>

using namespace fp4train::emulation::ptx;

/// The first word of the emulator's image of a tensor map.
static constexpr uint64_t kMagic = 0x50414D524F534E54ull; // "TNSORMAP"

std::string fp4train::emulation::ptx::checkTensorMap(const TensorMap &map) {
  if (map.rank < 1 || map.rank > kTensorMapMaxRank)
    return llvm::formatv("tensor map rank {0} is not in 1..5", map.rank);
  if (map.elementBytes != 1 && map.elementBytes != 2 && map.elementBytes != 4 &&
      map.elementBytes != 8)
    return llvm::formatv("tensor map element size {0} is not 1, 2, 4 or 8 "
                         "bytes",
                         map.elementBytes);
  if (map.globalAddress % 16)
    return llvm::formatv("tensor map global address {0:x} is not 16-byte "
                         "aligned",
                         map.globalAddress);
  for (unsigned d = 0; d < map.rank; ++d) {
    if (map.sizes[d] < 1 || map.sizes[d] > (uint64_t{1} << 32))
      return llvm::formatv("tensor map size {0} of dimension {1} is not in "
                           "1..2^32",
                           map.sizes[d], d);
    if (d && (map.strides[d] % 16 || map.strides[d] >= (uint64_t{1} << 40)))
      return llvm::formatv("tensor map stride {0} of dimension {1} is not a "
                           "multiple of 16 bytes below 2^40",
                           map.strides[d], d);
    if (map.box[d] < 1 || map.box[d] > 256)
      return llvm::formatv("tensor map box {0} of dimension {1} is not in "
                           "1..256",
                           map.box[d], d);
  }
  const uint64_t inner = uint64_t{map.box[0]} * map.elementBytes;
  if (inner % 16)
    return llvm::formatv("tensor map inner box of {0} bytes is not a "
                         "multiple of 16",
                         inner);
  if (map.swizzle == SwizzleMode::B128Atom32)
    return "tensor map swizzle mode 128B with 32-byte atoms is not modelled";
  if (map.swizzle != SwizzleMode::None && inner > getSwizzleBytes(map.swizzle))
    return llvm::formatv("tensor map inner box of {0} bytes exceeds the "
                         "{1}-byte swizzle span",
                         inner, getSwizzleBytes(map.swizzle));
  return {};
}

std::vector<uint8_t>
fp4train::emulation::ptx::encodeTensorMap(const TensorMap &map) {
  // Words: the magic, the address, rank | element bytes << 8 | swizzle <<
  // 16 | L2 promotion / 64 << 24, the five sizes, the five strides, the box
  // (16 bits per dimension).
  std::vector<uint64_t> words(kTensorMapBytes / 8, 0);
  words[0] = kMagic;
  words[1] = map.globalAddress;
  words[2] = map.rank | uint64_t{map.elementBytes} << 8 |
             uint64_t{static_cast<uint8_t>(map.swizzle)} << 16 |
             uint64_t{map.l2Promotion / 64} << 24;
  for (unsigned d = 0; d < kTensorMapMaxRank; ++d) {
    words[3 + d] = map.sizes[d];
    words[8 + d] = map.strides[d];
  }
  words[13] = uint64_t{map.box[0]} | uint64_t{map.box[1]} << 16 |
              uint64_t{map.box[2]} << 32 | uint64_t{map.box[3]} << 48;
  words[14] = map.box[4];
  std::vector<uint8_t> bytes(kTensorMapBytes);
  std::memcpy(bytes.data(), words.data(), kTensorMapBytes);
  return bytes;
}

std::string
fp4train::emulation::ptx::decodeTensorMap(llvm::ArrayRef<uint8_t> bytes,
                                          TensorMap *map) {
  if (bytes.size() != kTensorMapBytes)
    return "a tensor map is 128 bytes";
  uint64_t words[kTensorMapBytes / 8];
  std::memcpy(words, bytes.data(), kTensorMapBytes);
  if (words[0] != kMagic)
    return "the tensor-map pointer does not point at a tensor map the "
           "host encoded (nvgpu.tma.create.descriptor)";
  map->globalAddress = words[1];
  map->rank = words[2] & 0xFF;
  map->elementBytes = (words[2] >> 8) & 0xFF;
  map->swizzle = static_cast<SwizzleMode>((words[2] >> 16) & 0xFF);
  map->l2Promotion = ((words[2] >> 24) & 0xFF) * 64;
  for (unsigned d = 0; d < kTensorMapMaxRank; ++d) {
    map->sizes[d] = words[3 + d];
    map->strides[d] = words[8 + d];
  }
  for (unsigned d = 0; d < 4; ++d)
    map->box[d] = (words[13] >> (16 * d)) & 0xFFFF;
  map->box[4] = words[14] & 0xFFFF;
  return checkTensorMap(*map);
}

uint64_t fp4train::emulation::ptx::getBoxBytes(const TensorMap &map) {
  uint64_t bytes = map.elementBytes;
  for (unsigned d = 0; d < map.rank; ++d)
    bytes *= map.box[d];
  return bytes;
}

std::string fp4train::emulation::ptx::loadTensorTile(
    const TensorMap &map, llvm::ArrayRef<int32_t> coords, uint32_t dst,
    llvm::function_ref<std::string(uint64_t, unsigned, uint8_t *)> readGlobal,
    llvm::function_ref<void(uint32_t, uint8_t)> writeShared) {
  if (coords.size() != map.rank)
    return llvm::formatv("a {0}-d tensor map takes {0} coordinates, not {1}",
                         map.rank, coords.size());
  const unsigned span =
      map.swizzle == SwizzleMode::None ? 16 : getSwizzleBytes(map.swizzle);
  // The pattern repeats every 8 spans; the destination must start one.
  const uint32_t alignment = span == 16 ? 128 : 8 * span;
  if (dst % alignment)
    return llvm::formatv("the shared-memory destination {0:x} of a tiled "
                         "TMA load is not {1}-byte aligned",
                         dst, alignment);
  const uint32_t chunkMask = span / 16 - 1;
  auto swizzled = [&](uint32_t address) {
    return address ^ (((address >> 7) & chunkMask) << 4);
  };
  const uint64_t elements = getBoxBytes(map) / map.elementBytes;
  std::vector<uint8_t> element(map.elementBytes);
  for (uint64_t n = 0; n < elements; ++n) {
    // Box element n in row-major box order, dimension 0 fastest.
    uint64_t rest = n, offset = 0;
    bool inBounds = true;
    for (unsigned d = 0; d < map.rank; ++d) {
      const int64_t at = int64_t{coords[d]} + int64_t(rest % map.box[d]);
      rest /= map.box[d];
      if (at < 0 || uint64_t(at) >= map.sizes[d]) {
        inBounds = false;
        continue;
      }
      offset +=
          d ? uint64_t(at) * map.strides[d] : uint64_t(at) * map.elementBytes;
    }
    std::fill(element.begin(), element.end(), 0);
    if (inBounds)
      if (std::string error = readGlobal(map.globalAddress + offset,
                                         map.elementBytes, element.data());
          !error.empty())
        return error;
    const uint32_t base = dst + static_cast<uint32_t>(n * map.elementBytes);
    for (unsigned i = 0; i < map.elementBytes; ++i)
      writeShared(swizzled(base + i), element[i]);
  }
  return {};
}
