//===- QuantizeOpLowering.cpp - MX quantize to a gfx950 kernel ------------===//
//
// fp4train.quantize with an MX result (E2M1, E4M3 or E5M2 elements, E8M0
// scales), round-to-nearest-even or (E2M1 only) [SR1] stochastic rounding,
// blocks of 32 along the last dimension, becomes a gpu.launch of a kernel
// with one lane per block:
//
//  - the lane loads its 32 consecutive elements (16-byte vectors), extends
//    bf16/f16 to f32 (exact) and takes the block amax as the integer max of
//    the f32 magnitude bits (NaN > Inf > finite), as the host lowering;
//  - the E8M0 scale code is the host's codecs::mxScaleCode ([MX1] floor or
//    [MX2] rceil, clamped to [0, 254], 0xFF for a NaN/Inf block [MX3]);
//  - pairs of elements are converted by amdgpu.packed_scaled_trunc
//    (v_cvt_scalef32_pk_{fp4,fp8,bf8}_f32) with the f32 scale operand
//    `code << 23`, whose exponent field is the scale code: the instruction
//    divides by 2^(code - 127), i.e. multiplies by the library's
//    inverseE8M0(code), and rounds to nearest even (docs/amdgpu.md states
//    this assumption and why it equals the library's
//    encodeRNESat(x * inverseE8M0(code)));
//  - [MX1] floor scales can leave |x| / 2^(code-127) above the largest
//    finite element; the kernel clamps x to +-maxFinite * 2^(code-127)
//    (exact, a power-of-two multiple) first, so the result is the library's
//    satfinite one whatever the instruction does on overflow;
//  - stochastic rounding: the lane computes the [SR1] words of its 32
//    elements (8 Philox4x32-10 calls, one per 4 consecutive elements, with
//    the host's codecs::philox4x32_10) and converts ONE element per
//    rocdl.cvt.scalef32.sr.pk.fp4.f32 (v_cvt_scalef32_sr_pk_fp4_f32): the
//    instruction rounds both elements of its pair with the same word, so each
//    element gets its own instruction and word and the kernel keeps the
//    nibble of that element (docs/amdgpu.md; the instruction computes the
//    library's encodeE2M1Stochastic of the scaled value, docs/numerics.md §4);
//  - a NaN/Inf block gets scale 0xFF and element codes 0 written explicitly
//    ([MX3]), not through the instruction;
//  - codes are unpacked to one per byte (the 1:N type conversion's layout)
//    and stored as 16-byte vectors; the scale code as one byte.
//
// The input is flattened to 1-D (blocks along the last dimension are
// contiguous runs of 32), the results are reshaped back, so the rest of the
// module sees exactly the host lowering's tensors.
//
//===----------------------------------------------------------------------===//

#include "fp4train/Conversion/FP4TrainToAMDGPU/FP4TrainToAMDGPU.h"

#include "fp4train/Conversion/FP4TrainToStandard/Codecs.h"
#include "fp4train/Dialect/FP4Train/IR/FP4TrainOps.h"

#include "mlir/Dialect/AMDGPU/IR/AMDGPUDialect.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/ROCDLDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mlir::fp4train;
namespace num = ::fp4train::numerics;

/// Elements per MX block (one lane each), and threads per workgroup.
static constexpr int64_t kBlock = 32;
static constexpr int64_t kThreads = 256;

bool mlir::fp4train::isQuantizeOnGPU(QuantizeOp op,
                                     const amdgpu::Chipset &chipset) {
  if (!hasScaledMFMA(chipset))
    return false;
  ScaledTensorType type = op.getResult().getType();
  if (!isa<Float8E8M0FNUType>(type.getScaleType()) || type.getHasGlobalScale())
    return false;
  if (!isa<Float4E2M1FNType, Float8E4M3FNType, Float8E5M2Type>(
          type.getElementType()))
    return false;
  // [SR1] v_cvt_scalef32_sr_pk_fp4_f32 (the verifier allows SR for E2M1
  // only).
  if (op.getRounding() == RoundingMode::stochastic &&
      !isa<Float4E2M1FNType>(type.getElementType()))
    return false;
  ArrayRef<int64_t> block = type.getBlockShape();
  if (block.empty() || block.back() != kBlock)
    return false;
  for (int64_t b : block.drop_back())
    if (b != 1)
      return false;
  Type input = op.getInput().getType().getElementType();
  return input.isF32() || input.isBF16() || input.isF16();
}

namespace {

/// Elements [offset, offset + size) of a 1-D vector, as a vector.shuffle
/// (which, unlike vector.extract_strided_slice, lowers straight to LLVM).
Value slice(OpBuilder &b, Location loc, Value v, int64_t offset,
            int64_t size) {
  return vector::ShuffleOp::create(
      b, loc, v, v, llvm::to_vector(llvm::seq<int64_t>(offset, offset + size)));
}

class QuantizeKernelBuilder {
public:
  /// `seed` (i64) is the [SR1] seed of a stochastic quantize, null for RNE.
  QuantizeKernelBuilder(OpBuilder &b, Location loc, Value input, Value codes,
                        Value scales, int64_t numBlocks, Type element,
                        bool rceil, Value seed)
      : b(b), loc(loc), input(input), codes(codes), scales(scales),
        numBlocks(numBlocks), element(element), rceil(rceil), seed(seed) {}

  void build(gpu::LaunchOp launch);

private:
  Value index(int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); }
  void buildBlock(Value block);
  /// The block's 32 elements as 8 vector<4xf32>.
  SmallVector<Value> loadBlock(Value base);
  /// [SR1] The block's 32 E2M1 codes, one per byte, as 8 i32 words (element
  /// 4w + k in byte k of word w), from the clamped elements `x`.
  SmallVector<Value> convertStochastic(ImplicitLocOpBuilder &ib, Value block,
                                       ArrayRef<Value> x, Value scale);

  OpBuilder &b;
  Location loc;
  Value input, codes, scales;
  int64_t numBlocks;
  Type element;
  bool rceil;
  Value seed;
};

SmallVector<Value> QuantizeKernelBuilder::loadBlock(Value base) {
  auto memrefType = cast<MemRefType>(input.getType());
  Type inputElement = memrefType.getElementType();
  int64_t width = inputElement.getIntOrFloatBitWidth();
  int64_t perLoad = 128 / width; // 16-byte vectors
  SmallVector<Value> quads;
  for (int64_t i = 0; i < kBlock; i += perLoad) {
    Value offset = arith::AddIOp::create(b, loc, base, index(i));
    auto loadType = VectorType::get({perLoad}, inputElement);
    Value v = vector::LoadOp::create(b, loc, loadType, input,
                                     ValueRange{offset},
                                     /*nontemporal=*/false, llvm::Align(16));
    if (!inputElement.isF32())
      v = arith::ExtFOp::create(
          b, loc, VectorType::get({perLoad}, b.getF32Type()), v);
    for (int64_t j = 0; j < perLoad; j += 4)
      quads.push_back(
          perLoad == 4
              ? v
              : slice(b, loc, v, j, 4));
  }
  return quads;
}

void QuantizeKernelBuilder::buildBlock(Value block) {
  ImplicitLocOpBuilder ib(loc, b);
  const num::MiniFloatFormat &format = codecs::getMiniFloatFormat(element);
  Type i32 = b.getI32Type(), f32 = b.getF32Type(), i8 = b.getI8Type();
  auto i32x4 = VectorType::get({4}, i32);
  auto i8x16 = VectorType::get({16}, i8);
  auto i8x4 = VectorType::get({4}, i8);
  auto splatI32 = [&](uint32_t v) -> Value {
    return arith::ConstantOp::create(
        ib, DenseElementsAttr::get(i32x4, APInt(32, v)));
  };

  Value base = arith::MulIOp::create(ib, block, index(kBlock));
  SmallVector<Value> x = loadBlock(base);

  // Block amax: integer max of the magnitude bits, as buildBlockAbsMax.
  Value maxBits;
  for (Value q : x) {
    Value bits = arith::AndIOp::create(
        ib, vector::BitCastOp::create(ib, i32x4, q), splatI32(0x7FFFFFFFu));
    maxBits = maxBits ? arith::MaxUIOp::create(ib, maxBits, bits).getResult()
                      : bits;
  }
  // The 4 partial maxima, combined as scalars (v_max3_u32).
  Value amaxBits;
  for (int64_t k = 0; k < 4; ++k) {
    Value lane = vector::ExtractOp::create(ib, maxBits, k);
    amaxBits = amaxBits ? arith::MaxUIOp::create(ib, amaxBits, lane).getResult()
                        : lane;
  }
  Value code =
      codecs::mxScaleCode(ib, codecs::f32FromBits(ib, amaxBits), format, rceil);
  Value code32 = arith::ExtUIOp::create(ib, i32, code);
  Value nonFinite = arith::CmpIOp::create(ib, arith::CmpIPredicate::eq, code32,
                                          codecs::i32Const(ib, 0xFF));

  // The instruction's scale: an f32 whose exponent field is the code.
  Value scale = codecs::f32FromBits(
      ib, arith::ShLIOp::create(ib, code32, codecs::i32Const(ib, 23)));

  // [MX1] floor: clamp to +-maxFinite * 2^(code - 127) (exact; the code is
  // at most 254 - emax there, so the bound is a finite normal f32).
  if (!rceil) {
    Value boundBits = arith::AddIOp::create(
        ib,
        arith::ShLIOp::create(ib, code32, codecs::i32Const(ib, 23)),
        codecs::i32Const(ib, format.maxFiniteF32Bits - (127u << 23)));
    Value bound = vector::BroadcastOp::create(
        ib, VectorType::get({4}, f32), codecs::f32FromBits(ib, boundBits));
    Value negBound = arith::NegFOp::create(ib, bound);
    // No NaN reaches here but in [MX3] blocks, whose codes are replaced:
    // nnan lets the clamp be one v_med3_f32, without canonicalizes.
    auto nnan = arith::FastMathFlags::nnan;
    for (Value &q : x)
      q = arith::MaxNumFOp::create(
          ib, arith::MinNumFOp::create(ib, q, bound, nnan), negBound, nnan);
  }

  // Convert pairs; collect 4-byte words of codes (one code per byte).
  bool fp4 = isa<Float4E2M1FNType>(element);
  SmallVector<Value> words; // vector<4xi8>, 8 of them
  auto pairOf = [&](int64_t e) -> Value {
    return slice(ib, loc, x[e / 4], e % 4, 2);
  };
  if (seed) {
    auto i32x1 = VectorType::get({1}, i32);
    for (Value word : convertStochastic(ib, block, x, scale))
      words.push_back(vector::BitCastOp::create(
          ib, i8x4, vector::FromElementsOp::create(ib, i32x1, word)));
  } else if (fp4) {
    auto packedType = VectorType::get({8}, element);
    auto i32x1 = VectorType::get({1}, i32);
    Value lowNibbles = arith::ConstantOp::create(
        ib, DenseElementsAttr::get(i32x1, APInt(32, 0x0F0F0F0Fu)));
    Value four = arith::ConstantOp::create(
        ib, DenseElementsAttr::get(i32x1, APInt(32, 4)));
    for (int64_t w = 0; w < 4; ++w) {
      Value packed;
      for (int64_t p = 0; p < 4; ++p)
        packed = amdgpu::PackedScaledTruncOp::create(
            ib, packedType, pairOf(8 * w + 2 * p), scale, p, packed);
      // Byte p holds element 2p in its low nibble, 2p + 1 in its high one:
      // even and odd codes on 32-bit words, then byte permutes.
      Value word = vector::BitCastOp::create(ib, i32x1, packed);
      Value even = vector::BitCastOp::create(
          ib, i8x4, arith::AndIOp::create(ib, word, lowNibbles));
      Value odd = vector::BitCastOp::create(
          ib, i8x4,
          arith::AndIOp::create(ib, arith::ShRUIOp::create(ib, word, four),
                                lowNibbles));
      words.push_back(vector::ShuffleOp::create(ib, even, odd,
                                                ArrayRef<int64_t>{0, 4, 1, 5}));
      words.push_back(vector::ShuffleOp::create(ib, even, odd,
                                                ArrayRef<int64_t>{2, 6, 3, 7}));
    }
  } else {
    auto packedType = VectorType::get({4}, element);
    for (int64_t w = 0; w < 8; ++w) {
      Value packed;
      for (int64_t p = 0; p < 2; ++p)
        packed = amdgpu::PackedScaledTruncOp::create(
            ib, packedType, pairOf(4 * w + 2 * p), scale, p, packed);
      words.push_back(vector::BitCastOp::create(ib, i8x4, packed));
    }
  }

  // Two 16-byte stores; [MX3] a NaN/Inf block's codes are 0.
  Value zeros = arith::ConstantOp::create(ib, ib.getZeroAttr(i8x16));
  for (int64_t half = 0; half < 2; ++half) {
    Value lo = vector::ShuffleOp::create(ib, words[4 * half],
                                         words[4 * half + 1],
                                         ArrayRef<int64_t>{0, 1, 2, 3, 4, 5, 6, 7});
    Value hi = vector::ShuffleOp::create(ib, words[4 * half + 2],
                                         words[4 * half + 3],
                                         ArrayRef<int64_t>{0, 1, 2, 3, 4, 5, 6, 7});
    Value v = vector::ShuffleOp::create(
        ib, lo, hi,
        ArrayRef<int64_t>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14,
                          15});
    v = arith::SelectOp::create(ib, nonFinite, zeros, v);
    Value offset = arith::AddIOp::create(ib, base, index(16 * half));
    vector::StoreOp::create(b, loc, v, codes, ValueRange{offset},
                            /*nontemporal=*/false, llvm::Align(16));
  }
  memref::StoreOp::create(ib, code, scales, ValueRange{block});
}

SmallVector<Value>
QuantizeKernelBuilder::convertStochastic(ImplicitLocOpBuilder &ib, Value block,
                                         ArrayRef<Value> x, Value scale) {
  Type i32 = ib.getI32Type(), i64 = ib.getI64Type();
  auto c32 = [&](uint32_t v) { return codecs::i32Const(ib, v); };
  // [SR1] key = {lo, hi of seed}; the word of element i is word i & 3 of
  // philox(counter = {lo, hi of i >> 2, 0, 0}). Element 4w + k of the block
  // has i >> 2 = 8 block + w and i & 3 = k: one call per 4 elements.
  Value key0 = arith::TruncIOp::create(ib, i32, seed);
  Value key1 = arith::TruncIOp::create(
      ib, i32, arith::ShRUIOp::create(ib, seed, codecs::i64Const(ib, 32)));
  // Counters are below numel / 4; their high word is 0 up to 2^34 elements.
  int64_t numElements = numBlocks * kBlock;
  bool wideCounter = (numElements >> 2) > (int64_t(1) << 32);
  Value counterBase = arith::MulIOp::create(
      ib,
      arith::IndexCastUIOp::create(ib, wideCounter ? i64 : i32, block)
          .getResult(),
      wideCounter ? codecs::i64Const(ib, kBlock / 4) : c32(kBlock / 4));
  Value zero = c32(0);

  SmallVector<Value> words;
  for (int64_t w = 0; w < kBlock / 4; ++w) {
    Value counter = arith::AddIOp::create(ib, counterBase,
                                          wideCounter ? codecs::i64Const(ib, w)
                                                      : c32(uint32_t(w)));
    Value counterLo = counter, counterHi = zero;
    if (wideCounter) {
      counterLo = arith::TruncIOp::create(ib, i32, counter);
      counterHi = arith::TruncIOp::create(
          ib, i32,
          arith::ShRUIOp::create(ib, counter, codecs::i64Const(ib, 32)));
    }
    std::array<Value, 4> rbits = codecs::philox4x32_10(
        ib, {counterLo, counterHi, zero, zero}, {key0, key1});
    // One instruction per element, each with its own word: the instruction
    // rounds both elements of its source pair with the one seed it is given
    // and writes the pair's byte (element 0 of the pair in the low nibble)
    // into byte k of its result. Element 4w + k is element k % 2 of the pair
    // (x[4w + (k & ~1)], x[4w + (k | 1)]), already an aligned register pair,
    // so byte k holds its code in the low nibble for even k and in the high
    // nibble for odd k.
    //
    // Only that byte is used: LLVM 22 does not tie the instruction's
    // destination to its `old` operand (in AMDGPU's VOP3Instructions.td an
    // inner `Constraints = "@earlyclobber $vdst"` replaces the outer
    // "$vdst = $vdst_in" for the v_cvt_scalef32_sr_pk_fp4_* group), so the
    // bytes the instruction does not write are whatever the allocated
    // register held. Each result is therefore masked to its own nibble
    // instead of chaining `old` through the four instructions.
    Value word;
    for (int64_t k = 0; k < 4; ++k) {
      Value converted = ROCDL::CvtScaleF32SrPkFp4F32Op::create(
          ib, i32, zero, slice(ib, loc, x[w], k & ~int64_t(1), 2), rbits[k],
          scale, uint32_t(k));
      if (k % 2)
        converted = arith::ShRUIOp::create(ib, converted, c32(4));
      Value code = arith::AndIOp::create(ib, converted, c32(0xFu << (8 * k)));
      word = word ? arith::OrIOp::create(ib, word, code).getResult() : code;
    }
    words.push_back(word);
  }
  return words;
}

void QuantizeKernelBuilder::build(gpu::LaunchOp launch) {
  Value block = arith::AddIOp::create(
      b, loc,
      arith::MulIOp::create(b, loc, launch.getBlockIds().x, index(kThreads)),
      launch.getThreadIds().x);
  if (numBlocks % kThreads == 0) {
    buildBlock(block);
    return;
  }
  Value inRange = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                                        block, index(numBlocks));
  auto ifOp = scf::IfOp::create(b, loc, inRange, /*withElse=*/false);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(ifOp.thenBlock());
  buildBlock(block);
}

/// The reassociation collapsing every dimension of a rank-`rank` tensor.
static SmallVector<ReassociationIndices> allDims(int64_t rank) {
  return {llvm::to_vector(llvm::seq<int64_t>(0, rank))};
}

static Value flatten(OpBuilder &b, Location loc, Value tensor) {
  auto type = cast<RankedTensorType>(tensor.getType());
  if (type.getRank() == 1)
    return tensor;
  return tensor::CollapseShapeOp::create(b, loc, tensor,
                                         allDims(type.getRank()));
}

static Value unflatten(OpBuilder &b, Location loc, Value tensor,
                       ArrayRef<int64_t> shape) {
  auto type = RankedTensorType::get(
      shape, cast<RankedTensorType>(tensor.getType()).getElementType());
  if (shape.size() == 1)
    return tensor;
  return tensor::ExpandShapeOp::create(b, loc, type, tensor,
                                       allDims(shape.size()));
}

struct QuantizeOpLowering : public OpConversionPattern<QuantizeOp> {
  QuantizeOpLowering(TypeConverter &converter, MLIRContext *context,
                     amdgpu::Chipset chipset)
      : OpConversionPattern(converter, context, /*benefit=*/2),
        chipset(chipset) {}

  LogicalResult
  matchAndRewrite(QuantizeOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (!isQuantizeOnGPU(op, chipset))
      return rewriter.notifyMatchFailure(
          op, "not an MX quantize (RNE, or SR to E2M1) blocked by 32 along "
              "the last dim");
    Location loc = op.getLoc();
    ScaledTensorType type = op.getResult().getType();
    int64_t numElements = type.getNumElements();
    int64_t numBlocks = numElements / kBlock;

    Value flat = flatten(rewriter, loc, adaptor.getInput());
    auto flatType = cast<RankedTensorType>(flat.getType());
    Value input = bufferization::ToBufferOp::create(
        rewriter, loc,
        MemRefType::get(flatType.getShape(), flatType.getElementType()), flat,
        rewriter.getUnitAttr());
    auto codesType = MemRefType::get({numElements}, rewriter.getI8Type());
    auto scalesType = MemRefType::get({numBlocks}, rewriter.getI8Type());
    Value codes = memref::AllocOp::create(rewriter, loc, codesType,
                                          rewriter.getI64IntegerAttr(64));
    Value scales = memref::AllocOp::create(rewriter, loc, scalesType,
                                           rewriter.getI64IntegerAttr(64));

    auto c = [&](int64_t v) -> Value {
      return arith::ConstantIndexOp::create(rewriter, loc, v);
    };
    auto launch = gpu::LaunchOp::create(
        rewriter, loc, c(llvm::divideCeil(numBlocks, kThreads)), c(1), c(1),
        c(kThreads), c(1), c(1));
    {
      OpBuilder::InsertionGuard guard(rewriter);
      rewriter.setInsertionPointToStart(&launch.getBody().front());
      QuantizeKernelBuilder builder(
          rewriter, loc, input, codes, scales, numBlocks, type.getElementType(),
          op.getScaleMode() == ScaleMode::rceil,
          op.getRounding() == RoundingMode::stochastic ? adaptor.getSeed()
                                                       : Value());
      builder.build(launch);
      gpu::TerminatorOp::create(rewriter, loc);
    }

    auto toTensor = [&](Value buffer) -> Value {
      return bufferization::ToTensorOp::create(
          rewriter, loc,
          memref::getTensorTypeFromMemRefType(buffer.getType()), buffer,
          rewriter.getUnitAttr(), rewriter.getUnitAttr());
    };
    SmallVector<Value> results = {
        unflatten(rewriter, loc, toTensor(codes), type.getShape()),
        unflatten(rewriter, loc, toTensor(scales), type.getScalesShape())};
    rewriter.replaceOpWithMultiple(op, {results});
    return success();
  }

  amdgpu::Chipset chipset;
};

} // namespace

void mlir::fp4train::populateFP4TrainQuantizeToAMDGPUPatterns(
    TypeConverter &converter, RewritePatternSet &patterns,
    amdgpu::Chipset chipset) {
  patterns.add<QuantizeOpLowering>(converter, patterns.getContext(), chipset);
}
