//===- ParseModule.cpp - Parse MLIR text with the tools' bounds -----------===//

#include "fp4train/ParseModule.h"
#include "fp4train/Numerics/Files.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Location.h"
#include "mlir/Parser/Parser.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"

using namespace mlir;

LogicalResult mlir::fp4train::checkParseDepth(StringRef text, StringRef name,
                                              MLIRContext *context) {
  namespace numerics = ::fp4train::numerics;
  unsigned line = numerics::findExcessiveNesting(
      std::string_view(text.data(), text.size()));
  if (line == 0)
    return success();
  emitError(FileLineColLoc::get(context, name, line, 1))
      << numerics::describeExcessiveNesting();
  return failure();
}

OwningOpRef<ModuleOp> mlir::fp4train::parseModule(StringRef text,
                                                  StringRef name,
                                                  MLIRContext *context) {
  if (failed(checkParseDepth(text, name, context)))
    return nullptr;
  // MLIR's lexer reads up to a NUL: a text that is not followed by one (a C
  // host's MlirStringRef into a larger buffer) was read past its end.
  llvm::SourceMgr sources;
  sources.AddNewSourceBuffer(llvm::MemoryBuffer::getMemBufferCopy(text, name),
                             llvm::SMLoc());
  return parseSourceFile<ModuleOp>(sources, ParserConfig(context));
}
