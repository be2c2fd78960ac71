//===- Tcgen05LdSt.cpp - tcgen05.ld / tcgen05.st register fragments -------===//
//
// Sources: PTX ISA
//  - §9.7.16.8.1 "Access restrictions": warp w of a warpgroup (%warpid % 4)
//    accesses tensor memory lanes 32w .. 32w + 31 only; all columns.
//  - §9.7.16.8.3 "tcgen05.ld", §9.7.16.8.4 "tcgen05.st": .sync.aligned
//    warp-collective; .shape .32x32b / .16x256b with .num = .x1 .. .x128;
//    the same taddr in all threads.
//  - §9.7.16.2.3.1 "Memory Layout": .32x32b accesses 32 lanes with
//    32 * .num bits of each lane, registers r0, r1, ... low to high (Figure
//    183); .16x256b 16 lanes with 256 * .num bits, registers r0..r3 per
//    repetition (Figure 186).
//
// The figures give the thread mapping. 32x32b: thread t, lane taddr.lane +
// t, register i from column taddr.column + i. 16x256b (the layout of the
// mma.sync m16n8 accumulator, which CUTLASS's SM100_TMEM_LOAD_16dp256b1x
// agrees with): thread t, g = t / 4, q = t % 4; registers 4j, 4j + 1 lane
// taddr.lane + g, columns taddr.column + 8j + 2q, + 1; registers 4j + 2,
// 4j + 3 lane taddr.lane + 8 + g, the same columns. .pack::16b / .unpack::16b
// are not modelled.
//
//===----------------------------------------------------------------------===//

#include "fp4train/Emulation/Tcgen05.h"

#include "llvm/Support/FormatVariadic.h"

using namespace fp4train::emulation::ptx;

namespace {

/// The (lane, column) of register `i` of thread `t`.
std::pair<unsigned, unsigned> locate(LdStShape shape, TmemAddress at,
                                     unsigned t, unsigned i) {
  if (shape == LdStShape::S32x32b)
    return {at.lane + t, at.column + i};
  const unsigned g = t / 4, q = t % 4, j = i / 4, r = i % 4;
  return {at.lane + g + 8 * (r / 2), at.column + 8 * j + 2 * q + r % 2};
}

std::string check(LdStShape shape, unsigned num, uint32_t taddr,
                  unsigned warpInGroup) {
  if (num == 0 || num > 128 || (num & (num - 1)))
    return llvm::formatv(".num = x{0} is not a power of 2 in 1..128", num);
  if (shape == LdStShape::S16x256b && num > 32)
    return llvm::formatv(".16x256b takes .num up to x32, not x{0}", num);
  const TmemAddress at = TmemAddress::decode(taddr);
  const unsigned lanes = shape == LdStShape::S32x32b ? 32 : 16;
  const unsigned first = 32 * (warpInGroup % 4);
  if (at.lane < first || at.lane + lanes > first + 32)
    return llvm::formatv("warp {0} of the warpgroup accesses tensor memory "
                         "lanes {1}-{2} only, not lanes {3}-{4}",
                         warpInGroup % 4, first, first + 31, at.lane,
                         at.lane + lanes - 1);
  return {};
}

} // namespace

unsigned fp4train::emulation::ptx::getLdStRegisters(LdStShape shape,
                                                    unsigned num) {
  return shape == LdStShape::S32x32b ? num : 4 * num;
}

std::string fp4train::emulation::ptx::tcgen05Ld(LdStShape shape, unsigned num,
                                                uint32_t taddr,
                                                unsigned warpInGroup,
                                                const TensorMemory &tmem,
                                                std::vector<uint32_t> *regs) {
  if (std::string error = check(shape, num, taddr, warpInGroup); !error.empty())
    return "tcgen05.ld: " + error;
  const TmemAddress at = TmemAddress::decode(taddr);
  const unsigned count = getLdStRegisters(shape, num);
  regs->assign(size_t{kWarpSize} * count, 0);
  for (unsigned t = 0; t < kWarpSize; ++t)
    for (unsigned i = 0; i < count; ++i) {
      auto [lane, column] = locate(shape, at, t, i);
      if (uint32_t op = tmem.getPendingOp(lane, column))
        return llvm::formatv("tcgen05.ld reads tensor memory lane {0}, column "
                             "{1}, which asynchronous tcgen05 operation #{2} "
                             "writes: no completed tcgen05.commit -> mbarrier "
                             "wait orders the load after it",
                             lane, column, op);
      if (std::string error = tmem.read(lane, column, "tcgen05.ld",
                                        &(*regs)[size_t{t} * count + i]);
          !error.empty())
        return error;
    }
  return {};
}

std::string fp4train::emulation::ptx::tcgen05St(LdStShape shape, unsigned num,
                                                uint32_t taddr,
                                                unsigned warpInGroup,
                                                llvm::ArrayRef<uint32_t> regs,
                                                TensorMemory &tmem) {
  if (std::string error = check(shape, num, taddr, warpInGroup); !error.empty())
    return "tcgen05.st: " + error;
  const TmemAddress at = TmemAddress::decode(taddr);
  const unsigned count = getLdStRegisters(shape, num);
  if (regs.size() != size_t{kWarpSize} * count)
    return "tcgen05.st: every thread needs its registers";
  for (unsigned t = 0; t < kWarpSize; ++t)
    for (unsigned i = 0; i < count; ++i) {
      auto [lane, column] = locate(shape, at, t, i);
      if (std::string error =
              tmem.write(lane, column, regs[size_t{t} * count + i]);
          !error.empty())
        return "tcgen05.st: " + error;
    }
  return {};
}
