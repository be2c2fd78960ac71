//===- StagedOperandKernel.cpp - GEMM operands written in the staged type -===//
//
// [WG4] (docs/nvvm.md) A GEMM whose target folds B^T's block scales into its
// staged codes (ScaleFold, [WG2]) takes its operands already converted: one
// kernel per operand reads the stored E2M1 codes once and writes them in the
// staged type (E4M3, one byte per code), B^T's folded, with one reference
// scale code per tile of B^T rows and block. The GEMM then stages both
// operands as they are (16-byte copies) and reads the references instead
// of reducing the scale codes in every workgroup: the conversion runs once
// per operand instead of once per output tile that reads it.
//
// A workgroup takes one tile of rows (the GEMM's tile: one thread per row)
// and one K step of kGemmTileK codes (one chunk of one block per thread and
// block, 16 bytes of E2M1 codes contiguous in the row). With a fold, each
// block's reference is the workgroup's reduction of its rows' (e, 255 - e)
// pairs, exactly as [WG2] states it: shuffles within a warp, then one word
// per warp and block in shared memory, one barrier.
//
//===----------------------------------------------------------------------===//

#include "fp4train/Conversion/FP4TrainGPUCommon/GemmKernel.h"

#include "fp4train/Conversion/FP4TrainCommon/TypeConversion.h"
#include "fp4train/Conversion/FP4TrainGPUCommon/Buffers.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mlir::fp4train;

namespace {

/// Builds the body of one operand's conversion kernel.
class StagedOperandBuilder {
public:
  StagedOperandBuilder(OpBuilder &b, Location loc,
                       const BlockScaledMMATargetInfo &mma,
                       const GemmGlobalOperand &in, Type element,
                       int64_t blockSize, int64_t k, int64_t tileRows,
                       const ScaleFold *fold, Value staged, Value references)
      : b(b), loc(loc), im{b, loc}, mma(mma), in(in), element(element),
        blockSize(blockSize), k(k), tileRows(tileRows), fold(fold),
        staged(staged), references(references) {}

  void build(gpu::LaunchOp launch);

private:
  Value c32(int64_t v) {
    return arith::ConstantIntOp::create(b, loc, b.getI32Type(), v);
  }
  /// The pair words of two reductions combined: (code, 255 - code) in the
  /// two halves, so one unsigned maximum of the halves gives the largest
  /// and the least code at once.
  Value combine(Value x, Value y);
  /// The fold's reference per block (i32; 0xFF where the block is not
  /// folded) and each thread's table row, from this thread's chunks and
  /// scale codes: the workgroup reduction.
  void reduceFold(ArrayRef<Value> chunks, ArrayRef<Value> codes,
                  SmallVectorImpl<Value> &tables);

  OpBuilder &b;
  Location loc;
  IndexMath im;
  const BlockScaledMMATargetInfo &mma;
  GemmGlobalOperand in;
  Type element;
  int64_t blockSize, k, tileRows;
  const ScaleFold *fold;
  Value staged, references;
  // Set by build().
  Value tid, step, group, batch, shared;
};

} // namespace

Value StagedOperandBuilder::combine(Value x, Value y) {
  auto word = VectorType::get({1}, b.getI32Type());
  auto halves = [&](Value v) {
    return vector::BitCastOp::create(
        b, loc, VectorType::get({2}, b.getI16Type()),
        vector::BroadcastOp::create(b, loc, word, v));
  };
  Value m = arith::MaxUIOp::create(b, loc, halves(x), halves(y));
  return vector::ExtractOp::create(
             b, loc, vector::BitCastOp::create(b, loc, word, m), 0)
      .getResult();
}

void StagedOperandBuilder::reduceFold(ArrayRef<Value> chunks,
                                      ArrayRef<Value> codes,
                                      SmallVectorImpl<Value> &tables) {
  const TargetInfoBase &target = mma.getTarget();
  const int64_t blocks = int64_t(chunks.size());
  const int64_t lanes = target.getSubgroupSize();
  const int64_t subgroups = tileRows / lanes;
  const int64_t tableWords = int64_t(fold->tables.size());
  auto at = [&](Value index) {
    return memref::LoadOp::create(b, loc, shared, index).getResult();
  };
  auto cmp = [&](arith::CmpIPredicate predicate, Value x, Value y) {
    return arith::CmpIOp::create(b, loc, predicate, x, y).getResult();
  };
  auto both = [&](Value x, Value y) {
    return arith::AndIOp::create(b, loc, x, y).getResult();
  };
  using P = arith::CmpIPredicate;

  // Shared words: [tables | subgroups x blocks partial results]. Thread 0
  // stores the tables, read after the barrier below.
  buildIf(b, loc, im.lt(tid, 1), [&]() {
    SmallVector<int32_t> words(fold->tables.begin(), fold->tables.end());
    Value tables = arith::ConstantOp::create(
        b, loc,
        DenseElementsAttr::get(VectorType::get({tableWords}, b.getI32Type()),
                               ArrayRef<int32_t>(words)));
    vector::StoreOp::create(b, loc, tables, shared, im.c(0));
  });
  // A chunk with a nonzero code contributes its scale code (a chunk of
  // zeros takes any scale); lanes combine theirs, lane 0 publishes its
  // subgroup's.
  Value lane = target.getLaneId(b, loc, tid);
  Value subgroup = target.getSubgroupId(b, loc, tid);
  SmallVector<Value> mine;
  for (auto [chunk, code] : llvm::zip(chunks, codes)) {
    int64_t words = cast<VectorType>(chunk.getType()).getNumElements() / 4;
    Value any = vector::ReductionOp::create(
        b, loc, vector::CombiningKind::OR,
        vector::BitCastOp::create(
            b, loc, VectorType::get({words}, b.getI32Type()), chunk));
    Value pair = arith::OrIOp::create(
        b, loc, code,
        arith::ShLIOp::create(
            b, loc, arith::SubIOp::create(b, loc, c32(255), code), c32(16)));
    Value word =
        arith::SelectOp::create(b, loc, cmp(P::ne, any, c32(0)), pair, c32(0));
    for (int64_t mask = 1; mask < lanes; mask *= 2)
      word = combine(word, target.buildShuffleXor(b, loc, word, mask));
    mine.push_back(word);
  }
  buildIf(b, loc, im.lt(lane, 1), [&]() {
    for (int64_t j = 0; j < blocks; ++j)
      memref::StoreOp::create(b, loc, mine[j], shared,
                              im.add(im.mul(subgroup, blocks), tableWords + j));
  });
  target.buildBarrier(b, loc);

  // Per block: the reference r (largest code) and least code over the
  // tile, whether the block folds, and the published reference.
  SmallVector<Value> published;
  for (int64_t j = 0; j < blocks; ++j) {
    Value all = c32(0);
    for (int64_t s = 0; s < subgroups; ++s)
      all = combine(all, at(im.c(tableWords + s * blocks + j)));
    Value reference = arith::AndIOp::create(b, loc, all, c32(0xFFFF));
    Value least = arith::SubIOp::create(
        b, loc, c32(255), arith::ShRUIOp::create(b, loc, all, c32(16)));
    Value folds = both(
        both(cmp(P::ne, all, c32(0)), cmp(P::ule, reference, c32(fold->hi))),
        both(cmp(P::uge, least, c32(fold->lo)),
             cmp(P::ule, arith::SubIOp::create(b, loc, reference, least),
                 c32(fold->maxDistance))));
    published.push_back(
        arith::SelectOp::create(b, loc, folds, reference, c32(0xFF)));
    // This row's table: distance r - e (0 unfolded; a chunk of zeros,
    // whose e may lie anywhere, clamped to a table).
    Value distance = arith::SelectOp::create(
        b, loc, folds,
        arith::MinUIOp::create(
            b, loc, arith::SubIOp::create(b, loc, reference, codes[j]),
            c32(fold->maxDistance)),
        c32(0));
    Value first =
        im.mul(arith::IndexCastUIOp::create(b, loc, b.getIndexType(), distance),
               fold->wordsPerDistance);
    for (int64_t w = 0; w < fold->wordsPerDistance; ++w)
      tables.push_back(at(im.add(first, w)));
  }
  // Thread 0 writes the step's references (the buffer holds whole steps:
  // blocks past K are zero codes everywhere, published unfolded).
  buildIf(b, loc, im.lt(tid, 1), [&]() {
    for (auto [j, reference] : llvm::enumerate(published))
      memref::StoreOp::create(
          b, loc, arith::TruncIOp::create(b, loc, b.getI8Type(), reference),
          references,
          ValueRange{batch, group, im.add(im.mul(step, blocks), int64_t(j))});
  });
}

void StagedOperandBuilder::build(gpu::LaunchOp launch) {
  tid = launch.getThreadIds().x;
  group = launch.getBlockIds().x;
  step = launch.getBlockIds().y;
  batch = launch.getBlockIds().z;
  if (!launch.getWorkgroupAttributions().empty())
    shared = launch.getWorkgroupAttributions().front();
  const int64_t blocks = kGemmTileK / blockSize;
  const int64_t kBlocks = k / blockSize;
  // A chunk is one block's stored codes.
  const int64_t chunkBytes =
      isPackedStorage(element) ? blockSize / 2 : blockSize;
  const int64_t stagedBytes =
      blockSize *
      StagedTiles::getStagedElementBits(mma.getStagedElementType(element)) / 8;

  Value row = im.add(im.mul(group, tileRows), tid);
  Value rowInBounds = in.rows % tileRows ? im.lt(row, in.rows) : Value();
  SmallVector<Value> inBounds, chunks, codes;
  Value scales = loadScaleCodes(b, loc, in, batch, row, rowInBounds,
                                im.mul(step, blocks), blocks, kBlocks);
  for (int64_t j = 0; j < blocks; ++j) {
    Value block = im.add(im.mul(step, blocks), j);
    Value blockInBounds = kBlocks % blocks ? im.lt(block, kBlocks) : Value();
    inBounds.push_back(im.both(rowInBounds, blockInBounds));
    chunks.push_back(loadCodeChunk(b, loc, in, batch, row,
                                   im.mul(block, chunkBytes), chunkBytes,
                                   inBounds.back()));
    codes.push_back(arith::ExtUIOp::create(
        b, loc, b.getI32Type(), vector::ExtractOp::create(b, loc, scales, j)));
  }
  SmallVector<Value> tables;
  if (fold)
    reduceFold(chunks, codes, tables);
  for (int64_t j = 0; j < blocks; ++j) {
    ValueRange table = fold ? ArrayRef(tables).slice(j * fold->wordsPerDistance,
                                                     fold->wordsPerDistance)
                            : ArrayRef<Value>();
    Value out = mma.convertStagedCodes(b, loc, element, chunks[j], table);
    Value block = im.add(im.mul(step, blocks), j);
    buildIf(b, loc, inBounds[j], [&]() {
      vector::StoreOp::create(
          b, loc, out, staged,
          ValueRange{batch, row, im.mul(block, stagedBytes)}, false,
          llvm::Align(16));
    });
  }
}

GemmGlobalOperand mlir::fp4train::buildStagedOperand(
    OpBuilder &b, Location loc, const BlockScaledMMATargetInfo &mma,
    const GemmGlobalOperand &in, Type element, int64_t blockSize, int64_t k,
    int64_t batch, int64_t tileRows, const ScaleFold *fold, Value &references) {
  IndexMath im{b, loc};
  const int64_t steps = llvm::divideCeil(k, kGemmTileK);
  const int64_t groups = llvm::divideCeil(in.rows, tileRows);
  const int64_t bits =
      StagedTiles::getStagedElementBits(mma.getStagedElementType(element));
  GemmGlobalOperand out = in;
  out.codes = allocKernelBuffer(
      b, loc, MemRefType::get({batch, in.rows, k * bits / 8}, b.getI8Type()));
  SmallVector<Type, 1> workgroup;
  if (fold) {
    references = allocKernelBuffer(
        b, loc,
        MemRefType::get({batch, groups, steps * (kGemmTileK / blockSize)},
                        b.getI8Type()));
    const int64_t words =
        int64_t(fold->tables.size()) +
        tileRows / mma.getTarget().getSubgroupSize() * (kGemmTileK / blockSize);
    workgroup.push_back(
        MemRefType::get({words}, b.getI32Type(), AffineMap(),
                        mma.getTarget().getSharedMemorySpace(b.getContext())));
  }
  auto launch = gpu::LaunchOp::create(
      b, loc, im.c(groups), im.c(steps), im.c(batch), im.c(tileRows), im.c(1),
      im.c(1), /*dynamicSharedMemorySize=*/nullptr,
      /*asyncTokenType=*/nullptr, /*asyncDependencies=*/{},
      /*workgroupAttributions=*/workgroup);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(&launch.getBody().front());
  StagedOperandBuilder(b, loc, mma, in, element, blockSize, k, tileRows, fold,
                       out.codes, references)
      .build(launch);
  gpu::TerminatorOp::create(b, loc);
  return out;
}
