/*===- capi.c - Plain-C test of libFP4TrainCAPI.so -------------------------===*\
|*                                                                            *|
|* Exercises every group of the C API from C (not C++): registration, parse   *|
|* and pipelines with captured diagnostics, !fp4train.scaled and recipe       *|
|* accessors, the role report, the numerics and the JIT.                      *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

// RUN: fp4train-capi-test %fp4train_src/examples/mlp_train_step.mlir 2>&1 | FileCheck %s

#include "fp4train-c/Dialects.h"
#include "fp4train-c/ExecutionEngine.h"
#include "fp4train-c/Numerics.h"
#include "fp4train-c/Passes.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void printText(MlirStringRef text, void *userData) {
  fprintf((FILE *)userData, "%.*s", (int)text.length, text.data);
}

static void printError(MlirStringRef text, void *userData) {
  (void)userData;
  printf("error: %.*s\n", (int)text.length, text.data);
}

static MlirStringRef str(const char *text) {
  return mlirStringRefCreateFromCString(text);
}

static char *readFile(const char *path) {
  FILE *file = fopen(path, "rb");
  if (!file)
    return NULL;
  fseek(file, 0, SEEK_END);
  long size = ftell(file);
  fseek(file, 0, SEEK_SET);
  char *text = malloc(size + 1);
  size_t read = fread(text, 1, size, file);
  text[read] = '\0';
  fclose(file);
  return text;
}

static MlirContext createContext(void) {
  MlirDialectRegistry registry = mlirDialectRegistryCreate();
  fp4trainRegisterRequiredDialects(registry);
  MlirContext context = mlirContextCreateWithRegistry(registry, false);
  mlirDialectRegistryDestroy(registry);
  return context;
}

static void testDialectHandle(void) {
  MlirDialectHandle handle = mlirGetDialectHandle__fp4train__();
  MlirStringRef ns = mlirDialectHandleGetNamespace(handle);
  printf("handle: %.*s\n", (int)ns.length, ns.data);
  // CHECK-LABEL: handle: fp4train
}

static void testTypes(MlirContext context) {
  MlirType type = mlirTypeParseGet(
      context, str("!fp4train.scaled<256x128xf4E2M1FN, block = [16, 16], "
                   "scale = f8E4M3FN, global>"));
  printf("scaled: %d rank %d dims %lld x %lld blocks %lld x %lld global %d\n",
         fp4trainTypeIsAScaledTensor(type),
         (int)fp4trainScaledTensorTypeGetRank(type),
         (long long)fp4trainScaledTensorTypeGetDimSize(type, 0),
         (long long)fp4trainScaledTensorTypeGetDimSize(type, 1),
         (long long)fp4trainScaledTensorTypeGetBlockSize(type, 0),
         (long long)fp4trainScaledTensorTypeGetBlockSize(type, 1),
         fp4trainScaledTensorTypeHasGlobalScale(type));
  // CHECK-LABEL: scaled: 1 rank 2 dims 256 x 128 blocks 16 x 16 global 1
  printf("element: ");
  mlirTypePrint(fp4trainScaledTensorTypeGetElementType(type), printText,
                stdout);
  printf(" scale: ");
  mlirTypePrint(fp4trainScaledTensorTypeGetScaleType(type), printText, stdout);
  printf("\n");
  // CHECK: element: f4E2M1FN scale: f8E4M3FN

  int64_t shape[] = {64, 30}, block[] = {1, 32};
  MlirType bad = fp4trainScaledTensorTypeGetChecked(
      context, 2, shape, fp4trainScaledTensorTypeGetElementType(type), block,
      mlirTypeParseGet(context, str("f8E8M0FNU")), false, printError, NULL);
  printf("bad type null: %d\n", mlirTypeIsNull(bad));
  // CHECK: error: {{.*}}error: {{.*}}30
  // CHECK: bad type null: 1
}

static void testRecipes(MlirContext context) {
  printf("presets:");
  for (intptr_t i = 0; i < fp4trainRecipeGetNumPresets(); ++i) {
    MlirStringRef name = fp4trainRecipeGetPresetName(i);
    printf(" %.*s", (int)name.length, name.data);
  }
  printf("\n");
  // CHECK-LABEL: presets: nvfp4 {{.*}}mxfp4-hadamard{{.*}} none
  MlirAttribute recipe =
      fp4trainRecipeAttrParse(context, str("mxfp4-hadamard"), printError, NULL);
  MlirAttribute wgrad = fp4trainRecipeAttrGetGemm(recipe, FP4TrainRoleWgrad);
  MlirStringRef format =
      fp4trainQuantAttrGetFormat(fp4trainGemmAttrGetOperand(wgrad, true));
  MlirStringRef signs = fp4trainGemmAttrGetHadamardSigns(wgrad);
  printf("recipe: %d wgrad lhs %.*s hadamard %lld %.*s\n",
         fp4trainAttributeIsARecipe(recipe), (int)format.length, format.data,
         (long long)fp4trainGemmAttrGetHadamardSize(wgrad), (int)signs.length,
         signs.data);
  // CHECK: recipe: 1 wgrad lhs mxfp4 hadamard {{16|32}} fixed

  MlirAttribute custom = fp4trainRecipeAttrParse(
      context,
      str("#fp4train.recipe<name = \"mine\", fprop = <lhs = <format = nvfp4, "
          "rounding = stochastic>, rhs = <format = nvfp4>>, keep_last = 2>"),
      printError, NULL);
  MlirStringRef name = fp4trainRecipeAttrGetName(custom);
  MlirStringRef rounding = fp4trainQuantAttrGetRounding(fp4trainGemmAttrGetOperand(
      fp4trainRecipeAttrGetGemm(custom, FP4TrainRoleFprop), true));
  printf("custom: %.*s keep_last %u dgrad null %d fprop lhs %.*s\n",
         (int)name.length, name.data, fp4trainRecipeAttrGetKeepLast(custom),
         mlirAttributeIsNull(fp4trainRecipeAttrGetGemm(custom, FP4TrainRoleDgrad)),
         (int)rounding.length, rounding.data);
  // CHECK: custom: mine keep_last 2 dgrad null 1 fprop lhs stochastic

  MlirAttribute unknown =
      fp4trainRecipeAttrParse(context, str("fp3"), printError, NULL);
  printf("unknown null: %d\n", mlirAttributeIsNull(unknown));
  // CHECK: error: {{.*}}unknown recipe 'fp3'
  // CHECK: unknown null: 1
}

static void testModule(MlirContext context, const char *path) {
  MlirModule broken = fp4trainModuleCreateParse(
      context, str("func.func @f( {"), printError, NULL);
  printf("broken null: %d\n", mlirModuleIsNull(broken));
  // CHECK-LABEL: error: <input>:1:{{[0-9]+}}: error:
  // CHECK: broken null: 1

  char *text = readFile(path);
  MlirModule module = fp4trainModuleCreateParse(context, str(text), printError,
                                                NULL);
  free(text);
  printf("report:\n");
  fp4trainModuleGetRoleReport(module, str("out-in"), printText, stdout,
                              printError, NULL);
  printf("\n");
  // CHECK-LABEL: report:
  // CHECK: "role":"fprop"
  MlirLogicalResult layout = fp4trainModuleGetRoleReport(
      module, str("sideways"), printText, stdout, printError, NULL);
  printf("bad layout: %d\n", mlirLogicalResultIsFailure(layout));
  // CHECK: error: unknown weight layout 'sideways'
  // CHECK: bad layout: 1

  MlirLogicalResult bad = fp4trainModuleRunPipeline(
      module, str("fp4train-no-such-pass"), printError, NULL);
  printf("bad pipeline: %d\n", mlirLogicalResultIsFailure(bad));
  // CHECK: error: {{.*}}fp4train-no-such-pass
  // CHECK: bad pipeline: 1

  /* The same pipeline with and without the anchor both quantize. */
  MlirModule copy = mlirModuleCreateParse(context, str("module {}"));
  mlirModuleDestroy(copy);
  MlirLogicalResult ok = fp4trainModuleRunPipeline(
      module, str("builtin.module(fp4train-quantize-pipeline{recipe=nvfp4})"),
      printError, NULL);
  printf("quantized: %d\n", mlirLogicalResultIsSuccess(ok));
  // CHECK: quantized: 1
  mlirOperationPrint(mlirModuleGetOperation(module), printText, stdout);
  // CHECK: fp4train.scaled_matmul
  mlirModuleDestroy(module);
}

static void testNumerics(void) {
  float data[64];
  for (int i = 0; i < 64; ++i)
    data[i] = (float)(i - 32) / 8.0f;
  int64_t shape[] = {2, 32}, scalesShape[2];
  FP4TrainQuantOptions options;
  fp4trainQuantOptionsInit(&options);
  options.format = "mxfp4";
  fp4trainQuantizeGetScalesShape(&options, 2, shape, scalesShape, printError,
                                 NULL);
  uint8_t codes[64], scales[2];
  float global[2], deq[64], again[64];
  MlirLogicalResult ok = fp4trainQuantize(&options, 2, shape, data, codes,
                                          scales, global, deq, printError, NULL);
  fp4trainDequantize(&options, 2, shape, codes, scales, 1.0f, again,
                     printError, NULL);
  printf("quantize: %d scales %lldx%lld codes %d %d scale %d deq %g %g same %d\n",
         mlirLogicalResultIsSuccess(ok), (long long)scalesShape[0],
         (long long)scalesShape[1], codes[0], codes[63], scales[0], deq[0],
         deq[63], memcmp(deq, again, sizeof(deq)) == 0);
  // CHECK-LABEL: quantize: 1 scales 2x1 codes {{[0-9]+}} {{[0-9]+}} scale {{[0-9]+}} deq -4 {{.*}} same 1

  options.seed = 3;
  options.hasSeed = true;
  ok = fp4trainQuantize(&options, 2, shape, data, codes, scales, NULL, NULL,
                        printError, NULL);
  printf("seed without sr: %d\n", mlirLogicalResultIsFailure(ok));
  // CHECK: error: seed requires rounding sr or signs random
  // CHECK: seed without sr: 1

  ok = fp4trainHadamardRotate(2, shape, data, 32, "fixed", 0, 0, -1, false,
                              printError, NULL);
  fp4trainHadamardRotate(2, shape, data, 32, "fixed", 0, 0, -1, true,
                         printError, NULL);
  printf("rotate: %d back %g %g\n", mlirLogicalResultIsSuccess(ok), data[0],
         data[63]);
  // CHECK: rotate: 1 back -4 3.875
  ok = fp4trainHadamardRotate(2, shape, data, 12, NULL, 0, 0, -1, false,
                              printError, NULL);
  // CHECK: error: invalid hadamard size 12
}

static void testJit(MlirContext context) {
  const char *source =
      "#map = affine_map<(d0, d1) -> (d0, d1)>\n"
      "func.func @axpy(%x: tensor<2x3xf32>, %a: f32) -> tensor<2x3xf32> {\n"
      "  %e = tensor.empty() : tensor<2x3xf32>\n"
      "  %r = linalg.generic {indexing_maps = [#map, #map], iterator_types = "
      "[\"parallel\", \"parallel\"]} ins(%x : tensor<2x3xf32>) outs(%e : "
      "tensor<2x3xf32>) {\n"
      "  ^bb0(%in: f32, %out: f32):\n"
      "    %m = arith.mulf %in, %a : f32\n"
      "    linalg.yield %m : f32\n"
      "  } -> tensor<2x3xf32>\n"
      "  return %r : tensor<2x3xf32>\n"
      "}\n";
  MlirModule module =
      fp4trainModuleCreateParse(context, str(source), printError, NULL);
  FP4TrainJit missing = fp4trainJitCreate(
      module, str("nope"), str("fp4train-cpu-pipeline{recipe=none}"),
      printError, NULL);
  printf("missing: %d\n", fp4trainJitIsNull(missing));
  // CHECK-LABEL: error: no function @nope
  // CHECK: missing: 1
  FP4TrainJit jit = fp4trainJitCreate(
      module, str("axpy"), str("fp4train-cpu-pipeline{recipe=none}"),
      printError, NULL);
  FP4TrainJitValue x = fp4trainJitGetArgument(jit, 0);
  FP4TrainJitValue a = fp4trainJitGetArgument(jit, 1);
  printf("jit: %d args, %d results, arg0 %lldx%lld bytes %lld, arg1 kind %d\n",
         (int)fp4trainJitGetNumArguments(jit),
         (int)fp4trainJitGetNumResults(jit), (long long)x.shape[0],
         (long long)x.shape[1], (long long)x.elementBytes, (int)a.kind);
  // CHECK: jit: 2 args, 1 results, arg0 2x3 bytes 4, arg1 kind 1
  float input[6] = {1, 2, 3, 4, 5, 6}, scale = 0.5f, output[6] = {0};
  const void *args[] = {input, &scale};
  void *results[] = {output};
  printf("call ok: %d\n", mlirLogicalResultIsSuccess(fp4trainJitCall(
                             jit, args, results, printError, NULL)));
  // CHECK: call ok: 1
  printf("call: %g %g %g %g %g %g\n", output[0], output[1], output[2],
         output[3], output[4], output[5]);
  // CHECK: call: 0.5 1 1.5 2 2.5 3
  fp4trainJitDestroy(jit);

  FP4TrainJit noOut = fp4trainJitCreate(
      module, str("axpy"),
      str("fp4train-cpu-pipeline{recipe=none out-params=false}"), printError,
      NULL);
  printf("no out-params: %d\n", fp4trainJitIsNull(noOut));
  // CHECK: error: {{.*}}out-parameters
  // CHECK: no out-params: 1
  mlirModuleDestroy(module);
}

/// [IDX1] A gather of data-dependent rows: checked by default, an index out
/// of range fails the call with a message; unchecked on request.
static void testCheckedGather(MlirContext context) {
  const char *source =
      "func.func @gather(%table: tensor<4xf32>, %ids: tensor<2xi32>)\n"
      "    -> tensor<2xf32> {\n"
      "  %e = tensor.empty() : tensor<2xf32>\n"
      "  %r = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>,\n"
      "      affine_map<(i) -> (i)>], iterator_types = [\"parallel\"]}\n"
      "      ins(%ids : tensor<2xi32>) outs(%e : tensor<2xf32>) {\n"
      "  ^bb0(%id: i32, %out: f32):\n"
      "    %row = arith.index_cast %id : i32 to index\n"
      "    %v = tensor.extract %table[%row] : tensor<4xf32>\n"
      "    linalg.yield %v : f32\n"
      "  } -> tensor<2xf32>\n"
      "  return %r : tensor<2xf32>\n"
      "}\n";
  MlirModule module =
      fp4trainModuleCreateParse(context, str(source), printError, NULL);
  FP4TrainJit jit = fp4trainJitCreate(
      module, str("gather"), str("fp4train-cpu-pipeline{recipe=none}"),
      printError, NULL);
  float table[4] = {10, 11, 12, 13}, output[2] = {0};
  int32_t good[2] = {3, 0}, bad[2] = {1, 7};
  const void *goodArgs[] = {table, good}, *badArgs[] = {table, bad};
  void *results[] = {output};
  printf("gather in range: %d %g %g\n",
         mlirLogicalResultIsSuccess(
             fp4trainJitCall(jit, goodArgs, results, printError, NULL)),
         output[0], output[1]);
  // CHECK-LABEL: gather in range: 1 13 10
  printf("gather out of range: %d\n",
         mlirLogicalResultIsSuccess(
             fp4trainJitCall(jit, badArgs, results, printError, NULL)));
  // CHECK: error: @gather: index 7 is out of bounds of dimension 0 (size 4) in tensor.extract at <input>:9:{{[0-9]+}}
  // CHECK: gather out of range: 0
  printf("next call in range: %d\n",
         mlirLogicalResultIsSuccess(
             fp4trainJitCall(jit, goodArgs, results, printError, NULL)));
  // CHECK: next call in range: 1
  fp4trainJitDestroy(jit);

  FP4TrainJitOptions options = fp4trainJitOptionsGetDefault();
  options.checkIndices = false;
  FP4TrainJit unchecked = fp4trainJitCreateWithOptions(
      module, str("gather"), str("fp4train-cpu-pipeline{recipe=none}"),
      options, printError, NULL);
  printf("unchecked: %d\n",
         mlirLogicalResultIsSuccess(
             fp4trainJitCall(unchecked, goodArgs, results, printError, NULL)));
  // CHECK: unchecked: 1
  fp4trainJitDestroy(unchecked);
  mlirModuleDestroy(module);
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: fp4train-capi-test mlp_train_step.mlir\n");
    return 2;
  }
  fp4trainRegisterPasses();
  MlirContext context = createContext();
  testDialectHandle();
  testTypes(context);
  testRecipes(context);
  testModule(context, argv[1]);
  testNumerics();
  testJit(context);
  testCheckedGather(context);
  mlirContextDestroy(context);
  printf("done\n");
  // CHECK: done
  return 0;
}
