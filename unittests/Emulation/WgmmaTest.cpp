//===- WgmmaTest.cpp - sm_90a warpgroup MMA on the emulator ---------------===//
//
// Hand-written sm_90a kernels on nvvm.wgmma.* (PTX ISA §9.7.15), executed by
// the sm_90a instruction set on the model of fp4train/Emulation/Wgmma.h:
//  - one warpgroup copies a shared-memory image the test lays out (A 64 x
//    32 and B 64 x 32 E4M3 codes, K-major) and runs wgmma.mma_async
//    m64n64k32, then stores its 32 D registers; every swizzle mode of the
//    descriptor (none, 32-, 64-, 128-byte) against D = C + A·Bᵀ computed
//    here in double (exact for E4M3 products and the small C used), and
//    scale-d 0; the layouts are placed by CuTe's Swizzle<B, 4, 3> on the
//    offset within an aligned atom, written here independently of the
//    model's address function;
//  - the asynchronous rules: reading D before wgmma.wait_group, a
//    wgmma.mma_async without wgmma.fence, part of a warpgroup, a kernel
//    ending with a wgmma not waited for, a reserved descriptor bit and a
//    descriptor whose swizzle mode disagrees with the image (wrong D);
//  - two wgmmas chained through the accumulator before one wait (allowed);
//  - m64n64k16 with f16 A and B: the same 32-byte K-major rows, two bytes
//    an element;
//  - the accumulator fragment positions (a bijection onto 64 x N).
//
//===----------------------------------------------------------------------===//

#include "fp4train/Emulation/Wgmma.h"
#include "fp4train/Emulation/GPUEmulator.h"
#include "fp4train/InitFP4Train.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include "llvm/Support/FormatVariadic.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <set>
#include <string>
#include <vector>

using namespace mlir;
using namespace mlir::fp4train;
namespace ptx = ::fp4train::emulation::ptx;

namespace {

constexpr unsigned kRows = 64, kN = 64, kK = 32;
/// The shared-memory image: A then B, each at most 8 KiB (128-byte rows).
constexpr unsigned kOperandBytes = 8192, kImageBytes = 2 * kOperandBytes;

/// How the image lays out a K-major operand, and the descriptor fields
/// that describe it.
struct Layout {
  /// 0 none (8 x 16-byte core matrices), else the swizzle row in bytes.
  unsigned swizzleBytes;
  /// Descriptor bits 62-63: 0 none, 1 128B, 2 64B, 3 32B.
  unsigned mode;
  unsigned lbo, sbo;
};

const Layout kNone{0, 0, 128, 256};
const Layout kSwizzle32{32, 3, 16, 256};
const Layout kSwizzle64{64, 2, 16, 512};
const Layout kSwizzle128{128, 1, 16, 1024};

/// Byte offset of (row, kByte) of an operand in `layout`, from an aligned
/// base: CuTe's Swizzle<log2(W/16), 4, 3> XORs the 16-byte chunk index with
/// the row's phase within its 8-row group.
unsigned place(const Layout &layout, unsigned row, unsigned kByte) {
  if (!layout.swizzleBytes)
    return (row / 8) * layout.sbo + (kByte / 16) * layout.lbo + (row % 8) * 16 +
           kByte % 16;
  const unsigned w = layout.swizzleBytes;
  const unsigned rowStart = (row / 8) * layout.sbo + (row % 8) * w;
  const unsigned phase = ((row % 8) * w >> 7) & (w / 16 - 1);
  return rowStart + (((kByte / 16) ^ phase) * 16) + kByte % 16;
}

double decodeE4M3(uint8_t code) {
  const int sign = code >> 7, exponent = (code >> 3) & 0xF, mantissa = code & 7;
  double magnitude = exponent ? std::ldexp(1.0 + mantissa / 8.0, exponent - 7)
                              : std::ldexp(mantissa / 8.0, -6);
  return sign ? -magnitude : magnitude;
}

/// IEEE binary16, little-endian bytes `lo`, `hi`.
double decodeF16(uint8_t lo, uint8_t hi) {
  const unsigned bits = lo | hi << 8;
  const int sign = bits >> 15, exponent = (bits >> 10) & 0x1F;
  const int mantissa = bits & 0x3FF;
  double magnitude = exponent
                         ? std::ldexp(1.0 + mantissa / 1024.0, exponent - 15)
                         : std::ldexp(mantissa / 1024.0, -14);
  return sign ? -magnitude : magnitude;
}

uint32_t bitsOf(float f) {
  uint32_t b;
  std::memcpy(&b, &f, 4);
  return b;
}

/// Random finite E4M3 codes (NaN 0x7F/0xFF replaced by 0).
std::vector<uint8_t> randomCodes(unsigned count, unsigned seed) {
  std::mt19937 rng(seed);
  std::vector<uint8_t> codes(count);
  for (uint8_t &code : codes) {
    code = static_cast<uint8_t>(rng());
    if ((code & 0x7F) == 0x7F)
      code = 0;
  }
  return codes;
}

/// Random f16 values 2^-4 .. 2^4 in magnitude (exponent fields 11..19),
/// little-endian, as the bytes of a K-major operand: a 16-element dot
/// product is exact in the reference's doubles.
std::vector<uint8_t> randomF16(unsigned count, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<unsigned> exponent(11, 19), mantissa(0, 1023),
      sign(0, 1);
  std::vector<uint8_t> bytes(2 * count);
  for (unsigned i = 0; i < count; ++i) {
    const unsigned bits = sign(rng) << 15 | exponent(rng) << 10 | mantissa(rng);
    bytes[2 * i] = static_cast<uint8_t>(bits);
    bytes[2 * i + 1] = static_cast<uint8_t>(bits >> 8);
  }
  return bytes;
}

/// What the kernel does after its wgmma.mma_async.
struct KernelOptions {
  /// m64n64k16 with f16 A and B instead of m64n64k32 e4m3.
  bool f16 = false;
  Layout layout = kSwizzle128;
  /// Descriptor bits 62-63 (default: the layout's).
  int mode = -1;
  /// OR-ed into A's descriptor.
  uint64_t extraBits = 0;
  bool accumulate = true;
  bool fence = true;
  bool wait = true;
  /// A second wgmma taking the first one's D as its accumulator.
  bool chain = false;
  bool store = true;
  unsigned threads = 128;
};

/// The kernel: copy the image into 1024-byte aligned shared memory, fence
/// the generic-proxy writes, wgmma.mma_async m64n64k32 e4m3 with C[i] =
/// the thread's %c + i, store D[i] to out[32 t + i].
std::string makeKernel(const KernelOptions &o) {
  std::string fields;
  for (unsigned i = 0; i < 32; ++i)
    fields += std::string(i ? ", " : "") + "f32";
  const std::string structType = "!llvm.struct<(" + fields + ")>";
  const unsigned mode = o.mode >= 0 ? o.mode : o.layout.mode;
  const uint64_t fieldsA = (uint64_t{o.layout.lbo >> 4} << 16) |
                           (uint64_t{o.layout.sbo >> 4} << 32) |
                           (uint64_t{mode} << 62) | o.extraBits;
  const uint64_t fieldsB = (uint64_t{o.layout.lbo >> 4} << 16) |
                           (uint64_t{o.layout.sbo >> 4} << 32) |
                           (uint64_t{mode} << 62);
  std::string s = R"(
module attributes {gpu.container_module} {
  gpu.module @k {
    gpu.func @kernel(%in: memref<16384xi8>, %out: memref<4096xf32>)
        workgroup(%smem : memref<17408xi8, #gpu.address_space<workgroup>>)
        kernel {
      %t = gpu.thread_id x
      %c128 = arith.constant 128 : index
      %c1024 = arith.constant 1024 : index
      %base = memref.extract_aligned_pointer_as_index %smem
          : memref<17408xi8, #gpu.address_space<workgroup>> -> index
      %r = arith.remui %base, %c1024 : index
      %s = arith.subi %c1024, %r : index
      %pad = arith.remui %s, %c1024 : index
      %src = arith.muli %t, %c128 : index
      %dst = arith.addi %pad, %src : index
      %v = vector.load %in[%src] : memref<16384xi8>, vector<128xi8>
      vector.store %v, %smem[%dst]
          : memref<17408xi8, #gpu.address_space<workgroup>>, vector<128xi8>
      nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
      gpu.barrier
)";
  if (o.fence)
    s += "      nvvm.wgmma.fence.aligned\n";
  s += llvm::formatv(R"(
      %aligned = arith.addi %base, %pad : index
      %a64 = arith.index_castui %aligned : index to i64
      %c4 = arith.constant 4 : i64
      %mask = arith.constant 16383 : i64
      %shifted = arith.shrui %a64, %c4 : i64
      %startA = arith.andi %shifted, %mask : i64
      %bOff = arith.constant {0} : i64
      %bAddr = arith.addi %a64, %bOff : i64
      %bShifted = arith.shrui %bAddr, %c4 : i64
      %startB = arith.andi %bShifted, %mask : i64
      %fa = arith.constant {1} : i64
      %fb = arith.constant {2} : i64
      %descA = arith.ori %startA, %fa : i64
      %descB = arith.ori %startB, %fb : i64
      %tf = arith.index_castui %t : index to i32
      %cf = arith.uitofp %tf : i32 to f32
      %acc0 = llvm.mlir.undef : {3}
)",
                     kOperandBytes, static_cast<int64_t>(fieldsA),
                     static_cast<int64_t>(fieldsB), structType)
           .str();
  // C[i] = t + i: small integers, exact in the reference's doubles.
  for (unsigned i = 0; i < 32; ++i)
    s += llvm::formatv("      %ci{0} = arith.constant {0}.0 : f32\n"
                       "      %cv{0} = arith.addf %cf, %ci{0} : f32\n"
                       "      %acc{1} = llvm.insertvalue %cv{0}, %acc{0}[{0}] "
                       ": {2}\n",
                       i, i + 1, structType)
             .str();
  auto mma = [&](const std::string &result, const std::string &input) {
    return llvm::formatv(
               "      {0} = nvvm.wgmma.mma_async %descA, %descB, {1}, "
               "#nvvm.shape<m = 64, n = 64, k = {4}>, D[<f32>, {2}], "
               "A[<{5}>, <one>, <row>], B[<{5}>, <one>, <col>] : {3} -> "
               "{3}\n",
               result, input, o.accumulate ? "<one>" : "<zero>", structType,
               o.f16 ? 16 : 32, o.f16 ? "f16" : "e4m3")
        .str();
  };
  s += mma("%d", "%acc32");
  std::string result = "%d";
  if (o.chain) {
    s += mma("%d2", "%d");
    result = "%d2";
  }
  s += "      nvvm.wgmma.commit.group.sync.aligned\n";
  if (o.wait)
    s += "      nvvm.wgmma.wait.group.sync.aligned 0\n";
  if (o.store) {
    s += "      %c32 = arith.constant 32 : index\n"
         "      %at = arith.muli %t, %c32 : index\n";
    for (unsigned i = 0; i < 32; ++i)
      s += llvm::formatv("      %e{0} = llvm.extractvalue {1}[{0}] : {2}\n"
                         "      %i{0} = arith.constant {0} : index\n"
                         "      %p{0} = arith.addi %at, %i{0} : index\n"
                         "      memref.store %e{0}, %out[%p{0}] : "
                         "memref<4096xf32>\n",
                         i, result, structType)
               .str();
  }
  s += llvm::formatv(R"(
      gpu.return
    }
  }
  func.func @main(%in: memref<16384xi8>, %out: memref<4096xf32>)
      -> memref<4096xf32> {
    %c1 = arith.constant 1 : index
    %n = arith.constant {0} : index
    gpu.launch_func @k::@kernel blocks in (%c1, %c1, %c1)
        threads in (%n, %c1, %c1)
        args(%in : memref<16384xi8>, %out : memref<4096xf32>)
    return %out : memref<4096xf32>
  }
}
)",
                     o.threads)
           .str();
  return s;
}

class WgmmaTest : public ::testing::Test {
protected:
  WgmmaTest() : context(makeRegistry()) { context.loadAllAvailableDialects(); }
  static DialectRegistry makeRegistry() {
    DialectRegistry registry;
    registerAllDialects(registry);
    return registry;
  }

  /// The image of A (`a`, 64 x 32) and B^T (`b`, 64 x 32) in `layout`.
  static std::vector<uint8_t> makeImage(const Layout &layout,
                                        const std::vector<uint8_t> &a,
                                        const std::vector<uint8_t> &b) {
    std::vector<uint8_t> image(kImageBytes, 0);
    for (unsigned row = 0; row < kRows; ++row)
      for (unsigned k = 0; k < kK; ++k) {
        image[place(layout, row, k)] = a[row * kK + k];
        image[kOperandBytes + place(layout, row, k)] = b[row * kK + k];
      }
    return image;
  }

  /// Emulates the kernel of `options` on A and B; returns the error or ""
  /// with the 128 threads' D registers in `d` (32 per thread).
  std::string run(const KernelOptions &options, const std::vector<uint8_t> &a,
                  const std::vector<uint8_t> &b, std::vector<uint32_t> *d) {
    OwningOpRef<ModuleOp> module =
        parseSourceString<ModuleOp>(makeKernel(options), &context);
    if (!module)
      return "parse error";
    auto results = emulation::emulate(
        *module, "main",
        {emulation::EmulatorArgument::buffer(makeImage(options.layout, a, b)),
         emulation::EmulatorArgument::buffer(std::vector<uint8_t>(4 * 4096))},
        "sm_90a", &stats);
    if (!results)
      return llvm::toString(results.takeError());
    d->resize(4096);
    std::memcpy(d->data(), (*results)[0].data(), 4 * 4096);
    return "";
  }

  /// Mismatches of `d` against C + (products) A·Bᵀ `times` times, with
  /// register i of thread t at its fragment position; the first few are
  /// test failures when `report`.
  static int countMismatches(const std::vector<uint32_t> &d,
                             const std::vector<uint8_t> &a,
                             const std::vector<uint8_t> &b, bool accumulate,
                             int times = 1, bool report = true,
                             bool f16 = false) {
    int bad = 0;
    for (unsigned t = 0; t < 128; ++t)
      for (unsigned i = 0; i < 32; ++i) {
        auto [row, col] = ptx::getWgmmaAccumulatorPosition(t, i);
        double sum = accumulate ? double(t + i) : 0.0;
        double dot = 0;
        // kK bytes of each row: 32 E4M3 codes or 16 f16 values.
        for (unsigned k = 0; k < kK; k += f16 ? 2 : 1) {
          const unsigned x = row * kK + k, y = col * kK + k;
          dot += f16 ? decodeF16(a[x], a[x + 1]) * decodeF16(b[y], b[y + 1])
                     : decodeE4M3(a[x]) * decodeE4M3(b[y]);
        }
        // A chained wgmma adds the same product again to the rounded D.
        float value = static_cast<float>(sum + dot);
        for (int j = 1; j < times; ++j)
          value = static_cast<float>(double(value) + dot);
        if (d[32 * t + i] != bitsOf(value) && bad++ < 3 && report)
          ADD_FAILURE() << "thread " << t << " register " << i << " (D[" << row
                        << "][" << col << "]): " << std::hex << d[32 * t + i]
                        << " != " << bitsOf(value);
      }
    return bad;
  }

  /// Emulates `options` on random operands from `seed`; expects an error
  /// containing `text`.
  void expectError(const KernelOptions &options, unsigned seed,
                   const std::string &text) {
    std::vector<uint32_t> d;
    const std::string error = run(options, randomCodes(kRows * kK, seed),
                                  randomCodes(kN * kK, seed + 1), &d);
    EXPECT_NE(error.find(text), std::string::npos) << error;
  }

  MLIRContext context;
  emulation::EmulatorStats stats;
};

TEST_F(WgmmaTest, EverySwizzleMode) {
  const std::vector<uint8_t> a = randomCodes(kRows * kK, 1);
  const std::vector<uint8_t> b = randomCodes(kN * kK, 2);
  for (const Layout &layout : {kNone, kSwizzle32, kSwizzle64, kSwizzle128}) {
    SCOPED_TRACE("swizzle " + std::to_string(layout.swizzleBytes));
    KernelOptions options;
    options.layout = layout;
    std::vector<uint32_t> d;
    ASSERT_EQ(run(options, a, b, &d), "");
    EXPECT_EQ(countMismatches(d, a, b, /*accumulate=*/true), 0);
  }
  EXPECT_EQ(stats.mfmas, 4u);
}

TEST_F(WgmmaTest, F16OperandsTakeK16) {
  // The same 32-byte K-major rows as 16 f16 values; scale-d 1 and 0.
  const std::vector<uint8_t> a = randomF16(kRows * kK / 2, 9);
  const std::vector<uint8_t> b = randomF16(kN * kK / 2, 10);
  for (bool accumulate : {true, false}) {
    KernelOptions options;
    options.f16 = true;
    options.accumulate = accumulate;
    std::vector<uint32_t> d;
    ASSERT_EQ(run(options, a, b, &d), "");
    EXPECT_EQ(countMismatches(d, a, b, accumulate, 1, true, /*f16=*/true), 0);
    // Read as E4M3 codes the same bytes give other sums.
    EXPECT_GT(countMismatches(d, a, b, accumulate, 1, false), 0);
  }
}

TEST_F(WgmmaTest, ScaleDZeroIgnoresTheAccumulator) {
  const std::vector<uint8_t> a = randomCodes(kRows * kK, 3);
  const std::vector<uint8_t> b = randomCodes(kN * kK, 4);
  KernelOptions options;
  options.accumulate = false;
  std::vector<uint32_t> d;
  ASSERT_EQ(run(options, a, b, &d), "");
  EXPECT_EQ(countMismatches(d, a, b, /*accumulate=*/false), 0);
}

TEST_F(WgmmaTest, ChainedThroughTheAccumulatorBeforeOneWait) {
  const std::vector<uint8_t> a = randomCodes(kRows * kK, 5);
  const std::vector<uint8_t> b = randomCodes(kN * kK, 6);
  KernelOptions options;
  options.chain = true;
  std::vector<uint32_t> d;
  ASSERT_EQ(run(options, a, b, &d), "");
  EXPECT_EQ(countMismatches(d, a, b, /*accumulate=*/true, /*times=*/2), 0);
}

TEST_F(WgmmaTest, SwizzleModeThatDisagreesWithTheLayoutIsNoticed) {
  const std::vector<uint8_t> a = randomCodes(kRows * kK, 7);
  const std::vector<uint8_t> b = randomCodes(kN * kK, 8);
  KernelOptions options;
  options.mode = 2; // 64-byte swizzle over the 128-byte layout
  std::vector<uint32_t> d;
  ASSERT_EQ(run(options, a, b, &d), "");
  EXPECT_GT(countMismatches(d, a, b, /*accumulate=*/true, /*times=*/1,
                            /*report=*/false),
            1000);
}

TEST_F(WgmmaTest, ReadingDBeforeTheWaitIsAnError) {
  KernelOptions options;
  options.wait = false;
  expectError(options, 9,
              "'llvm.extractvalue': reads the D of a "
              "wgmma.mma_async before a wgmma.wait_group retired it");
}

TEST_F(WgmmaTest, MissingFenceIsAnError) {
  KernelOptions options;
  options.fence = false;
  expectError(options, 11,
              "warpgroup 0 issues wgmma.mma_async without a "
              "wgmma.fence");
}

TEST_F(WgmmaTest, PartOfAWarpgroupIsAnError) {
  KernelOptions options;
  options.threads = 96;
  expectError(options, 13,
              "warpgroup 0 executes wgmma.fence with 96 of 128 "
              "threads active");
}

TEST_F(WgmmaTest, EndingWithoutTheWaitIsAnError) {
  KernelOptions options;
  options.wait = false;
  options.store = false;
  expectError(options, 15,
              "warpgroup 0 ends the kernel with a wgmma.mma_async "
              "it has not waited for");
}

TEST_F(WgmmaTest, ReservedDescriptorBitIsAnError) {
  KernelOptions options;
  options.extraBits = uint64_t{1} << 46;
  expectError(options, 17, "A: wgmma matrix descriptor");
  expectError(options, 17, "reserved bits (14-15, 30-31, 46-48, 52-61)");
}

TEST(WgmmaModelTest, DescriptorFields) {
  ptx::SmemDescriptor desc;
  // Start 0x1230 >> 4, LBO 128 >> 4, SBO 1024 >> 4, base offset 3, 64B.
  const uint64_t bits = (0x1230 >> 4) | (uint64_t{128 >> 4} << 16) |
                        (uint64_t{1024 >> 4} << 32) | (uint64_t{3} << 49) |
                        (uint64_t{2} << 62);
  ASSERT_EQ(ptx::decodeWgmmaDescriptor(bits, &desc), "");
  EXPECT_EQ(desc.startAddress, 0x1230u);
  EXPECT_EQ(desc.leadingByteOffset, 128u);
  EXPECT_EQ(desc.strideByteOffset, 1024u);
  EXPECT_EQ(desc.baseOffset, 3u);
  EXPECT_EQ(desc.swizzle, ptx::SwizzleMode::B64);
  for (unsigned bit : {14u, 31u, 47u, 52u, 61u})
    EXPECT_NE(ptx::decodeWgmmaDescriptor(bits | uint64_t{1} << bit, &desc), "")
        << "bit " << bit;
}

TEST(WgmmaModelTest, AccumulatorFragmentCoversDOnce) {
  for (unsigned n : {8u, 64u, 256u}) {
    std::set<std::pair<unsigned, unsigned>> seen;
    for (unsigned t = 0; t < 128; ++t)
      for (unsigned i = 0; i < n / 2; ++i) {
        auto [row, col] = ptx::getWgmmaAccumulatorPosition(t, i);
        EXPECT_LT(row, 64u);
        EXPECT_LT(col, n);
        seen.insert({row, col});
      }
    EXPECT_EQ(seen.size(), 64u * n);
  }
  // Thread 37 is lane 5 of warp 1: rows 16 + 1 (+ 8), columns 2 + 8 j.
  EXPECT_EQ(ptx::getWgmmaAccumulatorPosition(37, 0),
            (std::pair<unsigned, unsigned>{17, 2}));
  EXPECT_EQ(ptx::getWgmmaAccumulatorPosition(37, 3),
            (std::pair<unsigned, unsigned>{25, 3}));
  EXPECT_EQ(ptx::getWgmmaAccumulatorPosition(37, 4),
            (std::pair<unsigned, unsigned>{17, 10}));
}

} // namespace
