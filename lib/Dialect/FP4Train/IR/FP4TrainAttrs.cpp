//===- FP4TrainAttrs.cpp - fp4train attributes ----------------------------===//

#include "fp4train/Dialect/FP4Train/IR/FP4TrainOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace mlir::fp4train;

#include "fp4train/Dialect/FP4Train/IR/FP4TrainEnums.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "fp4train/Dialect/FP4Train/IR/FP4TrainAttrs.cpp.inc"

void FP4TrainDialect::registerAttributes() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "fp4train/Dialect/FP4Train/IR/FP4TrainAttrs.cpp.inc"
      >();
}

/// Returns true for formats whose elements are E2M1, the only elements
/// stochastic rounding is defined for [SR1].
static bool hasE2M1Elements(Format format) {
  return format == Format::mxfp4 || format == Format::nvfp4;
}

//===----------------------------------------------------------------------===//
// HadamardAttr
//===----------------------------------------------------------------------===//

LogicalResult HadamardAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                   int64_t size, HadamardSigns signs,
                                   ArrayRef<int32_t> signVector) {
  // [H1]: n = 16, 32, 64, 128, 256.
  if (size < 16 || size > 256 || !llvm::isPowerOf2_64(size))
    return emitError() << "Hadamard size must be a power of two in [16, 256], "
                          "got "
                       << size;
  if (signVector.empty())
    return success();
  if (signs != HadamardSigns::fixed)
    return emitError() << "an explicit sign vector needs `fixed` signs, got `"
                       << stringifyHadamardSigns(signs) << "`";
  if (static_cast<int64_t>(signVector.size()) != size)
    return emitError() << "expected " << size << " signs, got "
                       << signVector.size();
  for (int32_t s : signVector)
    if (s != 1 && s != -1)
      return emitError() << "signs must be +1 or -1, got " << s;
  return success();
}

//===----------------------------------------------------------------------===//
// QuantSpecAttr
//===----------------------------------------------------------------------===//

LogicalResult
QuantSpecAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                      Format format, RoundingMode rounding,
                      ScaleMode scaleMode) {
  if (rounding == RoundingMode::stochastic && !hasE2M1Elements(format))
    return emitError() << "stochastic rounding is only defined for E2M1 "
                          "formats, not "
                       << stringifyFormat(format);
  if (scaleMode == ScaleMode::rceil && format == Format::nvfp4)
    return emitError() << "scale_mode rceil applies to E8M0-scaled (MX) "
                          "formats only, not nvfp4";
  return success();
}

//===----------------------------------------------------------------------===//
// RecipeAttr
//===----------------------------------------------------------------------===//

LogicalResult RecipeAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                 StringRef name, GemmRecipeAttr fprop,
                                 GemmRecipeAttr dgrad, GemmRecipeAttr wgrad,
                                 bool weights2d, unsigned keepFirst,
                                 unsigned keepLast) {
  if (!weights2d)
    return success();
  // [NV1] 2-D weight blocks: one quantized weight serves Fprop and, through
  // a transposed view, Dgrad. That needs NVFP4 (the only 16x16 format), one
  // quantization for both roles, and no rotation that would differ between
  // the two contraction dimensions.
  // Both arrays are named locals: an ArrayRef built from a braced list
  // inside the range expression would point at a temporary that dies before
  // the loop body runs (stack-use-after-scope).
  GemmRecipeAttr weightRoles[] = {fprop, dgrad};
  StringLiteral roleNames[] = {"fprop", "dgrad"};
  for (auto [role, gemm] : llvm::zip_equal(roleNames, weightRoles)) {
    if (!gemm)
      continue;
    if (gemm.getRhs().getFormat() != Format::nvfp4)
      return emitError() << "2-D weight blocks need an nvfp4 weight, but the "
                         << role << " weight is "
                         << stringifyFormat(gemm.getRhs().getFormat());
    if (gemm.getHadamard())
      return emitError() << "2-D weight blocks cannot be combined with a "
                            "Hadamard rotation on "
                         << role;
  }
  if (fprop && dgrad && fprop.getRhs() != dgrad.getRhs())
    return emitError() << "with 2-D weight blocks the fprop and dgrad weights "
                          "must be quantized identically";
  return success();
}

GemmRecipeAttr RecipeAttr::getForRole(Role role) const {
  switch (role) {
  case Role::fprop:
    return getFprop();
  case Role::dgrad:
    return getDgrad();
  case Role::wgrad:
    return getWgrad();
  }
  llvm_unreachable("unknown role");
}
