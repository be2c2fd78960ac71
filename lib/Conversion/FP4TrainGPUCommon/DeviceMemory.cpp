//===- DeviceMemory.cpp - The fp4train-gpu-device-memory pass -------------===//
//
// Kernels outlined from the GPU lowerings take the host function's buffers.
// A GPU without unified memory (an MI355X with XNACK off, any CUDA device
// with plain host allocations) cannot dereference those. This pass walks
// each host block in program order and keeps, per buffer (the root of a
// chain of view ops: a memref.alloc, a function argument, a global) that a
// kernel uses, a device twin and two bits: whether the host copy and the
// twin hold the current contents. Copies are inserted exactly where a side
// that is stale is about to be read, so a chain of kernels passing
// intermediate results (quantize -> GEMM) never goes through the host.
// A TMA tensor map (nvgpu.tma.create.descriptor, which the host encodes and
// a kernel reads through) is a device read of its tensor: it is made from
// the twin, current at that point.
//
//===----------------------------------------------------------------------===//

#include "fp4train/Conversion/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "llvm/ADT/MapVector.h"

namespace mlir::fp4train {
#define GEN_PASS_DEF_FP4TRAINGPUDEVICEMEMORY
#include "fp4train/Conversion/Passes.h.inc"
} // namespace mlir::fp4train

using namespace mlir;
using namespace mlir::fp4train;

namespace {

/// The op that makes `value` a view of another memref, or null.
ViewLikeOpInterface getViewOp(Value value) {
  auto view = value.getDefiningOp<ViewLikeOpInterface>();
  return view && view.getViewDest() == value ? view : nullptr;
}

/// The buffer `value` views: the end of its chain of view ops.
Value getRoot(Value value) {
  while (ViewLikeOpInterface view = getViewOp(value))
    value = view.getViewSource();
  return value;
}

/// How an op touches a memref it uses.
struct Access {
  bool reads = false, writes = false;
};

/// What `op` does to the memory `value` views. Ops that declare no effect
/// on it but take it anyway (a pointer extraction, a call) count as both.
Access getAccess(Operation *op, Value value) {
  auto effects = dyn_cast<MemoryEffectOpInterface>(op);
  if (!effects || op->getNumRegions() != 0)
    return {true, true};
  SmallVector<MemoryEffects::EffectInstance> instances;
  effects.getEffectsOnValue(value, instances);
  Access access;
  for (const MemoryEffects::EffectInstance &instance : instances) {
    access.reads |= isa<MemoryEffects::Read>(instance.getEffect());
    access.writes |= isa<MemoryEffects::Write>(instance.getEffect());
  }
  if (instances.empty() && !isa<memref::DimOp>(op))
    return {true, true};
  return access;
}

/// Whether a kernel may write through `value` (a gpu.func argument or a
/// view of one): a store, or a use the analysis cannot see through.
bool mayWrite(Value value) {
  for (Operation *user : value.getUsers()) {
    if (ViewLikeOpInterface view = dyn_cast<ViewLikeOpInterface>(user);
        view && view.getViewSource() == value) {
      if (mayWrite(view.getViewDest()))
        return true;
      continue;
    }
    if (auto metadata = dyn_cast<memref::ExtractStridedMetadataOp>(user)) {
      if (mayWrite(metadata.getBaseBuffer()))
        return true;
      continue;
    }
    if (getAccess(user, value).writes)
      return true;
  }
  return false;
}

/// Erases `value`'s chain of view ops as far as nothing else uses it (the
/// host views a launch no longer takes).
void eraseDeadViews(Value value) {
  while (ViewLikeOpInterface view = getViewOp(value)) {
    if (!value.use_empty())
      return;
    value = view.getViewSource();
    view->erase();
  }
}

/// Whether the host holds anything in `root` before the first host write:
/// false only for a fresh allocation of this block.
bool isFreshAllocation(Value root, Block &block) {
  Operation *def = root.getDefiningOp();
  return def && def->getBlock() == &block &&
         isa<memref::AllocOp, memref::AllocaOp>(def);
}

/// The state of the buffers of one block (DeviceMemoryPlacer::run).
class DeviceMemoryPlacer {
public:
  explicit DeviceMemoryPlacer(Block &block) : block(block) {}

  /// Rewrites the launches of the block (and of nested regions) to device
  /// twins with the copies they need; every buffer is current on the host
  /// again at the block's terminator.
  LogicalResult run();

private:
  struct Buffer {
    /// The gpu.alloc twin.
    Value device;
    bool hostCurrent = true;
    bool deviceCurrent = false;
    /// The host copy holds data (a fresh allocation holds none until a
    /// host op or a copy-back writes it).
    bool hostDefined = true;
  };

  LogicalResult visitLaunch(gpu::LaunchFuncOp launch);
  /// Makes `operand` (of `op`, a view of a host buffer) the same view of the
  /// buffer's twin, copying the host contents in when the twin is stale;
  /// returns the buffer's root.
  FailureOr<Value> useOnDevice(Operation *op, OpOperand &operand);
  LogicalResult visitTensorMap(nvgpu::TmaCreateDescriptorOp create);
  void visitHostOp(Operation *op);
  LogicalResult visitRegions(Operation *op);
  /// The twin of `root`, allocated before `before` on first use.
  FailureOr<Buffer *> getBuffer(Value root, Operation *before);
  /// `value` (a view of `root`) rebuilt as the same view of the twin.
  Value getDeviceView(OpBuilder &b, Value value, Value root, Value device);
  void copyToHost(Value root, Buffer &buffer, Operation *before);
  /// Makes every buffer current on the host before `op`; with `release`,
  /// also frees the twins (the block ends at `op`).
  void syncToHost(Operation *op, bool release);

  Block &block;
  llvm::MapVector<Value, Buffer> buffers;
  /// Fresh allocations that a host op wrote before any kernel used them.
  DenseSet<Value> hostWritten;
};

LogicalResult DeviceMemoryPlacer::run() {
  for (Operation &op : llvm::make_early_inc_range(block)) {
    if (op.hasTrait<OpTrait::IsTerminator>()) {
      syncToHost(&op, /*release=*/true);
      continue;
    }
    if (auto launch = dyn_cast<gpu::LaunchFuncOp>(op)) {
      if (failed(visitLaunch(launch)))
        return failure();
      continue;
    }
    if (auto create = dyn_cast<nvgpu::TmaCreateDescriptorOp>(op)) {
      if (failed(visitTensorMap(create)))
        return failure();
      continue;
    }
    if (auto dealloc = dyn_cast<memref::DeallocOp>(op)) {
      // The contents die with the buffer: free the twin, copy nothing.
      Value root = getRoot(dealloc.getMemref());
      auto it = buffers.find(root);
      if (it != buffers.end()) {
        OpBuilder b(&op);
        gpu::DeallocOp::create(b, op.getLoc(), Type(), ValueRange(),
                               it->second.device);
        buffers.erase(it);
      }
      continue;
    }
    // Views and shape queries touch no data; twins made by an earlier run
    // of the pass (or by the input) are device memory already.
    if (isa<ViewLikeOpInterface, memref::DimOp, gpu::AllocOp, gpu::DeallocOp>(
            op))
      continue;
    bool hasLaunch = false;
    op.walk([&](gpu::LaunchFuncOp) {
      hasLaunch = true;
      return WalkResult::interrupt();
    });
    if (hasLaunch) {
      if (failed(visitRegions(&op)))
        return failure();
      continue;
    }
    visitHostOp(&op);
  }
  return success();
}

FailureOr<DeviceMemoryPlacer::Buffer *>
DeviceMemoryPlacer::getBuffer(Value root, Operation *before) {
  auto it = buffers.find(root);
  if (it != buffers.end())
    return &it->second;
  auto type = dyn_cast<MemRefType>(root.getType());
  if (!type || !type.getLayout().isIdentity() || type.getMemorySpace()) {
    return emitError(before->getLoc())
           << "a kernel operand views buffer of type " << root.getType()
           << ", which has no device twin: fp4train-gpu-device-memory needs "
              "an identity layout in the default memory space";
  }
  OpBuilder b(before);
  Location loc = before->getLoc();
  SmallVector<Value> sizes;
  for (int64_t d = 0; d < type.getRank(); ++d)
    if (type.isDynamicDim(d))
      sizes.push_back(memref::DimOp::create(b, loc, root, d));
  Buffer buffer;
  buffer.device =
      gpu::AllocOp::create(b, loc, type, /*asyncToken=*/Type(),
                           /*asyncDependencies=*/ValueRange(), sizes,
                           /*symbolOperands=*/ValueRange(),
                           /*hostShared=*/false)
          .getMemref();
  buffer.hostDefined =
      !isFreshAllocation(root, block) || hostWritten.contains(root);
  return &buffers.insert({root, buffer}).first->second;
}

Value DeviceMemoryPlacer::getDeviceView(OpBuilder &b, Value value, Value root,
                                        Value device) {
  SmallVector<Operation *> chain;
  for (Value v = value; v != root; v = getViewOp(v).getViewSource())
    chain.push_back(v.getDefiningOp());
  IRMapping mapping;
  mapping.map(root, device);
  Value result = device;
  for (Operation *view : llvm::reverse(chain)) {
    Value dest = cast<ViewLikeOpInterface>(view).getViewDest();
    result = b.clone(*view, mapping)
                 ->getResult(cast<OpResult>(dest).getResultNumber());
  }
  return result;
}

LogicalResult DeviceMemoryPlacer::visitLaunch(gpu::LaunchFuncOp launch) {
  auto kernel = SymbolTable::lookupNearestSymbolFrom<gpu::GPUFuncOp>(
      launch, launch.getKernel());
  if (!kernel)
    return launch.emitOpError("kernel ") << launch.getKernel() << " not found";
  // The copies are synchronous: they order against synchronous launches
  // only (gpu-async-region runs after this pass).
  if (launch.getAsyncToken() || !launch.getAsyncDependencies().empty())
    return launch.emitOpError(
        "is asynchronous: fp4train-gpu-device-memory places synchronous "
        "copies around synchronous launches (run it before "
        "gpu-async-region)");
  SmallVector<Value> written;
  MutableOperandRange operands = launch.getKernelOperandsMutable();
  for (unsigned i = 0, e = operands.size(); i < e; ++i) {
    if (!isa<MemRefType>(operands[i].get().getType()) ||
        getRoot(operands[i].get()).getDefiningOp<gpu::AllocOp>())
      continue;
    FailureOr<Value> root = useOnDevice(launch, operands[i]);
    if (failed(root))
      return failure();
    if (i >= kernel.getNumArguments() || mayWrite(kernel.getArgument(i)))
      written.push_back(*root);
  }
  for (Value root : written) {
    Buffer &buffer = buffers.find(root)->second;
    buffer.hostCurrent = false;
    buffer.hostDefined = true;
  }
  return success();
}

FailureOr<Value> DeviceMemoryPlacer::useOnDevice(Operation *op,
                                                 OpOperand &operand) {
  Value value = operand.get();
  Value root = getRoot(value);
  FailureOr<Buffer *> buffer = getBuffer(root, op);
  if (failed(buffer))
    return failure();
  OpBuilder b(op);
  if (!(*buffer)->deviceCurrent) {
    if ((*buffer)->hostDefined)
      gpu::MemcpyOp::create(b, op->getLoc(), Type(), ValueRange(),
                            (*buffer)->device, root);
    (*buffer)->deviceCurrent = true;
  }
  operand.set(getDeviceView(b, value, root, (*buffer)->device));
  eraseDeadViews(value);
  return root;
}

LogicalResult
DeviceMemoryPlacer::visitTensorMap(nvgpu::TmaCreateDescriptorOp create) {
  // The kernels that take the map read the tensor through it (TMA loads;
  // fp4train's kernels store nothing through a map), so the host copy
  // stays current.
  OpOperand &tensor = create.getTensorMutable();
  if (getRoot(tensor.get()).getDefiningOp<gpu::AllocOp>())
    return success();
  return useOnDevice(create, tensor);
}

void DeviceMemoryPlacer::copyToHost(Value root, Buffer &buffer,
                                    Operation *before) {
  if (buffer.hostCurrent)
    return;
  OpBuilder b(before);
  gpu::MemcpyOp::create(b, before->getLoc(), Type(), ValueRange(), root,
                        buffer.device);
  buffer.hostCurrent = true;
}

void DeviceMemoryPlacer::visitHostOp(Operation *op) {
  // The memrefs the op uses, directly or from inside its regions.
  SetVector<Value> used;
  for (Value operand : op->getOperands())
    used.insert(operand);
  op->walk([&](Operation *nested) {
    for (Value operand : nested->getOperands())
      if (!op->isAncestor(operand.getParentRegion()->getParentOp()))
        used.insert(operand);
  });
  for (Value value : used) {
    if (!isa<MemRefType>(value.getType()))
      continue;
    Value root = getRoot(value);
    const Access access = getAccess(op, value);
    if (access.writes && isFreshAllocation(root, block))
      hostWritten.insert(root);
    auto it = buffers.find(root);
    if (it == buffers.end())
      continue;
    // A partial write needs the current contents too.
    if (access.reads || access.writes)
      copyToHost(root, it->second, op);
    if (access.writes)
      it->second.deviceCurrent = false;
  }
}

LogicalResult DeviceMemoryPlacer::visitRegions(Operation *op) {
  // Nested blocks start and end with every buffer current on the host.
  syncToHost(op, /*release=*/false);
  for (Region &region : op->getRegions())
    for (Block &nested : region)
      if (failed(DeviceMemoryPlacer(nested).run()))
        return failure();
  for (auto &[root, buffer] : buffers)
    buffer.deviceCurrent = false;
  return success();
}

void DeviceMemoryPlacer::syncToHost(Operation *op, bool release) {
  for (auto &[root, buffer] : buffers)
    copyToHost(root, buffer, op);
  if (!release)
    return;
  OpBuilder b(op);
  for (auto &[root, buffer] : buffers)
    gpu::DeallocOp::create(b, op->getLoc(), Type(), ValueRange(),
                           buffer.device);
  buffers.clear();
}

struct FP4TrainGPUDeviceMemoryPass
    : public fp4train::impl::FP4TrainGPUDeviceMemoryBase<
          FP4TrainGPUDeviceMemoryPass> {
  using Base::Base;

  void runOnOperation() override {
    WalkResult result = getOperation().walk([](func::FuncOp function) {
      for (Block &block : function.getBody())
        if (failed(DeviceMemoryPlacer(block).run()))
          return WalkResult::interrupt();
      return WalkResult::advance();
    });
    if (result.wasInterrupted())
      signalPassFailure();
  }
};

} // namespace
