//===- ScaledMatmulOpLowering.cpp - scaled_matmul to a gfx950 kernel ------===//
//
// fp4train.scaled_matmul (MX operands) becomes a gpu.launch of a tiled GEMM
// kernel on amdgpu.scaled_mfma. The op's converted tensors (i8 codes, i8 E8M0
// scale codes, f32 accumulator) cross into the kernel as buffers
// (`bufferization.to_buffer`), and the result is a fresh buffer returned as a
// tensor with `bufferization.to_tensor restrict writable`: one-shot
// bufferization then takes the module on unchanged, and gpu-kernel-outlining
// turns the launch into a gpu.module kernel.
//
// Kernel (docs/amdgpu.md has the picture):
//  - 256 threads = 4 waves in a 2x2 grid; each wave owns 2x2 MFMA tiles, so a
//    workgroup computes 128x128 (32x32x64) or 64x64 (16x16x128) of C for one
//    batch entry; the grid is (ceil(N / tileN), ceil(M / tileM), batch).
//  - K advances 128 elements (4 MX blocks) per step. Each step's A and B
//    tiles (codes and scales) are loaded from global memory by exactly one
//    thread each (16-byte vectors, coalesced along K), E2M1 codes are packed
//    two per byte on the way, and stored to LDS; two LDS buffers alternate,
//    so the global loads of step t + 1 are in flight while step t computes,
//    with one barrier per step.
//  - Each lane reads its operand fragment (one 32-element block: 16 bytes of
//    FP4 or 32 bytes of FP8) and that block's scale byte from LDS, per the
//    lane layout of BlockScaledMMATargetInfo.
//  - f32 accumulators start at zero ([GEMM1]'s T); the epilogue writes
//    acc + T. Rows and columns past M/N and K past the last block read as
//    zero codes (+0 contributes nothing), and only in-range C is written.
//  - bf16 epilogue: when the result's only use is an elementwise f32 -> bf16
//    round-to-nearest-even truncation (arith.truncf on the tensor, or a
//    linalg op with identity maps whose body is that truncf), the kernel
//    writes bf16 and replaces the truncation. B^T rows are then fetched in
//    a permuted order so that a lane's two N tiles hold adjacent columns:
//    each lane converts a pair with one truncf and stores one 32-bit word.
//
//===----------------------------------------------------------------------===//

#include "CDNA4TargetInfo.h"

#include "fp4train/Conversion/FP4TrainToAMDGPU/FP4TrainToAMDGPU.h"
#include "fp4train/Dialect/FP4Train/IR/FP4TrainOps.h"

#include "mlir/Dialect/AMDGPU/IR/AMDGPUDialect.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mlir::fp4train;

/// Elements per MX block, and per K step of the kernel (4 blocks).
static constexpr int64_t kBlock = 32;
static constexpr int64_t kTileK = 128;
static constexpr int64_t kBlocksPerTile = kTileK / kBlock;
/// Codes per global load (one 16-byte vector).
static constexpr int64_t kChunk = 16;
/// Bytes of padding after each LDS row: consecutive rows then start 4 banks
/// apart, so the lanes of one ds_read_b128 phase, which read the same K
/// offset of consecutive rows, do not all hit the same banks.
static constexpr int64_t kRowPad = 16;
static constexpr int64_t kWavesM = 2, kWavesN = 2, kRepM = 2, kRepN = 2;
// The bf16 epilogue pairs N tiles j and j + 1 of a wave.
static_assert(kRepN % 2 == 0, "the bf16 epilogue pairs N tiles");

bool mlir::fp4train::hasScaledMFMA(const amdgpu::Chipset &chipset) {
  return chipset.majorVersion == 9 && chipset >= amdgpu::Chipset(9, 5, 0);
}

ScaledMFMAKind mlir::fp4train::selectScaledMFMAKind(int64_t batch, int64_t m,
                                                    int64_t n) {
  // Compute units of an MI355X: below one 128x128 workgroup per CU, the
  // 4x finer 64x64 grid of the 16x16x128 form keeps more CUs busy and wastes
  // less on partial edge tiles.
  constexpr int64_t kComputeUnits = 256;
  int64_t tiles128 = batch * llvm::divideCeil(m, 128) * llvm::divideCeil(n, 128);
  return tiles128 >= kComputeUnits ? ScaledMFMAKind::M32N32K64
                                   : ScaledMFMAKind::M16N16K128;
}

namespace {

using MemSpace = gpu::AddressSpaceAttr;

/// Builders for index arithmetic in the kernel.
struct IndexMath {
  OpBuilder &b;
  Location loc;
  Value c(int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); }
  Value add(Value x, Value y) { return arith::AddIOp::create(b, loc, x, y); }
  Value add(Value x, int64_t y) { return y ? add(x, c(y)) : x; }
  Value mul(Value x, int64_t y) {
    return y == 1 ? x : arith::MulIOp::create(b, loc, x, c(y)).getResult();
  }
  Value div(Value x, int64_t y) {
    return arith::DivUIOp::create(b, loc, x, c(y));
  }
  Value rem(Value x, int64_t y) {
    return arith::RemUIOp::create(b, loc, x, c(y));
  }
  Value lt(Value x, int64_t y) {
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, x, c(y));
  }
  Value both(Value x, Value y) {
    if (!x)
      return y;
    if (!y)
      return x;
    return arith::AndIOp::create(b, loc, x, y);
  }
};

/// One GEMM operand (A = lhs rows x K, or B^T = rhs rows x K) as the kernel
/// stages it.
struct StagedOperand {
  Value codes;  // memref<batch x rows x K x i8>
  Value scales; // memref<batch x rows x K/32 x i8>
  Type element; // f4E2M1FN, f8E4M3FN or f8E5M2
  int64_t rows, tileRows;
  /// Row offset of this workgroup's tile, in rows.
  Value rowBase;

  bool isFP4() const { return isa<Float4E2M1FNType>(element); }
  /// LDS bytes of one fragment (a 32-element block).
  int64_t fragmentBytes() const { return isFP4() ? kBlock / 2 : kBlock; }
  int64_t ldsRowBytes() const {
    return kBlocksPerTile * fragmentBytes() + kRowPad;
  }
  int64_t ldsCodesBytes() const { return tileRows * ldsRowBytes(); }
  int64_t chunksPerThread(int64_t threads) const {
    return tileRows * (kTileK / kChunk) / threads;
  }
};

/// Values a thread carries from the global loads of one K step to its LDS
/// stores: its chunks of A and B codes and one row of scales.
struct Prefetch {
  SmallVector<Value> a, b;
  Value scales;
};

class GemmKernelBuilder {
public:
  GemmKernelBuilder(OpBuilder &b, Location loc,
                    const BlockScaledMMATargetInfo &target, StagedOperand &a,
                    StagedOperand &bt, int64_t k, Value acc, Value result,
                    int64_t m, int64_t n)
      : b(b), loc(loc), im{b, loc}, target(target), a(a), bt(bt), k(k),
        acc(acc), result(result), m(m), n(n),
        bf16Result(isa<BFloat16Type>(
            cast<MemRefType>(result.getType()).getElementType())) {
    threads = kWavesM * kWavesN * target.getSubgroupSize();
    // LDS: per buffer [A codes | B codes | A scales | B scales].
    aCodes = 0;
    bCodes = aCodes + a.ldsCodesBytes();
    aScales = bCodes + bt.ldsCodesBytes();
    bScales = aScales + a.tileRows * kBlocksPerTile;
    bufferBytes = llvm::alignTo(bScales + bt.tileRows * kBlocksPerTile, 16);
  }

  int64_t getThreads() const { return threads; }
  int64_t getLDSBytes() const { return 2 * bufferBytes; }

  /// Fills the body of `launch` (before its terminator).
  void build(gpu::LaunchOp launch);

private:
  Value ldsOffset(Value buffer, int64_t region) {
    return im.add(im.mul(buffer, bufferBytes), region);
  }
  Prefetch loadTile(Value kStep);
  void storeTile(Value buffer, const Prefetch &p);
  SmallVector<Value> compute(Value buffer, ValueRange accs);
  void epilogue(ValueRange accs);
  /// Stores RNE-bf16(acc + t0), RNE-bf16(acc + t1) at columns col, col + 1.
  void storeBF16Pair(Value row, Value col, Value rowInBounds, Value t0,
                     Value t1);
  /// The tile-local B^T row (column of C) staged in LDS row `row`: the
  /// identity, or for the bf16 epilogue the permutation that gives lane
  /// column c of N tile j the tile-local column kRepN * c + j of its wave's
  /// kRepN * MMA-N columns, so that tiles j and j + 1 hold adjacent columns.
  Value bRowOfLDSRow(Value row);

  Value loadCodeChunk(StagedOperand &op, Value chunk, Value kStep);
  Value loadScaleRow(StagedOperand &op, Value row, Value kStep);
  Value loadFragment(StagedOperand &op, Value buffer, int64_t region,
                     Value row, Value block);
  Value loadScale(Value buffer, int64_t region, Value row, Value block);

  /// `cond ? then() : else()` as an scf.if, or then() without a condition.
  Value buildIf(Value cond, function_ref<Value()> thenFn,
                function_ref<Value()> elseFn);
  /// `if (cond) then()`, or then() without a condition.
  void buildIf(Value cond, function_ref<void()> thenFn);
  Value zeros(Type type) {
    return arith::ConstantOp::create(b, loc, b.getZeroAttr(type));
  }

  OpBuilder &b;
  Location loc;
  IndexMath im;
  const BlockScaledMMATargetInfo &target;
  StagedOperand &a, &bt;
  int64_t k;
  Value acc, result;
  int64_t m, n;
  bool bf16Result;
  int64_t threads;
  int64_t aCodes, bCodes, aScales, bScales, bufferBytes;

  // Set by build().
  Value lds, tid, lane, wave, batch;
};

Value GemmKernelBuilder::buildIf(Value cond, function_ref<Value()> thenFn,
                                 function_ref<Value()> elseFn) {
  if (!cond)
    return thenFn();
  auto ifOp = scf::IfOp::create(b, loc, cond,
                                [&](OpBuilder &nested, Location) {
                                  OpBuilder::InsertionGuard inner(b);
                                  b.setInsertionPoint(nested.getInsertionBlock(),
                                                      nested.getInsertionPoint());
                                  scf::YieldOp::create(b, loc, thenFn());
                                },
                                [&](OpBuilder &nested, Location) {
                                  OpBuilder::InsertionGuard inner(b);
                                  b.setInsertionPoint(nested.getInsertionBlock(),
                                                      nested.getInsertionPoint());
                                  scf::YieldOp::create(b, loc, elseFn());
                                });
  return ifOp.getResult(0);
}

void GemmKernelBuilder::buildIf(Value cond, function_ref<void()> thenFn) {
  if (!cond)
    return thenFn();
  scf::IfOp::create(b, loc, cond, [&](OpBuilder &nested, Location) {
    OpBuilder::InsertionGuard inner(b);
    b.setInsertionPoint(nested.getInsertionBlock(), nested.getInsertionPoint());
    thenFn();
    scf::YieldOp::create(b, loc);
  });
}

Value GemmKernelBuilder::loadCodeChunk(StagedOperand &op, Value chunk,
                                       Value kStep) {
  constexpr int64_t chunksPerRow = kTileK / kChunk;
  // Chunk c is stored to LDS row c / chunksPerRow (storeTile).
  Value tileRow = im.div(chunk, chunksPerRow);
  if (&op == &bt)
    tileRow = bRowOfLDSRow(tileRow);
  Value row = im.add(op.rowBase, tileRow);
  Value col = im.add(im.mul(kStep, kTileK), im.mul(im.rem(chunk, chunksPerRow), kChunk));
  auto type = VectorType::get({kChunk}, b.getI8Type());
  // Bounds: K is a multiple of 32 and chunks are 16-aligned, so a chunk is
  // wholly inside or wholly outside; checks are emitted only for the
  // dimensions that are not tile multiples.
  Value inBounds;
  if (op.rows % op.tileRows)
    inBounds = im.lt(row, op.rows);
  if (k % kTileK)
    inBounds = im.both(inBounds, im.lt(col, k));
  return buildIf(
      inBounds,
      [&]() -> Value {
        // 16-byte alignment holds: one-shot bufferization allocates 64-byte
        // aligned buffers and rows are K bytes, a multiple of 32.
        return vector::LoadOp::create(b, loc, type, op.codes,
                                      ValueRange{batch, row, col},
                                      /*nontemporal=*/false,
                                      llvm::Align(16));
      },
      [&]() { return zeros(type); });
}

Value GemmKernelBuilder::loadScaleRow(StagedOperand &op, Value row,
                                      Value kStep) {
  auto type = VectorType::get({kBlocksPerTile}, b.getI8Type());
  Value globalRow = im.add(op.rowBase, row);
  Value firstBlock = im.mul(kStep, kBlocksPerTile);
  int64_t kBlocks = k / kBlock;
  Value rowInBounds =
      op.rows % op.tileRows ? im.lt(globalRow, op.rows) : Value();
  // Out-of-range blocks read scale code 0 (2^-127): with their zero codes
  // they contribute +0, and the scale stays finite.
  if (kBlocks % kBlocksPerTile == 0) {
    // The row's four scales are one aligned 4-byte load.
    return buildIf(
        rowInBounds,
        [&]() -> Value {
          return vector::LoadOp::create(
              b, loc, type, op.scales,
              ValueRange{batch, globalRow, firstBlock}, false,
              llvm::Align(4));
        },
        [&]() { return zeros(type); });
  }
  SmallVector<Value> bytes;
  for (int64_t i = 0; i < kBlocksPerTile; ++i) {
    Value block = im.add(firstBlock, i);
    Value cond = im.both(rowInBounds, im.lt(block, kBlocks));
    bytes.push_back(buildIf(
        cond,
        [&]() -> Value {
          return memref::LoadOp::create(b, loc, op.scales,
                                        ValueRange{batch, globalRow, block});
        },
        [&]() { return zeros(b.getI8Type()); }));
  }
  return vector::FromElementsOp::create(b, loc, type, bytes);
}

Prefetch GemmKernelBuilder::loadTile(Value kStep) {
  Prefetch p;
  for (int64_t i = 0, e = a.chunksPerThread(threads); i < e; ++i)
    p.a.push_back(loadCodeChunk(a, im.add(tid, i * threads), kStep));
  for (int64_t i = 0, e = bt.chunksPerThread(threads); i < e; ++i)
    p.b.push_back(loadCodeChunk(bt, im.add(tid, i * threads), kStep));
  // Threads [0, tileM) load one row of A scales, [tileM, tileM + tileN) one
  // row of B scales: with 128 + 128 rows that is whole waves either way.
  auto type = VectorType::get({kBlocksPerTile}, b.getI8Type());
  auto loadB = [&]() -> Value {
    // Stored to B scale row tid - tileM (storeTile).
    Value row = bRowOfLDSRow(
        arith::SubIOp::create(b, loc, tid, im.c(a.tileRows)));
    Value cond = a.tileRows + bt.tileRows == threads
                     ? Value()
                     : im.lt(tid, a.tileRows + bt.tileRows);
    return buildIf(
        cond, [&]() { return loadScaleRow(bt, row, kStep); },
        [&]() { return zeros(type); });
  };
  p.scales = buildIf(
      im.lt(tid, a.tileRows), [&]() { return loadScaleRow(a, tid, kStep); },
      loadB);
  return p;
}

/// Packs 16 E2M1 codes (one per byte, bits 3..0) into 8 bytes, element 2i in
/// the low nibble of byte i: the in-register order of a vector of f4E2M1FN.
/// Works on 32-bit words, four codes c0..c3 each: t = w | w >> 4 holds
/// c0 | c1 << 4 in byte 0 and c2 | c3 << 4 in byte 2, and bytes 0 and 2 of
/// two words make one output word (a byte permute, v_perm_b32). The codes
/// need no masking: the type conversion guarantees bits 7..4 are zero.
static Value packFP4(OpBuilder &b, Location loc, Value codes) {
  auto words = VectorType::get({kChunk / 4}, b.getI32Type());
  Value w = vector::BitCastOp::create(b, loc, words, codes);
  Value four = arith::ConstantOp::create(
      b, loc, DenseElementsAttr::get(words, b.getI32IntegerAttr(4)));
  Value t = arith::OrIOp::create(b, loc, w,
                                 arith::ShRUIOp::create(b, loc, w, four));
  // Bytes 0 and 2 of every word: one byte permute per output word.
  auto tBytes = VectorType::get({kChunk}, b.getI8Type());
  Value tb = vector::BitCastOp::create(b, loc, tBytes, t);
  SmallVector<int64_t> even;
  for (int64_t i = 0; i < kChunk / 2; ++i)
    even.push_back(2 * i);
  return vector::ShuffleOp::create(b, loc, tb, tb, even);
}

void GemmKernelBuilder::storeTile(Value buffer, const Prefetch &p) {
  auto storeCodes = [&](StagedOperand &op, int64_t region,
                        ArrayRef<Value> chunks) {
    constexpr int64_t chunksPerRow = kTileK / kChunk;
    for (auto [i, chunk] : llvm::enumerate(chunks)) {
      Value index = im.add(tid, int64_t(i) * threads);
      Value row = im.div(index, chunksPerRow);
      Value col = im.rem(index, chunksPerRow);
      Value value = chunk;
      int64_t bytes = kChunk;
      if (op.isFP4()) {
        value = packFP4(b, loc, chunk);
        bytes = kChunk / 2;
      }
      Value offset = im.add(ldsOffset(buffer, region),
                            im.add(im.mul(row, op.ldsRowBytes()),
                                   im.mul(col, bytes)));
      vector::StoreOp::create(b, loc, value, lds, offset, false,
                              llvm::Align(bytes));
    }
  };
  storeCodes(a, aCodes, p.a);
  storeCodes(bt, bCodes, p.b);
  // A scale rows then B scale rows are contiguous: thread t writes row t.
  Value cond = a.tileRows + bt.tileRows == threads
                   ? Value()
                   : im.lt(tid, a.tileRows + bt.tileRows);
  buildIf(cond, [&]() {
    Value offset = im.add(ldsOffset(buffer, aScales),
                          im.mul(tid, kBlocksPerTile));
    vector::StoreOp::create(b, loc, p.scales, lds, offset, false,
                            llvm::Align(kBlocksPerTile));
  });
}

Value GemmKernelBuilder::loadFragment(StagedOperand &op, Value buffer,
                                      int64_t region, Value row,
                                      Value block) {
  int64_t bytes = op.fragmentBytes();
  Value offset =
      im.add(ldsOffset(buffer, region),
             im.add(im.mul(row, op.ldsRowBytes()), im.mul(block, bytes)));
  Value raw = vector::LoadOp::create(
      b, loc, VectorType::get({bytes}, b.getI8Type()), lds, offset, false,
      llvm::Align(16));
  return vector::BitCastOp::create(
      b, loc, VectorType::get({kBlock}, op.element), raw);
}

Value GemmKernelBuilder::loadScale(Value buffer, int64_t region, Value row,
                                   Value block) {
  Value offset = im.add(ldsOffset(buffer, region),
                        im.add(im.mul(row, kBlocksPerTile), block));
  Value code = memref::LoadOp::create(b, loc, lds, offset);
  return arith::BitcastOp::create(b, loc, b.getType<Float8E8M0FNUType>(),
                                  code);
}

SmallVector<Value> GemmKernelBuilder::compute(Value buffer, ValueRange accs) {
  SmallVector<Value> result(accs);
  auto [laneRow, laneBlock] = target.getOperandPosition(b, loc, lane);
  Value waveM = im.div(wave, kWavesN), waveN = im.rem(wave, kWavesN);
  int64_t mmaM = target.getM(), mmaN = target.getN();
  int64_t blocksPerMMA = target.getK() / kBlock;
  for (int64_t step = 0; step < kTileK / target.getK(); ++step) {
    Value block = im.add(laneBlock, step * blocksPerMMA);
    SmallVector<Value> aFrag, aScale, bFrag, bScale;
    for (int64_t i = 0; i < kRepM; ++i) {
      Value row = im.add(im.mul(waveM, kRepM * mmaM), im.add(laneRow, i * mmaM));
      aFrag.push_back(loadFragment(a, buffer, aCodes, row, block));
      aScale.push_back(loadScale(buffer, aScales, row, block));
    }
    for (int64_t j = 0; j < kRepN; ++j) {
      Value row = im.add(im.mul(waveN, kRepN * mmaN), im.add(laneRow, j * mmaN));
      bFrag.push_back(loadFragment(bt, buffer, bCodes, row, block));
      bScale.push_back(loadScale(buffer, bScales, row, block));
    }
    for (int64_t i = 0; i < kRepM; ++i)
      for (int64_t j = 0; j < kRepN; ++j) {
        Value &d = result[i * kRepN + j];
        d = target.buildMMA(b, loc, aFrag[i], aScale[i], bFrag[j], bScale[j],
                            d);
      }
  }
  return result;
}

Value GemmKernelBuilder::bRowOfLDSRow(Value row) {
  if (!bf16Result)
    return row;
  // LDS row j * mmaN + c of a wave's group, which lane column c of N tile j
  // reads (compute() is unchanged), holds tile-local column kRepN * c + j.
  // Applied where a thread picks the global row it loads, so the LDS
  // stores keep their layout (and bank pattern), and each group of
  // consecutive threads still loads one whole row segment. The row is per
  // thread and loop invariant: no cost in the loop.
  int64_t mmaN = target.getN(), group = kRepN * mmaN;
  Value p = im.rem(row, group);
  Value groupStart = im.mul(im.div(row, group), group);
  Value tile = im.div(p, mmaN);
  Value column = im.mul(im.rem(p, mmaN), kRepN);
  return im.add(groupStart, im.add(column, tile));
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
      Value old = vector::LoadOp::create(b, loc, pairType, acc,
                                         ValueRange{batch, row, col},
                                         /*nontemporal=*/false, llvm::Align(8));
      Value t = vector::FromElementsOp::create(b, loc, pairType,
                                               ValueRange{t0, t1});
      // [GEMM1]: C = acc + T, then arith.truncf's RNE (v_pk_add_f32 and one
      // v_cvt_pk_bf16_f32 per pair on gfx950).
      Value sum = arith::AddFOp::create(b, loc, old, t);
      Value packed = arith::TruncFOp::create(
          b, loc, VectorType::get({2}, bf16), sum);
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
      Value old =
          memref::LoadOp::create(b, loc, acc, ValueRange{batch, row, c});
      Value sum = arith::AddFOp::create(b, loc, old, t);
      Value rounded = arith::TruncFOp::create(b, loc, bf16, sum);
      memref::StoreOp::create(b, loc, rounded, result,
                              ValueRange{batch, row, c});
    });
  }
}

void GemmKernelBuilder::epilogue(ValueRange accs) {
  Value waveM = im.div(wave, kWavesN), waveN = im.rem(wave, kWavesN);
  int64_t mmaM = target.getM(), mmaN = target.getN();
  if (bf16Result) {
    // bRowOfLDSRow put column kRepN * c + j of the wave's group in lane c of
    // tile j: tiles j and j + 1 hold a pair of adjacent columns, and a
    // half-wave (32x32) or quarter-wave (16x16) stores a contiguous row
    // segment of 32-bit words.
    for (int64_t i = 0; i < kRepM; ++i)
      for (int64_t v = 0; v < target.getAccumulatorLength(); ++v) {
        auto [r, c] = target.getAccumulatorPosition(b, loc, lane, v);
        Value row = im.add(im.add(a.rowBase, im.mul(waveM, kRepM * mmaM)),
                           im.add(r, i * mmaM));
        Value rowInBounds = m % a.tileRows ? im.lt(row, m) : Value();
        Value group = im.add(bt.rowBase, im.mul(waveN, kRepN * mmaN));
        for (int64_t j = 0; j < kRepN; j += 2) {
          Value col = im.add(group, im.add(im.mul(c, kRepN), j));
          Value t0 = vector::ExtractOp::create(b, loc, accs[i * kRepN + j], v);
          Value t1 =
              vector::ExtractOp::create(b, loc, accs[i * kRepN + j + 1], v);
          storeBF16Pair(row, col, rowInBounds, t0, t1);
        }
      }
    return;
  }
  for (int64_t i = 0; i < kRepM; ++i)
    for (int64_t j = 0; j < kRepN; ++j)
      for (int64_t v = 0; v < target.getAccumulatorLength(); ++v) {
        auto [r, c] = target.getAccumulatorPosition(b, loc, lane, v);
        Value row = im.add(im.add(a.rowBase, im.mul(waveM, kRepM * mmaM)),
                           im.add(r, i * mmaM));
        Value col = im.add(im.add(bt.rowBase, im.mul(waveN, kRepN * mmaN)),
                           im.add(c, j * mmaN));
        Value t = vector::ExtractOp::create(b, loc, accs[i * kRepN + j], v);
        Value inBounds;
        if (m % a.tileRows)
          inBounds = im.lt(row, m);
        if (n % bt.tileRows)
          inBounds = im.both(inBounds, im.lt(col, n));
        buildIf(inBounds, [&]() {
          // [GEMM1]: C = acc + T (g = 1 for MX operands).
          Value old = memref::LoadOp::create(b, loc, acc,
                                             ValueRange{batch, row, col});
          Value sum = arith::AddFOp::create(b, loc, old, t);
          memref::StoreOp::create(b, loc, sum, result,
                                  ValueRange{batch, row, col});
        });
      }
}

void GemmKernelBuilder::build(gpu::LaunchOp launch) {
  lds = launch.getWorkgroupAttributions().front();
  tid = launch.getThreadIds().x;
  int64_t waveSize = target.getSubgroupSize();
  lane = im.rem(tid, waveSize);
  wave = im.div(tid, waveSize);
  batch = launch.getBlockIds().z;
  a.rowBase = im.mul(launch.getBlockIds().y, a.tileRows);
  bt.rowBase = im.mul(launch.getBlockIds().x, bt.tileRows);

  auto accType = VectorType::get({target.getAccumulatorLength()},
                                 b.getF32Type());
  Value zero = arith::ConstantOp::create(
      b, loc, DenseElementsAttr::get(accType, b.getF32FloatAttr(0.0f)));
  SmallVector<Value> accs(kRepM * kRepN, zero);

  // Prologue: stage K step 0 in buffer 0.
  int64_t kSteps = llvm::divideCeil(k, kTileK);
  storeTile(im.c(0), loadTile(im.c(0)));
  gpu::BarrierOp::create(b, loc);

  // Steps 0 .. kSteps - 2: prefetch step t + 1, compute step t, stage t + 1
  // in the other buffer. The last step is peeled, so the loop needs no
  // bounds check on the prefetch.
  auto loop = scf::ForOp::create(b, loc, im.c(0), im.c(kSteps - 1), im.c(1),
                                 accs);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(loop.getBody());
    Value t = loop.getInductionVar();
    Prefetch next = loadTile(im.add(t, 1));
    Value buffer = im.rem(t, 2);
    SmallVector<Value> updated = compute(buffer, loop.getRegionIterArgs());
    storeTile(arith::SubIOp::create(b, loc, im.c(1), buffer), next);
    gpu::BarrierOp::create(b, loc);
    scf::YieldOp::create(b, loc, updated);
  }
  SmallVector<Value> last =
      compute(im.c((kSteps - 1) % 2), loop.getResults());
  epilogue(last);
}

/// Reshapes a tensor of rank >= 2 to rank 3: [batch, rows, columns].
static Value to3D(OpBuilder &b, Location loc, Value tensor) {
  auto type = cast<RankedTensorType>(tensor.getType());
  int64_t rank = type.getRank();
  ArrayRef<int64_t> shape = type.getShape();
  int64_t batch = 1;
  for (int64_t d : shape.drop_back(2))
    batch *= d;
  auto type3 = RankedTensorType::get({batch, shape[rank - 2], shape[rank - 1]},
                                     type.getElementType());
  if (rank == 3)
    return tensor;
  if (rank == 2)
    return tensor::ExpandShapeOp::create(b, loc, type3, tensor,
                                         {{0, 1}, {2}});
  ReassociationIndices batchDims =
      llvm::to_vector(llvm::seq<int64_t>(0, rank - 2));
  return tensor::CollapseShapeOp::create(
      b, loc, type3, tensor, {batchDims, {rank - 2}, {rank - 1}});
}

static Value fromTo3D(OpBuilder &b, Location loc, Value tensor,
                      RankedTensorType original) {
  int64_t rank = original.getRank();
  if (rank == 3)
    return tensor;
  if (rank == 2)
    return tensor::CollapseShapeOp::create(b, loc, original, tensor,
                                           {{0, 1}, {2}});
  ReassociationIndices batchDims =
      llvm::to_vector(llvm::seq<int64_t>(0, rank - 2));
  return tensor::ExpandShapeOp::create(
      b, loc, original, tensor, {batchDims, {rank - 2}, {rank - 1}});
}

static Value toBuffer(OpBuilder &b, Location loc, Value tensor) {
  auto type = cast<RankedTensorType>(tensor.getType());
  return bufferization::ToBufferOp::create(
      b, loc, MemRefType::get(type.getShape(), type.getElementType()), tensor,
      b.getUnitAttr());
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

struct ScaledMatmulOpLowering : public OpConversionPattern<ScaledMatmulOp> {
  ScaledMatmulOpLowering(TypeConverter &converter, MLIRContext *context,
                         amdgpu::Chipset chipset,
                         std::optional<ScaledMFMAKind> mfma)
      : OpConversionPattern(converter, context, /*benefit=*/2),
        chipset(chipset),
        mfma(mfma) {}

  LogicalResult
  matchAndRewrite(ScaledMatmulOp op, OneToNOpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    ScaledTensorType lhsType = op.getLhs().getType();
    ScaledTensorType rhsType = op.getRhs().getType();
    // checkFP4TrainAMDGPUSupport reports these with a message first.
    if (!hasScaledMFMA(chipset))
      return rewriter.notifyMatchFailure(op, "chip has no scaled MFMA");
    for (ScaledTensorType type : {lhsType, rhsType})
      if (!isa<Float8E8M0FNUType>(type.getScaleType()) ||
          type.getHasGlobalScale() || type.is2DBlocked())
        return rewriter.notifyMatchFailure(op, "not an MX operand");

    Location loc = op.getLoc();
    auto accType = cast<RankedTensorType>(op.getAcc().getType());
    ArrayRef<int64_t> shape = accType.getShape();
    int64_t rank = accType.getRank();
    int64_t m = shape[rank - 2], n = shape[rank - 1];
    int64_t k = lhsType.getShape().back();
    int64_t batch = 1;
    for (int64_t d : shape.drop_back(2))
      batch *= d;

    ScaledMFMAKind kind = mfma ? *mfma : selectScaledMFMAKind(batch, m, n);
    CDNA4ScaledMFMATargetInfo target(kind);

    StagedOperand a, bt;
    a.codes = toBuffer(rewriter, loc, to3D(rewriter, loc, adaptor.getLhs()[0]));
    a.scales = toBuffer(rewriter, loc, to3D(rewriter, loc, adaptor.getLhs()[1]));
    a.element = lhsType.getElementType();
    a.rows = m;
    a.tileRows = kWavesM * kRepM * target.getM();
    bt.codes = toBuffer(rewriter, loc, to3D(rewriter, loc, adaptor.getRhs()[0]));
    bt.scales = toBuffer(rewriter, loc, to3D(rewriter, loc, adaptor.getRhs()[1]));
    bt.element = rhsType.getElementType();
    bt.rows = n;
    bt.tileRows = kWavesN * kRepN * target.getN();
    Value acc = toBuffer(rewriter, loc,
                         to3D(rewriter, loc, adaptor.getAcc().front()));
    // The bf16 epilogue takes over a truncation that is the result's only use.
    Operation *truncation = getFusedBF16Truncation(op.getResult());
    Type resultElement =
        truncation ? rewriter.getBF16Type() : rewriter.getF32Type();
    auto resultType = MemRefType::get({batch, m, n}, resultElement);
    Value result = memref::AllocOp::create(rewriter, loc, resultType,
                                           rewriter.getI64IntegerAttr(64));

    GemmKernelBuilder builder(rewriter, loc, target, a, bt, k, acc, result,
                              m, n);
    IndexMath im{rewriter, loc};
    auto lds = MemRefType::get(
        {builder.getLDSBytes()}, rewriter.getI8Type(), AffineMap(),
        gpu::AddressSpaceAttr::get(rewriter.getContext(),
                                   gpu::AddressSpace::Workgroup));
    auto launch = gpu::LaunchOp::create(
        rewriter, loc, im.c(llvm::divideCeil(n, bt.tileRows)),
        im.c(llvm::divideCeil(m, a.tileRows)), im.c(batch),
        im.c(builder.getThreads()), im.c(1), im.c(1),
        /*dynamicSharedMemorySize=*/nullptr, /*asyncTokenType=*/nullptr,
        /*asyncDependencies=*/{}, /*workgroupAttributions=*/TypeRange{lds});
    {
      OpBuilder::InsertionGuard guard(rewriter);
      rewriter.setInsertionPointToStart(&launch.getBody().front());
      builder.build(launch);
      gpu::TerminatorOp::create(rewriter, loc);
    }

    Value tensor = bufferization::ToTensorOp::create(
        rewriter, loc, memref::getTensorTypeFromMemRefType(resultType), result,
        rewriter.getUnitAttr(), rewriter.getUnitAttr());
    Value shaped =
        fromTo3D(rewriter, loc, tensor, accType.clone(resultElement));
    if (!truncation) {
      rewriter.replaceOp(op, shaped);
      return success();
    }
    // The kernel sits where the op was, before the truncation's users.
    rewriter.replaceOp(truncation, shaped);
    rewriter.eraseOp(op);
    return success();
  }

  amdgpu::Chipset chipset;
  std::optional<ScaledMFMAKind> mfma;
};

} // namespace

void mlir::fp4train::populateFP4TrainToAMDGPUConversionPatterns(
    TypeConverter &converter, RewritePatternSet &patterns,
    amdgpu::Chipset chipset, std::optional<ScaledMFMAKind> mfma) {
  patterns.add<ScaledMatmulOpLowering>(converter, patterns.getContext(),
                                       chipset, mfma);
  populateFP4TrainQuantizeToAMDGPUPatterns(converter, patterns, chipset);
  populateFP4TrainHadamardToAMDGPUPatterns(converter, patterns, chipset);
}

LogicalResult
mlir::fp4train::checkFP4TrainAMDGPUSupport(Operation *root,
                                           const amdgpu::Chipset &chipset,
                                           StringRef chipName) {
  bool ok = true;
  root->walk([&](ScaledMatmulOp op) {
    if (!hasScaledMFMA(chipset)) {
      op.emitOpError("needs gfx950 (CDNA4): chip ")
          << chipName
          << " has no block-scaled MFMA (v_mfma_scale_f32_*_f8f6f4)";
      ok = false;
      return;
    }
    for (ScaledTensorType type : {op.getLhs().getType(), op.getRhs().getType()}) {
      if (type.getFormat() != Format::nvfp4)
        continue;
      op.emitOpError("has an NVFP4 operand ")
          << type << ", which " << chipName
          << " cannot run natively: its scaled MFMA takes E8M0 scales of "
             "32-element blocks, not NVFP4's E4M3 scales of 16-element "
             "blocks; use an MX recipe (mxfp4, mxfp8) for gfx950";
      ok = false;
      return;
    }
  });
  return success(ok);
}
