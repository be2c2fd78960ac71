//===- Registration.cpp - Register what fp4train tools need ---------------===//

#include "fp4train/InitFP4Train.h"

#include "fp4train/Conversion/FP4TrainGPUCommon/LaunchFuncMemoryEffects.h"
#include "fp4train/Conversion/Passes.h"
#include "fp4train/Dialect/FP4Train/IR/FP4TrainOps.h"
#include "fp4train/Dialect/FP4Train/Transforms/Passes.h"
#include "fp4train/Pipelines/Pipelines.h"
#include "fp4train/Sharding/Passes.h"
#include "fp4train/Sharding/ShardingModels.h"

#include "mlir/Conversion/ArithToLLVM/ArithToLLVM.h"
#include "mlir/Conversion/ControlFlowToLLVM/ControlFlowToLLVM.h"
#include "mlir/Conversion/FuncToLLVM/ConvertFuncToLLVM.h"
#include "mlir/Conversion/GPUCommon/GPUToLLVM.h"
#include "mlir/Conversion/IndexToLLVM/IndexToLLVM.h"
#include "mlir/Conversion/MPIToLLVM/MPIToLLVM.h"
#include "mlir/Conversion/MathToLLVM/MathToLLVM.h"
#include "mlir/Conversion/MemRefToLLVM/MemRefToLLVM.h"
#include "mlir/Conversion/NVVMToLLVM/NVVMToLLVM.h"
#include "mlir/Conversion/Passes.h"
#include "mlir/Conversion/UBToLLVM/UBToLLVM.h"
#include "mlir/Conversion/VectorToLLVM/ConvertVectorToLLVM.h"
#include "mlir/Dialect/AMDGPU/IR/AMDGPUDialect.h"
#include "mlir/Dialect/AMDGPU/Transforms/Passes.h"
#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Affine/Transforms/Passes.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Dialect/Arith/Transforms/ShardingInterfaceImpl.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Bufferization/Pipelines/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/FuncBufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlow.h"
#include "mlir/Dialect/ControlFlow/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/DLTI/DLTI.h"
#include "mlir/Dialect/Func/Extensions/AllExtensions.h"
#include "mlir/Dialect/Func/Extensions/ShardingExtensions.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Func/Transforms/Passes.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/Index/IR/IndexDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/LLVMIR/ROCDLDialect.h"
#include "mlir/Dialect/LLVMIR/Transforms/Passes.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/Linalg/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Linalg/Transforms/ShardingInterfaceImpl.h"
#include "mlir/Dialect/Linalg/Transforms/TilingInterfaceImpl.h"
#include "mlir/Dialect/MPI/IR/MPI.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/MemRef/IR/MemRefMemorySlot.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/SCF/Transforms/Passes.h"
#include "mlir/Dialect/Shard/IR/ShardDialect.h"
#include "mlir/Dialect/Tensor/Extensions/AllExtensions.h"
#include "mlir/Dialect/Tensor/Extensions/ShardingExtensions.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tensor/IR/TensorInferTypeOpInterfaceImpl.h"
#include "mlir/Dialect/Tensor/IR/TensorTilingInterfaceImpl.h"
#include "mlir/Dialect/Tensor/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Tensor/Transforms/Passes.h"
#include "mlir/Dialect/UB/IR/UBOps.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Dialect/Vector/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Vector/Transforms/Passes.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Target/LLVM/NVVM/Target.h"
#include "mlir/Target/LLVM/ROCDL/Target.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/GPU/GPUToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/NVVM/NVVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/ROCDL/ROCDLToLLVMIRTranslation.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

void mlir::fp4train::registerAllDialects(DialectRegistry &registry) {
  registry.insert<
      // Ours.
      fp4train::FP4TrainDialect,
      // A training graph: linalg on tensors and its scalar/structural ops.
      func::FuncDialect, arith::ArithDialect, math::MathDialect,
      linalg::LinalgDialect, tensor::TensorDialect, scf::SCFDialect,
      affine::AffineDialect, index::IndexDialect, ub::UBDialect,
      // Sharded steps: grids and shardings, the MPI calls they become and
      // the module's MPI implementation (a DLTI entry).
      shard::ShardDialect, mpi::MPIDialect, DLTIDialect,
      // Bufferized and vectorized forms.
      bufferization::BufferizationDialect, memref::MemRefDialect,
      vector::VectorDialect, cf::ControlFlowDialect,
      // GPU targets and the LLVM dialect every lowering ends in.
      gpu::GPUDialect, amdgpu::AMDGPUDialect, ROCDL::ROCDLDialect,
      NVVM::NVVMDialect, LLVM::LLVMDialect,
      // TMA tensor maps the host encodes for NVIDIA kernels.
      nvgpu::NVGPUDialect>();

  // Interface models that upstream keeps out of the dialects themselves.
  func::registerAllExtensions(registry);
  tensor::registerAllExtensions(registry);
  tensor::registerInferTypeOpInterfaceExternalModels(registry);
  tensor::registerTilingInterfaceExternalModels(registry);
  linalg::registerTilingInterfaceExternalModels(registry);
  memref::registerMemorySlotExternalModels(registry);

  // How each op of a step is partitioned (docs/sharding.md): upstream's
  // models, then ours for the fp4train ops and the upstream ops it lacks.
  arith::registerShardingInterfaceExternalModels(registry);
  func::registerShardingInterfaceExternalModels(registry);
  linalg::registerShardingInterfaceExternalModels(registry);
  tensor::registerShardingInterfaceExternalModels(registry);
  fp4train::registerShardingInterfaceModels(registry);
  fp4train::registerMPIMemoryEffectsModels(registry);

  arith::registerBufferizableOpInterfaceExternalModels(registry);
  bufferization::func_ext::registerBufferizableOpInterfaceExternalModels(
      registry);
  cf::registerBufferizableOpInterfaceExternalModels(registry);
  linalg::registerBufferizableOpInterfaceExternalModels(registry);
  scf::registerBufferizableOpInterfaceExternalModels(registry);
  tensor::registerBufferizableOpInterfaceExternalModels(registry);
  vector::registerBufferizableOpInterfaceExternalModels(registry);

  arith::registerConvertArithToLLVMInterface(registry);
  cf::registerConvertControlFlowToLLVMInterface(registry);
  registerConvertFuncToLLVMInterface(registry);
  gpu::registerConvertGpuToLLVMInterface(registry);
  index::registerConvertIndexToLLVMInterface(registry);
  mpi::registerConvertMPIToLLVMInterface(registry);
  registerConvertMathToLLVMInterface(registry);
  registerConvertMemRefToLLVMInterface(registry);
  registerConvertNVVMToLLVMInterface(registry);
  ub::registerConvertUBToLLVMInterface(registry);
  vector::registerConvertVectorToLLVMInterface(registry);

  // `#rocdl.target` / `#nvvm.target` serialization for gpu-module-to-binary.
  ROCDL::registerROCDLTargetInterfaceExternalModels(registry);
  NVVM::registerNVVMTargetInterfaceExternalModels(registry);
  // What those targets translate device code with.
  registerBuiltinDialectTranslation(registry);
  registerGPUDialectTranslation(registry);
  registerLLVMDialectTranslation(registry);
  registerNVVMDialectTranslation(registry);
  registerROCDLDialectTranslation(registry);
  // Lets buffer deallocation run on host code that launches kernels.
  fp4train::registerGPULaunchFuncMemoryEffectsModel(registry);
  fp4train::registerTensorMapMemoryEffectsModel(registry);
}

void mlir::fp4train::registerAllPasses() {
  // Ours.
  fp4train::registerFP4TrainPasses();
  fp4train::registerFP4TrainConversionPasses();
  fp4train::registerPipelines();

  // Generic transformations (canonicalize, cse, inline, ...).
  registerTransformsPasses();

  // Dialect transformations used between the training graph and LLVM.
  affine::registerAffinePasses();
  amdgpu::registerAMDGPUPasses();
  arith::registerArithPasses();
  bufferization::registerBufferizationPasses();
  func::registerFuncPasses();
  registerGPUPasses();
  registerLinalgPasses();
  LLVM::registerLLVMPasses();
  memref::registerMemRefPasses();
  math::registerMathPasses();
  registerSCFPasses();
  fp4train::registerShardingPasses();
  tensor::registerTensorPasses();
  vector::registerVectorPasses();

  // Conversions down to the LLVM, ROCDL and NVVM dialects.
  registerArithToAMDGPUConversionPass();
  registerArithToLLVMConversionPass();
  registerConvertAMDGPUToROCDLPass();
  registerConvertBufferizationToMemRefPass();
  bufferization::registerBufferizationPipelines();
  registerConvertControlFlowToLLVMPass();
  registerConvertFuncToLLVMPass();
  registerConvertGpuOpsToNVVMOps();
  registerConvertGpuOpsToROCDLOps();
  registerConvertIndexToLLVMPass();
  registerConvertLinalgToStandardPass();
  registerConvertMathToLLVMPass();
  registerConvertMathToLibmPass();
  registerConvertMathToROCDL();
  registerConvertNVVMToLLVMPass();
  registerConvertParallelLoopToGpuPass();
  registerConvertShardToMPIPass();
  registerConvertToLLVMPass();
  registerConvertVectorToLLVMPass();
  registerConvertVectorToSCF();
  registerFinalizeMemRefToLLVMConversionPass();
  registerGpuToLLVMConversionPass();
  registerLowerAffinePass();
  registerReconcileUnrealizedCastsPass();
  registerSCFToControlFlowPass();
  registerUBToLLVMConversionPass();
}
