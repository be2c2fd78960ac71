//===- ClusterOps.cpp - Clusters: addresses, mapa, barrier.cluster --------===//
//
// The cluster ops of the sm_100a/sm_103a instruction set, on the core's
// clusters (ExecutionContext: the workgroups of a cluster run concurrently):
//  - the special registers (PTX ISA §10.12-10.17): %cluster_ctarank,
//    %cluster_nctarank, %cluster_ctaid, %cluster_nctaid, %clusterid,
//    %nclusterid;
//  - mapa.shared::cluster (§9.7.9.x "mapa"): the .shared::cluster address
//    of the variable at a shared address of the executing CTA in CTA b;
//  - barrier.cluster.arrive{.relaxed} and barrier.cluster.wait (§9.7.13.3):
//    a wait blocks until every non-exited thread of the cluster has
//    arrived; each thread arrives once per wait. The model keeps no memory
//    ordering apart (every access is complete when issued), so .relaxed
//    and .aligned change nothing but what a real GPU would require;
//  - the .cta_group rule of tcgen05 (§9.7.16.5): every tcgen05 instruction
//    of a kernel names the same .cta_group, and ::2 needs the peer CTA
//    (%cluster_ctarank ^ 1, §9.7.16.5.1/2) in the cluster.
//
//===----------------------------------------------------------------------===//

#include "Tcgen05Common.h"

#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/FormatVariadic.h"

namespace mlir::fp4train::emulation::tcgen05 {

FailureOr<ClusterAddress> decodeClusterAddress(ExecutionContext &context,
                                               uint64_t address,
                                               StringRef what) {
  const uint64_t tag = address >> kClusterRankShift;
  ClusterAddress result;
  result.address = address & ((uint64_t{1} << kClusterRankShift) - 1);
  if (tag == 0) {
    result.rank = context.getClusterRank();
    return result;
  }
  if (tag > 16)
    return context.fail(llvm::formatv(
        "{0} address {1:x} is neither a shared::cta address nor a "
        "shared::cluster address from mapa",
        what, address));
  result.rank = static_cast<unsigned>(tag - 1);
  if (failed(context.requireClusterMember(result.rank, what)))
    return failure();
  return result;
}

FailureOr<SmallVector<unsigned>>
getMulticastRanks(ExecutionContext &context, uint32_t mask, StringRef what) {
  SmallVector<unsigned> ranks;
  for (unsigned rank = 0; rank < 16; ++rank)
    if (mask >> rank & 1) {
      if (failed(context.requireClusterMember(rank, what)))
        return failure();
      ranks.push_back(rank);
    }
  return ranks;
}

FailureOr<unsigned> getPairEvenRank(ExecutionContext &context, StringRef what) {
  const unsigned even = context.getClusterRank() & ~1u;
  if (failed(context.requireClusterMember(context.getClusterRank() ^ 1, what)))
    return failure();
  return even;
}

LogicalResult useCtaGroup(ExecutionContext &context, bool ctaGroup2) {
  Tcgen05State &state = getState(context);
  const unsigned group = ctaGroup2 ? 2 : 1;
  if (state.ctaGroup && state.ctaGroup != group)
    return context.fail(llvm::formatv(
        "a tcgen05 instruction with .cta_group::{0} after ones with "
        ".cta_group::{1}: all of a kernel's must name the same group",
        group, state.ctaGroup));
  state.ctaGroup = group;
  if (ctaGroup2 && (context.getClusterRank() ^ 1) >= context.getClusterSize())
    return context.fail(llvm::formatv(
        ".cta_group::2 needs the peer CTA (rank {0}), but the cluster has {1} "
        "CTA(s)",
        context.getClusterRank() ^ 1, context.getClusterSize()));
  return success();
}

bool isClusterOp(Operation &op) {
  return isa<NVVM::ClusterId, NVVM::ClusterDim, NVVM::BlockInClusterIdXOp,
             NVVM::BlockInClusterIdYOp, NVVM::BlockInClusterIdZOp,
             NVVM::ClusterDimBlocksXOp, NVVM::ClusterDimBlocksYOp,
             NVVM::ClusterDimBlocksZOp, NVVM::ClusterIdXOp, NVVM::ClusterIdYOp,
             NVVM::ClusterIdZOp, NVVM::ClusterDimXOp, NVVM::ClusterDimYOp,
             NVVM::ClusterDimZOp, NVVM::MapaOp, NVVM::ClusterArriveOp,
             NVVM::ClusterArriveRelaxedOp, NVVM::ClusterWaitOp>(op);
}

LogicalResult executeClusterOp(Operation &op, ExecutionContext &context) {
  // A special register: the same value in every lane.
  auto uniform = [&](int64_t value) {
    LaneValues &out = context.define(op.getResult(0));
    context.forEachActiveLane(
        [&](unsigned lane) { out.at(lane) = static_cast<uint64_t>(value); });
    return success();
  };
  using Context = ExecutionContext;
  auto perDim = [&](int64_t (Context::*get)(unsigned) const, unsigned dim) {
    return uniform((context.*get)(dim));
  };
  return llvm::TypeSwitch<Operation *, LogicalResult>(&op)
      .Case([&](NVVM::ClusterId) { return uniform(context.getClusterRank()); })
      .Case([&](NVVM::ClusterDim) { return uniform(context.getClusterSize()); })
      .Case([&](NVVM::BlockInClusterIdXOp) {
        return perDim(&Context::getClusterBlockId, 0);
      })
      .Case([&](NVVM::BlockInClusterIdYOp) {
        return perDim(&Context::getClusterBlockId, 1);
      })
      .Case([&](NVVM::BlockInClusterIdZOp) {
        return perDim(&Context::getClusterBlockId, 2);
      })
      .Case([&](NVVM::ClusterDimBlocksXOp) {
        return perDim(&Context::getClusterDim, 0);
      })
      .Case([&](NVVM::ClusterDimBlocksYOp) {
        return perDim(&Context::getClusterDim, 1);
      })
      .Case([&](NVVM::ClusterDimBlocksZOp) {
        return perDim(&Context::getClusterDim, 2);
      })
      .Case(
          [&](NVVM::ClusterIdXOp) { return perDim(&Context::getClusterId, 0); })
      .Case(
          [&](NVVM::ClusterIdYOp) { return perDim(&Context::getClusterId, 1); })
      .Case(
          [&](NVVM::ClusterIdZOp) { return perDim(&Context::getClusterId, 2); })
      .Case([&](NVVM::ClusterDimXOp) {
        return perDim(&Context::getNumClusters, 0);
      })
      .Case([&](NVVM::ClusterDimYOp) {
        return perDim(&Context::getNumClusters, 1);
      })
      .Case([&](NVVM::ClusterDimZOp) {
        return perDim(&Context::getNumClusters, 2);
      })
      .Case([&](NVVM::MapaOp mapa) -> LogicalResult {
        if (!isa<LLVM::LLVMPointerType>(mapa.getA().getType()) ||
            cast<LLVM::LLVMPointerType>(mapa.getA().getType())
                    .getAddressSpace() != 3)
          return context.fail("only mapa.shared::cluster (of a shared::cta "
                              "address) is modelled");
        LaneValues &out = context.define(mapa.getRes());
        LogicalResult result = success();
        context.forEachActiveLane([&](unsigned lane) {
          if (failed(result))
            return;
          FailureOr<ClusterAddress> from = decodeClusterAddress(
              context, context.get(mapa.getA()).at(lane), "mapa's source");
          const unsigned rank = context.getWord(mapa.getB(), lane);
          if (failed(from) ||
              failed(context.requireClusterMember(rank, "mapa")) ||
              failed(context.checkSharedAddress(from->address, 1))) {
            result = failure();
            return;
          }
          out.at(lane) = encodeClusterAddress(rank, from->address);
        });
        return result;
      })
      .Case<NVVM::ClusterArriveOp, NVVM::ClusterArriveRelaxedOp>(
          [&](Operation *) { return context.clusterArrive(); })
      .Case([&](NVVM::ClusterWaitOp) { return context.clusterWait(); })
      .Default([&](Operation *) { return context.fail("not a cluster op"); });
}

} // namespace mlir::fp4train::emulation::tcgen05
