//===- FP4TrainOps.cpp - fp4train operations ------------------------------===//
//
// Verifiers (one per cross-operand rule, each with its own message), type
// inference and folders of the fp4train operations.
//
//===----------------------------------------------------------------------===//

#include "fp4train/Dialect/FP4Train/IR/FP4TrainOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/TypeUtilities.h"

using namespace mlir;
using namespace mlir::fp4train;

/// Prints a shape as `2x3x4`.
static std::string formatShape(ArrayRef<int64_t> shape) {
  std::string result;
  llvm::raw_string_ostream os(result);
  llvm::interleave(shape, os, "x");
  return result;
}

/// Quantize and dequantize change the representation, never the shape.
static LogicalResult verifySameShape(Operation *op, ArrayRef<int64_t> input,
                                     ArrayRef<int64_t> result) {
  if (input == result)
    return success();
  return op->emitOpError("result shape ")
         << formatShape(result) << " does not match input shape "
         << formatShape(input);
}

//===----------------------------------------------------------------------===//
// QuantizeOp
//===----------------------------------------------------------------------===//

LogicalResult QuantizeOp::verify() {
  ScaledTensorType resultType = getResult().getType();
  if (failed(verifySameShape(*this, getInput().getType().getShape(),
                             resultType.getShape())))
    return failure();

  // [SR1]: the random stream is keyed by the seed, so a stochastic rounding
  // without one is undefined and a seed without stochastic rounding is a
  // mistake worth reporting.
  bool stochastic = getRounding() == RoundingMode::stochastic;
  if (stochastic && !getSeed())
    return emitOpError("stochastic rounding requires a seed operand");
  if (!stochastic && getSeed())
    return emitOpError("a seed is only meaningful with stochastic rounding");
  if (stochastic && !isa<Float4E2M1FNType>(resultType.getElementType()))
    return emitOpError("stochastic rounding is only defined for E2M1 "
                       "elements, not ")
           << resultType.getElementType();

  // [NV1]: the supplied per-tensor amax feeds the global scale.
  if (getAmax() && !resultType.getHasGlobalScale())
    return emitOpError("an amax operand requires a result type with a global "
                       "scale (NVFP4)");
  // [MX2] is a rule for E8M0 scales; NVFP4 derives its scales by [NV1].
  if (getScaleMode() == ScaleMode::rceil &&
      !isa<Float8E8M0FNUType>(resultType.getScaleType()))
    return emitOpError("scale_mode rceil applies to E8M0 block scales only, "
                       "not ")
           << resultType.getScaleType();

  // [SH3]: a part names its place in the logical tensor, one origin and one
  // logical size per dimension, and lies inside it.
  std::optional<ArrayRef<int64_t>> logicalShape = getLogicalShape();
  if (!logicalShape) {
    if (!getOrigin().empty())
      return emitOpError("an origin needs the logical shape it lies in");
    return success();
  }
  ArrayRef<int64_t> shape = resultType.getShape();
  if (logicalShape->size() != shape.size() ||
      getOrigin().size() != shape.size())
    return emitOpError("a part needs one origin and one logical size per "
                       "dimension (")
           << shape.size() << "), got " << getOrigin().size() << " and "
           << logicalShape->size();
  for (auto [dim, size, logical] : llvm::enumerate(shape, *logicalShape))
    if (logical < size)
      return emitOpError("dimension ")
             << dim << " of the part (size " << size
             << ") is larger than the logical size " << logical;
  return success();
}

//===----------------------------------------------------------------------===//
// DequantizeOp
//===----------------------------------------------------------------------===//

LogicalResult DequantizeOp::verify() {
  return verifySameShape(*this, getInput().getType().getShape(),
                         getResult().getType().getShape());
}

//===----------------------------------------------------------------------===//
// HadamardOp
//===----------------------------------------------------------------------===//

LogicalResult HadamardOp::verify() {
  auto type = getInput().getType();
  uint64_t dim = getDim();
  if (dim >= static_cast<uint64_t>(type.getRank()))
    return emitOpError("dimension ")
           << dim << " is out of range for a tensor of rank " << type.getRank();
  int64_t size = type.getDimSize(dim);
  int64_t n = getRotation().getSize();
  if (ShapedType::isDynamic(size))
    return emitOpError("dimension ") << dim << " must be static";
  // Every lowering (expand, to-runtime, the GPU kernels) allocates its
  // result and blocks the other dimensions with static sizes, as the
  // block-scaled types the rotation feeds have.
  for (auto [i, other] : llvm::enumerate(type.getShape()))
    if (ShapedType::isDynamic(other))
      return emitOpError("needs a static shape, but dimension ")
             << i << " is dynamic";
  if (size % n != 0)
    return emitOpError("dimension ")
           << dim << " of size " << size
           << " is not a multiple of the Hadamard size " << n;

  bool random = getRotation().isRandom();
  if (random && (!getSeed() || !getStep()))
    return emitOpError("a Hadamard rotation with random signs requires seed "
                       "and step operands");
  if (!random && (getSeed() || getStep()))
    return emitOpError("seed and step are only meaningful with random signs");
  return success();
}

//===----------------------------------------------------------------------===//
// ScaledMatmulOp
//===----------------------------------------------------------------------===//

/// Checks that `type` is blocked along its last (contraction) dimension; a
/// 16x16 block on the last two dimensions qualifies.
static LogicalResult verifyBlockedAlongK(ScaledMatmulOp op, StringRef name,
                                         ScaledTensorType type) {
  int64_t rank = type.getRank();
  if (type.getBlockShape()[rank - 1] == 1)
    return op.emitOpError()
           << name << " must be blocked along its contraction (last) "
           << "dimension, but its block shape is ["
           << llvm::make_range(type.getBlockShape().begin(),
                               type.getBlockShape().end())
           << "]";
  return success();
}

LogicalResult ScaledMatmulOp::verify() {
  ScaledTensorType lhsType = getLhs().getType();
  ScaledTensorType rhsType = getRhs().getType();
  auto accType = getAcc().getType();
  int64_t rank = lhsType.getRank();
  if (rank < 2)
    return emitOpError("operands need rank >= 2 ([batch..., rows, K]), got "
                       "rank ")
           << rank;
  if (rhsType.getRank() != rank || accType.getRank() != rank)
    return emitOpError("lhs, rhs and acc must have the same rank, got ")
           << rank << ", " << rhsType.getRank() << " and " << accType.getRank();

  ArrayRef<int64_t> lhsShape = lhsType.getShape();
  ArrayRef<int64_t> rhsShape = rhsType.getShape();
  if (lhsShape.drop_back(2) != rhsShape.drop_back(2))
    return emitOpError("batch dimensions of lhs (")
           << formatShape(lhsShape.drop_back(2)) << ") and rhs ("
           << formatShape(rhsShape.drop_back(2)) << ") differ";
  if (lhsShape.back() != rhsShape.back())
    return emitOpError("contraction dimensions differ: lhs K = ")
           << lhsShape.back() << ", rhs K = " << rhsShape.back();

  if (failed(verifyBlockedAlongK(*this, "lhs", lhsType)) ||
      failed(verifyBlockedAlongK(*this, "rhs", rhsType)))
    return failure();
  // [GEMM1] sums one product per K block: both operands must agree on it.
  int64_t lhsBlock = lhsType.getBlockShape().back();
  int64_t rhsBlock = rhsType.getBlockShape().back();
  if (lhsBlock != rhsBlock)
    return emitOpError("K block sizes differ: lhs ")
           << lhsBlock << ", rhs " << rhsBlock;

  SmallVector<int64_t> expected(lhsShape.drop_back());
  expected.push_back(rhsShape[rank - 2]);
  if (accType.getShape() != ArrayRef<int64_t>(expected))
    return emitOpError("accumulator shape ")
           << formatShape(accType.getShape()) << " does not match "
           << formatShape(expected) << " ([batch..., M, N])";
  return success();
}

//===----------------------------------------------------------------------===//
// PackOp
//===----------------------------------------------------------------------===//

LogicalResult PackOp::verify() {
  ScaledTensorType type = getResult().getType();
  if (getValues().getType() != type.getValuesTensorType())
    return emitOpError("values type ")
           << getValues().getType() << " does not match the element tensor "
           << type.getValuesTensorType() << " of the result type";
  if (getScales().getType() != type.getScalesTensorType())
    return emitOpError("scales type ")
           << getScales().getType() << " does not match the scale tensor "
           << type.getScalesTensorType() << " of the result type";
  if (type.getHasGlobalScale() && !getGlobalScale())
    return emitOpError("the result type has a global scale but no "
                       "global_scale operand is given");
  if (!type.getHasGlobalScale() && getGlobalScale())
    return emitOpError("a global_scale operand is given but the result type "
                       "has no global scale");
  return success();
}

OpFoldResult PackOp::fold(FoldAdaptor) {
  // pack(unpack(%q)) -> %q, when every piece comes from the same unpack.
  auto unpack = getValues().getDefiningOp<UnpackOp>();
  if (!unpack || unpack.getValues() != getValues() ||
      unpack.getScales() != getScales() ||
      unpack.getGlobalScale() != getGlobalScale() ||
      unpack.getInput().getType() != getResult().getType())
    return {};
  return unpack.getInput();
}

//===----------------------------------------------------------------------===//
// UnpackOp
//===----------------------------------------------------------------------===//

LogicalResult UnpackOp::inferReturnTypes(
    MLIRContext *context, std::optional<Location> location, ValueRange operands,
    DictionaryAttr attributes, OpaqueProperties properties, RegionRange regions,
    SmallVectorImpl<Type> &inferredReturnTypes) {
  auto type = dyn_cast<ScaledTensorType>(operands[0].getType());
  if (!type)
    return emitOptionalError(location, "expected a block-scaled tensor");
  inferredReturnTypes.push_back(type.getValuesTensorType());
  inferredReturnTypes.push_back(type.getScalesTensorType());
  if (type.getHasGlobalScale())
    inferredReturnTypes.push_back(Float32Type::get(context));
  return success();
}

LogicalResult UnpackOp::fold(FoldAdaptor,
                             SmallVectorImpl<OpFoldResult> &results) {
  // unpack(pack(%v, %s[, %g])) -> %v, %s[, %g].
  auto pack = getInput().getDefiningOp<PackOp>();
  if (!pack)
    return failure();
  results.push_back(pack.getValues());
  results.push_back(pack.getScales());
  if (Value global = pack.getGlobalScale())
    results.push_back(global);
  return success();
}

//===----------------------------------------------------------------------===//
// TransposeOp
//===----------------------------------------------------------------------===//

LogicalResult TransposeOp::verify() {
  ScaledTensorType inputType = getInput().getType();
  if (!inputType.is2DBlocked())
    return emitOpError("a transposed view needs 16x16 blocks; a 1-D-blocked "
                       "tensor must be re-quantized along the new "
                       "contraction dimension");
  SmallVector<int64_t> dims = inputType.getBlockedDims();
  SmallVector<int64_t> shape(inputType.getShape());
  std::swap(shape[dims[0]], shape[dims[1]]);
  auto expected =
      ScaledTensorType::get(getContext(), shape, inputType.getElementType(),
                            inputType.getBlockShape(), inputType.getScaleType(),
                            inputType.getHasGlobalScale());
  if (getResult().getType() != expected)
    return emitOpError("result type must be ")
           << expected << " (the input with dimensions " << dims[0] << " and "
           << dims[1] << " swapped), got " << getResult().getType();
  return success();
}

OpFoldResult TransposeOp::fold(FoldAdaptor) {
  if (auto inner = getInput().getDefiningOp<TransposeOp>())
    return inner.getInput();
  return {};
}

#define GET_OP_CLASSES
#include "fp4train/Dialect/FP4Train/IR/FP4Train.cpp.inc"
