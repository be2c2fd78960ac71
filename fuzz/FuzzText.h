//===- FuzzText.h - Input filters the fuzzers share -------------*- C++ -*-===//
//
// What every fuzzer of this directory does to its input before it reaches
// fp4train: the input as text, and the inputs left alone (upstream parser
// crashes no check of ours can precede; option text that would touch the
// machine). No MLIR dependency, so the C API fuzzer, which reaches MLIR only
// through libFP4TrainCAPI.so, shares them.
//
//===----------------------------------------------------------------------===//

#ifndef FP4TRAIN_FUZZ_FUZZTEXT_H
#define FP4TRAIN_FUZZ_FUZZTEXT_H

#include "llvm/ADT/StringRef.h"

#include <cstddef>
#include <cstdint>

namespace mlir::fp4train::fuzz {

/// The input as text, cut at its first NUL (MLIR's parser wants a
/// NUL-terminated buffer and stops there anyway).
llvm::StringRef asText(const uint8_t *data, size_t size);

/// Inputs that crash MLIR 22's own parser (plain mlir-opt too) in a way no
/// check of ours can precede, so the fuzzers skip them instead of stopping
/// on them again and again (docs/robustness.md lists them):
/// - the custom forms of linalg.transpose, linalg.broadcast and linalg.reduce
///   whose `permutation = ` / `dimensions = ` value is not a well-formed
///   integer list (`[1, 0@`, `= 5`): the parser stores a null attribute and
///   dereferences it;
/// - linalg.batch_matmul with `index` operands (tensors of index).
bool hasKnownUpstreamParserCrash(llvm::StringRef text);

/// Inputs the fuzzers leave alone because they would touch the machine
/// outside the run: option text naming output files (`report=`) or
/// programs to launch (`toolkit=`).
bool touchesTheMachine(llvm::StringRef text);

/// Whether every pass a textual pipeline names is an fp4train pass or
/// pipeline or one of the anchors builtin.module, func.func, gpu.module and
/// any (option lists skipped): pipelines made of these reach our code and
/// our nesting checks, not upstream passes' own bugs.
bool namesOnlyOurPasses(llvm::StringRef text);

} // namespace mlir::fp4train::fuzz

#endif // FP4TRAIN_FUZZ_FUZZTEXT_H
