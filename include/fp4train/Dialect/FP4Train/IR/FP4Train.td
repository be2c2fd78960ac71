//===- FP4Train.td - fp4train dialect aggregator -----------*- tablegen -*-===//
//
// Pulls together every definition of the fp4train dialect so that a single
// tablegen invocation sees the whole dialect (op, type and attribute
// generators, and the documentation generator).
//
//===----------------------------------------------------------------------===//

#ifndef FP4TRAIN_DIALECT_FP4TRAIN_IR_FP4TRAIN_TD
#define FP4TRAIN_DIALECT_FP4TRAIN_IR_FP4TRAIN_TD

include "fp4train/Dialect/FP4Train/IR/FP4TrainDialect.td"
include "fp4train/Dialect/FP4Train/IR/FP4TrainEnums.td"
include "fp4train/Dialect/FP4Train/IR/FP4TrainAttrs.td"
include "fp4train/Dialect/FP4Train/IR/FP4TrainTypes.td"
include "fp4train/Dialect/FP4Train/IR/FP4TrainOps.td"

#endif // FP4TRAIN_DIALECT_FP4TRAIN_IR_FP4TRAIN_TD
