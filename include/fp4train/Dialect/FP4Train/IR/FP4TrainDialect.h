//===- FP4TrainDialect.h - fp4train dialect ---------------------*- C++ -*-===//
//
// The fp4train dialect class. Include FP4TrainOps.h for the whole dialect.
//
//===----------------------------------------------------------------------===//

#ifndef FP4TRAIN_DIALECT_FP4TRAIN_IR_FP4TRAINDIALECT_H
#define FP4TRAIN_DIALECT_FP4TRAIN_IR_FP4TRAINDIALECT_H

#include "mlir/IR/Dialect.h"

#include "fp4train/Dialect/FP4Train/IR/FP4TrainDialect.h.inc"

#endif // FP4TRAIN_DIALECT_FP4TRAIN_IR_FP4TRAINDIALECT_H
