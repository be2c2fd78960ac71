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

/// Parses a comma-separated role list as pass options spell it
/// (`fprop,dgrad`); nothing when a name is not a role or repeats.
std::optional<unsigned> parseRoleList(llvm::ArrayRef<std::string> names);
} // namespace mlir::fp4train

#define GET_ATTRDEF_CLASSES
#include "fp4train/Dialect/FP4Train/IR/FP4TrainAttrs.h.inc"

#endif // FP4TRAIN_DIALECT_FP4TRAIN_IR_FP4TRAINATTRS_H
