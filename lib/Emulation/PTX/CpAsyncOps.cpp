//===- CpAsyncOps.cpp - cp.async and the non-tensor cp.async.bulk ---------===//
//
// The asynchronous copies of the sm_100a/sm_103a instruction set, each
// complete when issued: cp.async.bulk global -> shared with complete-tx on an
// mbarrier and shared -> global (PTX ISA §9.7.9.25.4.1), and the non-bulk
// cp.async global -> shared, zero-filling past src-size (PTX ISA
// §9.7.9.25.3.1). Their commit-group and wait-group ops are no-ops, executed
// by the dispatcher (Tcgen05Instructions.cpp).
//
//===----------------------------------------------------------------------===//

#include "Tcgen05Common.h"

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
