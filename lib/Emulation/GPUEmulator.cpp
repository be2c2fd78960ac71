//===- GPUEmulator.cpp - Lockstep CPU execution of gfx950 kernels ---------===//
//
// An interpreter over the ops that buildROCmKernelPipeline leaves in host
// functions and kernels. Every SSA value holds one entry per lane (the host
// is a single lane); a workgroup's threads run in lockstep under an
// execution mask; ROCDL matrix and conversion intrinsics go to the CDNA4
// instruction models. See GPUEmulator.h for what is checked on the way.
//
//===----------------------------------------------------------------------===//

#include "fp4train/Emulation/GPUEmulator.h"

#include "fp4train/Emulation/CDNA4.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/LLVMIR/ROCDLDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/APFloat.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/FormatVariadic.h"

#include <cmath>
#include <cstring>
#include <memory>

using namespace mlir;
using namespace mlir::fp4train::emulation;
namespace cdna4 = ::fp4train::emulation::cdna4;

namespace {

using Word = uint64_t;
using Mask = std::vector<char>;

//===----------------------------------------------------------------------===//
// Memory
//===----------------------------------------------------------------------===//

/// A global allocation or a workgroup's LDS. LDS carries a shadow per byte
/// for the race and uninitialized-read checks.
struct Memory {
  std::vector<uint8_t> bytes;
  bool lds = false;
  std::vector<uint32_t> writeEpoch; // 0: never written
  std::vector<uint8_t> writer;
  std::vector<uint32_t> readEpoch;
  std::vector<uint64_t> readers; // bit per wave, valid in readEpoch

  Memory(size_t size, bool isLds) : bytes(size), lds(isLds) {
    if (lds) {
      writeEpoch.assign(size, 0);
      writer.assign(size, 0);
      readEpoch.assign(size, 0);
      readers.assign(size, 0);
    }
  }
};

/// A memref: a strided view of a Memory, in elements.
struct View {
  std::shared_ptr<Memory> memory;
  int64_t offset = 0;
  SmallVector<int64_t> sizes, strides;
  unsigned elementBytes = 0;

  int64_t getNumElements() const {
    int64_t n = 1;
    for (int64_t s : sizes)
      n *= s;
    return n;
  }
  bool isRowMajor() const {
    int64_t expected = 1;
    for (int d = static_cast<int>(sizes.size()) - 1; d >= 0; --d) {
      if (sizes[d] != 1 && strides[d] != expected)
        return false;
      expected *= sizes[d];
    }
    return true;
  }
};

SmallVector<int64_t> rowMajorStrides(ArrayRef<int64_t> sizes) {
  SmallVector<int64_t> strides(sizes.size(), 1);
  for (int d = static_cast<int>(sizes.size()) - 2; d >= 0; --d)
    strides[d] = strides[d + 1] * sizes[d + 1];
  return strides;
}

//===----------------------------------------------------------------------===//
// Values
//===----------------------------------------------------------------------===//

/// One SSA value: `width` elements per lane, lane-major, each element's bits
/// zero-extended into a 64-bit word.
struct Lanes {
  unsigned width = 1;
  std::vector<Word> words;

  Lanes() = default;
  Lanes(unsigned lanes, unsigned width) : width(width), words(lanes * width) {}
  Word &at(unsigned lane, unsigned i = 0) { return words[lane * width + i]; }
  Word at(unsigned lane, unsigned i = 0) const {
    return words[lane * width + i];
  }
};

unsigned getElementBits(Type type) {
  if (auto vector = dyn_cast<VectorType>(type))
    type = vector.getElementType();
  if (isa<IndexType>(type))
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

/// An integer of `from` bits extended (signed or not) or truncated to `to`
/// bits: arith.ext{u,s}i / trunci / index_cast[ui] and LLVM's zext / sext /
/// trunc.
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

/// Words of an integer, index or float attribute, element by element.
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

/// Reinterprets a lane's `count` elements of `fromBits` as elements of
/// `toBits` (vector/LLVM bitcasts: element 0 in the lowest bits).
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
        const Word piece =
            truncate(from.at(lane, element) >> offset, take);
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

//===----------------------------------------------------------------------===//
// The interpreter
//===----------------------------------------------------------------------===//

/// Executes one region nest (a host function, or one workgroup of a kernel)
/// with `lanes` lockstep lanes.
class Executor {
public:
  Executor(unsigned lanes, EmulatorStats &stats, std::string &error)
      : lanes(lanes), stats(stats), error(error) {}

  /// Kernel context: workgroup id, sizes.
  bool kernel = false;
  std::array<int64_t, 3> blockId{}, blockDim{1, 1, 1}, gridDim{1, 1, 1};
  uint32_t epoch = 1;

  unsigned lanes;
  EmulatorStats &stats;
  std::string &error;
  DenseMap<Value, Lanes> values;
  DenseMap<Value, View> views;

  /// Runs `block`; the operands of its terminator (scf.yield, func.return)
  /// go to `yielded`.
  LogicalResult run(Block &block, const Mask &mask,
                    SmallVectorImpl<Value> *yielded = nullptr);

private:
  LogicalResult fail(Operation *op, const Twine &message);
  LogicalResult execute(Operation &op, const Mask &mask);

  /// The lanes of a defined value. References stay valid only until the
  /// next value is defined (the map may grow).
  Lanes &get(Value value) {
    auto it = values.find(value);
    assert(it != values.end() && "use of a value that was never defined");
    return it->second;
  }
  Lanes &define(Value value) {
    Lanes &result = values[value];
    result = Lanes(lanes, getWidth(value.getType()));
    return result;
  }
  Lanes uniform(Type type, ArrayRef<Word> words) {
    Lanes result(lanes, getWidth(type));
    for (unsigned lane = 0; lane < lanes; ++lane)
      for (unsigned i = 0; i < result.width; ++i)
        result.at(lane, i) = words.size() == 1 ? words[0] : words[i];
    return result;
  }

  // Op families.
  LogicalResult executeArith(Operation &op, const Mask &mask);
  LogicalResult executeVector(Operation &op, const Mask &mask);
  LogicalResult executeMemRef(Operation &op, const Mask &mask);
  LogicalResult executeLLVM(Operation &op);
  LogicalResult executeROCDL(Operation &op, const Mask &mask);
  LogicalResult executeGPU(Operation &op, const Mask &mask);
  LogicalResult executeFor(scf::ForOp op, const Mask &mask);
  LogicalResult executeIf(scf::IfOp op, const Mask &mask);
  LogicalResult executeGeneric(linalg::GenericOp op);

  /// The iteration point of the linalg.generic being executed (host only).
  SmallVector<int64_t> linalgPoint;

  // Memory access of lane `lane` at `indices` of `view`, `count` elements.
  FailureOr<int64_t> address(Operation *op, const View &view,
                             ValueRange indices, unsigned lane, int64_t count);
  LogicalResult checkLds(Operation *op, Memory &memory, int64_t byte,
                         int64_t size, unsigned wave, bool write);
  LogicalResult load(Operation *op, const View &view, ValueRange indices,
                     Value result, const Mask &mask);
  LogicalResult store(Operation *op, const View &view, ValueRange indices,
                      Value stored, const Mask &mask);

  LogicalResult launch(gpu::LaunchFuncOp op);
};

LogicalResult Executor::fail(Operation *op, const Twine &message) {
  std::string location;
  llvm::raw_string_ostream os(location);
  op->getLoc().print(os);
  error = llvm::formatv("{0}: '{1}': {2}", location, op->getName(), message.str());
  if (kernel)
    error += llvm::formatv(" (workgroup {0},{1},{2})", blockId[0], blockId[1],
                           blockId[2]);
  return failure();
}

LogicalResult Executor::run(Block &block, const Mask &mask,
                            SmallVectorImpl<Value> *yielded) {
  for (Operation &op : block) {
    if (op.hasTrait<OpTrait::IsTerminator>()) {
      if (isa<scf::YieldOp, func::ReturnOp, gpu::ReturnOp, linalg::YieldOp>(
              op)) {
        if (yielded)
          yielded->assign(op.getOperands().begin(), op.getOperands().end());
        return success();
      }
      return fail(&op, "unsupported terminator");
    }
    if (kernel) {
      // A wave issues an op when any of its lanes is active.
      for (unsigned wave = 0; wave * cdna4::kWaveSize < lanes; ++wave) {
        auto begin = mask.begin() + wave * cdna4::kWaveSize;
        auto end = mask.begin() +
                   std::min<size_t>(lanes, (wave + 1) * cdna4::kWaveSize);
        if (std::find(begin, end, 1) != end)
          ++stats.waveOps;
      }
    }
    if (failed(execute(op, mask)))
      return failure();
  }
  return success();
}

LogicalResult Executor::execute(Operation &op, const Mask &mask) {
  Dialect *dialect = op.getDialect();
  StringRef ns = dialect ? dialect->getNamespace() : "";
  if (ns == "arith")
    return executeArith(op, mask);
  if (ns == "vector")
    return executeVector(op, mask);
  if (ns == "memref")
    return executeMemRef(op, mask);
  if (ns == "llvm")
    return executeLLVM(op);
  if (ns == "rocdl")
    return executeROCDL(op, mask);
  if (ns == "gpu")
    return executeGPU(op, mask);
  if (auto forOp = dyn_cast<scf::ForOp>(op))
    return executeFor(forOp, mask);
  if (auto ifOp = dyn_cast<scf::IfOp>(op))
    return executeIf(ifOp, mask);
  if (auto generic = dyn_cast<linalg::GenericOp>(op))
    return executeGeneric(generic);
  if (auto index = dyn_cast<linalg::IndexOp>(op)) {
    if (index.getDim() >= linalgPoint.size())
      return fail(&op, "outside a linalg.generic");
    values[index.getResult()] =
        uniform(index.getType(), {static_cast<Word>(linalgPoint[index.getDim()])});
    return success();
  }
  if (auto cast = dyn_cast<UnrealizedConversionCastOp>(op)) {
    if (cast->getNumOperands() != 1 || cast->getNumResults() != 1)
      return fail(&op, "only 1:1 casts are supported");
    Value from = cast.getOperand(0), to = cast.getResult(0);
    if (isa<MemRefType>(from.getType())) {
      { View copy = views[from]; views[to] = std::move(copy); }
      return success();
    }
    Lanes result(lanes, getWidth(to.getType()));
    repack(get(from), getElementBits(from.getType()), result,
           getElementBits(to.getType()), lanes);
    values[to] = std::move(result);
    return success();
  }
  return fail(&op, "operation not supported by the gfx950 emulator");
}

//===----------------------------------------------------------------------===//
// arith
//===----------------------------------------------------------------------===//

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

/// Converts a float element of `type` to double and back (exact for every
/// float type up to f64; narrow results round to nearest even).
double floatToDouble(Word w, Type type) {
  if (type.isF32())
    return toF32(w);
  if (type.isF64())
    return toF64(w);
  auto floatType = cast<FloatType>(type);
  APFloat value(floatType.getFloatSemantics(),
                APInt(floatType.getWidth(), w));
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
      return doubleToFloat(f(floatToDouble(a, elementType),
                             floatToDouble(b, elementType)),
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
            out.at(lane, i) = c.at(lane, c.width == 1 ? 0 : i)
                                  ? t.at(lane, i)
                                  : f.at(lane, i);
        values[result] = std::move(out);
        return success();
      })
      .Case<arith::ExtUIOp, arith::ExtSIOp, arith::TruncIOp,
            arith::IndexCastOp, arith::IndexCastUIOp>([&](Operation *cast) {
        const unsigned from = getElementBits(cast->getOperand(0).getType());
        const bool isSigned = isa<arith::ExtSIOp, arith::IndexCastOp>(cast);
        return map1([&](Word a) {
          return resizeInteger(a, from, bits, isSigned);
        });
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
      .Default([&](Operation *) {
        return fail(&op, "operation not supported by the gfx950 emulator");
      });
}

//===----------------------------------------------------------------------===//
// vector
//===----------------------------------------------------------------------===//

/// Flat element position of a static or dynamic vector position in `lane`.
int64_t getFlatPosition(ArrayRef<OpFoldResult> position, VectorType type,
                        DenseMap<Value, Lanes> &values, unsigned lane) {
  int64_t flat = 0;
  for (auto [d, p] : llvm::enumerate(position)) {
    int64_t index;
    if (auto attr = dyn_cast<Attribute>(p))
      index = cast<IntegerAttr>(attr).getInt();
    else
      index = static_cast<int64_t>(values.find(cast<Value>(p))->second.at(lane));
    flat = flat * type.getDimSize(d) + index;
  }
  // A partial position addresses a whole trailing subvector.
  for (int64_t d = position.size(); d < type.getRank(); ++d)
    flat *= type.getDimSize(d);
  return flat;
}

LogicalResult Executor::executeVector(Operation &op, const Mask &mask) {
  return llvm::TypeSwitch<Operation *, LogicalResult>(&op)
      .Case([&](vector::LoadOp load) {
        return this->load(&op, views[load.getBase()], load.getIndices(),
                          load.getResult(), mask);
      })
      .Case([&](vector::StoreOp store) {
        return this->store(&op, views[store.getBase()], store.getIndices(),
                           store.getValueToStore(), mask);
      })
      .Case([&](vector::BitCastOp cast) {
        Lanes &out = define(cast.getResult());
        repack(get(cast.getSource()), getElementBits(cast.getSourceVectorType()),
               out, getElementBits(cast.getResultVectorType()), lanes);
        return success();
      })
      .Case([&](vector::ShapeCastOp cast) {
        Lanes copy = get(cast.getSource());
        values[cast.getResult()] = std::move(copy);
        return success();
      })
      .Case([&](vector::ShuffleOp shuffle) {
        const Lanes &v1 = get(shuffle.getV1());
        const Lanes &v2 = get(shuffle.getV2());
        Lanes out(lanes, getWidth(shuffle.getResult().getType()));
        ArrayRef<int64_t> indices = shuffle.getMask();
        for (unsigned lane = 0; lane < lanes; ++lane)
          for (auto [i, index] : llvm::enumerate(indices)) {
            if (index < 0)
              out.at(lane, i) = 0; // poison
            else if (index < static_cast<int64_t>(v1.width))
              out.at(lane, i) = v1.at(lane, index);
            else
              out.at(lane, i) = v2.at(lane, index - v1.width);
          }
        values[shuffle.getResult()] = std::move(out);
        return success();
      })
      .Case([&](vector::ExtractOp extract) {
        VectorType type = extract.getSourceVectorType();
        const unsigned width = getWidth(extract.getResult().getType());
        Lanes out(lanes, width);
        SmallVector<OpFoldResult> position = extract.getMixedPosition();
        const Lanes &source = get(extract.getSource());
        for (unsigned lane = 0; lane < lanes; ++lane) {
          const int64_t flat = getFlatPosition(position, type, values, lane);
          if (flat < 0 || flat + width > source.width) {
            if (mask[lane])
              return fail(&op, "position out of range");
            continue;
          }
          for (unsigned i = 0; i < width; ++i)
            out.at(lane, i) = source.at(lane, flat + i);
        }
        values[extract.getResult()] = std::move(out);
        return success();
      })
      .Case([&](vector::InsertOp insert) {
        VectorType type = insert.getDestVectorType();
        Lanes out = get(insert.getDest());
        const Lanes &source = get(insert.getValueToStore());
        SmallVector<OpFoldResult> position = insert.getMixedPosition();
        for (unsigned lane = 0; lane < lanes; ++lane) {
          const int64_t flat = getFlatPosition(position, type, values, lane);
          if (flat < 0 || flat + source.width > out.width) {
            if (mask[lane])
              return fail(&op, "position out of range");
            continue;
          }
          for (unsigned i = 0; i < source.width; ++i)
            out.at(lane, flat + i) = source.at(lane, i);
        }
        values[insert.getResult()] = std::move(out);
        return success();
      })
      .Case([&](vector::FromElementsOp from) {
        Lanes out(lanes, from.getElements().size());
        for (auto [i, element] : llvm::enumerate(from.getElements())) {
          const Lanes &e = get(element);
          for (unsigned lane = 0; lane < lanes; ++lane)
            out.at(lane, i) = e.at(lane);
        }
        values[from.getResult()] = std::move(out);
        return success();
      })
      .Case([&](vector::BroadcastOp broadcast) {
        const Lanes &source = get(broadcast.getSource());
        const unsigned width = getWidth(broadcast.getResult().getType());
        if (source.width != 1 && source.width != width)
          return fail(&op, "only scalar or same-size broadcasts are supported");
        Lanes out(lanes, width);
        for (unsigned lane = 0; lane < lanes; ++lane)
          for (unsigned i = 0; i < width; ++i)
            out.at(lane, i) = source.at(lane, source.width == 1 ? 0 : i);
        values[broadcast.getResult()] = std::move(out);
        return success();
      })
      .Case([&](vector::ExtractStridedSliceOp slice) {
        if (slice.getSourceVectorType().getRank() != 1)
          return fail(&op, "only 1-D slices are supported");
        const int64_t offset = cast<IntegerAttr>(slice.getOffsets()[0]).getInt();
        const int64_t stride = cast<IntegerAttr>(slice.getStrides()[0]).getInt();
        const Lanes &source = get(slice.getSource());
        Lanes out(lanes, getWidth(slice.getResult().getType()));
        for (unsigned lane = 0; lane < lanes; ++lane)
          for (unsigned i = 0; i < out.width; ++i)
            out.at(lane, i) = source.at(lane, offset + i * stride);
        values[slice.getResult()] = std::move(out);
        return success();
      })
      .Case([&](vector::InsertStridedSliceOp slice) {
        if (slice.getDestVectorType().getRank() != 1)
          return fail(&op, "only 1-D slices are supported");
        const int64_t offset = cast<IntegerAttr>(slice.getOffsets()[0]).getInt();
        const int64_t stride = cast<IntegerAttr>(slice.getStrides()[0]).getInt();
        const Lanes &source = get(slice.getValueToStore());
        Lanes out = get(slice.getDest());
        for (unsigned lane = 0; lane < lanes; ++lane)
          for (unsigned i = 0; i < source.width; ++i)
            out.at(lane, offset + i * stride) = source.at(lane, i);
        values[slice.getResult()] = std::move(out);
        return success();
      })
      .Case([&](vector::ReductionOp reduction) {
        using vector::CombiningKind;
        Type element = reduction.getSourceVectorType().getElementType();
        const unsigned bits = getElementBits(element);
        const Lanes &source = get(reduction.getVector());
        Lanes out(lanes, 1);
        auto combine = [&](CombiningKind kind, Word a, Word b) -> Word {
          switch (kind) {
          case CombiningKind::ADD:
            if (isa<FloatType>(element))
              return doubleToFloat(floatToDouble(a, element) +
                                       floatToDouble(b, element),
                                   element);
            return truncate(a + b, bits);
          case CombiningKind::MUL:
            if (isa<FloatType>(element))
              return doubleToFloat(floatToDouble(a, element) *
                                       floatToDouble(b, element),
                                   element);
            return truncate(a * b, bits);
          case CombiningKind::MINUI:
            return std::min(a, b);
          case CombiningKind::MAXUI:
            return std::max(a, b);
          case CombiningKind::MINSI:
            return signExtend(a, bits) <= signExtend(b, bits) ? a : b;
          case CombiningKind::MAXSI:
            return signExtend(a, bits) >= signExtend(b, bits) ? a : b;
          case CombiningKind::AND:
            return a & b;
          case CombiningKind::OR:
            return a | b;
          case CombiningKind::XOR:
            return a ^ b;
          case CombiningKind::MINNUMF:
            return doubleToFloat(std::fmin(floatToDouble(a, element),
                                           floatToDouble(b, element)),
                                 element);
          case CombiningKind::MAXNUMF:
            return doubleToFloat(std::fmax(floatToDouble(a, element),
                                           floatToDouble(b, element)),
                                 element);
          default:
            return a;
          }
        };
        CombiningKind kind = reduction.getKind();
        if (kind == CombiningKind::MINIMUMF || kind == CombiningKind::MAXIMUMF)
          return fail(&op, "NaN-propagating reductions are not supported");
        if (isa<FloatType>(element) && !element.isF32() &&
            (kind == CombiningKind::ADD || kind == CombiningKind::MUL))
          return fail(&op, "only f32 float reductions are supported");
        for (unsigned lane = 0; lane < lanes; ++lane) {
          // Sequential order, element 0 first (any order is exact for the
          // integer and min/max kinds; f32 add/mul follow this order).
          Word acc = source.at(lane, 0);
          for (unsigned i = 1; i < source.width; ++i)
            acc = combine(kind, acc, source.at(lane, i));
          if (reduction.getAcc())
            acc = combine(kind, get(reduction.getAcc()).at(lane), acc);
          out.at(lane) = acc;
        }
        values[reduction.getResult()] = std::move(out);
        return success();
      })
      .Default([&](Operation *) {
        return fail(&op, "operation not supported by the gfx950 emulator");
      });
}

//===----------------------------------------------------------------------===//
// memref
//===----------------------------------------------------------------------===//

FailureOr<int64_t> Executor::address(Operation *op, const View &view,
                                     ValueRange indices, unsigned lane,
                                     int64_t count) {
  int64_t element = view.offset;
  for (auto [d, index] : llvm::enumerate(indices)) {
    const int64_t i = static_cast<int64_t>(get(index).at(lane));
    const int64_t extent = d + 1 == indices.size() ? count : 1;
    if (i < 0 || i + extent > view.sizes[d]) {
      (void)fail(op, llvm::formatv("lane {0}: index {1} (+{2}) out of bounds "
                                   "of dimension {3} (size {4})",
                                   lane, i, extent, d, view.sizes[d]));
      return failure();
    }
    element += i * view.strides[d];
  }
  return element * static_cast<int64_t>(view.elementBytes);
}

LogicalResult Executor::checkLds(Operation *op, Memory &memory, int64_t byte,
                                 int64_t size, unsigned wave, bool write) {
  for (int64_t b = byte; b < byte + size; ++b) {
    const bool writtenNow = memory.writeEpoch[b] == epoch;
    if (!write && memory.writeEpoch[b] == 0)
      return fail(op, llvm::formatv("wave {0} reads LDS byte {1}, which no "
                                    "thread has written",
                                    wave, b));
    if (writtenNow && memory.writer[b] != wave)
      return fail(op, llvm::formatv("LDS race: wave {0} {1} byte {2} that wave "
                                    "{3} wrote since the last barrier",
                                    wave, write ? "writes" : "reads", b,
                                    memory.writer[b]));
    if (write && memory.readEpoch[b] == epoch &&
        (memory.readers[b] & ~(uint64_t{1} << wave)))
      return fail(op, llvm::formatv("LDS race: wave {0} writes byte {1} that "
                                    "another wave read since the last barrier",
                                    wave, b));
    if (write) {
      memory.writeEpoch[b] = epoch;
      memory.writer[b] = static_cast<uint8_t>(wave);
    } else {
      if (memory.readEpoch[b] != epoch) {
        memory.readEpoch[b] = epoch;
        memory.readers[b] = 0;
      }
      memory.readers[b] |= uint64_t{1} << wave;
    }
  }
  return success();
}

LogicalResult Executor::load(Operation *op, const View &view,
                             ValueRange indices, Value result,
                             const Mask &mask) {
  if (!view.memory)
    return fail(op, "memref has no storage");
  const unsigned width = getWidth(result.getType());
  const unsigned bytes = view.elementBytes;
  if (width > 1 && !indices.empty() && view.strides.back() != 1)
    return fail(op, "vector access to a non-unit-stride dimension");
  Lanes &out = define(result);
  for (unsigned lane = 0; lane < lanes; ++lane) {
    if (!mask[lane])
      continue;
    FailureOr<int64_t> byte = address(op, view, indices, lane, width);
    if (failed(byte))
      return failure();
    if (view.memory->lds &&
        failed(checkLds(op, *view.memory, *byte, int64_t{width} * bytes,
                        lane / cdna4::kWaveSize, /*write=*/false)))
      return failure();
    for (unsigned i = 0; i < width; ++i) {
      Word w = 0;
      std::memcpy(&w, view.memory->bytes.data() + *byte + i * bytes, bytes);
      out.at(lane, i) = w;
    }
  }
  return success();
}

LogicalResult Executor::store(Operation *op, const View &view,
                              ValueRange indices, Value stored,
                              const Mask &mask) {
  if (!view.memory)
    return fail(op, "memref has no storage");
  const Lanes &value = get(stored);
  const unsigned bytes = view.elementBytes;
  if (value.width > 1 && !indices.empty() && view.strides.back() != 1)
    return fail(op, "vector access to a non-unit-stride dimension");
  for (unsigned lane = 0; lane < lanes; ++lane) {
    if (!mask[lane])
      continue;
    FailureOr<int64_t> byte = address(op, view, indices, lane, value.width);
    if (failed(byte))
      return failure();
    if (view.memory->lds &&
        failed(checkLds(op, *view.memory, *byte,
                        int64_t{value.width} * bytes,
                        lane / cdna4::kWaveSize, /*write=*/true)))
      return failure();
    for (unsigned i = 0; i < value.width; ++i) {
      const Word w = value.at(lane, i);
      std::memcpy(view.memory->bytes.data() + *byte + i * bytes, &w, bytes);
    }
  }
  return success();
}

LogicalResult Executor::executeMemRef(Operation &op, const Mask &mask) {
  auto elementBytes = [&](MemRefType type) -> FailureOr<unsigned> {
    const unsigned bits = getElementBits(type.getElementType());
    if (bits % 8)
      return fail(&op, "sub-byte memref elements are not supported");
    return bits / 8;
  };
  auto reshape = [&](Value source, Value result) -> LogicalResult {
    const View &from = views[source];
    if (!from.isRowMajor())
      return fail(&op, "reshape of a non-contiguous view");
    View to = from;
    auto type = cast<MemRefType>(result.getType());
    to.sizes.assign(type.getShape().begin(), type.getShape().end());
    to.strides = rowMajorStrides(to.sizes);
    views[result] = std::move(to);
    return success();
  };
  return llvm::TypeSwitch<Operation *, LogicalResult>(&op)
      .Case([&](memref::LoadOp load) {
        return this->load(&op, views[load.getMemRef()], load.getIndices(),
                          load.getResult(), mask);
      })
      .Case([&](memref::StoreOp store) {
        return this->store(&op, views[store.getMemRef()], store.getIndices(),
                           store.getValueToStore(), mask);
      })
      .Case([&](memref::AllocOp alloc) -> LogicalResult {
        MemRefType type = alloc.getType();
        if (!type.hasStaticShape() || !type.getLayout().isIdentity())
          return fail(&op, "only static identity-layout allocations");
        if (kernel)
          return fail(&op, "allocation inside a kernel");
        FailureOr<unsigned> bytes = elementBytes(type);
        if (failed(bytes))
          return failure();
        View view;
        view.elementBytes = *bytes;
        view.sizes.assign(type.getShape().begin(), type.getShape().end());
        view.strides = rowMajorStrides(view.sizes);
        view.memory = std::make_shared<Memory>(
            view.getNumElements() * *bytes, /*lds=*/false);
        views[alloc.getResult()] = std::move(view);
        return success();
      })
      .Case([&](memref::GetGlobalOp getGlobal) -> LogicalResult {
        // Constant tables (e.g. fixed Hadamard signs): one storage per
        // global, filled from its initializer.
        auto global = SymbolTable::lookupNearestSymbolFrom<memref::GlobalOp>(
            &op, getGlobal.getNameAttr());
        auto initial = global ? dyn_cast_or_null<DenseElementsAttr>(
                                    global.getInitialValueAttr())
                              : DenseElementsAttr();
        MemRefType type = getGlobal.getType();
        if (!initial || !type.hasStaticShape())
          return fail(&op, "only static globals with a dense initializer");
        FailureOr<unsigned> bytes = elementBytes(type);
        if (failed(bytes))
          return failure();
        std::optional<std::vector<Word>> words = getAttributeWords(initial);
        View view;
        view.elementBytes = *bytes;
        view.sizes.assign(type.getShape().begin(), type.getShape().end());
        view.strides = rowMajorStrides(view.sizes);
        view.memory = std::make_shared<Memory>(
            view.getNumElements() * *bytes, /*lds=*/false);
        for (int64_t i = 0; i < view.getNumElements(); ++i) {
          const Word w = (*words)[words->size() == 1 ? 0 : i];
          std::memcpy(view.memory->bytes.data() + i * *bytes, &w, *bytes);
        }
        views[getGlobal.getResult()] = std::move(view);
        return success();
      })
      .Case([&](memref::DeallocOp) { return success(); })
      .Case([&](memref::AssumeAlignmentOp assume) {
        { View copy = views[assume.getMemref()]; views[assume.getResult()] = std::move(copy); }
        return success();
      })
      .Case([&](memref::CastOp cast) {
        { View copy = views[cast.getSource()]; views[cast.getResult()] = std::move(copy); }
        return success();
      })
      .Case([&](memref::ExpandShapeOp expand) {
        return reshape(expand.getSrc(), expand.getResult());
      })
      .Case([&](memref::CollapseShapeOp collapse) {
        return reshape(collapse.getSrc(), collapse.getResult());
      })
      .Default([&](Operation *) {
        return fail(&op, "operation not supported by the gfx950 emulator");
      });
}

//===----------------------------------------------------------------------===//
// llvm (the casts and constants convert-amdgpu-to-rocdl leaves around the
// intrinsics)
//===----------------------------------------------------------------------===//

LogicalResult Executor::executeLLVM(Operation &op) {
  if (op.getNumResults() != 1)
    return fail(&op, "unsupported llvm op");
  Value result = op.getResult(0);
  const unsigned bits = getElementBits(result.getType());
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
               out, bits, lanes);
        return success();
      })
      .Case<LLVM::ZExtOp, LLVM::SExtOp, LLVM::TruncOp>([&](Operation *cast) {
        const unsigned from = getElementBits(cast->getOperand(0).getType());
        const bool isSigned = isa<LLVM::SExtOp>(cast);
        return map1([&](Word a) {
          return resizeInteger(a, from, bits, isSigned);
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
      .Default([&](Operation *) {
        return fail(&op, "operation not supported by the gfx950 emulator");
      });
}

//===----------------------------------------------------------------------===//
// rocdl: the instruction models
//===----------------------------------------------------------------------===//

LogicalResult Executor::executeROCDL(Operation &op, const Mask &mask) {
  if (!kernel)
    return fail(&op, "ROCDL intrinsic outside a kernel");
  auto perLane = [&](auto f) {
    Lanes &out = define(op.getResult(0));
    for (unsigned lane = 0; lane < lanes; ++lane)
      if (mask[lane])
        f(lane, out);
    ++stats.conversions;
    return success();
  };
  auto word = [&](Value v, unsigned lane, unsigned i = 0) {
    return static_cast<uint32_t>(get(v).at(lane, i));
  };

  if (auto cvt = dyn_cast<ROCDL::CvtScaleF32PkFp4F32Op>(op))
    return perLane([&](unsigned lane, Lanes &out) {
      out.at(lane) = cdna4::cvtScalePkFp4(
          word(cvt.getOldVdst(), lane), word(cvt.getSrc0(), lane),
          word(cvt.getSrc1(), lane), word(cvt.getScale(), lane),
          cvt.getDstSelIndex());
    });
  if (auto cvt = dyn_cast<ROCDL::CvtScaleF32SrPkFp4F32Op>(op))
    return perLane([&](unsigned lane, Lanes &out) {
      out.at(lane) = cdna4::cvtScaleSrPkFp4(
          word(cvt.getOldVdst(), lane), word(cvt.getSrc(), lane, 0),
          word(cvt.getSrc(), lane, 1), word(cvt.getSeed(), lane),
          word(cvt.getScale(), lane), cvt.getDstSelIndex());
    });
  auto fp8 = [&](auto cvt, cdna4::NarrowFormat format) {
    // The tied operand is a vector<2xi16>: one 32-bit register.
    return perLane([&](unsigned lane, Lanes &out) {
      const uint32_t old =
          word(cvt.getOldVdst(), lane, 0) | word(cvt.getOldVdst(), lane, 1)
                                                << 16;
      const uint32_t updated = cdna4::cvtScalePkFp8(
          format, old, word(cvt.getSrc0(), lane), word(cvt.getSrc1(), lane),
          word(cvt.getScale(), lane), cvt.getDstLoHiSel() ? 1 : 0);
      out.at(lane, 0) = updated & 0xFFFF;
      out.at(lane, 1) = updated >> 16;
    });
  };
  if (auto cvt = dyn_cast<ROCDL::CvtScaleF32PkFp8F32Op>(op))
    return fp8(cvt, cdna4::NarrowFormat::FP8);
  if (auto cvt = dyn_cast<ROCDL::CvtScaleF32PkBf8F32Op>(op))
    return fp8(cvt, cdna4::NarrowFormat::BF8);

  std::optional<cdna4::ScaledMfmaShape> shape;
  if (isa<ROCDL::mfma_scale_f32_32x32x64_f8f6f4>(op))
    shape = cdna4::ScaledMfmaShape::M32N32K64;
  else if (isa<ROCDL::mfma_scale_f32_16x16x128_f8f6f4>(op))
    shape = cdna4::ScaledMfmaShape::M16N16K128;
  if (!shape)
    return fail(&op, "no CDNA4 model for this intrinsic");

  // Operands: A, B, C, cbsz, blgp, opsel_a, scale_a, opsel_b, scale_b.
  if (op.getNumOperands() != 9)
    return fail(&op, "expected 9 operands");
  const unsigned accumulators = cdna4::getAccumulatorsPerLane(*shape);
  Lanes &out = define(op.getResult(0));
  if (out.width != accumulators)
    return fail(&op, "accumulator width does not match the shape");
  for (unsigned wave = 0; wave * cdna4::kWaveSize < lanes; ++wave) {
    const unsigned first = wave * cdna4::kWaveSize;
    unsigned active = 0;
    for (unsigned l = 0; l < cdna4::kWaveSize; ++l)
      active += mask[first + l];
    if (active == 0)
      continue;
    if (active != cdna4::kWaveSize)
      return fail(&op, llvm::formatv("wave {0} executes the MFMA with {1} of "
                                     "64 lanes active",
                                     wave, active));
    // The format and select operands are instruction fields: wave-uniform.
    unsigned fields[4];
    const unsigned fieldOperands[4] = {3, 4, 5, 7};
    for (unsigned f = 0; f < 4; ++f) {
      const Lanes &v = get(op.getOperand(fieldOperands[f]));
      fields[f] = static_cast<unsigned>(v.at(first));
      for (unsigned l = 1; l < cdna4::kWaveSize; ++l)
        if (v.at(first + l) != v.at(first))
          return fail(&op, "cbsz/blgp/opsel operands differ across the wave");
    }
    std::vector<cdna4::MatrixRegs> a(cdna4::kWaveSize), b(cdna4::kWaveSize);
    std::vector<uint32_t> scaleA(cdna4::kWaveSize), scaleB(cdna4::kWaveSize),
        c(cdna4::kWaveSize * accumulators), d(c.size());
    const Lanes &av = get(op.getOperand(0)), &bv = get(op.getOperand(1)),
                &cv = get(op.getOperand(2)), &sa = get(op.getOperand(6)),
                &sb = get(op.getOperand(8));
    if (av.width > 8 || bv.width > 8 ||
        getElementBits(op.getOperand(0).getType()) != 32 ||
        getElementBits(op.getOperand(1).getType()) != 32)
      return fail(&op, "A and B must be vectors of at most 8 i32");
    for (unsigned l = 0; l < cdna4::kWaveSize; ++l) {
      a[l].fill(0);
      b[l].fill(0);
      for (unsigned i = 0; i < av.width; ++i)
        a[l][i] = static_cast<uint32_t>(av.at(first + l, i));
      for (unsigned i = 0; i < bv.width; ++i)
        b[l][i] = static_cast<uint32_t>(bv.at(first + l, i));
      scaleA[l] = static_cast<uint32_t>(sa.at(first + l));
      scaleB[l] = static_cast<uint32_t>(sb.at(first + l));
      for (unsigned i = 0; i < accumulators; ++i)
        c[l * accumulators + i] = static_cast<uint32_t>(cv.at(first + l, i));
    }
    std::string why =
        cdna4::scaledMfma(*shape, fields[0], fields[1], fields[2], fields[3],
                          a, b, scaleA, scaleB, c, d.data());
    if (!why.empty())
      return fail(&op, why);
    for (unsigned l = 0; l < cdna4::kWaveSize; ++l)
      for (unsigned i = 0; i < accumulators; ++i)
        out.at(first + l, i) = d[l * accumulators + i];
    ++stats.mfmas;
  }
  return success();
}

//===----------------------------------------------------------------------===//
// gpu
//===----------------------------------------------------------------------===//

LogicalResult Executor::executeGPU(Operation &op, const Mask &mask) {
  auto dimensionValue = [&](gpu::Dimension dimension,
                            auto perLane) -> LogicalResult {
    if (!kernel)
      return fail(&op, "GPU index op outside a kernel");
    Lanes &out = define(op.getResult(0));
    const unsigned d = static_cast<unsigned>(dimension);
    for (unsigned lane = 0; lane < lanes; ++lane)
      out.at(lane) = static_cast<Word>(perLane(d, lane));
    return success();
  };
  auto threadIndex = [&](unsigned d, unsigned lane) -> int64_t {
    const int64_t x = lane % blockDim[0];
    const int64_t y = (lane / blockDim[0]) % blockDim[1];
    const int64_t z = lane / (blockDim[0] * blockDim[1]);
    return d == 0 ? x : d == 1 ? y : z;
  };
  return llvm::TypeSwitch<Operation *, LogicalResult>(&op)
      .Case([&](gpu::ThreadIdOp id) {
        return dimensionValue(id.getDimension(), threadIndex);
      })
      .Case([&](gpu::BlockIdOp id) {
        return dimensionValue(id.getDimension(),
                              [&](unsigned d, unsigned) { return blockId[d]; });
      })
      .Case([&](gpu::BlockDimOp id) {
        return dimensionValue(id.getDimension(),
                              [&](unsigned d, unsigned) { return blockDim[d]; });
      })
      .Case([&](gpu::GridDimOp id) {
        return dimensionValue(id.getDimension(),
                              [&](unsigned d, unsigned) { return gridDim[d]; });
      })
      .Case([&](gpu::LaneIdOp) {
        return dimensionValue(gpu::Dimension::x, [&](unsigned, unsigned lane) {
          return lane % cdna4::kWaveSize;
        });
      })
      .Case([&](gpu::BarrierOp) -> LogicalResult {
        if (!kernel)
          return fail(&op, "barrier outside a kernel");
        // Every wave must arrive (s_barrier counts waves).
        for (unsigned wave = 0; wave * cdna4::kWaveSize < lanes; ++wave) {
          bool arrived = false;
          for (unsigned l = wave * cdna4::kWaveSize;
               l < std::min<unsigned>(lanes, (wave + 1) * cdna4::kWaveSize); ++l)
            arrived |= mask[l] != 0;
          if (!arrived)
            return fail(&op, llvm::formatv("wave {0} does not reach the barrier "
                                           "the others wait at",
                                           wave));
        }
        ++epoch;
        ++stats.barriers;
        return success();
      })
      .Case([&](gpu::LaunchFuncOp launchOp) { return launch(launchOp); })
      .Default([&](Operation *) {
        return fail(&op, "operation not supported by the gfx950 emulator");
      });
}

LogicalResult Executor::launch(gpu::LaunchFuncOp op) {
  if (kernel)
    return fail(op, "nested launch");
  auto function = SymbolTable::lookupNearestSymbolFrom<gpu::GPUFuncOp>(
      op, op.getKernel());
  if (!function)
    return fail(op, "kernel not found");
  if (op.getClusterSizeX() || op.getDynamicSharedMemorySize())
    return fail(op, "clusters and dynamic LDS are not supported");
  gpu::KernelDim3 grid = op.getGridSizeOperandValues();
  gpu::KernelDim3 block = op.getBlockSizeOperandValues();
  auto scalar = [&](Value v) {
    return static_cast<int64_t>(get(v).at(0));
  };
  const std::array<int64_t, 3> gridDim = {scalar(grid.x), scalar(grid.y),
                                          scalar(grid.z)};
  const std::array<int64_t, 3> blockDim = {scalar(block.x), scalar(block.y),
                                           scalar(block.z)};
  const int64_t threads = blockDim[0] * blockDim[1] * blockDim[2];
  if (threads <= 0 || threads > 1024)
    return fail(op, "workgroup size must be 1..1024");
  ++stats.launches;

  Block &body = function.getBody().front();
  ArrayRef<BlockArgument> workgroup = function.getWorkgroupAttributions();
  if (!function.getPrivateAttributions().empty())
    return fail(op, "private attributions are not supported");

  for (int64_t z = 0; z < gridDim[2]; ++z)
    for (int64_t y = 0; y < gridDim[1]; ++y)
      for (int64_t x = 0; x < gridDim[0]; ++x) {
        Executor group(static_cast<unsigned>(threads), stats, error);
        group.kernel = true;
        group.blockId = {x, y, z};
        group.blockDim = blockDim;
        group.gridDim = gridDim;
        for (auto [argument, operand] :
             llvm::zip(function.getArguments(), op.getKernelOperands())) {
          if (isa<MemRefType>(operand.getType())) {
            group.views[argument] = views[operand];
            continue;
          }
          const Lanes &host = get(operand);
          Lanes broadcast(group.lanes, host.width);
          for (unsigned lane = 0; lane < group.lanes; ++lane)
            for (unsigned i = 0; i < host.width; ++i)
              broadcast.at(lane, i) = host.at(0, i);
          group.values[argument] = std::move(broadcast);
        }
        for (BlockArgument attribution : workgroup) {
          auto type = cast<MemRefType>(attribution.getType());
          View view;
          view.elementBytes = getElementBits(type.getElementType()) / 8;
          view.sizes.assign(type.getShape().begin(), type.getShape().end());
          view.strides = rowMajorStrides(view.sizes);
          view.memory = std::make_shared<Memory>(
              view.getNumElements() * view.elementBytes, /*lds=*/true);
          group.views[attribution] = std::move(view);
        }
        ++stats.workgroups;
        Mask all(group.lanes, 1);
        if (failed(group.run(body, all)))
          return failure();
      }
  return success();
}

//===----------------------------------------------------------------------===//
// linalg (host code that the kernel pipeline leaves, e.g. the Philox draw of
// random Hadamard signs)
//===----------------------------------------------------------------------===//

LogicalResult Executor::executeGeneric(linalg::GenericOp op) {
  if (kernel || lanes != 1)
    return fail(op, "linalg.generic inside a kernel");
  if (!op.hasPureBufferSemantics())
    return fail(op, "only linalg.generic on buffers is supported");
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  if (llvm::any_of(ranges, ShapedType::isDynamic))
    return fail(op, "dynamic iteration domain");
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  Block &body = *op.getBlock();

  // The element of `operand` at `point`, through its indexing map.
  auto element = [&](OpOperand &operand, ArrayRef<int64_t> point)
      -> FailureOr<uint8_t *> {
    const View &view = views[operand.get()];
    SmallVector<int64_t> indices =
        maps[operand.getOperandNumber()].compose(point);
    int64_t offset = view.offset;
    for (auto [d, i] : llvm::enumerate(indices)) {
      if (i < 0 || i >= view.sizes[d])
        return fail(op, "index out of bounds");
      offset += i * view.strides[d];
    }
    return view.memory->bytes.data() + offset * view.elementBytes;
  };

  int64_t total = 1;
  for (int64_t r : ranges)
    total *= r;
  SmallVector<int64_t> point(ranges.size(), 0);
  const Mask one{1};
  for (int64_t n = 0; n < total; ++n) {
    linalgPoint = point;
    for (OpOperand &operand : op->getOpOperands()) {
      BlockArgument argument = body.getArgument(operand.getOperandNumber());
      Lanes value(1, 1);
      if (isa<MemRefType>(operand.get().getType())) {
        FailureOr<uint8_t *> address = element(operand, point);
        if (failed(address))
          return failure();
        std::memcpy(&value.at(0), *address, views[operand.get()].elementBytes);
      } else {
        value.at(0) = get(operand.get()).at(0);
      }
      values[argument] = std::move(value);
    }
    SmallVector<Value> yielded;
    if (failed(run(body, one, &yielded)))
      return failure();
    for (auto [k, init] : llvm::enumerate(op.getDpsInitsMutable())) {
      FailureOr<uint8_t *> address = element(init, point);
      if (failed(address))
        return failure();
      const Word w = get(yielded[k]).at(0);
      std::memcpy(*address, &w, views[init.get()].elementBytes);
    }
    for (int64_t d = static_cast<int64_t>(ranges.size()) - 1; d >= 0; --d) {
      if (++point[d] < ranges[d])
        break;
      point[d] = 0;
    }
  }
  linalgPoint.clear();
  return success();
}

//===----------------------------------------------------------------------===//
// scf
//===----------------------------------------------------------------------===//

LogicalResult Executor::executeFor(scf::ForOp op, const Mask &mask) {
  const unsigned bits = getElementBits(op.getInductionVar().getType());
  const bool isUnsigned = op.getUnsignedCmp();
  // Copies: the body defines values, which may move the map's entries.
  Lanes iv = get(op.getLowerBound());
  const Lanes upper = get(op.getUpperBound());
  const Lanes step = get(op.getStep());
  SmallVector<Lanes> iterValues;
  for (Value init : op.getInitArgs())
    iterValues.push_back(get(init));

  auto below = [&](unsigned lane) {
    return isUnsigned ? iv.at(lane) < upper.at(lane)
                      : signExtend(iv.at(lane), bits) <
                            signExtend(upper.at(lane), bits);
  };
  Mask active(lanes);
  for (unsigned lane = 0; lane < lanes; ++lane)
    active[lane] = mask[lane] && below(lane);
  Block &body = *op.getBody();
  while (any(active)) {
    values[op.getInductionVar()] = iv;
    for (auto [argument, value] :
         llvm::zip(op.getRegionIterArgs(), iterValues))
      values[argument] = value;
    SmallVector<Value> yielded;
    if (failed(run(body, active, &yielded)))
      return failure();
    for (auto [k, value] : llvm::enumerate(yielded)) {
      const Lanes &next = get(value);
      for (unsigned lane = 0; lane < lanes; ++lane)
        if (active[lane])
          for (unsigned i = 0; i < next.width; ++i)
            iterValues[k].at(lane, i) = next.at(lane, i);
    }
    for (unsigned lane = 0; lane < lanes; ++lane) {
      if (!active[lane])
        continue;
      iv.at(lane) = truncate(iv.at(lane) + step.at(lane), bits);
      active[lane] = below(lane);
    }
  }
  for (auto [result, value] : llvm::zip(op.getResults(), iterValues))
    values[result] = std::move(value);
  return success();
}

LogicalResult Executor::executeIf(scf::IfOp op, const Mask &mask) {
  const Lanes condition = get(op.getCondition());
  Mask thenMask(lanes), elseMask(lanes);
  for (unsigned lane = 0; lane < lanes; ++lane) {
    thenMask[lane] = mask[lane] && condition.at(lane);
    elseMask[lane] = mask[lane] && !condition.at(lane);
  }
  SmallVector<Lanes> thenValues, elseValues;
  auto branch = [&](Region &region, const Mask &branchMask,
                    SmallVectorImpl<Lanes> &results) -> LogicalResult {
    if (region.empty() || !any(branchMask))
      return success();
    SmallVector<Value> yielded;
    if (failed(run(region.front(), branchMask, &yielded)))
      return failure();
    for (Value v : yielded)
      results.push_back(get(v));
    return success();
  };
  if (failed(branch(op.getThenRegion(), thenMask, thenValues)) ||
      failed(branch(op.getElseRegion(), elseMask, elseValues)))
    return failure();
  for (auto [k, result] : llvm::enumerate(op.getResults())) {
    Lanes merged(lanes, getWidth(result.getType()));
    for (unsigned lane = 0; lane < lanes; ++lane) {
      const bool fromThen = condition.at(lane);
      const SmallVectorImpl<Lanes> &source = fromThen ? thenValues : elseValues;
      if (source.empty())
        continue;
      for (unsigned i = 0; i < merged.width; ++i)
        merged.at(lane, i) = source[k].at(lane, i);
    }
    values[result] = std::move(merged);
  }
  return success();
}

} // namespace

//===----------------------------------------------------------------------===//
// Entry point
//===----------------------------------------------------------------------===//

llvm::Expected<std::vector<std::vector<uint8_t>>>
mlir::fp4train::emulation::emulate(ModuleOp module, llvm::StringRef name,
                                   llvm::ArrayRef<EmulatorArgument> arguments,
                                   EmulatorStats *stats) {
  auto makeError = [](const Twine &message) {
    return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
  };
  auto function = module.lookupSymbol<func::FuncOp>(name);
  if (!function || function.isExternal())
    return makeError("emulate: no function '" + name + "' with a body");
  if (arguments.size() != function.getNumArguments())
    return makeError(llvm::formatv("emulate: '{0}' takes {1} arguments, {2} "
                                   "given",
                                   name, function.getNumArguments(),
                                   arguments.size()));
  EmulatorStats localStats;
  std::string error;
  Executor host(1, stats ? *stats : localStats, error);
  for (auto [argument, given] :
       llvm::zip(function.getArguments(), arguments)) {
    if (auto type = dyn_cast<MemRefType>(argument.getType())) {
      if (!type.hasStaticShape() || !type.getLayout().isIdentity())
        return makeError("emulate: memref arguments must have static shapes "
                         "and identity layouts");
      View view;
      view.elementBytes = getElementBits(type.getElementType()) / 8;
      view.sizes.assign(type.getShape().begin(), type.getShape().end());
      view.strides = rowMajorStrides(view.sizes);
      const size_t size = view.getNumElements() * view.elementBytes;
      if (given.bytes.size() != size)
        return makeError(llvm::formatv("emulate: argument {0} needs {1} "
                                       "bytes, {2} given",
                                       argument.getArgNumber(), size,
                                       given.bytes.size()));
      view.memory = std::make_shared<Memory>(size, /*lds=*/false);
      view.memory->bytes = given.bytes;
      host.views[argument] = std::move(view);
      continue;
    }
    Lanes scalar(1, 1);
    scalar.at(0) = truncate(given.scalar, getElementBits(argument.getType()));
    host.values[argument] = std::move(scalar);
  }
  SmallVector<Value> returned;
  if (failed(host.run(function.getBody().front(), Mask{1}, &returned)))
    return makeError(error);

  std::vector<std::vector<uint8_t>> results;
  for (Value value : returned) {
    if (!isa<MemRefType>(value.getType()))
      return makeError("emulate: only memref results are supported");
    const View &view = host.views[value];
    std::vector<uint8_t> bytes(view.getNumElements() * view.elementBytes);
    // Row-major copy through the view's strides.
    const int64_t rank = view.sizes.size();
    SmallVector<int64_t> index(rank, 0);
    for (int64_t n = 0; n < view.getNumElements(); ++n) {
      int64_t element = view.offset;
      for (int64_t d = 0; d < rank; ++d)
        element += index[d] * view.strides[d];
      std::memcpy(bytes.data() + n * view.elementBytes,
                  view.memory->bytes.data() + element * view.elementBytes,
                  view.elementBytes);
      for (int64_t d = rank - 1; d >= 0; --d) {
        if (++index[d] < view.sizes[d])
          break;
        index[d] = 0;
      }
    }
    results.push_back(std::move(bytes));
  }
  return results;
}
