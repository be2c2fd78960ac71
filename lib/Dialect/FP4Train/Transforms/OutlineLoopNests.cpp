//===- OutlineLoopNests.cpp - One function per top-level loop nest --------===//
//
// Moves each top-level loop nest of a lowered step into a function of its
// own, called once and never inlined, so that LLVM's per-loop passes run in
// functions of the nest's size instead of the whole step's ([JIT1],
// docs/passes.md).
//
//===----------------------------------------------------------------------===//

#include "fp4train/Dialect/FP4Train/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Utils/Utils.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/RegionUtils.h"

namespace mlir {
namespace fp4train {
#define GEN_PASS_DEF_FP4TRAINOUTLINELOOPNESTS
#include "fp4train/Dialect/FP4Train/Transforms/Passes.h.inc"
} // namespace fp4train
} // namespace mlir

using namespace mlir;
using namespace mlir::fp4train;

namespace {

struct OutlineLoopNestsPass
    : public mlir::fp4train::impl::FP4TrainOutlineLoopNestsBase<
          OutlineLoopNestsPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<func::FuncOp> functions(module.getOps<func::FuncOp>());
    IRRewriter rewriter(&getContext());
    for (func::FuncOp function : functions) {
      if (function.isExternal())
        continue;
      SmallVector<Operation *> nests;
      for (Operation &op : function.getFunctionBody().getOps())
        if (isa<scf::ForOp, scf::ParallelOp>(op) && op.getNumResults() == 0)
          nests.push_back(&op);
      unsigned suffix = 0;
      for (Operation *nest : nests) {
        // The nest in a region of its own, which becomes the function.
        rewriter.setInsertionPoint(nest);
        auto region =
            scf::ExecuteRegionOp::create(rewriter, nest->getLoc(), TypeRange());
        Block *body = rewriter.createBlock(&region.getRegion());
        rewriter.moveOpBefore(nest, body, body->end());
        rewriter.setInsertionPointToEnd(body);
        scf::YieldOp::create(rewriter, nest->getLoc());
        // Constants go in with the nest: LLVM folds them there as before.
        SetVector<Value> captured;
        getUsedValuesDefinedAbove(region.getRegion(), captured);
        rewriter.setInsertionPointToStart(body);
        for (Value value : captured) {
          Operation *producer = value.getDefiningOp();
          if (!producer || !producer->hasTrait<OpTrait::ConstantLike>())
            continue;
          Operation *copy = rewriter.clone(*producer);
          rewriter.replaceUsesWithIf(
              value, copy->getResult(0), [&](OpOperand &use) {
                return region->isProperAncestor(use.getOwner());
              });
        }

        // A name no symbol of the module has.
        std::string name;
        do
          name = (function.getName() + "_nest" + llvm::Twine(suffix++)).str();
        while (module.lookupSymbol(name));
        func::CallOp call;
        rewriter.setInsertionPoint(region);
        FailureOr<func::FuncOp> outlined = outlineSingleBlockRegion(
            rewriter, nest->getLoc(), region.getRegion(), name, &call);
        if (failed(outlined)) {
          region.emitOpError("could not be outlined into @") << name;
          return signalPassFailure();
        }
        // Private to the module down to the object code: steps compiled
        // separately can be loaded into one process (an MPI rank runs its
        // shard and a reference).
        outlined->setPrivate();
        (*outlined)->setAttr(
            LLVM::LinkageAttr::name,
            LLVM::LinkageAttr::get(&getContext(),
                                   LLVM::linkage::Linkage::Internal));
        call.setNoInline(true);
        // The region now holds the call: the call takes its place.
        rewriter.moveOpBefore(call, region);
        rewriter.eraseOp(region);
      }
    }
  }
};

} // namespace
