//===- FP4TrainTypes.h - fp4train types -------------------------*- C++ -*-===//

#ifndef FP4TRAIN_DIALECT_FP4TRAIN_IR_FP4TRAINTYPES_H
#define FP4TRAIN_DIALECT_FP4TRAIN_IR_FP4TRAINTYPES_H

#include "fp4train/Dialect/FP4Train/IR/FP4TrainAttrs.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Types.h"

#include <optional>

#define GET_TYPEDEF_CLASSES
#include "fp4train/Dialect/FP4Train/IR/FP4TrainTypes.h.inc"

#endif // FP4TRAIN_DIALECT_FP4TRAIN_IR_FP4TRAINTYPES_H
