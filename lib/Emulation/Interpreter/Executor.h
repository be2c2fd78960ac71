//===- Executor.h - The interpreter's state, shared by its op families ----===//
//
// Private to lib/Emulation/Interpreter: the memory and value representation
// and the Executor, whose op families live one per file (Arith.cpp,
// Vector.cpp, MemRef.cpp, LLVM.cpp, Linalg.cpp, ControlFlow.cpp).
//
//===----------------------------------------------------------------------===//

#ifndef FP4TRAIN_LIB_EMULATION_INTERPRETER_EXECUTOR_H
#define FP4TRAIN_LIB_EMULATION_INTERPRETER_EXECUTOR_H

#include "Fibers.h"

#include "fp4train/Emulation/Interpreter.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "llvm/ADT/DenseMap.h"

#include <array>
#include <memory>
#include <optional>
#include <string>

namespace mlir::fp4train::emulation::detail {

using Word = uint64_t;
using Mask = std::vector<char>;

//===----------------------------------------------------------------------===//
// Memory
//===----------------------------------------------------------------------===//

/// A global allocation or a workgroup's shared memory. Shared memory carries
/// a shadow per byte for the race and uninitialized-read checks.
struct Memory {
  std::vector<uint8_t> bytes;
  bool shared = false;
  /// A gpu.alloc buffer: with separate memories (Executor::separateMemories)
  /// only kernels and gpu.memcpy may touch it.
  bool device = false;
  /// The byte address of the allocation: in the workgroup's shared window,
  /// or (global memory, once a pointer to it is taken) in the global window.
  uint64_t address = 0;
  std::vector<uint32_t> writeEpoch; // 0: never written
  std::vector<uint8_t> writer;
  std::vector<uint32_t> readEpoch;
  std::vector<uint64_t> readers; // bit per subgroup, valid in readEpoch
  /// For a byte the generic proxy wrote last: 1 + the writing subgroup's
  /// proxy-fence count at the write (Executor::proxyFences); 0 once the
  /// asynchronous proxy wrote it.
  std::vector<uint32_t> genericWrite;

  Memory(size_t size, bool isShared) : bytes(size), shared(isShared) {
    if (shared) {
      writeEpoch.assign(size, 0);
      writer.assign(size, 0);
      readEpoch.assign(size, 0);
      readers.assign(size, 0);
      genericWrite.assign(size, 0);
    }
  }
};

/// The global memories whose addresses kernels took, shared by the host and
/// every workgroup of one emulate() call.
struct GlobalWindow {
  uint64_t next = uint64_t{1} << 32;
  std::vector<std::shared_ptr<Memory>> memories;
};

/// A memref: a strided view of a Memory, in elements.
struct View {
  std::shared_ptr<Memory> memory;
  int64_t offset = 0;
  SmallVector<int64_t> sizes, strides;
  unsigned elementBytes = 0;

  int64_t getNumElements() const {
    int64_t n = 1;
    for (int64_t s : sizes)
      n *= s;
    return n;
  }
  /// Calls `f(n, element)` for every element in row-major order: n its
  /// row-major position, `element` its index in `memory` (in elements).
  void forEachElement(llvm::function_ref<void(int64_t, int64_t)> f) const {
    const int64_t rank = sizes.size();
    SmallVector<int64_t> index(rank, 0);
    for (int64_t n = 0, e = getNumElements(); n < e; ++n) {
      int64_t element = offset;
      for (int64_t d = 0; d < rank; ++d)
        element += index[d] * strides[d];
      f(n, element);
      for (int64_t d = rank - 1; d >= 0; --d) {
        if (++index[d] < sizes[d])
          break;
        index[d] = 0;
      }
    }
  }
  bool isRowMajor() const {
    int64_t expected = 1;
    for (int d = static_cast<int>(sizes.size()) - 1; d >= 0; --d) {
      if (sizes[d] != 1 && strides[d] != expected)
        return false;
      expected *= sizes[d];
    }
    return true;
  }
};

SmallVector<int64_t> rowMajorStrides(ArrayRef<int64_t> sizes);

/// A row-major view of fresh storage for a static memref type.
View allocate(MemRefType type, bool shared);

//===----------------------------------------------------------------------===//
// Values (Values.cpp)
//===----------------------------------------------------------------------===//

using Lanes = LaneValues;

/// Bits of a scalar or of a vector's element (index: 64).
unsigned getElementBits(Type type);
/// The element type of a vector, or the type itself.
Type getElementType(Type type);
/// Words per lane: 1 for a scalar, a vector's elements, the flattened
/// scalars of an LLVM struct or array.
unsigned getWidth(Type type);

Word truncate(Word w, unsigned bits);
int64_t signExtend(Word w, unsigned bits);
/// An integer of `from` bits extended (signed or not) or truncated to `to`
/// bits: arith.ext{u,s}i / trunci / index_cast[ui] and LLVM's zext / sext /
/// trunc.
Word resizeInteger(Word w, unsigned from, unsigned to, bool isSigned);

float toF32(Word w);
Word fromF32(float f);
double toF64(Word w);
Word fromF64(double d);
/// Converts a float element of `type` to double and back (exact for every
/// float type up to f64; narrow results round to nearest even).
double floatToDouble(Word w, Type type);
Word doubleToFloat(double d, Type type);

/// Words of an integer, index or float attribute, element by element.
std::optional<std::vector<Word>> getAttributeWords(Attribute attr);

/// Reinterprets a lane's `count` elements of `fromBits` as elements of
/// `toBits` (vector/LLVM bitcasts: element 0 in the lowest bits).
void repack(const Lanes &from, unsigned fromBits, Lanes &to, unsigned toBits,
            unsigned lanes);

bool any(const Mask &mask);

//===----------------------------------------------------------------------===//
// The interpreter
//===----------------------------------------------------------------------===//

class Executor;

/// The workgroups of one cluster of a launch, running as fibers of one
/// scheduler (ExecutionContext's cluster functions).
struct Cluster {
  std::array<int64_t, 3> id{}, dim{1, 1, 1};
  /// By rank; a member that returned is `exited` (its state stays until the
  /// cluster ends, but no other member may touch it).
  std::vector<Executor *> members;
  std::vector<char> exited;
  /// The cluster barrier: per member and lane, arrivals and waits so far.
  std::vector<std::vector<uint64_t>> arrivals, waits;

  /// True once every thread of the members still running has arrived more
  /// than `phase` times.
  bool isPhaseComplete(uint64_t phase) const;
};

/// Executes one region nest (a host function, or one workgroup of a kernel)
/// with `lanes` lockstep lanes.
class Executor {
public:
  Executor(const InstructionSet &instructionSet, unsigned lanes,
           EmulatorStats &stats, std::string &error)
      : instructionSet(instructionSet), lanes(lanes),
        subgroupSize(instructionSet.getSubgroupSize()), stats(stats),
        error(error) {}

  const InstructionSet &instructionSet;
  /// Kernel context: workgroup id, sizes.
  bool kernel = false;
  std::array<int64_t, 3> blockId{}, blockDim{1, 1, 1}, gridDim{1, 1, 1};
  /// The workgroup's cluster (null: a cluster of one) and its rank there.
  Cluster *cluster = nullptr;
  unsigned clusterRank = 0;
  /// The barrier interval of the race check (0 marks never-written bytes,
  /// epoch - 1 bytes the asynchronous proxy wrote).
  uint32_t epoch = 2;
  /// Per subgroup, the proxy fences (fence.proxy.async) it has executed:
  /// an asynchronous-proxy read of a byte needs one by the byte's generic
  /// writer after its write.
  std::array<uint32_t, 64> proxyFences{};

  unsigned lanes;
  unsigned subgroupSize;
  EmulatorStats &stats;
  std::string &error;
  /// The host's hooks (null: none); kernels never launch.
  const EmulatorHooks *hooks = nullptr;
  /// The host function allocates device memory (gpu.alloc): it runs as on a
  /// GPU without unified memory, where kernels touch only device buffers
  /// and host ops only host ones.
  bool separateMemories = false;
  DenseMap<Value, Lanes> values;
  DenseMap<Value, View> views;
  /// Values an asynchronous instruction has not finished writing
  /// (ExecutionContext::setPending), with what reading one means.
  DenseMap<Value, std::string> pending;
  /// The workgroup's shared allocations by address, and the instruction
  /// set's state of the workgroup.
  std::vector<std::shared_ptr<Memory>> sharedWindow;
  /// The launch's dynamic shared memory (gpu.dynamic_shared_memory), null
  /// when the launch has none.
  std::shared_ptr<Memory> dynamicShared;
  /// The workgroup's fibers (Fibers.h), made at its first divergent scf.if
  /// on an instruction set that runs branches concurrently; the cluster's
  /// scheduler, which runs its workgroups, in a launch with clusters.
  std::shared_ptr<FiberScheduler> fibers;
  std::unique_ptr<WorkgroupState> workgroupState;
  std::shared_ptr<GlobalWindow> globalWindow = std::make_shared<GlobalWindow>();

  unsigned getNumSubgroups() const {
    return (lanes + subgroupSize - 1) / subgroupSize;
  }
  /// The lanes [first, end) of `subgroup`.
  std::pair<unsigned, unsigned> getSubgroupLanes(unsigned subgroup) const {
    return {subgroup * subgroupSize,
            std::min(lanes, (subgroup + 1) * subgroupSize)};
  }
  int64_t getThreadId(unsigned lane, unsigned dim) const;

  /// Runs `block`; the operands of its terminator (scf.yield, func.return)
  /// go to `yielded`.
  LogicalResult run(Block &block, const Mask &mask,
                    SmallVectorImpl<Value> *yielded = nullptr);

  LogicalResult fail(Operation *op, const Twine &message);
  /// Reads or writes `size` bytes at shared address `address` for
  /// `subgroup` with the shared-memory checks; `data` is the buffer.
  /// `asyncProxy`: an access of the asynchronous proxy (tcgen05 operand
  /// reads, bulk copies), ordered by mbarriers rather than barriers: bounds
  /// and unwritten bytes are checked, races are not, and its writes count as
  /// written before the current barrier interval.
  LogicalResult accessShared(Operation *op, uint64_t address, unsigned size,
                             unsigned subgroup, bool write, uint8_t *data,
                             bool asyncProxy = false);
  /// The shared allocation holding [address, address + size), or null.
  Memory *findShared(uint64_t address, unsigned size);
  /// The global address of `memory` (assigned on first use).
  uint64_t getGlobalAddress(const std::shared_ptr<Memory> &memory);
  /// The global allocation holding [address, address + size), or null.
  Memory *findGlobal(uint64_t address, uint64_t size);
  LogicalResult failUnsupported(Operation *op);
  LogicalResult barrier(Operation *op, const Mask &mask);

  /// The lanes of a defined value. References stay valid only until the
  /// next value is defined (the map may grow).
  Lanes &get(Value value) {
    auto it = values.find(value);
    assert(it != values.end() && "use of a value that was never defined");
    return it->second;
  }
  Lanes &define(Value value) {
    Lanes &result = values[value];
    result = Lanes(lanes, getWidth(value.getType()));
    return result;
  }
  Lanes uniform(Type type, ArrayRef<Word> words) {
    Lanes result(lanes, getWidth(type));
    for (unsigned lane = 0; lane < lanes; ++lane)
      for (unsigned i = 0; i < result.width; ++i)
        result.at(lane, i) = words.size() == 1 ? words[0] : words[i];
    return result;
  }
  void alias(Value from, Value to) {
    View copy = views[from];
    views[to] = std::move(copy);
  }

private:
  LogicalResult execute(Operation &op, const Mask &mask);

  // Op families, one file each.
  LogicalResult executeArith(Operation &op, const Mask &mask);
  LogicalResult executeMath(Operation &op);
  LogicalResult executeVector(Operation &op, const Mask &mask);
  LogicalResult executeMemRef(Operation &op, const Mask &mask);
  LogicalResult executeLLVM(Operation &op, const Mask &mask);
  LogicalResult executeGPU(Operation &op, const Mask &mask);
  LogicalResult executeFor(scf::ForOp op, const Mask &mask);
  LogicalResult executeIf(scf::IfOp op, const Mask &mask);
  LogicalResult executeGeneric(linalg::LinalgOp op);
  LogicalResult executeFill(linalg::FillOp op);
  LogicalResult launch(gpu::LaunchFuncOp op);
  /// Runs the workgroups of `cluster` of launch `op` (kernel body `body`);
  /// `makeGroup` makes the Executor of the workgroup with the given block
  /// id.
  LogicalResult runCluster(gpu::LaunchFuncOp op, Cluster &cluster,
                           llvm::function_ref<std::unique_ptr<Executor>(
                               const std::array<int64_t, 3> &)>
                               makeGroup,
                           Block &body);
  /// Copies the elements of `from` to `to` (same shape, any strides).
  LogicalResult copyElements(Operation *op, const View &from, const View &to);
  /// With separate memories: fails when host op `op` touches device memory.
  LogicalResult checkHostAccess(Operation &op);

  /// The iteration point of the linalg.generic being executed (host only).
  SmallVector<int64_t> linalgPoint;

  // Memory access of lane `lane` at `indices` of `view`, `count` elements.
  FailureOr<int64_t> address(Operation *op, const View &view,
                             ValueRange indices, unsigned lane, int64_t count);
  LogicalResult checkShared(Operation *op, Memory &memory, int64_t byte,
                            int64_t size, unsigned subgroup, bool write);
  LogicalResult load(Operation *op, const View &view, ValueRange indices,
                     Value result, const Mask &mask);
  LogicalResult store(Operation *op, const View &view, ValueRange indices,
                      Value stored, const Mask &mask);
};

} // namespace mlir::fp4train::emulation::detail

#endif // FP4TRAIN_LIB_EMULATION_INTERPRETER_EXECUTOR_H
