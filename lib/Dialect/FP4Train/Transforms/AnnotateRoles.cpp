//===- AnnotateRoles.cpp - Give each contraction its training role --------===//

#include "fp4train/Dialect/FP4Train/Transforms/Passes.h"
#include "fp4train/Dialect/FP4Train/Transforms/RoleAnalysis.h"

#include "mlir/IR/BuiltinOps.h"

namespace mlir {
namespace fp4train {
#define GEN_PASS_DEF_FP4TRAINANNOTATEROLES
#include "fp4train/Dialect/FP4Train/Transforms/Passes.h.inc"
} // namespace fp4train
} // namespace mlir

using namespace mlir;
using namespace mlir::fp4train;

namespace {
struct AnnotateRolesPass
    : public fp4train::impl::FP4TrainAnnotateRolesBase<AnnotateRolesPass> {
  using Base::Base;

  LogicalResult initialize(MLIRContext *context) override {
    std::optional<WeightLayout> parsed = parseWeightLayout(weightLayout);
    if (!parsed)
      return emitError(UnknownLoc::get(context), "unknown weight-layout '")
             << weightLayout << "'; expected 'out-in' or 'in-out'";
    layout = *parsed;
    return success();
  }

  void runOnOperation() override {
    ModuleOp module = getOperation();

    llvm::json::Array report;
    for (auto function : module.getOps<FunctionOpInterface>()) {
      if (function.isExternal())
        continue;
      FailureOr<SmallVector<ContractionRole>> roles =
          analyzeRoles(function, params, layout);
      if (failed(roles))
        return signalPassFailure();
      for (const ContractionRole &info : *roles) {
        if (info.role)
          info.op->setAttr(FP4TrainDialect::kRoleAttrName,
                           getRoleAnnotation(info));
        report.push_back(describeRole(info));
      }
    }
    if (failed(
            writeReport(module, this->report, std::move(report), reportFormat)))
      return signalPassFailure();
  }

  WeightLayout layout = WeightLayout::OutIn;
};
} // namespace
