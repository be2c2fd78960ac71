//===- Values.cpp - Lane words, memory views and their conversions
//---------===//
//
// How the interpreter represents SSA values (one LaneValues per value: words
// per lane) and memrefs (strided views of byte storage), and the bit-level
// helpers every op family shares.
//
//===----------------------------------------------------------------------===//

#include "Executor.h"

#include "mlir/Dialect/LLVMIR/LLVMTypes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/APFloat.h"

#include <cstring>

using namespace mlir;

namespace mlir::fp4train::emulation::detail {

SmallVector<int64_t> rowMajorStrides(ArrayRef<int64_t> sizes) {
  SmallVector<int64_t> strides(sizes.size(), 1);
  for (int d = static_cast<int>(sizes.size()) - 2; d >= 0; --d)
    strides[d] = strides[d + 1] * sizes[d + 1];
  return strides;
}

unsigned getElementBits(Type type) {
  if (auto vector = dyn_cast<VectorType>(type))
    type = vector.getElementType();
  // Indices and LLVM pointers (shared-memory and tensor-memory addresses)
  // are 64-bit words, and so are the opaque handles of other dialects (a TMA
  // descriptor is the address of its tensor map).
  if (isa<IndexType, LLVM::LLVMPointerType>(type) || !type.isIntOrFloat())
    return 64;
  return type.getIntOrFloatBitWidth();
}

Type getElementType(Type type) {
  if (auto vector = dyn_cast<VectorType>(type))
    return vector.getElementType();
  return type;
}

unsigned getWidth(Type type) {
  if (auto vector = dyn_cast<VectorType>(type))
    return static_cast<unsigned>(vector.getNumElements());
  // LLVM aggregates (the struct results of NVVM's mma, for instance): their
  // scalars in order, so that extractvalue/insertvalue are word slices.
  if (auto structType = dyn_cast<LLVM::LLVMStructType>(type)) {
    unsigned width = 0;
    for (Type field : structType.getBody())
      width += getWidth(field);
    return width;
  }
  if (auto array = dyn_cast<LLVM::LLVMArrayType>(type))
    return static_cast<unsigned>(array.getNumElements()) *
           getWidth(array.getElementType());
  return 1;
}

Word truncate(Word w, unsigned bits) {
  return bits >= 64 ? w : w & ((Word{1} << bits) - 1);
}

int64_t signExtend(Word w, unsigned bits) {
  if (bits >= 64)
    return static_cast<int64_t>(w);
  return static_cast<int64_t>(w << (64 - bits)) >> (64 - bits);
}

Word resizeInteger(Word w, unsigned from, unsigned to, bool isSigned) {
  return truncate(isSigned ? static_cast<Word>(signExtend(w, from)) : w, to);
}

float toF32(Word w) {
  uint32_t bits = static_cast<uint32_t>(w);
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

Word fromF32(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  return bits;
}

double toF64(Word w) {
  double d;
  std::memcpy(&d, &w, 8);
  return d;
}

Word fromF64(double d) {
  Word w;
  std::memcpy(&w, &d, 8);
  return w;
}

std::optional<std::vector<Word>> getAttributeWords(Attribute attr) {
  std::vector<Word> words;
  if (auto integer = dyn_cast<IntegerAttr>(attr)) {
    words.push_back(truncate(integer.getValue().getZExtValue(),
                             getElementBits(integer.getType())));
  } else if (auto floating = dyn_cast<FloatAttr>(attr)) {
    words.push_back(floating.getValue().bitcastToAPInt().getZExtValue());
  } else if (auto dense = dyn_cast<DenseElementsAttr>(attr)) {
    Type element = dense.getElementType();
    if (isa<FloatType>(element)) {
      for (const APFloat &value : dense.getValues<APFloat>())
        words.push_back(value.bitcastToAPInt().getZExtValue());
    } else {
      for (const APInt &value : dense.getValues<APInt>())
        words.push_back(value.getZExtValue());
    }
  } else {
    return std::nullopt;
  }
  return words;
}

void repack(const Lanes &from, unsigned fromBits, Lanes &to, unsigned toBits,
            unsigned lanes) {
  for (unsigned lane = 0; lane < lanes; ++lane) {
    for (unsigned i = 0; i < to.width; ++i) {
      Word word = 0;
      for (unsigned bit = 0; bit < toBits;) {
        const unsigned position = i * toBits + bit;
        const unsigned element = position / fromBits;
        const unsigned offset = position % fromBits;
        const unsigned take = std::min(fromBits - offset, toBits - bit);
        const Word piece = truncate(from.at(lane, element) >> offset, take);
        word |= piece << bit;
        bit += take;
      }
      to.at(lane, i) = word;
    }
  }
}

bool any(const Mask &mask) {
  return std::find(mask.begin(), mask.end(), 1) != mask.end();
}

double floatToDouble(Word w, Type type) {
  if (type.isF32())
    return toF32(w);
  if (type.isF64())
    return toF64(w);
  auto floatType = cast<FloatType>(type);
  APFloat value(floatType.getFloatSemantics(), APInt(floatType.getWidth(), w));
  bool lost;
  value.convert(APFloat::IEEEdouble(), APFloat::rmNearestTiesToEven, &lost);
  return value.convertToDouble();
}

Word doubleToFloat(double d, Type type) {
  if (type.isF64())
    return fromF64(d);
  if (type.isF32())
    return fromF32(static_cast<float>(d));
  auto floatType = cast<FloatType>(type);
  APFloat value(d);
  bool lost;
  value.convert(floatType.getFloatSemantics(), APFloat::rmNearestTiesToEven,
                &lost);
  return value.bitcastToAPInt().getZExtValue();
}

View allocate(MemRefType type, bool shared) {
  View view;
  view.elementBytes = getElementBits(type.getElementType()) / 8;
  view.sizes.assign(type.getShape().begin(), type.getShape().end());
  view.strides = rowMajorStrides(view.sizes);
  view.memory = std::make_shared<Memory>(
      view.getNumElements() * view.elementBytes, shared);
  return view;
}

} // namespace mlir::fp4train::emulation::detail
