//===- FP4TrainDialect.cpp - fp4train dialect -----------------------------===//
//
// Dialect registration and verification of the dialect's discardable
// attributes (`fp4train.param`, `fp4train.role`, `fp4train.index_checks`).
//
//===----------------------------------------------------------------------===//

#include "fp4train/Dialect/FP4Train/IR/FP4TrainOps.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/Interfaces/FunctionInterfaces.h"

using namespace mlir;
using namespace mlir::fp4train;

#include "fp4train/Dialect/FP4Train/IR/FP4TrainDialect.cpp.inc"

void FP4TrainDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "fp4train/Dialect/FP4Train/IR/FP4Train.cpp.inc"
      >();
  registerAttributes();
  registerTypes();
}

/// The fields of the `fp4train.role` of `op` name things `op` has: an
/// argument of its function, one of its operands and a dimension of it.
static LogicalResult verifyRoleFields(Operation *op, RoleAttr role) {
  auto fail = [&]() {
    return op->emitError() << "'" << FP4TrainDialect::kRoleAttrName << "' "
                           << role << " ";
  };
  if (std::optional<unsigned> weight = role.getWeight()) {
    auto function = op->getParentOfType<FunctionOpInterface>();
    if (!function || *weight >= function.getNumArguments())
      return fail() << "names argument #" << *weight
                    << ", which the enclosing function does not have";
  }
  std::optional<unsigned> operand = role.getOperand();
  if (operand && *operand >= op->getNumOperands())
    return fail() << "names operand #" << *operand << " of an op with "
                  << op->getNumOperands() << " operands";
  if (std::optional<unsigned> contracted = role.getContracted()) {
    auto type = dyn_cast<ShapedType>(op->getOperand(*operand).getType());
    if (!type || !type.hasRank() || *contracted >= type.getRank())
      return fail() << "names dimension " << *contracted << " of operand #"
                    << *operand << " of type "
                    << op->getOperand(*operand).getType();
  }
  return success();
}

LogicalResult FP4TrainDialect::verifyOperationAttribute(Operation *op,
                                                        NamedAttribute attr) {
  StringRef name = attr.getName().getValue();
  if (name == kRoleAttrName) {
    auto role = dyn_cast<RoleAttr>(attr.getValue());
    if (!role)
      return op->emitError()
             << "'" << kRoleAttrName
             << "' must be a #fp4train.role attribute, got " << attr.getValue();
    return verifyRoleFields(op, role);
  }
  if (name == kParamAttrName)
    return op->emitError() << "'" << kParamAttrName
                           << "' is only valid on function arguments";
  if (name == kIndexChecksAttrName) {
    auto sites = dyn_cast<ArrayAttr>(attr.getValue());
    if (!isa<ModuleOp>(op) || !sites ||
        !llvm::all_of(sites, [](Attribute a) { return isa<StringAttr>(a); }))
      return op->emitError() << "'" << kIndexChecksAttrName
                             << "' must be an array of strings on a module";
    return success();
  }
  if (name == kProcessTypeAttrName) {
    auto type = dyn_cast<TypeAttr>(attr.getValue());
    if (!type || !isa<FunctionType>(type.getValue()))
      return op->emitError()
             << "'" << kProcessTypeAttrName << "' must be a function type, got "
             << attr.getValue();
    return success();
  }
  return op->emitError() << "unknown fp4train attribute '" << name << "'";
}

/// Fails unless argument `argIndex` of `op` is a function argument marked
/// {fp4train.param}: the marks that qualify a parameter (`name`) need one.
static LogicalResult verifyOnParameter(Operation *op, unsigned regionIndex,
                                       unsigned argIndex, StringRef name) {
  auto function = dyn_cast<FunctionOpInterface>(op);
  if (function && regionIndex == 0 &&
      function.getArgAttr(argIndex, FP4TrainDialect::kParamAttrName))
    return success();
  return op->emitError() << "'" << name << "' is only valid on a parameter ({"
                         << FP4TrainDialect::kParamAttrName << "})";
}

LogicalResult FP4TrainDialect::verifyRegionArgAttribute(Operation *op,
                                                        unsigned regionIndex,
                                                        unsigned argIndex,
                                                        NamedAttribute attr) {
  StringRef name = attr.getName().getValue();
  if (name == kBlockAttrName) {
    // [BLK1] a parameter's decoder block.
    auto block = dyn_cast<IntegerAttr>(attr.getValue());
    if (!block || !block.getType().isSignlessInteger(64) ||
        block.getValue().isNegative())
      return op->emitError()
             << "'" << kBlockAttrName << "' must be a non-negative i64, got "
             << attr.getValue();
    return verifyOnParameter(op, regionIndex, argIndex, name);
  }
  if (name == kRouterAttrName) {
    // [MOE1] a mixture-of-experts router.
    if (!isa<UnitAttr>(attr.getValue()))
      return op->emitError()
             << "'" << kRouterAttrName << "' must be a unit attribute";
    return verifyOnParameter(op, regionIndex, argIndex, name);
  }
  if (name != kParamAttrName)
    return op->emitError() << "unknown fp4train argument attribute '" << name
                           << "'";
  if (!isa<UnitAttr>(attr.getValue()))
    return op->emitError() << "'" << kParamAttrName
                           << "' must be a unit attribute";
  auto function = dyn_cast<FunctionOpInterface>(op);
  if (!function || regionIndex != 0)
    return op->emitError() << "'" << kParamAttrName
                           << "' is only valid on function arguments";
  // Read the signature, not the entry block: declarations have no body.
  // Parameters stay marked through bufferization, so later stages can still
  // find them.
  Type type = function.getArgumentTypes()[argIndex];
  if (!isa<RankedTensorType, MemRefType>(type))
    return op->emitError() << "'" << kParamAttrName << "' on argument #"
                           << argIndex
                           << " needs a ranked tensor or memref, got " << type;
  return success();
}
