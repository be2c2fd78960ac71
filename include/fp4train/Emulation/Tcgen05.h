//===- Tcgen05.h - CPU models of sm_100a/sm_103a tcgen05 and mbarrier -----===//
//
// Lane-level models of the Blackwell datacenter (sm_100a, sm_103a) tensor core
// instructions the tcgen05 lowering uses, for the lane-exact emulation of
// [CHK4] (docs/semantics.md): the per-CTA tensor memory and its allocation, the
// shared-memory matrix descriptor and the canonical K-major layouts it
// describes, the instruction descriptor of the block-scaled kinds, tcgen05.mma
// ... .block_scale, tcgen05.cp, tcgen05.ld / tcgen05.st and the mbarrier object
// that tcgen05.commit arrives on. Each model lives in its own file under
// lib/Emulation/PTX/ (Tcgen05*.cpp, Mbarrier.cpp), written from the PTX ISA
// (§9.7.16 "TensorCore 5th Generation Family Instructions", §9.7.13.15
// "mbarrier"; cited section by section in each file), never from the lowering
// it checks: nothing here includes fp4train's Conversion or Numerics code.
//
// Every model returns "" or a message saying why the operands are invalid
// or what the model does not cover; none asserts on its inputs.
//
//===----------------------------------------------------------------------===//

#ifndef FP4TRAIN_EMULATION_TCGEN05_H
#define FP4TRAIN_EMULATION_TCGEN05_H

#include "fp4train/Emulation/PTX.h"

#include "llvm/ADT/ArrayRef.h"

#include <cstdint>
#include <string>
#include <vector>

namespace fp4train::emulation::ptx {

//===----------------------------------------------------------------------===//
// Shared memory, as the models see it
//===----------------------------------------------------------------------===//

/// The CTA's shared memory by byte address (the .shared::cta window). The
/// emulator's implementation bounds-checks and race-checks every access.
class SharedMemory {
public:
  virtual ~SharedMemory();
  /// Reads `size` bytes at `address` into `out`; returns "" or why not.
  virtual std::string read(uint32_t address, unsigned size, uint8_t *out) = 0;
};

//===----------------------------------------------------------------------===//
// Tensor memory (§9.7.16.1, §9.7.16.7.1)
//===----------------------------------------------------------------------===//

inline constexpr unsigned kTmemLanes = 128;
inline constexpr unsigned kTmemColumns = 512;

/// A tensor memory address: lane in bits 31..16, column in bits 15..0.
struct TmemAddress {
  uint32_t lane = 0, column = 0;
  static TmemAddress decode(uint32_t bits) {
    return {bits >> 16, bits & 0xFFFF};
  }
  uint32_t encode() const { return lane << 16 | column; }
};

/// The tensor memory of one CTA: 128 lanes x 512 columns of 32-bit cells,
/// allocated by columns, with a shadow that makes reads of unallocated or
/// never-written cells errors. A cell written by an asynchronous tcgen05
/// operation (mma, cp) carries that operation's id until the operation is
/// known complete (its commit's mbarrier phase completed), so that a
/// tcgen05.ld that does not wait for it is reported.
class TensorMemory {
public:
  TensorMemory();

  /// tcgen05.alloc: `nCols` (a power of 2 in [32, 512]) columns of all
  /// lanes, the lowest free range aligned to `nCols`; `*address` gets lane 0
  /// and the first column. Fails if the permit was relinquished, if `nCols`
  /// exceeds an earlier allocation's (the ISA forbids growth between
  /// allocations) or if no free range is left (the hardware would block
  /// forever: in lockstep nothing else can free columns).
  std::string alloc(uint32_t nCols, uint32_t *address);
  /// tcgen05.dealloc of exactly a previous allocation.
  std::string dealloc(uint32_t address, uint32_t nCols);
  /// tcgen05.relinquish_alloc_permit.
  void relinquishAllocPermit() { permitRelinquished = true; }
  /// The error for a kernel that exits with tensor memory still allocated.
  std::string checkAllDeallocated() const;

  /// Reads the cell (lane, column); `what` names the reader in messages.
  std::string read(unsigned lane, unsigned column, const std::string &what,
                   uint32_t *word) const;
  /// Writes the cell, by asynchronous operation `asyncOp` (0 for a
  /// synchronous tcgen05.st).
  std::string write(unsigned lane, unsigned column, uint32_t word,
                    uint32_t asyncOp = 0);
  /// The asynchronous operation whose result the cell holds and that is not
  /// yet known complete (0 if none).
  uint32_t getPendingOp(unsigned lane, unsigned column) const;
  /// Marks asynchronous operation `asyncOp` complete in every cell.
  void completeOp(uint32_t asyncOp);
  bool isAllocated(unsigned column) const;

private:
  struct Allocation {
    uint32_t column, nCols;
  };
  std::vector<uint32_t> cells;
  std::vector<uint8_t> written;
  std::vector<uint32_t> pendingOp;
  std::vector<Allocation> allocations;
  uint32_t maxAllocation = kTmemColumns;
  bool permitRelinquished = false;
};

//===----------------------------------------------------------------------===//
// Shared memory descriptor (§9.7.16.4.1) and canonical layouts (§9.7.16.3)
//===----------------------------------------------------------------------===//

/// Bits 61..63 of the descriptor.
enum class SwizzleMode : uint8_t {
  None = 0,       // no swizzling (interleaved core matrices)
  B128Atom32 = 1, // 128-byte swizzling with 32-byte atomicity
  B128 = 2,
  B64 = 4,
  B32 = 6,
};

/// The fields of a decoded 64-bit shared memory descriptor, in bytes.
struct SmemDescriptor {
  uint32_t startAddress = 0;      // bits 0..13, << 4
  uint32_t leadingByteOffset = 0; // bits 16..29, << 4 (LBO)
  uint32_t strideByteOffset = 0;  // bits 32..45, << 4 (SBO)
  unsigned baseOffset = 0;        // bits 49..51
  bool leadingAbsolute = false;   // bit 52
  SwizzleMode swizzle = SwizzleMode::None;
};

/// Decodes `bits`, checking the reserved bits (14..15, 30..31 and 53..60
/// zero), the fixed constant 0b001 of bits 46..48 that sm_100 requires and
/// the swizzle code (3, 5 and 7 are invalid).
std::string decodeSmemDescriptor(uint64_t bits, SmemDescriptor *desc);

/// The swizzle row width in bytes: 16 for None (a core matrix row), 32, 64
/// or 128.
unsigned getSwizzleBytes(SwizzleMode mode);

/// The shared-memory byte address of byte `kByte` of row `row` of a K-major
/// operand (rows along M or N, bytes along K) described by `desc`, per the
/// canonical layouts of §9.7.16.3.3 (K-major rows: 8-row groups SBO apart;
/// no swizzling: 8x16-byte core matrices, the 16-byte columns LBO apart;
/// swizzled: rows of 32/64/128 bytes, then address bits [4, 4 + log2(W/16))
/// XOR-ed with bits [7, ...) as Swizzle<1|2|3, 4, 3>, the row phase taken
/// relative to the matrix base offset).
std::string getKMajorAddress(const SmemDescriptor &desc, unsigned row,
                             unsigned kByte, uint32_t *address);

/// Reads a K-major `rows` x `k` operand of `elementBits`-bit containers (4:
/// two E2M1 per byte, element k in the low nibble of its byte when k is
/// even; 8: one per byte; 16: one per two bytes, little-endian, wgmma's
/// f16) through `desc`; `codes[row * k + i]` gets each container.
std::string readKMajorOperand(const SmemDescriptor &desc, SharedMemory &smem,
                              unsigned rows, unsigned k, unsigned elementBits,
                              std::vector<uint32_t> *codes);

//===----------------------------------------------------------------------===//
// Instruction descriptor (§9.7.16.4.2, Tables 43 and 44)
//===----------------------------------------------------------------------===//

/// The fields of a decoded block-scaled instruction descriptor.
struct InstrDescriptor {
  unsigned scaleFactorIdB = 0; // bits 4..5
  ElementType typeA = ElementType::E2M1, typeB = ElementType::E2M1;
  bool negateA = false, negateB = false;        // bits 13, 14
  bool transposeA = false, transposeB = false;  // bits 15, 16
  unsigned n = 0;                               // bits 17..22, << 3
  ScaleFormat scaleFormat = ScaleFormat::UE8M0; // bit 23
  unsigned m = 0;                               // bits 27..28, << 7
  unsigned scaleFactorIdA = 0;                  // bits 29..30
  unsigned k = 0; // 32 (mxf8f6f4) or, from bit 31, 64 / 96 (mxf4 kinds)
};

/// Decodes `bits` for `kind` as issued with `scaleVec` (1X for mxf8f6f4,
/// 2X for .block32 of the FP4 kinds, 4X for .block16) by a cta_group::1
/// (`ctaGroup` 1) or cta_group::2 MMA, rejecting with a message: reserved
/// bits set, sparsity, type codes the kind does not take, transposed
/// (MN-major) operands, N outside 8..256 in steps of 8 (16 with
/// cta_group::2), M other than 128 (cta_group::1) or 256 (cta_group::2; its
/// M = 128 is not modelled), K = 96 (cta_group::2 on sm_103a, not
/// modelled), a scale type the kind or scale_vec does not allow (Table 55)
/// and scale factor ids the scale_vec does not allow (§9.7.16.10.7.2/3).
std::string decodeInstrDescriptor(BlockScaleKind kind, ScaleVec scaleVec,
                                  uint32_t bits, InstrDescriptor *desc,
                                  unsigned ctaGroup = 1);

//===----------------------------------------------------------------------===//
// tcgen05.mma.cta_group::{1,2}.kind::{mxf8f6f4,mxf4,mxf4nvf4}.block_scale
// (§9.7.16.10.9.1, §9.7.16.10.7)
//===----------------------------------------------------------------------===//

struct Tcgen05MmaOperands {
  BlockScaleKind kind = BlockScaleKind::MXF4NVF4;
  /// From .block16 / .block32 / the kind (see decodeInstrDescriptor).
  ScaleVec scaleVec = ScaleVec::X4;
  uint32_t d = 0; // TMEM address of D
  bool aInTensorMemory = false;
  uint64_t a = 0;     // A's shared memory descriptor, or TMEM address
  uint64_t bDesc = 0; // B's shared memory descriptor
  uint32_t idesc = 0;
  bool enableInputD = false;
  uint32_t scaleA = 0, scaleB = 0; // TMEM addresses of the scale factors
};

/// Executes one MMA: D[m][n] = (enable-input-d ? D[m][n] : 0) +
/// Σ_k (scale_A[m][k / bs] · A[m][k]) · (scale_B[k / bs][n] · B[n][k]),
/// M = 128, N and K from the instruction descriptor, written to tensor
/// memory tagged with `asyncOp`. Layouts:
///  - A, B: K-major through their descriptors (readKMajorOperand). A in
///    tensor memory (§9.7.16.10.4.3/5): row m in lane A.lane + m, its K
///    containers packed 4 bytes per 32-bit cell from column A.column (for
///    the FP4 kinds two E2M1 per byte, the lower k in the low nibble).
///  - D (Layout D, M = 128, cta_group::1): row m in lane D.lane + m, column n
///    in column D.column + n; D.lane must be 0.
///  - Scale factors (§9.7.16.10.7): the scale of A row m is in lane m % 32
///    (duplicated in all four 32-lane partitions, which the model checks),
///    column scaleA.column + m / 32; the scale of B column n in lane n % 32,
///    column scaleB.column + n / 32. Within the 32-bit cell the scale of K
///    block j is byte SF_ID + j (1X: byte SF_ID; 2X: bytes SF_ID, SF_ID + 1;
///    4X: bytes 0..3).
/// Numerics: BlockScaleArithmetic.h (exact sum, one f32 rounding).
std::string tcgen05MmaBlockScale(const Tcgen05MmaOperands &operands,
                                 TensorMemory &tmem, SharedMemory &smem,
                                 uint32_t asyncOp);

/// tcgen05.mma.cta_group::2 ... .block_scale with M = 256 (§9.7.16.10.9.1:
/// "performed on the Tensor Memory of the executing thread's CTA and its
/// peer CTA"; Layout A of §9.7.16.10.5): the pair's even CTA (index 0) and
/// odd CTA (1) each read, at the same descriptor addresses in their own
/// shared memory, their 128 rows of A (the even CTA rows 0..127) and their
/// N / 2 rows of B (the even CTA columns 0..N/2-1); CTA v computes its 128
/// rows of D against all N columns of B, with the scale factors of its A
/// rows and of all N B columns read from its own tensor memory (each CTA
/// holds the whole scale_B), and writes them as Layout D does (row m of
/// the CTA's in lane m). The operands and numerics are tcgen05MmaBlockScale's.
std::string tcgen05MmaBlockScalePair(const Tcgen05MmaOperands &operands,
                                     TensorMemory *const tmem[2],
                                     SharedMemory *const smem[2],
                                     uint32_t asyncOp);

//===----------------------------------------------------------------------===//
// tcgen05.cp (§9.7.16.9.2, §9.7.16.2.3)
//===----------------------------------------------------------------------===//

enum class CpShape { S128x256b, S4x256b, S128x128b, S64x128b, S32x128b };
enum class CpMulticast { None, Warpx2_02_13, Warpx2_01_23, Warpx4 };

/// tcgen05.cp.cta_group::1.<shape>[.<multicast>] [taddr], s-desc: copies the
/// shape's source rows (16 or 32 bytes each, read K-major through `sdesc`
/// with getKMajorAddress) to consecutive lanes from taddr, byte 4c..4c+3 of
/// a row to column taddr.column + c. Multicast: .warpx4 copies the 32 rows
/// to lanes r, r + 32, r + 64, r + 96; .warpx2::01_23 rows 0..31 to the
/// partitions of warps 0 and 1 and rows 32..63 to those of warps 2 and 3;
/// .warpx2::02_13 rows 0..31 to warps 0 and 2, rows 32..63 to 1 and 3.
std::string tcgen05Cp(CpShape shape, CpMulticast multicast, uint32_t taddr,
                      uint64_t sdesc, TensorMemory &tmem, SharedMemory &smem,
                      uint32_t asyncOp);

//===----------------------------------------------------------------------===//
// tcgen05.ld / tcgen05.st (§9.7.16.8, §9.7.16.2.3.1)
//===----------------------------------------------------------------------===//

enum class LdStShape { S32x32b, S16x256b };

/// The 32-bit registers per thread of one tcgen05.ld/st of `shape` with
/// .num = `num` (32x32b: num; 16x256b: 4 num).
unsigned getLdStRegisters(LdStShape shape, unsigned num);

/// tcgen05.ld.sync.aligned.<shape>.x<num>.b32 by warp `warpInGroup` (its
/// %warpid % 4), which may access lanes 32 w .. 32 w + 31 only (§9.7.16.8.1).
/// `regs[t * R + i]` gets register i of thread t (R = getLdStRegisters):
///  - 32x32b: thread t reads lane taddr.lane + t, register i column
///    taddr.column + i;
///  - 16x256b: thread t, g = t / 4, q = t % 4: registers 4j + {0, 1} are lane
///    taddr.lane + g, columns taddr.column + 8j + 2q + {0, 1}; registers
///    4j + {2, 3} lane taddr.lane + 8 + g, the same columns.
/// A cell that an asynchronous operation wrote and no completed
/// tcgen05.commit covers is an error (the load would race with it).
std::string tcgen05Ld(LdStShape shape, unsigned num, uint32_t taddr,
                      unsigned warpInGroup, const TensorMemory &tmem,
                      std::vector<uint32_t> *regs);
/// tcgen05.st: the inverse of tcgen05Ld.
std::string tcgen05St(LdStShape shape, unsigned num, uint32_t taddr,
                      unsigned warpInGroup, llvm::ArrayRef<uint32_t> regs,
                      TensorMemory &tmem);

//===----------------------------------------------------------------------===//
// mbarrier (§9.7.13.15)
//===----------------------------------------------------------------------===//

/// An mbarrier object: current phase, expected and pending arrival counts
/// and the transaction count. A phase completes when the pending count and
/// the tx-count both reach zero; the phase then advances and the pending
/// count is reset to the expected count.
class Mbarrier {
public:
  /// mbarrier.init: phase 0, expected = pending = `count` (1 .. 2^20 - 1).
  std::string init(uint32_t count);
  /// mbarrier.arrive (count 1 unless given); returns the phase state before
  /// the arrive (the opaque token: the phase number) in `*state`. Sets
  /// `*completed` if this arrive completed the phase.
  std::string arrive(uint32_t count, uint64_t *state, bool *completed);
  /// mbarrier.expect_tx: tx-count += `bytes`.
  std::string expectTx(uint32_t bytes);
  /// mbarrier.complete_tx: tx-count -= `bytes`; may complete the phase.
  std::string completeTx(uint32_t bytes, bool *completed);
  /// mbarrier.try_wait.parity / test_wait.parity: true once the phase with
  /// parity `parity` has completed, i.e. the current phase's parity differs.
  bool isPhaseComplete(uint32_t parity) const {
    return (phase & 1) != (parity & 1);
  }
  bool isInitialized() const { return initialized; }
  uint32_t getPhase() const { return phase; }
  uint32_t getPending() const { return pending; }
  int64_t getTxCount() const { return txCount; }

private:
  bool maybeComplete();

  bool initialized = false;
  uint32_t phase = 0, expected = 0, pending = 0;
  int64_t txCount = 0;
};

} // namespace fp4train::emulation::ptx

#endif // FP4TRAIN_EMULATION_TCGEN05_H
