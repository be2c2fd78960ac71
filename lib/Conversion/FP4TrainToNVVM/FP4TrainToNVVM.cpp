//===- FP4TrainToNVVM.cpp - The fp4train-to-nvvm pass ---------------------===//
//
// Parses the chip once, reports every op the chip cannot run with a message
// naming chip and format, then runs one conversion with the 1:N type
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
#include "SM100TargetInfo.h"
#include "SM90TargetInfo.h"

#include "fp4train/Conversion/FP4TrainGPUCommon/KernelBuilders.h"
#include "fp4train/Conversion/FP4TrainToStandard/FP4TrainToStandard.h"
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
#include "llvm/Support/FormatVariadic.h"

namespace mlir::fp4train {
#define GEN_PASS_DEF_FP4TRAINTONVVM
#include "fp4train/Conversion/Passes.h.inc"
} // namespace mlir::fp4train

using namespace mlir;
using namespace mlir::fp4train;

std::optional<NVVMChip> NVVMChip::parse(StringRef name) {
  NVVMChip chip;
  if (!name.consume_front("sm_"))
    return std::nullopt;
  if (name.ends_with("a") || name.ends_with("f")) {
    chip.suffix = name.back();
    name = name.drop_back();
  }
  if (name.size() < 2 || name.size() > 3 || name.getAsInteger(10, chip.capability))
    return std::nullopt;
  return chip;
}

std::string NVVMChip::getName() const {
  std::string name = llvm::formatv("sm_{0}", capability).str();
  if (suffix)
    name += suffix;
  return name;
}

bool NVVMChip::hasWarpBlockScaledMMA() const {
  // The block-scaled mma.sync and the FP4 conversions are architecture-
  // specific features of the sm_12x family.
  return (capability == 120 || capability == 121) && suffix == 'a';
}

bool NVVMChip::hasFP8WarpMMA() const {
  // mma.sync m16n8k32 with e4m3/e5m2 operands: sm_89 and sm_90 (PTX ISA
  // 8.4); the Blackwell chips take their block-scaled paths.
  return capability == 89 || capability == 90;
}

bool NVVMChip::hasTcgen05BlockScaledMMA() const {
  return (capability == 100 || capability == 103) && suffix == 'a';
}

std::string NVVMChip::getPTXFeature() const {
  // The first PTX ISA versions with the chip's block-scaled instructions:
  // 8.7 for sm_120a (llc 22's default for it), 8.8 for sm_121a (llc aborts
  // below it), sm_103a and tcgen05 block scaling on sm_100a (docs/nvvm.md;
  // [PTX2]).
  if (capability == 100 || capability == 103 || capability == 121)
    return "+ptx88";
  if (capability >= 120)
    return "+ptx87";
  // FP8 mma.sync m16n8k32 needs PTX 8.4, the m16n8k16 form of the NVFP4
  // blocks 8.7 (llc 22 defaults to 7.8 / 8.0 and aborts below).
  if (hasFP8WarpMMA())
    return "+ptx87";
  return "+ptx80";
}

/// The operand formats a block-scaled MMA of `chip` takes, or a reason.
static std::optional<std::string>
getUnsupportedReason(ScaledMatmulOp op, const NVVMChip &chip) {
  ScaledTensorType lhs = op.getLhs().getType(), rhs = op.getRhs().getType();
  if (chip.hasTcgen05BlockScaledMMA())
    return getTcgen05UnsupportedReason(op);
  if (chip.hasFP8WarpMMA())
    return std::nullopt; // Every format pair, on the FP8 mma.sync.
  if (!chip.hasWarpBlockScaledMMA())
    return "has no FP8 or block-scaled FP4/FP8 tensor-core MMA (needs sm_89, "
           "sm_90a, sm_100a, sm_103a or sm_120a)";
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

LogicalResult mlir::fp4train::checkFP4TrainNVVMSupport(Operation *root,
                                                       const NVVMChip &chip) {
  bool ok = true;
  BlackwellTargetInfo target(chip.getName());
  SM90TargetInfo fp8Target(chip.getName());
  root->walk([&](ScaledMatmulOp op) {
    if (std::optional<std::string> reason = getUnsupportedReason(op, chip)) {
      op.emitOpError("with operands ")
          << stringifyFormat(op.getLhs().getType().getFormat()) << " x "
          << stringifyFormat(op.getRhs().getType().getFormat())
          << " cannot run on "
          << chip.getName() << ": the chip " << *reason;
      ok = false;
      return;
    }
    if (chip.hasTcgen05BlockScaledMMA()) {
      ok &= succeeded(checkScaledMatmulKernelGrid(
          op, kTcgen05TileRows, kTcgen05TileRows, chip.getName()));
      return;
    }
    if (chip.hasFP8WarpMMA()) {
      ok &= succeeded(checkScaledMatmulKernelGrid(
          op, MmaSyncFP8TargetInfo(fp8Target)));
      return;
    }
    MmaSyncBlockScaleTargetInfo mma(
        target, isa<Float4E2M1FNType>(op.getLhs().getType().getElementType()));
    ok &= succeeded(checkScaledMatmulKernelGrid(op, mma));
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
                         NVVMChip chip)
      : OpConversionPattern(converter, context, /*benefit=*/2), chip(chip) {}

  LogicalResult
  matchAndRewrite(ScaledMatmulOp op, OneToNOpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    // checkFP4TrainNVVMSupport reports these with a message first.
    if (getUnsupportedReason(op, chip))
      return rewriter.notifyMatchFailure(op, "operands the chip cannot run");
    if (chip.hasTcgen05BlockScaledMMA())
      return lowerScaledMatmulToTcgen05Kernel(
          op, adaptor.getLhs(), adaptor.getRhs(), adaptor.getAcc().front(),
          chip, rewriter);
    if (chip.hasFP8WarpMMA()) {
      SM90TargetInfo target(chip.getName());
      return lowerScaledMatmulToKernel(op, adaptor.getLhs(), adaptor.getRhs(),
                                       adaptor.getAcc().front(),
                                       MmaSyncFP8TargetInfo(target), rewriter);
    }
    BlackwellTargetInfo target(chip.getName());
    MmaSyncBlockScaleTargetInfo mma(
        target, isa<Float4E2M1FNType>(op.getLhs().getType().getElementType()));
    return lowerScaledMatmulToKernel(op, adaptor.getLhs(), adaptor.getRhs(),
                                     adaptor.getAcc().front(), mma, rewriter);
  }

  NVVMChip chip;
};

struct FP4TrainToNVVMPass
    : public fp4train::impl::FP4TrainToNVVMBase<FP4TrainToNVVMPass> {
  using Base::Base;

  void runOnOperation() override {
    Operation *root = getOperation();
    std::optional<NVVMChip> parsed = NVVMChip::parse(chip);
    if (!parsed) {
      root->emitError("fp4train-to-nvvm: invalid chip '")
          << chip << "': expected an NVIDIA target name such as sm_120a";
      return signalPassFailure();
    }
    if (sr == NVVMStochasticRounding::Hardware &&
        !parsed->hasTcgen05BlockScaledMMA()) {
      root->emitError("fp4train-to-nvvm: sr=hardware needs "
                      "cvt.rs.satfinite.e2m1x4.f32, which ")
          << parsed->getName()
          << " does not have (sm_100a and sm_103a do); use sr=software";
      return signalPassFailure();
    }
    if (failed(checkFP4TrainNVVMSupport(root, *parsed)))
      return signalPassFailure();

    llvm::DenseSet<Operation *> userLaunches;
    root->walk([&](gpu::LaunchOp launch) { userLaunches.insert(launch); });
    if (failed(applyFP4TrainGPUConversion(
            root, [&](TypeConverter &converter, RewritePatternSet &patterns) {
              populateFP4TrainToNVVMConversionPatterns(converter, patterns,
                                                       *parsed, sr);
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
    const NVVMChip &chip, NVVMStochasticRounding sr) {
  patterns.add<ScaledMatmulOpLowering>(converter, patterns.getContext(), chip);
  // Quantize and Hadamard kernels need only the chip's conversions (and
  // none at all for Hadamard). The FP8 chips have no FP4 converts and take
  // the integer recipe for E2M1. [SR1] stays the software recipe on
  // sm_100a/sm_103a unless sr=hardware asks for cvt.rs.satfinite.e2m1x4.f32,
  // which draws 8 random bits per element, not [SR1]'s 22 ([PTX5],
  // docs/nvvm.md). The fused rotate-and-quantize kernel shares the target.
  std::shared_ptr<const TargetInfoBase> target;
  if (chip.hasFP8WarpMMA())
    target = std::make_shared<SM90TargetInfo>(chip.getName());
  else if (chip.hasWarpBlockScaledMMA() || chip.hasTcgen05BlockScaledMMA())
    target = std::make_shared<BlackwellTargetInfo>(
        chip.getName(),
        /*hardwareStochasticRounding=*/sr == NVVMStochasticRounding::Hardware);
  else
    return;
  populateQuantizeKernelPatterns(converter, patterns, target);
  populateHadamardKernelPatterns(converter, patterns);
  // A rotation along the block dimension followed by its quantize: one
  // kernel, the rotated tensor never stored.
  populateHadamardQuantizeKernelPatterns(converter, patterns, target);
  // The transposed view of NVFP4's 16x16-blocked weights (Dgrad).
  populateTransposeKernelPatterns(converter, patterns);
}
