//===- Tcgen05Mma.cpp - tcgen05.mma ... .block_scale model ----------------===//
//
// Sources: PTX ISA
//  - §9.7.16.10.9.1 "tcgen05.mma": D = A x B + D for enable-input-d, D =
//    A x B otherwise; A from a shared memory descriptor or tensor memory, B
//    from a descriptor, D and the scales in tensor memory; the block-scaled
//    form is (A * scale_A) * (B * scale_B) + D (§9.7.16.10.7).
//  - §9.7.16.10.5 "Data Path Layout Organization": M = 128 with cta_group::1
//    is Layout D, 4x1 datapath, TMEM lane alignment 0: row m of D in lane m,
//    column n in column D + n (Figure 211).
//  - §9.7.16.10.7 "Block Scaling": scale_A is M x SFA_N, scale_B SFB_M x N;
//    "Scale factors for A and B matrices need to be duplicated to all 32 lane
//    partitions of tensor memory"; §9.7.16.10.7.2/3 (Figures 231-233,
//    240-242): SF_ID selects the byte (1X), half word (2X) or whole word (4X)
//    of the 32-bit cells.
//  - §9.7.16.10.4.3/5: A in tensor memory packs its containers contiguously
//    in the 32-bit cells (the FP4 kinds two E2M1 per byte); §9.7.16.10.4.4
//    and §5.2.3: kind::mxf8f6f4 keeps E2M1 in bits 5..2 of its byte and
//    E2M3/E3M2 in bits 5..0.
//
// Which cell holds the scale of A row m (B column n) is drawn in the ISA's
// figures only; the model takes lane m % 32 of each 32-lane partition,
// column scale_A + m / 32 (n % 32, scale_B + n / 32), the layout that
// tcgen05.cp .32x128b.warpx4 produces from CUTLASS's SM100 scale-factor atom
// ((32,4),(SFVec,4)):((16,4),(0,1)), and requires all four partitions to
// agree. Numerics: BlockScaleArithmetic.h, shared with mma.sync (exact sum,
// one rounding to f32).
//
// cta_group::2 with M = 256 (Layout A of §9.7.16.10.5; "performed on the
// Tensor Memory of the executing thread's CTA and its peer CTA"): which CTA
// holds which rows and scale factors is drawn only, so the model follows
// CUTLASS's SM100_MMA_MXF4_2x1SM_SS traits: CTA v of the pair holds A and D
// rows 128 v .., B rows (N) N / 2 · v .., and in its tensor memory the
// scale factors of its A rows and of all N columns of B, each at the
// instruction's addresses; every CTA computes its rows against all of B.
//
//===----------------------------------------------------------------------===//

#include "fp4train/Emulation/Tcgen05.h"

#include "BlockScaleArithmetic.h"

#include "llvm/Support/FormatVariadic.h"

using namespace fp4train::emulation::ptx;
using detail::decodeElement;
using detail::decodeScale;
using detail::ExactAccumulator;
using detail::Value;

namespace {

/// Reads operand `which` (rows x k containers, K-major) through the shared
/// memory descriptor `bits`.
std::string readSharedOperand(const char *which, uint64_t bits,
                              SharedMemory &smem, unsigned rows, unsigned k,
                              unsigned containerBits,
                              std::vector<uint32_t> *codes) {
  SmemDescriptor desc;
  std::string error = decodeSmemDescriptor(bits, &desc);
  if (error.empty())
    error = readKMajorOperand(desc, smem, rows, k, containerBits, codes);
  return error.empty() ? error : std::string(which) + ": " + error;
}

/// Reads the scale-factor bytes of `count` rows (A) or columns (B) from the
/// cells at `address`: row r's `blocks` bytes from lane r % 32 of every
/// partition, column address.column + r / 32, bytes sfId .. sfId + blocks.
std::string readScales(const char *which, uint32_t address, unsigned count,
                       unsigned blocks, unsigned sfId, ScaleFormat format,
                       const TensorMemory &tmem, std::vector<Value> *scales) {
  const TmemAddress at = TmemAddress::decode(address);
  if (at.lane != 0)
    return llvm::formatv("scale_{0} address {1:x8} has lane {2}: the scale "
                         "factors start at lane 0 (they fill every 32-lane "
                         "partition)",
                         which, address, at.lane);
  scales->resize(size_t{count} * blocks);
  for (unsigned r = 0; r < count; ++r) {
    uint32_t cell = 0;
    for (unsigned partition = 0; partition < 4; ++partition) {
      uint32_t word;
      const unsigned lane = 32 * partition + r % 32;
      if (std::string error =
              tmem.read(lane, at.column + r / 32,
                        std::string("the scale_") + which + " read", &word);
          !error.empty())
        return error;
      if (partition == 0)
        cell = word;
      else if (word != cell)
        return llvm::formatv("scale_{0} of {1} {2}: lane {3} holds {4:x8} but "
                             "lane {5} holds {6:x8}; the ISA requires the "
                             "scale factors duplicated to all four 32-lane "
                             "partitions",
                             which, *which == 'A' ? "row" : "column", r, r % 32,
                             cell, lane, word);
    }
    for (unsigned j = 0; j < blocks; ++j)
      (*scales)[size_t{r} * blocks + j] =
          decodeScale(format, (cell >> (8 * (sfId + j))) & 0xFF);
  }
  return {};
}

} // namespace

namespace {

/// The MMA on `ctas` CTAs (1, or the pair: even CTA first): CTA v's A rows
/// and B rows N/ctas · v .. from its shared memory, its D rows and scale
/// factors in its tensor memory.
std::string runMma(const Tcgen05MmaOperands &operands, unsigned ctas,
                   TensorMemory *const tmem[], SharedMemory *const smem[],
                   uint32_t asyncOp) {
  InstrDescriptor idesc;
  if (std::string error =
          decodeInstrDescriptor(operands.kind, operands.scaleVec,
                                operands.idesc, &idesc, /*ctaGroup=*/ctas);
      !error.empty())
    return error;
  const unsigned M = idesc.m / ctas, N = idesc.n, K = idesc.k;
  const bool fp4Kind = operands.kind != BlockScaleKind::MXF8F6F4;
  const unsigned containerBits = fp4Kind ? 4 : 8;
  auto inCta = [&](const std::string &error, unsigned v) {
    return error.empty() || ctas == 1
               ? error
               : llvm::formatv("{0} CTA of the pair: {1}",
                               v == 0 ? "even" : "odd", error)
                     .str();
  };
  auto element = [&](ElementType type, uint8_t code) {
    return decodeElement(type,
                         fp4Kind ? code : detail::unpadContainer(code, type));
  };

  // B: N x K (K-major), N / ctas rows from each CTA.
  std::vector<uint32_t> codesB;
  for (unsigned v = 0; v < ctas; ++v) {
    std::vector<uint32_t> half;
    if (std::string error = readSharedOperand(
            "B", operands.bDesc, *smem[v], N / ctas, K, containerBits, &half);
        !error.empty())
      return inCta(error, v);
    llvm::append_range(codesB, half);
  }
  std::vector<Value> b(codesB.size());
  for (size_t i = 0; i < codesB.size(); ++i)
    b[i] = element(idesc.typeB, codesB[i]);

  const unsigned blocks = static_cast<unsigned>(operands.scaleVec);
  const unsigned blockSize = K / blocks;
  const TmemAddress d = TmemAddress::decode(operands.d);
  if (d.lane != 0)
    return llvm::formatv("D address {0:x8} has lane {1}: a block-scaled "
                         "accumulator (Layout {2}) starts at lane 0",
                         operands.d, d.lane, ctas == 1 ? "D" : "A");
  const bool negate = idesc.negateA != idesc.negateB;
  std::vector<std::vector<uint32_t>> results(ctas);
  for (unsigned v = 0; v < ctas; ++v) {
    TensorMemory &cells = *tmem[v];
    // A: M x K, this CTA's rows.
    std::vector<uint32_t> codesA;
    if (operands.aInTensorMemory) {
      const TmemAddress at =
          TmemAddress::decode(static_cast<uint32_t>(operands.a));
      const unsigned perCell = 32 / containerBits;
      codesA.resize(size_t{M} * K);
      for (unsigned m = 0; m < M; ++m)
        for (unsigned c = 0; c < K / perCell; ++c) {
          uint32_t word;
          if (std::string error = cells.read(at.lane + m, at.column + c,
                                             "the A operand read", &word);
              !error.empty())
            return inCta(error, v);
          for (unsigned i = 0; i < perCell; ++i)
            codesA[size_t{m} * K + c * perCell + i] =
                (word >> (containerBits * i)) & ((1u << containerBits) - 1);
        }
    } else if (std::string error = readSharedOperand(
                   "A", operands.a, *smem[v], M, K, containerBits, &codesA);
               !error.empty()) {
      return inCta(error, v);
    }
    std::vector<Value> a(codesA.size());
    for (size_t i = 0; i < codesA.size(); ++i)
      a[i] = element(idesc.typeA, codesA[i]);

    // Scales: this CTA's A rows, every B column.
    std::vector<Value> sfA, sfB;
    if (std::string error =
            readScales("A", operands.scaleA, M, blocks, idesc.scaleFactorIdA,
                       idesc.scaleFormat, cells, &sfA);
        !error.empty())
      return inCta(error, v);
    if (std::string error =
            readScales("B", operands.scaleB, N, blocks, idesc.scaleFactorIdB,
                       idesc.scaleFormat, cells, &sfB);
        !error.empty())
      return inCta(error, v);

    // D: row m (of this CTA's) in lane m.
    std::vector<uint32_t> &result = results[v];
    result.resize(size_t{M} * N);
    for (unsigned m = 0; m < M; ++m)
      for (unsigned n = 0; n < N; ++n) {
        uint32_t c = 0;
        if (operands.enableInputD)
          if (std::string error =
                  cells.read(m, d.column + n, "the accumulator (D) read", &c);
              !error.empty())
            return inCta(error, v);
        ExactAccumulator acc(c);
        for (unsigned k = 0; k < K; ++k) {
          const Value factors[4] = {
              sfA[size_t{m} * blocks + k / blockSize], a[size_t{m} * K + k],
              sfB[size_t{n} * blocks + k / blockSize], b[size_t{n} * K + k]};
          acc.addProduct(factors, negate);
        }
        result[size_t{m} * N + n] = acc.round();
      }
  }
  for (unsigned v = 0; v < ctas; ++v)
    for (unsigned m = 0; m < M; ++m)
      for (unsigned n = 0; n < N; ++n)
        if (std::string error = tmem[v]->write(
                m, d.column + n, results[v][size_t{m} * N + n], asyncOp);
            !error.empty())
          return inCta("D: " + error, v);
  return {};
}

} // namespace

std::string fp4train::emulation::ptx::tcgen05MmaBlockScale(
    const Tcgen05MmaOperands &operands, TensorMemory &tmem, SharedMemory &smem,
    uint32_t asyncOp) {
  TensorMemory *const tmems[] = {&tmem};
  SharedMemory *const smems[] = {&smem};
  return runMma(operands, 1, tmems, smems, asyncOp);
}

std::string fp4train::emulation::ptx::tcgen05MmaBlockScalePair(
    const Tcgen05MmaOperands &operands, TensorMemory *const tmem[2],
    SharedMemory *const smem[2], uint32_t asyncOp) {
  return runMma(operands, 2, tmem, smem, asyncOp);
}
