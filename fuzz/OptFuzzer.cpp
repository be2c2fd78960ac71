//===- OptFuzzer.cpp - fp4-opt: parse, verify, then one pipeline ----------===//
//
// Input: one selector byte, then MLIR text. The text is parsed and verified
// as fp4-opt would; a module that verifies is printed and parsed back (the
// printers and parsers of our types, attributes and ops must round-trip),
// then the selector picks the pipeline to run on it: the quantize pipeline
// under every recipe preset, the CPU pipeline in both numerics modes, the
// ROCm and CUDA pipelines to their kernels and down to ISA through the LLVM
// backends, and each fp4train pass on its own. A crash, a sanitizer report,
// a failure without an error, or a print that does not parse back is a
// finding.
//
//===----------------------------------------------------------------------===//

#include "FuzzSupport.h"

#include "fp4train/ParseModule.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdio>
#include <cstdlib>

using namespace mlir;
using namespace mlir::fp4train::fuzz;

namespace {

/// What the selector byte picks (modulo the count). Entry 0 is parse,
/// verify and round-trip only.
const char *const kPipelines[] = {
    "",
    "fp4train-quantize-pipeline{recipe=nvfp4}",
    "fp4train-quantize-pipeline{recipe=mxfp4}",
    "fp4train-quantize-pipeline{recipe=mxfp4-hadamard}",
    "fp4train-quantize-pipeline{recipe=mxfp4-random-hadamard}",
    "fp4train-quantize-pipeline{recipe=mxfp4-sr pad=true}",
    "fp4train-quantize-pipeline{recipe=mxfp8}",
    "fp4train-quantize-pipeline{recipe=none}",
    "fp4train-cpu-pipeline{recipe=mxfp4-hadamard numerics=ir}",
    "fp4train-cpu-pipeline{recipe=nvfp4 numerics=runtime}",
    "fp4train-rocm-kernel-pipeline{recipe=mxfp4}",
    "fp4train-rocm-pipeline{recipe=mxfp4-hadamard format=isa}",
    "fp4train-cuda-kernel-pipeline{recipe=nvfp4 chip=sm_120a}",
    "fp4train-cuda-pipeline{recipe=mxfp4 chip=sm_120a format=isa}",
    "fp4train-annotate-roles",
    "fp4train-quantize-matmuls{recipe=nvfp4}",
    "fp4train-expand",
    "fp4train-to-runtime",
    "fp4train-to-amdgpu",
    "fp4train-to-nvvm{chip=sm_120a}",
    "fp4train-interchange-contractions",
    "fp4train-vectorize-contractions",
    "fp4train-quantize-pipeline{recipe=mxfp4 roles=fprop,dgrad}",
    "fp4train-gpu-device-memory",
    "fp4train-cuda-pipeline{recipe=nvfp4 chip=sm_100a memory=unified}",
};

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size == 0)
    return 0;
  llvm::StringRef pipeline =
      kPipelines[data[0] % (sizeof(kPipelines) / sizeof(kPipelines[0]))];
  llvm::StringRef text = asText(data + 1, size - 1);
  if (hasKnownUpstreamParserCrash(text))
    return 0;

  FuzzContext context;
  ParserConfig config(&context.get());
  OwningOpRef<ModuleOp> module =
      mlir::fp4train::parseModule(text, "<fuzz>", &context.get());
  checkFailureReported(!module, context, "parsing");
  if (!module)
    return 0;
  // parseSourceString verifies; a module that parsed is valid.

  // Round trip: what we print must parse back and verify.
  std::string printed;
  {
    llvm::raw_string_ostream os(printed);
    module->print(os);
  }
  context.resetErrors();
  OwningOpRef<ModuleOp> reparsed = parseSourceString<ModuleOp>(printed, config);
  if (!reparsed) {
    std::fprintf(stderr,
                 "fuzzer finding: the printed module does not parse back:\n"
                 "%s\n",
                 printed.c_str());
    std::abort();
  }

  if (!pipeline.empty())
    runPipeline(context, *module, pipeline);
  return 0;
}
