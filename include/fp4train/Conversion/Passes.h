//===- Passes.h - fp4train conversion passes --------------------*- C++ -*-===//

#ifndef FP4TRAIN_CONVERSION_PASSES_H
#define FP4TRAIN_CONVERSION_PASSES_H

#include "fp4train/Conversion/FP4TrainToAMDGPU/FP4TrainToAMDGPU.h"
#include "fp4train/Conversion/FP4TrainToNVVM/FP4TrainToNVVM.h"
#include "fp4train/Conversion/FP4TrainToStandard/FP4TrainToStandard.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Pass/Pass.h"

namespace mlir {
namespace fp4train {

#define GEN_PASS_DECL
#include "fp4train/Conversion/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "fp4train/Conversion/Passes.h.inc"

} // namespace fp4train
} // namespace mlir

#endif // FP4TRAIN_CONVERSION_PASSES_H
