//===- LaunchFuncMemoryEffects.cpp - Effects of gpu.launch_func -----------===//

#include "fp4train/Conversion/FP4TrainGPUCommon/LaunchFuncMemoryEffects.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

using namespace mlir;

namespace {

struct LaunchFuncMemoryEffectsModel
    : public MemoryEffectOpInterface::ExternalModel<
          LaunchFuncMemoryEffectsModel, gpu::LaunchFuncOp> {
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
    // A kernel may also write memory it reaches otherwise (pointers in
    // arguments, globals): never let a launch look removable.
    effects.emplace_back(MemoryEffects::Write::get());
  }
};

struct TensorMapMemoryEffectsModel
    : public MemoryEffectOpInterface::ExternalModel<
          TensorMapMemoryEffectsModel, nvgpu::TmaCreateDescriptorOp> {
  void
  getEffects(Operation *op,
             SmallVectorImpl<SideEffects::EffectInstance<MemoryEffects::Effect>>
                 &effects) const {
    auto create = cast<nvgpu::TmaCreateDescriptorOp>(op);
    effects.emplace_back(MemoryEffects::Read::get(),
                         &create.getTensorMutable());
  }
};

} // namespace

void mlir::fp4train::registerTensorMapMemoryEffectsModel(
    DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *ctx, nvgpu::NVGPUDialect *) {
    nvgpu::TmaCreateDescriptorOp::attachInterface<TensorMapMemoryEffectsModel>(
        *ctx);
  });
}

void mlir::fp4train::registerGPULaunchFuncMemoryEffectsModel(
    DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *ctx, gpu::GPUDialect *) {
    gpu::LaunchFuncOp::attachInterface<LaunchFuncMemoryEffectsModel>(*ctx);
  });
}
