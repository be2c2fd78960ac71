//===- Tcgen05BlockScale.cpp - sm_100a/sm_103a tcgen05 block-scaled GEMM --===//
//
// A persistent kernel: workgroup w of the grid's G computes the 128 x 128
// tiles of C w, w + G, w + 2G, ... of the grouped order over every batch
// entry ([RAS1]), each with one tcgen05.mma.cta_group::1 shape M = 128,
// N = 128 (PTX ISA 9.7.16.10.1, "Matrix shape") per K slice; K advances by
// a stage of 128 bytes per operand row (256 E2M1 or 128 8-bit elements),
// four MMAs of K = 64 (kind::mxf4nvf4) or K = 32 (kind::mxf8f6f4) per
// stage. 288 threads in three roles, each looping over the workgroup's
// tiles:
//
//  - warps 0-3, producers: stage pipeline step s (K step s % kSteps of
//    tile s / kSteps; the step count runs on across tiles) in stage s % 4,
//    once the MMAs of step s - 4 have released it (mbarrier `empty`), in
//    the swizzled layout below. Codes (E2M1 stored two per byte, [PK1], the
//    order the MMA reads, so no repacking) come by TMA ([TMA1] in
//    docs/nvvm.md: thread 0 adds the stage's bytes to `full`'s transaction
//    count and issues cp.async.bulk.tensor on the host's tensor maps, the
//    box landing 128-byte swizzled) where code rows are 16-byte multiples,
//    else by cp.async (PTX ISA 9.7.9.25.3); each thread copies its row's
//    scale words by cp.async where they are 4-byte aligned, else through
//    registers. Step s is published two steps later: fence.proxy.async (the
//    MMA reads shared memory through the async proxy) and an arrive on
//    `full`;
//  - thread 128 (lane 0 of warp 4), the MMA issuer: per tile i, waits until
//    the epilogue has drained accumulator i % 2 (mbarrier `accEmpty`, from
//    the third tile on), then per step waits on `full`, copies the stage's
//    scale factors to tensor memory (tcgen05.cp), issues the four MMAs into
//    the accumulator and tcgen05.commit -> `empty` of the stage; after the
//    tile's last step a commit to `accFull` of the accumulator;
//  - warps 5-8, the epilogue: per tile i, wait on `accFull` of accumulator
//    i % 2, tcgen05.ld it (warp w reads TMEM lanes 32 (w % 4) .. +31, the
//    rows of C), C = acc + g * T ([GEMM1]) in f32 or RNE bf16, then arrive
//    on `accEmpty`. The MMAs of tile i + 1 run meanwhile, and the producers
//    stage tile i + 1's first steps behind tile i's last.
//  Warp 4 also allocates (and frees) 512 TMEM columns.
//
// Shared memory, from a 1024-byte aligned base (the 128-byte swizzle is a
// function of address bits 4-9, PTX ISA 9.7.16.4.4 "Shared memory layout
// and swizzling"): stage s at s * stageBytes holds
//   A tile   [0, 16384):     row r (128 bytes) at 128 r; its 16-byte chunk c
//                            (K bytes 16c..16c+15) at chunk c ^ (r % 8);
//   B^T tile [16384, 32768): the same;
//   scale atoms of A, then of B: 512 bytes each, one per 4 scale blocks of
//                            the stage, the scale of row r, block 4j + q at
//                            byte 16 (r % 32) + 4 (r / 32) + q of atom j;
// then the mbarriers full[4], empty[4], accFull[2], accEmpty[2] and the TMEM
// address word.
//
// Descriptors (Tcgen05Descriptors.h, PTX ISA 9.7.16.4.1 and .2):
//   operand: K-major, SWIZZLE_128B, SBO 1024 (8-row groups), LBO 16 (unused:
//     one MMA's 32 K bytes lie in one swizzle row), start address of the
//     tile + 32 j for MMA j (the hardware applies the XOR to the address it
//     computes, so advancing K inside the swizzle row is an address offset);
//   scale atom (tcgen05.cp.cta_group::1.32x128b.warpx4, PTX ISA 9.7.16.8.x
//     "tcgen05.cp"): no swizzle, rows of 16 bytes, SBO 128: the 32 x 128-bit
//     source goes to TMEM lanes i, 32 + i, 64 + i, 96 + i (warpx4), 4
//     columns; lane 32 w + i, column 4 j + c, byte q then holds the scale of
//     row 32 c + i, block 4 j + q, the layout of PTX ISA 9.7.16.10.7
//     ("Scale factor A/B for M = 128": each of the four sub-partitions reads
//     the scale factors of its 32 rows from its own lanes);
//   instruction: E2M1 (1) for kind::mxf4nvf4 / E4M3 (0), E5M2 (1) for
//     kind::mxf8f6f4, scale type UE4M3 (0) or UE8M0 (1), M >> 7, N >> 3, K
//     major, and the scale factor id: the byte of the TMEM column where the
//     MMA's scale blocks start (block16 / 4X: 0; block32 with E2M1 / 2X: 0
//     or 2; block32 with 8-bit elements / 1X: 0..3).
// TMEM: accumulators in columns 0-127 and 128-255 (lane = row of C, column =
// column of C, PTX ISA 9.7.16.10.5 "Data path layout", M = 128
// cta_group::1), then per stage the scale atoms of A and of B, 4 columns
// each.
//
// Ragged M, N and K: rows past M / N and K past the shape are staged as
// code 0 with scale code 0 (they add +0: TMA's out-of-bounds fill, or
// copies of 0 bytes); only in-range C is written.
//
// [PAIR1] CTA pairs (gemm-cta-pair): clusters of two workgroups compute
// 256 x 128 tiles. CTA v of a pair stages rows 128 v.. of the tile's A and
// rows 64 v.. of its B^T (a 64-row TMA box) at the offsets above, the scale
// atoms of its A rows and of all 128 columns of B; the even CTA's MMA thread
// issues tcgen05.cp / tcgen05.mma (M = 256) / tcgen05.commit with
// .cta_group::2, the commits multicast to both CTAs' barriers; the odd
// CTA's producers and epilogue arrive on the even CTA's full and accEmpty
// (mapa), its TMA loads signal the even CTA's full (.cta_group::2); the
// set-up and tear-down synchronize the cluster. PTX ISA 9.7.16.5 (CTA pair,
// issue granularity), 9.7.16.10.5 (Layout A).
//
//===----------------------------------------------------------------------===//

#include "Tcgen05BlockScale.h"
#include "TensorMaps.h"

#include "fp4train/Conversion/FP4TrainGPUCommon/Buffers.h"
#include "fp4train/Conversion/FP4TrainGPUCommon/GemmKernel.h"
#include "fp4train/Conversion/FP4TrainToNVVM/Tcgen05Descriptors.h"
#include "fp4train/Dialect/FP4Train/IR/FP4TrainOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

#include "llvm/Support/FormatVariadic.h"

using namespace mlir;
using namespace mlir::fp4train;
namespace t5 = mlir::fp4train::tcgen05;

namespace {

constexpr int64_t kTile = kTcgen05TileRows;
/// Bytes of one operand row per stage: one 128-byte swizzle row.
constexpr int64_t kRowBytes = kTmaBoxRowBytes;
constexpr int64_t kTileBytes = kTile * kRowBytes;
constexpr int64_t kStages = 4;
constexpr int64_t kMmasPerStage = 4;
/// Bytes of K per MMA in a staged row (64 E2M1 or 32 8-bit elements).
constexpr int64_t kMmaKBytes = kRowBytes / kMmasPerStage;
constexpr int64_t kProducers = 128;
constexpr int64_t kMmaThread = kProducers;
/// Warps 5-8 run the epilogue.
constexpr int64_t kEpilogueThread = kProducers + 32;
constexpr int64_t kEpilogueThreads = 128;
constexpr int64_t kThreads = kEpilogueThread + kEpilogueThreads;
/// TMEM accumulators: the MMAs of tile i + 1 fill one while the epilogue
/// drains tile i's from the other.
constexpr int64_t kAccumulators = 2;
/// A scale atom: 128 rows x 4 blocks, the source of one tcgen05.cp 32x128b.
constexpr int64_t kAtomBytes = 512;
constexpr int64_t kSwizzleAlign = 1024;
/// Two 128-column accumulators and the scale atoms of 4 stages (at most
/// 128 columns, NVFP4), rounded up to a power of two as tcgen05.alloc
/// takes it.
constexpr int64_t kTmemColumns = 512;
/// Stages the producers keep in flight behind the one they issue: codes
/// arrive by cp.async, and stage t is published (full[t % 4]) after the
/// copies of stage t + kAsyncLag are issued.
constexpr int64_t kAsyncLag = 2;
/// Nanosecond hint of mbarrier.try_wait (the wait loops until the phase).
constexpr int64_t kWaitTicks = 10000000;

/// The per-format constants of one kernel.
struct Tcgen05Format {
  bool fp4;
  int64_t blockSize;
  bool nvfp4;
  Type elements[2];
  /// [PAIR1] A CTA pair per 256 x 128 tile of C (cta_group::2), else one
  /// CTA per 128 x 128 tile.
  bool pair = false;

  /// Rows of C (and of A) per output tile.
  int64_t getTileM() const { return pair ? 2 * kTile : kTile; }
  /// Rows of B^T a CTA stages: the tile's 128, or its half of them.
  int64_t getStagedRowsB() const { return pair ? kTile / 2 : kTile; }
  /// Code bytes a CTA's stage receives (A's 128 rows, its rows of B^T).
  int64_t getStagedCodeBytes() const {
    return (kTile + getStagedRowsB()) * kRowBytes;
  }

  int64_t getStageK() const { return fp4 ? 2 * kRowBytes : kRowBytes; }
  int64_t getBlocksPerStage() const { return getStageK() / blockSize; }
  int64_t getAtoms() const { return getBlocksPerStage() / 4; }
  int64_t getBlocksPerMma() const {
    return getStageK() / kMmasPerStage / blockSize;
  }
  int64_t getStageBytes() const {
    return llvm::alignTo(2 * kTileBytes + 2 * getAtoms() * kAtomBytes,
                         kSwizzleAlign);
  }
  /// Offset of the mbarriers and the TMEM address word.
  int64_t getBarrierOffset() const { return kStages * getStageBytes(); }
  /// Stages, 8-byte mbarriers (full and empty per stage, full and empty
  /// per accumulator) and the address word, and the slack for aligning the
  /// base to 1024 bytes.
  int64_t getSharedBytes() const {
    return getBarrierOffset() + 8 * (2 * kStages + 2 * kAccumulators + 1) +
           kSwizzleAlign;
  }
  /// TMEM column of scale atom `atom` of operand `operand` in stage `stage`.
  int64_t getScaleColumn(int64_t stage, unsigned operand, int64_t atom) const {
    return kAccumulators * kTile + (stage * 2 + operand) * getAtoms() * 4 +
           atom * 4;
  }

  t5::BlockScaledInstrDescriptor getInstrDescriptor(int64_t mma) const {
    auto type = [&](Type element) {
      if (fp4)
        return t5::ElementType::E2M1Packed;
      return isa<Float8E4M3FNType>(element) ? t5::ElementType::E4M3
                                            : t5::ElementType::E5M2;
    };
    t5::BlockScaledInstrDescriptor d;
    d.aType = type(elements[0]);
    d.bType = type(elements[1]);
    d.scaleType = nvfp4 ? t5::ScaleType::UE4M3 : t5::ScaleType::UE8M0;
    uint32_t id = (mma * getBlocksPerMma()) % 4;
    d.scaleFactorIdA = d.scaleFactorIdB = id;
    d.m = getTileM();
    d.n = kTile;
    return d;
  }
  /// Scale atom of MMA `mma` of a stage.
  int64_t getMmaAtom(int64_t mma) const { return mma * getBlocksPerMma() / 4; }
};

/// IndexMath plus the i32/i64 constants and casts of TMEM addresses and
/// descriptors.
struct KernelMath : IndexMath {
  Value i32(int64_t v) {
    return arith::ConstantIntOp::create(b, loc, b.getI32Type(), v);
  }
  Value i64(int64_t v) {
    return arith::ConstantIntOp::create(b, loc, b.getI64Type(), v);
  }
  Value eq(Value x, int64_t y) {
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, x, c(y));
  }
  Value toI32(Value x) {
    return arith::IndexCastUIOp::create(b, loc, b.getI32Type(), x);
  }
  Value toI64(Value x) {
    return arith::IndexCastUIOp::create(b, loc, b.getI64Type(), x);
  }
};

/// One output tile of C: its batch entry, the first rows of A and B^T this
/// CTA stages (rows of C it computes, columns of C), and the tile's first
/// column of C (its first row of B^T: a pair's CTAs stage halves of them).
struct OutputTile {
  Value batch;
  Value rowBase[2];
  Value colBase;
};

/// [TMA1] True when the stored code rows of a K-element operand of `format`
/// can be read by TMA: the tensor map's row stride (K bytes, or K / 2 for
/// E2M1) must be a multiple of 16 bytes.
bool canLoadCodesByTma(const Tcgen05Format &format, int64_t k) {
  return (format.fp4 ? k / 2 : k) % 16 == 0;
}

class Tcgen05KernelBuilder {
public:
  /// `codesMaps`: the operands' code tensor maps (buildSwizzledTileMap), or
  /// empty to stage codes by cp.async.
  Tcgen05KernelBuilder(OpBuilder &b, Location loc, const GemmProblem &problem,
                       const Tcgen05Format &format, bool viaIntrinsics,
                       ArrayRef<Value> codesMaps)
      : b(b), loc(loc), km{{b, loc}}, problem(problem), format(format),
        viaIntrinsics(viaIntrinsics),
        kSteps(llvm::divideCeil(problem.k, format.getStageK())),
        asyncScales(problem.k / format.blockSize % 4 == 0) {
    llvm::copy(codesMaps, this->codesMaps);
  }

  void build(gpu::LaunchOp launch);

private:
  const GemmGlobalOperand &getOperand(unsigned i) const {
    return i ? problem.bt : problem.a;
  }
  /// True when rows a CTA stages of operand `operand` (A's rows are C's)
  /// can lie past the operand: its row count is not a multiple of the tile
  /// (with a pair, A's tile is 256 rows, and the odd CTA's 128 may all be
  /// past M).
  bool mayExceedRows(unsigned operand) const {
    return getOperand(operand).rows % (operand ? kTile : format.getTileM());
  }
  // Shared memory.
  Value memIndex(Value offset) { return km.add(pad, offset); }
  Value sharedAddress(Value offset) { return km.toI64(km.add(base, offset)); }
  /// `ptr` + `offset` bytes (index), as an i8 getelementptr.
  Value bytePtr(Value ptr, Value offset) {
    return LLVM::GEPOp::create(b, loc, ptr.getType(), b.getI8Type(), ptr,
                               ValueRange{km.toI64(offset)});
  }
  Value sharedPtr(Value offset) {
    return LLVM::IntToPtrOp::create(
        b, loc, LLVM::LLVMPointerType::get(b.getContext(), 3),
        sharedAddress(offset));
  }
  Value barrier(int64_t index, Value stage = Value()) {
    Value offset = km.c(format.getBarrierOffset() + 8 * index);
    if (stage)
      offset = km.add(offset, km.mul(stage, 8));
    return sharedPtr(offset);
  }
  Value fullBarrier(Value stage) { return barrier(0, stage); }
  /// [PAIR1] The pair's even CTA's mbarrier at the offset of `local` (a
  /// .shared::cluster address, from mapa), which both CTAs arrive on.
  Value leaderBarrier(Value local) {
    return NVVM::MapaOp::create(b, loc,
                                LLVM::LLVMPointerType::get(b.getContext(), 7),
                                local, km.i32(0));
  }
  /// An arrive on `local`, or with a pair on the even CTA's mbarrier there.
  void arriveOnLeader(Value local);
  Value emptyBarrier(Value stage) { return barrier(kStages, stage); }
  Value accFullBarrier(Value acc) { return barrier(2 * kStages, acc); }
  Value accEmptyBarrier(Value acc) {
    return barrier(2 * kStages + kAccumulators, acc);
  }
  Value tmemSlot() { return barrier(2 * kStages + 2 * kAccumulators); }
  Value stageBase(Value stage) { return km.mul(stage, format.getStageBytes()); }
  /// The descriptor `fields` whose start address is `stageStart` (the start
  /// field of a stage, stageStartField) plus `bytes`.
  Value descriptor(uint64_t fields, Value stageStart, int64_t bytes);
  /// The start-address field (address >> 4, bits 0-13) of the stage at
  /// byte `stageOffset`, as an i64.
  Value stageStartField(Value stageOffset);
  /// TMEM address `tmem` + column (i32), as a pointer.
  Value tmemPtr(Value column);

  // tcgen05 instructions, as NVVM ops where MLIR's per-op chip check
  // accepts the chip (sm_100a), else as the same LLVM intrinsics through
  // llvm.call_intrinsic (sm_103a; [PTX1] in docs/nvvm.md).
  void callIntrinsic(StringRef name, ValueRange args);
  void fence(NVVM::Tcgen05FenceKind kind);
  /// bar.warp.sync of the whole warp: the .sync.aligned tcgen05
  /// instructions (alloc, ld, dealloc) need every lane converged, which the
  /// predicated stores and role branches before them do not promise.
  void syncWarp() { NVVM::SyncWarpOp::create(b, loc, km.i32(-1)); }
  /// tcgen05.commit to `barrierPtr`; with a pair, multicast to the mbarrier
  /// at its offset in both CTAs.
  void commit(Value barrierPtr);
  /// The .cta_group of the kernel's tcgen05 instructions.
  NVVM::CTAGroupKind ctaGroup() const {
    return format.pair ? NVVM::CTAGroupKind::CTA_2 : NVVM::CTAGroupKind::CTA_1;
  }
  /// The intrinsic name suffix of ctaGroup() (".cg1" / ".cg2").
  StringRef cg() const { return format.pair ? ".cg2" : ".cg1"; }
  /// The set-up and tear-down synchronization of the CTA (with a pair: of
  /// the cluster, so that each CTA's mbarriers and tensor memory exist
  /// before the other reaches them, and outlive its last access).
  void syncAll();
  void waitParity(Value barrierPtr, Value phase);
  /// Waits for the completion of use `use` (index) of a barrier completed
  /// once per use: phase parity use % 2.
  void waitUse(Value barrierPtr, Value use) {
    waitParity(barrierPtr, km.toI32(km.rem(use, 2)));
  }

  /// Elements [first, first + count) of a vector (a shuffle, which
  /// convert-gpu-to-nvvm lowers, unlike vector.extract_strided_slice).
  Value slice(Value vector, int64_t first, int64_t count) {
    return vector::ShuffleOp::create(
        b, loc, vector, vector,
        llvm::to_vector(llvm::seq<int64_t>(first, first + count)));
  }

  /// [RAS1] Output tile `item` of this workgroup's (item `workgroup +
  /// workgroups * item` of the grouped order of every batch entry's tiles).
  OutputTile getTile(Value item);

  /// cp.async of the `bytes` (16, or 8 where E2M1 rows are not 16-byte
  /// multiples) stored code bytes of `operand` from global (batch, row,
  /// code `col`) ([PK1]: E2M1 code col in byte col / 2, the order the MMA
  /// reads) to shared byte `offset`, zero-filled out of range.
  void copyCodesAsync(unsigned operand, Value batch, Value row, Value col,
                      int64_t bytes, Value offset);
  /// The bounds condition of the chunk of `codes` codes at (row, col) (null
  /// when always in range), with `row` and `col` clamped to a valid chunk.
  Value clampChunk(unsigned operand, Value &row, Value &col, int64_t codes);
  /// [TMA1] Thread 0: the stage's two code tiles by TMA, completing on
  /// `full` of the stage with their 32768 bytes.
  void loadCodesByTma(Value stage, Value kStep, const OutputTile &tile);
  /// cp.async of the 4 scale codes of atom `atom` of K step `kStep` of
  /// global row `row` (zeros out of range) to shared byte `offset`.
  void copyScalesAsync(unsigned operand, Value batch, Value row, Value kStep,
                       int64_t atom, Value offset);
  /// Makes the shared-memory writes of pipeline step `step` visible to the
  /// MMA thread.
  void publish(Value step);
  /// The scale codes of K step `kStep` of global row `row`.
  Value loadScales(unsigned operand, Value batch, Value row, Value kStep);
  /// Stages K step `kStep` of `tile` as pipeline step `step` (stage
  /// step % kStages).
  void produce(Value step, Value kStep, const OutputTile &tile);
  /// The producer warps: every K step of every tile of the workgroup.
  void buildProducers();
  /// Issues pipeline step `step` into the accumulator at TMEM column
  /// `accColumn` (i32), overwriting it when `first`.
  void issueMMAs(Value step, Value first, Value accColumn);
  /// The MMA thread: a tile's steps into accumulator item % 2, once the
  /// epilogue has drained what it held.
  void buildIssuer();
  /// The epilogue warps: drain accumulator item % 2 into C, free it.
  void buildEpilogue();
  void storeColumns(Value batch, Value row, Value rowInBounds, Value col,
                    Value t, int64_t count);

  OpBuilder &b;
  Location loc;
  KernelMath km;
  const GemmProblem &problem;
  Tcgen05Format format;
  bool viaIntrinsics;
  /// K steps per tile.
  int64_t kSteps;
  /// True when a row's scale codes of one atom (4 blocks) are 4-byte
  /// aligned in global memory (K / blockSize % 4 == 0): the producers then
  /// copy them by cp.async, else through registers.
  bool asyncScales;
  /// The code tensor maps of A and B^T (!llvm.ptr), or null.
  Value codesMaps[2];
  /// The launch's workgroups (the grid is workgroups x 1 x 1, as
  /// lowerScaledMatmulToLaunch made it; set by build()).
  int64_t workgroups = 0;

  // Set by build().
  Value tid, memory, pad, base, tmem;
  /// This workgroup and the number of output tiles it computes; with a
  /// pair, also its rank in the pair (%cluster_ctarank) and the pair's
  /// index among the grid's pairs (`unit`; the workgroup itself without
  /// pairs) and their number.
  Value workgroup, items, rank, unit;
  int64_t units = 0;
  /// The operands' code and scale buffers as global pointers
  /// (!llvm.ptr<1>; codes only without tensor maps), and the aligned base
  /// of shared memory (!llvm.ptr<3>): byte offsets from them are
  /// getelementptrs, which the backend folds into [reg + imm] addresses.
  Value codesPtr[2], scalesPtr[2], sharedBase;
};

} // namespace

Value Tcgen05KernelBuilder::stageStartField(Value stageOffset) {
  // [addr >> 4] & 0x3FFF in bits 0-13 ([PTX4] in docs/nvvm.md: shifted
  // here). Shared addresses are below 228 KiB < 2^18, so the field never
  // carries into bit 14 and adding the constant parts (16-byte multiples
  // within the stage, and the fields above bit 15) is the same as OR-ing
  // them: the MMA thread computes one field per stage and one add per
  // descriptor.
  return km.toI64(km.div(km.add(base, stageOffset), 16));
}

Value Tcgen05KernelBuilder::descriptor(uint64_t fields, Value stageStart,
                                       int64_t bytes) {
  assert(bytes % 16 == 0 && "descriptors address 16-byte units");
  return arith::AddIOp::create(
      b, loc, stageStart, km.i64(static_cast<int64_t>(fields) + bytes / 16));
}

Value Tcgen05KernelBuilder::tmemPtr(Value column) {
  return LLVM::IntToPtrOp::create(
      b, loc, LLVM::LLVMPointerType::get(b.getContext(), 6),
      arith::AddIOp::create(b, loc, tmem, column).getResult());
}

void Tcgen05KernelBuilder::callIntrinsic(StringRef name, ValueRange args) {
  LLVM::CallIntrinsicOp::create(b, loc, b.getStringAttr(name), args);
}

void Tcgen05KernelBuilder::fence(NVVM::Tcgen05FenceKind kind) {
  if (!viaIntrinsics) {
    NVVM::Tcgen05FenceOp::create(b, loc, kind);
    return;
  }
  callIntrinsic(kind == NVVM::Tcgen05FenceKind::BEFORE_THREAD_SYNC
                    ? "llvm.nvvm.tcgen05.fence.before.thread.sync"
                    : "llvm.nvvm.tcgen05.fence.after.thread.sync",
                {});
}

void Tcgen05KernelBuilder::commit(Value barrierPtr) {
  // tcgen05.commit.cta_group::N.mbarrier::arrive::one: the barrier gets one
  // arrival when every tcgen05.mma / tcgen05.cp this thread issued before
  // has completed (PTX ISA 9.7.16.9.x "tcgen05.commit"); a pair's
  // .multicast::cluster with mask 0b11 arrives on the barrier at the same
  // offset in both CTAs ([PAIR1]).
  Value mask;
  if (format.pair)
    mask = arith::ConstantIntOp::create(b, loc, b.getI16Type(), 3);
  if (!viaIntrinsics) {
    auto op = NVVM::Tcgen05CommitOp::create(b, loc, barrierPtr, mask);
    op.setGroup(ctaGroup());
    return;
  }
  if (mask)
    callIntrinsic("llvm.nvvm.tcgen05.commit.mc.shared.cg2", {barrierPtr, mask});
  else
    callIntrinsic("llvm.nvvm.tcgen05.commit.shared.cg1", {barrierPtr});
}

void Tcgen05KernelBuilder::arriveOnLeader(Value local) {
  if (!format.pair) {
    NVVM::MBarrierArriveOp::create(b, loc, b.getI64Type(), local,
                                   /*count=*/Value());
    return;
  }
  // mbarrier.arrive.release.cluster.shared::cluster (no state: the barrier
  // may be the peer's, PTX ISA 9.7.13.15.13).
  NVVM::MBarrierArriveOp::create(b, loc, /*res=*/Type(), leaderBarrier(local),
                                 /*count=*/Value(),
                                 NVVM::MemScopeKind::CLUSTER);
}

void Tcgen05KernelBuilder::syncAll() {
  if (!format.pair) {
    gpu::BarrierOp::create(b, loc);
    return;
  }
  NVVM::ClusterArriveOp::create(b, loc, /*aligned=*/b.getUnitAttr());
  NVVM::ClusterWaitOp::create(b, loc, /*aligned=*/b.getUnitAttr());
}

void Tcgen05KernelBuilder::waitParity(Value barrierPtr, Value phase) {
  NVVM::MBarrierTryWaitParityOp::create(b, loc, barrierPtr, phase,
                                        km.i32(kWaitTicks));
}

Value Tcgen05KernelBuilder::clampChunk(unsigned operand, Value &row, Value &col,
                                       int64_t codes) {
  const GemmGlobalOperand &op = getOperand(operand);
  // K is a multiple of the block (16 or 32), and so of `codes` (16 FP8
  // codes, or 16 or 32 E2M1 codes, getGemmChunkBytes): a chunk is wholly in
  // or out of range. Out-of-range chunks read a clamped, valid address and
  // become zeros without a branch: the producer's loads stay unconditional,
  // so they can all be in flight at once.
  Value inBounds;
  if (mayExceedRows(operand)) {
    inBounds = km.lt(row, op.rows);
    row = arith::MinUIOp::create(b, loc, row, km.c(op.rows - 1));
  }
  if (problem.k % format.getStageK()) {
    inBounds = km.both(inBounds, km.lt(col, problem.k));
    col = arith::MinUIOp::create(b, loc, col, km.c(problem.k - codes));
  }
  return inBounds;
}

OutputTile Tcgen05KernelBuilder::getTile(Value item) {
  int64_t tilesN = llvm::divideCeil(problem.n, kTile);
  int64_t tilesM = llvm::divideCeil(problem.m, format.getTileM());
  Value id = km.add(unit, km.mul(item, units));
  OutputTile tile;
  tile.batch = km.div(id, tilesM * tilesN);
  auto [rowTile, colTile] = getGroupedTile(b, loc, km.rem(id, tilesM * tilesN),
                                           tilesN, tilesM, kGemmRasterRows);
  tile.rowBase[0] = km.mul(rowTile, format.getTileM());
  tile.colBase = km.mul(colTile, kTile);
  tile.rowBase[1] = tile.colBase;
  if (format.pair) {
    // [PAIR1] CTA v: rows 128 v.. of the tile's A (and C), rows 64 v.. of
    // its B^T.
    tile.rowBase[0] = km.add(tile.rowBase[0], km.mul(rank, kTile));
    tile.rowBase[1] = km.add(tile.colBase, km.mul(rank, kTile / 2));
  }
  return tile;
}

void Tcgen05KernelBuilder::copyCodesAsync(unsigned operand, Value batch,
                                          Value row, Value col, int64_t bytes,
                                          Value offset) {
  const GemmGlobalOperand &op = getOperand(operand);
  const int64_t codesPerByte = format.fp4 ? 2 : 1;
  Value inBounds = clampChunk(operand, row, col, bytes * codesPerByte);
  // Byte (batch * rows + row) * rowBytes + col / codesPerByte of the
  // [batch, rows, rowBytes] stored codes (a row holds K codes: K / 2 bytes
  // for E2M1, [PK1]; K is a multiple of 16).
  const int64_t rowBytes = problem.k / codesPerByte;
  Value element = km.add(km.mul(km.add(km.mul(batch, op.rows), row), rowBytes),
                         km.div(col, codesPerByte));
  Value src = bytePtr(codesPtr[operand], element);
  // cp.async.{cg,ca}.shared.global [dst], [src], bytes, src-size: a
  // src-size of 0 fills the bytes with zeros (PTX ISA 9.7.9.25.3.1
  // "cp.async"); .cg (L2 only) takes 16-byte copies, .ca the 8-byte ones.
  Value size;
  if (inBounds)
    size = arith::SelectOp::create(b, loc, inBounds, km.i32(bytes), km.i32(0));
  NVVM::CpAsyncOp::create(b, loc, bytePtr(sharedBase, offset), src, bytes,
                          bytes == 16 ? NVVM::LoadCacheModifierKind::CG
                                      : NVVM::LoadCacheModifierKind::CA,
                          size);
}

void Tcgen05KernelBuilder::loadCodesByTma(Value stage, Value kStep,
                                          const OutputTile &tile) {
  Value full = fullBarrier(stage);
  buildIf(b, loc, km.eq(tid, 0), [&]() {
    // The transaction count first: the phase cannot complete before this
    // thread's own arrival (publish), but the bytes must be expected before
    // that arrival is made. [PAIR1] The even CTA's barrier takes both CTAs'
    // boxes: its thread 0 expects them all, and the odd CTA's loads signal
    // it (.cta_group::2, the barrier's address from mapa).
    const int64_t bytes = format.getStagedCodeBytes();
    Value signalled = full;
    if (!format.pair) {
      NVVM::MBarrierExpectTxOp::create(b, loc, full, km.i32(bytes));
    } else {
      buildIf(b, loc, km.eq(rank, 0), [&]() {
        NVVM::MBarrierExpectTxOp::create(b, loc, full, km.i32(2 * bytes));
      });
      Value cluster = leaderBarrier(full);
      Value bits =
          LLVM::PtrToIntOp::create(b, loc, b.getI32Type(), cluster).getResult();
      signalled = LLVM::IntToPtrOp::create(b, loc, full.getType(), bits);
    }
    Value stageOffset = stageBase(stage);
    for (unsigned operand = 0; operand < 2; ++operand) {
      // Box (K byte, row, batch), innermost first as the map's dimensions;
      // its 128 rows x 128 bytes land 128-byte swizzled at the tile, the
      // layout of the operand descriptors; rows past the operand and bytes
      // past K are zero-filled.
      Value dst =
          bytePtr(sharedBase, km.add(stageOffset, operand * kTileBytes));
      if (format.pair)
        dst = LLVM::AddrSpaceCastOp::create(
            b, loc, LLVM::LLVMPointerType::get(b.getContext(), 7), dst);
      SmallVector<Value> box = {km.toI32(km.mul(kStep, kRowBytes)),
                                km.toI32(tile.rowBase[operand]),
                                km.toI32(tile.batch)};
      NVVM::CTAGroupKindAttr group;
      if (format.pair)
        group = NVVM::CTAGroupKindAttr::get(b.getContext(),
                                            NVVM::CTAGroupKind::CTA_2);
      NVVM::CpAsyncBulkTensorGlobalToSharedClusterOp::create(
          b, loc, dst, codesMaps[operand], box, signalled,
          /*im2colOffsets=*/ValueRange(), /*multicastMask=*/Value(),
          /*l2CacheHint=*/Value(), NVVM::TMALoadMode::TILE,
          /*isCTAOnly=*/!format.pair, group, /*predicate=*/Value());
    }
  });
}

void Tcgen05KernelBuilder::copyScalesAsync(unsigned operand, Value batch,
                                           Value row, Value kStep, int64_t atom,
                                           Value offset) {
  const GemmGlobalOperand &op = getOperand(operand);
  const int64_t kBlocks = problem.k / format.blockSize;
  const int64_t scaleRows = cast<MemRefType>(op.scales.getType()).getDimSize(1);
  Value block = km.add(km.mul(kStep, format.getBlocksPerStage()), 4 * atom);
  // kBlocks % 4 == 0: the atom's 4 blocks are wholly in or out of range.
  Value inBounds;
  if (mayExceedRows(operand)) {
    inBounds = km.lt(row, op.rows);
    row = arith::MinUIOp::create(b, loc, row, km.c(op.rows - 1));
  }
  if (kBlocks % format.getBlocksPerStage()) {
    inBounds = km.both(inBounds, km.lt(block, kBlocks));
    block = arith::MinUIOp::create(b, loc, block, km.c(kBlocks - 4));
  }
  Value scaleRow = km.div(row, op.blockRows);
  Value element = km.add(
      km.mul(km.add(km.mul(batch, scaleRows), scaleRow), kBlocks), block);
  Value size;
  if (inBounds)
    size = arith::SelectOp::create(b, loc, inBounds, km.i32(4), km.i32(0));
  NVVM::CpAsyncOp::create(b, loc, bytePtr(sharedBase, offset),
                          bytePtr(scalesPtr[operand], element), 4,
                          NVVM::LoadCacheModifierKind::CA, size);
}

Value Tcgen05KernelBuilder::loadScales(unsigned operand, Value batch, Value row,
                                       Value kStep) {
  const GemmGlobalOperand &op = getOperand(operand);
  int64_t perStage = format.getBlocksPerStage();
  return loadScaleCodes(b, loc, op, batch, row,
                        mayExceedRows(operand) ? km.lt(row, op.rows) : Value(),
                        km.mul(kStep, perStage), perStage,
                        problem.k / format.blockSize);
}

void Tcgen05KernelBuilder::produce(Value step, Value kStep,
                                   const OutputTile &tile) {
  Value stage = km.rem(step, kStages);
  Value stageOffset = stageBase(stage);
  // Item tid + 128 q of a tile is 16-byte chunk tid % 8 of row tid / 8 +
  // 16 q: eight consecutive threads stage one whole row (coalesced global
  // reads, one 128-byte shared row). The swizzled chunk is
  // c ^ (row % 8) = c ^ ((tid / 8) % 8), the same for every q.
  Value chunk = km.rem(tid, 8);
  Value firstRow = km.div(tid, 8);
  Value swizzled =
      km.mul(arith::XOrIOp::create(b, loc, chunk, km.rem(firstRow, 8)), 16);
  Value kBase = km.mul(kStep, format.getStageK());
  for (unsigned operand = 0; operand < 2 && !codesMaps[0]; ++operand) {
    Value tileOffset = km.add(stageOffset, operand * kTileBytes);
    const int64_t rows = operand ? format.getStagedRowsB() : kTile;
    for (int64_t q = 0; q < rows * 8 / kProducers; ++q) {
      Value row = km.add(firstRow, 16 * q);
      Value globalRow = km.add(tile.rowBase[operand], row);
      Value offset =
          km.add(km.add(tileOffset, km.mul(row, kRowBytes)), swizzled);
      // 16 stored bytes (32 E2M1 codes, [PK1] is the smem order, or 16
      // 8-bit codes) by one asynchronous copy, or two of 8 bytes where
      // E2M1 rows are not 16-byte multiples (K = 16 mod 32).
      const int64_t codesPerByte = format.fp4 ? 2 : 1;
      Value col = km.add(kBase, km.mul(chunk, 16 * codesPerByte));
      int64_t bytes = getGemmChunkBytes(format.elements[operand], problem.k);
      copyCodesAsync(operand, tile.batch, globalRow, col, bytes, offset);
      if (bytes == 8)
        copyCodesAsync(operand, tile.batch, globalRow,
                       km.add(col, 8 * codesPerByte), bytes, km.add(offset, 8));
    }
  }
  if (codesMaps[0])
    loadCodesByTma(stage, kStep, tile);
  // Scales: thread r stages row r of A and of B, one word per atom, at
  // 16 (r % 32) + 4 (r / 32) of the atom.
  Value inAtom =
      km.add(km.mul(km.rem(tid, 32), 16), km.mul(km.div(tid, 32), 4));
  // Each CTA's tensor memory holds the scales of its rows of A and of all
  // the tile's columns of B ([PAIR1]).
  for (unsigned operand = 0; operand < 2; ++operand) {
    Value row = km.add(operand ? tile.colBase : tile.rowBase[0], tid);
    Value atomsOffset = km.add(
        stageOffset, 2 * kTileBytes + operand * format.getAtoms() * kAtomBytes);
    if (asyncScales) {
      for (int64_t j = 0; j < format.getAtoms(); ++j)
        copyScalesAsync(operand, tile.batch, row, kStep, j,
                        km.add(km.add(atomsOffset, j * kAtomBytes), inAtom));
      continue;
    }
    Value scales = loadScales(operand, tile.batch, row, kStep);
    for (int64_t j = 0; j < format.getAtoms(); ++j) {
      Value word = slice(scales, 4 * j, 4);
      Value offset = km.add(km.add(atomsOffset, j * kAtomBytes), inAtom);
      vector::StoreOp::create(b, loc, word, memory, memIndex(offset), false,
                              llvm::Align(4));
    }
  }
}

void Tcgen05KernelBuilder::publish(Value step) {
  // The generic-proxy writes (st.shared, completed cp.async) become visible
  // to tcgen05.mma / tcgen05.cp, which read shared memory through the async
  // proxy, then the stage is announced.
  NVVM::FenceProxyOp::create(
      b, loc, NVVM::ProxyKind::async_shared,
      NVVM::SharedSpaceAttr::get(b.getContext(),
                                 NVVM::SharedSpace::shared_cta));
  arriveOnLeader(fullBarrier(km.rem(step, kStages)));
}

void Tcgen05KernelBuilder::issueMMAs(Value step, Value first, Value accColumn) {
  Value stage = km.rem(step, kStages);
  waitParity(fullBarrier(stage), km.toI32(km.rem(km.div(step, kStages), 2)));
  fence(NVVM::Tcgen05FenceKind::AFTER_THREAD_SYNC);

  Value stageStart = stageStartField(stageBase(stage));
  // TMEM columns of this stage's scale atoms: the static part plus
  // stage * 2 * atoms * 4.
  Value stageColumns = km.toI32(km.mul(stage, 2 * format.getAtoms() * 4));
  auto scaleColumn = [&](unsigned operand, int64_t atom) {
    return arith::AddIOp::create(
        b, loc, stageColumns, km.i32(format.getScaleColumn(0, operand, atom)));
  };
  uint64_t atomDesc =
      t5::SmemDescriptor{16, 128, 0, t5::Swizzle::None}.encode();
  for (unsigned operand = 0; operand < 2; ++operand)
    for (int64_t j = 0; j < format.getAtoms(); ++j) {
      Value src = descriptor(
          atomDesc, stageStart,
          2 * kTileBytes + (operand * format.getAtoms() + j) * kAtomBytes);
      Value dst = tmemPtr(scaleColumn(operand, j));
      if (!viaIntrinsics)
        NVVM::Tcgen05CpOp::create(b, loc, NVVM::Tcgen05CpShape::SHAPE_32x128b,
                                  ctaGroup(), NVVM::Tcgen05CpMulticast::WARPX4,
                                  /*srcFormat=*/nullptr, dst, src);
      else
        callIntrinsic(("llvm.nvvm.tcgen05.cp.32x128b_warpx4" + cg()).str(),
                      {dst, src});
    }

  uint64_t operandDesc =
      t5::SmemDescriptor{16, 8 * kRowBytes, 0, t5::Swizzle::B128}.encode();
  Value notFirst = arith::XOrIOp::create(
      b, loc, first, arith::ConstantIntOp::create(b, loc, b.getI1Type(), 1));
  Value accumulator = tmemPtr(accColumn);
  NVVM::MMABlockScaleKind kind = format.fp4 ? NVVM::MMABlockScaleKind::MXF4NVF4
                                            : NVVM::MMABlockScaleKind::MXF8F6F4;
  NVVM::Tcgen05MMABlockScale blockScale =
      format.blockSize == 16 ? NVVM::Tcgen05MMABlockScale::BLOCK16
                             : NVVM::Tcgen05MMABlockScale::BLOCK32;
  std::string intrinsic =
      llvm::formatv("llvm.nvvm.tcgen05.mma.shared.{0}.block_scale.block{1}",
                    format.fp4 ? "mxf4nvf4" : "mxf8f6f4", format.blockSize)
          .str();
  for (int64_t j = 0; j < kMmasPerStage; ++j) {
    Value aDesc = descriptor(operandDesc, stageStart, j * kMmaKBytes);
    Value bDesc =
        descriptor(operandDesc, stageStart, kTileBytes + j * kMmaKBytes);
    Value idesc = km.i32(format.getInstrDescriptor(j).encode());
    Value enableInputD =
        j ? arith::ConstantIntOp::create(b, loc, b.getI1Type(), 1).getResult()
          : notFirst;
    int64_t atom = format.getMmaAtom(j);
    Value sfa = tmemPtr(scaleColumn(0, atom));
    Value sfb = tmemPtr(scaleColumn(1, atom));
    if (!viaIntrinsics)
      NVVM::Tcgen05MMABlockScaleOp::create(b, loc, kind, ctaGroup(), blockScale,
                                           NVVM::Tcgen05MMACollectorOp::DISCARD,
                                           accumulator, aDesc, bDesc, idesc,
                                           enableInputD, sfa, sfb);
    else
      // Operands of the intrinsic: D, A descriptor, B descriptor, idesc,
      // enable-input-d, scale A, scale B, cta_group (1 or 2), collector
      // usage (0: discard).
      callIntrinsic(intrinsic,
                    {accumulator, aDesc, bDesc, idesc, enableInputD, sfa, sfb,
                     km.i32(format.pair ? 2 : 1), km.i32(0)});
  }
  commit(emptyBarrier(stage));
}

void Tcgen05KernelBuilder::storeColumns(Value batch, Value row,
                                        Value rowInBounds, Value col, Value t,
                                        int64_t count) {
  Type bf16 = b.getBF16Type();
  bool toBF16 = problem.isBF16Result();
  auto scaled = [&](Value x) -> Value {
    // [GEMM1]: f32(g · T), g = S_dec,a · S_dec,b from the host.
    if (!problem.globalScale)
      return x;
    Value g = problem.globalScale;
    if (auto vector = dyn_cast<VectorType>(x.getType()))
      g = vector::BroadcastOp::create(b, loc, vector, g);
    return arith::MulFOp::create(b, loc, g, x);
  };
  Value inBounds =
      km.both(rowInBounds, problem.n % kTile ? km.lt(col, problem.n) : Value());
  if (count > 1) {
    // N % count == 0 and col % count == 0: the group is wholly in or out
    // of range, and its f32 / bf16 addresses are count-element aligned.
    buildIf(b, loc, inBounds, [&]() {
      Value old = loadKernelBuffer(b, loc, problem.acc,
                                   ValueRange{batch, row, col}, count,
                                   /*alignment=*/4 * count);
      Value sum = arith::AddFOp::create(b, loc, old, scaled(t));
      if (toBF16)
        sum = arith::TruncFOp::create(b, loc, VectorType::get({count}, bf16),
                                      sum);
      vector::StoreOp::create(b, loc, sum, problem.result,
                              ValueRange{batch, row, col}, false,
                              llvm::Align((toBF16 ? 2 : 4) * count));
    });
    return;
  }
  buildIf(b, loc, inBounds, [&]() {
    Value old =
        loadKernelBuffer(b, loc, problem.acc, ValueRange{batch, row, col});
    Value sum = arith::AddFOp::create(b, loc, old, scaled(t));
    if (toBF16)
      sum = arith::TruncFOp::create(b, loc, bf16, sum);
    memref::StoreOp::create(b, loc, sum, problem.result,
                            ValueRange{batch, row, col});
  });
}

void Tcgen05KernelBuilder::buildEpilogue() {
  // Warp w may only access TMEM lanes 32 (w % 4) .. +31 (PTX ISA 9.7.16.8.3
  // "Access restrictions"); with M = 128 lane r holds row r of C. Warps 5-8
  // cover lanes 32-63, 64-95, 96-127 and 0-31.
  Value warp = km.div(tid, 32);
  Value lane = km.rem(tid, 32);
  Value tileRow = km.add(km.mul(km.rem(warp, 4), 32), lane);
  Value laneField = km.toI32(km.mul(km.mul(km.rem(warp, 4), 32), 1 << 16));
  auto tiles = scf::ForOp::create(b, loc, km.c(0), items, km.c(1));
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(tiles.getBody());
  Value item = tiles.getInductionVar();
  OutputTile tile = getTile(item);
  Value acc = km.rem(item, kAccumulators);
  // Use item / 2 of accumulator item % 2: its MMAs have completed.
  waitUse(accFullBarrier(acc), km.div(item, kAccumulators));
  fence(NVVM::Tcgen05FenceKind::AFTER_THREAD_SYNC);
  Value row = km.add(tile.rowBase[0], tileRow);
  Value rowInBounds = mayExceedRows(0) ? km.lt(row, problem.m) : Value();
  Value accField =
      arith::AddIOp::create(b, loc, laneField, km.toI32(km.mul(acc, kTile)));
  constexpr int64_t kColumns = 32;
  auto loop = scf::ForOp::create(b, loc, km.c(0), km.c(kTile), km.c(kColumns));
  {
    OpBuilder::InsertionGuard inner(b);
    b.setInsertionPointToStart(loop.getBody());
    Value column = loop.getInductionVar();
    Value address =
        tmemPtr(arith::AddIOp::create(b, loc, accField, km.toI32(column)));
    // tcgen05.ld.sync.aligned.32x32b.x32: thread i of the warp gets 32
    // consecutive columns of lane 32 (w % 4) + i.
    auto wordsType = VectorType::get({kColumns}, b.getI32Type());
    syncWarp();
    Value words;
    if (!viaIntrinsics) {
      words = NVVM::Tcgen05LdOp::create(b, loc, wordsType, /*pack=*/false,
                                        NVVM::Tcgen05LdStShape::SHAPE_32X32B,
                                        address, /*offset=*/Value());
      NVVM::Tcgen05WaitOp::create(b, loc, NVVM::Tcgen05WaitKind::LOAD);
    } else {
      words = LLVM::CallIntrinsicOp::create(
                  b, loc, wordsType,
                  b.getStringAttr("llvm.nvvm.tcgen05.ld.32x32b.x32"),
                  ValueRange{address, arith::ConstantIntOp::create(
                                          b, loc, b.getI1Type(), 0)})
                  .getResult(0);
      callIntrinsic("llvm.nvvm.tcgen05.wait.ld", {});
    }
    Value t = vector::BitCastOp::create(
        b, loc, VectorType::get({kColumns}, b.getF32Type()), words);
    Value colBase = km.add(tile.colBase, column);
    int64_t group = problem.n % 4 == 0 ? 4 : 1;
    for (int64_t j = 0; j < kColumns; j += group) {
      Value part = group == 1
                       ? vector::ExtractOp::create(b, loc, t, j).getResult()
                       : slice(t, j, group);
      storeColumns(tile.batch, row, rowInBounds, km.add(colBase, j), part,
                   group);
    }
  }
  // Every load of the accumulator has completed (tcgen05.wait::ld): the
  // MMA thread may overwrite it with tile item + 2.
  fence(NVVM::Tcgen05FenceKind::BEFORE_THREAD_SYNC);
  arriveOnLeader(accEmptyBarrier(acc));
}

void Tcgen05KernelBuilder::buildProducers() {
  // The producers publish step s - kAsyncLag after issuing the copies of
  // step s (kAsyncLag + 1 stages of copies in flight per thread). Pipeline
  // steps count on across tiles, so the ring and its phases run through the
  // whole kernel and the next tile's first stages load while the MMAs
  // finish the last ones of this tile.
  const int64_t lag = kAsyncLag;
  auto tiles = scf::ForOp::create(b, loc, km.c(0), items, km.c(1));
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(tiles.getBody());
    Value item = tiles.getInductionVar();
    OutputTile tile = getTile(item);
    auto loop = scf::ForOp::create(b, loc, km.c(0), km.c(kSteps), km.c(1));
    OpBuilder::InsertionGuard inner(b);
    b.setInsertionPointToStart(loop.getBody());
    Value kStep = loop.getInductionVar();
    Value step = km.add(km.mul(item, kSteps), kStep);
    // Stage step % 4 is free once the MMAs of step - 4 have completed.
    buildIf(b, loc,
            arith::CmpIOp::create(b, loc, arith::CmpIPredicate::uge, step,
                                  km.c(kStages)),
            [&]() {
              waitUse(emptyBarrier(km.rem(step, kStages)),
                      km.add(km.div(step, kStages), 1));
            });
    produce(step, kStep, tile);
    NVVM::CpAsyncCommitGroupOp::create(b, loc);
    buildIf(b, loc,
            arith::CmpIOp::create(b, loc, arith::CmpIPredicate::uge, step,
                                  km.c(lag)),
            [&]() {
              NVVM::CpAsyncWaitGroupOp::create(b, loc, lag);
              publish(arith::SubIOp::create(b, loc, step, km.c(lag)));
            });
  }
  // The last `lag` steps (fewer when the workgroup has fewer steps): every
  // copy has landed, publish them in order.
  Value steps = km.mul(items, kSteps);
  Value first = arith::MaxSIOp::create(
      b, loc, arith::SubIOp::create(b, loc, steps, km.c(lag)), km.c(0));
  NVVM::CpAsyncWaitGroupOp::create(b, loc, 0);
  auto tail = scf::ForOp::create(b, loc, first, steps, km.c(1));
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(tail.getBody());
  publish(tail.getInductionVar());
}

void Tcgen05KernelBuilder::buildIssuer() {
  auto tiles = scf::ForOp::create(b, loc, km.c(0), items, km.c(1));
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(tiles.getBody());
  Value item = tiles.getInductionVar();
  Value acc = km.rem(item, kAccumulators);
  // Accumulator item % 2 last held tile item - 2: wait until the epilogue
  // has read it (use item / 2 - 1 of its empty barrier).
  buildIf(b, loc,
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::uge, item,
                                km.c(kAccumulators)),
          [&]() {
            waitUse(accEmptyBarrier(acc),
                    km.add(km.div(item, kAccumulators), 1));
            fence(NVVM::Tcgen05FenceKind::AFTER_THREAD_SYNC);
          });
  Value accColumn = km.toI32(km.mul(acc, kTile));
  auto loop = scf::ForOp::create(b, loc, km.c(0), km.c(kSteps), km.c(1));
  {
    OpBuilder::InsertionGuard inner(b);
    b.setInsertionPointToStart(loop.getBody());
    Value kStep = loop.getInductionVar();
    issueMMAs(km.add(km.mul(item, kSteps), kStep), km.eq(kStep, 0), accColumn);
  }
  commit(accFullBarrier(acc));
}

void Tcgen05KernelBuilder::build(gpu::LaunchOp launch) {
  MLIRContext *ctx = b.getContext();
  tid = launch.getThreadIds().x;
  // [PERS1], [RAS1] A persistent grid of `workgroups`: workgroup w computes
  // tiles w, w + workgroups, ... of the grouped order (bands of kGemmRasterRows
  // row tiles, batch entry after batch entry), so the workgroups on the
  // SMs at once share their A and B tiles through L2 (a wave of B200's 148
  // spans 8 x 19 tiles, not a few rows of all columns).
  workgroup = launch.getBlockIds().x;
  int64_t tiles = llvm::divideCeil(problem.n, kTile) *
                  llvm::divideCeil(problem.m, format.getTileM()) *
                  problem.batch;
  workgroups = *getConstantIntValue(launch.getGridSizeX());
  // [PAIR1] Clusters of two along x: a pair's CTAs are consecutive
  // workgroups (%cluster_ctarank = workgroup % 2) and walk the same tiles.
  const int64_t perUnit = format.pair ? 2 : 1;
  units = workgroups / perUnit;
  unit = km.div(workgroup, perUnit);
  rank = km.rem(workgroup, perUnit);
  assert(units * perUnit == workgroups && units <= tiles &&
         "the launch has at most one workgroup (or pair) per tile");
  items = km.div(km.add(km.c(tiles + units - 1),
                        arith::SubIOp::create(b, loc, km.c(0), unit)),
                 units);
  memory = buildDynamicSharedBytes(b, loc);
  // The 128-byte swizzle needs 1024-byte aligned tiles: align the base at
  // run time (the launch has 1024 bytes of slack).
  pad = buildAlignmentPad(b, loc, memory, kSwizzleAlign);
  base = km.add(memref::ExtractAlignedPointerAsIndexOp::create(b, loc, memory),
                pad);
  auto globalPtr = [&](Value buffer) -> Value {
    Value address =
        memref::ExtractAlignedPointerAsIndexOp::create(b, loc, buffer);
    Value generic = LLVM::IntToPtrOp::create(
        b, loc, LLVM::LLVMPointerType::get(ctx), km.toI64(address));
    return LLVM::AddrSpaceCastOp::create(
        b, loc, LLVM::LLVMPointerType::get(ctx, 1), generic);
  };
  for (unsigned operand = 0; operand < 2; ++operand) {
    if (!codesMaps[operand])
      codesPtr[operand] = globalPtr(getOperand(operand).codes);
    if (asyncScales)
      scalesPtr[operand] = globalPtr(getOperand(operand).scales);
  }
  sharedBase = LLVM::IntToPtrOp::create(
      b, loc, LLVM::LLVMPointerType::get(ctx, 3), km.toI64(base));
  Value warp = km.div(tid, 32);

  // Set-up: thread 0 initializes the mbarriers, warp 4 allocates TMEM (the
  // address lands in shared memory) and gives up the permit at once.
  buildIf(b, loc, km.eq(tid, 0), [&]() {
    auto init = [&](Value barrierPtr, int64_t count) {
      NVVM::MBarrierInitOp::create(b, loc, barrierPtr, km.i32(count), Value());
    };
    // [PAIR1] The even CTA's full and accEmpty barriers count both CTAs'
    // producers and epilogue threads (the odd CTA's stay unused).
    const int64_t ctas = format.pair ? 2 : 1;
    for (int64_t s = 0; s < kStages; ++s) {
      init(fullBarrier(km.c(s)), ctas * kProducers);
      init(emptyBarrier(km.c(s)), 1);
    }
    for (int64_t a = 0; a < kAccumulators; ++a) {
      init(accFullBarrier(km.c(a)), 1);
      init(accEmptyBarrier(km.c(a)), ctas * kEpilogueThreads);
    }
    NVVM::FenceProxyOp::create(
        b, loc, NVVM::ProxyKind::async_shared,
        NVVM::SharedSpaceAttr::get(ctx, NVVM::SharedSpace::shared_cta));
  });
  buildIf(b, loc, km.eq(warp, kMmaThread / 32), [&]() {
    Value columns = km.i32(kTmemColumns);
    syncWarp();
    // [PAIR1] With a pair, warp 4 of each CTA allocates the same columns
    // of both CTAs' tensor memory together.
    if (!viaIntrinsics) {
      NVVM::Tcgen05AllocOp::create(b, loc, tmemSlot(), columns)
          .setGroup(ctaGroup());
      NVVM::Tcgen05RelinquishAllocPermitOp::create(b, loc).setGroup(ctaGroup());
    } else {
      callIntrinsic(("llvm.nvvm.tcgen05.alloc.shared" + cg()).str(),
                    {tmemSlot(), columns});
      callIntrinsic(("llvm.nvvm.tcgen05.relinq.alloc.permit" + cg()).str(), {});
    }
  });
  fence(NVVM::Tcgen05FenceKind::BEFORE_THREAD_SYNC);
  syncAll();
  fence(NVVM::Tcgen05FenceKind::AFTER_THREAD_SYNC);
  tmem = LLVM::LoadOp::create(b, loc, b.getI32Type(), tmemSlot());

  // The roles: producers (warps 0-3), the epilogue (warps 5-8), the MMA
  // thread (lane 0 of warp 4).
  buildIfElse(
      b, loc, km.lt(tid, kProducers), [&]() { buildProducers(); },
      [&]() {
        buildIfElse(
            b, loc,
            arith::CmpIOp::create(b, loc, arith::CmpIPredicate::uge, tid,
                                  km.c(kEpilogueThread)),
            [&]() { buildEpilogue(); },
            [&]() {
              // [PAIR1] The even CTA's thread issues the pair's MMAs.
              Value issuer = km.eq(tid, kMmaThread);
              if (format.pair)
                issuer = km.both(issuer, km.eq(rank, 0));
              buildIf(b, loc, issuer, [&]() { buildIssuer(); });
            });
      });

  // Tear-down: every TMEM read is done before warp 4 frees the columns
  // (with a pair: in both CTAs, and no CTA returns while the other may
  // still arrive on its mbarriers).
  fence(NVVM::Tcgen05FenceKind::BEFORE_THREAD_SYNC);
  syncAll();
  buildIf(b, loc, km.eq(warp, kMmaThread / 32), [&]() {
    fence(NVVM::Tcgen05FenceKind::AFTER_THREAD_SYNC);
    syncWarp();
    Value ptr = tmemPtr(km.i32(0));
    if (!viaIntrinsics)
      NVVM::Tcgen05DeallocOp::create(b, loc, ptr, km.i32(kTmemColumns))
          .setGroup(ctaGroup());
    else
      callIntrinsic(("llvm.nvvm.tcgen05.dealloc" + cg()).str(),
                    {ptr, km.i32(kTmemColumns)});
  });
}

std::optional<std::string>
mlir::fp4train::getTcgen05UnsupportedReason(ScaledMatmulOp op) {
  bool fp4A = isa<Float4E2M1FNType>(op.getLhs().getType().getElementType());
  bool fp4B = isa<Float4E2M1FNType>(op.getRhs().getType().getElementType());
  if (fp4A != fp4B)
    return "mixes an FP4 and an FP8 operand, which the tcgen05 kernel does "
           "not stage (kind::mxf8f6f4 would need E2M1 in 8-bit containers)";
  // The type and op verifiers leave no other pair: E4M3 scales only come
  // with E2M1 elements in 16-element blocks (kind::mxf4nvf4 block16), E8M0
  // ones in 32-element blocks (block32), and both operands share the block
  // along K.
  return std::nullopt;
}

LogicalResult mlir::fp4train::lowerScaledMatmulToTcgen05Kernel(
    ScaledMatmulOp op, ValueRange lhs, ValueRange rhs, Value acc,
    const GPUTarget &target, int64_t workgroups, bool pair,
    ConversionPatternRewriter &rewriter) {
  assert(workgroups > 0 && "a persistent grid of at least one workgroup");
  ScaledTensorType lhsType = op.getLhs().getType();
  Tcgen05Format format;
  format.fp4 = isa<Float4E2M1FNType>(lhsType.getElementType());
  format.blockSize = lhsType.getBlockShape().back();
  format.nvfp4 = isa<Float8E4M3FNType>(lhsType.getScaleType());
  format.elements[0] = lhsType.getElementType();
  format.elements[1] = op.getRhs().getType().getElementType();
  format.pair = pair;
  GemmLaunchConfig config;
  config.tileM = format.getTileM();
  config.tileN = kTile;
  config.threads = kThreads;
  config.dynamicSharedBytes = format.getSharedBytes();
  config.persistentWorkgroups = workgroups;
  config.clusterX = pair ? 2 : 1;
  // MLIR's per-op chip check of the tcgen05 NVVM ops accepts sm_100a only
  // ([PTX1] in docs/nvvm.md).
  bool viaIntrinsics = target.nvvmOpsByIntrinsicName;
  return lowerScaledMatmulToLaunch(
      op, lhs, rhs, acc, config,
      [&](OpBuilder &b, gpu::LaunchOp launch, const GemmProblem &problem) {
        SmallVector<Value, 2> maps;
        if (canLoadCodesByTma(format, problem.k)) {
          // [TMA1] Host code, before the launch.
          OpBuilder::InsertionGuard guard(b);
          b.setInsertionPoint(launch);
          maps.push_back(
              buildSwizzledTileMap(b, op.getLoc(), problem.a.codes, kTile));
          maps.push_back(buildSwizzledTileMap(b, op.getLoc(), problem.bt.codes,
                                              format.getStagedRowsB()));
        }
        Tcgen05KernelBuilder(b, op.getLoc(), problem, format, viaIntrinsics,
                             maps)
            .build(launch);
      },
      rewriter);
}
