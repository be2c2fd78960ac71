//===- Tma.h - Tensor maps and the tiled TMA load (cp.async.bulk.tensor) --===//
//
// Models of the Tensor Memory Accelerator's tiled loads, from the PTX ISA
// and the CUDA driver API, plain C++ like the other PTX models:
//  - a tensor map (PTX ISA §5.5.x "Tensor", "Tensor-map"; CUDA driver API
//    cuTensorMapEncodeTiled): a tensor of rank 1..5 at a global address,
//    its sizes (innermost first) and the byte strides of dimensions 1..
//    rank-1 (dimension 0 is contiguous), the element size, the box (the
//    tile a load moves, 1..256 elements per dimension), the shared-memory
//    swizzle (none, 32-, 64-, 128-byte) and the out-of-bounds fill (zero).
//    Encoding constraints checked as cuTensorMapEncodeTiled states them:
//    a 16-byte aligned address, strides multiples of 16 below 2^40, sizes in
//    1..2^32, the inner box dimension a multiple of 16 bytes and, swizzled,
//    at most the swizzle span; no interleave;
//  - cp.async.bulk.tensor.Nd.shared::cluster.global.tile
//    .mbarrier::complete_tx::bytes [dst], [tensorMap, {c0, .., cN-1}],
//    [mbar] (§9.7.9.25.5.2): the box whose first element is at the signed
//    element coordinates c goes to shared memory at dst, dense and in
//    row-major box order (dimension 0 innermost); elements outside the
//    tensor (any coordinate < 0 or >= its size) are filled with zeros; the
//    whole box's bytes complete-tx on the mbarrier. Swizzling (§5.5.x
//    "Tensor access modes", "Swizzling modes") permutes the 16-byte chunks
//    of each 32-/64-/128-byte span of the destination by the shared-memory
//    address: address bits [4, 4 + b) XOR bits [7, 7 + b), b = 1, 2, 3 (the
//    same pattern the MMA descriptors describe); dst must be 128-byte
//    aligned, and aligned to the pattern's repeat (256, 512, 1024 bytes) for
//    the modelled swizzles.
// A real CUtensorMap is an opaque 128-byte object; the emulator stores its
// own 128-byte encoding (encodeTensorMap) where the driver would put it, so
// that kernels pass it around as a pointer like the real one.
//
//===----------------------------------------------------------------------===//

#ifndef FP4TRAIN_EMULATION_TMA_H
#define FP4TRAIN_EMULATION_TMA_H

#include "fp4train/Emulation/Tcgen05.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/STLFunctionalExtras.h"

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace fp4train::emulation::ptx {

inline constexpr unsigned kTensorMapBytes = 128;
inline constexpr unsigned kTensorMapMaxRank = 5;

struct TensorMap {
  uint64_t globalAddress = 0;
  unsigned rank = 1;
  unsigned elementBytes = 1;
  /// Sizes in elements, dimension 0 innermost.
  std::array<uint64_t, kTensorMapMaxRank> sizes{};
  /// Byte strides of dimensions 1..rank-1 (strides[0] unused: contiguous).
  std::array<uint64_t, kTensorMapMaxRank> strides{};
  /// The box in elements per dimension.
  std::array<uint32_t, kTensorMapMaxRank> box{};
  /// None, B32, B64 or B128 (Tcgen05.h's enumeration).
  SwizzleMode swizzle = SwizzleMode::None;
  /// The L2 promotion in bytes (0, 64, 128 or 256): a performance hint the
  /// model keeps only to hand it on (fp4-gpu-prepare's manifest).
  unsigned l2Promotion = 0;
};

/// "" or which of cuTensorMapEncodeTiled's constraints `map` breaks.
std::string checkTensorMap(const TensorMap &map);

/// The emulator's 128-byte image of `map` (not NVIDIA's), and back; decode
/// fails on bytes that are no such image.
std::vector<uint8_t> encodeTensorMap(const TensorMap &map);
std::string decodeTensorMap(llvm::ArrayRef<uint8_t> bytes, TensorMap *map);

/// Bytes of one box.
uint64_t getBoxBytes(const TensorMap &map);

/// The tiled load of the box at `coords` (rank signed element coordinates)
/// to shared address `dst`: reads each in-bounds element through
/// `readGlobal(address, size, out)` and writes every byte of the box
/// through `writeShared(address, byte)` at its swizzled address.
std::string loadTensorTile(
    const TensorMap &map, llvm::ArrayRef<int32_t> coords, uint32_t dst,
    llvm::function_ref<std::string(uint64_t, unsigned, uint8_t *)> readGlobal,
    llvm::function_ref<void(uint32_t, uint8_t)> writeShared);

} // namespace fp4train::emulation::ptx

#endif // FP4TRAIN_EMULATION_TMA_H
