//===- CodecsTest.cpp - The IR codecs against the numerics library --------===//
//
// The scalar recipes of Conversion/FP4TrainToStandard/Codecs.h, which the
// CPU expansion and every GPU quantize kernel are made of, applied by one
// linalg.generic to a sweep of f32 bit patterns (every exponent, both signs,
// mantissas from the ends and the middle, NaN and Inf) and executed by the
// emulator's core: every code must be the library's. The quantize tests see
// these recipes only through block scaling, which keeps most scaled values
// in a few binades; here each recipe meets every binade, the f32 subnormals
// and the shift clamps.
//
//===----------------------------------------------------------------------===//

#include "fp4train/Conversion/FP4TrainCommon/Codecs.h"
#include "fp4train/Emulation/GPUEmulator.h"
#include "fp4train/InitFP4Train.h"
#include "fp4train/Numerics/Formats.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"

#include <gtest/gtest.h>

#include <cstring>
#include <functional>
#include <random>
#include <vector>

using namespace mlir;
using namespace mlir::fp4train;
namespace numerics = ::fp4train::numerics;

namespace {

/// f32 bit patterns over every biased exponent and sign, with mantissas
/// 0, 1, 2^22 - 1, 2^22, 2^22 + 1, 2^23 - 1 and random ones.
std::vector<uint32_t> makeBitPatterns() {
  std::mt19937 rng(5);
  std::uniform_int_distribution<uint32_t> mantissa(0, 0x7FFFFF);
  std::vector<uint32_t> bits;
  for (uint32_t sign : {0u, 0x80000000u})
    for (uint32_t exponent = 0; exponent < 256; ++exponent) {
      std::vector<uint32_t> mantissas = {0,        1,        0x3FFFFF,
                                         0x400000, 0x400001, 0x7FFFFF};
      for (int i = 0; i < 10; ++i)
        mantissas.push_back(mantissa(rng));
      for (uint32_t m : mantissas)
        bits.push_back(sign | exponent << 23 | m);
    }
  return bits;
}

/// Emulates `@main(%x: memref<N x f32>, %r: memref<N x i32>, %out:
/// memref<N x i8>)`, one linalg.generic whose body is `body(x, r)`, and
/// returns the codes.
std::vector<uint8_t>
runCodec(const std::vector<uint32_t> &x, const std::vector<uint32_t> &r,
         std::function<Value(ImplicitLocOpBuilder &, Value, Value)> body) {
  DialectRegistry registry;
  registerAllDialects(registry);
  MLIRContext context(registry);
  context.loadAllAvailableDialects();
  ImplicitLocOpBuilder b(UnknownLoc::get(&context), &context);
  OwningOpRef<ModuleOp> module = ModuleOp::create(b);
  b.setInsertionPointToEnd(module->getBody());

  const auto n = static_cast<int64_t>(x.size());
  auto memref = [&](Type element) { return MemRefType::get({n}, element); };
  Type outType = memref(b.getI8Type());
  auto function =
      func::FuncOp::create(b, "main",
                           b.getFunctionType({memref(b.getF32Type()),
                                              memref(b.getI32Type()), outType},
                                             {outType}));
  b.setInsertionPointToStart(function.addEntryBlock());
  ValueRange args = function.getArguments();
  AffineMap identity = b.getDimIdentityMap();
  linalg::GenericOp::create(
      b, ValueRange{args[0], args[1]}, ValueRange{args[2]},
      ArrayRef<AffineMap>{identity, identity, identity},
      ArrayRef<utils::IteratorType>{utils::IteratorType::parallel},
      [&](OpBuilder &nested, Location loc, ValueRange in) {
        ImplicitLocOpBuilder ib(loc, nested);
        linalg::YieldOp::create(ib, body(ib, in[0], in[1]));
      });
  func::ReturnOp::create(b, args[2]);

  auto bytesOf = [](const std::vector<uint32_t> &words) {
    std::vector<uint8_t> bytes(words.size() * 4);
    std::memcpy(bytes.data(), words.data(), bytes.size());
    return bytes;
  };
  auto results = emulation::emulate(
      *module, "main",
      {emulation::EmulatorArgument::buffer(bytesOf(x)),
       emulation::EmulatorArgument::buffer(bytesOf(r)),
       emulation::EmulatorArgument::buffer(std::vector<uint8_t>(x.size()))},
      "sm_90a");
  if (!results) {
    ADD_FAILURE() << llvm::toString(results.takeError());
    return {};
  }
  return (*results)[0];
}

/// The number of codes that differ from `expected(x, r)`, the first few
/// reported.
int compare(const std::vector<uint8_t> &codes, const std::vector<uint32_t> &x,
            const std::vector<uint32_t> &r,
            std::function<uint8_t(float, uint32_t)> expected) {
  if (codes.size() != x.size())
    return -1;
  int bad = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    const uint8_t want = expected(numerics::bitsToFloat(x[i]), r[i]);
    if (codes[i] != want && bad++ < 5)
      ADD_FAILURE() << "x = 0x" << std::hex << x[i] << ", r = 0x" << r[i]
                    << ": IR 0x" << int(codes[i]) << ", library 0x"
                    << int(want);
  }
  return bad;
}

// [SR1] on every binade, each value with random words and the words at the
// carry's edges (0, 0x3FF, 0x400, 2^31, 2^32 - 1).
TEST(CodecsTest, StochasticE2M1MatchesLibrary) {
  std::vector<uint32_t> x, r;
  std::mt19937 rng(9);
  const uint32_t edges[] = {0u, 0x3FFu, 0x400u, 0x80000000u, 0xFFFFFFFFu};
  for (uint32_t bits : makeBitPatterns()) {
    for (uint32_t word : edges) {
      x.push_back(bits);
      r.push_back(word);
    }
    for (int i = 0; i < 3; ++i) {
      x.push_back(bits);
      r.push_back(rng());
    }
  }
  // Values that land on and next to E2M1 grid points, in [0, 6].
  for (int k = 0; k <= 6 * 64; ++k)
    for (int delta : {-1, 0, 1}) {
      x.push_back(numerics::floatToBits(k / 64.0f) + delta);
      r.push_back(rng());
    }
  std::vector<uint8_t> codes =
      runCodec(x, r, [](ImplicitLocOpBuilder &b, Value v, Value word) {
        return codecs::encodeE2M1Stochastic(b, v, word);
      });
  EXPECT_EQ(compare(codes, x, r, numerics::encodeE2M1Stochastic), 0);
}

// RNE with saturation to E2M1, E4M3 and E5M2 on every binade.
TEST(CodecsTest, NearestEvenMatchesLibrary) {
  std::vector<uint32_t> x = makeBitPatterns();
  std::vector<uint32_t> r(x.size(), 0);
  const std::pair<const numerics::MiniFloatFormat *, uint8_t (*)(float)>
      formats[] = {{&numerics::kE2M1, numerics::encodeE2M1},
                   {&numerics::kE4M3FN, numerics::encodeE4M3FN},
                   {&numerics::kE5M2, numerics::encodeE5M2}};
  for (const auto &entry : formats) {
    const numerics::MiniFloatFormat &format = *entry.first;
    uint8_t (*encode)(float) = entry.second;
    std::vector<uint8_t> codes =
        runCodec(x, r, [&](ImplicitLocOpBuilder &b, Value v, Value) {
          return codecs::encodeRNESat(b, v, format);
        });
    EXPECT_EQ(
        compare(codes, x, r, [&](float v, uint32_t) { return encode(v); }), 0);
  }
}

} // namespace
