//===- CAPIFuzzer.cpp - The C API the Python package is built on ----------===//
//
// Input: one selector byte, then text or bytes, through the C API only (the
// calls `fp4train.Context().parse`, `Module.run_pipeline` and the compiled
// functions of `fp4train.compile` make):
//
// - 0: the text as a module (fp4trainModuleCreateParse): deep nesting,
//   malformed IR; a failure must come with an error message;
// - 1: the text as a pass pipeline (fp4trainModuleRunPipeline) on a small
//   training step, anchored or nested anywhere (`func.func(...)`,
//   `any(...)`, `builtin.module(...)`); only fp4train passes and pipelines
//   and anchors, so that upstream passes' own bugs stay out of the way;
// - 2: the bytes as token ids of a gather compiled once with the index
//   checks on ([IDX1]): the call must succeed exactly when every id is in
//   range, and then return the table's rows.
//
// A crash, a sanitizer report, a failure without a message or a wrong
// answer of the checked gather is a finding.
//
//===----------------------------------------------------------------------===//

#include "FuzzText.h"

#include "fp4train-c/Dialects.h"
#include "fp4train-c/ExecutionEngine.h"
#include "fp4train-c/Passes.h"

#include "mlir-c/IR.h"

#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace {

const char kStep[] = R"mlir(
func.func @train_step(%x: tensor<32x64xf32>, %w: tensor<16x64xf32> {fp4train.param}) -> tensor<32x16xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<32x16xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<32x16xf32>) -> tensor<32x16xf32>
  %y = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %w : tensor<32x64xf32>, tensor<16x64xf32>) outs(%init : tensor<32x16xf32>) -> tensor<32x16xf32>
  return %y : tensor<32x16xf32>
}
)mlir";

const char kGather[] = R"mlir(
func.func @gather(%table: tensor<5x2xf32>, %ids: tensor<4xi32>) -> tensor<4x2xf32> {
  %e = tensor.empty() : tensor<4x2xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i)>, affine_map<(i, j) -> (i, j)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%ids : tensor<4xi32>) outs(%e : tensor<4x2xf32>) {
  ^bb0(%id: i32, %out: f32):
    %row = arith.index_cast %id : i32 to index
    %col = linalg.index 1 : index
    %v = tensor.extract %table[%row, %col] : tensor<5x2xf32>
    linalg.yield %v : f32
  } -> tensor<4x2xf32>
  return %r : tensor<4x2xf32>
}
)mlir";

struct Messages {
  std::string text;
  static void append(MlirStringRef part, void *userData) {
    static_cast<Messages *>(userData)->text.append(part.data, part.length);
  }
};

MlirStringRef ref(llvm::StringRef text) {
  return mlirStringRefCreate(text.data(), text.size());
}

[[noreturn]] void finding(const std::string &what) {
  std::fprintf(stderr, "fuzzer finding: %s\n", what.c_str());
  std::abort();
}

MlirContext createContext() {
  MlirDialectRegistry registry = mlirDialectRegistryCreate();
  fp4trainRegisterRequiredDialects(registry);
  MlirContext context = mlirContextCreateWithRegistry(registry, false);
  mlirDialectRegistryDestroy(registry);
  return context;
}

void fuzzParse(llvm::StringRef text) {
  MlirContext context = createContext();
  Messages messages;
  MlirModule module = fp4trainModuleCreateParse(context, ref(text),
                                                &Messages::append, &messages);
  if (mlirModuleIsNull(module)) {
    if (messages.text.empty())
      finding("a parse failed without a message");
  } else {
    mlirModuleDestroy(module);
  }
  mlirContextDestroy(context);
}

void fuzzPipeline(llvm::StringRef text) {
  if (!mlir::fp4train::fuzz::namesOnlyOurPasses(text) ||
      mlir::fp4train::fuzz::touchesTheMachine(text))
    return;
  MlirContext context = createContext();
  MlirModule module =
      fp4trainModuleCreateParse(context, ref(kStep), nullptr, nullptr);
  if (mlirModuleIsNull(module))
    finding("the training step does not parse");
  Messages messages;
  if (mlirLogicalResultIsFailure(fp4trainModuleRunPipeline(
          module, ref(text), &Messages::append, &messages)) &&
      messages.text.empty())
    finding("a pipeline failed without a message: " + text.str());
  mlirModuleDestroy(module);
  mlirContextDestroy(context);
}

void fuzzGather(const uint8_t *data, size_t size) {
  static MlirContext context = createContext();
  static FP4TrainJit jit = [] {
    MlirModule module =
        fp4trainModuleCreateParse(context, ref(kGather), nullptr, nullptr);
    Messages messages;
    FP4TrainJit compiled = fp4trainJitCreate(
        module, ref("gather"), ref("fp4train-cpu-pipeline{recipe=none}"),
        &Messages::append, &messages);
    if (fp4trainJitIsNull(compiled))
      finding("the gather does not compile: " + messages.text);
    mlirModuleDestroy(module);
    return compiled;
  }();
  int32_t ids[4] = {0, 0, 0, 0};
  std::memcpy(ids, data, std::min(size, sizeof(ids)));
  float table[10], rows[8];
  for (int i = 0; i < 10; ++i)
    table[i] = float(i) + 0.5f;
  const void *args[] = {table, ids};
  void *results[] = {rows};
  Messages messages;
  bool called = mlirLogicalResultIsSuccess(
      fp4trainJitCall(jit, args, results, &Messages::append, &messages));
  bool inRange = true;
  for (int32_t id : ids)
    inRange &= id >= 0 && id < 5;
  if (called != inRange)
    finding(
        "ids " + std::to_string(ids[0]) + " " + std::to_string(ids[1]) + " " +
        std::to_string(ids[2]) + " " + std::to_string(ids[3]) +
        (called ? " called without an error" : " failed: " + messages.text));
  if (!called &&
      messages.text.find("is out of bounds of dimension 0 (size 5)") ==
          std::string::npos)
    finding("a failed check without its message: " + messages.text);
  if (called)
    for (int i = 0; i < 4; ++i)
      for (int j = 0; j < 2; ++j)
        if (rows[2 * i + j] != table[2 * ids[i] + j])
          finding("the checked gather returned a wrong row");
}

} // namespace

/// Registers the passes and pipelines once, before the first input.
extern "C" int LLVMFuzzerInitialize(int *, char ***) {
  fp4trainRegisterPasses();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size == 0)
    return 0;
  llvm::StringRef text = mlir::fp4train::fuzz::asText(data + 1, size - 1);
  switch (data[0] % 3) {
  case 0:
    if (!mlir::fp4train::fuzz::hasKnownUpstreamParserCrash(text))
      fuzzParse(text);
    break;
  case 1:
    fuzzPipeline(text);
    break;
  default:
    fuzzGather(data + 1, size - 1);
    break;
  }
  return 0;
}
