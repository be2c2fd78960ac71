//===- GPUInputChecks.cpp - What the GPU pipelines refuse to compile ------===//
//
// Checks both GPU pipelines run so that input they cannot handle is an
// error with a reason, not invalid IR or an abort in an upstream pass:
// outlined GPU code in their input, and device symbol names the assembly
// printers cannot write.
//
//===----------------------------------------------------------------------===//

#include "fp4train/Conversion/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/StringExtras.h"

namespace mlir::fp4train {
#define GEN_PASS_DEF_FP4TRAINCHECKNOOUTLINEDGPUCODE
#define GEN_PASS_DEF_FP4TRAINCHECKDEVICESYMBOLNAMES
#include "fp4train/Conversion/Passes.h.inc"
} // namespace mlir::fp4train

using namespace mlir;
using namespace mlir::fp4train;

namespace {

struct CheckNoOutlinedGPUCodePass
    : public mlir::fp4train::impl::FP4TrainCheckNoOutlinedGPUCodeBase<
          CheckNoOutlinedGPUCodePass> {
  void runOnOperation() override {
    WalkResult result = getOperation().walk([](Operation *op) {
      if (!isa<gpu::GPUModuleOp, gpu::LaunchFuncOp, gpu::BinaryOp>(op))
        return WalkResult::advance();
      op->emitOpError("in the input of a GPU pipeline is not supported: the "
                      "pipelines outline and launch only the kernels they "
                      "create (give GPU code as gpu.launch regions, or "
                      "compile outlined GPU code on its own)");
      return WalkResult::interrupt();
    });
    if (result.wasInterrupted())
      signalPassFailure();
  }
};

struct CheckDeviceSymbolNamesPass
    : public mlir::fp4train::impl::FP4TrainCheckDeviceSymbolNamesBase<
          CheckDeviceSymbolNamesPass> {
  /// Letters, digits, `_`, `$` and `.`, not starting with a digit or `.`.
  static bool isWritable(StringRef name) {
    auto plain = [](char c) {
      return llvm::isAlnum(c) || c == '_' || c == '$';
    };
    return !name.empty() && !llvm::isDigit(name.front()) &&
           plain(name.front()) &&
           llvm::all_of(name, [&](char c) { return plain(c) || c == '.'; });
  }

  void runOnOperation() override {
    getOperation().walk([&](SymbolOpInterface symbol) {
      if (symbol == getOperation() || isWritable(symbol.getName()))
        return;
      symbol->emitOpError("has the device symbol name '")
          << symbol.getName()
          << "', which the GPU assembly printers cannot write: device "
             "symbols take letters, digits, '_', '$' and '.' (rename the "
             "function the kernel is outlined from)";
      signalPassFailure();
    });
  }
};

} // namespace
