//===- Pipelines.cpp - fp4train pass pipelines ----------------------------===//

#include "fp4train/Pipelines/Pipelines.h"

#include "fp4train/Dialect/FP4Train/Transforms/Passes.h"

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;
using namespace mlir::fp4train;

void mlir::fp4train::buildQuantizePipeline(
    OpPassManager &pm, const QuantizePipelineOptions &options) {
  FP4TrainAnnotateRolesOptions annotate;
  annotate.params = llvm::to_vector(options.params);
  annotate.weightLayout = options.weightLayout;
  pm.addPass(createFP4TrainAnnotateRoles(annotate));

  FP4TrainQuantizeMatmulsOptions quantize;
  quantize.recipe = options.recipe;
  quantize.params = llvm::to_vector(options.params);
  quantize.weightLayout = options.weightLayout;
  quantize.stochasticRounding = options.stochasticRounding;
  quantize.hadamard = options.hadamard;
  quantize.hadamardSigns = options.hadamardSigns;
  quantize.scaleMode = options.scaleMode;
  quantize.weights2d = options.weights2d;
  quantize.keepFirst = options.keepFirst;
  quantize.keepLast = options.keepLast;
  quantize.stepArg = options.stepArg;
  quantize.pad = options.pad;
  quantize.report = options.report;
  pm.addPass(createFP4TrainQuantizeMatmuls(quantize));

  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
}

void mlir::fp4train::registerPipelines() {
  PassPipelineRegistration<QuantizePipelineOptions>(
      "fp4train-quantize-pipeline",
      "Annotate roles, quantize Fprop/Dgrad/Wgrad contractions by a recipe, "
      "and clean up",
      buildQuantizePipeline);
}
