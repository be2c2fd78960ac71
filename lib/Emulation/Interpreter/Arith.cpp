//===- Arith.cpp - arith ops, elementwise over the lanes ------------------===//
//
// Integer ops on the zero-extended words of their bit width, float ops in
// f32 or through double (exact up to f64, then rounded once), divisions
// checked for zero in the active lanes.
//
//===----------------------------------------------------------------------===//

#include "Executor.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "llvm/ADT/APFloat.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/ADT/TypeSwitch.h"

#include <cmath>

using namespace mlir;
using namespace mlir::fp4train::emulation::detail;

namespace {

bool compareIntegers(arith::CmpIPredicate predicate, Word a, Word b,
                     unsigned bits) {
  const int64_t sa = signExtend(a, bits), sb = signExtend(b, bits);
  switch (predicate) {
  case arith::CmpIPredicate::eq:
    return a == b;
  case arith::CmpIPredicate::ne:
    return a != b;
  case arith::CmpIPredicate::slt:
    return sa < sb;
  case arith::CmpIPredicate::sle:
    return sa <= sb;
  case arith::CmpIPredicate::sgt:
    return sa > sb;
  case arith::CmpIPredicate::sge:
    return sa >= sb;
  case arith::CmpIPredicate::ult:
    return a < b;
  case arith::CmpIPredicate::ule:
    return a <= b;
  case arith::CmpIPredicate::ugt:
    return a > b;
  case arith::CmpIPredicate::uge:
    return a >= b;
  }
  return false;
}

bool compareFloats(arith::CmpFPredicate predicate, double a, double b) {
  const bool unordered = std::isnan(a) || std::isnan(b);
  switch (predicate) {
  case arith::CmpFPredicate::AlwaysFalse:
    return false;
  case arith::CmpFPredicate::OEQ:
    return !unordered && a == b;
  case arith::CmpFPredicate::OGT:
    return !unordered && a > b;
  case arith::CmpFPredicate::OGE:
    return !unordered && a >= b;
  case arith::CmpFPredicate::OLT:
    return !unordered && a < b;
  case arith::CmpFPredicate::OLE:
    return !unordered && a <= b;
  case arith::CmpFPredicate::ONE:
    return !unordered && a != b;
  case arith::CmpFPredicate::ORD:
    return !unordered;
  case arith::CmpFPredicate::UEQ:
    return unordered || a == b;
  case arith::CmpFPredicate::UGT:
    return unordered || a > b;
  case arith::CmpFPredicate::UGE:
    return unordered || a >= b;
  case arith::CmpFPredicate::ULT:
    return unordered || a < b;
  case arith::CmpFPredicate::ULE:
    return unordered || a <= b;
  case arith::CmpFPredicate::UNE:
    return unordered || a != b;
  case arith::CmpFPredicate::UNO:
    return unordered;
  case arith::CmpFPredicate::AlwaysTrue:
    return true;
  }
  return false;
}

} // namespace

LogicalResult Executor::executeArith(Operation &op, const Mask &mask) {
  if (auto constant = dyn_cast<arith::ConstantOp>(op)) {
    std::optional<std::vector<Word>> words =
        getAttributeWords(constant.getValue());
    if (!words)
      return fail(&op, "unsupported constant");
    values[constant.getResult()] = uniform(constant.getType(), *words);
    return success();
  }
  if (auto multiply = dyn_cast<arith::MulUIExtendedOp>(op)) {
    // The full 2w-bit product: low and high halves (Philox rounds).
    const unsigned bits = getElementBits(multiply.getLhs().getType());
    if (bits > 32)
      return fail(&op, "only operands of up to 32 bits are supported");
    const Lanes &a = get(multiply.getLhs()), &b = get(multiply.getRhs());
    Lanes low(lanes, a.width), high(lanes, a.width);
    for (unsigned lane = 0; lane < lanes; ++lane)
      for (unsigned i = 0; i < a.width; ++i) {
        const Word p = a.at(lane, i) * b.at(lane, i);
        low.at(lane, i) = truncate(p, bits);
        high.at(lane, i) = truncate(p >> bits, bits);
      }
    values[multiply.getLow()] = std::move(low);
    values[multiply.getHigh()] = std::move(high);
    return success();
  }
  if (op.getNumResults() != 1)
    return fail(&op, "unsupported arith op");
  Value result = op.getResult(0);
  const unsigned bits = getElementBits(result.getType());
  const unsigned width = getWidth(result.getType());
  Type elementType = getElementType(result.getType());

  // Elementwise ops over all lanes (inactive lanes compute harmless values).
  auto map1 = [&](auto f) {
    Lanes out(lanes, width);
    const Lanes &a = get(op.getOperand(0));
    for (unsigned lane = 0; lane < lanes; ++lane)
      for (unsigned i = 0; i < width; ++i)
        out.at(lane, i) = f(a.at(lane, i));
    values[result] = std::move(out);
    return success();
  };
  auto map2 = [&](auto f) {
    Lanes out(lanes, width);
    const Lanes &a = get(op.getOperand(0));
    const Lanes &b = get(op.getOperand(1));
    for (unsigned lane = 0; lane < lanes; ++lane)
      for (unsigned i = 0; i < width; ++i)
        out.at(lane, i) = f(a.at(lane, i), b.at(lane, i));
    values[result] = std::move(out);
    return success();
  };
  auto integer2 = [&](auto f) {
    return map2([&](Word a, Word b) { return truncate(f(a, b), bits); });
  };
  auto float2 = [&](auto f) {
    if (elementType.isF32())
      return map2([&](Word a, Word b) {
        return fromF32(static_cast<float>(f(toF32(a), toF32(b))));
      });
    return map2([&](Word a, Word b) {
      return doubleToFloat(
          f(floatToDouble(a, elementType), floatToDouble(b, elementType)),
          elementType);
    });
  };
  bool divisionByZero = false;
  auto divisor = [&](Word b) {
    if (b == 0)
      divisionByZero = true;
    return b == 0 ? Word{1} : b;
  };
  auto checkDivision = [&]() -> LogicalResult {
    if (!divisionByZero)
      return success();
    const Lanes &b = get(op.getOperand(1));
    for (unsigned lane = 0; lane < lanes; ++lane)
      for (unsigned i = 0; i < width; ++i)
        if (mask[lane] && b.at(lane, i) == 0)
          return fail(&op, "division by zero in lane " + Twine(lane));
    return success();
  };

  return llvm::TypeSwitch<Operation *, LogicalResult>(&op)
      .Case([&](arith::AddIOp) {
        return integer2([](Word a, Word b) { return a + b; });
      })
      .Case([&](arith::SubIOp) {
        return integer2([](Word a, Word b) { return a - b; });
      })
      .Case([&](arith::MulIOp) {
        return integer2([](Word a, Word b) { return a * b; });
      })
      .Case([&](arith::AndIOp) {
        return integer2([](Word a, Word b) { return a & b; });
      })
      .Case([&](arith::OrIOp) {
        return integer2([](Word a, Word b) { return a | b; });
      })
      .Case([&](arith::XOrIOp) {
        return integer2([](Word a, Word b) { return a ^ b; });
      })
      .Case([&](arith::ShLIOp) {
        return integer2([&](Word a, Word b) { return b >= bits ? 0 : a << b; });
      })
      .Case([&](arith::ShRUIOp) {
        return integer2([&](Word a, Word b) { return b >= bits ? 0 : a >> b; });
      })
      .Case([&](arith::ShRSIOp) {
        return integer2([&](Word a, Word b) {
          return static_cast<Word>(signExtend(a, bits) >>
                                   std::min<Word>(b, bits - 1));
        });
      })
      .Case([&](arith::DivUIOp) {
        (void)integer2([&](Word a, Word b) { return a / divisor(b); });
        return checkDivision();
      })
      .Case([&](arith::RemUIOp) {
        (void)integer2([&](Word a, Word b) { return a % divisor(b); });
        return checkDivision();
      })
      .Case([&](arith::DivSIOp) {
        (void)integer2([&](Word a, Word b) {
          return static_cast<Word>(signExtend(a, bits) /
                                   signExtend(divisor(b), bits));
        });
        return checkDivision();
      })
      .Case([&](arith::RemSIOp) {
        (void)integer2([&](Word a, Word b) {
          return static_cast<Word>(signExtend(a, bits) %
                                   signExtend(divisor(b), bits));
        });
        return checkDivision();
      })
      .Case([&](arith::CeilDivUIOp) {
        (void)integer2([&](Word a, Word b) {
          Word d = divisor(b);
          return a / d + (a % d != 0);
        });
        return checkDivision();
      })
      .Case([&](arith::MaxUIOp) {
        return integer2([](Word a, Word b) { return std::max(a, b); });
      })
      .Case([&](arith::MinUIOp) {
        return integer2([](Word a, Word b) { return std::min(a, b); });
      })
      .Case([&](arith::MaxSIOp) {
        return integer2([&](Word a, Word b) {
          return signExtend(a, bits) >= signExtend(b, bits) ? a : b;
        });
      })
      .Case([&](arith::MinSIOp) {
        return integer2([&](Word a, Word b) {
          return signExtend(a, bits) <= signExtend(b, bits) ? a : b;
        });
      })
      .Case([&](arith::CmpIOp cmp) {
        const unsigned operandBits = getElementBits(cmp.getLhs().getType());
        return map2([&](Word a, Word b) -> Word {
          return compareIntegers(cmp.getPredicate(), a, b, operandBits);
        });
      })
      .Case([&](arith::CmpFOp cmp) {
        Type operandType = getElementType(cmp.getLhs().getType());
        return map2([&](Word a, Word b) -> Word {
          return compareFloats(cmp.getPredicate(),
                               floatToDouble(a, operandType),
                               floatToDouble(b, operandType));
        });
      })
      .Case([&](arith::SelectOp select) {
        Lanes out(lanes, width);
        const Lanes &c = get(select.getCondition());
        const Lanes &t = get(select.getTrueValue());
        const Lanes &f = get(select.getFalseValue());
        for (unsigned lane = 0; lane < lanes; ++lane)
          for (unsigned i = 0; i < width; ++i)
            out.at(lane, i) = c.at(lane, c.width == 1 ? 0 : i) ? t.at(lane, i)
                                                               : f.at(lane, i);
        values[result] = std::move(out);
        return success();
      })
      .Case<arith::ExtUIOp, arith::ExtSIOp, arith::TruncIOp, arith::IndexCastOp,
            arith::IndexCastUIOp>([&](Operation *cast) {
        const unsigned from = getElementBits(cast->getOperand(0).getType());
        const bool isSigned = isa<arith::ExtSIOp, arith::IndexCastOp>(cast);
        return map1(
            [&](Word a) { return resizeInteger(a, from, bits, isSigned); });
      })
      .Case([&](arith::BitcastOp) { return map1([](Word a) { return a; }); })
      .Case([&](arith::AddFOp) {
        return float2([](auto a, auto b) { return a + b; });
      })
      .Case([&](arith::SubFOp) {
        return float2([](auto a, auto b) { return a - b; });
      })
      .Case([&](arith::MulFOp) {
        return float2([](auto a, auto b) { return a * b; });
      })
      .Case([&](arith::DivFOp) {
        return float2([](auto a, auto b) { return a / b; });
      })
      .Case([&](arith::MaxNumFOp) {
        return float2([](auto a, auto b) { return std::fmax(a, b); });
      })
      .Case([&](arith::MinNumFOp) {
        return float2([](auto a, auto b) { return std::fmin(a, b); });
      })
      .Case([&](arith::MaximumFOp) {
        return float2([](auto a, auto b) {
          return std::isnan(a) || std::isnan(b) ? NAN : std::fmax(a, b);
        });
      })
      .Case([&](arith::MinimumFOp) {
        return float2([](auto a, auto b) {
          return std::isnan(a) || std::isnan(b) ? NAN : std::fmin(a, b);
        });
      })
      .Case([&](arith::NegFOp) {
        return map1([&](Word a) { return a ^ (Word{1} << (bits - 1)); });
      })
      .Case([&](arith::ExtFOp ext) {
        Type from = getElementType(ext.getIn().getType());
        return map1([&](Word a) {
          return doubleToFloat(floatToDouble(a, from), elementType);
        });
      })
      .Case([&](arith::TruncFOp trunc) {
        if (trunc.getRoundingmodeAttr())
          return fail(&op, "only the default rounding is supported");
        Type from = getElementType(trunc.getIn().getType());
        if (!from.isF32() && !from.isF64())
          return fail(&op, "truncation from " + Twine(getElementBits(from)) +
                               "-bit floats is not supported");
        return map1([&](Word a) {
          if (from.isF32()) {
            // Round the f32 directly: a detour through double is exact.
            return doubleToFloat(toF32(a), elementType);
          }
          return doubleToFloat(toF64(a), elementType);
        });
      })
      .Case([&](arith::SIToFPOp convert) {
        const unsigned from = getElementBits(convert.getIn().getType());
        return map1([&](Word a) {
          APFloat value(cast<FloatType>(elementType).getFloatSemantics());
          value.convertFromAPInt(APInt(64, signExtend(a, from), true), true,
                                 APFloat::rmNearestTiesToEven);
          return value.bitcastToAPInt().getZExtValue();
        });
      })
      .Case([&](arith::UIToFPOp) {
        return map1([&](Word a) {
          APFloat value(cast<FloatType>(elementType).getFloatSemantics());
          value.convertFromAPInt(APInt(64, a), false,
                                 APFloat::rmNearestTiesToEven);
          return value.bitcastToAPInt().getZExtValue();
        });
      })
      .Default([&](Operation *) { return failUnsupported(&op); });
}

//===----------------------------------------------------------------------===//
// math
//===----------------------------------------------------------------------===//

// The f32 math ops of training steps' host code (GELU's tanh, softmax's exp,
// norms' rsqrt), computed with the C library; in kernels they stay
// unsupported (the CUDA pipeline rejects libdevice calls), and no bit-exactness
// is claimed for them: they only produce the values the kernels receive, which
// the device runner passes to the device unchanged.
LogicalResult Executor::executeMath(Operation &op) {
  if (kernel)
    return failUnsupported(&op);
  if (op.getNumResults() != 1 || op.getNumOperands() < 1 ||
      op.getNumOperands() > 2 ||
      !getElementType(op.getResult(0).getType()).isF32())
    return fail(&op, "only f32 math ops with one or two operands are "
                     "supported");
  float (*unary)(float) =
      llvm::StringSwitch<float (*)(float)>(op.getName().getStringRef())
          .Case("math.tanh", [](float x) { return std::tanh(x); })
          .Case("math.exp", [](float x) { return std::exp(x); })
          .Case("math.log", [](float x) { return std::log(x); })
          .Case("math.sqrt", [](float x) { return std::sqrt(x); })
          .Case("math.absf", [](float x) { return std::fabs(x); })
          .Case("math.erf", [](float x) { return std::erf(x); })
          .Case("math.rsqrt", [](float x) { return 1.0f / std::sqrt(x); })
          .Default(nullptr);
  float (*binary)(float, float) =
      llvm::StringSwitch<float (*)(float, float)>(op.getName().getStringRef())
          .Case("math.powf", [](float x, float y) { return std::pow(x, y); })
          .Default(nullptr);
  if (op.getNumOperands() == 1 ? !unary : !binary)
    return failUnsupported(&op);
  Value result = op.getResult(0);
  Lanes out(lanes, getWidth(result.getType()));
  const Lanes &a = get(op.getOperand(0));
  const Lanes *b = op.getNumOperands() == 2 ? &get(op.getOperand(1)) : nullptr;
  for (unsigned lane = 0; lane < lanes; ++lane)
    for (unsigned i = 0; i < out.width; ++i)
      out.at(lane, i) =
          fromF32(b ? binary(toF32(a.at(lane, i)), toF32(b->at(lane, i)))
                    : unary(toF32(a.at(lane, i))));
  values[result] = std::move(out);
  return success();
}
