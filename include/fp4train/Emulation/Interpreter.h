//===- Interpreter.h - Lockstep SIMT interpreter of GPU kernels -*- C++ -*-===//
//
// The ISA-independent core of the lane-exact emulation ([CHK4] in
// docs/semantics.md): it executes host functions on memrefs and the
// gpu.launch_func'ed kernels of a module on the CPU, every workgroup with all
// its threads in lockstep under an execution mask, grouped into subgroups
// (waves, warps) of the size the instruction set gives. It knows the
// target-independent dialects (arith, vector, memref, scf, gpu, the LLVM casts
// and aggregates, host linalg.generic); every other op goes to an
// InstructionSet, which models the target's intrinsics on the registers of the
// lanes.
//
// Besides computing the results, the core checks what a GPU would not
// report: every global and shared-memory access is bounds-checked, accesses
// of different subgroups to the same shared-memory byte between two barriers
// (at least one a write) are a race — lockstep execution would otherwise
// hide a missing barrier —, reading a shared byte no thread wrote is an
// error, a barrier that some subgroup does not reach is an error, and an op
// that neither the core nor the instruction set knows is an error naming it.
// Pointers into shared memory (memref.extract_aligned_pointer_as_index,
// llvm.inttoptr to address space 3) are byte addresses in the workgroup's
// shared window; instruction sets can keep per-workgroup state (tensor
// memory, mbarriers) and reach shared memory by address. On instruction sets
// that support them, the workgroups of a launch's cluster run concurrently
// and reach each other's shared memory, state and cluster barrier.
//
//===----------------------------------------------------------------------===//

#ifndef FP4TRAIN_EMULATION_INTERPRETER_H
#define FP4TRAIN_EMULATION_INTERPRETER_H

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/Error.h"

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace mlir::fp4train::emulation {

/// An argument of the emulated host function: the bytes of a memref
/// argument (row-major, its static shape), or the bits of a scalar (integer,
/// index or float argument; floats as their bit pattern).
struct EmulatorArgument {
  std::vector<uint8_t> bytes;
  uint64_t scalar = 0;

  static EmulatorArgument buffer(std::vector<uint8_t> bytes) {
    return {std::move(bytes), 0};
  }
  static EmulatorArgument bits(uint64_t value) { return {{}, value}; }
};

/// What the emulated kernels executed.
struct EmulatorStats {
  uint64_t launches = 0;
  uint64_t workgroups = 0;
  /// Ops executed per subgroup (an op executed by a whole workgroup of four
  /// waves counts four).
  uint64_t waveOps = 0;
  /// Matrix instructions, once per subgroup (MFMA, mma).
  uint64_t mfmas = 0;
  /// Conversion instructions, once per op for all its lanes.
  uint64_t conversions = 0;
  uint64_t barriers = 0;
};

/// One SSA value: `width` elements per lane, lane-major, each element's bits
/// zero-extended into a 64-bit word. A vector holds its elements in order;
/// an LLVM struct or array its fields, flattened in order (a struct of four
/// f32 is four words per lane).
struct LaneValues {
  unsigned width = 1;
  std::vector<uint64_t> words;

  LaneValues() = default;
  LaneValues(unsigned lanes, unsigned width)
      : width(width), words(size_t{lanes} * width) {}
  uint64_t &at(unsigned lane, unsigned i = 0) {
    return words[size_t{lane} * width + i];
  }
  uint64_t at(unsigned lane, unsigned i = 0) const {
    return words[size_t{lane} * width + i];
  }
};

namespace detail {
class Executor;
} // namespace detail

class InstructionSet;

/// State an instruction set keeps per workgroup across ops (tensor memory,
/// mbarrier objects): created when a workgroup starts, checked when its
/// kernel returns.
class WorkgroupState {
public:
  virtual ~WorkgroupState();
  /// "" or why the workgroup's end is an error (e.g. tensor memory still
  /// allocated).
  virtual std::string finish() { return {}; }
};

/// What an instruction set sees of the interpreter while it executes one op:
/// the lanes' registers, the execution mask, the workgroup's geometry, and
/// the core's checks and synchronization.
class ExecutionContext {
public:
  ExecutionContext(detail::Executor &executor, Operation &op,
                   const std::vector<char> &mask)
      : executor(executor), op(op), mask(mask) {}

  const InstructionSet &getInstructionSet() const;

  /// True inside a kernel, false in host code (one lane).
  bool inKernel() const;
  /// Lanes executing together: the workgroup's threads, or 1 on the host.
  unsigned getNumLanes() const;
  unsigned getSubgroupSize() const;
  unsigned getNumSubgroups() const;
  bool isActive(unsigned lane) const { return mask[lane] != 0; }

  /// The lanes of an operand (valid until the next define).
  const LaneValues &get(Value value) const;
  /// The 32-bit register `i` of `value` in `lane`.
  uint32_t getWord(Value value, unsigned lane, unsigned i = 0) const {
    return static_cast<uint32_t>(get(value).at(lane, i));
  }
  /// Defines `result` (zero in every lane, its type's width) and returns its
  /// lanes to fill in.
  LaneValues &define(Value result);
  /// Marks `value` as not yet written by the asynchronous instruction that
  /// defined it: until clearPending, any op the instruction set does not
  /// handle that takes it as an operand (scf.for / scf.if operands too)
  /// fails with "reads `what`".
  void setPending(Value value, std::string what);
  /// A fence.proxy.async by the active lanes: their subgroups' earlier
  /// generic-proxy shared-memory writes become readable by the
  /// asynchronous proxy (readShared with `asyncProxy`).
  void fenceProxy();
  void clearPending(Value value);

  /// Calls `body` for every active lane.
  void forEachActiveLane(llvm::function_ref<void(unsigned lane)> body) const;
  /// The rule of collective (matrix) instructions: calls `body` once per
  /// subgroup with an active lane, with the subgroup's first lane, after
  /// checking that all of its lanes are active ("wave W executes the
  /// `instruction` with N of 64 lanes active" otherwise).
  LogicalResult forEachWholeSubgroup(
      StringRef instruction,
      llvm::function_ref<LogicalResult(unsigned subgroup, unsigned firstLane)>
          body);
  /// Fails with "`what` differ across the wave" unless every value of
  /// `values` is the same in all lanes of the subgroup from `firstLane`.
  LogicalResult requireUniform(ValueRange values, unsigned firstLane,
                               StringRef what);

  /// A workgroup barrier (gpu.barrier): every subgroup must reach it; it
  /// separates the shared-memory accesses the race check compares.
  LogicalResult barrier();
  /// Blocks the executing lanes until `ready()` holds, letting the other
  /// side of an enclosing divergent branch run (InstructionSet::
  /// runsBranchesConcurrently); false when nothing else can run (always
  /// outside such branches), where the caller reports why it waits.
  bool waitUntil(const std::function<bool()> &ready);

  /// The instruction set's state of this workgroup (null on the host or if
  /// the set keeps none).
  WorkgroupState *getWorkgroupState() const;

  /// The launch's clusters (InstructionSet::supportsClusters): workgroups
  /// launched together whose threads run concurrently, reach each other's
  /// shared memory and synchronize through a cluster barrier. A launch
  /// without cluster dimensions has clusters of one workgroup.
  /// This workgroup's rank in its cluster (x fastest, then y, then z) and
  /// the cluster's workgroup count.
  unsigned getClusterRank() const;
  unsigned getClusterSize() const;
  /// Per dimension: the cluster's id in the grid, the clusters of the grid,
  /// this workgroup's position in the cluster, the cluster's workgroups.
  int64_t getClusterId(unsigned dim) const;
  int64_t getNumClusters(unsigned dim) const;
  int64_t getClusterBlockId(unsigned dim) const;
  int64_t getClusterDim(unsigned dim) const;
  /// Fails (naming `what`) unless workgroup `rank` of the cluster exists and
  /// has not returned: its shared memory and state are gone once it has.
  LogicalResult requireClusterMember(unsigned rank, StringRef what);
  /// The state of workgroup `rank` of the cluster (requireClusterMember
  /// first).
  WorkgroupState *getWorkgroupState(unsigned rank) const;
  /// Shared memory of workgroup `rank` of the cluster (this one included)
  /// accessed by the asynchronous proxy (tensor-core operand reads, bulk
  /// copies into several workgroups), with readShared's checks in that
  /// workgroup.
  LogicalResult readClusterShared(unsigned rank, uint64_t address,
                                  unsigned size, uint8_t *out);
  LogicalResult writeClusterShared(unsigned rank, uint64_t address,
                                   unsigned size, const uint8_t *in);
  /// The cluster barrier: each active lane arrives; a wait blocks the
  /// active lanes until every thread of the cluster's running workgroups
  /// has arrived as often as they have (a workgroup that returned no longer
  /// counts). A lane arriving twice before waiting, or waiting with no
  /// arrival, is an error. A wait with every subgroup present is also a
  /// workgroup barrier for the race check.
  LogicalResult clusterArrive();
  LogicalResult clusterWait();

  /// Workgroup shared memory by byte address, as a pointer into it holds
  /// it: the workgroup attributions lie in order from address 0, each at a
  /// multiple of 1024 bytes. Reads and writes on behalf of `subgroup` take
  /// the core's checks (bounds, unwritten bytes, races). Accesses of the
  /// asynchronous proxy (`asyncProxy`: tensor-core operand reads, bulk
  /// copies), which mbarriers rather than barriers order, skip the race
  /// check; their writes count as made before the current barrier interval.
  LogicalResult readShared(uint64_t address, unsigned size, unsigned subgroup,
                           uint8_t *out, bool asyncProxy = false);
  LogicalResult writeShared(uint64_t address, unsigned size, unsigned subgroup,
                            const uint8_t *in, bool asyncProxy = false);
  /// Global memory by byte address (the address that
  /// memref.extract_aligned_pointer_as_index of a global memref gave), bounds
  /// checked.
  LogicalResult accessGlobal(uint64_t address, unsigned size, bool write,
                             uint8_t *data);
  /// Fails unless [address, address + size) lies in one shared allocation.
  LogicalResult checkSharedAddress(uint64_t address, unsigned size);
  /// The global view of a memref operand (host or kernel): the byte address
  /// of its first element, its sizes and element strides, element bytes.
  /// Without unified memory the memref must be device memory (the address
  /// is one the GPU dereferences).
  struct GlobalMemRef {
    uint64_t address = 0;
    SmallVector<int64_t> sizes, strides;
    unsigned elementBytes = 0;
  };
  FailureOr<GlobalMemRef> getGlobalMemRef(Value memref);
  /// A new global allocation holding `bytes`; returns its address.
  uint64_t allocateGlobal(std::vector<uint8_t> bytes);

  /// Thread `lane`'s index in dimension `dim` (0..2) of the workgroup, and
  /// the launch's ids and sizes.
  int64_t getThreadId(unsigned lane, unsigned dim) const;
  int64_t getBlockId(unsigned dim) const;
  int64_t getBlockDim(unsigned dim) const;
  int64_t getGridDim(unsigned dim) const;

  EmulatorStats &getStats() const;

  /// Fails the emulation with `message`, naming the op, its location and
  /// the workgroup.
  LogicalResult fail(const Twine &message) const;

private:
  detail::Executor &executor;
  Operation &op;
  const std::vector<char> &mask;
};

/// The ops of one target that the core does not know (its intrinsics), with
/// the geometry and names the core needs for that target.
class InstructionSet {
public:
  virtual ~InstructionSet();

  /// The chip, for messages: "gfx950", "sm_120a".
  virtual StringRef getName() const = 0;
  /// Lanes of a subgroup (wave, warp): the unit of the race and barrier
  /// checks, gpu.lane_id and gpu.subgroup_id.
  virtual unsigned getSubgroupSize() const = 0;
  /// What the target calls a subgroup and its shared memory in messages.
  virtual StringRef getSubgroupTerm() const { return "subgroup"; }
  virtual StringRef getSharedMemoryTerm() const { return "shared memory"; }
  /// True when the two sides of a divergent scf.if in a kernel may wait for
  /// each other (warp-specialized kernels that synchronize through
  /// mbarriers): they then run as cooperative fibers that switch only at
  /// ExecutionContext::waitUntil; false: one after the other (lockstep).
  virtual bool runsBranchesConcurrently() const { return false; }
  /// True when launches may have cluster dimensions: the workgroups of a
  /// cluster then run as fibers of one scheduler, so that they can wait
  /// for each other (requires runsBranchesConcurrently).
  virtual bool supportsClusters() const { return false; }

  /// True if this set executes `op` (e.g. by dialect namespace).
  virtual bool handles(Operation &op) const = 0;
  /// Executes `op` for the active lanes of `context`.
  virtual LogicalResult execute(Operation &op,
                                ExecutionContext &context) const = 0;
  /// A fresh per-workgroup state, or null (the default) if the set keeps
  /// none.
  virtual std::unique_ptr<WorkgroupState> createWorkgroupState() const {
    return nullptr;
  }
};

/// A memref operand of a kernel launch: the whole allocation it views (so
/// that a device can be given the same buffer) and the view, in elements.
struct LaunchMemRef {
  /// The allocation's bytes, as they are at the moment of the callback.
  const std::vector<uint8_t> *memory = nullptr;
  /// Identifies the allocation across launches (equal for aliases).
  const void *id = nullptr;
  int64_t offset = 0;
  SmallVector<int64_t> sizes, strides;
  unsigned elementBytes = 0;
};

/// A global address inside an allocation: its bytes and id as in
/// LaunchMemRef, and the byte offset.
struct LaunchPointer {
  const std::vector<uint8_t> *memory = nullptr;
  const void *id = nullptr;
  uint64_t offset = 0;
};

/// One gpu.launch_func as the emulator executes it.
struct LaunchInfo {
  gpu::LaunchFuncOp op;
  std::array<int64_t, 3> grid{}, block{};
  /// Workgroups per cluster ({1, 1, 1} for a launch without clusters).
  std::array<int64_t, 3> cluster{1, 1, 1};
  /// The launch's dynamic shared memory bytes (0 without).
  int64_t dynamicSharedBytes = 0;
  /// One entry per kernel operand: a memref, or a scalar's bits (a pointer
  /// operand's address).
  std::vector<std::variant<LaunchMemRef, uint64_t>> operands;
  /// The global allocation holding `address`, or std::nullopt: what a
  /// pointer operand points at (a TMA tensor map the host made, and through
  /// it the tensor).
  std::function<std::optional<LaunchPointer>(uint64_t address)> findGlobal;
};

/// Callbacks around every kernel launch of an emulation; a device runner
/// records what each kernel reads and writes (tools/fp4-gpu-prepare).
struct EmulatorHooks {
  /// Called with `after` false before the launch executes, true after.
  std::function<void(const LaunchInfo &, bool after)> onLaunch;
  /// False: launches are reported but their kernels do not run (the host
  /// code still does), for recording the launches of shapes too large to
  /// emulate.
  bool executeKernels = true;
};

/// True for the memory spaces the core treats as workgroup-shared memory:
/// #gpu.address_space<workgroup> and LLVM's address space 3.
bool isSharedMemorySpace(Attribute memorySpace);

/// Runs host function `name` of `module` with `arguments` (one per function
/// argument), its kernels on `instructionSet`, and returns the bytes of
/// every memref result, row-major, and of every scalar result (integer,
/// index or float bits, little-endian). Errors name the op (with its location)
/// and, for kernel errors, the workgroup and lane.
llvm::Expected<std::vector<std::vector<uint8_t>>>
emulate(ModuleOp module, StringRef name, ArrayRef<EmulatorArgument> arguments,
        const InstructionSet &instructionSet, EmulatorStats *stats = nullptr,
        const EmulatorHooks *hooks = nullptr);

} // namespace mlir::fp4train::emulation

#endif // FP4TRAIN_EMULATION_INTERPRETER_H
