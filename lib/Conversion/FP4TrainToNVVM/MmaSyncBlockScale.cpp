//===- MmaSyncBlockScale.cpp - sm_120a block-scaled mma.sync and loaders --===//
//
// The per-lane layouts of the warp-level block-scaled MMAs (PTX ISA
// "Matrix Fragments for mma.m16n8k64" / "mma.m16n8k32" and "Block Scaling
// for mma.sync"; docs/nvvm.md has the derivation). With g = lane >> 2 and
// t = lane % 4:
//
// m16n8k64, E2M1 packed eight per register (element j in bits [4j, 4j + 4)):
//   A register r = A[g + 8 (r % 2)][32 (r / 2) + 8 t + j], j = 0..7;
//   B register r = B[32 r + 8 t + j][g];
// m16n8k32, 8-bit elements four per register (element j in bits [8j, +8)):
//   A register r = A[g + 8 (r % 2)][16 (r / 2) + 4 t + j], j = 0..3;
//   B register r = B[16 r + 4 t + j][g];
// C/D (both): register v = D[g + 8 (v / 2)][2 t + v % 2].
//
// In the skeleton's staging (K-major rows, E2M1 two per byte with element
// 2i in the low nibble of byte i, 8-bit formats one per byte) each register
// is one aligned 32-bit word: byte 32 s + 16 (r / 2) + 4 t of the A row (s
// the instruction's K step within the staged 128) and 32 s + 16 r + 4 t of
// the B^T row, for both element widths.
//
// Scales (selectors byte-id, thread-id): with thread-id-a = 0 the lanes
// with lane % 4 in {0, 1} provide A's scales, lane L those of row
// (L >> 2) + 8 (L & 1); with thread-id-b = 0 lane 4 n provides column n's.
// A lane's scale register is one aligned word of its row's staged scale
// codes, in which K block j of the instruction is byte byte-id + j:
//   MXFP4, scale_vec::2X UE8M0: the row's 4 codes of the step; the first
//     k64 instruction uses bytes 0-1 (byte-id 0), the second 2-3 (2);
//   NVFP4, scale_vec::4X UE4M3: word s of the row's 8 codes, byte-id 0;
//   MXFP8, scale_vec::1X UE8M0 (m16n8k32): the row's 4 codes, byte-id s.
// Every other lane loads the same rows too (a valid address; the
// instruction ignores their registers). The lane-exact emulation checks
// all of this against models written from the PTX ISA (docs/emulation.md).
//
//===----------------------------------------------------------------------===//

#include "BlackwellTargetInfo.h"
#include "LaneMath.h"

#include "fp4train/Conversion/FP4TrainCommon/Codecs.h"
#include "fp4train/Dialect/FP4Train/IR/FP4TrainOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mlir::fp4train;

namespace {

NVVM::MMATypes getPtxType(Type element) {
  if (isa<Float4E2M1FNType>(element))
    return NVVM::MMATypes::e2m1;
  if (isa<Float8E4M3FNType>(element))
    return NVVM::MMATypes::e4m3;
  return NVVM::MMATypes::e5m2;
}

} // namespace

std::pair<Value, Value>
MmaSyncTargetInfo::getAccumulatorPosition(OpBuilder &b, Location loc,
                                          Value lane, int64_t index) const {
  return LaneMath{b, loc}.getAccumulatorPosition(lane, index);
}

void MmaSyncBlockScaleTargetInfo::buildStepMMAs(
    OpBuilder &b, Location loc, const StagedTiles &tiles, Value buffer,
    Value lane, Value rowA, Value rowB, MutableArrayRef<Value> accs) const {
  LaneMath lm{b, loc};
  GemmTiling tiling = getTiling();
  Value memory = tiles.getMemory();
  Type i16 = b.getI16Type(), f32 = b.getF32Type();
  bool nvfp4 = isa<Float8E4M3FNType>(tiles.getScaleType(0));

  // One aligned 32-bit word of shared memory at byte `offset`.
  auto loadWord = [&](Value offset) { return lm.loadWord(memory, offset); };
  auto i16Const = [&](int64_t v) -> Value {
    return arith::ConstantIntOp::create(b, loc, i16, v);
  };

  Value g = lm.shr(lane, 2);
  Value t4 = lm.mul(lm.band(lane, 3), 4);
  // The A row whose scales this lane provides: (L >> 2) + 8 (L & 1).
  Value scaleRowA = lm.add(g, lm.mul(lm.band(lane, 1), 8));

  auto structType = LLVM::LLVMStructType::getLiteral(b.getContext(),
                                                     SmallVector<Type>(4, f32));
  NVVM::MMATypes ptxA = getPtxType(tiles.getElementType(0));
  NVVM::MMATypes ptxB = getPtxType(tiles.getElementType(1));
  NVVM::ScaleVecSize scaleVec = !fp4    ? NVVM::ScaleVecSize::X1
                                : nvfp4 ? NVVM::ScaleVecSize::X4
                                        : NVVM::ScaleVecSize::X2;
  NVVM::BlockScaleFormat scaleFormat =
      nvfp4 ? NVVM::BlockScaleFormat::UE4M3 : NVVM::BlockScaleFormat::UE8M0;
  NVVM::MMABlockScaleKind kind = !fp4    ? NVVM::MMABlockScaleKind::MXF8F6F4
                                 : nvfp4 ? NVVM::MMABlockScaleKind::MXF4NVF4
                                         : NVVM::MMABlockScaleKind::MXF4;
  Value threadId = i16Const(0);

  for (int64_t s = 0; s < kGemmTileK / getK(); ++s) {
    // Scale word and byte-id of this instruction (see the file comment).
    int64_t scaleWord = nvfp4 ? s : 0;
    int64_t byteId = nvfp4 ? 0 : fp4 ? 2 * s : s;
    Value byteIdValue = i16Const(byteId);
    Value scaleBlock = lm.c(4 * scaleWord);

    SmallVector<SmallVector<Value, 4>> aRegs;
    SmallVector<Value> aScale;
    for (int64_t i = 0; i < tiling.repM; ++i) {
      Value tileRow = lm.add(rowA, 16 * i);
      SmallVector<Value, 4> regs;
      for (int64_t r = 0; r < 4; ++r) {
        Value row = lm.add(lm.add(tileRow, g), 8 * (r % 2));
        Value kByte = lm.add(t4, 32 * s + 16 * (r / 2));
        regs.push_back(
            loadWord(tiles.getCodesOffset(b, loc, 0, buffer, row, kByte)));
      }
      aRegs.push_back(regs);
      aScale.push_back(loadWord(tiles.getScaleOffset(
          b, loc, 0, buffer, lm.add(tileRow, scaleRowA), scaleBlock)));
    }
    SmallVector<SmallVector<Value, 2>> bRegs;
    SmallVector<Value> bScale;
    for (int64_t j = 0; j < tiling.repN; ++j) {
      Value row = lm.add(lm.add(rowB, 8 * j), g);
      SmallVector<Value, 2> regs;
      for (int64_t r = 0; r < 2; ++r) {
        Value kByte = lm.add(t4, 32 * s + 16 * r);
        regs.push_back(
            loadWord(tiles.getCodesOffset(b, loc, 1, buffer, row, kByte)));
      }
      bRegs.push_back(regs);
      bScale.push_back(
          loadWord(tiles.getScaleOffset(b, loc, 1, buffer, row, scaleBlock)));
    }

    for (int64_t i = 0; i < tiling.repM; ++i)
      for (int64_t j = 0; j < tiling.repN; ++j) {
        Value &d = accs[i * tiling.repN + j];
        SmallVector<Value, 4> c;
        for (int64_t v = 0; v < 4; ++v)
          c.push_back(vector::ExtractOp::create(b, loc, d, v));
        Value result = NVVM::MmaBlockScaleOp::create(
            b, loc, structType, aRegs[i], bRegs[j], c, aScale[i], byteIdValue,
            threadId, bScale[j], byteIdValue, threadId,
            ArrayRef<int64_t>{16, 8, getK()},
            std::array<NVVM::MMATypes, 2>{ptxA, ptxB}, scaleVec, scaleFormat,
            kind);
        SmallVector<Value, 4> out;
        for (int64_t v = 0; v < 4; ++v)
          out.push_back(LLVM::ExtractValueOp::create(b, loc, result, v));
        d = vector::FromElementsOp::create(b, loc, d.getType(), out);
      }
  }
}

SmallVector<Value> mlir::fp4train::buildCvtRNSatfinitePairs(
    ImplicitLocOpBuilder &b, Type element,
    const TargetInfoBase::ScaledBlock &block) {
  bool fp4 = isa<Float4E2M1FNType>(element);
  Type i8 = b.getI8Type(), i16 = b.getI16Type();
  SmallVector<Value> quads;
  for (Value quad : TargetInfoBase::scaleBlock(b, block)) {
    SmallVector<Value, 4> codes;
    for (int64_t p = 0; p < 4; p += 2) {
      Value lo = vector::ExtractOp::create(b, quad, p);
      Value hi = vector::ExtractOp::create(b, quad, p + 1);
      if (fp4) {
        // cvt d, hi, lo: lo's code in the low nibble, hi's in the high one,
        // the [PK1] byte of the pair.
        codes.push_back(NVVM::ConvertF32x2ToF4x2Op::create(
            b, i8, hi, lo, /*relu=*/b.getBoolAttr(false),
            TypeAttr::get(element)));
      } else {
        Value pair = NVVM::ConvertF32x2ToF8x2Op::create(
            b, i16, hi, lo, NVVM::FPRoundingMode::RN,
            NVVM::SaturationMode::SATFINITE, /*relu=*/false, element);
        codes.push_back(arith::TruncIOp::create(b, i8, pair));
        codes.push_back(arith::TruncIOp::create(
            b, i8,
            arith::ShRUIOp::create(b, pair,
                                   arith::ConstantIntOp::create(b, i16, 8))));
      }
    }
    quads.push_back(vector::FromElementsOp::create(
        b, VectorType::get({int64_t(codes.size())}, i8), codes));
  }
  return quads;
}

std::optional<SmallVector<Value>>
BlackwellTargetInfo::buildConvertRNE(ImplicitLocOpBuilder &b, Type element,
                                     const ScaledBlock &block) const {
  // cvt.rn.satfinite.{e2m1x2,e4m3x2}.f32 d, hi, lo computes the library's
  // encodeRNESat of each scaled input x * factor: RNE on the target grid
  // with its subnormals, magnitudes past the largest finite value (and Inf)
  // to it, the sign kept (also on zero); NaN to 0x7 (E2M1, as the library's
  // E2M1 NaN code) or 0x7F (E4M3; the MX kernels replace the codes of NaN
  // blocks anyway, [MX3]). E5M2 keeps the integer recipe.
  if (!isa<Float4E2M1FNType, Float8E4M3FNType>(element))
    return std::nullopt;
  return buildCvtRNSatfinitePairs(b, element, block);
}

std::optional<SmallVector<Value>>
BlackwellTargetInfo::buildConvertStochasticE2M1(ImplicitLocOpBuilder &b,
                                                const ScaledBlock &block,
                                                ArrayRef<Value> words) const {
  // sr=hardware: cvt.rs.satfinite.e2m1x4.f32 d, {a, b, e, f}, rbits (PTX
  // ISA "cvt": d[15:12] = convert(a) ... d[3:0] = convert(f); a and b round
  // with the upper bytes of rbits' two halves, e and f with the lower
  // ones). Element i gets the top byte of its [SR1] word words[i] at the
  // byte the instruction reads for it: a 31..24, e 23..16, b 15..8, f 7..0
  // (the assignment within a pair follows .f16x2, whose a takes the upper
  // half). 8 of [SR1]'s 22 decision bits: the codes differ from [SR1] in
  // fewer than 2^-8 of the draws (lib/Emulation/PTX/CvtRsE2M1x4.cpp).
  if (!hardwareStochasticRounding)
    return std::nullopt;
  Type i8 = b.getI8Type(), i16 = b.getI16Type();
  auto c32 = [&](uint32_t v) { return codecs::i32Const(b, v); };
  constexpr unsigned kByteOf[4] = {24, 8, 16, 0};
  SmallVector<Value> quads;
  for (auto [w, quad] : llvm::enumerate(scaleBlock(b, block))) {
    Value rbits;
    for (int64_t k = 0; k < 4; ++k) {
      Value top = arith::ShRUIOp::create(b, words[4 * w + k], c32(24));
      Value placed = arith::ShLIOp::create(b, top, c32(kByteOf[k]));
      rbits =
          rbits ? arith::OrIOp::create(b, rbits, placed).getResult() : placed;
    }
    // sm_103a: the intrinsic by name, as its tcgen05 kernels take theirs
    // ([PTX1] in docs/nvvm.md; MLIR 22.1.8's chip check itself accepts
    // this op on sm_103a).
    Value d =
        getTarget().nvvmOpsByIntrinsicName
            ? LLVM::CallIntrinsicOp::create(
                  b, i16,
                  b.getStringAttr("llvm.nvvm.f32x4.to.e2m1x4.rs.satfinite"),
                  ValueRange{quad, rbits})
                  .getResult(0)
            : NVVM::ConvertF32x4ToF4x4Op::create(
                  b, i16, quad, rbits, /*relu=*/b.getBoolAttr(false),
                  TypeAttr::get(b.getType<Float4E2M1FNType>()))
                  .getResult();
    // Element k is in d[15 - 4k : 12 - 4k]; [PK1] wants it at bit 4k.
    SmallVector<Value, 4> codes;
    for (int64_t k = 0; k < 4; ++k) {
      Value shifted = arith::ShRUIOp::create(
          b, d, arith::ConstantIntOp::create(b, i16, 12 - 4 * k));
      codes.push_back(arith::TruncIOp::create(
          b, i8,
          arith::AndIOp::create(b, shifted,
                                arith::ConstantIntOp::create(b, i16, 0xF))));
    }
    quads.push_back(packStoredE2M1Quad(b, codes));
  }
  return quads;
}
