//===- Tcgen05InstrDescriptor.cpp - Block-scaled instruction descriptor ---===//
//
// Sources: PTX ISA
//  - §9.7.16.4.2 "Instruction Descriptor", Table 43 (.kind::mxf8f6f4) and
//    Table 44 (.kind::mxf4, .kind::mxf4nvf4):
//      bits 0-1 reserved, 2 sparsity, 3 reserved, 4-5 matrix B scale factor
//      data id (mxf8f6f4: 0-3; mxf4 kinds: 0 or 2), 6 reserved, 7-9 atype,
//      10-12 btype (mxf8f6f4: E4M3 0, E5M2 1, E2M3 3, E3M2 4, E2M1 5) or
//      10-11 btype and 12 reserved (mxf4 kinds: E2M1 = 1), 13/14 negate A/B,
//      15/16 transpose A/B (mxf4 kinds: no transpose only), 17-22 N >> 3,
//      23 scale type for both scales (UE4M3 = 0, UE8M0 = 1), 24-26 reserved,
//      27-28 M >> 7, 29-30 matrix A scale factor data id, 31 reserved
//      (mxf8f6f4) or K (mxf4 kinds: dense K = 64 is 0, dense K = 96 is 1).
//  - §9.7.16.2.1 Table 39: cta_group::1 block-scaled shapes are 128 x N x K,
//    N = 8..256 in steps of 8, K = 32 (mxf8f6f4) or 64 (mxf4 kinds); K = 96
//    exists for cta_group::2 on sm_103a only; cta_group::2 shapes are
//    128 x N x K or 256 x N x K with N = 16..256 in steps of 16 (the model
//    takes M = 256, Layout A: 128 rows per CTA of the pair).
//  - §9.7.16.10.7.1 Tables 54, 55: mxf8f6f4 takes UE8M0 with scale_vec::1X
//    (.block32); mxf4 UE8M0 with 2X (.block32); mxf4nvf4 UE8M0 with 2X or
//    4X, UE4M3 with 4X (.block16) only.
//  - §9.7.16.10.7.2/3: SF_ID is a byte offset (1X: 0-3), a half-word offset
//    (2X: 0 or 2) and must be 0 for 4X.
//  - §9.7.16.10.3 Table 52 and the CUTLASS cross-reference
//    (cute/arch/mma_sm100_desc.hpp, InstrDescriptorBlockScaled, whose 5-bit
//    M >> 4 field at bits 24-28 encodes M = 128 with the same bit 27): the
//    transposed (MN-major) forms exist for 8-bit types only; the model reads
//    K-major operands and rejects transposes as not modelled.
//
//===----------------------------------------------------------------------===//

#include "fp4train/Emulation/Tcgen05.h"

#include "llvm/Support/FormatVariadic.h"

#include <optional>

using namespace fp4train::emulation::ptx;

namespace {

const char *getKindName(BlockScaleKind kind) {
  switch (kind) {
  case BlockScaleKind::MXF8F6F4:
    return "kind::mxf8f6f4";
  case BlockScaleKind::MXF4:
    return "kind::mxf4";
  case BlockScaleKind::MXF4NVF4:
    return "kind::mxf4nvf4";
  }
  return "kind::?";
}

std::optional<ElementType> getMxf8f6f4Type(uint32_t code) {
  switch (code) {
  case 0:
    return ElementType::E4M3;
  case 1:
    return ElementType::E5M2;
  case 3:
    return ElementType::E2M3;
  case 4:
    return ElementType::E3M2;
  case 5:
    return ElementType::E2M1;
  default:
    return std::nullopt;
  }
}

} // namespace

std::string fp4train::emulation::ptx::decodeInstrDescriptor(
    BlockScaleKind kind, ScaleVec scaleVec, uint32_t bits,
    InstrDescriptor *desc, unsigned ctaGroup) {
  auto field = [&](unsigned lo, unsigned width) {
    return (bits >> lo) & ((1u << width) - 1);
  };
  const std::string prefix =
      llvm::formatv("instruction descriptor {0:x8} ({1}): ", bits,
                    getKindName(kind))
          .str();
  const bool fp4Kind = kind != BlockScaleKind::MXF8F6F4;
  if (field(0, 2) || field(3, 1) || field(6, 1) || field(24, 3) ||
      (fp4Kind && field(12, 1)) || (!fp4Kind && field(31, 1)))
    return prefix + "reserved bits are set";
  if (field(2, 1))
    return prefix + "sparse MMA (bit 2) is not modelled";

  // Element types.
  if (fp4Kind) {
    if (field(7, 3) != 1 || field(10, 2) != 1)
      return prefix + llvm::formatv("atype {0} / btype {1}: the FP4 kinds "
                                    "take E2M1 (code 1) only",
                                    field(7, 3), field(10, 2))
                          .str();
    desc->typeA = desc->typeB = ElementType::E2M1;
  } else {
    std::optional<ElementType> a = getMxf8f6f4Type(field(7, 3)),
                               b = getMxf8f6f4Type(field(10, 3));
    if (!a || !b)
      return prefix + llvm::formatv("atype {0} / btype {1}: kind::mxf8f6f4 "
                                    "takes E4M3 0, E5M2 1, E2M3 3, E3M2 4, "
                                    "E2M1 5",
                                    field(7, 3), field(10, 3))
                          .str();
    desc->typeA = *a;
    desc->typeB = *b;
  }
  desc->negateA = field(13, 1);
  desc->negateB = field(14, 1);
  desc->transposeA = field(15, 1);
  desc->transposeB = field(16, 1);
  if (desc->transposeA || desc->transposeB)
    return prefix + (fp4Kind ? "the FP4 kinds take K-major (untransposed) "
                               "operands only"
                             : "transposed (MN-major) operands are not "
                               "modelled");

  // Shape.
  desc->n = field(17, 6) << 3;
  desc->m = field(27, 2) << 7;
  if (desc->n < 8 || desc->n > 256)
    return prefix + llvm::formatv("N = {0} is outside 8..256", desc->n).str();
  if (ctaGroup == 1 && desc->m != 128)
    return prefix +
           llvm::formatv("M = {0}: cta_group::1 block-scaled MMAs are M = 128",
                         desc->m)
               .str();
  if (ctaGroup == 2) {
    if (desc->m == 128)
      return prefix + "M = 128 with cta_group::2 (Layout B, 64 rows per CTA) "
                      "is not modelled";
    if (desc->m != 256)
      return prefix + llvm::formatv("M = {0}: cta_group::2 block-scaled "
                                    "MMAs are M = 128 or 256",
                                    desc->m)
                          .str();
    if (desc->n % 16)
      return prefix + llvm::formatv("N = {0}: cta_group::2 takes N in steps "
                                    "of 16",
                                    desc->n)
                          .str();
  }
  if (fp4Kind && field(31, 1))
    return prefix + "K = 96 (bit 31, cta_group::2 on sm_103a) is not "
                    "modelled";
  desc->k = fp4Kind ? 64 : 32;

  // Scales.
  desc->scaleFormat = field(23, 1) ? ScaleFormat::UE8M0 : ScaleFormat::UE4M3;
  desc->scaleFactorIdB = field(4, 2);
  desc->scaleFactorIdA = field(29, 2);
  const unsigned vec = static_cast<unsigned>(scaleVec);
  const unsigned expectedVec = kind == BlockScaleKind::MXF8F6F4 ? 1
                               : kind == BlockScaleKind::MXF4   ? 2
                                                                : vec;
  if (vec != expectedVec || (kind == BlockScaleKind::MXF4NVF4 && vec == 1))
    return prefix +
           llvm::formatv("scale_vec::{0}X is not valid for this kind", vec)
               .str();
  if (desc->scaleFormat == ScaleFormat::UE4M3 && vec != 4)
    return prefix + llvm::formatv("UE4M3 scales (bit 23 = 0) need "
                                  "scale_vec::4X (.block16), not {0}X",
                                  vec)
                        .str();
  for (auto [name, id] :
       {std::pair<const char *, unsigned>{"A", desc->scaleFactorIdA},
        {"B", desc->scaleFactorIdB}}) {
    const bool valid = vec == 1   ? true
                       : vec == 2 ? (id == 0 || id == 2)
                                  : id == 0;
    if (!valid)
      return prefix + llvm::formatv("scale factor {0} id {1} is not valid "
                                    "for scale_vec::{2}X ({3})",
                                    name, id, vec,
                                    vec == 2 ? "0 or 2" : "must be 0")
                          .str();
  }
  return {};
}
