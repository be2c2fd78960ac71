//===- CheckIndices.cpp - Bounds checks on data-dependent accesses --------===//
//
// Wraps element accesses whose indices come from data (token ids, targets)
// in a bounds check that, when it fails, skips the access and reports the
// failure through a host callback ([IDX1], docs/robustness.md). Unlike
// upstream's runtime verification (cf.assert, which aborts the process), the
// step runs on to its end without touching memory it does not own, and the
// host turns the report into an error.
//
//===----------------------------------------------------------------------===//

#include "fp4train/Dialect/FP4Train/IR/FP4TrainDialect.h"
#include "fp4train/Dialect/FP4Train/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/UB/IR/UBOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Matchers.h"

namespace mlir {
namespace fp4train {
#define GEN_PASS_DEF_FP4TRAINCHECKINDICES
#include "fp4train/Dialect/FP4Train/Transforms/Passes.h.inc"
} // namespace fp4train
} // namespace mlir

using namespace mlir;
using namespace mlir::fp4train;

/// The host callback and the module attribute of the site table
/// (docs/robustness.md, [IDX1]).
static constexpr llvm::StringLiteral kCallee = "fp4train_rt_index_error";
static constexpr llvm::StringLiteral kSitesAttr =
    FP4TrainDialect::kIndexChecksAttrName;

namespace {

/// One access to guard: the indexed value (a ranked tensor or memref) and
/// its indices.
struct Access {
  Operation *op;
  Value source;
  ValueRange indices;
};

} // namespace

static std::optional<Access> getAccess(Operation *op) {
  if (auto extract = dyn_cast<tensor::ExtractOp>(op))
    return Access{op, extract.getTensor(), extract.getIndices()};
  if (auto insert = dyn_cast<tensor::InsertOp>(op))
    return Access{op, insert.getDest(), insert.getIndices()};
  if (auto load = dyn_cast<memref::LoadOp>(op))
    return Access{op, load.getMemRef(), load.getIndices()};
  if (auto store = dyn_cast<memref::StoreOp>(op))
    return Access{op, store.getMemRef(), store.getIndices()};
  return std::nullopt;
}

/// Whether every index of `access` is a constant within its static
/// dimension: such an access needs no check.
static bool isStaticallyInBounds(const Access &access) {
  auto type = cast<ShapedType>(access.source.getType());
  for (auto [dim, index] : llvm::enumerate(access.indices)) {
    APInt value;
    if (!matchPattern(index, m_ConstantInt(&value)) || type.isDynamicDim(dim) ||
        value.isNegative() || value.sge(type.getDimSize(dim)))
      return false;
  }
  return true;
}

/// "tensor.extract at FILE:LINE:COL" (for an assertion "cf.assert "MSG"
/// at ..."), the text of a site.
static std::string describeSite(Operation *op) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << op->getName() << " ";
  if (auto assertOp = dyn_cast<cf::AssertOp>(op))
    os << "\"" << assertOp.getMsg() << "\" ";
  os << "at ";
  if (auto loc = op->getLoc()->findInstanceOf<FileLineColLoc>())
    os << loc.getFilename().getValue() << ":" << loc.getLine() << ":"
       << loc.getColumn();
  else
    os << "an unknown location";
  return text;
}

/// Guards `access` (site number `site`): see the pass description.
static void guard(const Access &access, int64_t site) {
  Operation *op = access.op;
  Location loc = op->getLoc();
  OpBuilder b(op);
  auto type = cast<ShapedType>(access.source.getType());
  Type i64 = b.getI64Type();
  auto constantI64 = [&](int64_t value) -> Value {
    return arith::ConstantIntOp::create(b, loc, i64, value);
  };

  SmallVector<Value> inBounds, sizes;
  for (int64_t dim = 0, rank = type.getRank(); dim < rank; ++dim) {
    if (type.isDynamicDim(dim))
      sizes.push_back(
          isa<TensorType>(type)
              ? Value(tensor::DimOp::create(b, loc, access.source, dim))
              : Value(memref::DimOp::create(b, loc, access.source, dim)));
    else
      sizes.push_back(
          arith::ConstantIndexOp::create(b, loc, type.getDimSize(dim)));
  }
  Value all;
  for (auto [index, size] : llvm::zip_equal(access.indices, sizes)) {
    // Unsigned: a negative index is a huge one.
    Value ok =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, index, size);
    inBounds.push_back(ok);
    all = all ? arith::AndIOp::create(b, loc, all, ok).getResult() : ok;
  }

  // The value the access leaves when it is skipped.
  SmallVector<Type> resultTypes(op->getResultTypes());
  auto ifOp = scf::IfOp::create(b, loc, resultTypes, all,
                                /*withElseRegion=*/true);

  // Then: the access itself. scf.if builds the yields of a result-less if.
  Block *thenBlock = ifOp.thenBlock(), *elseBlock = ifOp.elseBlock();
  if (resultTypes.empty()) {
    op->moveBefore(thenBlock->getTerminator());
    b.setInsertionPoint(elseBlock->getTerminator());
  } else {
    op->moveBefore(thenBlock, thenBlock->end());
    OpBuilder then = OpBuilder::atBlockEnd(thenBlock);
    scf::YieldOp::create(then, loc, op->getResults());
    b.setInsertionPointToEnd(elseBlock);
  }

  // Else: report the first dimension out of bounds, skip the access.
  Value zero = constantI64(0);
  Value failedDim = constantI64(-1), failedIndex = zero, failedSize = zero;
  for (int64_t dim = int64_t(inBounds.size()) - 1; dim >= 0; --dim) {
    Value ok = inBounds[dim];
    auto asI64 = [&](Value v) -> Value {
      return arith::IndexCastOp::create(b, loc, i64, v);
    };
    failedDim =
        arith::SelectOp::create(b, loc, ok, failedDim, constantI64(dim));
    failedIndex = arith::SelectOp::create(b, loc, ok, failedIndex,
                                          asI64(access.indices[dim]));
    failedSize =
        arith::SelectOp::create(b, loc, ok, failedSize, asI64(sizes[dim]));
  }
  func::CallOp::create(
      b, loc, kCallee, TypeRange(),
      ValueRange{constantI64(site), failedDim, failedIndex, failedSize});
  if (resultTypes.empty())
    return;
  // tensor.insert leaves its destination unchanged; a read yields zero
  // (poison for element types without one).
  Value skipped;
  if (isa<tensor::InsertOp>(op)) {
    skipped = access.source;
  } else {
    Type element = resultTypes.front();
    if (TypedAttr zero = b.getZeroAttr(element))
      skipped = arith::ConstantOp::create(b, loc, zero);
    else
      skipped = ub::PoisonOp::create(b, loc, element);
  }
  scf::YieldOp::create(b, loc, skipped);
  op->getResults().front().replaceAllUsesExcept(ifOp.getResult(0),
                                                thenBlock->getTerminator());
}

/// Replaces `assertOp` (site number `site`) by a report of its failure: the
/// step runs on, its accesses guarded by `guard`, and the host raises the
/// error, where upstream's lowering of cf.assert would abort the process.
static void report(cf::AssertOp assertOp, int64_t site) {
  Location loc = assertOp.getLoc();
  OpBuilder b(assertOp);
  Type i64 = b.getI64Type();
  Value trueValue = arith::ConstantIntOp::create(b, loc, b.getI1Type(), 1);
  Value failed =
      arith::XOrIOp::create(b, loc, assertOp.getArg(), trueValue).getResult();
  auto ifOp = scf::IfOp::create(b, loc, TypeRange(), failed,
                                /*withElseRegion=*/false);
  b.setInsertionPoint(ifOp.thenBlock()->getTerminator());
  auto constantI64 = [&](int64_t value) -> Value {
    return arith::ConstantIntOp::create(b, loc, i64, value);
  };
  // Dimension -2 marks a failed assertion for the host ([IDX1]).
  func::CallOp::create(b, loc, kCallee, TypeRange(),
                       ValueRange{constantI64(site), constantI64(-2),
                                  constantI64(0), constantI64(0)});
  assertOp.erase();
}

namespace {

struct CheckIndicesPass
    : public mlir::fp4train::impl::FP4TrainCheckIndicesBase<CheckIndicesPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *context = module.getContext();

    SmallVector<Access> accesses;
    SmallVector<cf::AssertOp> assertions;
    module.walk([&](func::FuncOp function) {
      function.walk([&](Operation *op) {
        if (op->getParentOfType<gpu::LaunchOp>())
          return;
        if (auto assertOp = dyn_cast<cf::AssertOp>(op)) {
          assertions.push_back(assertOp);
          return;
        }
        std::optional<Access> access = getAccess(op);
        if (access && !access->indices.empty() &&
            isa<RankedTensorType, MemRefType>(access->source.getType()) &&
            !isStaticallyInBounds(*access))
          accesses.push_back(*access);
      });
    });
    if (accesses.empty() && assertions.empty())
      return;

    // The callee: declared once, with the signature the host defines.
    Type i64 = IntegerType::get(context, 64);
    auto calleeType = FunctionType::get(context, {i64, i64, i64, i64}, {});
    if (Operation *existing = module.lookupSymbol(kCallee)) {
      auto function = dyn_cast<func::FuncOp>(existing);
      if (!function || function.getFunctionType() != calleeType) {
        existing->emitOpError("uses the name @")
            << kCallee << ", which fp4train-check-indices declares as "
            << calleeType;
        return signalPassFailure();
      }
    } else {
      OpBuilder b = OpBuilder::atBlockEnd(module.getBody());
      auto declaration =
          func::FuncOp::create(b, module.getLoc(), kCallee, calleeType);
      declaration.setPrivate();
    }

    SmallVector<Attribute> sites;
    if (auto existing = module->getAttrOfType<ArrayAttr>(kSitesAttr))
      sites.assign(existing.begin(), existing.end());
    for (const Access &access : accesses) {
      guard(access, int64_t(sites.size()));
      sites.push_back(StringAttr::get(context, describeSite(access.op)));
    }
    for (cf::AssertOp assertOp : assertions) {
      sites.push_back(StringAttr::get(context, describeSite(assertOp)));
      report(assertOp, int64_t(sites.size()) - 1);
    }
    module->setAttr(kSitesAttr, ArrayAttr::get(context, sites));
  }
};

} // namespace
