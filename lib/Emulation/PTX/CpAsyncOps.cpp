//===- CpAsyncOps.cpp - cp.async and the non-tensor cp.async.bulk ---------===//
//
// The asynchronous copies of the sm_100a/sm_103a instruction set, each
// complete when issued: cp.async.bulk global -> shared with complete-tx on an
// mbarrier and shared -> global (PTX ISA §9.7.9.25.4.1), the tiled tensor
// load cp.async.bulk.tensor (TMA, §9.7.9.25.5.2, on the tensor maps the host
// made with nvgpu.tma.create.descriptor; fp4train/Emulation/Tma.h; with
// .multicast::cluster into several CTAs of the cluster, and .cta_group::2's
// signal to the destination's pair), and the
// non-bulk cp.async global -> shared, zero-filling past src-size (PTX ISA
// §9.7.9.25.3.1). Their commit-group and wait-group ops are no-ops, executed
// by the dispatcher (Tcgen05Instructions.cpp).
//
//===----------------------------------------------------------------------===//

#include "Tcgen05Common.h"

#include "fp4train/Emulation/Tma.h"

#include "llvm/Support/FormatVariadic.h"

#include <vector>

namespace mlir::fp4train::emulation::tcgen05 {

//===----------------------------------------------------------------------===//
// cp.async.bulk (non-tensor bulk copies, PTX ISA §9.7.9.25.4.1)
//===----------------------------------------------------------------------===//

/// The size operand of a bulk copy in `lane`: a multiple of 16 bytes.
static FailureOr<uint32_t> getBulkSize(ExecutionContext &context, Value size,
                                       unsigned lane) {
  const uint32_t bytes = context.getWord(size, lane);
  if (bytes % 16)
    return context.fail(llvm::formatv("cp.async.bulk size {0} is not a "
                                      "multiple of 16",
                                      bytes));
  return bytes;
}

/// cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes: per
/// issuing thread, `size` (a multiple of 16) bytes from global to shared
/// memory through the asynchronous proxy, then complete-tx of `size` on the
/// mbarrier (the cluster is the one CTA).
LogicalResult executeBulkLoad(NVVM::CpAsyncBulkGlobalToSharedClusterOp copy,
                              ExecutionContext &context) {
  if (copy.getMulticastMask())
    return context.fail("cp.async.bulk with a CTA multicast mask is not "
                        "modelled");
  return forEachIssuingLane(context, [&](unsigned lane) -> LogicalResult {
    FailureOr<uint32_t> size = getBulkSize(context, copy.getSize(), lane);
    if (failed(size))
      return failure();
    std::vector<uint8_t> bytes(*size);
    if (failed(context.accessGlobal(getWord64(context, copy.getSrcMem(), lane),
                                    *size, /*write=*/false, bytes.data())) ||
        failed(context.writeShared(getWord64(context, copy.getDstMem(), lane),
                                   *size, lane / context.getSubgroupSize(),
                                   bytes.data(), /*asyncProxy=*/true)))
      return failure();
    return completeTransaction(context,
                               getWord64(context, copy.getMbar(), lane), *size);
  });
}

//===----------------------------------------------------------------------===//
// Tensor maps and cp.async.bulk.tensor (TMA)
//===----------------------------------------------------------------------===//

LogicalResult executeCreateTensorMap(nvgpu::TmaCreateDescriptorOp create,
                                     ExecutionContext &context) {
  nvgpu::TensorMapDescriptorType type = create.getTensorMap().getType();
  if (type.getInterleave() != nvgpu::TensorMapInterleaveKind::INTERLEAVE_NONE)
    return context.fail("interleaved tensor maps are not modelled");
  if (type.getOob() != nvgpu::TensorMapOOBKind::OOB_ZERO)
    return context.fail("only the zero out-of-bounds fill is modelled");
  FailureOr<ExecutionContext::GlobalMemRef> tensor =
      context.getGlobalMemRef(create.getTensor());
  if (failed(tensor))
    return failure();
  ptx::TensorMap map;
  map.globalAddress = tensor->address;
  map.rank = tensor->sizes.size();
  map.elementBytes = tensor->elementBytes;
  if (map.rank < 1 || map.rank > ptx::kTensorMapMaxRank ||
      create.getBoxDimensions().size() != map.rank)
    return context.fail(llvm::formatv(
        "a tensor map of a rank-{0} memref takes {0} box sizes (rank 1..5)",
        map.rank));
  // The memref's dimensions, innermost first, as cuTensorMapEncodeTiled
  // takes them (strides in bytes; the innermost must be contiguous).
  for (unsigned d = 0; d < map.rank; ++d) {
    const unsigned dim = map.rank - 1 - d;
    map.sizes[d] = static_cast<uint64_t>(tensor->sizes[dim]);
    map.strides[d] =
        static_cast<uint64_t>(tensor->strides[dim]) * map.elementBytes;
    map.box[d] = static_cast<uint32_t>(
        context.get(create.getBoxDimensions()[dim]).at(0));
  }
  if (tensor->strides.back() != 1)
    return context.fail("the innermost dimension of a tensor map must be "
                        "contiguous");
  // TensorMapSwizzleKind: none, 32B, 64B, 128B (0..3).
  static constexpr ptx::SwizzleMode kModes[] = {
      ptx::SwizzleMode::None, ptx::SwizzleMode::B32, ptx::SwizzleMode::B64,
      ptx::SwizzleMode::B128};
  map.swizzle = kModes[static_cast<unsigned>(type.getSwizzle())];
  // TensorMapL2PromoKind: none, 64B, 128B, 256B (0..3).
  static constexpr unsigned kPromotions[] = {0, 64, 128, 256};
  map.l2Promotion = kPromotions[static_cast<unsigned>(type.getL2promo())];
  if (std::string error = ptx::checkTensorMap(map); !error.empty())
    return context.fail("cuTensorMapEncodeTiled would refuse it: " + error);
  const uint64_t address = context.allocateGlobal(ptx::encodeTensorMap(map));
  context.define(create.getTensorMap()).at(0) = address;
  return success();
}

LogicalResult
executeTensorLoad(NVVM::CpAsyncBulkTensorGlobalToSharedClusterOp copy,
                  ExecutionContext &context) {
  if (copy.getMode() != NVVM::TMALoadMode::TILE ||
      !copy.getIm2colOffsets().empty())
    return context.fail("only the tile mode of cp.async.bulk.tensor is "
                        "modelled");
  if (copy.getPredicate())
    return context.fail("a predicated cp.async.bulk.tensor is not modelled");
  const bool pairSignal =
      copy.getGroup() && *copy.getGroup() == NVVM::CTAGroupKind::CTA_2;
  return forEachIssuingLane(context, [&](unsigned lane) -> LogicalResult {
    std::vector<uint8_t> bytes(ptx::kTensorMapBytes);
    if (failed(context.accessGlobal(
            getWord64(context, copy.getTmaDescriptor(), lane),
            ptx::kTensorMapBytes, /*write=*/false, bytes.data())))
      return failure();
    ptx::TensorMap map;
    if (std::string error = ptx::decodeTensorMap(bytes, &map); !error.empty())
      return context.fail(error);
    SmallVector<int32_t> coords;
    for (Value coordinate : copy.getCoordinates())
      coords.push_back(static_cast<int32_t>(context.getWord(coordinate, lane)));
    FailureOr<ClusterAddress> dst = decodeClusterAddress(
        context, getWord64(context, copy.getDstMem(), lane),
        "cp.async.bulk.tensor's destination");
    FailureOr<ClusterAddress> mbar =
        decodeClusterAddress(context, getWord64(context, copy.getMbar(), lane),
                             "cp.async.bulk.tensor's mbarrier");
    if (failed(dst) || failed(mbar))
      return failure();
    const uint64_t boxBytes = ptx::getBoxBytes(map);
    if (failed(context.checkSharedAddress(dst->address, boxBytes)))
      return failure();
    // The destination CTAs: dstMem's, or with .multicast::cluster each CTA
    // of the mask (bit r: %cluster_ctarank r), at dstMem's offset.
    SmallVector<unsigned> ranks = {dst->rank};
    if (Value mask = copy.getMulticastMask()) {
      FailureOr<SmallVector<unsigned>> multicast =
          getMulticastRanks(context, context.getWord(mask, lane) & 0xFFFF,
                            "cp.async.bulk.tensor's multicast mask");
      if (failed(multicast))
        return failure();
      ranks = std::move(*multicast);
    }
    // Each destination's complete-tx: on the mbarrier at mbar's offset in
    // the destination CTA (.cta_group::1 and no .cta_group: mbar must lie
    // in the destination CTA without multicast), or with .cta_group::2 in
    // the CTA of the destination's pair whose rank parity is that of mbar's
    // CTA.
    auto signalled = [&](unsigned rank) -> FailureOr<unsigned> {
      if (pairSignal)
        return (rank & ~1u) | (mbar->rank & 1);
      if (!copy.getMulticastMask() && mbar->rank != rank)
        return context.fail(llvm::formatv(
            "cp.async.bulk.tensor writes CTA {0} but signals an mbarrier of "
            "CTA {1}: without .cta_group::2 both lie in the same CTA",
            rank, mbar->rank));
      return rank;
    };
    for (unsigned rank : ranks) {
      FailureOr<unsigned> barrierRank = signalled(rank);
      if (failed(barrierRank) ||
          failed(context.requireClusterMember(
              *barrierRank, "cp.async.bulk.tensor's mbarrier")))
        return failure();
      bool failedInCore = false;
      std::string error = ptx::loadTensorTile(
          map, coords, static_cast<uint32_t>(dst->address),
          [&](uint64_t address, unsigned size, uint8_t *out) -> std::string {
            if (succeeded(context.accessGlobal(address, size, false, out)))
              return {};
            failedInCore = true;
            return "global read failed";
          },
          [&](uint32_t address, uint8_t byte) {
            if (!failedInCore &&
                failed(context.writeClusterShared(rank, address, 1, &byte)))
              failedInCore = true;
          });
      if (failedInCore)
        return failure();
      if (!error.empty())
        return context.fail(error);
      if (failed(completeTransaction(
              context, encodeClusterAddress(*barrierRank, mbar->address),
              static_cast<uint32_t>(boxBytes))))
        return failure();
    }
    return success();
  });
}

/// cp.async.bulk.global.shared::cta.bulk_group: per issuing thread, `size`
/// bytes from shared to global memory (complete when issued, so the bulk
/// group's commit and wait are no-ops).
LogicalResult executeBulkStore(NVVM::CpAsyncBulkSharedCTAToGlobalOp copy,
                               ExecutionContext &context) {
  if (copy.getByteMask())
    return context.fail("cp.async.bulk with a byte mask is not modelled");
  return forEachIssuingLane(context, [&](unsigned lane) -> LogicalResult {
    FailureOr<uint32_t> size = getBulkSize(context, copy.getSize(), lane);
    if (failed(size))
      return failure();
    std::vector<uint8_t> bytes(*size);
    if (failed(context.readShared(getWord64(context, copy.getSrcMem(), lane),
                                  *size, lane / context.getSubgroupSize(),
                                  bytes.data(), /*asyncProxy=*/true)))
      return failure();
    return context.accessGlobal(getWord64(context, copy.getDstMem(), lane),
                                *size, /*write=*/true, bytes.data());
  });
}

//===----------------------------------------------------------------------===//
// cp.async (non-bulk, PTX ISA §9.7.9.25.3.1)
//===----------------------------------------------------------------------===//

/// cp.async.{ca,cg}.shared.global [dst], [src], cp-size{, src-size}: per
/// issuing thread, the first src-size bytes (cp-size when absent) of the
/// cp-size bytes at `src` (global) to `dst` (shared), the rest zero-filled
/// ("the remaining bytes are zero-filled"); src-size must not exceed
/// cp-size. The copy is a weak write of the executing thread (generic
/// proxy), modelled as complete when issued: cp.async.commit_group /
/// wait_group are no-ops, and a read of the destination before the
/// wait_group that would complete it is not reported.
LogicalResult executeCpAsync(NVVM::CpAsyncOp copy, ExecutionContext &context) {
  const uint32_t cpSize = copy.getSize();
  if (cpSize != 4 && cpSize != 8 && cpSize != 16)
    return context.fail(
        llvm::formatv("cp.async cp-size {0} is not 4, 8 or 16", cpSize));
  return forEachIssuingLane(context, [&](unsigned lane) -> LogicalResult {
    const uint32_t srcSize =
        copy.getCpSize() ? context.getWord(copy.getCpSize(), lane) : cpSize;
    if (srcSize > cpSize)
      return context.fail(llvm::formatv(
          "cp.async src-size {0} exceeds cp-size {1}", srcSize, cpSize));
    std::vector<uint8_t> bytes(cpSize, 0);
    if (srcSize &&
        failed(context.accessGlobal(getWord64(context, copy.getSrc(), lane),
                                    srcSize, /*write=*/false, bytes.data())))
      return failure();
    return context.writeShared(getWord64(context, copy.getDst(), lane), cpSize,
                               lane / context.getSubgroupSize(), bytes.data());
  });
}

} // namespace mlir::fp4train::emulation::tcgen05
