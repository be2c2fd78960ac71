//===- FP4TrainAttrs.h - fp4train enums and attributes ----------*- C++ -*-===//

#ifndef FP4TRAIN_DIALECT_FP4TRAIN_IR_FP4TRAINATTRS_H
#define FP4TRAIN_DIALECT_FP4TRAIN_IR_FP4TRAINATTRS_H

#include "mlir/IR/Attributes.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectImplementation.h"

#include "fp4train/Dialect/FP4Train/IR/FP4TrainEnums.h.inc"

#define GET_ATTRDEF_CLASSES
#include "fp4train/Dialect/FP4Train/IR/FP4TrainAttrs.h.inc"

#endif // FP4TRAIN_DIALECT_FP4TRAIN_IR_FP4TRAINATTRS_H
