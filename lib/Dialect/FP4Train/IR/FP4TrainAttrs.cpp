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
// GemmRecipeAttr
//===----------------------------------------------------------------------===//

LogicalResult
GemmRecipeAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                       QuantSpecAttr lhs, QuantSpecAttr rhs,
                       HadamardAttr hadamard, HadamardPrecision precision,
                       GemmAlpha alpha) {
  // [H2] The precision of rotated operands: nothing without a rotation.
  if (precision != HadamardPrecision::f32 && !hadamard)
    return emitError() << "hadamard_precision = "
                       << stringifyHadamardPrecision(precision)
                       << " needs a hadamard rotation";
  // [TE2] TransformerEngine's factor is made of NVFP4 tensor amaxes.
  if (alpha == GemmAlpha::amax &&
      (lhs.getFormat() != Format::nvfp4 || rhs.getFormat() != Format::nvfp4))
    return emitError() << "alpha = amax needs two nvfp4 operands (a tensor "
                          "amax each), got "
                       << stringifyFormat(lhs.getFormat()) << " and "
                       << stringifyFormat(rhs.getFormat());
  return success();
}

//===----------------------------------------------------------------------===//
// RecipeAttr
//===----------------------------------------------------------------------===//

LogicalResult RecipeAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                 StringRef name, GemmRecipeAttr fprop,
                                 GemmRecipeAttr dgrad, GemmRecipeAttr wgrad,
                                 bool weights2d, unsigned keepFirst,
                                 unsigned keepLast, unsigned roles,
                                 unsigned keepFirstBlocks,
                                 unsigned keepLastBlocks, bool quantizeRouter,
                                 bool perExpertGlobalScale) {
  if (roles == 0 || (roles & ~kAllRoles))
    return emitError() << "roles must name one or more of fprop, dgrad and "
                          "wgrad (the recipe `none` quantizes nothing)";
  // A role named explicitly must have a GEMM recipe to apply; the default
  // (every role) means every role the recipe has.
  if (roles != kAllRoles) {
    GemmRecipeAttr gemms[] = {fprop, dgrad, wgrad};
    for (auto [value, gemm] : llvm::enumerate(gemms))
      if ((roles & roleBit(Role(value))) && !gemm)
        return emitError() << "roles names " << stringifyRole(Role(value))
                           << ", but the recipe has no "
                           << stringifyRole(Role(value)) << " GEMM";
  }
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

bool RecipeAttr::hasRole(Role role) const { return getRoles() & roleBit(role); }

GemmRecipeAttr RecipeAttr::getForRole(Role role) const {
  if (!hasRole(role))
    return {};
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

//===----------------------------------------------------------------------===//
// Role sets
//===----------------------------------------------------------------------===//

FailureOr<unsigned> mlir::fp4train::parseRoleSet(AsmParser &parser) {
  unsigned roles = 0;
  auto parseOne = [&]() -> ParseResult {
    SMLoc loc = parser.getCurrentLocation();
    StringRef name;
    if (parser.parseKeyword(&name))
      return failure();
    std::optional<Role> role = symbolizeRole(name);
    if (!role)
      return parser.emitError(loc, "expected fprop, dgrad or wgrad, got '")
             << name << "'";
    if (roles & roleBit(*role))
      return parser.emitError(loc, "role '") << name << "' is listed twice";
    roles |= roleBit(*role);
    return success();
  };
  if (parser.parseCommaSeparatedList(AsmParser::Delimiter::Square, parseOne))
    return failure();
  return roles;
}

void mlir::fp4train::printRoleSet(AsmPrinter &printer, unsigned roles) {
  static constexpr Role allRoles[] = {Role::fprop, Role::dgrad, Role::wgrad};
  printer << '[';
  llvm::interleaveComma(
      llvm::make_filter_range(allRoles,
                              [&](Role role) { return roles & roleBit(role); }),
      printer, [&](Role role) { printer << stringifyRole(role); });
  printer << ']';
}

//===----------------------------------------------------------------------===//
// RoleAttr
//===----------------------------------------------------------------------===//

/// The optional fields of #fp4train.role, in their printed order.
static constexpr StringLiteral kRoleFields[] = {"weight", "operand",
                                                "contracted"};

Attribute RoleAttr::parse(AsmParser &parser, Type) {
  SMLoc loc = parser.getCurrentLocation();
  StringRef name;
  if (parser.parseLess() || parser.parseKeyword(&name))
    return {};
  std::optional<Role> role = symbolizeRole(name);
  if (!role) {
    parser.emitError(loc, "expected fprop, dgrad or wgrad, got '")
        << name << "'";
    return {};
  }
  std::optional<unsigned> fields[std::size(kRoleFields)];
  while (succeeded(parser.parseOptionalComma())) {
    SMLoc keyLoc = parser.getCurrentLocation();
    StringRef key;
    unsigned value;
    if (parser.parseKeyword(&key) || parser.parseEqual() ||
        parser.parseInteger(value))
      return {};
    const StringLiteral *it = llvm::find(kRoleFields, key);
    if (it == std::end(kRoleFields)) {
      parser.emitError(keyLoc, "expected weight, operand or contracted, got '")
          << key << "'";
      return {};
    }
    std::optional<unsigned> &field = fields[it - std::begin(kRoleFields)];
    if (field) {
      parser.emitError(keyLoc, "'") << key << "' is given twice";
      return {};
    }
    field = value;
  }
  if (parser.parseGreater())
    return {};
  return getChecked([&] { return parser.emitError(loc); }, parser.getContext(),
                    *role, fields[0], fields[1], fields[2]);
}

void RoleAttr::print(AsmPrinter &printer) const {
  printer << '<' << stringifyRole(getValue());
  std::optional<unsigned> fields[] = {getWeight(), getOperand(),
                                      getContracted()};
  for (auto [name, field] : llvm::zip_equal(kRoleFields, fields))
    if (field)
      printer << ", " << name << " = " << *field;
  printer << '>';
}

LogicalResult RoleAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                               Role role, std::optional<unsigned> weight,
                               std::optional<unsigned> operand,
                               std::optional<unsigned> contracted) {
  if (operand && *operand > 1)
    return emitError() << "operand must be 0 or 1, got " << *operand;
  if (contracted && (role == Role::wgrad || !operand))
    return emitError() << "contracted needs the weight operand of an fprop "
                          "or dgrad role";
  return success();
}
