//===- LLVM.cpp - LLVM casts, constants and aggregates --------------------===//
//
// The LLVM dialect ops that the conversions to ROCDL and NVVM leave around
// the intrinsics: constants, casts, vector element access, the struct
// values NVVM's matrix ops return, the fused multiply-add of f32, and the
// pointer arithmetic, loads and stores on shared-memory pointers that tcgen05
// kernels use.
//
//===----------------------------------------------------------------------===//

#include "Executor.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "llvm/ADT/TypeSwitch.h"

#include <cmath>
#include <cstring>

using namespace mlir;
using namespace mlir::fp4train::emulation::detail;

namespace {

/// The first word of the field at `position` of an LLVM struct or array, in
/// the flattened words of the aggregate, and the field's type; nullopt if
/// `position` leaves the aggregate.
std::optional<std::pair<unsigned, Type>>
getFieldWords(Type aggregate, ArrayRef<int64_t> position) {
  unsigned offset = 0;
  Type type = aggregate;
  for (int64_t p : position) {
    if (auto structType = dyn_cast<LLVM::LLVMStructType>(type)) {
      ArrayRef<Type> body = structType.getBody();
      if (p < 0 || p >= static_cast<int64_t>(body.size()))
        return std::nullopt;
      for (Type field : body.take_front(p))
        offset += getWidth(field);
      type = body[p];
    } else if (auto array = dyn_cast<LLVM::LLVMArrayType>(type)) {
      if (p < 0 || p >= static_cast<int64_t>(array.getNumElements()))
        return std::nullopt;
      offset += p * getWidth(array.getElementType());
      type = array.getElementType();
    } else {
      return std::nullopt;
    }
  }
  return std::make_pair(offset, type);
}

} // namespace

/// The shared-memory byte address space of LLVM's NVPTX and AMDGPU targets.
static bool isSharedPointer(Type type) {
  auto pointer = dyn_cast<LLVM::LLVMPointerType>(type);
  return pointer && pointer.getAddressSpace() == 3;
}

LogicalResult Executor::executeLLVM(Operation &op, const Mask &mask) {
  // Loads and stores through shared-memory pointers (addresses in the
  // workgroup's shared window), with the shared-memory checks.
  auto access = [&](Value pointer, Value data, bool write) -> LogicalResult {
    if (!isSharedPointer(pointer.getType()) || !kernel)
      return fail(&op, "only loads and stores through shared-memory "
                       "(address space 3) pointers in kernels are modelled");
    const unsigned bits = getElementBits(data.getType());
    if (bits % 8)
      return fail(&op, "sub-byte loads and stores are not modelled");
    const unsigned width = getWidth(data.getType()), bytes = bits / 8;
    if (!write)
      define(data);
    for (unsigned lane = 0; lane < lanes; ++lane) {
      if (!mask[lane])
        continue;
      const Word address = get(pointer).at(lane);
      std::vector<uint8_t> buffer(size_t{width} * bytes);
      if (write)
        for (unsigned i = 0; i < width; ++i) {
          const Word w = get(data).at(lane, i);
          std::memcpy(buffer.data() + i * bytes, &w, bytes);
        }
      if (failed(accessShared(&op, address, width * bytes, lane / subgroupSize,
                              write, buffer.data())))
        return failure();
      if (!write)
        for (unsigned i = 0; i < width; ++i) {
          Word w = 0;
          std::memcpy(&w, buffer.data() + i * bytes, bytes);
          get(data).at(lane, i) = w;
        }
    }
    return success();
  };
  if (auto store = dyn_cast<LLVM::StoreOp>(op))
    return access(store.getAddr(), store.getValue(), /*write=*/true);
  if (auto load = dyn_cast<LLVM::LoadOp>(op))
    return access(load.getAddr(), load.getResult(), /*write=*/false);
  if (op.getNumResults() != 1)
    return failUnsupported(&op);
  Value result = op.getResult(0);
  auto map1 = [&](auto f) {
    const Lanes &a = get(op.getOperand(0));
    Lanes out(lanes, a.width);
    for (unsigned lane = 0; lane < lanes; ++lane)
      for (unsigned i = 0; i < a.width; ++i)
        out.at(lane, i) = f(a.at(lane, i));
    values[result] = std::move(out);
    return success();
  };
  return llvm::TypeSwitch<Operation *, LogicalResult>(&op)
      .Case([&](LLVM::ConstantOp constant) {
        std::optional<std::vector<Word>> words =
            getAttributeWords(constant.getValue());
        if (!words)
          return fail(&op, "unsupported constant");
        values[result] = uniform(result.getType(), *words);
        return success();
      })
      .Case<LLVM::ZeroOp, LLVM::UndefOp, LLVM::PoisonOp>([&](Operation *) {
        define(result);
        return success();
      })
      .Case([&](LLVM::BitcastOp cast) {
        Lanes &out = define(result);
        repack(get(cast.getArg()), getElementBits(cast.getArg().getType()), out,
               getElementBits(result.getType()), lanes);
        return success();
      })
      .Case([&](LLVM::AddrSpaceCastOp) {
        // cvta: the emulator's generic, global and shared pointers are the
        // same addresses (the shared and global windows do not overlap).
        return map1([](Word a) { return a; });
      })
      .Case<LLVM::IntToPtrOp, LLVM::PtrToIntOp>([&](Operation *cast) {
        // Pointers are their addresses (64-bit words).
        const unsigned to = getElementBits(result.getType());
        return map1([&](Word a) { return truncate(a, to); });
      })
      .Case([&](LLVM::GEPOp gep) -> LogicalResult {
        // p + index * sizeof(element) for one index over a scalar type.
        Type element = gep.getElemType();
        LLVM::GEPIndicesAdaptor<ValueRange> indices = gep.getIndices();
        if (indices.size() != 1 || !element.isIntOrFloat() ||
            element.getIntOrFloatBitWidth() % 8)
          return fail(&op, "only single-index getelementptr over byte-sized "
                           "scalars is modelled");
        const int64_t size = element.getIntOrFloatBitWidth() / 8;
        Lanes out(lanes, 1);
        const Lanes &base = get(gep.getBase());
        for (unsigned lane = 0; lane < lanes; ++lane) {
          int64_t index;
          if (auto attr = dyn_cast<IntegerAttr>(indices[0]))
            index = attr.getInt();
          else {
            Value v = cast<Value>(indices[0]);
            index = signExtend(get(v).at(lane), getElementBits(v.getType()));
          }
          out.at(lane) = base.at(lane) + static_cast<Word>(index * size);
        }
        values[result] = std::move(out);
        return success();
      })
      .Case<LLVM::ZExtOp, LLVM::SExtOp, LLVM::TruncOp>([&](Operation *cast) {
        const unsigned from = getElementBits(cast->getOperand(0).getType());
        const unsigned to = getElementBits(result.getType());
        const bool isSigned = isa<LLVM::SExtOp>(cast);
        return map1(
            [&](Word a) { return resizeInteger(a, from, to, isSigned); });
      })
      .Case([&](LLVM::FMAOp fma) -> LogicalResult {
        // llvm.intr.fma: a * b + c rounded once (fma.rn.f32 on NVIDIA), f32
        // only; the host's fmaf is the correctly rounded fused operation.
        if (!getElementType(result.getType()).isF32())
          return fail(&op, "only f32 fma is modelled");
        const Lanes &a = get(fma.getA()), &b = get(fma.getB()),
                    &c = get(fma.getC());
        Lanes out(lanes, a.width);
        for (unsigned lane = 0; lane < lanes; ++lane)
          for (unsigned i = 0; i < a.width; ++i)
            out.at(lane, i) =
                fromF32(std::fmaf(toF32(a.at(lane, i)), toF32(b.at(lane, i)),
                                  toF32(c.at(lane, i))));
        values[result] = std::move(out);
        return success();
      })
      .Case([&](LLVM::ExtractElementOp extract) {
        const Lanes &vector = get(extract.getVector());
        const Lanes &position = get(extract.getPosition());
        Lanes out(lanes, 1);
        for (unsigned lane = 0; lane < lanes; ++lane) {
          const Word p = position.at(lane);
          out.at(lane) = p < vector.width ? vector.at(lane, p) : 0;
        }
        values[result] = std::move(out);
        return success();
      })
      .Case([&](LLVM::InsertElementOp insert) {
        Lanes out = get(insert.getVector());
        const Lanes &value = get(insert.getValue());
        const Lanes &position = get(insert.getPosition());
        for (unsigned lane = 0; lane < lanes; ++lane) {
          const Word p = position.at(lane);
          if (p < out.width)
            out.at(lane, p) = value.at(lane);
        }
        values[result] = std::move(out);
        return success();
      })
      .Case([&](LLVM::ExtractValueOp extract) -> LogicalResult {
        auto field = getFieldWords(extract.getContainer().getType(),
                                   extract.getPosition());
        if (!field)
          return fail(&op, "position out of range");
        const Lanes &container = get(extract.getContainer());
        Lanes out(lanes, getWidth(result.getType()));
        for (unsigned lane = 0; lane < lanes; ++lane)
          for (unsigned i = 0; i < out.width; ++i)
            out.at(lane, i) = container.at(lane, field->first + i);
        values[result] = std::move(out);
        return success();
      })
      .Case([&](LLVM::InsertValueOp insert) -> LogicalResult {
        auto field = getFieldWords(insert.getContainer().getType(),
                                   insert.getPosition());
        if (!field)
          return fail(&op, "position out of range");
        Lanes out = get(insert.getContainer());
        const Lanes &value = get(insert.getValue());
        for (unsigned lane = 0; lane < lanes; ++lane)
          for (unsigned i = 0; i < value.width; ++i)
            out.at(lane, field->first + i) = value.at(lane, i);
        values[result] = std::move(out);
        return success();
      })
      .Default([&](Operation *) { return failUnsupported(&op); });
}
