//===- MPIToLLVM.cpp - MPI calls of partitioned steps to LLVM -------------===//
//
// fp4train-mpi-to-llvm: upstream's patterns for the mpi dialect, a cache
// for the communicators they split ([SH6]), and an error for what they
// cannot lower.
//
//===----------------------------------------------------------------------===//

#include "ShardingUtils.h"

#include "fp4train/Sharding/Passes.h"

#include "mlir/Conversion/ConvertToLLVM/ToLLVMPass.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Pass/PassManager.h"

namespace mlir::fp4train {
#define GEN_PASS_DEF_FP4TRAINMPITOLLVM
#include "fp4train/Sharding/Passes.h.inc"
} // namespace mlir::fp4train

using namespace mlir;
using namespace mlir::fp4train;
using namespace mlir::fp4train::sharding;

/// [SH6] Gives every `MPI_Comm_split` call of `module` (one per collective
/// upstream's lowering emits) a cache: a module global holding the
/// communicator it made the first time, which later calls of the same call
/// site return without splitting again. Each call site's color and key
/// depend only on the rank and the grid, and every process runs the same
/// call sites in the same order, so every process makes (and afterwards
/// skips) each split together. Without it a long run exhausts MPICH's
/// context ids (about two thousand communicators per process).
static void cacheCommunicatorSplits(ModuleOp module) {
  SmallVector<LLVM::CallOp> splits;
  module.walk([&](LLVM::CallOp call) {
    if (call.getCallee() == "MPI_Comm_split")
      splits.push_back(call);
  });
  if (splits.empty())
    return;
  MLIRContext *ctx = module.getContext();
  Location loc = module.getLoc();
  OpBuilder b = OpBuilder::atBlockEnd(module.getBody());
  Type i8 = IntegerType::get(ctx, 8), i32 = IntegerType::get(ctx, 32);
  auto ptr = LLVM::LLVMPointerType::get(ctx);
  // The communicator's type is the implementation's (i32 for MPICH, a
  // pointer for Open MPI): that of the split's first operand.
  Type comm = splits.front().getArgOperands()[0].getType();

  // i32 split(comm world, i32 color, i32 key, ptr out, ptr cache, ptr ready)
  constexpr llvm::StringLiteral kHelper = "__fp4train_comm_split_cached";
  auto helper = LLVM::LLVMFuncOp::create(
      b, loc, kHelper,
      LLVM::LLVMFunctionType::get(i32, {comm, i32, i32, ptr, ptr, ptr}),
      LLVM::Linkage::Internal);
  Block *entry = helper.addEntryBlock(b);
  Region &body = helper.getBody();
  Block *hit = b.createBlock(&body), *miss = b.createBlock(&body),
        *keep = b.createBlock(&body), *done = b.createBlock(&body);
  auto args = entry->getArguments();
  Value world = args[0], color = args[1], key = args[2], out = args[3],
        cache = args[4], ready = args[5];

  b.setInsertionPointToEnd(entry);
  Value zero8 = LLVM::ConstantOp::create(b, loc, i8, 0);
  Value made =
      LLVM::ICmpOp::create(b, loc, LLVM::ICmpPredicate::ne,
                           LLVM::LoadOp::create(b, loc, i8, ready), zero8);
  LLVM::CondBrOp::create(b, loc, made, hit, miss);

  b.setInsertionPointToEnd(hit);
  LLVM::StoreOp::create(b, loc, LLVM::LoadOp::create(b, loc, comm, cache), out);
  LLVM::ReturnOp::create(b, loc,
                         ValueRange{LLVM::ConstantOp::create(b, loc, i32, 0)});

  b.setInsertionPointToEnd(miss);
  Value code = LLVM::CallOp::create(b, loc, TypeRange{i32}, "MPI_Comm_split",
                                    ValueRange{world, color, key, out})
                   .getResult();
  Value succeeded =
      LLVM::ICmpOp::create(b, loc, LLVM::ICmpPredicate::eq, code,
                           LLVM::ConstantOp::create(b, loc, i32, 0));
  LLVM::CondBrOp::create(b, loc, succeeded, keep, done);

  b.setInsertionPointToEnd(keep);
  LLVM::StoreOp::create(b, loc, LLVM::LoadOp::create(b, loc, comm, out), cache);
  LLVM::StoreOp::create(b, loc, LLVM::ConstantOp::create(b, loc, i8, 1), ready);
  LLVM::BrOp::create(b, loc, done);

  b.setInsertionPointToEnd(done);
  LLVM::ReturnOp::create(b, loc, ValueRange{code});

  for (auto [index, split] : llvm::enumerate(splits)) {
    std::string name = ("__fp4train_comm_" + llvm::Twine(index)).str();
    b.setInsertionPoint(helper);
    auto global = [&](llvm::StringRef suffix, Type type, Attribute init) {
      return LLVM::GlobalOp::create(b, loc, type, /*isConstant=*/false,
                                    LLVM::Linkage::Internal,
                                    (name + suffix).str(), init);
    };
    auto cached = global("", comm, LLVM::ZeroAttr::get(ctx));
    auto flag = global("_ready", i8, b.getIntegerAttr(i8, 0));
    b.setInsertionPoint(split);
    Value cachePtr = LLVM::AddressOfOp::create(b, loc, cached);
    Value readyPtr = LLVM::AddressOfOp::create(b, loc, flag);
    SmallVector<Value> operands(split.getArgOperands());
    operands.append({cachePtr, readyPtr});
    auto call = LLVM::CallOp::create(b, split.getLoc(), helper, operands);
    split.replaceAllUsesWith(call.getResults());
    split.erase();
  }
}

namespace {

struct MPIToLLVMPass
    : public mlir::fp4train::impl::FP4TrainMPIToLLVMBase<MPIToLLVMPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (!usesMPI(module))
      return;
    setDefaultMPIImplementation(module);
    ConvertToLLVMPassOptions options;
    options.filterDialects = {mpi::MPIDialect::getDialectNamespace().str()};
    OpPassManager pipeline(ModuleOp::getOperationName());
    pipeline.addPass(createConvertToLLVMPass(options));
    if (failed(runPipeline(pipeline, module)))
      return signalPassFailure();
    cacheCommunicatorSplits(module);
    // The conversion is partial: an op it has no pattern for stays, and
    // the casts to its types would be left unreconciled.
    module.walk([&](Operation *op) {
      if (!isa<mpi::MPIDialect>(op->getDialect()))
        return WalkResult::advance();
      op->emitOpError("has no LLVM lowering in MLIR 22 (a rank-0 buffer or "
                      "an op the MPI lowering lacks, such as mpi.comm_size)");
      signalPassFailure();
      return WalkResult::interrupt();
    });
  }
};

} // namespace
