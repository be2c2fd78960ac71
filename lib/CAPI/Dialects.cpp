//===- Dialects.cpp - C API of the fp4train dialect -----------------------===//

#include "fp4train-c/Dialects.h"

#include "Diagnostics.h"

#include "fp4train/Dialect/FP4Train/IR/FP4TrainOps.h"
#include "fp4train/Dialect/FP4Train/IR/FP4TrainRecipes.h"
#include "fp4train/InitFP4Train.h"

#include "mlir/CAPI/IR.h"
#include "mlir/CAPI/Registration.h"
#include "mlir/CAPI/Support.h"

using namespace mlir;
using namespace mlir::fp4train;

MLIR_DEFINE_CAPI_DIALECT_REGISTRATION(FP4Train, fp4train,
                                      fp4train::FP4TrainDialect)

void fp4trainRegisterRequiredDialects(MlirDialectRegistry registry) {
  fp4train::registerAllDialects(*unwrap(registry));
}

//===----------------------------------------------------------------------===//
// !fp4train.scaled
//===----------------------------------------------------------------------===//

bool fp4trainTypeIsAScaledTensor(MlirType type) {
  return isa<ScaledTensorType>(unwrap(type));
}

MlirType fp4trainScaledTensorTypeGetChecked(
    MlirContext context, intptr_t rank, const int64_t *shape,
    MlirType elementType, const int64_t *blockShape, MlirType scaleType,
    bool hasGlobalScale, MlirStringCallback onError, void *userData) {
  MLIRContext *ctx = unwrap(context);
  if (mlirTypeIsNull(elementType) || mlirTypeIsNull(scaleType) || rank < 0) {
    capi::reportError(onError, userData,
                      "a scaled tensor type needs an element type, a scale "
                      "type and a non-negative rank");
    return {nullptr};
  }
  capi::DiagnosticCapture capture(ctx);
  auto type = ScaledTensorType::getChecked(
      [&] { return emitError(UnknownLoc::get(ctx)); }, ctx,
      llvm::ArrayRef(shape, rank), unwrap(elementType),
      llvm::ArrayRef(blockShape, rank), unwrap(scaleType), hasGlobalScale);
  if (!type)
    capture.report(onError, userData, "invalid !fp4train.scaled type");
  return wrap(type);
}

intptr_t fp4trainScaledTensorTypeGetRank(MlirType type) {
  return cast<ScaledTensorType>(unwrap(type)).getRank();
}

int64_t fp4trainScaledTensorTypeGetDimSize(MlirType type, intptr_t dim) {
  return cast<ScaledTensorType>(unwrap(type)).getShape()[dim];
}

int64_t fp4trainScaledTensorTypeGetBlockSize(MlirType type, intptr_t dim) {
  return cast<ScaledTensorType>(unwrap(type)).getBlockShape()[dim];
}

MlirType fp4trainScaledTensorTypeGetElementType(MlirType type) {
  return wrap(cast<ScaledTensorType>(unwrap(type)).getElementType());
}

MlirType fp4trainScaledTensorTypeGetScaleType(MlirType type) {
  return wrap(cast<ScaledTensorType>(unwrap(type)).getScaleType());
}

bool fp4trainScaledTensorTypeHasGlobalScale(MlirType type) {
  return cast<ScaledTensorType>(unwrap(type)).getHasGlobalScale();
}

//===----------------------------------------------------------------------===//
// #fp4train.recipe and its parts
//===----------------------------------------------------------------------===//

bool fp4trainAttributeIsARecipe(MlirAttribute attr) {
  return isa<RecipeAttr>(unwrap(attr));
}

MlirAttribute fp4trainRecipeAttrParse(MlirContext context, MlirStringRef text,
                                      MlirStringCallback onError,
                                      void *userData) {
  MLIRContext *ctx = unwrap(context);
  ctx->getOrLoadDialect<FP4TrainDialect>();
  capi::DiagnosticCapture capture(ctx);
  RecipeAttr recipe = parseRecipe(UnknownLoc::get(ctx), unwrap(text));
  if (!recipe)
    capture.report(onError, userData, "invalid recipe");
  return wrap(recipe);
}

intptr_t fp4trainRecipeGetNumPresets(void) {
  return getRecipePresetNames().size();
}

MlirStringRef fp4trainRecipeGetPresetName(intptr_t pos) {
  return wrap(getRecipePresetNames()[pos]);
}

MlirStringRef fp4trainRecipeAttrGetName(MlirAttribute attr) {
  return wrap(cast<RecipeAttr>(unwrap(attr)).getName());
}

bool fp4trainRecipeAttrGetWeights2D(MlirAttribute attr) {
  return cast<RecipeAttr>(unwrap(attr)).getWeights_2d();
}

unsigned fp4trainRecipeAttrGetKeepFirst(MlirAttribute attr) {
  return cast<RecipeAttr>(unwrap(attr)).getKeepFirst();
}

unsigned fp4trainRecipeAttrGetKeepLast(MlirAttribute attr) {
  return cast<RecipeAttr>(unwrap(attr)).getKeepLast();
}

MlirAttribute fp4trainRecipeAttrGetGemm(MlirAttribute attr, FP4TrainRole role) {
  return wrap(
      cast<RecipeAttr>(unwrap(attr)).getForRole(static_cast<Role>(role)));
}

MlirAttribute fp4trainGemmAttrGetOperand(MlirAttribute gemm, bool lhs) {
  auto attr = cast<GemmRecipeAttr>(unwrap(gemm));
  return wrap(lhs ? attr.getLhs() : attr.getRhs());
}

int64_t fp4trainGemmAttrGetHadamardSize(MlirAttribute gemm) {
  HadamardAttr hadamard = cast<GemmRecipeAttr>(unwrap(gemm)).getHadamard();
  return hadamard ? hadamard.getSize() : 0;
}

MlirStringRef fp4trainGemmAttrGetHadamardSigns(MlirAttribute gemm) {
  HadamardAttr hadamard = cast<GemmRecipeAttr>(unwrap(gemm)).getHadamard();
  return wrap(hadamard ? stringifyHadamardSigns(hadamard.getSigns())
                       : llvm::StringRef());
}

MlirStringRef fp4trainQuantAttrGetFormat(MlirAttribute q) {
  return wrap(stringifyFormat(cast<QuantSpecAttr>(unwrap(q)).getFormat()));
}

MlirStringRef fp4trainQuantAttrGetRounding(MlirAttribute q) {
  return wrap(
      stringifyRoundingMode(cast<QuantSpecAttr>(unwrap(q)).getRounding()));
}

MlirStringRef fp4trainQuantAttrGetScaleMode(MlirAttribute q) {
  return wrap(
      stringifyScaleMode(cast<QuantSpecAttr>(unwrap(q)).getScaleMode()));
}
