//===- AnnotateRoles.cpp - Give each contraction its training role --------===//

#include "fp4train/Dialect/FP4Train/Transforms/Passes.h"
#include "fp4train/Dialect/FP4Train/Transforms/RoleAnalysis.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/ToolOutputFile.h"

namespace mlir {
namespace fp4train {
#define GEN_PASS_DEF_FP4TRAINANNOTATEROLES
#include "fp4train/Dialect/FP4Train/Transforms/Passes.h.inc"
} // namespace fp4train
} // namespace mlir

using namespace mlir;
using namespace mlir::fp4train;

/// `file:line:col` of the first file location in `loc`, else its text.
static std::string formatLocation(Location loc) {
  if (auto fileLoc = loc->findInstanceOf<FileLineColLoc>())
    return llvm::formatv("{0}:{1}:{2}", fileLoc.getFilename().getValue(),
                         fileLoc.getLine(), fileLoc.getColumn());
  std::string text;
  llvm::raw_string_ostream os(text);
  loc.print(os);
  return text;
}

static llvm::json::Value sizeOrNull(int64_t size) {
  if (ShapedType::isDynamic(size))
    return nullptr;
  return size;
}

namespace {
struct AnnotateRolesPass
    : public fp4train::impl::FP4TrainAnnotateRolesBase<AnnotateRolesPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    std::optional<WeightLayout> layout = parseWeightLayout(weightLayout);
    if (!layout) {
      module.emitError("unknown weight-layout '")
          << weightLayout << "'; expected 'out-in' or 'in-out'";
      return signalPassFailure();
    }

    llvm::json::Array report;
    Builder builder(&getContext());
    for (auto function : module.getOps<FunctionOpInterface>()) {
      if (function.isExternal())
        continue;
      FailureOr<SmallVector<ContractionRole>> roles =
          analyzeRoles(function, params, *layout);
      if (failed(roles))
        return signalPassFailure();
      for (const ContractionRole &info : *roles) {
        if (info.role && !info.isExplicit)
          info.op->setAttr(FP4TrainDialect::kRoleAttrName,
                           RoleAttr::get(&getContext(), *info.role));
        llvm::json::Value param = nullptr;
        if (info.param)
          param = *info.param;
        report.push_back(llvm::json::Object{
            {"loc", formatLocation(info.op->getLoc())},
            {"op", info.op->getName().getStringRef()},
            {"role", stringifyRoleOrOther(info.role)},
            {"param", std::move(param)},
            {"m", sizeOrNull(info.m)},
            {"n", sizeOrNull(info.n)},
            {"k", sizeOrNull(info.k)},
            {"batch", sizeOrNull(info.batch)},
        });
      }
    }
    if (failed(writeReport(std::move(report))))
      return signalPassFailure();
  }

  LogicalResult writeReport(llvm::json::Array report) {
    if (this->report.empty())
      return success();
    std::string error;
    std::unique_ptr<llvm::ToolOutputFile> file =
        openOutputFile(this->report, &error);
    if (!file)
      return getOperation().emitError("cannot write the role report: ")
             << error;
    file->os() << llvm::formatv("{0:2}", llvm::json::Value(std::move(report)))
               << "\n";
    file->keep();
    return success();
  }
};
} // namespace
