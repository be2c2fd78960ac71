//===- NVVMPipelinePasses.cpp - The CUDA pipeline's own passes ------------===//
//
// The passes fp4train-cuda-pipeline runs around the upstream NVVM lowering:
// the occupancy hint of kernels that fill an SM's shared memory, the check
// that no kernel calls libdevice, the early check that format=bin has a
// ptxas to run, and the release of the host's TMA tensor maps.
//
//===----------------------------------------------------------------------===//

#include "fp4train/Conversion/FP4TrainToNVVM/FP4TrainToNVVM.h"
#include "fp4train/Conversion/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Matchers.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Process.h"

namespace mlir::fp4train {
#define GEN_PASS_DEF_FP4TRAINSINGLEWORKGROUPOCCUPANCY
#define GEN_PASS_DEF_FP4TRAINKERNELCLUSTERSIZE
#define GEN_PASS_DEF_FP4TRAINCHECKNOLIBDEVICE
#define GEN_PASS_DEF_FP4TRAINCHECKPTXAS
#define GEN_PASS_DEF_FP4TRAINFREETENSORMAPS
#include "fp4train/Conversion/Passes.h.inc"
} // namespace mlir::fp4train

using namespace mlir;
using namespace mlir::fp4train;

std::string mlir::fp4train::getCUDAToolkitPath(StringRef option) {
  if (!option.empty())
    return option.str();
  for (const char *variable : {"CUDA_ROOT", "CUDA_HOME", "CUDA_PATH"})
    if (std::optional<std::string> value = llvm::sys::Process::GetEnv(variable))
      if (!value->empty())
        return *value;
  return "/usr/local/cuda";
}

namespace {

struct FreeTensorMapsPass
    : public mlir::fp4train::impl::FP4TrainFreeTensorMapsBase<
          FreeTensorMapsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<LLVM::CallOp> encodes;
    module.walk([&](LLVM::CallOp call) {
      if (call.getCallee() == "mgpuTensorMapEncodeTiledMemref" &&
          call.getNumResults() == 1 &&
          llvm::all_of(call.getResult().getUsers(), [&](Operation *user) {
            return user->getBlock() == call->getBlock();
          }))
        encodes.push_back(call);
    });
    if (encodes.empty())
      return;
    MLIRContext *ctx = &getContext();
    auto ptr = LLVM::LLVMPointerType::get(ctx);
    auto freeType =
        LLVM::LLVMFunctionType::get(LLVM::LLVMVoidType::get(ctx), {ptr, ptr});
    // The runtime wrappers' mgpuMemFree(ptr, stream): cuMemFree, which the
    // stream does not change (gpu.dealloc lowers to the same call).
    auto free = module.lookupSymbol<LLVM::LLVMFuncOp>("mgpuMemFree");
    if (!free) {
      OpBuilder b = OpBuilder::atBlockEnd(module.getBody());
      free =
          LLVM::LLVMFuncOp::create(b, module.getLoc(), "mgpuMemFree", freeType);
    } else if (free.getFunctionType() != freeType) {
      free.emitOpError("is not mgpuMemFree(ptr, ptr), which frees the tensor "
                       "maps");
      return signalPassFailure();
    }
    for (LLVM::CallOp encode : encodes) {
      OpBuilder b(encode->getBlock()->getTerminator());
      Value noStream = LLVM::ZeroOp::create(b, encode.getLoc(), ptr);
      LLVM::CallOp::create(b, encode.getLoc(), free,
                           ValueRange{encode.getResult(), noStream});
    }
  }
};

struct SingleWorkgroupOccupancyPass
    : public mlir::fp4train::impl::FP4TrainSingleWorkgroupOccupancyBase<
          SingleWorkgroupOccupancyPass> {
  void runOnOperation() override {
    constexpr int64_t kHalfSharedMemoryPerSM = 228 * 1024 / 2;
    ModuleOp module = getOperation();
    module.walk([&](gpu::LaunchFuncOp launch) {
      Value size = launch.getDynamicSharedMemorySize();
      APInt bytes;
      if (!size || !matchPattern(size, m_ConstantInt(&bytes)) ||
          bytes.getSExtValue() <= kHalfSharedMemoryPerSM)
        return;
      if (auto kernel = SymbolTable::lookupNearestSymbolFrom<gpu::GPUFuncOp>(
              launch, launch.getKernel()))
        kernel->setAttr(
            "nvvm.minctasm",
            IntegerAttr::get(IntegerType::get(&getContext(), 32), 1));
    });
  }
};

struct KernelClusterSizePass
    : public mlir::fp4train::impl::FP4TrainKernelClusterSizeBase<
          KernelClusterSizePass> {
  void runOnOperation() override {
    getOperation().walk([&](gpu::LaunchFuncOp launch) {
      if (!launch.hasClusterSize())
        return;
      SmallVector<int32_t, 3> sizes;
      for (Value size : {launch.getClusterSizeX(), launch.getClusterSizeY(),
                         launch.getClusterSizeZ()}) {
        APInt value;
        if (!matchPattern(size, m_ConstantInt(&value)))
          return;
        sizes.push_back(static_cast<int32_t>(value.getSExtValue()));
      }
      auto kernel = SymbolTable::lookupNearestSymbolFrom<gpu::GPUFuncOp>(
          launch, launch.getKernel());
      if (!kernel)
        return;
      auto known = DenseI32ArrayAttr::get(&getContext(), sizes);
      if (auto previous = kernel.getKnownClusterSizeAttr();
          previous && previous != known) {
        launch.emitError("launches kernel ")
            << kernel.getName() << " with another cluster size than before";
        return signalPassFailure();
      }
      kernel.setKnownClusterSizeAttr(known);
    });
  }
};

struct CheckNoLibdevicePass
    : public mlir::fp4train::impl::FP4TrainCheckNoLibdeviceBase<
          CheckNoLibdevicePass> {
  void runOnOperation() override {
    getOperation().walk([&](LLVM::LLVMFuncOp function) {
      if (function.isExternal() && function.getName().starts_with("__nv_")) {
        function.emitError("kernel code references libdevice function ")
            << function.getName()
            << ": fp4train kernels must not call math library functions";
        signalPassFailure();
      }
    });
  }
};

struct CheckPtxasPass
    : public mlir::fp4train::impl::FP4TrainCheckPtxasBase<CheckPtxasPass> {
  using Base::Base;

  void runOnOperation() override {
    std::string ptxas = getCUDAToolkitPath(toolkit) + "/bin/ptxas";
    if (llvm::sys::fs::can_execute(ptxas))
      return;
    getOperation().emitError("format=bin needs ptxas from the CUDA toolkit: ")
        << ptxas
        << " is not an executable; set toolkit= or $CUDA_ROOT, or use "
           "format=isa for PTX";
    signalPassFailure();
  }
};

} // namespace
