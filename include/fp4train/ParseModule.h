//===- ParseModule.h - Parse MLIR text with the tools' bounds ---*- C++ -*-===//
//
// The one place tools and bindings turn MLIR text into a module. MLIR's
// parser recurses per nesting level and overflows the stack on input such
// as 100,000 nested `module {` (a SIGSEGV, in mlir-opt too); the text is
// checked against fp4train::numerics::kMaxTextNesting first, and too deep a
// text is an error diagnostic like any other parse error
// (docs/robustness.md).
//
//===----------------------------------------------------------------------===//

#ifndef FP4TRAIN_PARSEMODULE_H
#define FP4TRAIN_PARSEMODULE_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/ADT/StringRef.h"

namespace mlir {
class MLIRContext;

namespace fp4train {

/// Emits an error diagnostic (located at `name`'s line) and returns failure
/// when `text` nests deeper than the parser can take.
LogicalResult checkParseDepth(llvm::StringRef text, llvm::StringRef name,
                              MLIRContext *context);

/// The module `text` (named `name` in locations) holds, parsed from a
/// NUL-terminated copy (MLIR's lexer reads up to a NUL; `text` need not be
/// followed by one) behind checkParseDepth: null, with the reason reported
/// to the context's diagnostic handlers, for text that is too deep, does not
/// parse or does not verify.
OwningOpRef<ModuleOp> parseModule(llvm::StringRef text, llvm::StringRef name,
                                  MLIRContext *context);

} // namespace fp4train
} // namespace mlir

#endif // FP4TRAIN_PARSEMODULE_H
