//===- Tcgen05Alloc.cpp - Tensor memory and tcgen05.alloc/dealloc ---------===//
//
// Sources: PTX ISA §9.7.16.1 "Tensor Memory" (sm_100a: 128 lanes x 512
// columns of 32-bit cells per CTA), §9.7.16.1.1 "Tensor Memory Addressing"
// (lane in bits 31..16, column in bits 15..0), §9.7.16.1.2 "Tensor Memory
// Allocation" (by columns, units of 32, powers of 2, all 128 lanes of a
// column; everything allocated must be deallocated before the kernel exits)
// and §9.7.16.7.1 "tcgen05.alloc, tcgen05.dealloc,
// tcgen05.relinquish_alloc_permit" (nCols in [32, 512], a power of 2; "the
// number of columns allocated should not increase between any two
// allocations in the execution order within the CTA"; no alloc after the
// permit is relinquished; dealloc's taddr must point to a previous
// allocation).
//
// Where the ISA leaves the choice to the hardware, the model takes the lowest
// free range aligned to its size (so addresses are deterministic). A request
// that does not fit blocks on the hardware until another warp frees columns;
// in the lockstep emulation no other warp can, so it is an error. Cells are
// "never written" after allocation and again after deallocation.
//
//===----------------------------------------------------------------------===//

#include "fp4train/Emulation/Tcgen05.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/FormatVariadic.h"

using namespace fp4train::emulation::ptx;

SharedMemory::~SharedMemory() = default;

TensorMemory::TensorMemory()
    : cells(kTmemLanes * kTmemColumns), written(kTmemLanes * kTmemColumns),
      pendingOp(kTmemLanes * kTmemColumns) {}

bool TensorMemory::isAllocated(unsigned column) const {
  return llvm::any_of(allocations, [&](const Allocation &a) {
    return column >= a.column && column < a.column + a.nCols;
  });
}

std::string TensorMemory::alloc(uint32_t nCols, uint32_t *address) {
  if (permitRelinquished)
    return "tcgen05.alloc after tcgen05.relinquish_alloc_permit";
  if (nCols < 32 || nCols > kTmemColumns || (nCols & (nCols - 1)))
    return llvm::formatv("tcgen05.alloc of {0} columns: nCols must be a "
                         "power of 2 in [32, 512]",
                         nCols);
  if (nCols > maxAllocation)
    return llvm::formatv("tcgen05.alloc of {0} columns after one of {1}: the "
                         "number of columns must not increase between "
                         "allocations",
                         nCols, maxAllocation);
  for (uint32_t start = 0; start + nCols <= kTmemColumns; start += nCols) {
    bool free = llvm::none_of(allocations, [&](const Allocation &a) {
      return start < a.column + a.nCols && a.column < start + nCols;
    });
    if (!free)
      continue;
    allocations.push_back({start, nCols});
    maxAllocation = nCols;
    for (unsigned lane = 0; lane < kTmemLanes; ++lane)
      for (unsigned c = start; c < start + nCols; ++c) {
        written[lane * kTmemColumns + c] = 0;
        pendingOp[lane * kTmemColumns + c] = 0;
      }
    *address = TmemAddress{0, start}.encode();
    return {};
  }
  uint32_t used = 0;
  for (const Allocation &a : allocations)
    used += a.nCols;
  return llvm::formatv("tcgen05.alloc of {0} columns with {1} of 512 columns "
                       "allocated: no free aligned range (the hardware would "
                       "block until another warp deallocates)",
                       nCols, used);
}

std::string TensorMemory::dealloc(uint32_t address, uint32_t nCols) {
  const TmemAddress at = TmemAddress::decode(address);
  auto it = llvm::find_if(
      allocations, [&](const Allocation &a) { return a.column == at.column; });
  if (at.lane != 0 || it == allocations.end())
    return llvm::formatv("tcgen05.dealloc of address {0:x8} (lane {1}, "
                         "column {2}), which is not a tcgen05.alloc result",
                         address, at.lane, at.column);
  if (it->nCols != nCols)
    return llvm::formatv("tcgen05.dealloc of {0} columns at column {1}, "
                         "allocated with {2}",
                         nCols, at.column, it->nCols);
  for (unsigned lane = 0; lane < kTmemLanes; ++lane)
    for (unsigned c = it->column; c < it->column + it->nCols; ++c)
      written[lane * kTmemColumns + c] = 0;
  allocations.erase(it);
  return {};
}

std::string TensorMemory::checkAllDeallocated() const {
  if (allocations.empty())
    return {};
  return llvm::formatv("the kernel exits with {0} columns of tensor memory "
                       "still allocated at column {1} (tcgen05.dealloc "
                       "missing)",
                       allocations.front().nCols, allocations.front().column);
}

std::string TensorMemory::read(unsigned lane, unsigned column,
                               const std::string &what, uint32_t *word) const {
  if (lane >= kTmemLanes || column >= kTmemColumns)
    return llvm::formatv("{0} reads tensor memory lane {1}, column {2}: "
                         "outside the 128 lanes x 512 columns",
                         what, lane, column);
  if (!isAllocated(column))
    return llvm::formatv("{0} reads tensor memory column {1}, which is not "
                         "allocated",
                         what, column);
  if (!written[lane * kTmemColumns + column])
    return llvm::formatv("{0} reads tensor memory lane {1}, column {2}, "
                         "which nothing has written",
                         what, lane, column);
  *word = cells[lane * kTmemColumns + column];
  return {};
}

std::string TensorMemory::write(unsigned lane, unsigned column, uint32_t word,
                                uint32_t asyncOp) {
  if (lane >= kTmemLanes || column >= kTmemColumns)
    return llvm::formatv("write of tensor memory lane {0}, column {1}: "
                         "outside the 128 lanes x 512 columns",
                         lane, column);
  if (!isAllocated(column))
    return llvm::formatv("write of tensor memory column {0}, which is not "
                         "allocated",
                         column);
  cells[lane * kTmemColumns + column] = word;
  written[lane * kTmemColumns + column] = 1;
  pendingOp[lane * kTmemColumns + column] = asyncOp;
  return {};
}

uint32_t TensorMemory::getPendingOp(unsigned lane, unsigned column) const {
  if (lane >= kTmemLanes || column >= kTmemColumns)
    return 0;
  return pendingOp[lane * kTmemColumns + column];
}

void TensorMemory::completeOp(uint32_t asyncOp) {
  if (asyncOp == 0)
    return;
  for (uint32_t &op : pendingOp)
    if (op == asyncOp)
      op = 0;
}
