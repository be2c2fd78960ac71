//===- FP4TrainOps.h - fp4train operations ----------------------*- C++ -*-===//
//
// The whole fp4train dialect: the dialect class, its attributes, types and
// operations.
//
//===----------------------------------------------------------------------===//

#ifndef FP4TRAIN_DIALECT_FP4TRAIN_IR_FP4TRAINOPS_H
#define FP4TRAIN_DIALECT_FP4TRAIN_IR_FP4TRAINOPS_H

#include "fp4train/Dialect/FP4Train/IR/FP4TrainAttrs.h"
#include "fp4train/Dialect/FP4Train/IR/FP4TrainDialect.h"
#include "fp4train/Dialect/FP4Train/IR/FP4TrainTypes.h"
#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#define GET_OP_CLASSES
#include "fp4train/Dialect/FP4Train/IR/FP4Train.h.inc"

#endif // FP4TRAIN_DIALECT_FP4TRAIN_IR_FP4TRAINOPS_H
