/*===- consumer.c - A C program of another project using the C API --------===*/

#include "fp4train-c/Dialects.h"
#include "fp4train-c/Numerics.h"
#include "fp4train-c/Passes.h"

#include <stdio.h>

static void print(MlirStringRef text, void *userData) {
  fwrite(text.data, 1, text.length, (FILE *)userData);
}

int main(void) {
  MlirDialectRegistry registry = mlirDialectRegistryCreate();
  fp4trainRegisterRequiredDialects(registry);
  MlirContext context = mlirContextCreateWithRegistry(registry, false);
  mlirDialectRegistryDestroy(registry);
  fp4trainRegisterPasses();

  MlirAttribute recipe = fp4trainRecipeAttrParse(
      context, mlirStringRefCreateFromCString("nvfp4"), print, stderr);
  printf("recipe: ");
  mlirAttributePrint(recipe, print, stdout);
  printf("\n");

  float x[32];
  for (int i = 0; i < 32; ++i)
    x[i] = (float)i;
  int64_t shape[] = {1, 32};
  uint8_t codes[32], scales[1];
  FP4TrainQuantOptions options;
  fp4trainQuantOptionsInit(&options);
  options.format = "mxfp4";
  MlirLogicalResult ok = fp4trainQuantize(&options, 2, shape, x, codes, scales,
                                          NULL, NULL, print, stderr);
  printf("quantize: %d scale %d\n", mlirLogicalResultIsSuccess(ok), scales[0]);
  mlirContextDestroy(context);
  return mlirLogicalResultIsSuccess(ok) ? 0 : 1;
}
