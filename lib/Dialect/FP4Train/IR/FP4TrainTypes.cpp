//===- FP4TrainTypes.cpp - fp4train types ---------------------------------===//
//
// The block-scaled tensor type: its syntax, and the verifier that admits
// exactly the formats of the format table [FMT1] (docs/semantics.md).
//
//===----------------------------------------------------------------------===//

#include "fp4train/Dialect/FP4Train/IR/FP4TrainOps.h"
#include "fp4train/Numerics/ElementCount.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::fp4train;

#define GET_TYPEDEF_CLASSES
#include "fp4train/Dialect/FP4Train/IR/FP4TrainTypes.cpp.inc"

void FP4TrainDialect::registerTypes() {
  addTypes<
#define GET_TYPEDEF_LIST
#include "fp4train/Dialect/FP4Train/IR/FP4TrainTypes.cpp.inc"
      >();
}

//===----------------------------------------------------------------------===//
// Syntax
//===----------------------------------------------------------------------===//

// !fp4train.scaled<64x128xf4E2M1FN, block = [1, 32], scale = f8E8M0FNU[,
// global]>
Type ScaledTensorType::parse(AsmParser &parser) {
  SMLoc loc = parser.getCurrentLocation();
  SmallVector<int64_t> shape, blockShape;
  Type elementType, scaleType;
  auto parseBlockEntry = [&]() -> ParseResult {
    return parser.parseInteger(blockShape.emplace_back());
  };
  if (parser.parseLess() ||
      parser.parseDimensionList(shape, /*allowDynamic=*/false,
                                /*withTrailingX=*/true) ||
      parser.parseType(elementType) || parser.parseComma() ||
      parser.parseKeyword("block") || parser.parseEqual() ||
      parser.parseCommaSeparatedList(AsmParser::Delimiter::Square,
                                     parseBlockEntry) ||
      parser.parseComma() || parser.parseKeyword("scale") ||
      parser.parseEqual() || parser.parseType(scaleType))
    return {};
  bool hasGlobalScale = false;
  if (succeeded(parser.parseOptionalComma())) {
    if (parser.parseKeyword("global"))
      return {};
    hasGlobalScale = true;
  }
  if (parser.parseGreater())
    return {};
  return parser.getChecked<ScaledTensorType>(loc, parser.getContext(), shape,
                                             elementType, blockShape, scaleType,
                                             hasGlobalScale);
}

void ScaledTensorType::print(AsmPrinter &printer) const {
  printer << '<';
  for (int64_t dim : getShape())
    printer << dim << 'x';
  printer << getElementType() << ", block = [";
  llvm::interleaveComma(getBlockShape(), printer);
  printer << "], scale = " << getScaleType();
  if (getHasGlobalScale())
    printer << ", global";
  printer << '>';
}

//===----------------------------------------------------------------------===//
// Verification
//===----------------------------------------------------------------------===//

LogicalResult
ScaledTensorType::verify(function_ref<InFlightDiagnostic()> emitError,
                         ArrayRef<int64_t> shape, Type elementType,
                         ArrayRef<int64_t> blockShape, Type scaleType,
                         bool hasGlobalScale) {
  if (shape.empty())
    return emitError() << "block-scaled tensors need rank >= 1";
  if (blockShape.size() != shape.size())
    return emitError() << "block shape has " << blockShape.size()
                       << " entries but the tensor has rank " << shape.size();
  if (llvm::any_of(shape, [](int64_t d) { return d <= 0; }))
    return emitError() << "dimension sizes must be positive";
  if (llvm::any_of(blockShape, [](int64_t b) { return b <= 0; }))
    return emitError() << "block sizes must be positive";
  // Every lowering sizes buffers and loops from the element count.
  if (!::fp4train::checkedNumElements(shape))
    return emitError() << "the tensor has more elements than int64 can count";

  SmallVector<int64_t> blockedDims;
  for (auto [dim, block] : llvm::enumerate(blockShape))
    if (block > 1)
      blockedDims.push_back(dim);
  int64_t rank = shape.size();

  // The format table [FMT1] (docs/semantics.md): which element/scale pairs
  // exist and which blocks each admits.
  bool fp4Element = isa<Float4E2M1FNType>(elementType);
  bool fp8Element = isa<Float8E4M3FNType, Float8E5M2Type>(elementType);
  bool e8m0Scale = isa<Float8E8M0FNUType>(scaleType);
  bool e4m3Scale = isa<Float8E4M3FNType>(scaleType);
  if (!(fp4Element && (e8m0Scale || e4m3Scale)) && !(fp8Element && e8m0Scale))
    return emitError() << "unsupported format: element type " << elementType
                       << " with scale type " << scaleType
                       << " (expected f4E2M1FN with f8E8M0FNU or f8E4M3FN, "
                          "or f8E4M3FN/f8E5M2 with f8E8M0FNU)";

  if (e8m0Scale) {
    // MXFP4 and MXFP8: 32 elements along one dimension, no global scale.
    if (blockedDims.size() != 1 || blockShape[blockedDims[0]] != 32)
      return emitError() << "E8M0-scaled (MX) formats need a block of 32 "
                            "along exactly one dimension";
    if (hasGlobalScale)
      return emitError() << "a global scale is only defined for NVFP4 "
                            "(f8E4M3FN block scales)";
  } else {
    // NVFP4 [NV1]: 16 along one dimension, or 16x16 on the last two.
    bool oneD = blockedDims.size() == 1 && blockShape[blockedDims[0]] == 16;
    bool twoD = blockedDims.size() == 2 && blockedDims[0] == rank - 2 &&
                blockedDims[1] == rank - 1 && blockShape[rank - 2] == 16 &&
                blockShape[rank - 1] == 16;
    if (!oneD && !twoD)
      return emitError() << "NVFP4 needs a block of 16 along one dimension, "
                            "or 16x16 on the last two dimensions";
  }

  for (int64_t dim : blockedDims)
    if (shape[dim] % blockShape[dim] != 0)
      return emitError() << "dimension " << dim << " of size " << shape[dim]
                         << " is not a multiple of its block size "
                         << blockShape[dim];
  return success();
}

//===----------------------------------------------------------------------===//
// Queries
//===----------------------------------------------------------------------===//

int64_t ScaledTensorType::getNumElements() const {
  // The verifier rejects shapes whose count overflows.
  std::optional<int64_t> count = ::fp4train::checkedNumElements(getShape());
  assert(count && "element count overflow in a verified type");
  return *count;
}

SmallVector<int64_t> ScaledTensorType::getBlockedDims() const {
  SmallVector<int64_t> dims;
  for (auto [dim, block] : llvm::enumerate(getBlockShape()))
    if (block > 1)
      dims.push_back(dim);
  return dims;
}

int64_t ScaledTensorType::getBlockNumElements() const {
  int64_t n = 1;
  for (int64_t block : getBlockShape())
    n *= block;
  return n;
}

SmallVector<int64_t> ScaledTensorType::getScalesShape() const {
  SmallVector<int64_t> shape;
  for (auto [dim, block] : llvm::zip_equal(getShape(), getBlockShape()))
    shape.push_back(dim / block);
  return shape;
}

RankedTensorType ScaledTensorType::getValuesTensorType() const {
  return RankedTensorType::get(getShape(), getElementType());
}

RankedTensorType ScaledTensorType::getScalesTensorType() const {
  return RankedTensorType::get(getScalesShape(), getScaleType());
}

Format ScaledTensorType::getFormat() const {
  Type element = getElementType();
  if (isa<Float4E2M1FNType>(element))
    return isa<Float8E4M3FNType>(getScaleType()) ? Format::nvfp4
                                                 : Format::mxfp4;
  return isa<Float8E4M3FNType>(element) ? Format::mxfp8_e4m3
                                        : Format::mxfp8_e5m2;
}

ScaledTensorType ScaledTensorType::getForFormat(
    MLIRContext *context, Format format, ArrayRef<int64_t> shape, int64_t dim,
    std::optional<int64_t> dim2, bool hasGlobalScale) {
  Builder b(context);
  Type element, scale;
  int64_t block = 32;
  switch (format) {
  case Format::mxfp4:
    element = b.getType<Float4E2M1FNType>();
    scale = b.getType<Float8E8M0FNUType>();
    break;
  case Format::nvfp4:
    element = b.getType<Float4E2M1FNType>();
    scale = b.getType<Float8E4M3FNType>();
    block = 16;
    break;
  case Format::mxfp8_e4m3:
    element = b.getType<Float8E4M3FNType>();
    scale = b.getType<Float8E8M0FNUType>();
    break;
  case Format::mxfp8_e5m2:
    element = b.getType<Float8E5M2Type>();
    scale = b.getType<Float8E8M0FNUType>();
    break;
  }
  SmallVector<int64_t> blockShape(shape.size(), 1);
  blockShape[dim] = block;
  if (dim2)
    blockShape[*dim2] = block;
  return ScaledTensorType::get(context, shape, element, blockShape, scale,
                               hasGlobalScale);
}
