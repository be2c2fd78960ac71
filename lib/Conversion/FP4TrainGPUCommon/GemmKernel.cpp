//===- GemmKernel.cpp - The shared block-scaled GEMM kernel skeleton
//-------===//
//
// See GemmKernel.h for the kernel's structure. The shared-memory buffer of
// each of the two K-step stages is [A codes | B codes | A scales | B scales];
// a staged code row is padded by 16 bytes so that consecutive rows start 4
// banks apart and the lanes of one fragment load, which read the same K
// offset of consecutive rows, spread over the banks (docs/amdgpu.md,
// docs/nvvm.md give the per-target bank patterns).
//
//===----------------------------------------------------------------------===//

#include "fp4train/Conversion/FP4TrainGPUCommon/GemmKernel.h"

#include "fp4train/Conversion/FP4TrainCommon/TypeConversion.h"
#include "fp4train/Conversion/FP4TrainGPUCommon/Buffers.h"
#include "fp4train/Dialect/FP4Train/IR/FP4TrainOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mlir::fp4train;

/// Bytes of padding after each staged code row.
static constexpr int64_t kRowPad = 16;
/// The span of the 128-byte swizzle pattern (8 rows of 128 bytes): swizzled
/// tiles start at multiples of it.
static constexpr int64_t kSwizzleSpan = 1024;
/// A swizzled row: a staged row of more bytes is split along K into
/// 128-byte atoms, each a swizzled tile of its own.
static constexpr int64_t kSwizzleRow = 128;

BlockScaledMMATargetInfo::~BlockScaledMMATargetInfo() = default;

int64_t BlockScaledMMATargetInfo::getSubgroupThreads() const {
  return getTarget().getSubgroupSize();
}

Value BlockScaledMMATargetInfo::convertStagedCodes(OpBuilder &, Location, Type,
                                                   Value chunk,
                                                   ValueRange) const {
  llvm_unreachable("a target that stages a wider type converts its codes");
  return chunk;
}

Value BlockScaledMMATargetInfo::buildTileMap(OpBuilder &, Location, Value,
                                             int64_t) const {
  llvm_unreachable("only a target that copies its staged tiles maps them");
}
void BlockScaledMMATargetInfo::buildTileBarrierInit(OpBuilder &, Location,
                                                    Value, Value) const {
  llvm_unreachable("only a target that copies its staged tiles has barriers");
}
void BlockScaledMMATargetInfo::buildTileCopies(OpBuilder &, Location, Value,
                                               Value, int64_t,
                                               ArrayRef<TileCopy>) const {
  llvm_unreachable("only a target that copies its staged tiles copies them");
}
void BlockScaledMMATargetInfo::buildTileWait(OpBuilder &, Location, Value,
                                             Value, Value) const {
  llvm_unreachable("only a target that copies its staged tiles waits");
}

bool GemmProblem::isBF16Result() const {
  return isa<BFloat16Type>(cast<MemRefType>(result.getType()).getElementType());
}

bool StagedTiles::isPacked(unsigned operand) const {
  return isPackedStorage(stagedElements[operand]);
}

int64_t StagedTiles::getRowCodeBytes(unsigned operand) const {
  return kGemmTileK * getStagedElementBits(stagedElements[operand]) / 8;
}

int64_t StagedTiles::getStagedElementBits(Type staged) {
  // E2M1 is stored two per byte ([PK1]), the others in their own width.
  return isPackedStorage(staged) ? 4 : staged.getIntOrFloatBitWidth();
}

static Value indexConst(OpBuilder &b, Location loc, int64_t v) {
  return arith::ConstantIndexOp::create(b, loc, v);
}

/// `offset` plus the alignment pad of swizzled tiles.
static Value addPad(OpBuilder &b, Location loc, Value offset, Value pad) {
  return pad ? arith::AddIOp::create(b, loc, offset, pad).getResult() : offset;
}

Value StagedTiles::getCodesOffset(OpBuilder &b, Location loc, unsigned operand,
                                  Value buffer, Value row, Value kByte) const {
  Value base = arith::AddIOp::create(
      b, loc,
      arith::MulIOp::create(b, loc, buffer, indexConst(b, loc, bufferBytes)),
      indexConst(b, loc, codesBase[operand]));
  if (swizzled) {
    // 16-byte chunk c of row r at chunk c ^ (r % 8) of the 128-byte row;
    // longer rows are 128-byte atoms along K, each tile of atoms whole.
    IndexMath im{b, loc};
    if (getRowCodeBytes(operand) > kSwizzleRow) {
      base = im.add(base, im.mul(im.div(kByte, kSwizzleRow),
                                 tileRows[operand] * kSwizzleRow));
      kByte = im.rem(kByte, kSwizzleRow);
    }
    Value chunk =
        arith::XOrIOp::create(b, loc, im.div(kByte, 16), im.rem(row, 8));
    kByte = im.add(im.mul(chunk, 16), im.rem(kByte, 16));
  }
  Value inRow = arith::AddIOp::create(
      b, loc,
      arith::MulIOp::create(b, loc, row, indexConst(b, loc, rowBytes[operand])),
      kByte);
  return addPad(b, loc, arith::AddIOp::create(b, loc, base, inRow), pad);
}

Value StagedTiles::getScaleOffset(OpBuilder &b, Location loc, unsigned operand,
                                  Value buffer, Value row, Value block) const {
  Value base = arith::AddIOp::create(
      b, loc,
      arith::MulIOp::create(b, loc, buffer, indexConst(b, loc, bufferBytes)),
      indexConst(b, loc, scalesBase[operand]));
  Value inRow = arith::AddIOp::create(
      b, loc,
      arith::MulIOp::create(b, loc, row,
                            indexConst(b, loc, getBlocksPerStep())),
      block);
  return addPad(b, loc, arith::AddIOp::create(b, loc, base, inRow), pad);
}

Value StagedTiles::getFoldReferencesOffset(OpBuilder &b, Location loc,
                                           Value buffer) const {
  assert(foldsScales() && "no scale fold");
  // The two buffers' references, 8 bytes apart.
  Value offset = arith::AddIOp::create(
      b, loc, arith::MulIOp::create(b, loc, buffer, indexConst(b, loc, 8)),
      indexConst(b, loc, foldBase));
  return addPad(b, loc, offset, pad);
}

namespace mlir::fp4train {
namespace {

/// One GEMM operand (A = lhs rows x K, or B^T = rhs rows x K) in global
/// memory.
struct GlobalOperand {
  Value codes;  // memref<batch x rows x K x i8>
  Value scales; // memref<batch x rows / blockRows x K / blockSize x i8>
  int64_t rows, tileRows;
  /// Rows sharing one scale row: 1, or 16 for 16x16 (2-D) blocks.
  int64_t blockRows;
  /// Row offset of this workgroup's tile.
  Value rowBase;
};

/// Values a thread carries from the global loads of one K step to its
/// shared-memory stores: its chunks of A and B codes and its rows of scales;
/// where the staged values carry their scales, each chunk's blocks' scale
/// codes of both operands (no rows): one vector<blocks x i8> per chunk;
/// with a scale fold, thread 0's step references (vector<blocks x i8>).
struct Prefetch {
  SmallVector<Value> a, b, scales;
  SmallVector<Value> chunkScales[2];
  Value references;
};

/// Where a chunk of codes lies in its operand: the global row, the first K
/// element, and whether it is inside the operand (null: always).
struct ChunkPlace {
  Value row, col, inBounds;
};

} // namespace

class GemmKernelBuilder {
public:
  GemmKernelBuilder(OpBuilder &b, Location loc,
                    const BlockScaledMMATargetInfo &mma, GlobalOperand &a,
                    GlobalOperand &bt, ScaledTensorType lhsType,
                    ScaledTensorType rhsType, int64_t k, Value acc,
                    Value globalScale, Value result, int64_t m, int64_t n,
                    bool bf16Result, Value foldReferences = Value(),
                    ArrayRef<Value> tileMaps = {})
      : b(b), loc(loc), im{b, loc}, mma(mma), a(a), bt(bt), k(k), acc(acc),
        globalScale(globalScale), result(result), m(m), n(n),
        bf16Result(bf16Result), foldReferences(foldReferences) {
    llvm::copy(tileMaps, this->tileMaps);
    GemmTiling tiling = mma.getTiling();
    threads = tiling.subgroupsM * tiling.subgroupsN * mma.getSubgroupThreads();
    tiles.blockSize = lhsType.getBlockShape().back();
    tiles.elements[0] = lhsType.getElementType();
    tiles.elements[1] = rhsType.getElementType();
    tiles.scaleTypes[0] = lhsType.getScaleType();
    tiles.scaleTypes[1] = rhsType.getScaleType();
    for (unsigned i = 0; i < 2; ++i)
      tiles.stagedElements[i] = mma.getStagedElementType(tiles.elements[i]);
    tiles.tileRows[0] = a.tileRows;
    tiles.tileRows[1] = bt.tileRows;
    // Swizzled tiles: 128-byte rows at 1024-byte aligned tile starts (the
    // swizzle is a function of address bits 4-9).
    tiles.swizzled = mma.stagesSwizzledRows();
    const int64_t tileAlign = tiles.swizzled ? kSwizzleSpan : 16;
    int64_t offset = 0;
    for (unsigned i = 0; i < 2; ++i) {
      assert((!tiles.swizzled || tiles.getRowCodeBytes(i) % kSwizzleRow == 0) &&
             "swizzled rows are whole 128-byte atoms");
      // Swizzled: the stride of a row within an atom (the tile's size is
      // the same, rows x bytes).
      tiles.rowBytes[i] =
          tiles.swizzled ? kSwizzleRow : tiles.getRowCodeBytes(i) + kRowPad;
      tiles.codesBase[i] = offset;
      offset =
          llvm::alignTo(offset + tiles.tileRows[i] *
                                     (tiles.swizzled ? tiles.getRowCodeBytes(i)
                                                     : tiles.rowBytes[i]),
                        tileAlign);
    }
    for (unsigned i = 0; i < 2; ++i) {
      tiles.scalesBase[i] = offset;
      if (!mma.stagesScaledValues())
        offset += tiles.tileRows[i] * tiles.getBlocksPerStep();
    }
    tiles.bufferBytes = llvm::alignTo(offset, tileAlign);
    setUpScaleFold();
  }

  int64_t getThreads() const { return threads; }
  /// True when B^T's scales are folded ([WG2]): the operands must then
  /// arrive in their staged types with the fold references ([WG4],
  /// buildStagedOperand).
  bool foldsScales() const { return fold.has_value(); }
  /// [WG5] True when the target copies the staged code tiles: both
  /// operands are stored in their staged types (8-bit formats, or with a
  /// fold the E4M3 the staging kernels wrote), one 128-byte swizzle row per
  /// step, and the target copies such tiles.
  bool copiesTiles() const {
    return mma.copiesStagedTiles() && tiles.swizzled &&
           !mma.stagesScaledValues() && !convertsCodes(0) &&
           !convertsCodes(1) && tiles.getRowCodeBytes(0) == kSwizzleRow &&
           tiles.getRowCodeBytes(1) == kSwizzleRow;
  }
  const ScaleFold *getScaleFold() const { return fold ? &*fold : nullptr; }
  /// The two buffers, the fold references, the copy barriers, and the
  /// slack for aligning swizzled tiles at run time.
  int64_t getSharedBytes() const {
    return 2 * tiles.bufferBytes + foldBytes + (copiesTiles() ? 16 : 0) +
           (tiles.swizzled ? kSwizzleSpan : 0);
  }

  /// Fills the body of `launch` (before its terminator).
  void build(gpu::LaunchOp launch);

private:
  GlobalOperand &getOperand(unsigned i) { return i ? bt : a; }
  /// The type of operand `i`'s codes in global memory: its element type,
  /// or with a fold its staged type ([WG4]).
  Type getStoredElementType(unsigned i) const {
    return fold ? tiles.stagedElements[i] : tiles.elements[i];
  }
  /// Bytes and codes per global load of operand `i`, and loads per staged
  /// row and per thread (the last rounded up: guarded loads).
  int64_t chunkBytes(unsigned i) const {
    return getGemmChunkBytes(getStoredElementType(i), k);
  }
  int64_t chunkCodes(unsigned i) const {
    return isPackedStorage(getStoredElementType(i)) ? 2 * chunkBytes(i)
                                                    : chunkBytes(i);
  }
  /// Bytes of a chunk in shared memory (after convertStagedCodes).
  int64_t stagedChunkBytes(unsigned i) const {
    return chunkCodes(i) *
           StagedTiles::getStagedElementBits(tiles.stagedElements[i]) / 8;
  }
  bool convertsCodes(unsigned i) const {
    return tiles.stagedElements[i] != getStoredElementType(i);
  }
  int64_t chunksPerRow(unsigned i) const { return kGemmTileK / chunkCodes(i); }
  int64_t chunksPerTile(unsigned i) const {
    return tiles.tileRows[i] * chunksPerRow(i);
  }
  int64_t chunksPerThread(unsigned i) const {
    if (copiesTiles())
      return 0;
    return llvm::divideCeil(chunksPerTile(i), threads);
  }
  Prefetch loadTile(Value kStep);
  void storeTile(Value buffer, const Prefetch &p);
  /// Stores staged chunk `i` of this thread (converted already) of
  /// `operand`.
  void storeCodeChunk(unsigned operand, Value buffer, int64_t i, Value chunk);
  /// [WG2] The scale fold (ScaleFold) when the target asks for one: the
  /// references' shared memory.
  void setUpScaleFold();
  /// Scale rows staged from whole rows of scale codes: A's and B^T's.
  int64_t getScaleRows() const {
    if (mma.stagesScaledValues())
      return 0;
    return a.tileRows + bt.tileRows;
  }
  /// True when the chunks come with their blocks' scale codes (both
  /// operands alike).
  bool loadsChunkScales() const { return mma.stagesScaledValues(); }
  void epilogue(ValueRange accs);
  /// `t` scaled by the global decode scales (g * t), when there are any.
  Value applyGlobalScale(Value t);
  /// Stores RNE-bf16(acc + t0), RNE-bf16(acc + t1) at columns col, col + 1.
  void storeBF16Pair(Value row, Value col, Value rowInBounds, Value t0,
                     Value t1);
  /// The tile-local B^T row (column of C) staged in shared row `row`.
  Value bRowOfStagedRow(Value row);
  bool permutesColumns() const {
    return bf16Result && !mma.hasAdjacentColumnPairs();
  }

  ChunkPlace getChunkPlace(unsigned operand, Value chunk, Value kStep);
  Value loadCodeChunk(unsigned operand, Value chunk, Value kStep);
  /// The scale codes of the blocks chunk `chunk` of `operand` covers, in K
  /// order (vector<blocks x i8>, one load); 0 outside the operand.
  Value loadChunkScales(unsigned operand, Value chunk, Value kStep);
  Value loadScaleRow(unsigned operand, Value row, Value kStep);

  Value buildIf(Value cond, function_ref<Value()> thenFn,
                function_ref<Value()> elseFn) {
    return fp4train::buildIf(b, loc, cond, thenFn, elseFn);
  }
  void buildIf(Value cond, function_ref<void()> thenFn) {
    fp4train::buildIf(b, loc, cond, thenFn);
  }
  Value zeros(Type type) {
    return arith::ConstantOp::create(b, loc, b.getZeroAttr(type));
  }

  OpBuilder &b;
  Location loc;
  IndexMath im;
  const BlockScaledMMATargetInfo &mma;
  GlobalOperand &a, &bt;
  StagedTiles tiles;
  int64_t k;
  Value acc, globalScale, result;
  int64_t m, n;
  bool bf16Result;
  int64_t threads;
  std::optional<ScaleFold> fold;
  /// Bytes of the fold references' shared memory.
  int64_t foldBytes = 0;
  /// [WG4] The references of the folded B^T (GemmProblem::foldReferences).
  Value foldReferences;
  /// [WG5] The maps the code tiles are copied through (copiesTiles).
  Value tileMaps[2];
  /// [WG5] Byte offset of buffer `buffer`'s copy barrier (after the
  /// buffers and the fold references).
  Value getTileBarrierOffset(Value buffer) {
    return addPad(b, loc,
                  im.add(im.mul(buffer, 8), 2 * tiles.bufferBytes + foldBytes),
                  tiles.pad);
  }
  /// [WG5] Thread 0: the copies of K step `kStep`'s code tiles into
  /// `buffer`.
  void copyTiles(Value kStep, Value buffer);

  // Set by build().
  Value tid, lane, subgroup, batch, colTile;
};

} // namespace mlir::fp4train

ChunkPlace GemmKernelBuilder::getChunkPlace(unsigned operand, Value chunk,
                                            Value kStep) {
  GlobalOperand &op = getOperand(operand);
  const int64_t perRow = chunksPerRow(operand), codes = chunkCodes(operand);
  // Chunk c is stored to staged row c / perRow (storeTile).
  Value tileRow = im.div(chunk, perRow);
  if (operand == 1)
    tileRow = bRowOfStagedRow(tileRow);
  Value row = im.add(op.rowBase, tileRow);
  Value col =
      im.add(im.mul(kStep, kGemmTileK), im.mul(im.rem(chunk, perRow), codes));
  // Bounds: a chunk holds whole blocks (getGemmChunkBytes), so it is wholly
  // inside or wholly outside; checks are emitted only for the dimensions
  // that are not tile multiples, and for a last, partial round of loads.
  Value inBounds;
  if (chunksPerTile(operand) % threads)
    inBounds = im.lt(chunk, chunksPerTile(operand));
  if (op.rows % op.tileRows)
    inBounds = im.both(inBounds, im.lt(row, op.rows));
  if (k % kGemmTileK)
    inBounds = im.both(inBounds, im.lt(col, k));
  return {row, col, inBounds};
}

Value GemmKernelBuilder::loadCodeChunk(unsigned operand, Value chunk,
                                       Value kStep) {
  GlobalOperand &op = getOperand(operand);
  ChunkPlace place = getChunkPlace(operand, chunk, kStep);
  // [PK1] Byte col / 2 of a row of E2M1 codes.
  Value byteCol = im.div(place.col, chunkCodes(operand) / chunkBytes(operand));
  return fp4train::loadCodeChunk(
      b, loc, GemmGlobalOperand{op.codes, op.scales, op.rows, op.blockRows},
      batch, place.row, byteCol, chunkBytes(operand), place.inBounds);
}

Value GemmKernelBuilder::loadChunkScales(unsigned operand, Value chunk,
                                         Value kStep) {
  GlobalOperand &op = getOperand(operand);
  ChunkPlace place = getChunkPlace(operand, chunk, kStep);
  // A chunk holds whole blocks, or part of one (getGemmChunkBytes), and is
  // wholly inside or outside the operand: its bounds are the codes'.
  return loadScaleCodes(
      b, loc, GemmGlobalOperand{op.codes, op.scales, op.rows, op.blockRows},
      batch, place.row, place.inBounds, im.div(place.col, tiles.blockSize),
      std::max<int64_t>(1, chunkCodes(operand) / tiles.blockSize),
      k / tiles.blockSize);
}

Value GemmKernelBuilder::loadScaleRow(unsigned operand, Value row,
                                      Value kStep) {
  GlobalOperand &op = getOperand(operand);
  GemmGlobalOperand global{op.codes, op.scales, op.rows, op.blockRows};
  int64_t perStep = tiles.getBlocksPerStep();
  Value globalRow = im.add(op.rowBase, row);
  Value rowInBounds =
      op.rows % op.tileRows ? im.lt(globalRow, op.rows) : Value();
  return loadScaleCodes(b, loc, global, batch, globalRow, rowInBounds,
                        im.mul(kStep, perStep), perStep, k / tiles.blockSize);
}

Prefetch GemmKernelBuilder::loadTile(Value kStep) {
  Prefetch p;
  for (unsigned operand = 0; operand < 2; ++operand)
    for (int64_t i = 0, e = chunksPerThread(operand); i < e; ++i) {
      Value chunk = im.add(tid, i * threads);
      (operand ? p.b : p.a).push_back(loadCodeChunk(operand, chunk, kStep));
      if (loadsChunkScales())
        p.chunkScales[operand].push_back(
            loadChunkScales(operand, chunk, kStep));
    }
  // Scale row r of [A rows | B rows] is loaded by thread r % threads.
  auto type = VectorType::get({tiles.getBlocksPerStep()}, b.getI8Type());
  int64_t scaleRows = getScaleRows();
  for (int64_t first = 0; first < scaleRows; first += threads) {
    Value r = im.add(tid, first);
    auto loadB = [&]() -> Value {
      // Stored to B scale row r - tileM (storeTile).
      Value row =
          bRowOfStagedRow(arith::SubIOp::create(b, loc, r, im.c(a.tileRows)));
      Value cond = first + threads <= scaleRows ? Value() : im.lt(r, scaleRows);
      return buildIf(
          cond, [&]() { return loadScaleRow(1, row, kStep); },
          [&]() { return zeros(type); });
    };
    if (first + threads <= a.tileRows)
      p.scales.push_back(loadScaleRow(0, r, kStep));
    else if (first >= a.tileRows)
      p.scales.push_back(loadB());
    else
      p.scales.push_back(buildIf(
          im.lt(r, a.tileRows), [&]() { return loadScaleRow(0, r, kStep); },
          loadB));
  }
  // [WG4] The step's fold references, whole steps in the buffer.
  if (fold)
    p.references = buildIf(
        im.lt(tid, 1),
        [&]() -> Value {
          return vector::LoadOp::create(
              b, loc, type, foldReferences,
              ValueRange{batch, colTile,
                         im.mul(kStep, tiles.getBlocksPerStep())},
              false, llvm::Align(tiles.getBlocksPerStep()));
        },
        [&]() { return zeros(type); });
  return p;
}

void GemmKernelBuilder::storeCodeChunk(unsigned operand, Value buffer,
                                       int64_t i, Value chunk) {
  const int64_t perRow = chunksPerRow(operand);
  const int64_t bytes = stagedChunkBytes(operand);
  Value index = im.add(tid, i * threads);
  Value row = im.div(index, perRow);
  Value col = im.rem(index, perRow);
  Value cond = (i + 1) * threads <= chunksPerTile(operand)
                   ? Value()
                   : im.lt(index, chunksPerTile(operand));
  // Rows are a multiple of 16 bytes long (kRowPad), so a chunk is aligned
  // to its size up to 16 bytes. In swizzled rows consecutive 16-byte
  // pieces are not adjacent: one store per piece.
  const int64_t piece = tiles.swizzled ? std::min<int64_t>(bytes, 16) : bytes;
  buildIf(cond, [&]() {
    for (int64_t first = 0; first < bytes; first += piece) {
      Value part =
          piece == bytes
              ? chunk
              : vector::ShuffleOp::create(
                    b, loc, chunk, chunk,
                    llvm::to_vector(llvm::seq<int64_t>(first, first + piece)))
                    .getResult();
      Value at = tiles.getCodesOffset(b, loc, operand, buffer, row,
                                      im.add(im.mul(col, bytes), first));
      vector::StoreOp::create(b, loc, part, tiles.getMemory(), at, false,
                              llvm::Align(std::min<int64_t>(piece, 16)));
    }
  });
}

void GemmKernelBuilder::storeTile(Value buffer, const Prefetch &p) {
  Value memory = tiles.getMemory();
  // The codes go to shared memory in their global order ([PK1] is the
  // staged rows' order), converted where the target stages a wider type.
  // Staged values that carry their scales take each chunk's scale codes.
  auto storeCodes = [&](unsigned operand, ArrayRef<Value> chunks) {
    for (auto [i, loaded] : llvm::enumerate(chunks)) {
      SmallVector<Value, 1> scales;
      if (mma.stagesScaledValues())
        scales.push_back(p.chunkScales[operand][i]);
      storeCodeChunk(operand, buffer, i,
                     convertsCodes(operand)
                         ? mma.convertStagedCodes(
                               b, loc, tiles.elements[operand], loaded, scales)
                         : loaded);
    }
  };
  storeCodes(0, p.a);
  // A scale rows then B scale rows are contiguous: thread t writes rows
  // t, t + threads, ...
  int64_t perStep = tiles.getBlocksPerStep();
  int64_t scaleRows = getScaleRows();
  SmallVector<int64_t> order = mma.getStagedScaleOrder(perStep);
  for (size_t i = 0; i < p.scales.size(); ++i) {
    Value scales = p.scales[i];
    if (!order.empty())
      scales = vector::ShuffleOp::create(b, loc, scales, scales, order);
    int64_t first = int64_t(i) * threads;
    Value r = im.add(tid, first);
    Value cond = first + threads <= scaleRows ? Value() : im.lt(r, scaleRows);
    buildIf(cond, [&]() {
      Value offset = tiles.getScaleOffset(b, loc, 0, buffer, r, im.c(0));
      vector::StoreOp::create(b, loc, scales, memory, offset, false,
                              llvm::Align(perStep));
    });
  }
  storeCodes(1, p.b);
  if (fold)
    buildIf(im.lt(tid, 1), [&]() {
      vector::StoreOp::create(b, loc, p.references, memory,
                              tiles.getFoldReferencesOffset(b, loc, buffer),
                              false, llvm::Align(tiles.getBlocksPerStep()));
    });
}

void GemmKernelBuilder::setUpScaleFold() {
  fold = mma.getScaleFold(tiles);
  // The references of a step fill at most 8 bytes per buffer; the staged
  // conversion takes one table row per distance.
  if (!fold || mma.stagesScaledValues() || tiles.getBlocksPerStep() > 8 ||
      int64_t(fold->tables.size()) !=
          int64_t(fold->maxDistance + 1) * fold->wordsPerDistance) {
    fold.reset();
    return;
  }
  tiles.foldBase = 2 * tiles.bufferBytes;
  foldBytes = 16;
}

Value GemmKernelBuilder::bRowOfStagedRow(Value row) {
  if (!permutesColumns())
    return row;
  // Staged row j * mmaN + c of a subgroup's group of columns, which lane
  // column c of N tile j reads (the MMA loaders are unchanged), holds
  // tile-local column repN * c + j. Applied where a thread picks the global
  // row it loads, so the shared-memory stores keep their layout (and bank
  // pattern), and each group of consecutive threads still loads one whole
  // row segment. The row is per thread and loop invariant: no cost in the
  // loop.
  int64_t mmaN = mma.getN(), repN = mma.getTiling().repN;
  int64_t group = repN * mmaN;
  Value p = im.rem(row, group);
  Value groupStart = im.mul(im.div(row, group), group);
  Value tile = im.div(p, mmaN);
  Value column = im.mul(im.rem(p, mmaN), repN);
  return im.add(groupStart, im.add(column, tile));
}

Value GemmKernelBuilder::applyGlobalScale(Value t) {
  // [GEMM1]: f32(g · T), g = S_dec,a · S_dec,b computed once on the host.
  if (!globalScale)
    return t;
  Value g = globalScale;
  if (auto vector = dyn_cast<VectorType>(t.getType()))
    g = vector::BroadcastOp::create(b, loc, vector, g);
  return arith::MulFOp::create(b, loc, g, t);
}

void GemmKernelBuilder::storeBF16Pair(Value row, Value col, Value rowInBounds,
                                      Value t0, Value t1) {
  Type f32 = b.getF32Type(), bf16 = b.getBF16Type();
  if (n % 2 == 0) {
    // col is even, so with N even the pair is wholly in or out of range and
    // its element offset is even: the f32 pair is 8-byte aligned, the bf16
    // pair one aligned 32-bit word (the buffers are 64-byte aligned).
    Value inBounds =
        im.both(rowInBounds, n % bt.tileRows ? im.lt(col, n) : Value());
    buildIf(inBounds, [&]() {
      auto pairType = VectorType::get({2}, f32);
      Value old = loadKernelBuffer(b, loc, acc, ValueRange{batch, row, col},
                                   /*count=*/2, /*alignment=*/8);
      Value t = applyGlobalScale(
          vector::FromElementsOp::create(b, loc, pairType, ValueRange{t0, t1}));
      // [GEMM1]: C = acc + g · T, then arith.truncf's RNE.
      Value sum = arith::AddFOp::create(b, loc, old, t);
      Value packed =
          arith::TruncFOp::create(b, loc, VectorType::get({2}, bf16), sum);
      vector::StoreOp::create(b, loc, packed, result,
                              ValueRange{batch, row, col},
                              /*nontemporal=*/false, llvm::Align(4));
    });
    return;
  }
  // Odd N: rows start at odd offsets, so no 32-bit store; one guarded bf16
  // store per element.
  Value pair[2] = {t0, t1};
  for (int64_t e = 0; e < 2; ++e) {
    Value c = im.add(col, e), t = pair[e];
    buildIf(im.both(rowInBounds, im.lt(c, n)), [&]() {
      Value old = loadKernelBuffer(b, loc, acc, ValueRange{batch, row, c});
      Value sum = arith::AddFOp::create(b, loc, old, applyGlobalScale(t));
      Value rounded = arith::TruncFOp::create(b, loc, bf16, sum);
      memref::StoreOp::create(b, loc, rounded, result,
                              ValueRange{batch, row, c});
    });
  }
}

void GemmKernelBuilder::epilogue(ValueRange accs) {
  GemmTiling tiling = mma.getTiling();
  int64_t repM = tiling.repM, repN = tiling.repN;
  Value subgroupM = im.div(subgroup, tiling.subgroupsN);
  Value subgroupN = im.rem(subgroup, tiling.subgroupsN);
  int64_t mmaM = mma.getM(), mmaN = mma.getN();
  int64_t length = mma.getAccumulatorLength();
  Value rowGroup = im.add(a.rowBase, im.mul(subgroupM, repM * mmaM));
  Value colGroup = im.add(bt.rowBase, im.mul(subgroupN, repN * mmaN));
  auto extract = [&](int64_t i, int64_t j, int64_t v) -> Value {
    return vector::ExtractOp::create(b, loc, accs[i * repN + j], v);
  };
  if (bf16Result && mma.hasAdjacentColumnPairs()) {
    // Values 2p and 2p + 1 of a lane are columns c and c + 1 of one row.
    for (int64_t i = 0; i < repM; ++i)
      for (int64_t j = 0; j < repN; ++j)
        for (int64_t v = 0; v < length; v += 2) {
          auto [r, c] = mma.getAccumulatorPosition(b, loc, lane, v);
          Value row = im.add(rowGroup, im.add(r, i * mmaM));
          Value col = im.add(colGroup, im.add(c, j * mmaN));
          Value rowInBounds = m % a.tileRows ? im.lt(row, m) : Value();
          storeBF16Pair(row, col, rowInBounds, extract(i, j, v),
                        extract(i, j, v + 1));
        }
    return;
  }
  if (bf16Result) {
    // bRowOfStagedRow put column repN * c + j of the subgroup's group in
    // lane column c of tile j: tiles j and j + 1 hold a pair of adjacent
    // columns.
    for (int64_t i = 0; i < repM; ++i)
      for (int64_t v = 0; v < length; ++v) {
        auto [r, c] = mma.getAccumulatorPosition(b, loc, lane, v);
        Value row = im.add(rowGroup, im.add(r, i * mmaM));
        Value rowInBounds = m % a.tileRows ? im.lt(row, m) : Value();
        for (int64_t j = 0; j < repN; j += 2) {
          Value col = im.add(colGroup, im.add(im.mul(c, repN), j));
          storeBF16Pair(row, col, rowInBounds, extract(i, j, v),
                        extract(i, j + 1, v));
        }
      }
    return;
  }
  for (int64_t i = 0; i < repM; ++i)
    for (int64_t j = 0; j < repN; ++j)
      for (int64_t v = 0; v < length; ++v) {
        auto [r, c] = mma.getAccumulatorPosition(b, loc, lane, v);
        Value row = im.add(rowGroup, im.add(r, i * mmaM));
        Value col = im.add(colGroup, im.add(c, j * mmaN));
        Value t = extract(i, j, v);
        Value inBounds;
        if (m % a.tileRows)
          inBounds = im.lt(row, m);
        if (n % bt.tileRows)
          inBounds = im.both(inBounds, im.lt(col, n));
        buildIf(inBounds, [&]() {
          // [GEMM1]: C = acc + g · T.
          Value old =
              loadKernelBuffer(b, loc, acc, ValueRange{batch, row, col});
          Value sum = arith::AddFOp::create(b, loc, old, applyGlobalScale(t));
          memref::StoreOp::create(b, loc, sum, result,
                                  ValueRange{batch, row, col});
        });
      }
}

void GemmKernelBuilder::build(gpu::LaunchOp launch) {
  assert((!fold || foldReferences) &&
         "a scale fold takes the operands buildStagedOperand wrote");
  assert((!copiesTiles() || (tileMaps[0] && tileMaps[1])) &&
         "copied tiles need the operands' maps");
  const TargetInfoBase &target = mma.getTarget();
  GemmTiling tiling = mma.getTiling();
  // The staging buffer: the workgroup attribution, or the launch's dynamic
  // shared memory where it is too large to be static.
  tiles.memory = launch.getWorkgroupAttributions().empty()
                     ? buildDynamicSharedBytes(b, loc)
                     : Value(launch.getWorkgroupAttributions().front());
  // The 1024-byte aligned start of swizzled tiles: the allocation has the
  // slack.
  if (tiles.swizzled)
    tiles.pad = buildAlignmentPad(b, loc, tiles.memory, kSwizzleSpan);
  tid = launch.getThreadIds().x;
  if (mma.getSubgroupThreads() == target.getSubgroupSize()) {
    lane = target.getLaneId(b, loc, tid);
    subgroup = target.getSubgroupId(b, loc, tid);
  } else {
    lane = im.rem(tid, mma.getSubgroupThreads());
    subgroup = im.div(tid, mma.getSubgroupThreads());
  }
  batch = launch.getBlockIds().z;
  // [RAS1] Output tiles in bands of row tiles, so that the workgroups
  // resident at once share their A and B tiles through the cache.
  auto [rowTile, colTile] =
      getGroupedTile(b, loc, launch.getBlockIds().x, launch.getBlockIds().y,
                     llvm::divideCeil(n, bt.tileRows),
                     llvm::divideCeil(m, a.tileRows), kGemmRasterRows);
  this->colTile = colTile;
  a.rowBase = im.mul(rowTile, a.tileRows);
  bt.rowBase = im.mul(colTile, bt.tileRows);
  Value rowA =
      im.mul(im.div(subgroup, tiling.subgroupsN), tiling.repM * mma.getM());
  Value rowB =
      im.mul(im.rem(subgroup, tiling.subgroupsN), tiling.repN * mma.getN());

  auto accType = VectorType::get({mma.getAccumulatorLength()}, b.getF32Type());
  Value zero = arith::ConstantOp::create(
      b, loc, DenseElementsAttr::get(accType, b.getF32FloatAttr(0.0f)));
  SmallVector<Value> accs(tiling.repM * tiling.repN, zero);
  // Step t in `buffer` (t % 2); [WG5] its copied tiles are there once the
  // buffer's barrier completes phase t / 2 (mod 2).
  auto compute = [&](Value t, int64_t buffer, ValueRange in) {
    if (copiesTiles()) {
      Value parity = arith::AndIOp::create(
          b, loc,
          arith::IndexCastUIOp::create(b, loc, b.getI32Type(), im.div(t, 2)),
          arith::ConstantIntOp::create(b, loc, b.getI32Type(), 1));
      mma.buildTileWait(b, loc, tiles.memory,
                        getTileBarrierOffset(im.c(buffer)), parity);
    }
    SmallVector<Value> out(in);
    mma.buildStepMMAs(b, loc, tiles, im.c(buffer), lane, rowA, rowB, out);
    return out;
  };

  // Prologue: K step 0 staged in buffer 0 ([WG5]: thread 0 initializes the
  // copy barriers and issues step 0's copies; the barrier below publishes
  // the initialization before any thread waits).
  int64_t kSteps = llvm::divideCeil(k, kGemmTileK);
  if (copiesTiles()) {
    assert(!permutesColumns() && "copied tiles keep the global row order");
    buildIf(im.lt(tid, 1), [&]() {
      for (int64_t buffer = 0; buffer < 2; ++buffer)
        mma.buildTileBarrierInit(b, loc, tiles.memory,
                                 getTileBarrierOffset(im.c(buffer)));
    });
    copyTiles(im.c(0), im.c(0));
  }
  storeTile(im.c(0), loadTile(im.c(0)));
  mma.buildStagingFence(b, loc);
  target.buildBarrier(b, loc);

  // Steps 0 .. kSteps - 2: prefetch step t + 1, compute step t (in buffer
  // t % 2), stage t + 1 in the other buffer. The loop runs two steps per
  // iteration, buffer 0 then buffer 1, so every shared-memory offset is a
  // constant (an immediate of the load) instead of one computed from the
  // step's parity ([KLOOP1], docs/amdgpu.md); an odd step out and the last
  // step are peeled, so the loop needs no bounds check on the prefetch.
  // [WG5] Step t + 1's copies go to the other buffer at once: the barrier
  // that ended step t - 1 saw every read of it done.
  auto step = [&](Value t, int64_t buffer, ValueRange in) {
    if (copiesTiles())
      copyTiles(im.add(t, 1), im.c(1 - buffer));
    Prefetch next = loadTile(im.add(t, 1));
    SmallVector<Value> out = compute(t, buffer, in);
    storeTile(im.c(1 - buffer), next);
    mma.buildStagingFence(b, loc);
    target.buildBarrier(b, loc);
    return out;
  };
  int64_t pairs = (kSteps - 1) / 2;
  SmallVector<Value> done = accs;
  if (pairs > 0) {
    auto loop =
        scf::ForOp::create(b, loc, im.c(0), im.c(2 * pairs), im.c(2), accs);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(loop.getBody());
    Value t = loop.getInductionVar();
    SmallVector<Value> even = step(t, 0, loop.getRegionIterArgs());
    scf::YieldOp::create(b, loc, step(im.add(t, 1), 1, even));
    done = loop.getResults();
  }
  if ((kSteps - 1) % 2)
    done = step(im.c(kSteps - 2), 0, done);
  epilogue(compute(im.c(kSteps - 1), (kSteps - 1) % 2, done));
}

void GemmKernelBuilder::copyTiles(Value kStep, Value buffer) {
  buildIf(im.lt(tid, 1), [&]() {
    Type i32 = b.getI32Type();
    auto toI32 = [&](Value index) {
      return arith::IndexCastUIOp::create(b, loc, i32, index).getResult();
    };
    SmallVector<TileCopy, 2> copies;
    int64_t bytes = 0;
    for (unsigned operand = 0; operand < 2; ++operand) {
      // The operand's staged type is 8-bit: a step is one 128-byte row.
      copies.push_back(
          {tileMaps[operand], toI32(im.mul(kStep, kGemmTileK)),
           toI32(getOperand(operand).rowBase), toI32(batch),
           tiles.getCodesOffset(b, loc, operand, buffer, im.c(0), im.c(0))});
      bytes += tiles.tileRows[operand] * tiles.getRowCodeBytes(operand);
    }
    mma.buildTileCopies(b, loc, tiles.memory, getTileBarrierOffset(buffer),
                        bytes, copies);
  });
}

/// True for an arith.truncf from f32 to bf16 that rounds to nearest even
/// (no rounding mode, or to_nearest_even).
static bool isRNETruncToBF16(arith::TruncFOp trunc) {
  std::optional<arith::RoundingMode> mode = trunc.getRoundingmode();
  return isa<Float32Type>(getElementTypeOrSelf(trunc.getIn().getType())) &&
         isa<BFloat16Type>(getElementTypeOrSelf(trunc.getType())) &&
         (!mode || *mode == arith::RoundingMode::to_nearest_even);
}

/// The op the bf16 epilogue replaces: the only use of the f32 `result`,
/// when it is an elementwise f32 -> bf16 RNE truncation of the whole
/// tensor, either `arith.truncf` on the tensor (what
/// fp4train-quantize-matmuls emits after the GEMM of a bf16 contraction) or
/// a linalg op with one input, one init, identity maps, parallel loops and a
/// body that is only that truncf of the input (linalg.generic, linalg.map,
/// linalg.copy to a bf16 init). Null otherwise.
static Operation *getFusedBF16Truncation(Value result) {
  if (!result.hasOneUse())
    return nullptr;
  Operation *user = *result.getUsers().begin();
  if (auto trunc = dyn_cast<arith::TruncFOp>(user))
    return isRNETruncToBF16(trunc) ? user : nullptr;

  auto linalgOp = dyn_cast<linalg::LinalgOp>(user);
  if (!linalgOp || !linalgOp.hasPureTensorSemantics() ||
      linalgOp.getNumDpsInputs() != 1 || linalgOp.getNumDpsInits() != 1 ||
      linalgOp->getNumResults() != 1 ||
      linalgOp.getNumParallelLoops() != linalgOp.getNumLoops())
    return nullptr;
  // The use is the input (not the init), and the result is the whole tensor
  // in bf16.
  OpOperand *input = linalgOp.getDpsInputOperand(0);
  auto type = cast<RankedTensorType>(result.getType());
  if (input->get() != result ||
      linalgOp->getResult(0).getType() !=
          type.clone(BFloat16Type::get(type.getContext())) ||
      !llvm::all_of(linalgOp.getIndexingMapsArray(),
                    [](AffineMap map) { return map.isIdentity(); }))
    return nullptr;
  Block *body = linalgOp.getBlock();
  if (!body || !llvm::hasNItems(body->getOperations(), 2))
    return nullptr;
  auto trunc = dyn_cast<arith::TruncFOp>(body->front());
  Operation *yield = body->getTerminator();
  if (!trunc || !isRNETruncToBF16(trunc) ||
      trunc.getIn() != linalgOp.getMatchingBlockArgument(input) ||
      yield->getNumOperands() != 1 || yield->getOperand(0) != trunc.getResult())
    return nullptr;
  return user;
}

namespace {
/// The launch grid of a GEMM kernel.
struct GemmGrid {
  int64_t x, y, z;
};
} // namespace

/// The launch grid of `op`'s kernel with tileM x tileN workgroup tiles.
static GemmGrid getGemmGrid(ScaledMatmulOp op, int64_t tileM, int64_t tileN) {
  ArrayRef<int64_t> shape = op.getAcc().getType().getShape();
  int64_t m = shape[shape.size() - 2], n = shape.back();
  int64_t batch = 1;
  for (int64_t d : shape.drop_back(2))
    batch *= d;
  return {(n + tileN - 1) / tileN, (m + tileM - 1) / tileM, batch};
}

static int64_t getTileM(const BlockScaledMMATargetInfo &mma) {
  GemmTiling tiling = mma.getTiling();
  return tiling.subgroupsM * tiling.repM * mma.getM();
}

static int64_t getTileN(const BlockScaledMMATargetInfo &mma) {
  GemmTiling tiling = mma.getTiling();
  return tiling.subgroupsN * tiling.repN * mma.getN();
}

/// Emits an error on `op` naming `chip` when a kernel with tileM x tileN
/// tiles needs more workgroups than a launch can take: 2^31 - 1 in x, 65535
/// in y and z (HIP and CUDA alike).
static LogicalResult checkGemmGrid(ScaledMatmulOp op, int64_t tileM,
                                   int64_t tileN, StringRef chip) {
  GemmGrid grid = getGemmGrid(op, tileM, tileN);
  constexpr int64_t kMaxX = INT32_MAX, kMaxYZ = 65535;
  if (grid.x <= kMaxX && grid.y <= kMaxYZ && grid.z <= kMaxYZ)
    return success();
  return op.emitOpError("needs a grid of ")
         << grid.x << " x " << grid.y << " x " << grid.z
         << " workgroups (N, M and batch tiles) on " << chip
         << ", past the launch limits (2^31 - 1 in x, 65535 in y and z)";
}

/// The skeleton's kernel builder for `op` that builds nothing: what the
/// shared memory and the scale fold depend on (the operand types).
static GemmKernelBuilder getProbe(OpBuilder &b, ScaledMatmulOp op,
                                  const BlockScaledMMATargetInfo &mma,
                                  GlobalOperand &a, GlobalOperand &bt) {
  a.tileRows = getTileM(mma);
  bt.tileRows = getTileN(mma);
  return GemmKernelBuilder(b, op.getLoc(), mma, a, bt, op.getLhs().getType(),
                           op.getRhs().getType(), 0, Value(), Value(), Value(),
                           0, 0, /*bf16Result=*/false);
}

LogicalResult mlir::fp4train::checkScaledMatmulKernelGrid(
    ScaledMatmulOp op, const BlockScaledMMATargetInfo &mma) {
  if (failed(checkGemmGrid(op, getTileM(mma), getTileN(mma),
                           mma.getTarget().getChip())))
    return failure();
  // [WG4] The staging kernels take a K step per workgroup in y.
  OpBuilder b(op);
  GlobalOperand a, bt;
  int64_t k = op.getLhs().getType().getShape().back();
  int64_t steps = llvm::divideCeil(k, kGemmTileK);
  if (!getProbe(b, op, mma, a, bt).foldsScales() || steps <= 65535)
    return success();
  return op.emitOpError("needs ")
         << steps << " K steps of " << kGemmTileK
         << " in the grid of the kernels that stage its operands on "
         << mma.getTarget().getChip() << ", past the launch limit (65535 in y)";
}

LogicalResult mlir::fp4train::lowerScaledMatmulToLaunch(
    ScaledMatmulOp op, ValueRange lhs, ValueRange rhs, Value accTensor,
    const GemmLaunchConfig &config,
    function_ref<void(OpBuilder &, gpu::LaunchOp, const GemmProblem &)>
        buildBody,
    ConversionPatternRewriter &rewriter,
    function_ref<void(OpBuilder &, GemmProblem &)> prepare) {
  Location loc = op.getLoc();
  auto accType = cast<RankedTensorType>(op.getAcc().getType());
  ArrayRef<int64_t> shape = accType.getShape();
  int64_t rank = accType.getRank();
  GemmProblem problem;
  problem.lhsType = op.getLhs().getType();
  problem.rhsType = op.getRhs().getType();
  problem.m = shape[rank - 2];
  problem.n = shape[rank - 1];
  problem.k = problem.lhsType.getShape().back();
  int64_t batch = 1;
  for (int64_t d : shape.drop_back(2))
    batch *= d;
  problem.batch = batch;

  auto operand = [&](ValueRange parts, ScaledTensorType type, int64_t rows) {
    GemmGlobalOperand op;
    op.codes =
        toKernelBuffer(rewriter, loc, collapseTo3D(rewriter, loc, parts[0]));
    op.scales =
        toKernelBuffer(rewriter, loc, collapseTo3D(rewriter, loc, parts[1]));
    op.rows = rows;
    ArrayRef<int64_t> block = type.getBlockShape();
    op.blockRows = block[block.size() - 2];
    return op;
  };
  problem.a = operand(lhs, problem.lhsType, problem.m);
  problem.bt = operand(rhs, problem.rhsType, problem.n);
  // g = S_dec,a · S_dec,b, in the expansion's order, or the op's alpha
  // ([TE2]): an f32 the type conversion leaves as it is.
  if (Value alpha = op.getAlpha()) {
    problem.globalScale = alpha;
  } else {
    if (lhs.size() == 3)
      problem.globalScale = lhs[2];
    if (rhs.size() == 3)
      problem.globalScale =
          problem.globalScale ? arith::MulFOp::create(
                                    rewriter, loc, problem.globalScale, rhs[2])
                                    .getResult()
                              : rhs[2];
  }

  problem.acc =
      toKernelBuffer(rewriter, loc, collapseTo3D(rewriter, loc, accTensor));
  // The bf16 epilogue takes over a truncation that is the result's only use.
  Operation *truncation = getFusedBF16Truncation(op.getResult());
  Type resultElement =
      truncation ? rewriter.getBF16Type() : rewriter.getF32Type();
  auto resultType =
      MemRefType::get({batch, problem.m, problem.n}, resultElement);
  problem.result = allocKernelBuffer(rewriter, loc, resultType);
  if (prepare)
    prepare(rewriter, problem);

  IndexMath im{rewriter, loc};
  SmallVector<Type> workgroup;
  if (config.staticSharedBytes)
    workgroup.push_back(MemRefType::get(
        {config.staticSharedBytes}, rewriter.getI8Type(), AffineMap(),
        gpu::AddressSpaceAttr::get(rewriter.getContext(),
                                   gpu::AddressSpace::Workgroup)));
  Value dynamicShared;
  if (config.dynamicSharedBytes)
    dynamicShared = arith::ConstantIntOp::create(
        rewriter, loc, rewriter.getI32Type(), config.dynamicSharedBytes);
  GemmGrid grid = getGemmGrid(op, config.tileM, config.tileN);
  if (config.persistentWorkgroups) {
    // A whole number of clusters, at least one.
    const int64_t cluster = config.clusterX;
    grid = {std::max(cluster, std::min(grid.x * grid.y * grid.z * cluster,
                                       config.persistentWorkgroups) /
                                  cluster * cluster),
            1, 1};
  }
  Value clusterX, clusterY, clusterZ;
  if (config.clusterX > 1) {
    clusterX = im.c(config.clusterX);
    clusterY = clusterZ = im.c(1);
  }
  auto launch = gpu::LaunchOp::create(
      rewriter, loc, im.c(grid.x), im.c(grid.y), im.c(grid.z),
      im.c(config.threads), im.c(1), im.c(1), dynamicShared,
      /*asyncTokenType=*/nullptr, /*asyncDependencies=*/{},
      /*workgroupAttributions=*/workgroup, /*privateAttributions=*/{}, clusterX,
      clusterY, clusterZ);
  // gpu::LaunchOp's builder gives the body the 12 block arguments of a
  // launch without clusters; one with clusters has 6 more (cluster ids and
  // sizes) before the attributions, which its verifier indexes by.
  Block &body = launch.getBody().front();
  for (unsigned i = body.getNumArguments() - workgroup.size();
       i < launch.getNumConfigRegionAttributes(); ++i)
    body.insertArgument(i, rewriter.getIndexType(), loc);
  {
    OpBuilder::InsertionGuard guard(rewriter);
    rewriter.setInsertionPointToStart(&launch.getBody().front());
    buildBody(rewriter, launch, problem);
    gpu::TerminatorOp::create(rewriter, loc);
  }

  Value shaped = expandFrom3D(rewriter, loc,
                              fromKernelBuffer(rewriter, loc, problem.result),
                              accType.clone(resultElement));
  if (!truncation) {
    rewriter.replaceOp(op, shaped);
    return success();
  }
  // The kernel sits where the op was, before the truncation's users.
  rewriter.replaceOp(truncation, shaped);
  rewriter.eraseOp(op);
  return success();
}

LogicalResult mlir::fp4train::lowerScaledMatmulToKernel(
    ScaledMatmulOp op, ValueRange lhs, ValueRange rhs, Value accTensor,
    const BlockScaledMMATargetInfo &mma, ConversionPatternRewriter &rewriter) {
  int64_t tileM = getTileM(mma), tileN = getTileN(mma);
  auto globalOperand = [](const GemmGlobalOperand &in, int64_t tileRows) {
    GlobalOperand op;
    op.codes = in.codes;
    op.scales = in.scales;
    op.rows = in.rows;
    op.tileRows = tileRows;
    op.blockRows = in.blockRows;
    return op;
  };
  // The skeleton's shared memory size depends only on the operand types.
  GlobalOperand probeA, probeB;
  GemmKernelBuilder probe = getProbe(rewriter, op, mma, probeA, probeB);
  GemmLaunchConfig config;
  config.tileM = tileM;
  config.tileN = tileN;
  config.threads = probe.getThreads();
  // Past the chip's static limit (CUDA: 48 KiB, reached with an FP8
  // operand's staging) the buffer is the launch's dynamic shared memory.
  int64_t sharedBytes = probe.getSharedBytes();
  if (sharedBytes > mma.getTarget().getMaxStaticSharedBytes())
    config.dynamicSharedBytes = sharedBytes;
  else
    config.staticSharedBytes = sharedBytes;
  // [WG4] With a scale fold, A and B^T are written in their staged types
  // first, B^T folded per tile of tileN rows.
  auto prepare = [&](OpBuilder &b, GemmProblem &problem) {
    const int64_t blockSize = problem.lhsType.getBlockShape().back();
    if (probe.foldsScales()) {
      Value none;
      problem.a = buildStagedOperand(
          b, op.getLoc(), mma, problem.a, problem.lhsType.getElementType(),
          blockSize, problem.k, problem.batch, tileM, nullptr, none);
      problem.bt = buildStagedOperand(
          b, op.getLoc(), mma, problem.bt, problem.rhsType.getElementType(),
          blockSize, problem.k, problem.batch, tileN, probe.getScaleFold(),
          problem.foldReferences);
    }
    // [WG5] The operands' maps, where the target copies the staged tiles.
    if (probe.copiesTiles()) {
      problem.tileMaps[0] =
          mma.buildTileMap(b, op.getLoc(), problem.a.codes, tileM);
      problem.tileMaps[1] =
          mma.buildTileMap(b, op.getLoc(), problem.bt.codes, tileN);
    }
  };
  return lowerScaledMatmulToLaunch(
      op, lhs, rhs, accTensor, config,
      [&](OpBuilder &b, gpu::LaunchOp launch, const GemmProblem &problem) {
        GlobalOperand a = globalOperand(problem.a, tileM);
        GlobalOperand bt = globalOperand(problem.bt, tileN);
        GemmKernelBuilder builder(b, op.getLoc(), mma, a, bt, problem.lhsType,
                                  problem.rhsType, problem.k, problem.acc,
                                  problem.globalScale, problem.result,
                                  problem.m, problem.n, problem.isBF16Result(),
                                  problem.foldReferences, problem.tileMaps);
        builder.build(launch);
      },
      rewriter,
      probe.foldsScales() || probe.copiesTiles()
          ? function_ref<void(OpBuilder &, GemmProblem &)>(prepare)
          : nullptr);
}
