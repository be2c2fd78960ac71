//===- MPIMemoryEffects.cpp - Memory effects of the mpi ops ---------------===//
//
// MLIR 22's mpi ops that communicate declare no memory effects, so buffer
// deallocation refuses a function that holds one ("ops with unknown memory
// side effects are not supported") and, lacking both effects and results,
// mpi.init and mpi.finalize would look removable. These models declare, as
// gpu.launch_func's does, that an op reads and writes every buffer it takes
// and has effects beyond them (the other processes).
//
//===----------------------------------------------------------------------===//

#include "fp4train/Sharding/ShardingModels.h"

#include "mlir/Dialect/MPI/IR/MPI.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

using namespace mlir;

namespace {

template <typename Op>
struct CommunicationEffectsModel
    : public MemoryEffectOpInterface::ExternalModel<
          CommunicationEffectsModel<Op>, Op> {
  void
  getEffects(Operation *op,
             SmallVectorImpl<SideEffects::EffectInstance<MemoryEffects::Effect>>
                 &effects) const {
    for (OpOperand &operand : op->getOpOperands()) {
      if (!isa<BaseMemRefType>(operand.get().getType()))
        continue;
      effects.emplace_back(MemoryEffects::Read::get(), &operand);
      effects.emplace_back(MemoryEffects::Write::get(), &operand);
    }
    effects.emplace_back(MemoryEffects::Write::get());
  }
};

template <typename... Ops> void attach(MLIRContext *ctx) {
  (Ops::template attachInterface<CommunicationEffectsModel<Ops>>(*ctx), ...);
}

} // namespace

void mlir::fp4train::registerMPIMemoryEffectsModels(DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *ctx, mpi::MPIDialect *) {
    attach<mpi::InitOp, mpi::FinalizeOp, mpi::AllReduceOp, mpi::SendOp,
           mpi::RecvOp, mpi::ISendOp, mpi::IRecvOp, mpi::Barrier, mpi::Wait>(
        ctx);
  });
}
