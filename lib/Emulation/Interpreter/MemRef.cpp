//===- MemRef.cpp - memref views, bounds and shared-memory checks ---------===//
//
// Every access is bounds-checked per lane; shared-memory accesses are also
// checked for races between subgroups and for reads of unwritten bytes.
//
//===----------------------------------------------------------------------===//

#include "Executor.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/FormatVariadic.h"

#include <cstring>

using namespace mlir;
using namespace mlir::fp4train::emulation::detail;

FailureOr<int64_t> Executor::address(Operation *op, const View &view,
                                     ValueRange indices, unsigned lane,
                                     int64_t count) {
  int64_t element = view.offset;
  for (auto [d, index] : llvm::enumerate(indices)) {
    const int64_t i = static_cast<int64_t>(get(index).at(lane));
    const int64_t extent = d + 1 == indices.size() ? count : 1;
    if (i < 0 || i + extent > view.sizes[d]) {
      (void)fail(op, llvm::formatv("lane {0}: index {1} (+{2}) out of bounds "
                                   "of dimension {3} (size {4})",
                                   lane, i, extent, d, view.sizes[d]));
      return failure();
    }
    element += i * view.strides[d];
  }
  return element * static_cast<int64_t>(view.elementBytes);
}

LogicalResult Executor::checkShared(Operation *op, Memory &memory, int64_t byte,
                                    int64_t size, unsigned subgroup,
                                    bool write) {
  const StringRef unit = instructionSet.getSubgroupTerm();
  const StringRef shared = instructionSet.getSharedMemoryTerm();
  for (int64_t b = byte; b < byte + size; ++b) {
    const bool writtenNow = memory.writeEpoch[b] == epoch;
    if (!write && memory.writeEpoch[b] == 0)
      return fail(op, llvm::formatv("{0} {1} reads {2} byte {3}, which no "
                                    "thread has written",
                                    unit, subgroup, shared, b));
    if (writtenNow && memory.writer[b] != subgroup)
      return fail(op, llvm::formatv("{0} race: {1} {2} {3} byte {4} that {1} "
                                    "{5} wrote since the last barrier",
                                    shared, unit, subgroup,
                                    write ? "writes" : "reads", b,
                                    memory.writer[b]));
    if (write && memory.readEpoch[b] == epoch &&
        (memory.readers[b] & ~(uint64_t{1} << subgroup)))
      return fail(op, llvm::formatv("{0} race: {1} {2} writes byte {3} that "
                                    "another {1} read since the last barrier",
                                    shared, unit, subgroup, b));
    if (write) {
      memory.writeEpoch[b] = epoch;
      memory.writer[b] = static_cast<uint8_t>(subgroup);
      memory.genericWrite[b] = proxyFences[subgroup] + 1;
    } else {
      if (memory.readEpoch[b] != epoch) {
        memory.readEpoch[b] = epoch;
        memory.readers[b] = 0;
      }
      memory.readers[b] |= uint64_t{1} << subgroup;
    }
  }
  return success();
}

LogicalResult Executor::load(Operation *op, const View &view,
                             ValueRange indices, Value result,
                             const Mask &mask) {
  if (!view.memory)
    return fail(op, "memref has no storage");
  const unsigned width = getWidth(result.getType());
  const unsigned bytes = view.elementBytes;
  if (width > 1 && !indices.empty() && view.strides.back() != 1)
    return fail(op, "vector access to a non-unit-stride dimension");
  Lanes &out = define(result);
  for (unsigned lane = 0; lane < lanes; ++lane) {
    if (!mask[lane])
      continue;
    FailureOr<int64_t> byte = address(op, view, indices, lane, width);
    if (failed(byte))
      return failure();
    if (view.memory->shared &&
        failed(checkShared(op, *view.memory, *byte, int64_t{width} * bytes,
                           lane / subgroupSize, /*write=*/false)))
      return failure();
    for (unsigned i = 0; i < width; ++i) {
      Word w = 0;
      std::memcpy(&w, view.memory->bytes.data() + *byte + i * bytes, bytes);
      out.at(lane, i) = w;
    }
  }
  return success();
}

LogicalResult Executor::store(Operation *op, const View &view,
                              ValueRange indices, Value stored,
                              const Mask &mask) {
  if (!view.memory)
    return fail(op, "memref has no storage");
  const Lanes &value = get(stored);
  const unsigned bytes = view.elementBytes;
  if (value.width > 1 && !indices.empty() && view.strides.back() != 1)
    return fail(op, "vector access to a non-unit-stride dimension");
  for (unsigned lane = 0; lane < lanes; ++lane) {
    if (!mask[lane])
      continue;
    FailureOr<int64_t> byte = address(op, view, indices, lane, value.width);
    if (failed(byte))
      return failure();
    if (view.memory->shared &&
        failed(checkShared(op, *view.memory, *byte,
                           int64_t{value.width} * bytes, lane / subgroupSize,
                           /*write=*/true)))
      return failure();
    for (unsigned i = 0; i < value.width; ++i) {
      const Word w = value.at(lane, i);
      std::memcpy(view.memory->bytes.data() + *byte + i * bytes, &w, bytes);
    }
  }
  return success();
}

LogicalResult Executor::executeMemRef(Operation &op, const Mask &mask) {
  auto checkElementBytes = [&](MemRefType type) -> LogicalResult {
    if (getElementBits(type.getElementType()) % 8)
      return fail(&op, "sub-byte memref elements are not supported");
    return success();
  };
  auto reshape = [&](Value source, Value result) -> LogicalResult {
    const View &from = views[source];
    if (!from.isRowMajor())
      return fail(&op, "reshape of a non-contiguous view");
    View to = from;
    auto type = cast<MemRefType>(result.getType());
    to.sizes.assign(type.getShape().begin(), type.getShape().end());
    to.strides = rowMajorStrides(to.sizes);
    views[result] = std::move(to);
    return success();
  };
  return llvm::TypeSwitch<Operation *, LogicalResult>(&op)
      .Case([&](memref::LoadOp load) {
        return this->load(&op, views[load.getMemRef()], load.getIndices(),
                          load.getResult(), mask);
      })
      .Case([&](memref::StoreOp store) {
        return this->store(&op, views[store.getMemRef()], store.getIndices(),
                           store.getValueToStore(), mask);
      })
      .Case([&](memref::AllocOp alloc) -> LogicalResult {
        MemRefType type = alloc.getType();
        if (!type.hasStaticShape() || !type.getLayout().isIdentity())
          return fail(&op, "only static identity-layout allocations");
        if (kernel)
          return fail(&op, "allocation inside a kernel");
        if (failed(checkElementBytes(type)))
          return failure();
        views[alloc.getResult()] = allocate(type, /*shared=*/false);
        return success();
      })
      .Case([&](memref::GetGlobalOp getGlobal) -> LogicalResult {
        // Constant tables (e.g. fixed Hadamard signs): one storage per
        // global, filled from its initializer.
        auto global = SymbolTable::lookupNearestSymbolFrom<memref::GlobalOp>(
            &op, getGlobal.getNameAttr());
        auto initial = global ? dyn_cast_or_null<DenseElementsAttr>(
                                    global.getInitialValueAttr())
                              : DenseElementsAttr();
        MemRefType type = getGlobal.getType();
        if (!initial || !type.hasStaticShape())
          return fail(&op, "only static globals with a dense initializer");
        if (failed(checkElementBytes(type)))
          return failure();
        std::optional<std::vector<Word>> words = getAttributeWords(initial);
        View view = allocate(type, /*shared=*/false);
        const unsigned bytes = view.elementBytes;
        for (int64_t i = 0; i < view.getNumElements(); ++i) {
          const Word w = (*words)[words->size() == 1 ? 0 : i];
          std::memcpy(view.memory->bytes.data() + i * bytes, &w, bytes);
        }
        views[getGlobal.getResult()] = std::move(view);
        return success();
      })
      .Case([&](memref::CopyOp copy) -> LogicalResult {
        // Host code between kernels (a training step's results).
        if (kernel)
          return fail(&op, "memref.copy inside a kernel");
        return copyElements(&op, views[copy.getSource()],
                            views[copy.getTarget()]);
      })
      .Case(
          [&](memref::ExtractAlignedPointerAsIndexOp extract) -> LogicalResult {
            // A shared allocation's address in the workgroup's shared window,
            // or a global one's in the global window (what the NVVM ops that
            // take pointers see).
            const View &view = views[extract.getSource()];
            if (!view.memory)
              return fail(&op, "memref has no storage");
            const Word address = view.memory->shared
                                     ? view.memory->address
                                     : getGlobalAddress(view.memory);
            values[extract.getResult()] = uniform(extract.getType(), {address});
            return success();
          })
      .Case([&](memref::DeallocOp) { return success(); })
      .Case([&](memref::AssumeAlignmentOp assume) {
        alias(assume.getMemref(), assume.getResult());
        return success();
      })
      .Case([&](memref::CastOp cast) {
        alias(cast.getSource(), cast.getResult());
        return success();
      })
      .Case([&](memref::ExpandShapeOp expand) {
        return reshape(expand.getSrc(), expand.getResult());
      })
      .Case([&](memref::CollapseShapeOp collapse) {
        return reshape(collapse.getSrc(), collapse.getResult());
      })
      .Default([&](Operation *) { return failUnsupported(&op); });
}

LogicalResult Executor::copyElements(Operation *op, const View &from,
                                     const View &to) {
  if (from.sizes != to.sizes || from.elementBytes != to.elementBytes)
    return fail(op, "copy between views of different shapes");
  std::vector<int64_t> sources;
  from.forEachElement(
      [&](int64_t, int64_t element) { sources.push_back(element); });
  const unsigned bytes = from.elementBytes;
  std::vector<uint8_t> staged(sources.size() * bytes);
  for (size_t i = 0; i < sources.size(); ++i)
    std::memcpy(staged.data() + i * bytes,
                from.memory->bytes.data() + sources[i] * bytes, bytes);
  to.forEachElement([&](int64_t n, int64_t element) {
    std::memcpy(to.memory->bytes.data() + element * bytes,
                staged.data() + n * bytes, bytes);
  });
  return success();
}
