//===- RoleAnalysis.h - Roles of the contractions of a training step -*- C++
//-*-===//
//
// [ROLE1]-[ROLE7]: which contractions of a training step are Fprop, Dgrad and
// Wgrad, and which weight each one involves. Shared by the annotation pass
// and the quantize pass, so both see the same roles.
//
//===----------------------------------------------------------------------===//

#ifndef FP4TRAIN_DIALECT_FP4TRAIN_TRANSFORMS_ROLEANALYSIS_H
#define FP4TRAIN_DIALECT_FP4TRAIN_TRANSFORMS_ROLEANALYSIS_H

#include "fp4train/Dialect/FP4Train/IR/FP4TrainAttrs.h"
#include "fp4train/Support/EnumOption.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/JSON.h"

#include <optional>

namespace mlir {
namespace fp4train {

/// Which dimension of a weight matrix is its input dimension.
enum class WeightLayout {
  /// `W : [out, in]`, as PyTorch stores `nn.Linear` weights.
  OutIn,
  /// `W : [in, out]`, as JAX/Flax stores `Dense` kernels.
  InOut,
};

/// Parses `out-in` / `in-out`.
std::optional<WeightLayout> parseWeightLayout(llvm::StringRef text);

/// What the analysis learned about one contraction.
struct ContractionRole {
  linalg::LinalgOp op;
  /// The role, or nullopt for contractions left alone ("other").
  std::optional<Role> role;
  /// Argument index of the weight this contraction reads (Fprop, Dgrad) or
  /// whose gradient it computes (Wgrad, when unambiguous).
  std::optional<unsigned> param;
  /// Which input operand (0 or 1) is the weight, for Fprop and Dgrad.
  std::optional<unsigned> weightOperand;
  /// The dimension of the weight operand that the contraction sums over,
  /// as that operand is laid out (Fprop, Dgrad).
  std::optional<unsigned> contractedDim;
  /// Which input operand (0 or 1) is the output gradient dY, for Wgrad: the
  /// one that supplies the weight's `out` dimension of the gradient.
  std::optional<unsigned> gradOperand;
  /// The decoder block of `param` ([BLK1]: its `fp4train.block`), if any.
  std::optional<int64_t> block;
  /// Sizes of the contraction's m, n, k and batch dimensions (products over
  /// each group); ShapedType::kDynamic when not static.
  int64_t m = 1, n = 1, k = 1, batch = 1;
  /// [MOE2] `param` is a router: the weight whose Fprop decides the routing
  /// of experts (markRouters).
  bool router = false;
};

/// The contractions of `function` that role inference classifies, in
/// program order: linalg contractions on tensors.
llvm::SmallVector<linalg::LinalgOp>
getContractions(FunctionOpInterface function);

/// Classifies the contractions of one function (role inference, the
/// expensive part). An `fp4train.role` already on an op fixes its role.
/// Errors (bad parameter indices) are emitted on the function and reported
/// as failure.
FailureOr<llvm::SmallVector<ContractionRole>>
analyzeRoles(FunctionOpInterface function, llvm::ArrayRef<unsigned> extraParams,
             WeightLayout layout);

/// [MOE1] Whether `info` is a contraction of expert weights `[E, out, in]`
/// ([ROLE7]): its parameter has rank 3 and its one batch loop runs over the
/// experts.
bool isExpertContraction(FunctionOpInterface function,
                         const ContractionRole &info);

/// [MOE2] Sets `router` on every contraction of a router weight: the
/// parameters marked `fp4train.router`, and every matrix weight whose Fprop
/// result decides the routing of experts. That is the weight whose Fprop
/// contraction's output features are as many as the experts of an expert
/// contraction ([MOE1]) that its result reaches: the logits a softmax or
/// top-k turns into dispatch masks and combine weights, which reach the
/// experts' Fprop (dispatch) or their Dgrad and Wgrad (the combine's
/// gradient). A weight that only feeds the experts' tokens has as many
/// output features as the model's width, and a dense layer without experts
/// (a SwiGLU `gate` projection) reaches none. analyzeRoles calls it.
void markRouters(FunctionOpInterface function,
                 llvm::MutableArrayRef<ContractionRole> roles);

/// The decoder block of argument `param` of `function` ([BLK1]): its
/// `fp4train.block` attribute, if it has one.
std::optional<int64_t> getParamBlock(FunctionOpInterface function,
                                     unsigned param);

/// The `fp4train.role` attribute that records `info` (its role, weight,
/// operand and contracted dimension); `info` must have a role.
RoleAttr getRoleAnnotation(const ContractionRole &info);

/// What the `fp4train.role` attribute of `op` (if any) records, with the
/// contraction's sizes: how fp4train-quantize-matmuls reads the roles
/// fp4train-annotate-roles found, without running the analysis again.
ContractionRole readRoleAnnotation(linalg::LinalgOp op);

/// Returns the name used for `role` in reports, `other` for nullopt.
llvm::StringRef stringifyRoleOrOther(std::optional<Role> role);

/// The role-report entry of one contraction:
/// `{"loc", "op", "role", "param", "block", "m", "n", "k", "batch"}`, block
/// null when the weight has none, sizes null when dynamic, and
/// `"router": true` for the contractions of a router weight ([MOE2]).
llvm::json::Object describeRole(const ContractionRole &info);

/// `file:line:col` of `loc` (its first file location), for reports; the
/// printed location when it has none.
std::string formatLocation(Location loc);

/// How the passes write their role (and quantization) report.
enum class ReportFormat {
  /// An indented JSON array, one object per contraction.
  JSON,
  /// A text table, one row per contraction, for reading.
  Table,
};

/// The values of the `report-format` options, defined once.
inline llvm::cl::ValuesClass getReportFormatValues() {
  return llvm::cl::values(
      clEnumValN(ReportFormat::JSON, "json", "a JSON array"),
      clEnumValN(ReportFormat::Table, "table", "a table to read"));
}

/// The report as a table: one row per object of `report` (role-report
/// fields, and for the quantize report what each operand became).
std::string formatReportTable(const llvm::json::Array &report);

/// Writes `report` to `path` (`-` for stdout) in `format`; a no-op for an
/// empty path. Errors are emitted on `anchor`.
LogicalResult writeReport(Operation *anchor, llvm::StringRef path,
                          llvm::json::Array report,
                          ReportFormat format = ReportFormat::JSON);

} // namespace fp4train
} // namespace mlir

FP4TRAIN_ENUM_OPTION_PARSER(mlir::fp4train::ReportFormat)

#endif // FP4TRAIN_DIALECT_FP4TRAIN_TRANSFORMS_ROLEANALYSIS_H
