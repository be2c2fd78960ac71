//===- FP4TrainAttrs.h - fp4train enums and attributes ----------*- C++ -*-===//

#ifndef FP4TRAIN_DIALECT_FP4TRAIN_IR_FP4TRAINATTRS_H
#define FP4TRAIN_DIALECT_FP4TRAIN_IR_FP4TRAINATTRS_H

#include "mlir/IR/Attributes.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectImplementation.h"

#include "fp4train/Dialect/FP4Train/IR/FP4TrainEnums.h.inc"

namespace mlir::fp4train {
/// A set of roles as a bit mask: bit r stands for the Role of value r.
constexpr unsigned roleBit(Role role) { return 1u << unsigned(role); }
constexpr unsigned kAllRoles =
    roleBit(Role::fprop) | roleBit(Role::dgrad) | roleBit(Role::wgrad);

/// Parses and prints the `roles` parameter of #fp4train.recipe:
/// `[fprop, dgrad]`, each role at most once.
FailureOr<unsigned> parseRoleSet(AsmParser &parser);
void printRoleSet(AsmPrinter &printer, unsigned roles);

/// The elements of one 1-D block of `format` along K: 16 for NVFP4, 32 for
/// the MX formats ([MX1], [NV1]).
constexpr int64_t getKBlockSize(Format format) {
  return format == Format::nvfp4 ? 16 : 32;
}

/// Whether `format` has E2M1 elements (MXFP4, NVFP4).
constexpr bool hasE2M1Elements(Format format) {
  return format == Format::mxfp4 || format == Format::nvfp4;
}
} // namespace mlir::fp4train

#define GET_ATTRDEF_CLASSES
#include "fp4train/Dialect/FP4Train/IR/FP4TrainAttrs.h.inc"

#endif // FP4TRAIN_DIALECT_FP4TRAIN_IR_FP4TRAINATTRS_H
