//===- NVVMInstructionsTest.cpp - The NVIDIA instruction sets -------------===//
//
// Hand-written 32-lane kernels on the NVVM ops the sm_120a instruction set
// dispatches to the PTX models (mul.hi.u32 on every NVIDIA set, which all
// share it), the core's rules in warp terms (whole-warp
// mma, shared-memory races between warps) and the LLVM struct values that
// NVVM's mma returns. Expected values are the PTX ISA's, worked by hand.
//
//===----------------------------------------------------------------------===//

#include "fp4train/Emulation/GPUEmulator.h"
#include "fp4train/InitFP4Train.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

using namespace mlir;
using namespace mlir::fp4train;

namespace {

uint32_t bitsOf(float f) {
  uint32_t b;
  std::memcpy(&b, &f, 4);
  return b;
}

/// A module whose @main launches @k::@kernel on one workgroup of `threads`
/// threads with (%in: memref<`inType`>, %out: memref<`outType`>).
std::string launch(const std::string &kernelBody, const std::string &inType,
                   const std::string &outType, int threads = 32,
                   const std::string &workgroup = "") {
  return R"(
module attributes {gpu.container_module} {
  gpu.module @k {
    gpu.func @kernel(%in: memref<)" +
         inType + R"(>, %out: memref<)" + outType + ">)" + workgroup +
         R"( kernel {
      %t = gpu.thread_id x
)" + kernelBody +
         R"(
      gpu.return
    }
  }
  func.func @main(%in: memref<)" +
         inType + R"(>, %out: memref<)" + outType + R"(>) -> memref<)" +
         outType + R"(> {
    %c1 = arith.constant 1 : index
    %n = arith.constant )" +
         std::to_string(threads) + R"( : index
    gpu.launch_func @k::@kernel blocks in (%c1, %c1, %c1)
        threads in (%n, %c1, %c1)
        args(%in : memref<)" +
         inType + R"(>, %out : memref<)" + outType + R"(>)
    return %out : memref<)" +
         outType + R"(>
  }
}
)";
}

/// Stores %`value`, a vector<`n` x `element`>, to %out[n t .. n t + n - 1]
/// of memref<`outType`>.
std::string storePerLane(const std::string &value, int n,
                         const std::string &element,
                         const std::string &outType) {
  const std::string vector =
      "vector<" + std::to_string(n) + "x" + element + ">";
  return "      %cn = arith.constant " + std::to_string(n) +
         " : index\n"
         "      %at = arith.muli %t, %cn : index\n"
         "      vector.store %" +
         value + ", %out[%at] : memref<" + outType + ">, " + vector + "\n";
}

/// One nvvm.mma.block_scale m16n8k64 mxf4 (scale_vec::2X, ue8m0) per warp
/// with %a0 and %b0 as the first A and B registers (the others 0), every C
/// register %cf, both scale registers 0x7F7F7F7F (every scale 2^0) and
/// selectors 0; %d is the struct result.
const char *kMma = R"(
      %zero = arith.constant 0 : i32
      %sc = arith.constant 2139062143 : i32
      %z16 = arith.constant 0 : i16
      %d = nvvm.mma.block_scale A[%a0, %zero, %zero, %zero] B[%b0, %zero]
             C[%cf, %cf, %cf, %cf]
             scaleA[%sc, %z16, %z16] scaleB[%sc, %z16, %z16]
             {shape = #nvvm.shape<m = 16, n = 8, k = 64>,
              multiplicandAPtxType = #nvvm.mma_type<e2m1>,
              multiplicandBPtxType = #nvvm.mma_type<e2m1>,
              scaleVecSize = #nvvm.scale_vec_size<x2>,
              blockScaleFormat = #nvvm.block_scale_format<ue8m0>,
              kind = #nvvm.block_scale_kind<mxf4>}
        : (i32, i32, f32) -> !llvm.struct<(f32, f32, f32, f32)>
)";

/// Stores the four f32 of %d to %out[4 t + i].
const std::string kStoreD = R"(
      %d0 = llvm.extractvalue %d[0] : !llvm.struct<(f32, f32, f32, f32)>
      %d1 = llvm.extractvalue %d[1] : !llvm.struct<(f32, f32, f32, f32)>
      %d2 = llvm.extractvalue %d[2] : !llvm.struct<(f32, f32, f32, f32)>
      %d3 = llvm.extractvalue %d[3] : !llvm.struct<(f32, f32, f32, f32)>
      %v = vector.from_elements %d0, %d1, %d2, %d3 : vector<4xf32>
)" + storePerLane("v", 4, "f32", "128xf32");

class NVVMInstructionsTest : public ::testing::Test {
protected:
  NVVMInstructionsTest() : context(makeRegistry()) {
    context.loadAllAvailableDialects();
  }
  static DialectRegistry makeRegistry() {
    DialectRegistry registry;
    registerAllDialects(registry);
    return registry;
  }

  /// Emulates @main on `chip` with `in` and an output of `outBytes`;
  /// returns the error message, or "" and the output bytes.
  std::string run(const std::string &source, std::vector<uint8_t> in,
                  size_t outBytes, std::vector<uint8_t> *out = nullptr) {
    OwningOpRef<ModuleOp> module =
        parseSourceString<ModuleOp>(source, &context);
    if (!module)
      return "parse error";
    auto results = emulation::emulate(
        *module, "main",
        {emulation::EmulatorArgument::buffer(std::move(in)),
         emulation::EmulatorArgument::buffer(std::vector<uint8_t>(outBytes))},
        chip, &stats);
    if (!results)
      return llvm::toString(results.takeError());
    if (out)
      *out = (*results)[0];
    return "";
  }

  /// run() with an output of `count` elements of T, returned in `out`;
  /// `in` defaults to one unused word.
  template <typename T>
  std::string runAs(const std::string &source, size_t count,
                    std::vector<T> *out,
                    std::vector<uint8_t> in = std::vector<uint8_t>(4)) {
    std::vector<uint8_t> bytes;
    std::string error =
        run(source, std::move(in), count * sizeof(T), out ? &bytes : nullptr);
    if (error.empty() && out) {
      out->resize(count);
      std::memcpy(out->data(), bytes.data(), count * sizeof(T));
    }
    return error;
  }

  /// The f32 bits a kernel body writes to memref<128xf32>.
  std::string runMma(const std::string &body, std::vector<uint32_t> *d) {
    return runAs(launch(body, "1xi32", "128xf32"), 128, d);
  }

  MLIRContext context;
  emulation::EmulatorStats stats;
  std::string chip = "sm_120a";
};

TEST_F(NVVMInstructionsTest, ConvertF32PairsToE2M1) {
  // cvt.rn.satfinite.e2m1x2.f32: E2M1 is 0, 0.5, 1, 1.5, 2, 3, 4, 6 (codes
  // 0..7, bit 3 the sign); ties go to the even code, beyond 6 saturates.
  const float a[32] = {0,    0.25, 0.5, 0.75, 1,    1.25, 1.5, 1.75,
                       2,    2.5,  3,   3.5,  4,    5,    6,   7,
                       100,  -0.5, -1,  -1.5, -2.5, -3,   -5,  -6,
                       -100, 0.3,  0.7, 1.2,  2.2,  2.8,  4.5, 5.5};
  const uint8_t codes[32] = {0x0, 0x0, 0x1, 0x2, 0x2, 0x2, 0x3, 0x4,
                             0x4, 0x4, 0x5, 0x6, 0x6, 0x6, 0x7, 0x7,
                             0x7, 0x9, 0xA, 0xB, 0xC, 0xD, 0xE, 0xF,
                             0xF, 0x1, 0x1, 0x2, 0x4, 0x5, 0x6, 0x7};
  // Lane t converts (hi = a[t], lo = a[31 - t]).
  std::vector<uint8_t> in(256);
  std::memcpy(in.data(), a, 128);
  const std::string body = R"(
      %c31 = arith.constant 31 : index
      %r = arith.subi %c31, %t : index
      %hi = memref.load %in[%t] : memref<64xf32>
      %lo = memref.load %in[%r] : memref<64xf32>
      %p = nvvm.convert.f32x2.to.f4x2 %hi, %lo : i8 (f4E2M1FN)
      memref.store %p, %out[%t] : memref<32xi8>
)";
  std::vector<uint8_t> out;
  ASSERT_EQ(runAs(launch(body, "64xf32", "32xi8"), 32, &out, in), "");
  for (int t = 0; t < 32; ++t)
    EXPECT_EQ(out[t], codes[t] << 4 | codes[31 - t]) << "lane " << t;
  EXPECT_EQ(stats.conversions, 1u);
}

TEST_F(NVVMInstructionsTest, ConvertF32PairsToE4M3AndUE8M0) {
  // cvt.rn.satfinite.e4m3x2.f32 (1.0 = 0x38, -2.0 = 0xC0) as an i16, and
  // cvt.rp.satfinite.ue8m0x2.f32 (1.0 = 127, 3.0 rounds up to 4 = 129) as
  // vector<2xi8>: element 0 is the low byte, `lo`'s.
  const std::string body = std::string(R"(
      %one = arith.constant 1.0 : f32
      %m2 = arith.constant -2.0 : f32
      %three = arith.constant 3.0 : f32
      %e = nvvm.convert.f32x2.to.f8x2 %one, %m2
             {rnd = #nvvm.fp_rnd_mode<rn>, sat = #nvvm.sat_mode<satfinite>}
             : i16 (f8E4M3FN)
      %s = nvvm.convert.f32x2.to.f8x2 %one, %three
             {rnd = #nvvm.fp_rnd_mode<rp>, sat = #nvvm.sat_mode<satfinite>}
             : vector<2xi8> (f8E8M0FNU)
      %eb = llvm.bitcast %e : i16 to vector<2xi8>
      %both = vector.shuffle %eb, %s [0, 1, 2, 3] : vector<2xi8>, vector<2xi8>
)") + storePerLane("both", 4, "i8", "128xi8");
  std::vector<uint8_t> out;
  ASSERT_EQ(runAs(launch(body, "1xi32", "128xi8"), 128, &out), "");
  for (int t = 0; t < 32; ++t) {
    EXPECT_EQ(out[4 * t], 0xC0) << "lane " << t;
    EXPECT_EQ(out[4 * t + 1], 0x38) << "lane " << t;
    EXPECT_EQ(out[4 * t + 2], 129) << "lane " << t;
    EXPECT_EQ(out[4 * t + 3], 127) << "lane " << t;
  }
}

TEST_F(NVVMInstructionsTest, ConvertE4M3PairsToF16) {
  // cvt.rn.f16x2.e4m3x2 on vector<2xi8> {0x38 (1.0), 0xC0 (-2.0)}: element
  // 0, the low byte, goes to the low half (f16 1.0 = 0x3C00, -2.0 =
  // 0xC000); then widened to f32 as the sm_90a GEMM's scale decode does.
  const std::string body = std::string(R"(
      %codes = arith.constant dense<[56, -64]> : vector<2xi8>
      %h = nvvm.convert.f8x2.to.f16x2 %codes : vector<2xi8> (f8E4M3FN)
             -> vector<2xf16>
      %f = arith.extf %h : vector<2xf16> to vector<2xf32>
)") + storePerLane("f", 2, "f32", "64xf32");
  std::vector<float> out;
  ASSERT_EQ(runAs(launch(body, "1xi32", "64xf32"), 64, &out), "");
  for (int t = 0; t < 32; ++t) {
    EXPECT_EQ(out[2 * t], 1.0f) << "lane " << t;
    EXPECT_EQ(out[2 * t + 1], -2.0f) << "lane " << t;
  }
  EXPECT_EQ(stats.conversions, 1u);
}

TEST_F(NVVMInstructionsTest, VoteSyncAllAnyBallot) {
  // Lane t votes t != 5: `all` is false, `any` true, the ballot every bit
  // but 5; a predicate true in every lane makes `all` true.
  const std::string body = std::string(R"(
      %mask = arith.constant -1 : i32
      %c5 = arith.constant 5 : index
      %p = arith.cmpi ne, %t, %c5 : index
      %true = arith.constant true
      %all = nvvm.vote.sync all %mask, %p -> i1
      %any = nvvm.vote.sync any %mask, %p -> i1
      %yes = nvvm.vote.sync all %mask, %true -> i1
      %ballot = nvvm.vote.sync ballot %mask, %p -> i32
      %a = arith.extui %all : i1 to i32
      %b = arith.extui %any : i1 to i32
      %y = arith.extui %yes : i1 to i32
      %v = vector.from_elements %a, %b, %y, %ballot : vector<4xi32>
)") + storePerLane("v", 4, "i32", "128xi32");
  std::vector<uint32_t> out;
  ASSERT_EQ(runAs(launch(body, "1xi32", "128xi32"), 128, &out), "");
  for (int t = 0; t < 32; ++t) {
    EXPECT_EQ(out[4 * t], 0u) << "lane " << t;
    EXPECT_EQ(out[4 * t + 1], 1u) << "lane " << t;
    EXPECT_EQ(out[4 * t + 2], 1u) << "lane " << t;
    EXPECT_EQ(out[4 * t + 3], 0xFFFFFFDFu) << "lane " << t;
  }
}

TEST_F(NVVMInstructionsTest, VoteSyncWithPartOfTheMaskIsAnError) {
  // Lanes 16..31 skip a vote whose mask names them: they would never come.
  const std::string body = R"(
      %c16 = arith.constant 16 : index
      %low = arith.cmpi ult, %t, %c16 : index
      scf.if %low {
        %mask = arith.constant -1 : i32
        %v = nvvm.vote.sync all %mask, %low -> i1
      }
)";
  std::string error =
      runAs<int32_t>(launch(body, "1xi32", "1xi32"), 1, nullptr);
  EXPECT_NE(error.find("does not take part"), std::string::npos) << error;
}

TEST_F(NVVMInstructionsTest, ShflSyncModes) {
  // Lane t holds 100 + t. bfly 5 reads lane t ^ 5; idx 7 lane 7; down 3
  // lane t + 3 (its own value from lane 29 on: past the clamp 31); up 2
  // lane t - 2 (own value below 2); bfly 1 with segment mask 0x18 and
  // clamp 3 (c = 0x1803): lane t reads lane t ^ 1 where that is at most
  // (t & 0x18) | 3, else keeps its own value.
  const std::string body = std::string(R"(
      %mask = arith.constant -1 : i32
      %full = arith.constant 31 : i32
      %seg = arith.constant 6147 : i32
      %zero = arith.constant 0 : i32
      %c1 = arith.constant 1 : i32
      %c2 = arith.constant 2 : i32
      %c3 = arith.constant 3 : i32
      %c5 = arith.constant 5 : i32
      %c7 = arith.constant 7 : i32
      %c100 = arith.constant 100 : i32
      %ti = arith.index_cast %t : index to i32
      %x = arith.addi %ti, %c100 : i32
      %bfly = nvvm.shfl.sync bfly %mask, %x, %c5, %full : i32 -> i32
      %idx = nvvm.shfl.sync idx %mask, %x, %c7, %full : i32 -> i32
      %down = nvvm.shfl.sync down %mask, %x, %c3, %full : i32 -> i32
      %up = nvvm.shfl.sync up %mask, %x, %c2, %zero : i32 -> i32
      %segmented = nvvm.shfl.sync bfly %mask, %x, %c1, %seg : i32 -> i32
      %v = vector.from_elements %bfly, %idx, %down, %up, %segmented : vector<5xi32>
)") + storePerLane("v", 5, "i32", "160xi32");
  std::vector<uint32_t> out;
  ASSERT_EQ(runAs(launch(body, "1xi32", "160xi32"), 160, &out), "");
  for (uint32_t t = 0; t < 32; ++t) {
    EXPECT_EQ(out[5 * t], 100 + (t ^ 5)) << "lane " << t;
    EXPECT_EQ(out[5 * t + 1], 107u) << "lane " << t;
    EXPECT_EQ(out[5 * t + 2], 100 + (t + 3 <= 31 ? t + 3 : t)) << "lane " << t;
    EXPECT_EQ(out[5 * t + 3], 100 + (t >= 2 ? t - 2 : t)) << "lane " << t;
    const uint32_t maxLane = (t & 0x18) | 3;
    EXPECT_EQ(out[5 * t + 4], 100 + ((t ^ 1) <= maxLane ? t ^ 1 : t))
        << "lane " << t;
  }
}

TEST_F(NVVMInstructionsTest, ShflSyncFromOutsideTheMaskIsAnError) {
  // Lanes 0..15 shuffle among themselves with bfly 16: each reads a lane
  // of 16..31, outside the membermask.
  const std::string body = R"(
      %c16 = arith.constant 16 : index
      %low = arith.cmpi ult, %t, %c16 : index
      scf.if %low {
        %mask = arith.constant 65535 : i32
        %full = arith.constant 31 : i32
        %b = arith.constant 16 : i32
        %x = arith.constant 1 : i32
        %v = nvvm.shfl.sync bfly %mask, %x, %b, %full : i32 -> i32
      }
)";
  std::string error =
      runAs<int32_t>(launch(body, "1xi32", "1xi32"), 1, nullptr);
  EXPECT_NE(error.find("outside the membermask"), std::string::npos) << error;
}

TEST_F(NVVMInstructionsTest, FmaRoundsOnce) {
  // (1 + 2^-12)^2 - 1 = 2^-11 + 2^-24: a product then a sum would lose the
  // 2^-24 (the product rounds to 1 + 2^-11); llvm.intr.fma keeps it.
  const std::string body = std::string(R"(
      %x = arith.constant 1.000244140625 : f32
      %m1 = arith.constant -1.0 : f32
      %r = llvm.intr.fma(%x, %x, %m1) : (f32, f32, f32) -> f32
      %v = vector.from_elements %r : vector<1xf32>
)") + storePerLane("v", 1, "f32", "32xf32");
  std::vector<float> out;
  ASSERT_EQ(runAs(launch(body, "1xi32", "32xf32"), 32, &out), "");
  for (int t = 0; t < 32; ++t)
    EXPECT_EQ(out[t], 0x1p-11f + 0x1p-24f) << "lane " << t;
}

TEST_F(NVVMInstructionsTest, MulHiU32OnEveryNVIDIAChip) {
  // mul.hi.u32 of Philox's multiplier 0xD2511F53 and 0xFFFFFFFF - t *
  // 0x01000193 in lane t: products that need all 64 bits, the high word
  // unsigned (a signed mul.hi would differ in every lane).
  const std::string body = std::string(R"(
      %tt = arith.index_cast %t : index to i32
      %step = arith.constant 16777619 : i32
      %ones = arith.constant -1 : i32
      %p = arith.muli %tt, %step : i32
      %x = arith.subi %ones, %p : i32
      %m = arith.constant -766435501 : i32
      %h = llvm.call_intrinsic "llvm.nvvm.mulhi.ui"(%m, %x) : (i32, i32) -> i32
      %v = vector.from_elements %h : vector<1xi32>
)") + storePerLane("v", 1, "i32", "32xi32");
  for (const char *name : {"sm_120a", "sm_90a", "sm_100a", "sm_103a"}) {
    chip = name;
    std::vector<uint32_t> out;
    ASSERT_EQ(runAs(launch(body, "1xi32", "32xi32"), 32, &out), "") << name;
    for (uint32_t t = 0; t < 32; ++t) {
      const uint64_t x = 0xFFFFFFFFu - t * 0x01000193u;
      EXPECT_EQ(out[t], uint32_t(uint64_t{0xD2511F53u} * x >> 32))
          << name << " lane " << t;
    }
  }
}

TEST_F(NVVMInstructionsTest, MulHiU32WithOneOperandIsAnError) {
  const std::string body = R"(
      %one = arith.constant 1 : i32
      %h = llvm.call_intrinsic "llvm.nvvm.mulhi.ui"(%one) : (i32) -> i32
)";
  std::string error =
      runAs<int32_t>(launch(body, "1xi32", "1xi32"), 1, nullptr);
  EXPECT_NE(error.find("intrinsic 'llvm.nvvm.mulhi.ui' takes two i32 and "
                       "returns an i32"),
            std::string::npos)
      << error;
}

TEST_F(NVVMInstructionsTest, UnmodelledConversionModeIsAnError) {
  const std::string body = R"(
      %one = arith.constant 1.0 : f32
      %e = nvvm.convert.f32x2.to.f8x2 %one, %one
             {rnd = #nvvm.fp_rnd_mode<rn>, sat = #nvvm.sat_mode<satfinite>}
             : i16 (f8E5M2)
)";
  std::string error =
      runAs<int32_t>(launch(body, "1xi32", "1xi32"), 1, nullptr);
  EXPECT_NE(error.find("only cvt.rn.satfinite.e4m3x2.f32 and "
                       "cvt.rp.satfinite.ue8m0x2.f32 are modelled"),
            std::string::npos)
      << error;
}

TEST_F(NVVMInstructionsTest, MmaOfZeroProductsReturnsC) {
  std::vector<uint32_t> d;
  ASSERT_EQ(runMma(std::string(R"(
      %a0 = arith.constant 0 : i32
      %b0 = arith.constant 0 : i32
      %cf = arith.constant 1.0 : f32
)") + kMma + kStoreD,
                   &d),
            "");
  for (int i = 0; i < 128; ++i)
    EXPECT_EQ(d[i], bitsOf(1.0f)) << "lane " << i / 4 << " d" << i % 4;
  EXPECT_EQ(stats.mfmas, 1u);
}

TEST_F(NVVMInstructionsTest, MmaOfOneProduct) {
  // A[0][0] is element 0 (bits 3..0) of lane 0's a0, B[0][0] element 0 of
  // lane 0's b0 (PTX ISA, m16n8k64 fragments), D[0][0] lane 0's d0: E2M1
  // code 2 (1.0) in both gives D[0][0] = 1 and 0 everywhere else.
  std::vector<uint32_t> d;
  ASSERT_EQ(runMma(std::string(R"(
      %c0 = arith.constant 0 : index
      %z = arith.constant 0 : i32
      %two = arith.constant 2 : i32
      %first = arith.cmpi eq, %t, %c0 : index
      %a0 = arith.select %first, %two, %z : i32
      %b0 = arith.select %first, %two, %z : i32
      %cf = arith.constant 0.0 : f32
)") + kMma + kStoreD,
                   &d),
            "");
  EXPECT_EQ(d[0], bitsOf(1.0f));
  for (int i = 1; i < 128; ++i)
    EXPECT_EQ(d[i], 0u) << "lane " << i / 4 << " d" << i % 4;
}

TEST_F(NVVMInstructionsTest, MmaWithPartOfTheWarpIsAnError) {
  const std::string body = std::string(R"(
      %c31 = arith.constant 31 : index
      %some = arith.cmpi ult, %t, %c31 : index
      scf.if %some {
        %a0 = arith.constant 0 : i32
        %b0 = arith.constant 0 : i32
        %cf = arith.constant 0.0 : f32
)") + kMma + R"(
      }
)";
  std::string error = runMma(body, nullptr);
  EXPECT_NE(error.find("'nvvm.mma.block_scale': warp 0 executes the "
                       "mma.block_scale with 31 of 32 lanes active"),
            std::string::npos)
      << error;
}

TEST_F(NVVMInstructionsTest, StructFieldsAreWordsPerLane) {
  // Nested fields flatten: (i32, array<2 x i32>) is three words a lane.
  const std::string body = std::string(R"(
      %id = nvvm.read.ptx.sreg.tid.x : i32
      %c7 = arith.constant 7 : i32
      %x = arith.muli %id, %c7 : i32
      %u = llvm.mlir.undef : !llvm.struct<(i32, array<2 x i32>)>
      %s0 = llvm.insertvalue %id, %u[0] : !llvm.struct<(i32, array<2 x i32>)>
      %s1 = llvm.insertvalue %x, %s0[1, 1] : !llvm.struct<(i32, array<2 x i32>)>
      %s2 = llvm.insertvalue %c7, %s1[1, 0] : !llvm.struct<(i32, array<2 x i32>)>
      %f0 = llvm.extractvalue %s2[0] : !llvm.struct<(i32, array<2 x i32>)>
      %arr = llvm.extractvalue %s2[1] : !llvm.struct<(i32, array<2 x i32>)>
      %f1 = llvm.extractvalue %arr[1] : !llvm.array<2 x i32>
      %f2 = llvm.extractvalue %s2[1, 0] : !llvm.struct<(i32, array<2 x i32>)>
      %v = vector.from_elements %f0, %f1, %f2 : vector<3xi32>
)") + storePerLane("v", 3, "i32", "96xi32");
  std::vector<int32_t> out;
  ASSERT_EQ(runAs(launch(body, "1xi32", "96xi32"), 96, &out), "");
  for (int t = 0; t < 32; ++t) {
    EXPECT_EQ(out[3 * t], t);
    EXPECT_EQ(out[3 * t + 1], 7 * t);
    EXPECT_EQ(out[3 * t + 2], 7);
  }
}

TEST_F(NVVMInstructionsTest, UnknownNVVMOpIsNamed) {
  std::string error = runAs<int32_t>(
      launch("      %c = nvvm.read.ptx.sreg.clock : i32", "1xi32", "1xi32"), 1,
      nullptr);
  EXPECT_NE(error.find("'nvvm.read.ptx.sreg.clock': operation not supported "
                       "by the sm_120a emulator"),
            std::string::npos)
      << error;
}

/// Two warps: thread t writes slot t of shared memory, then reads slot
/// 63 - t (the other warp's) after `beforeRead`, and stores it with its
/// lane and warp ids.
std::string mirror64(const std::string &beforeRead) {
  return launch(R"(
      %c63 = arith.constant 63 : index
      %tid = nvvm.read.ptx.sreg.tid.x : i32
      memref.store %tid, %smem[%t] : memref<64xi32, #gpu.address_space<workgroup>>
)" + beforeRead + R"(
      %r = arith.subi %c63, %t : index
      %x = memref.load %smem[%r] : memref<64xi32, #gpu.address_space<workgroup>>
      %lane = gpu.lane_id
      %warp = gpu.subgroup_id : index
      %lanei = arith.index_cast %lane : index to i32
      %warpi = arith.index_cast %warp : index to i32
      %v = vector.from_elements %x, %lanei, %warpi : vector<3xi32>
)" + storePerLane("v", 3, "i32", "192xi32"),
                "1xi32", "192xi32", 64,
                "\n        workgroup(%smem: memref<64xi32, "
                "#gpu.address_space<workgroup>>)");
}

TEST_F(NVVMInstructionsTest, BarrierSeparatesWarps) {
  std::vector<int32_t> out;
  ASSERT_EQ(runAs(mirror64("      nvvm.barrier0"), 192, &out), "");
  for (int t = 0; t < 64; ++t) {
    EXPECT_EQ(out[3 * t], 63 - t);
    EXPECT_EQ(out[3 * t + 1], t % 32);
    EXPECT_EQ(out[3 * t + 2], t / 32);
  }
  EXPECT_EQ(stats.barriers, 1u);
}

TEST_F(NVVMInstructionsTest, MissingBarrierBetweenWarpsIsARace) {
  std::string error = runAs<int32_t>(mirror64(""), 192, nullptr);
  EXPECT_NE(error.find("shared memory race: warp 0 reads byte 252 that warp "
                       "1 wrote since the last barrier"),
            std::string::npos)
      << error;
}

TEST_F(NVVMInstructionsTest, UnknownChipIsAnError) {
  OwningOpRef<ModuleOp> module =
      parseSourceString<ModuleOp>("module {}", &context);
  auto results = emulation::emulate(*module, "main", {}, "sm_90");
  ASSERT_FALSE(results);
  EXPECT_EQ(llvm::toString(results.takeError()),
            "emulate: no instruction set for chip 'sm_90' (known: gfx950, "
            "sm_89, sm_90a, sm_100a, sm_103a, sm_120a, sm_121a)");
}

} // namespace
