//===- TmaTest.cpp - Tensor maps and tiled TMA loads on the emulator ------===//
//
// Hand-written sm_100a kernels for the TMA model (fp4train/Emulation/Tma.h):
// the host makes a tensor map of a 2 x 100 x 160 byte tensor
// (nvgpu.tma.create.descriptor, box 1 x 64 x 128), a kernel's thread 0
// arrives on an mbarrier expecting the box's 8192 bytes and issues
// cp.async.bulk.tensor.3d at the given coordinates, every thread waits and
// copies the shared-memory box out. The expected box is computed here:
// elements outside the tensor are zero, and the 128-byte swizzle puts byte
// b of box row r at 128 r + 16 ((b / 16) ^ (r % 8)) + b % 16 (CuTe's
// Swizzle<3, 4, 3> on the 1024-byte aligned destination). Then what
// cuTensorMapEncodeTiled or the instruction refuses: a stride that is not a
// multiple of 16 (and, as a model test, every encoding constraint), a
// misaligned destination, a load without the expect-tx arrive (its phase
// never completes). Multicast: a cluster of two CTAs whose mbarriers both
// expect the box that CTA 0 loads with .multicast::cluster.
//
//===----------------------------------------------------------------------===//

#include "fp4train/Emulation/Tma.h"
#include "fp4train/Emulation/GPUEmulator.h"
#include "fp4train/InitFP4Train.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

using namespace mlir;
using namespace mlir::fp4train;

namespace {

constexpr unsigned kBatch = 2, kRows = 100, kCols = 160;
constexpr unsigned kBoxRows = 64, kBoxBytes = 128;

struct TmaOptions {
  std::string swizzle = "swizzle_128b";
  /// Coordinates (innermost first: byte, row, batch).
  int k = 0, row = 0, batch = 0;
  unsigned cols = kCols;
  unsigned boxBytes = kBoxBytes;
  /// Added to the 1024-byte aligned destination.
  unsigned dstOffset = 0;
  bool expectTx = true;
  /// A gpu.alloc in the host function: the emulator then keeps host and
  /// device memory apart, and the map of the host argument is refused.
  bool separateMemories = false;
  /// A cluster of two CTAs: CTA 0 loads the box with .multicast::cluster
  /// and this mask (0: no cluster); each CTA expects the box's bytes on its
  /// own mbarrier and copies its box out.
  unsigned multicastMask = 0;
  /// The chip that runs it: sm_100a, or sm_90a (the same models, one CTA).
  std::string chip = "sm_100a";
};

/// `text` with each `$NAME` of `values` replaced.
std::string
substitute(std::string text,
           const std::vector<std::pair<std::string, std::string>> &values) {
  for (const auto &[name, value] : values)
    for (size_t at = text.find(name); at != std::string::npos;
         at = text.find(name, at + value.size()))
      text.replace(at, name.size(), value);
  return text;
}

std::string makeModule(const TmaOptions &o) {
  const unsigned bytes = kBoxRows * o.boxBytes;
  const std::string expectTx =
      o.expectTx ? "        %tx = arith.constant $BYTES : i32\n"
                   "        nvvm.mbarrier.arrive.expect_tx %bar_ptr, %tx : "
                   "!llvm.ptr<3>, i32\n"
                 : "";
  const bool cluster = o.multicastMask != 0;
  // With multicast, both CTAs' mbarriers expect the box before CTA 0 loads
  // (a cluster barrier), and neither returns while the other may still
  // write to it.
  const std::string sync = cluster ? "      nvvm.cluster.arrive {aligned}\n"
                                     "      nvvm.cluster.wait {aligned}\n"
                                   : "      gpu.barrier\n";
  const std::string load =
      cluster ? "        %mask = arith.constant " +
                    std::to_string(o.multicastMask) +
                    " : i16\n        %dst7 = llvm.addrspacecast %dst : "
                    "!llvm.ptr<3> to !llvm.ptr<7>\n        "
                    "nvvm.cp.async.bulk.tensor.shared.cluster.global %dst7, "
                    "%map, %bar_ptr, box[%ck, %cr, %cb] multicast_mask = "
                    "%mask : !llvm.ptr<7>, !llvm.ptr\n"
              : "        nvvm.cp.async.bulk.tensor.shared.cluster.global "
                "%dst, %map, %bar_ptr, box[%ck, %cr, %cb] {isCTAOnly = true} "
                ": !llvm.ptr<3>, !llvm.ptr\n";
  const std::string text = R"(
module attributes {gpu.container_module} {
  gpu.module @k {
    gpu.func @kernel(%desc: $DESC, %out: memref<$OUTBYTESxi8>)
        workgroup(%smem : memref<$SMEMxi8, 3>, %bar : memref<1xi64, 3>)
        kernel {
      %t = gpu.thread_id x
      %c0 = arith.constant 0 : index
      %c0_i32 = arith.constant 0 : i32
      %c1_i32 = arith.constant 1 : i32
      %c1024 = arith.constant 1024 : index
      %first = arith.cmpi eq, %t, %c0 : index
      %cta = gpu.block_id x
      %cta0 = arith.cmpi eq, %cta, %c0 : index
      %issuer = arith.andi %first, %cta0 : i1
      %bar_p = memref.extract_aligned_pointer_as_index %bar : memref<1xi64, 3> -> index
      %bar_i = arith.index_cast %bar_p : index to i64
      %bar_ptr = llvm.inttoptr %bar_i : i64 to !llvm.ptr<3>
      %base = memref.extract_aligned_pointer_as_index %smem : memref<$SMEMxi8, 3> -> index
      %r = arith.remui %base, %c1024 : index
      %s = arith.subi %c1024, %r : index
      %pad0 = arith.remui %s, %c1024 : index
      %extra = arith.constant $OFFSET : index
      %pad = arith.addi %pad0, %extra : index
      %dst_a = arith.addi %base, %pad : index
      %dst_i = arith.index_cast %dst_a : index to i64
      %dst = llvm.inttoptr %dst_i : i64 to !llvm.ptr<3>
      %map = builtin.unrealized_conversion_cast %desc : $DESC to !llvm.ptr
      scf.if %first {
        nvvm.mbarrier.init %bar_ptr, %c1_i32 : !llvm.ptr<3>, i32
$EXPECT      }
$SYNC      scf.if %issuer {
        %ck = arith.constant $K : i32
        %cr = arith.constant $ROW : i32
        %cb = arith.constant $BATCH : i32
$LOAD      }
      nvvm.mbarrier.try_wait.parity %bar_ptr, %c0_i32, %c0_i32 : !llvm.ptr<3>, i32, i32
      %per = arith.constant $PER : index
      %from = arith.muli %t, %per : index
      %at = arith.addi %pad, %from : index
      %v = vector.load %smem[%at] : memref<$SMEMxi8, 3>, vector<$PERxi8>
      %bytes = arith.constant $BYTES : index
      %out0 = arith.muli %cta, %bytes : index
      %out_at = arith.addi %out0, %from : index
      vector.store %v, %out[%out_at] : memref<$OUTBYTESxi8>, vector<$PERxi8>
$EXIT      gpu.return
    }
  }
  func.func @main(%codes: memref<$TENSOR>, %out: memref<$OUTBYTESxi8>) -> memref<$OUTBYTESxi8> {
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c32 = arith.constant 32 : index
    %box_b = arith.constant 1 : index
    %box_r = arith.constant $BOXROWS : index
    %box_k = arith.constant $BOXBYTES : index
$ALLOC    %u = memref.cast %codes : memref<$TENSOR> to memref<*xi8>
    %d = nvgpu.tma.create.descriptor %u box[%box_b, %box_r, %box_k] : memref<*xi8> -> $DESC
    %ctas = arith.constant $CTAS : index
    gpu.launch_func @k::@kernel $CLUSTERblocks in (%ctas, %c1, %c1)
        threads in (%c32, %c1, %c1)
        args(%d : $DESC, %out : memref<$OUTBYTESxi8>)
    return %out : memref<$OUTBYTESxi8>
  }
}
)";
  const std::string alloc =
      o.separateMemories ? "    %dev = gpu.alloc () : memref<16xi8>\n" : "";
  return substitute(
      substitute(text,
                 {{"$EXPECT", expectTx},
                  {"$ALLOC", alloc},
                  {"$SYNC", sync},
                  {"$LOAD", load},
                  {"$EXIT", cluster ? sync : ""},
                  {"$CLUSTER", cluster ? "clusters in (%c2, %c1, %c1) "
                                         "\n        "
                                       : ""},
                  {"$CTAS", cluster ? "2" : "1"},
                  {"$OUTBYTES", std::to_string(bytes * (cluster ? 2 : 1))}}),
      {{"$DESC", "!nvgpu.tensormap.descriptor<tensor = memref<1x" +
                     std::to_string(kBoxRows) + "x" +
                     std::to_string(o.boxBytes) +
                     "xi8, 3>, swizzle = " + o.swizzle +
                     ", l2promo = none, oob = zero, interleave = none>"},
       {"$TENSOR", std::to_string(kBatch) + "x" + std::to_string(kRows) + "x" +
                       std::to_string(o.cols) + "xi8"},
       {"$SMEM", std::to_string(bytes + 2048)},
       {"$BYTES", std::to_string(bytes)},
       {"$PER", std::to_string(bytes / 32)},
       {"$OFFSET", std::to_string(o.dstOffset)},
       {"$K", std::to_string(o.k)},
       {"$ROW", std::to_string(o.row)},
       {"$BATCH", std::to_string(o.batch)},
       {"$BOXROWS", std::to_string(kBoxRows)},
       {"$BOXBYTES", std::to_string(o.boxBytes)}});
}

class TmaTest : public ::testing::Test {
protected:
  TmaTest() : context(makeRegistry()) { context.loadAllAvailableDialects(); }
  static DialectRegistry makeRegistry() {
    DialectRegistry registry;
    registerAllDialects(registry);
    return registry;
  }

  static uint8_t valueAt(unsigned batch, unsigned row, unsigned col) {
    // Never 0, so that a zero in the box means "filled".
    return static_cast<uint8_t>(1 + (batch * 131 + row * 7 + col * 3) % 251);
  }

  std::string run(const TmaOptions &o, std::vector<uint8_t> *out) {
    OwningOpRef<ModuleOp> module =
        parseSourceString<ModuleOp>(makeModule(o), &context);
    if (!module)
      return "parse error";
    std::vector<uint8_t> codes(kBatch * kRows * o.cols);
    for (unsigned b = 0; b < kBatch; ++b)
      for (unsigned r = 0; r < kRows; ++r)
        for (unsigned c = 0; c < o.cols; ++c)
          codes[(b * kRows + r) * o.cols + c] = valueAt(b, r, c);
    auto results = emulation::emulate(
        *module, "main",
        {emulation::EmulatorArgument::buffer(std::move(codes)),
         emulation::EmulatorArgument::buffer(std::vector<uint8_t>(
             kBoxRows * o.boxBytes * (o.multicastMask ? 2 : 1)))},
        o.chip, &stats);
    if (!results)
      return llvm::toString(results.takeError());
    *out = (*results)[0];
    return "";
  }

  /// Mismatches of a 64 x 128 box at (k, row, batch) in `swizzled` or plain
  /// layout.
  static int countMismatches(const std::vector<uint8_t> &out,
                             const TmaOptions &o, bool swizzled,
                             bool report = true) {
    int bad = 0;
    for (unsigned r = 0; r < kBoxRows; ++r)
      for (unsigned b = 0; b < kBoxBytes; ++b) {
        const int row = o.row + int(r), col = o.k + int(b);
        const bool in = row >= 0 && row < int(kRows) && col >= 0 &&
                        col < int(o.cols) && o.batch >= 0 &&
                        o.batch < int(kBatch);
        const uint8_t want = in ? valueAt(o.batch, row, col) : 0;
        const unsigned at = swizzled
                                ? 128 * r + 16 * ((b / 16) ^ (r % 8)) + b % 16
                                : 128 * r + b;
        if (out[at] != want && bad++ < 3 && report)
          ADD_FAILURE() << "box row " << r << " byte " << b << ": "
                        << int(out[at]) << " != " << int(want);
      }
    return bad;
  }

  /// Emulates `o`; expects an error containing `text`.
  void expectError(const TmaOptions &o, const std::string &text) {
    std::vector<uint8_t> out;
    const std::string error = run(o, &out);
    EXPECT_NE(error.find(text), std::string::npos) << error;
  }

  MLIRContext context;
  emulation::EmulatorStats stats;
};

TEST_F(TmaTest, InBoundsBoxSwizzled) {
  TmaOptions o;
  o.batch = 1;
  o.row = 20;
  o.k = 16;
  std::vector<uint8_t> out;
  ASSERT_EQ(run(o, &out), "");
  EXPECT_EQ(countMismatches(out, o, /*swizzled=*/true), 0);
}

TEST_F(TmaTest, OutOfBoundsIsZeroFilled) {
  TmaOptions o;
  o.batch = 1;
  o.row = 64; // rows 100..127 are outside
  o.k = 96;   // bytes 160..223 are outside
  std::vector<uint8_t> out;
  ASSERT_EQ(run(o, &out), "");
  EXPECT_EQ(countMismatches(out, o, /*swizzled=*/true), 0);
}

TEST_F(TmaTest, NegativeCoordinatesAreZeroFilled) {
  TmaOptions o;
  o.row = -8;
  o.k = -16;
  std::vector<uint8_t> out;
  ASSERT_EQ(run(o, &out), "");
  EXPECT_EQ(countMismatches(out, o, /*swizzled=*/true), 0);
}

TEST_F(TmaTest, WithoutSwizzleTheBoxIsDense) {
  TmaOptions o;
  o.swizzle = "none";
  o.row = 40;
  std::vector<uint8_t> out;
  ASSERT_EQ(run(o, &out), "");
  EXPECT_EQ(countMismatches(out, o, /*swizzled=*/false), 0);
  // The same box read as swizzled is wrong: the test tells them apart.
  EXPECT_GT(countMismatches(out, o, /*swizzled=*/true, /*report=*/false), 1000);
}

TEST_F(TmaTest, StrideNotAMultipleOf16IsRefused) {
  TmaOptions o;
  o.cols = 100;
  o.boxBytes = 64;
  o.swizzle = "swizzle_64b";
  expectError(o, "cuTensorMapEncodeTiled would refuse it: tensor map "
                 "stride 100 of dimension 1 is not a multiple of 16");
}

TEST_F(TmaTest, MisalignedDestinationIsAnError) {
  TmaOptions o;
  o.dstOffset = 128;
  expectError(o, "is not 1024-byte aligned");
}

TEST_F(TmaTest, LoadWithoutExpectTxNeverCompletesThePhase) {
  // complete-tx may run ahead of expect-tx (the tx-count goes negative),
  // but without the arrive the phase waits forever: a reported deadlock.
  TmaOptions o;
  o.expectTx = false;
  expectError(o, "1 pending arrivals and tx-count -8192: no other "
                 "thread of the cluster can complete it");
}

TEST_F(TmaTest, HostTensorWithoutUnifiedMemoryIsRefused) {
  // cuTensorMapEncodeTiled takes the address a kernel will read: without
  // unified memory a host buffer's is useless to the GPU.
  TmaOptions o;
  o.separateMemories = true;
  expectError(o, "the memref is host memory: without unified memory");
}

// sm_90a's instruction set runs the same tensor map, TMA and mbarrier
// models for one CTA ([WG4]'s GEMM loads its E4M3 tiles by TMA).
TEST_F(TmaTest, Sm90aLoadsTheSameBoxes) {
  for (auto [row, k] : {std::pair{20, 16}, {64, 96}, {-8, -16}}) {
    TmaOptions o;
    o.chip = "sm_90a";
    o.batch = 1;
    o.row = row;
    o.k = k;
    std::vector<uint8_t> out;
    ASSERT_EQ(run(o, &out), "");
    EXPECT_EQ(countMismatches(out, o, /*swizzled=*/true), 0)
        << row << ", " << k;
  }
}

TEST_F(TmaTest, Sm90aLoadWithoutExpectTxNeverCompletesThePhase) {
  TmaOptions o;
  o.chip = "sm_90a";
  o.expectTx = false;
  expectError(o, "1 pending arrivals and tx-count -8192");
}

TEST_F(TmaTest, Sm90aHasNoClusters) {
  TmaOptions o;
  o.chip = "sm_90a";
  o.multicastMask = 3;
  expectError(o, "clusters are not supported by the sm_90a");
}

TEST_F(TmaTest, MulticastWritesEveryCtaOfTheMask) {
  // .multicast::cluster with mask 0b11: CTA 0's load lands at the same
  // offset in both CTAs and completes the transaction on each CTA's
  // mbarrier.
  TmaOptions o;
  o.multicastMask = 3;
  o.row = 50;
  std::vector<uint8_t> out;
  ASSERT_EQ(run(o, &out), "");
  const std::vector<uint8_t> first(out.begin(), out.begin() + out.size() / 2);
  const std::vector<uint8_t> second(out.begin() + out.size() / 2, out.end());
  EXPECT_EQ(countMismatches(first, o, /*swizzled=*/true), 0);
  EXPECT_EQ(countMismatches(second, o, /*swizzled=*/true), 0);
  EXPECT_EQ(stats.workgroups, 2u);
}

TEST_F(TmaTest, MulticastMaskWithoutACtaLeavesItWaiting) {
  TmaOptions o;
  o.multicastMask = 1;
  // CTA 1 arrived with its expect-tx; the box never reaches it.
  expectError(o, "tx-count 8192: no other thread of the cluster can complete "
                 "it (a missing arrive, commit or complete-tx) (workgroup "
                 "1,0,0)");
}

TEST(TensorMapTest, EncodingConstraints) {
  namespace ptx = ::fp4train::emulation::ptx;
  ptx::TensorMap map;
  map.globalAddress = 0x100000000ull;
  map.rank = 3;
  map.sizes = {160, 100, 2, 0, 0};
  map.strides = {0, 160, 16000, 0, 0};
  map.box = {128, 64, 1, 0, 0};
  map.swizzle = ptx::SwizzleMode::B128;
  ASSERT_EQ(ptx::checkTensorMap(map), "");
  // The image round-trips.
  ptx::TensorMap decoded;
  ASSERT_EQ(ptx::decodeTensorMap(ptx::encodeTensorMap(map), &decoded), "");
  EXPECT_EQ(decoded.sizes, map.sizes);
  EXPECT_EQ(decoded.strides, map.strides);
  EXPECT_EQ(decoded.box, map.box);
  EXPECT_EQ(decoded.swizzle, map.swizzle);
  EXPECT_EQ(ptx::getBoxBytes(map), 8192u);
  // Random bytes are no tensor map.
  EXPECT_NE(ptx::decodeTensorMap(std::vector<uint8_t>(128, 7), &decoded), "");
  auto refused = [&](auto change, const std::string &what) {
    ptx::TensorMap bad = map;
    change(bad);
    const std::string error = ptx::checkTensorMap(bad);
    EXPECT_NE(error.find(what), std::string::npos) << error;
  };
  refused([](ptx::TensorMap &m) { m.globalAddress += 8; },
          "is not 16-byte aligned");
  refused([](ptx::TensorMap &m) { m.strides[1] = 100; },
          "stride 100 of dimension 1 is not a multiple of 16");
  refused([](ptx::TensorMap &m) { m.box[1] = 257; },
          "box 257 of dimension 1 is not in 1..256");
  refused([](ptx::TensorMap &m) { m.box[0] = 24; },
          "inner box of 24 bytes is not a multiple of 16");
  refused([](ptx::TensorMap &m) { m.swizzle = ptx::SwizzleMode::B64; },
          "inner box of 128 bytes exceeds the 64-byte swizzle span");
  refused([](ptx::TensorMap &m) { m.rank = 6; }, "rank 6 is not in 1..5");
}

} // namespace
