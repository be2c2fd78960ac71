//===- Interpreter.cpp - Lockstep execution of host code and kernels -----===//
//
// The driver of the interpreter: dispatch by op family (one file each), the
// workgroups of a launch, the instruction set's view of the lanes, and the
// entry point. Every SSA value holds one entry per lane (the host is a
// single lane); a workgroup's threads run in lockstep under an execution
// mask; ops the core does not know go to the InstructionSet.
//
//===----------------------------------------------------------------------===//

#include "Executor.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "llvm/Support/FormatVariadic.h"

#include <cstring>

using namespace mlir;
using namespace mlir::fp4train::emulation;
using namespace mlir::fp4train::emulation::detail;

//===----------------------------------------------------------------------===//
// Dispatch
//===----------------------------------------------------------------------===//

LogicalResult Executor::fail(Operation *op, const Twine &message) {
  // Fibers failing after the first failure (their waits can no longer
  // complete) keep its message.
  if (fibers && !error.empty())
    return failure();
  std::string location;
  llvm::raw_string_ostream os(location);
  op->getLoc().print(os);
  error =
      llvm::formatv("{0}: '{1}': {2}", location, op->getName(), message.str());
  if (kernel)
    error += llvm::formatv(" (workgroup {0},{1},{2})", blockId[0], blockId[1],
                           blockId[2]);
  return failure();
}

LogicalResult Executor::run(Block &block, const Mask &mask,
                            SmallVectorImpl<Value> *yielded) {
  for (Operation &op : block) {
    if (op.hasTrait<OpTrait::IsTerminator>()) {
      if (isa<scf::YieldOp, func::ReturnOp, gpu::ReturnOp, linalg::YieldOp>(
              op)) {
        if (yielded)
          yielded->assign(op.getOperands().begin(), op.getOperands().end());
        return success();
      }
      return fail(&op, "unsupported terminator");
    }
    if (kernel) {
      // A subgroup issues an op when any of its lanes is active.
      for (unsigned subgroup = 0; subgroup < getNumSubgroups(); ++subgroup) {
        auto [first, end] = getSubgroupLanes(subgroup);
        if (std::find(mask.begin() + first, mask.begin() + end, 1) !=
            mask.begin() + end)
          ++stats.waveOps;
      }
    }
    if (failed(execute(op, mask)))
      return failure();
  }
  return success();
}

LogicalResult Executor::checkHostAccess(Operation &op) {
  // Copies, frees, views and launches (checked per operand) may hold
  // device buffers, and so may the host ops of the chip's instruction set,
  // whose models state what they do with one (a TMA tensor map encodes a
  // device buffer's address, reading nothing); any other host op reading or
  // writing one would fault.
  if (isa<gpu::MemcpyOp, gpu::DeallocOp, gpu::LaunchFuncOp, memref::DimOp,
          ViewLikeOpInterface>(op) ||
      instructionSet.handles(op))
    return success();
  for (Value operand : op.getOperands()) {
    auto it = views.find(operand);
    if (it != views.end() && it->second.memory && it->second.memory->device)
      return fail(&op, "host op touches device memory (a gpu.alloc buffer): "
                       "without unified memory it needs a gpu.memcpy to the "
                       "host first");
  }
  return success();
}

LogicalResult Executor::execute(Operation &op, const Mask &mask) {
  if (separateMemories && !kernel && failed(checkHostAccess(op)))
    return failure();
  // The instruction set judges its own ops' reads of pending values (a
  // wgmma may take the accumulator of one still in flight).
  if (!pending.empty() && !instructionSet.handles(op))
    for (Value operand : op.getOperands())
      if (auto it = pending.find(operand); it != pending.end())
        return fail(&op, "reads " + it->second);
  Dialect *dialect = op.getDialect();
  StringRef ns = dialect ? dialect->getNamespace() : "";
  // Intrinsics called by name (llvm.call_intrinsic: sm_90a's FP8 mma.sync,
  // tcgen05) belong to the target.
  if (isa<LLVM::CallIntrinsicOp>(op) && instructionSet.handles(op)) {
    ExecutionContext context(*this, op, mask);
    return instructionSet.execute(op, context);
  }
  if (ns == "arith")
    return executeArith(op, mask);
  if (ns == "math")
    return executeMath(op);
  if (ns == "vector")
    return executeVector(op, mask);
  if (ns == "memref")
    return executeMemRef(op, mask);
  if (ns == "llvm")
    return executeLLVM(op, mask);
  if (ns == "gpu")
    return executeGPU(op, mask);
  if (auto forOp = dyn_cast<scf::ForOp>(op))
    return executeFor(forOp, mask);
  if (auto ifOp = dyn_cast<scf::IfOp>(op))
    return executeIf(ifOp, mask);
  if (auto fill = dyn_cast<linalg::FillOp>(op))
    return executeFill(fill);
  // linalg.generic and the named ops (transpose, matmul, reduce, ...),
  // through their indexing maps and payload.
  if (auto structured = dyn_cast<linalg::LinalgOp>(op))
    return executeGeneric(structured);
  if (auto index = dyn_cast<linalg::IndexOp>(op)) {
    if (index.getDim() >= linalgPoint.size())
      return fail(&op, "outside a linalg.generic");
    values[index.getResult()] = uniform(
        index.getType(), {static_cast<Word>(linalgPoint[index.getDim()])});
    return success();
  }
  if (auto cast = dyn_cast<UnrealizedConversionCastOp>(op)) {
    if (cast->getNumOperands() != 1 || cast->getNumResults() != 1)
      return fail(&op, "only 1:1 casts are supported");
    Value from = cast.getOperand(0), to = cast.getResult(0);
    if (isa<MemRefType>(from.getType())) {
      alias(from, to);
      return success();
    }
    Lanes result(lanes, getWidth(to.getType()));
    repack(get(from), getElementBits(from.getType()), result,
           getElementBits(to.getType()), lanes);
    values[to] = std::move(result);
    return success();
  }
  // The target's intrinsics.
  if (instructionSet.handles(op)) {
    ExecutionContext context(*this, op, mask);
    return instructionSet.execute(op, context);
  }
  return failUnsupported(&op);
}

LogicalResult Executor::failUnsupported(Operation *op) {
  return fail(op, "operation not supported by the " + instructionSet.getName() +
                      " emulator");
}

LogicalResult Executor::launch(gpu::LaunchFuncOp op) {
  if (kernel)
    return fail(op, "nested launch");
  auto function =
      SymbolTable::lookupNearestSymbolFrom<gpu::GPUFuncOp>(op, op.getKernel());
  if (!function)
    return fail(op, "kernel not found");
  if (op.getClusterSizeX())
    return fail(op, "clusters are not supported");
  // Dynamic shared memory: a byte buffer of the launch's size per workgroup,
  // after the static attributions (CUDA's layout).
  int64_t dynamicBytes = 0;
  if (Value size = op.getDynamicSharedMemorySize()) {
    dynamicBytes = static_cast<int64_t>(static_cast<uint32_t>(get(size).at(0)));
  }
  gpu::KernelDim3 grid = op.getGridSizeOperandValues();
  gpu::KernelDim3 block = op.getBlockSizeOperandValues();
  auto scalar = [&](Value v) { return static_cast<int64_t>(get(v).at(0)); };
  const std::array<int64_t, 3> gridDim = {scalar(grid.x), scalar(grid.y),
                                          scalar(grid.z)};
  const std::array<int64_t, 3> blockDim = {scalar(block.x), scalar(block.y),
                                           scalar(block.z)};
  const int64_t threads = blockDim[0] * blockDim[1] * blockDim[2];
  if (threads <= 0 || threads > 1024)
    return fail(op, "workgroup size must be 1..1024");
  // The shared-memory shadow keeps a bit per subgroup.
  if ((threads + subgroupSize - 1) / subgroupSize > 64)
    return fail(op, "more than 64 subgroups in a workgroup");
  if (separateMemories)
    for (auto [i, operand] : llvm::enumerate(op.getKernelOperands())) {
      auto it = views.find(operand);
      if (it != views.end() && it->second.memory && !it->second.memory->device)
        return fail(op, llvm::formatv("kernel operand {0} is host memory: "
                                      "without unified memory the GPU cannot "
                                      "touch it (fp4train-gpu-device-memory "
                                      "gives kernels device buffers)",
                                      i));
    }
  ++stats.launches;

  LaunchInfo info;
  if (hooks && hooks->onLaunch) {
    info.op = op;
    info.grid = gridDim;
    info.block = blockDim;
    info.dynamicSharedBytes = dynamicBytes;
    info.findGlobal = [this](uint64_t address) -> std::optional<LaunchPointer> {
      Memory *memory = findGlobal(address, 1);
      if (!memory)
        return std::nullopt;
      return LaunchPointer{&memory->bytes, memory, address - memory->address};
    };
    for (Value operand : op.getKernelOperands()) {
      if (!isa<MemRefType>(operand.getType())) {
        info.operands.emplace_back(get(operand).at(0));
        continue;
      }
      const View &view = views[operand];
      info.operands.emplace_back(
          LaunchMemRef{&view.memory->bytes, view.memory.get(), view.offset,
                       view.sizes, view.strides, view.elementBytes});
    }
    hooks->onLaunch(info, /*after=*/false);
  }

  Block &body = function.getBody().front();
  ArrayRef<BlockArgument> workgroup = function.getWorkgroupAttributions();
  if (!function.getPrivateAttributions().empty())
    return fail(op, "private attributions are not supported");

  const int64_t groupsZ = !hooks || hooks->executeKernels ? gridDim[2] : 0;
  for (int64_t z = 0; z < groupsZ; ++z)
    for (int64_t y = 0; y < gridDim[1]; ++y)
      for (int64_t x = 0; x < gridDim[0]; ++x) {
        Executor group(instructionSet, static_cast<unsigned>(threads), stats,
                       error);
        group.kernel = true;
        group.globalWindow = globalWindow;
        group.blockId = {x, y, z};
        group.blockDim = blockDim;
        group.gridDim = gridDim;
        for (auto [argument, operand] :
             llvm::zip(function.getArguments(), op.getKernelOperands())) {
          if (isa<MemRefType>(operand.getType())) {
            group.views[argument] = views[operand];
            continue;
          }
          const Lanes &host = get(operand);
          Lanes broadcast(group.lanes, host.width);
          for (unsigned lane = 0; lane < group.lanes; ++lane)
            for (unsigned i = 0; i < host.width; ++i)
              broadcast.at(lane, i) = host.at(0, i);
          group.values[argument] = std::move(broadcast);
        }
        // Shared attributions lie in order in the shared window, each at a
        // multiple of 1024 bytes (the 128-byte swizzle's pattern size).
        uint64_t sharedEnd = 0;
        for (BlockArgument attribution : workgroup) {
          auto type = cast<MemRefType>(attribution.getType());
          View view =
              allocate(type, isSharedMemorySpace(type.getMemorySpace()));
          if (view.memory->shared) {
            view.memory->address = sharedEnd;
            sharedEnd += (view.memory->bytes.size() + 1023) / 1024 * 1024;
            group.sharedWindow.push_back(view.memory);
          }
          group.views[attribution] = std::move(view);
        }
        if (dynamicBytes) {
          group.dynamicShared =
              std::make_shared<Memory>(dynamicBytes, /*isShared=*/true);
          group.dynamicShared->address = sharedEnd;
          group.sharedWindow.push_back(group.dynamicShared);
        }
        group.workgroupState = instructionSet.createWorkgroupState();
        ++stats.workgroups;
        Mask all(group.lanes, 1);
        if (failed(group.run(body, all)))
          return failure();
        if (group.workgroupState) {
          std::string why = group.workgroupState->finish();
          if (!why.empty())
            return group.fail(op, why);
        }
      }
  if (hooks && hooks->onLaunch)
    hooks->onLaunch(info, /*after=*/true);
  return success();
}

//===----------------------------------------------------------------------===//
// What instruction sets see
//===----------------------------------------------------------------------===//

InstructionSet::~InstructionSet() = default;
WorkgroupState::~WorkgroupState() = default;

Memory *Executor::findShared(uint64_t address, unsigned size) {
  for (const std::shared_ptr<Memory> &memory : sharedWindow)
    if (address >= memory->address &&
        address + size <= memory->address + memory->bytes.size())
      return memory.get();
  return nullptr;
}

uint64_t Executor::getGlobalAddress(const std::shared_ptr<Memory> &memory) {
  if (memory->address == 0) {
    memory->address = globalWindow->next;
    globalWindow->next += (memory->bytes.size() + 255) / 256 * 256 + 256;
    globalWindow->memories.push_back(memory);
  }
  return memory->address;
}

Memory *Executor::findGlobal(uint64_t address, uint64_t size) {
  for (const std::shared_ptr<Memory> &memory : globalWindow->memories)
    if (address >= memory->address &&
        address + size <= memory->address + memory->bytes.size())
      return memory.get();
  return nullptr;
}

LogicalResult Executor::accessShared(Operation *op, uint64_t address,
                                     unsigned size, unsigned subgroup,
                                     bool write, uint8_t *data,
                                     bool asyncProxy) {
  Memory *memory = findShared(address, size);
  if (!memory)
    return fail(op, llvm::formatv("{0} address {1} (+{2}) lies outside every "
                                  "{0} allocation",
                                  instructionSet.getSharedMemoryTerm(), address,
                                  size));
  const int64_t byte = static_cast<int64_t>(address - memory->address);
  if (asyncProxy) {
    for (int64_t b = byte; b < byte + size; ++b) {
      if (write) {
        memory->writeEpoch[b] = epoch - 1;
        memory->genericWrite[b] = 0;
      } else if (memory->writeEpoch[b] == 0) {
        return fail(op,
                    llvm::formatv("{0} {1} reads {2} byte {3}, which no "
                                  "thread has written",
                                  instructionSet.getSubgroupTerm(), subgroup,
                                  instructionSet.getSharedMemoryTerm(), b));
      } else if (memory->genericWrite[b] &&
                 proxyFences[memory->writer[b]] < memory->genericWrite[b]) {
        // PTX ISA 9.7.13.x "Proxy", fence.proxy.async: generic-proxy writes
        // reach asynchronous-proxy reads only through that fence.
        return fail(
            op,
            llvm::formatv("the asynchronous proxy reads {0} byte {1}, which "
                          "{2} {3} wrote through the generic proxy with no "
                          "fence.proxy.async after the write",
                          instructionSet.getSharedMemoryTerm(), b,
                          instructionSet.getSubgroupTerm(), memory->writer[b]));
      }
    }
  } else if (failed(checkShared(op, *memory, byte, size, subgroup, write))) {
    return failure();
  }
  if (write)
    std::memcpy(memory->bytes.data() + byte, data, size);
  else
    std::memcpy(data, memory->bytes.data() + byte, size);
  return success();
}

bool mlir::fp4train::emulation::isSharedMemorySpace(Attribute memorySpace) {
  if (auto space = dyn_cast_or_null<gpu::AddressSpaceAttr>(memorySpace))
    return space.getValue() == gpu::AddressSpace::Workgroup;
  if (auto space = dyn_cast_or_null<IntegerAttr>(memorySpace))
    return space.getInt() == 3;
  return false;
}

const InstructionSet &ExecutionContext::getInstructionSet() const {
  return executor.instructionSet;
}
bool ExecutionContext::inKernel() const { return executor.kernel; }
unsigned ExecutionContext::getNumLanes() const { return executor.lanes; }
unsigned ExecutionContext::getSubgroupSize() const {
  return executor.subgroupSize;
}
unsigned ExecutionContext::getNumSubgroups() const {
  return executor.getNumSubgroups();
}
const LaneValues &ExecutionContext::get(Value value) const {
  return executor.get(value);
}
LaneValues &ExecutionContext::define(Value result) {
  return executor.define(result);
}
FailureOr<ExecutionContext::GlobalMemRef>
ExecutionContext::getGlobalMemRef(Value memref) {
  auto it = executor.views.find(memref);
  if (it == executor.views.end() || !it->second.memory)
    return fail("memref has no storage");
  const detail::View &view = it->second;
  if (view.memory->shared)
    return fail("expected a global memref, not shared memory");
  if (executor.separateMemories && !view.memory->device)
    return fail("the memref is host memory: without unified memory the GPU "
                "cannot reach it (fp4train-gpu-device-memory gives kernels "
                "device buffers)");
  GlobalMemRef result;
  result.elementBytes = view.elementBytes;
  result.address = executor.getGlobalAddress(view.memory) +
                   static_cast<uint64_t>(view.offset) * view.elementBytes;
  result.sizes.assign(view.sizes.begin(), view.sizes.end());
  result.strides.assign(view.strides.begin(), view.strides.end());
  return result;
}

uint64_t ExecutionContext::allocateGlobal(std::vector<uint8_t> bytes) {
  auto memory = std::make_shared<detail::Memory>(bytes.size(), false);
  memory->bytes = std::move(bytes);
  memory->device = executor.separateMemories;
  return executor.getGlobalAddress(memory);
}

void ExecutionContext::fenceProxy() {
  for (unsigned subgroup = 0; subgroup < getNumSubgroups(); ++subgroup) {
    auto [first, end] = executor.getSubgroupLanes(subgroup);
    if (std::find(mask.begin() + first, mask.begin() + end, 1) !=
        mask.begin() + end)
      ++executor.proxyFences[subgroup];
  }
}

void ExecutionContext::setPending(Value value, std::string what) {
  executor.pending[value] = std::move(what);
}
void ExecutionContext::clearPending(Value value) {
  executor.pending.erase(value);
}
int64_t ExecutionContext::getThreadId(unsigned lane, unsigned dim) const {
  return executor.getThreadId(lane, dim);
}
int64_t ExecutionContext::getBlockId(unsigned dim) const {
  return executor.blockId[dim];
}
int64_t ExecutionContext::getBlockDim(unsigned dim) const {
  return executor.blockDim[dim];
}
int64_t ExecutionContext::getGridDim(unsigned dim) const {
  return executor.gridDim[dim];
}
EmulatorStats &ExecutionContext::getStats() const { return executor.stats; }
LogicalResult ExecutionContext::fail(const Twine &message) const {
  return executor.fail(&op, message);
}
LogicalResult ExecutionContext::barrier() {
  return executor.barrier(&op, mask);
}
bool ExecutionContext::waitUntil(const std::function<bool()> &ready) {
  if (ready())
    return true;
  return executor.fibers && executor.fibers->waitUntil(ready);
}
WorkgroupState *ExecutionContext::getWorkgroupState() const {
  return executor.workgroupState.get();
}
LogicalResult ExecutionContext::readShared(uint64_t address, unsigned size,
                                           unsigned subgroup, uint8_t *out,
                                           bool asyncProxy) {
  return executor.accessShared(&op, address, size, subgroup, /*write=*/false,
                               out, asyncProxy);
}
LogicalResult ExecutionContext::writeShared(uint64_t address, unsigned size,
                                            unsigned subgroup,
                                            const uint8_t *in,
                                            bool asyncProxy) {
  return executor.accessShared(&op, address, size, subgroup, /*write=*/true,
                               const_cast<uint8_t *>(in), asyncProxy);
}
LogicalResult ExecutionContext::accessGlobal(uint64_t address, unsigned size,
                                             bool write, uint8_t *data) {
  Memory *memory = executor.findGlobal(address, size);
  if (!memory)
    return fail(llvm::formatv("global address {0:x} (+{1}) lies outside every "
                              "global allocation whose pointer was taken",
                              address, size));
  uint8_t *bytes = memory->bytes.data() + (address - memory->address);
  if (write)
    std::memcpy(bytes, data, size);
  else
    std::memcpy(data, bytes, size);
  return success();
}
LogicalResult ExecutionContext::checkSharedAddress(uint64_t address,
                                                   unsigned size) {
  if (executor.findShared(address, size))
    return success();
  return fail(llvm::formatv("{0} address {1} (+{2}) lies outside every {0} "
                            "allocation",
                            executor.instructionSet.getSharedMemoryTerm(),
                            address, size));
}

void ExecutionContext::forEachActiveLane(
    llvm::function_ref<void(unsigned lane)> body) const {
  for (unsigned lane = 0; lane < executor.lanes; ++lane)
    if (mask[lane])
      body(lane);
}

LogicalResult ExecutionContext::forEachWholeSubgroup(
    StringRef instruction,
    llvm::function_ref<LogicalResult(unsigned subgroup, unsigned firstLane)>
        body) {
  for (unsigned subgroup = 0; subgroup < getNumSubgroups(); ++subgroup) {
    auto [first, end] = executor.getSubgroupLanes(subgroup);
    const unsigned active =
        std::count(mask.begin() + first, mask.begin() + end, 1);
    if (active == 0)
      continue;
    if (active != getSubgroupSize())
      return fail(llvm::formatv("{0} {1} executes the {2} with {3} of {4} "
                                "lanes active",
                                executor.instructionSet.getSubgroupTerm(),
                                subgroup, instruction, active,
                                getSubgroupSize()));
    if (failed(body(subgroup, first)))
      return failure();
  }
  return success();
}

LogicalResult ExecutionContext::requireUniform(ValueRange values,
                                               unsigned firstLane,
                                               StringRef what) {
  for (Value value : values) {
    const LaneValues &lanes = get(value);
    for (unsigned lane = firstLane + 1; lane < firstLane + getSubgroupSize();
         ++lane)
      for (unsigned i = 0; i < lanes.width; ++i)
        if (lanes.at(lane, i) != lanes.at(firstLane, i))
          return fail(what + " differ across the " +
                      executor.instructionSet.getSubgroupTerm());
  }
  return success();
}

//===----------------------------------------------------------------------===//
// Entry point
//===----------------------------------------------------------------------===//

llvm::Expected<std::vector<std::vector<uint8_t>>>
mlir::fp4train::emulation::emulate(ModuleOp module, StringRef name,
                                   ArrayRef<EmulatorArgument> arguments,
                                   const InstructionSet &instructionSet,
                                   EmulatorStats *stats,
                                   const EmulatorHooks *hooks) {
  auto makeError = [](const Twine &message) {
    return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
  };
  auto function = module.lookupSymbol<func::FuncOp>(name);
  if (!function || function.isExternal())
    return makeError("emulate: no function '" + name + "' with a body");
  if (arguments.size() != function.getNumArguments())
    return makeError(llvm::formatv("emulate: '{0}' takes {1} arguments, {2} "
                                   "given",
                                   name, function.getNumArguments(),
                                   arguments.size()));
  EmulatorStats localStats;
  std::string error;
  Executor host(instructionSet, 1, stats ? *stats : localStats, error);
  host.hooks = hooks;
  host.separateMemories =
      function.walk([](gpu::AllocOp) { return WalkResult::interrupt(); })
          .wasInterrupted();
  for (auto [argument, given] : llvm::zip(function.getArguments(), arguments)) {
    if (auto type = dyn_cast<MemRefType>(argument.getType())) {
      if (!type.hasStaticShape() || !type.getLayout().isIdentity())
        return makeError("emulate: memref arguments must have static shapes "
                         "and identity layouts");
      View view = allocate(type, /*shared=*/false);
      const size_t size = view.memory->bytes.size();
      if (given.bytes.size() != size)
        return makeError(llvm::formatv("emulate: argument {0} needs {1} "
                                       "bytes, {2} given",
                                       argument.getArgNumber(), size,
                                       given.bytes.size()));
      view.memory->bytes = given.bytes;
      host.views[argument] = std::move(view);
      continue;
    }
    Lanes scalar(1, 1);
    scalar.at(0) = truncate(given.scalar, getElementBits(argument.getType()));
    host.values[argument] = std::move(scalar);
  }
  SmallVector<Value> returned;
  if (failed(host.run(function.getBody().front(), Mask{1}, &returned)))
    return makeError(error);

  std::vector<std::vector<uint8_t>> results;
  for (Value value : returned) {
    // A scalar result (the f32 global decode scale of an NVFP4 tensor, say):
    // its bits, little-endian, in its own width.
    Type type = value.getType();
    if (type.isIntOrIndexOrFloat()) {
      const unsigned bits = getElementBits(type);
      if (bits % 8)
        return makeError("emulate: scalar results must be whole bytes");
      const Word word = host.values[value].at(0);
      std::vector<uint8_t> bytes(bits / 8);
      for (unsigned i = 0; i < bytes.size(); ++i)
        bytes[i] = static_cast<uint8_t>(word >> (8 * i));
      results.push_back(std::move(bytes));
      continue;
    }
    if (!isa<MemRefType>(type))
      return makeError("emulate: only memref and scalar results are "
                       "supported");
    const View &view = host.views[value];
    if (host.separateMemories && view.memory->device)
      return makeError("emulate: result is device memory; the caller gets "
                       "host buffers");
    std::vector<uint8_t> bytes(view.getNumElements() * view.elementBytes);
    // Row-major copy through the view's strides.
    view.forEachElement([&](int64_t n, int64_t element) {
      std::memcpy(bytes.data() + n * view.elementBytes,
                  view.memory->bytes.data() + element * view.elementBytes,
                  view.elementBytes);
    });
    results.push_back(std::move(bytes));
  }
  return results;
}
