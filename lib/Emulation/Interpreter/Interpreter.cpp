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
  std::array<int64_t, 3> clusterDim = {1, 1, 1};
  if (op.getClusterSizeX()) {
    if (!instructionSet.supportsClusters())
      return fail(op, "clusters are not supported by the " +
                          instructionSet.getName() + " emulator");
    clusterDim = {scalar(op.getClusterSizeX()), scalar(op.getClusterSizeY()),
                  scalar(op.getClusterSizeZ())};
    for (unsigned d = 0; d < 3; ++d)
      if (clusterDim[d] < 1 || gridDim[d] % clusterDim[d] != 0)
        return fail(op, llvm::formatv("cluster size {0} in dimension {1} "
                                      "does not divide the grid's {2}",
                                      clusterDim[d], d, gridDim[d]));
    // PTX ISA §2.2.2: 8 CTAs is the portable cluster size.
    if (clusterDim[0] * clusterDim[1] * clusterDim[2] > 8)
      return fail(op, "a cluster holds at most 8 workgroups");
  }
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
    info.cluster = clusterDim;
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

  auto makeGroup = [&](const std::array<int64_t, 3> &id) {
    auto group = std::make_unique<Executor>(
        instructionSet, static_cast<unsigned>(threads), stats, error);
    group->kernel = true;
    group->globalWindow = globalWindow;
    group->blockId = id;
    group->blockDim = blockDim;
    group->gridDim = gridDim;
    for (auto [argument, operand] :
         llvm::zip(function.getArguments(), op.getKernelOperands())) {
      if (isa<MemRefType>(operand.getType())) {
        group->views[argument] = views[operand];
        continue;
      }
      const Lanes &host = get(operand);
      Lanes broadcast(group->lanes, host.width);
      for (unsigned lane = 0; lane < group->lanes; ++lane)
        for (unsigned i = 0; i < host.width; ++i)
          broadcast.at(lane, i) = host.at(0, i);
      group->values[argument] = std::move(broadcast);
    }
    // Shared attributions lie in order in the shared window, each at a
    // multiple of 1024 bytes (the 128-byte swizzle's pattern size).
    uint64_t sharedEnd = 0;
    for (BlockArgument attribution : workgroup) {
      auto type = cast<MemRefType>(attribution.getType());
      View view = allocate(type, isSharedMemorySpace(type.getMemorySpace()));
      if (view.memory->shared) {
        view.memory->address = sharedEnd;
        sharedEnd += (view.memory->bytes.size() + 1023) / 1024 * 1024;
        group->sharedWindow.push_back(view.memory);
      }
      group->views[attribution] = std::move(view);
    }
    if (dynamicBytes) {
      group->dynamicShared =
          std::make_shared<Memory>(dynamicBytes, /*isShared=*/true);
      group->dynamicShared->address = sharedEnd;
      group->sharedWindow.push_back(group->dynamicShared);
    }
    group->workgroupState = instructionSet.createWorkgroupState();
    ++stats.workgroups;
    return group;
  };

  const int64_t clustersZ =
      !hooks || hooks->executeKernels ? gridDim[2] / clusterDim[2] : 0;
  for (int64_t z = 0; z < clustersZ; ++z)
    for (int64_t y = 0; y < gridDim[1] / clusterDim[1]; ++y)
      for (int64_t x = 0; x < gridDim[0] / clusterDim[0]; ++x) {
        Cluster cluster;
        cluster.id = {x, y, z};
        cluster.dim = clusterDim;
        if (failed(runCluster(op, cluster, makeGroup, body)))
          return failure();
      }
  if (hooks && hooks->onLaunch)
    hooks->onLaunch(info, /*after=*/true);
  return success();
}

LogicalResult Executor::runCluster(gpu::LaunchFuncOp op, Cluster &cluster,
                                   llvm::function_ref<std::unique_ptr<Executor>(
                                       const std::array<int64_t, 3> &)>
                                       makeGroup,
                                   Block &body) {
  // Ranks run x fastest (PTX ISA %cluster_ctarank).
  std::vector<std::unique_ptr<Executor>> groups;
  const std::array<int64_t, 3> &dim = cluster.dim;
  for (int64_t z = 0; z < dim[2]; ++z)
    for (int64_t y = 0; y < dim[1]; ++y)
      for (int64_t x = 0; x < dim[0]; ++x)
        groups.push_back(
            makeGroup({cluster.id[0] * dim[0] + x, cluster.id[1] * dim[1] + y,
                       cluster.id[2] * dim[2] + z}));
  const unsigned size = groups.size();
  cluster.exited.assign(size, 0);
  for (const std::unique_ptr<Executor> &group : groups) {
    cluster.arrivals.emplace_back(group->lanes, 0);
    cluster.waits.emplace_back(group->lanes, 0);
  }
  for (unsigned rank = 0; rank < size; ++rank) {
    groups[rank]->cluster = &cluster;
    groups[rank]->clusterRank = rank;
    cluster.members.push_back(groups[rank].get());
  }
  auto runGroup = [&](unsigned rank) -> LogicalResult {
    Executor &group = *groups[rank];
    Mask all(group.lanes, 1);
    LogicalResult result = group.run(body, all);
    cluster.exited[rank] = 1;
    return result;
  };
  if (size == 1) {
    if (failed(runGroup(0)))
      return failure();
  } else {
    // One scheduler runs the members (and the fibers of their divergent
    // branches): a member waiting for another lets it run.
    auto scheduler = std::make_shared<FiberScheduler>();
    std::vector<std::function<LogicalResult()>> bodies;
    for (unsigned rank = 0; rank < size; ++rank) {
      groups[rank]->fibers = scheduler;
      bodies.push_back([&runGroup, rank] { return runGroup(rank); });
    }
    for (LogicalResult result : scheduler->spawn(bodies))
      if (failed(result))
        return failure();
  }
  for (const std::unique_ptr<Executor> &group : groups)
    if (group->workgroupState) {
      std::string why = group->workgroupState->finish();
      if (!why.empty())
        return group->fail(op, why);
    }
  return success();
}

bool Cluster::isPhaseComplete(uint64_t phase) const {
  for (unsigned rank = 0; rank < arrivals.size(); ++rank) {
    if (exited[rank])
      continue;
    for (uint64_t count : arrivals[rank])
      if (count <= phase)
        return false;
  }
  return true;
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
unsigned ExecutionContext::getClusterRank() const {
  return executor.clusterRank;
}
unsigned ExecutionContext::getClusterSize() const {
  return executor.cluster ? executor.cluster->members.size() : 0;
}
int64_t ExecutionContext::getClusterId(unsigned dim) const {
  return executor.blockId[dim] / getClusterDim(dim);
}
int64_t ExecutionContext::getNumClusters(unsigned dim) const {
  return executor.gridDim[dim] / getClusterDim(dim);
}
int64_t ExecutionContext::getClusterBlockId(unsigned dim) const {
  return executor.blockId[dim] % getClusterDim(dim);
}
int64_t ExecutionContext::getClusterDim(unsigned dim) const {
  return executor.cluster ? executor.cluster->dim[dim] : 1;
}

LogicalResult ExecutionContext::requireClusterMember(unsigned rank,
                                                     StringRef what) {
  if (!executor.cluster)
    return fail(what + " outside a kernel");
  if (rank >= getClusterSize())
    return fail(llvm::formatv("{0} names workgroup {1} of a cluster of {2}",
                              what, rank, getClusterSize()));
  if (executor.cluster->exited[rank])
    return fail(llvm::formatv("{0} reaches workgroup {1} of the cluster, "
                              "which has returned (a cluster barrier before "
                              "returning keeps it alive for its peers)",
                              what, rank));
  return success();
}

WorkgroupState *ExecutionContext::getWorkgroupState(unsigned rank) const {
  return executor.cluster->members[rank]->workgroupState.get();
}

LogicalResult ExecutionContext::readClusterShared(unsigned rank,
                                                  uint64_t address,
                                                  unsigned size, uint8_t *out) {
  if (failed(requireClusterMember(rank, "a shared-memory read")))
    return failure();
  detail::Executor &owner = *executor.cluster->members[rank];
  return owner.accessShared(&op, address, size, /*subgroup=*/0,
                            /*write=*/false, out, /*asyncProxy=*/true);
}

LogicalResult ExecutionContext::writeClusterShared(unsigned rank,
                                                   uint64_t address,
                                                   unsigned size,
                                                   const uint8_t *in) {
  if (failed(requireClusterMember(rank, "a shared-memory write")))
    return failure();
  detail::Executor &owner = *executor.cluster->members[rank];
  return owner.accessShared(&op, address, size, /*subgroup=*/0,
                            /*write=*/true, const_cast<uint8_t *>(in),
                            /*asyncProxy=*/true);
}

LogicalResult ExecutionContext::clusterArrive() {
  if (!executor.cluster)
    return fail("a cluster barrier outside a kernel");
  std::vector<uint64_t> &arrivals =
      executor.cluster->arrivals[executor.clusterRank];
  const std::vector<uint64_t> &waits =
      executor.cluster->waits[executor.clusterRank];
  for (unsigned lane = 0; lane < executor.lanes; ++lane) {
    if (!mask[lane])
      continue;
    if (arrivals[lane] > waits[lane])
      return fail(llvm::formatv("thread {0} arrives at the cluster barrier "
                                "again before waiting on its last arrival",
                                lane));
    ++arrivals[lane];
  }
  return success();
}

LogicalResult ExecutionContext::clusterWait() {
  if (!executor.cluster)
    return fail("a cluster barrier outside a kernel");
  detail::Cluster &cluster = *executor.cluster;
  const unsigned rank = executor.clusterRank;
  uint64_t phase = 0;
  bool first = true;
  for (unsigned lane = 0; lane < executor.lanes; ++lane) {
    if (!mask[lane])
      continue;
    if (cluster.arrivals[rank][lane] == cluster.waits[rank][lane])
      return fail(llvm::formatv("thread {0} waits at the cluster barrier "
                                "without arriving first",
                                lane));
    const uint64_t lanePhase = cluster.waits[rank][lane];
    if (!first && lanePhase != phase)
      return fail("threads waiting together at the cluster barrier are in "
                  "different phases");
    phase = lanePhase;
    first = false;
  }
  if (first)
    return success();
  if (!waitUntil(
          [&cluster, phase] { return cluster.isPhaseComplete(phase); })) {
    for (unsigned member = 0; member < cluster.arrivals.size(); ++member)
      for (unsigned lane = 0; lane < cluster.arrivals[member].size(); ++lane)
        if (!cluster.exited[member] && cluster.arrivals[member][lane] <= phase)
          return fail(llvm::formatv("the cluster barrier never completes: "
                                    "thread {0} of CTA {1} has not arrived",
                                    lane, member));
    return fail("the cluster barrier never completes");
  }
  for (unsigned lane = 0; lane < executor.lanes; ++lane)
    if (mask[lane])
      ++cluster.waits[rank][lane];
  // With every subgroup present it orders this workgroup's shared-memory
  // accesses like a workgroup barrier.
  bool everySubgroup = true;
  for (unsigned subgroup = 0; subgroup < getNumSubgroups(); ++subgroup) {
    auto [first, end] = executor.getSubgroupLanes(subgroup);
    everySubgroup &= std::find(mask.begin() + first, mask.begin() + end, 1) !=
                     mask.begin() + end;
  }
  if (everySubgroup)
    ++executor.epoch;
  return success();
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
