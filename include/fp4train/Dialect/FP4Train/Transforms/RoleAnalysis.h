//===- RoleAnalysis.h - Roles of the contractions of a training step -*- C++ -*-===//
//
// [ROLE1]-[ROLE6]: which contractions of a training step are Fprop, Dgrad and
// Wgrad, and which weight each one involves. Shared by the annotation pass
// and the quantize pass, so both see the same roles.
//
//===----------------------------------------------------------------------===//

#ifndef FP4TRAIN_DIALECT_FP4TRAIN_TRANSFORMS_ROLEANALYSIS_H
#define FP4TRAIN_DIALECT_FP4TRAIN_TRANSFORMS_ROLEANALYSIS_H

#include "fp4train/Dialect/FP4Train/IR/FP4TrainAttrs.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/ADT/SmallVector.h"
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
  /// True when the role came from an explicit `fp4train.role` attribute.
  bool isExplicit = false;
  /// Argument index of the weight this contraction reads (Fprop, Dgrad) or
  /// whose gradient it computes (Wgrad, when unambiguous).
  std::optional<unsigned> param;
  /// Which input operand (0 or 1) is the weight, for Fprop and Dgrad.
  std::optional<unsigned> weightOperand;
  /// Which input operand (0 or 1) is the output gradient dY, for Wgrad: the
  /// one that supplies the weight's `out` dimension of the gradient.
  std::optional<unsigned> gradOperand;
  /// Sizes of the contraction's m, n, k and batch dimensions (products over
  /// each group); ShapedType::kDynamic when not static.
  int64_t m = 1, n = 1, k = 1, batch = 1;
};

/// Classifies the contractions of one function. Errors (bad parameter
/// indices) are emitted on the function and reported as failure.
FailureOr<llvm::SmallVector<ContractionRole>>
analyzeRoles(FunctionOpInterface function,
             llvm::ArrayRef<unsigned> extraParams, WeightLayout layout);

/// Returns the name used for `role` in reports, `other` for nullopt.
llvm::StringRef stringifyRoleOrOther(std::optional<Role> role);

/// The role-report entry of one contraction:
/// `{"loc", "op", "role", "param", "m", "n", "k", "batch"}`, sizes null when
/// dynamic.
llvm::json::Object describeRole(const ContractionRole &info);

/// Writes `report` as indented JSON to `path` (`-` for stdout); a no-op for
/// an empty path. Errors are emitted on `anchor`.
LogicalResult writeReport(Operation *anchor, llvm::StringRef path,
                          llvm::json::Array report);

} // namespace fp4train
} // namespace mlir

#endif // FP4TRAIN_DIALECT_FP4TRAIN_TRANSFORMS_ROLEANALYSIS_H
