//===- FP4TrainToNVVM.cpp - The fp4train-to-nvvm pass ---------------------===//
//
// Takes the chip's row of the table of targets (fp4train/Target), reports
// every op the chip cannot run with a message naming chip and format, then
// runs one conversion with the 1:N type
// conversion of fp4train-expand: scaled_matmul, the quantize ops of
// isQuantizeKernelShape and the static-shaped hadamard ops become GPU
// kernels (a quantize of a rotation along its blocks one fused kernel); the
// other fp4train ops (2-D-blocked quantize, dequantize,
// pack/unpack/transpose) get fp4train-expand's exact patterns and run on the
// host, as in fp4train-to-amdgpu. The new kernels' 32-bit widening
// multiplies (Philox) then become mul.lo/mul.hi pairs, which NVPTX compiles
// better than the i64 multiply of arith-to-llvm.
//
//===----------------------------------------------------------------------===//

#include "fp4train/Conversion/FP4TrainToNVVM/FP4TrainToNVVM.h"

#include "BlackwellTargetInfo.h"
#include "SM90TargetInfo.h"
#include "Tcgen05BlockScale.h"

#include "fp4train/Conversion/FP4TrainCommon/TypeConversion.h"
#include "fp4train/Conversion/FP4TrainGPUCommon/KernelBuilders.h"
#include "fp4train/Conversion/Passes.h"
#include "fp4train/Dialect/FP4Train/IR/FP4TrainOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"

#include "llvm/ADT/DenseSet.h"

namespace mlir::fp4train {
#define GEN_PASS_DEF_FP4TRAINTONVVM
#include "fp4train/Conversion/Passes.h.inc"
} // namespace mlir::fp4train

using namespace mlir;
using namespace mlir::fp4train;

/// `fn` applied to the GEMM kernel target of `op` on an FP8-tensor-core
/// chip: on sm_90a, wgmma for E8M0 scales ([WG1]) and for NVFP4 on f16
/// values ([WG3]); mma.sync for the rest (the FP8 x FP4 mixes with UE4M3
/// scales cannot occur) and on sm_89.
template <typename Fn>
static auto withWarpFP8Gemm(ScaledMatmulOp op, const GPUTarget &target, Fn fn) {
  SM90TargetInfo chip(target);
  ScaledTensorType lhs = op.getLhs().getType(), rhs = op.getRhs().getType();
  if (target.hasWgmma && isWgmmaScaledMatmul(lhs, rhs))
    return fn(WgmmaFP8TargetInfo(chip));
  if (target.hasWgmma && isWgmmaF16ScaledMatmul(lhs, rhs))
    return fn(WgmmaF16TargetInfo(chip));
  return fn(MmaSyncFP8TargetInfo(chip));
}

static std::optional<std::string>
getUnsupportedReason(ScaledMatmulOp op, const GPUTarget &target) {
  ScaledTensorType lhs = op.getLhs().getType(), rhs = op.getRhs().getType();
  switch (target.mma) {
  case GPUMMAKind::Tcgen05BlockScaled:
    return getTcgen05UnsupportedReason(op);
  case GPUMMAKind::WarpFP8:
    return std::nullopt; // Every format pair, on the FP8 mma.sync.
  case GPUMMAKind::WarpBlockScaled:
    break;
  case GPUMMAKind::ScaledMFMA:
    return "is not an NVIDIA GPU";
  }
  bool fp4A = isa<Float4E2M1FNType>(lhs.getElementType());
  bool fp4B = isa<Float4E2M1FNType>(rhs.getElementType());
  if (fp4A != fp4B)
    return "mixes an FP4 and an FP8 operand, which the kernel does not "
           "stage (kind::mxf8f6f4 would need E2M1 in 8-bit containers)";
  // The type and op verifiers leave no other pair: E4M3 scales only come
  // with E2M1 elements in 16-element blocks, E8M0 ones in 32-element
  // blocks, and both operands share the block along K.
  return std::nullopt;
}

LogicalResult
mlir::fp4train::checkFP4TrainNVVMSupport(Operation *root,
                                         const GPUTarget &target) {
  bool ok = true;
  root->walk([&](ScaledMatmulOp op) {
    if (std::optional<std::string> reason = getUnsupportedReason(op, target)) {
      op.emitOpError("with operands ")
          << stringifyFormat(op.getLhs().getType().getFormat()) << " x "
          << stringifyFormat(op.getRhs().getType().getFormat())
          << " cannot run on " << target.name << ": the chip " << *reason;
      ok = false;
      return;
    }
    switch (target.mma) {
    case GPUMMAKind::Tcgen05BlockScaled:
      // A persistent grid: the kernel walks any number of tiles.
      return;
    case GPUMMAKind::WarpFP8:
      ok &= succeeded(
          withWarpFP8Gemm(op, target, [&](const BlockScaledMMATargetInfo &mma) {
            return checkScaledMatmulKernelGrid(op, mma);
          }));
      return;
    case GPUMMAKind::WarpBlockScaled:
      ok &= succeeded(checkScaledMatmulKernelGrid(
          op,
          MmaSyncBlockScaleTargetInfo(
              BlackwellTargetInfo(target),
              isa<Float4E2M1FNType>(op.getLhs().getType().getElementType()))));
      return;
    case GPUMMAKind::ScaledMFMA:
      llvm_unreachable("getUnsupportedReason rejects AMD chips");
    }
  });
  return success(ok);
}

/// Splits each i32 `arith.mului_extended` of the kernel `launch` into
/// mul.lo.u32 (`arith.muli`) and mul.hi.u32 (`llvm.nvvm.mulhi.ui`).
///
/// arith-to-llvm multiplies the zero-extended operands in i64 and NVPTX
/// keeps that 64-bit multiply (`mul.lo.s64`, three IMADs) unless it sees
/// both operands as zexts: a Philox round's input is the truncated product
/// of the previous round, which InstCombine turns into a 64-bit mask, and
/// the multipliers are constants above 2^31. The two 32-bit halves of the
/// same operands are what ptxas fuses into one IMAD.WIDE.U32. Ten rounds of
/// Philox4x32 (four [SR1] words or 128 [H1] signs) measured 88 -> 56 SASS
/// instructions on sm_90a with a constant key, 104 -> 80 with a run-time
/// one (docs/nvvm.md).
static void splitExtendedMultiplies(gpu::LaunchOp launch) {
  SmallVector<arith::MulUIExtendedOp> multiplies;
  launch.walk([&](arith::MulUIExtendedOp op) {
    if (op.getLhs().getType().isInteger(32))
      multiplies.push_back(op);
  });
  for (arith::MulUIExtendedOp op : multiplies) {
    ImplicitLocOpBuilder b(op.getLoc(), op);
    Value low = arith::MulIOp::create(b, op.getLhs(), op.getRhs());
    Value high = LLVM::CallIntrinsicOp::create(
                     b, b.getI32Type(), b.getStringAttr("llvm.nvvm.mulhi.ui"),
                     ValueRange{op.getLhs(), op.getRhs()})
                     .getResult(0);
    op.getLow().replaceAllUsesWith(low);
    op.getHigh().replaceAllUsesWith(high);
    op.erase();
  }
}

namespace {

struct ScaledMatmulOpLowering : public OpConversionPattern<ScaledMatmulOp> {
  ScaledMatmulOpLowering(TypeConverter &converter, MLIRContext *context,
                         const GPUTarget &target, unsigned gemmWorkgroups,
                         bool gemmCtaPair)
      : OpConversionPattern(converter, context, /*benefit=*/2), target(target),
        gemmWorkgroups(gemmWorkgroups), gemmCtaPair(gemmCtaPair) {}

  LogicalResult
  matchAndRewrite(ScaledMatmulOp op, OneToNOpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    // checkFP4TrainNVVMSupport reports these with a message first.
    if (getUnsupportedReason(op, target))
      return rewriter.notifyMatchFailure(op, "operands the chip cannot run");
    ValueRange lhs = adaptor.getLhs(), rhs = adaptor.getRhs();
    Value acc = adaptor.getAcc().front();
    switch (target.mma) {
    case GPUMMAKind::Tcgen05BlockScaled:
      return lowerScaledMatmulToTcgen05Kernel(
          op, lhs, rhs, acc, target,
          gemmWorkgroups ? gemmWorkgroups : kTcgen05DefaultWorkgroups,
          gemmCtaPair, rewriter);
    case GPUMMAKind::WarpFP8:
      return withWarpFP8Gemm(
          op, target, [&](const BlockScaledMMATargetInfo &mma) {
            return lowerScaledMatmulToKernel(op, lhs, rhs, acc, mma, rewriter);
          });
    case GPUMMAKind::WarpBlockScaled:
      return lowerScaledMatmulToKernel(
          op, lhs, rhs, acc,
          MmaSyncBlockScaleTargetInfo(
              BlackwellTargetInfo(target),
              isa<Float4E2M1FNType>(op.getLhs().getType().getElementType())),
          rewriter);
    case GPUMMAKind::ScaledMFMA:
      break;
    }
    llvm_unreachable("getUnsupportedReason rejects AMD chips");
  }

  const GPUTarget &target;
  unsigned gemmWorkgroups;
  bool gemmCtaPair;
};

struct FP4TrainToNVVMPass
    : public fp4train::impl::FP4TrainToNVVMBase<FP4TrainToNVVMPass> {
  using Base::Base;

  void runOnOperation() override {
    Operation *root = getOperation();
    const GPUTarget &target = getGPUTarget(chip);
    if (!target.isNVIDIA()) {
      root->emitError("fp4train-to-nvvm: ")
          << target.name << " is not an NVIDIA chip (one of "
          << getGPUChipNames(GPUVendor::NVIDIA) << ")";
      return signalPassFailure();
    }
    if (sr == NVVMStochasticRounding::Hardware &&
        !target.hasStochasticE2M1Conversion) {
      root->emitError("fp4train-to-nvvm: sr=hardware needs "
                      "cvt.rs.satfinite.e2m1x4.f32, which ")
          << target.name
          << " does not have (sm_100a and sm_103a do); use sr=software";
      return signalPassFailure();
    }
    if (gemmWorkgroups && target.mma != GPUMMAKind::Tcgen05BlockScaled) {
      root->emitError("fp4train-to-nvvm: gemm-workgroups sets the grid of "
                      "the persistent tcgen05 GEMM (sm_100a, sm_103a); ")
          << target.name << "'s GEMM kernels take one workgroup per tile";
      return signalPassFailure();
    }
    if (gemmCtaPair && target.mma != GPUMMAKind::Tcgen05BlockScaled) {
      root->emitError("fp4train-to-nvvm: gemm-cta-pair puts the tcgen05 GEMM "
                      "(sm_100a, sm_103a) on CTA pairs; ")
          << target.name << " has no cta_group::2 MMA";
      return signalPassFailure();
    }
    if (gemmCtaPair && gemmWorkgroups == 1) {
      root->emitError("fp4train-to-nvvm: gemm-cta-pair needs at least two "
                      "workgroups (one CTA pair); gemm-workgroups is 1");
      return signalPassFailure();
    }
    if (failed(checkFP4TrainNVVMSupport(root, target)))
      return signalPassFailure();

    llvm::DenseSet<Operation *> userLaunches;
    root->walk([&](gpu::LaunchOp launch) { userLaunches.insert(launch); });
    if (failed(applyFP4TrainGPUConversion(
            root, [&](TypeConverter &converter, RewritePatternSet &patterns) {
              populateFP4TrainToNVVMConversionPatterns(
                  converter, patterns, target, sr, gemmWorkgroups, gemmCtaPair);
            })))
      return signalPassFailure();
    root->walk([&](gpu::LaunchOp launch) {
      if (!userLaunches.contains(launch))
        splitExtendedMultiplies(launch);
    });
  }
};

} // namespace

void mlir::fp4train::populateFP4TrainToNVVMConversionPatterns(
    TypeConverter &converter, RewritePatternSet &patterns,
    const GPUTarget &target, NVVMStochasticRounding sr, unsigned gemmWorkgroups,
    bool gemmCtaPair) {
  patterns.add<ScaledMatmulOpLowering>(converter, patterns.getContext(), target,
                                       gemmWorkgroups, gemmCtaPair);
  // Quantize and Hadamard kernels need only the chip's conversions (and
  // none at all for Hadamard). The FP8 chips have no FP4 converts and take
  // the integer recipe for E2M1. [SR1] stays the software recipe on
  // sm_100a/sm_103a unless sr=hardware asks for cvt.rs.satfinite.e2m1x4.f32,
  // which draws 8 random bits per element, not [SR1]'s 22 ([PTX5],
  // docs/nvvm.md). The fused rotate-and-quantize kernel shares the target.
  std::shared_ptr<const TargetInfoBase> info;
  switch (target.mma) {
  case GPUMMAKind::WarpFP8:
    info = std::make_shared<SM90TargetInfo>(target);
    break;
  case GPUMMAKind::WarpBlockScaled:
  case GPUMMAKind::Tcgen05BlockScaled:
    info = std::make_shared<BlackwellTargetInfo>(
        target,
        /*hardwareStochasticRounding=*/sr == NVVMStochasticRounding::Hardware);
    break;
  case GPUMMAKind::ScaledMFMA:
    return;
  }
  populateQuantizeKernelPatterns(converter, patterns, info);
  populateHadamardKernelPatterns(converter, patterns);
  // A rotation along the block dimension followed by its quantize: one
  // kernel, the rotated tensor never stored.
  populateHadamardQuantizeKernelPatterns(converter, patterns, info);
  // The transposed view of NVFP4's 16x16-blocked weights (Dgrad).
  populateTransposeKernelPatterns(converter, patterns);
}
