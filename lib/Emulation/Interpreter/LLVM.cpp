//===- LLVM.cpp - LLVM casts, constants and aggregates --------------------===//
//
// The LLVM dialect ops that the conversions to ROCDL and NVVM leave around
// the intrinsics: constants, casts, vector element access, and the struct
// values NVVM's matrix ops return.
//
//===----------------------------------------------------------------------===//

#include "Executor.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "llvm/ADT/TypeSwitch.h"

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

LogicalResult Executor::executeLLVM(Operation &op) {
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
        repack(get(cast.getArg()), getElementBits(cast.getArg().getType()),
               out, getElementBits(result.getType()), lanes);
        return success();
      })
      .Case<LLVM::ZExtOp, LLVM::SExtOp, LLVM::TruncOp>([&](Operation *cast) {
        const unsigned from = getElementBits(cast->getOperand(0).getType());
        const unsigned to = getElementBits(result.getType());
        const bool isSigned = isa<LLVM::SExtOp>(cast);
        return map1([&](Word a) {
          return resizeInteger(a, from, to, isSigned);
        });
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
      .Default([&](Operation *) {
        return failUnsupported(&op);
      });
}
