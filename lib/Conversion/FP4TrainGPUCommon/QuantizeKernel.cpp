//===- QuantizeKernel.cpp - Block quantization as a GPU kernel ------------===//
//
// fp4train.quantize blocked along the last dimension becomes a gpu.launch
// with one lane per block, computing exactly what fp4train-expand computes
// (lib/Conversion/FP4TrainToStandard/QuantizeOpLowering.cpp), with the same
// codecs, operation for operation:
//
//  - the lane loads its B consecutive elements (16-byte vectors), extends
//    bf16/f16 to f32 (exact) and takes the block amax as the integer max of
//    the f32 magnitude bits (NaN > Inf > finite);
//  - [MX1]/[MX2]/[MX3]: the E8M0 code `codecs::mxScaleCode` and the factor
//    `inverseE8M0(code)`; [NV1]: the E4M3 code `nvfp4BlockScaleCode(amax,
//    S_enc)` and the factor `nvfp4ElementScale(code, S_dec)`;
//  - per element one f32 product v = x * factor, then RNE with saturation
//    (TargetInfoBase::buildConvertRNE: a hardware conversion where it
//    computes the same bits, else the integer recipe) or [SR1] stochastic
//    rounding in software: Philox4x32-10 in the kernel, one call per four
//    consecutive elements (word i & 3 of philox(counter = i >> 2, key =
//    seed)), exactly the library's stochasticRoundingWord;
//  - [MX3] a NaN/Inf block's element codes are 0;
//  - codes are stored as the 1:N type conversion does ([PK1]): E2M1 two per
//    byte (the lane's block is B / 2 bytes, one store), FP8 one per byte;
//    the scale code as one byte.
//
// NVFP4 with a computed amax_tensor first runs a reduction kernel: each lane
// takes its block's amax bits, each workgroup reduces them in shared memory
// (an unsigned max, so order does not matter) to one word; the host takes
// the max of the per-workgroup words and derives S_enc/S_dec with
// codecs::nvfp4GlobalScale, as the expansion does. The two scalars reach the
// quantize kernel as kernel arguments.
//
// NVFP4 16x16 blocks (the weight layout of the NVIDIA recipe) take a
// workgroup of 16 x 16 lanes per band of 16 rows and 16 column blocks: lane
// (r, c) loads and later encodes the 16 elements of row r in column block c,
// the 16 lanes of a block put their row amaxes in shared memory, and after
// one barrier each takes the max of its block's 16 words (exact, order-free);
// the row-0 lane writes the block's scale code.
//
// The input is flattened to 1-D (blocks along the last dimension are
// contiguous runs of B; 16x16 blocks are index math on the flat rows), the
// results are reshaped back.
//
//===----------------------------------------------------------------------===//

#include "QuantizeKernel.h"

#include "fp4train/Conversion/FP4TrainCommon/Codecs.h"
#include "fp4train/Conversion/FP4TrainCommon/TypeConversion.h"
#include "fp4train/Conversion/FP4TrainGPUCommon/Buffers.h"
#include "fp4train/Conversion/FP4TrainGPUCommon/KernelBuilders.h"
#include "fp4train/Conversion/FP4TrainGPUCommon/TargetInfoBase.h"
#include "fp4train/Dialect/FP4Train/IR/FP4TrainOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mlir::fp4train;
using namespace mlir::fp4train::quantize_kernel;
namespace numerics = ::fp4train::numerics;

/// Elements per block of the quantize ops the kernel takes.
static int64_t getKernelBlockSize(ScaledTensorType type) {
  return type.getBlockShape().back();
}

static bool isNVFP4(ScaledTensorType type) {
  return isa<Float8E4M3FNType>(type.getScaleType());
}

bool mlir::fp4train::isQuantizeKernelShape(QuantizeOp op) {
  // The kernels index [SR1] within the tensor they quantize; a stochastic
  // part of a sharded tensor [SH3] takes the exact host expansion instead.
  if (op.isPart() && op.getRounding() == RoundingMode::stochastic)
    return false;
  ScaledTensorType type = op.getResult().getType();
  bool nv = isNVFP4(type);
  if (!nv && !isa<Float8E8M0FNUType>(type.getScaleType()))
    return false;
  if (!isa<Float4E2M1FNType, Float8E4M3FNType, Float8E5M2Type>(
          type.getElementType()))
    return false;
  if (nv && !isa<Float4E2M1FNType>(type.getElementType()))
    return false;
  if (!nv && type.getHasGlobalScale())
    return false;
  ArrayRef<int64_t> block = type.getBlockShape();
  if (block.empty() || block.back() != (nv ? 16 : 32))
    return false;
  bool twoD = type.is2DBlocked();
  for (int64_t b : block.drop_back(twoD ? 2 : 1))
    if (b != 1)
      return false;
  if (twoD && (!nv || block[block.size() - 2] != 16))
    return false;
  int64_t numBlocks = type.getNumElements() / block.back();
  if (numBlocks == 0)
    return false;
  if (twoD) {
    // 16 column blocks x one band of 16 rows per workgroup; bands in y.
    int64_t columnBlocks = type.getShape().back() / 16;
    int64_t bands = numBlocks / columnBlocks / 16;
    if (llvm::divideCeil(columnBlocks, 16) > int64_t(INT32_MAX) ||
        bands > 65535)
      return false;
  } else if (llvm::divideCeil(numBlocks, kThreads) * kThreads >
             int64_t(UINT32_MAX)) {
    // The grid's work-items (one per block) must fit the 32-bit x
    // dimension of a launch.
    return false;
  }
  Type input = op.getInput().getType().getElementType();
  return input.isF32() || input.isBF16() || input.isF16();
}

namespace {

/// Elements [offset, offset + size) of a 1-D vector.
Value slice(OpBuilder &b, Location loc, Value v, int64_t offset, int64_t size) {
  return vector::ShuffleOp::create(
      b, loc, v, v, llvm::to_vector(llvm::seq<int64_t>(offset, offset + size)));
}

/// `encode(element, index)` (an i8 code) of every element of `v` (vectors
/// of 4 f32), per vector in the hooks' form (TargetInfoBase::
/// buildConvertRNE): E2M1 (`packed`) one vector<2xi8> of [PK1] bytes, FP8
/// one vector<4xi8>.
SmallVector<Value>
encodeInSoftware(ImplicitLocOpBuilder &ib, ArrayRef<Value> v, bool packed,
                 function_ref<Value(Value, int64_t)> encode) {
  SmallVector<Value> quads;
  for (auto [w, quad] : llvm::enumerate(v)) {
    SmallVector<Value, 4> codes;
    for (int64_t k = 0; k < 4; ++k)
      codes.push_back(
          encode(vector::ExtractOp::create(ib, quad, k), 4 * int64_t(w) + k));
    quads.push_back(packed
                        ? TargetInfoBase::packStoredE2M1Quad(ib, codes)
                        : vector::FromElementsOp::create(
                              ib, VectorType::get({4}, ib.getI8Type()), codes)
                              .getResult());
  }
  return quads;
}

} // namespace

QuantizeConfig mlir::fp4train::quantize_kernel::getQuantizeConfig(QuantizeOp op,
                                                                  Value seed) {
  ScaledTensorType type = op.getResult().getType();
  QuantizeConfig config;
  config.element = type.getElementType();
  config.blockSize = getKernelBlockSize(type);
  config.numBlocks = type.getNumElements() / config.blockSize;
  config.nv = isNVFP4(type);
  config.rceil = op.getScaleMode() == ScaleMode::rceil;
  config.twoD = type.is2DBlocked();
  config.columns = type.getShape().back();
  config.columnBlocks = config.columns / config.blockSize;
  config.rowBlocks = config.numBlocks / config.columnBlocks / 16;
  if (op.getRounding() == RoundingMode::stochastic)
    config.seed = seed;
  return config;
}

std::pair<Value, Value> QuantizeKernelBuilder::getBlock(gpu::LaunchOp launch) {
  Value block = arith::AddIOp::create(
      b, loc,
      arith::MulIOp::create(b, loc, launch.getBlockIds().x, index(kThreads)),
      launch.getThreadIds().x);
  if (config.numBlocks % kThreads == 0)
    return {block, Value()};
  return {block, arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, block,
                                       index(config.numBlocks))};
}

SmallVector<Value> QuantizeKernelBuilder::loadBlock(Value base) {
  Type inputElement = cast<MemRefType>(input.getType()).getElementType();
  int64_t perLoad = 128 / inputElement.getIntOrFloatBitWidth();
  SmallVector<Value> quads;
  for (int64_t i = 0; i < config.blockSize; i += perLoad) {
    Value offset = arith::AddIOp::create(b, loc, base, index(i));
    Value v = vector::LoadOp::create(
        b, loc, VectorType::get({perLoad}, inputElement), input,
        ValueRange{offset}, /*nontemporal=*/false, llvm::Align(16));
    if (!inputElement.isF32())
      v = arith::ExtFOp::create(b, loc,
                                VectorType::get({perLoad}, b.getF32Type()), v);
    for (int64_t j = 0; j < perLoad; j += 4)
      quads.push_back(perLoad == 4 ? v : slice(b, loc, v, j, 4));
  }
  return quads;
}

Value QuantizeKernelBuilder::blockAbsMaxBits(ImplicitLocOpBuilder &ib,
                                             ArrayRef<Value> x) {
  auto i32x4 = VectorType::get({4}, ib.getI32Type());
  Value mask = arith::ConstantOp::create(
      ib, DenseElementsAttr::get(i32x4, APInt(32, 0x7FFFFFFFu)));
  Value maxBits;
  for (Value q : x) {
    Value bits = arith::AndIOp::create(
        ib, vector::BitCastOp::create(ib, i32x4, q), mask);
    maxBits =
        maxBits ? arith::MaxUIOp::create(ib, maxBits, bits).getResult() : bits;
  }
  Value amax;
  for (int64_t k = 0; k < 4; ++k) {
    Value lane = vector::ExtractOp::create(ib, maxBits, k);
    amax = amax ? arith::MaxUIOp::create(ib, amax, lane).getResult() : lane;
  }
  return amax;
}

SmallVector<Value> QuantizeKernelBuilder::convertStochastic(
    ImplicitLocOpBuilder &ib, Value block,
    const TargetInfoBase::ScaledBlock &scaled) {
  Type i32 = ib.getI32Type(), i64 = ib.getI64Type();
  // [SR1] key = {lo, hi of seed}; the word of element i is word i & 3 of
  // philox(counter = {lo, hi of i >> 2, 0, 0}). Element 4w + k of the block
  // has i >> 2 = (B / 4) block + w and i & 3 = k: one call per 4 elements.
  Value key0 = arith::TruncIOp::create(ib, i32, config.seed);
  Value key1 = arith::TruncIOp::create(
      ib, i32,
      arith::ShRUIOp::create(ib, config.seed, codecs::i64Const(ib, 32)));
  // Counters are below numel / 4: below 2^32 (every realistic tensor) they
  // are computed in 32 bits with a zero high word.
  bool wideCounter =
      config.numBlocks * config.blockSize / 4 > int64_t(UINT32_MAX);
  Type counterType = wideCounter ? i64 : i32;
  auto counterConst = [&](int64_t c) {
    return wideCounter ? codecs::i64Const(ib, c)
                       : codecs::i32Const(ib, uint32_t(c));
  };
  Value counterBase = arith::MulIOp::create(
      ib, arith::IndexCastUIOp::create(ib, counterType, block),
      counterConst(config.blockSize / 4));
  Value zero = codecs::i32Const(ib, 0);
  // Quad by quad, so that only four words are live at a time.
  SmallVector<Value> quads;
  for (int64_t w = 0, e = scaled.x.size(); w < e; ++w) {
    Value counter = arith::AddIOp::create(ib, counterBase, counterConst(w));
    Value counterLo = counter, counterHi = zero;
    if (wideCounter) {
      counterLo = arith::TruncIOp::create(ib, i32, counter);
      counterHi = arith::TruncIOp::create(
          ib, i32,
          arith::ShRUIOp::create(ib, counter, codecs::i64Const(ib, 32)));
    }
    std::array<Value, 4> words = codecs::philox4x32_10(
        ib, {counterLo, counterHi, zero, zero}, {key0, key1});
    TargetInfoBase::ScaledBlock quad{scaled.x.slice(w, 1), scaled.mxScaleCode,
                                     scaled.floorScale, scaled.factor};
    if (std::optional<SmallVector<Value>> hw =
            target.buildConvertStochasticE2M1(ib, quad, words)) {
      quads.push_back(hw->front());
      continue;
    }
    quads.push_back(encodeInSoftware(ib, TargetInfoBase::scaleBlock(ib, quad),
                                     /*packed=*/true,
                                     [&](Value x, int64_t i) {
                                       return codecs::encodeE2M1Stochastic(
                                           ib, x, words[i]);
                                     })
                        .front());
  }
  return quads;
}

void QuantizeKernelBuilder::quantizeBlock(Value block, Value codes,
                                          Value scales) {
  ImplicitLocOpBuilder ib(loc, b);
  Value base = arith::MulIOp::create(ib, block, index(config.blockSize));
  SmallVector<Value> x = loadBlock(base);
  encodeBlock(ib, x, blockAbsMaxBits(ib, x), base, block, codes, scales, block,
              Value());
}

void QuantizeKernelBuilder::encodeBlock(ImplicitLocOpBuilder &ib,
                                        ArrayRef<Value> x, Value amaxBits,
                                        Value base, Value linearBlock,
                                        Value codes, Value scales,
                                        Value scaleIndex, Value writeScale) {
  const numerics::MiniFloatFormat &format =
      codecs::getMiniFloatFormat(config.element);
  Type i8 = ib.getI8Type();
  int64_t bs = config.blockSize;
  Value amax = codecs::f32FromBits(ib, amaxBits);
  Value code = config.nv
                   ? codecs::nvfp4BlockScaleCode(ib, amax, config.globalEncode)
                   : codecs::mxScaleCode(ib, amax, format, config.rceil);
  // The element scale, emitted where a target's convert (or the software
  // recipe) first needs it: gfx950's scaled converts take the code itself.
  Value factorValue;
  auto factor = [&]() -> Value {
    if (!factorValue)
      factorValue =
          config.nv ? codecs::nvfp4ElementScale(ib, code, config.globalDecode)
                    : codecs::inverseE8M0(ib, code);
    return factorValue;
  };
  TargetInfoBase::ScaledBlock scaled{x, config.nv ? Value() : code,
                                     !config.nv && !config.rceil, factor};
  SmallVector<Value> quads;
  if (config.seed) {
    quads = convertStochastic(ib, linearBlock, scaled);
  } else if (std::optional<SmallVector<Value>> hw =
                 target.buildConvertRNE(ib, config.element, scaled)) {
    quads = std::move(*hw);
  } else {
    quads = encodeInSoftware(
        ib, TargetInfoBase::scaleBlock(ib, scaled),
        isPackedStorage(config.element),
        [&](Value x, int64_t) { return codecs::encodeRNESat(ib, x, format); });
  }

  Value nanBlock;
  if (!config.nv)
    nanBlock = arith::CmpIOp::create(ib, arith::CmpIPredicate::eq, code,
                                     arith::ConstantIntOp::create(ib, i8, -1));
  auto concat = [&](Value a, Value b) {
    int64_t n = cast<VectorType>(a.getType()).getNumElements();
    return vector::ShuffleOp::create(
        ib, a, b, llvm::to_vector(llvm::seq<int64_t>(0, 2 * n)));
  };
  // The quads in stored form ([PK1]: E2M1 2 bytes, FP8 4 bytes each), four
  // per 16-byte (FP8) or 8-byte (E2M1) chunk; an E2M1 block's B / 2 bytes
  // are written with one store.
  bool packed = isPackedStorage(config.element);
  int64_t chunkBytes = packed ? 8 : 16;
  auto chunkType = VectorType::get({chunkBytes}, i8);
  Value zeros = arith::ConstantOp::create(ib, ib.getZeroAttr(chunkType));
  Value packedBlock;
  for (int64_t chunk = 0; chunk < bs / 16; ++chunk) {
    Value chunkCodes =
        concat(concat(quads[4 * chunk], quads[4 * chunk + 1]),
               concat(quads[4 * chunk + 2], quads[4 * chunk + 3]));
    // [MX3] A NaN-scaled block decodes to NaN through its scale; its
    // element codes are defined as 0 (a zero byte is two zero codes).
    if (nanBlock)
      chunkCodes = arith::SelectOp::create(ib, nanBlock, zeros, chunkCodes);
    if (packed) {
      packedBlock = packedBlock ? concat(packedBlock, chunkCodes) : chunkCodes;
      continue;
    }
    Value offset = arith::AddIOp::create(ib, base, index(16 * chunk));
    vector::StoreOp::create(ib, chunkCodes, codes, ValueRange{offset},
                            /*nontemporal=*/false, llvm::Align(16));
  }
  if (packed)
    vector::StoreOp::create(
        ib, packedBlock, codes,
        ValueRange{arith::DivUIOp::create(ib, base, index(2))},
        /*nontemporal=*/false, llvm::Align(bs / 2));
  if (!writeScale) {
    memref::StoreOp::create(ib, code, scales, ValueRange{scaleIndex});
    return;
  }
  auto ifOp = scf::IfOp::create(ib, writeScale, /*withElse=*/false);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(ifOp.thenBlock());
  memref::StoreOp::create(b, loc, code, scales, ValueRange{scaleIndex});
}

void QuantizeKernelBuilder::buildQuantize2D(gpu::LaunchOp launch, Value codes,
                                            Value scales) {
  ImplicitLocOpBuilder ib(loc, b);
  auto f32x4 = VectorType::get({4}, ib.getF32Type());
  Value shared = launch.getWorkgroupAttributions().front();
  Value tid = launch.getThreadIds().x;
  Value r = arith::DivUIOp::create(ib, tid, index(16));
  Value c = arith::RemUIOp::create(ib, tid, index(16));
  Value rowBlock = launch.getBlockIds().y;
  Value columnBlock = arith::AddIOp::create(
      ib, arith::MulIOp::create(ib, launch.getBlockIds().x, index(16)), c);
  Value row = arith::AddIOp::create(
      ib, arith::MulIOp::create(ib, rowBlock, index(16)), r);
  // Element offset of the lane's 16 elements, and that offset / 16.
  Value linearBlock = arith::AddIOp::create(
      ib, arith::MulIOp::create(ib, row, index(config.columnBlocks)),
      columnBlock);
  Value base = arith::MulIOp::create(ib, linearBlock, index(16));
  Value inRange;
  if (config.columnBlocks % 16)
    inRange = arith::CmpIOp::create(ib, arith::CmpIPredicate::ult, columnBlock,
                                    index(config.columnBlocks));

  // Each lane's elements and row amax; lanes past the last column block
  // (which still take part in the barrier) contribute +0.
  SmallVector<Value> x;
  Value bits;
  if (!inRange) {
    x = loadBlock(base);
    bits = blockAbsMaxBits(ib, x);
  } else {
    auto ifOp = scf::IfOp::create(
        ib, inRange,
        [&](OpBuilder &nested, Location) {
          OpBuilder::InsertionGuard guard(b);
          b.setInsertionPoint(nested.getInsertionBlock(),
                              nested.getInsertionPoint());
          ImplicitLocOpBuilder inner(loc, b);
          SmallVector<Value> values = loadBlock(base);
          values.push_back(blockAbsMaxBits(inner, values));
          scf::YieldOp::create(inner, values);
        },
        [&](OpBuilder &nested, Location) {
          ImplicitLocOpBuilder inner(loc, nested);
          SmallVector<Value> zeros(
              4, arith::ConstantOp::create(inner, inner.getZeroAttr(f32x4)));
          zeros.push_back(codecs::i32Const(inner, 0));
          scf::YieldOp::create(inner, zeros);
        });
    x = SmallVector<Value>(ifOp.getResults().take_front(4));
    bits = ifOp.getResult(4);
  }
  memref::StoreOp::create(ib, bits, shared, ValueRange{tid});
  target.buildBarrier(b, loc);
  // The block's amax: the unsigned max of its 16 rows' words (column c).
  Value blockBits;
  for (int64_t k = 0; k < 16; ++k) {
    Value word = memref::LoadOp::create(
        ib, shared, ValueRange{arith::AddIOp::create(ib, c, index(16 * k))});
    blockBits = blockBits
                    ? arith::MaxUIOp::create(ib, blockBits, word).getResult()
                    : word;
  }
  Value scaleIndex = arith::AddIOp::create(
      ib, arith::MulIOp::create(ib, rowBlock, index(config.columnBlocks)),
      columnBlock);
  Value firstRow =
      arith::CmpIOp::create(ib, arith::CmpIPredicate::eq, r, index(0));
  if (!inRange)
    return encodeBlock(ib, x, blockBits, base, linearBlock, codes, scales,
                       scaleIndex, firstRow);
  auto ifOp = scf::IfOp::create(ib, inRange, /*withElse=*/false);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(ifOp.thenBlock());
  ImplicitLocOpBuilder inner(loc, b);
  encodeBlock(inner, x, blockBits, base, linearBlock, codes, scales, scaleIndex,
              firstRow);
}

void QuantizeKernelBuilder::buildQuantize(gpu::LaunchOp launch, Value codes,
                                          Value scales) {
  auto [block, inRange] = getBlock(launch);
  if (!inRange)
    return quantizeBlock(block, codes, scales);
  auto ifOp = scf::IfOp::create(b, loc, inRange, /*withElse=*/false);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(ifOp.thenBlock());
  quantizeBlock(block, codes, scales);
}

void QuantizeKernelBuilder::buildAbsMax(gpu::LaunchOp launch, Value partial) {
  ImplicitLocOpBuilder ib(loc, b);
  Value block, inRange;
  std::tie(block, inRange) = getBlock(launch);
  auto amaxOfBlock = [&]() {
    return blockAbsMaxBits(ib, loadBlock(arith::MulIOp::create(
                                   ib, block, index(config.blockSize))));
  };
  Value bits;
  if (!inRange) {
    bits = amaxOfBlock();
  } else {
    // Threads past the last block contribute +0, the identity of the max.
    auto ifOp = scf::IfOp::create(
        ib, inRange,
        [&](OpBuilder &nested, Location) {
          OpBuilder::InsertionGuard inner(b);
          b.setInsertionPoint(nested.getInsertionBlock(),
                              nested.getInsertionPoint());
          scf::YieldOp::create(b, loc, amaxOfBlock());
        },
        [&](OpBuilder &nested, Location) {
          scf::YieldOp::create(nested, loc, codecs::i32Const(ib, 0));
        });
    bits = ifOp.getResult(0);
  }
  reduceAbsMax(bits, launch.getThreadIds().x,
               launch.getWorkgroupAttributions().front(), partial,
               launch.getBlockIds().x);
}

void QuantizeKernelBuilder::reduceAbsMax(Value bits, Value tid, Value shared,
                                         Value partial, Value group) {
  ImplicitLocOpBuilder ib(loc, b);
  // Tree reduction in shared memory: after the step of stride s, word t
  // (t < s) holds the max of words t, t + s, ... of the previous step.
  memref::StoreOp::create(ib, bits, shared, ValueRange{tid});
  target.buildBarrier(b, loc);
  for (int64_t s = kThreads / 2; s >= 1; s /= 2) {
    Value active =
        arith::CmpIOp::create(ib, arith::CmpIPredicate::ult, tid, index(s));
    auto ifOp = scf::IfOp::create(ib, active, /*withElse=*/false);
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(ifOp.thenBlock());
      ImplicitLocOpBuilder inner(loc, b);
      Value mine = memref::LoadOp::create(inner, shared, ValueRange{tid});
      Value other = memref::LoadOp::create(
          inner, shared,
          ValueRange{arith::AddIOp::create(inner, tid, index(s))});
      memref::StoreOp::create(inner, arith::MaxUIOp::create(inner, mine, other),
                              shared, ValueRange{tid});
    }
    target.buildBarrier(b, loc);
  }
  Value first =
      arith::CmpIOp::create(ib, arith::CmpIPredicate::eq, tid, index(0));
  auto ifOp = scf::IfOp::create(ib, first, /*withElse=*/false);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(ifOp.thenBlock());
  Value total = memref::LoadOp::create(b, loc, shared, ValueRange{index(0)});
  memref::StoreOp::create(b, loc, total, partial, ValueRange{group});
}

/// [NV1] amax_tensor from the per-workgroup magnitude words: their unsigned
/// max (exact, NaN > Inf > finite), as an f32, on the host.
static Value reduceAbsMaxOnHost(OpBuilder &b, Location loc,
                                Value partialTensor) {
  MLIRContext *ctx = b.getContext();
  Value init =
      linalg::FillOp::create(
          b, loc,
          ValueRange{arith::ConstantIntOp::create(b, loc, b.getI32Type(), 0)},
          ValueRange{tensor::EmptyOp::create(b, loc, ArrayRef<int64_t>{},
                                             b.getI32Type())})
          .getResult(0);
  Value reduced =
      linalg::GenericOp::create(
          b, loc, init.getType(), partialTensor, init,
          {AffineMap::getMultiDimIdentityMap(1, ctx),
           AffineMap::get(1, 0, {}, ctx)},
          {utils::IteratorType::reduction},
          [](OpBuilder &b, Location loc, ValueRange args) {
            linalg::YieldOp::create(
                b, loc,
                arith::MaxUIOp::create(b, loc, args[1], args[0]).getResult());
          })
          .getResult(0);
  Value bits = tensor::ExtractOp::create(b, loc, reduced, ValueRange{});
  return arith::BitcastOp::create(b, loc, b.getF32Type(), bits);
}

void mlir::fp4train::quantize_kernel::buildGlobalScales(
    OpBuilder &b, Location loc, ScaledTensorType type, QuantizeConfig &config,
    Value amax, function_ref<Value()> buildAmaxKernel) {
  if (!config.nv)
    return;
  // [NV1] Global scales, on the host; without a global scale in the type
  // the decode has no S_dec, so S_enc = S_dec = 1 (as the expansion).
  ImplicitLocOpBuilder ib(loc, b);
  if (!type.getHasGlobalScale()) {
    config.globalEncode = config.globalDecode = codecs::f32Const(ib, 1.0f);
    return;
  }
  if (!amax)
    amax =
        reduceAbsMaxOnHost(b, loc, fromKernelBuffer(b, loc, buildAmaxKernel()));
  std::tie(config.globalEncode, config.globalDecode) =
      codecs::nvfp4GlobalScale(ib, amax);
}

Value mlir::fp4train::quantize_kernel::allocAbsMaxPartial(OpBuilder &b,
                                                          Location loc,
                                                          int64_t groups) {
  return allocKernelBuffer(b, loc, MemRefType::get({groups}, b.getI32Type()));
}

Type mlir::fp4train::quantize_kernel::getAbsMaxSharedType(
    OpBuilder &b, const TargetInfoBase &target) {
  return MemRefType::get({kThreads}, b.getI32Type(), AffineMap(),
                         target.getSharedMemorySpace(b.getContext()));
}

std::pair<Value, Value> mlir::fp4train::quantize_kernel::allocQuantizeOutputs(
    OpBuilder &b, Location loc, ScaledTensorType type,
    const QuantizeConfig &config) {
  RankedTensorType stored = getStoredCodesType(type);
  Value codes = allocKernelBuffer(
      b, loc, MemRefType::get({stored.getNumElements()}, b.getI8Type()));
  Value scales = allocKernelBuffer(
      b, loc,
      MemRefType::get({config.twoD ? config.numBlocks / 16 : config.numBlocks},
                      b.getI8Type()));
  return {codes, scales};
}

SmallVector<Value> mlir::fp4train::quantize_kernel::getQuantizeResults(
    OpBuilder &b, Location loc, ScaledTensorType type,
    const QuantizeConfig &config, Value codes, Value scales) {
  SmallVector<Value> results = {
      unflattenTensor(b, loc, fromKernelBuffer(b, loc, codes),
                      getStoredCodesType(type).getShape()),
      unflattenTensor(b, loc, fromKernelBuffer(b, loc, scales),
                      type.getScalesShape())};
  if (type.getHasGlobalScale())
    results.push_back(config.globalDecode);
  return results;
}

namespace {

struct QuantizeOpLowering : public OpConversionPattern<QuantizeOp> {
  QuantizeOpLowering(TypeConverter &converter, MLIRContext *context,
                     std::shared_ptr<const TargetInfoBase> target)
      : OpConversionPattern(converter, context, /*benefit=*/2),
        target(std::move(target)) {}

  LogicalResult
  matchAndRewrite(QuantizeOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (!isQuantizeKernelShape(op) || !target->isQuantizeOnTarget(op))
      return rewriter.notifyMatchFailure(
          op, "not an MX/NVFP4 quantize blocked along the last dimension "
              "that the chip runs");
    Location loc = op.getLoc();
    ScaledTensorType type = op.getResult().getType();
    QuantizeConfig config = getQuantizeConfig(op, adaptor.getSeed());

    Value flat = flattenTensor(rewriter, loc, adaptor.getInput());
    Value input = toKernelBuffer(rewriter, loc, flat);
    auto c = [&](int64_t v) -> Value {
      return arith::ConstantIndexOp::create(rewriter, loc, v);
    };
    int64_t groups = llvm::divideCeil(config.numBlocks, kThreads);

    buildGlobalScales(rewriter, loc, type, config, adaptor.getAmax(), [&] {
      Value partial = allocAbsMaxPartial(rewriter, loc, groups);
      auto launch = gpu::LaunchOp::create(
          rewriter, loc, c(groups), c(1), c(1), c(kThreads), c(1), c(1),
          /*dynamicSharedMemorySize=*/nullptr, /*asyncTokenType=*/nullptr,
          /*asyncDependencies=*/{}, /*workgroupAttributions=*/
          TypeRange{getAbsMaxSharedType(rewriter, *target)});
      OpBuilder::InsertionGuard guard(rewriter);
      rewriter.setInsertionPointToStart(&launch.getBody().front());
      QuantizeKernelBuilder(rewriter, loc, *target, config, input)
          .buildAbsMax(launch, partial);
      gpu::TerminatorOp::create(rewriter, loc);
      return partial;
    });

    auto [codes, scales] = allocQuantizeOutputs(rewriter, loc, type, config);
    if (config.twoD) {
      auto launch = gpu::LaunchOp::create(
          rewriter, loc, c(llvm::divideCeil(config.columnBlocks, 16)),
          c(config.rowBlocks), c(1), c(kThreads), c(1), c(1),
          /*dynamicSharedMemorySize=*/nullptr, /*asyncTokenType=*/nullptr,
          /*asyncDependencies=*/{}, /*workgroupAttributions=*/
          TypeRange{getAbsMaxSharedType(rewriter, *target)});
      OpBuilder::InsertionGuard guard(rewriter);
      rewriter.setInsertionPointToStart(&launch.getBody().front());
      QuantizeKernelBuilder(rewriter, loc, *target, config, input)
          .buildQuantize2D(launch, codes, scales);
      gpu::TerminatorOp::create(rewriter, loc);
    } else {
      auto launch = gpu::LaunchOp::create(rewriter, loc, c(groups), c(1), c(1),
                                          c(kThreads), c(1), c(1));
      OpBuilder::InsertionGuard guard(rewriter);
      rewriter.setInsertionPointToStart(&launch.getBody().front());
      QuantizeKernelBuilder(rewriter, loc, *target, config, input)
          .buildQuantize(launch, codes, scales);
      gpu::TerminatorOp::create(rewriter, loc);
    }

    rewriter.replaceOpWithMultiple(
        op, {getQuantizeResults(rewriter, loc, type, config, codes, scales)});
    return success();
  }

  std::shared_ptr<const TargetInfoBase> target;
};

} // namespace

void mlir::fp4train::populateQuantizeKernelPatterns(
    TypeConverter &converter, RewritePatternSet &patterns,
    std::shared_ptr<const TargetInfoBase> target) {
  patterns.add<QuantizeOpLowering>(converter, patterns.getContext(),
                                   std::move(target));
}
