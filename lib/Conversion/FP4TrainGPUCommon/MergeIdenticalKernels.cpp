//===- MergeIdenticalKernels.cpp - One gpu.module per distinct kernel -----===//
//
// Kernel outlining makes one gpu.module per gpu.launch, so a training step
// whose layers (or experts, or @eval_loss beside @train_step) repeat the
// same shapes carries many copies of the same kernel, and the back end
// compiles each copy again. This pass keeps one module per distinct body
// ([KRN1] in docs/passes.md).
//
//===----------------------------------------------------------------------===//

#include "fp4train/Conversion/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/StringMap.h"

namespace mlir::fp4train {
#define GEN_PASS_DEF_FP4TRAINMERGEIDENTICALKERNELS
#include "fp4train/Conversion/Passes.h.inc"
} // namespace mlir::fp4train

using namespace mlir;
using namespace mlir::fp4train;

/// The symbols `gpuModule` defines, in order.
static SmallVector<Operation *> getSymbols(gpu::GPUModuleOp gpuModule) {
  SmallVector<Operation *> symbols;
  for (Operation &op : gpuModule.getBody()->getOperations())
    if (isa<SymbolOpInterface>(op))
      symbols.push_back(&op);
  return symbols;
}

/// `gpuModule` printed with its own name and those of its symbols replaced
/// by their positions: equal texts are the same code. The names used
/// (`#module`, `#0`, ...) are ones no device symbol may have
/// (fp4train-check-device-symbol-names rejects them later), so a renamed
/// symbol never meets one of the module's own.
static std::string getCanonicalText(gpu::GPUModuleOp gpuModule) {
  OwningOpRef<gpu::GPUModuleOp> clone = gpuModule.clone();
  MLIRContext *context = gpuModule.getContext();
  for (auto [index, symbol] : llvm::enumerate(getSymbols(*clone))) {
    auto name = StringAttr::get(context, "#" + Twine(index));
    // The uses are within the clone, whose symbol table is its own; a
    // failure (an unknown use) leaves the name, and the texts then differ.
    (void)SymbolTable::replaceAllSymbolUses(symbol, name, *clone);
    SymbolTable::setSymbolName(symbol, name);
  }
  SymbolTable::setSymbolName(*clone, StringAttr::get(context, "#module"));
  std::string text;
  llvm::raw_string_ostream os(text);
  // Generic form, unverified: the printer would otherwise verify the
  // detached clone, whose verifiers may look for a parent (vector.bitcast's
  // data layout); the pass manager verified the module after outlining.
  clone->print(os, OpPrintingFlags().printGenericOpForm().assumeVerified());
  return text;
}

namespace {
struct MergeIdenticalKernelsPass
    : public mlir::fp4train::impl::FP4TrainMergeIdenticalKernelsBase<
          MergeIdenticalKernelsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    // The first module of each text, and for each later copy (by name) the
    // copy and the module that replaces it.
    llvm::StringMap<gpu::GPUModuleOp> firstOfText;
    llvm::DenseMap<StringAttr, std::pair<gpu::GPUModuleOp, gpu::GPUModuleOp>>
        replacedBy;
    SmallVector<gpu::GPUModuleOp> copies;
    for (auto gpuModule : module.getOps<gpu::GPUModuleOp>()) {
      auto [it, inserted] =
          firstOfText.try_emplace(getCanonicalText(gpuModule), gpuModule);
      if (inserted)
        continue;
      replacedBy[gpuModule.getSymNameAttr()] = {gpuModule, it->second};
      copies.push_back(gpuModule);
    }
    if (copies.empty())
      return;

    module.walk([&](gpu::LaunchFuncOp launch) {
      SymbolRefAttr kernel = launch.getKernel();
      auto it = replacedBy.find(kernel.getRootReference());
      if (it == replacedBy.end() || kernel.getNestedReferences().size() != 1)
        return;
      auto [copy, kept] = it->second;
      SmallVector<Operation *> copySymbols = getSymbols(copy);
      SmallVector<Operation *> keptSymbols = getSymbols(kept);
      auto position =
          llvm::find_if(copySymbols,
                        [&](Operation *symbol) {
                          return SymbolTable::getSymbolName(symbol) ==
                                 kernel.getLeafReference();
                        }) -
          copySymbols.begin();
      if (position == int64_t(copySymbols.size()))
        return;
      launch.setKernelAttr(
          SymbolRefAttr::get(kept.getSymNameAttr(),
                             {FlatSymbolRefAttr::get(SymbolTable::getSymbolName(
                                 keptSymbols[position]))}));
    });
    // A copy something still names (not a launch) stays. One walk finds
    // the names still used; a walk per copy would be quadratic.
    llvm::DenseSet<StringAttr> used;
    std::optional<SymbolTable::UseRange> uses =
        SymbolTable::getSymbolUses(&module.getBodyRegion());
    if (!uses)
      return;
    for (const SymbolTable::SymbolUse &use : *uses)
      used.insert(use.getSymbolRef().getRootReference());
    for (gpu::GPUModuleOp copy : copies)
      if (!used.contains(copy.getSymNameAttr()))
        copy.erase();
  }
};
} // namespace
