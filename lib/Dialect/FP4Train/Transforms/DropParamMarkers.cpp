//===- DropParamMarkers.cpp - Remove {fp4train.param} markers -------------===//

#include "fp4train/Dialect/FP4Train/IR/FP4TrainDialect.h"
#include "fp4train/Dialect/FP4Train/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace mlir::fp4train {
#define GEN_PASS_DEF_FP4TRAINDROPPARAMMARKERS
#include "fp4train/Dialect/FP4Train/Transforms/Passes.h.inc"
} // namespace mlir::fp4train

using namespace mlir;
using namespace mlir::fp4train;

namespace {
struct DropParamMarkersPass
    : public mlir::fp4train::impl::FP4TrainDropParamMarkersBase<
          DropParamMarkersPass> {
  void runOnOperation() override {
    getOperation().walk([](func::FuncOp function) {
      for (unsigned i = 0, e = function.getNumArguments(); i < e; ++i) {
        function.removeArgAttr(i, FP4TrainDialect::kBlockAttrName);
        function.removeArgAttr(i, FP4TrainDialect::kRouterAttrName);
        function.removeArgAttr(i, FP4TrainDialect::kParamAttrName);
      }
    });
  }
};
} // namespace
