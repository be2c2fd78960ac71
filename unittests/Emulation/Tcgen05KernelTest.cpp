//===- Tcgen05KernelTest.cpp - Hand-written tcgen05 kernels on sm_100a ----===//
//
// Small NVVM kernels written here as MLIR text, executed by the lockstep
// interpreter on the sm_100a / sm_103a instruction sets: one CTA of four
// warps copies the operands and the scale factors into shared memory,
// warp 0 allocates tensor memory, thread 0 initializes an mbarrier, copies
// the scales into tensor memory (tcgen05.cp .32x128b.warpx4), issues one
// tcgen05.mma ... .block_scale (NVFP4: kind::mxf4nvf4.block16, UE4M3
// scales) and commits it to the mbarrier; every thread waits on the
// barrier's phase, each warp loads its 32 lanes of D (tcgen05.ld
// .32x32b.x64) and stores them; warp 0 deallocates. The result is compared
// with a scalar reference computed here. The same kernel is also written
// with llvm.call_intrinsic "llvm.nvvm.tcgen05.*" (the sm_103a form), with
// nvvm.tcgen05.mma_smem_desc, and with the operands loaded by cp.async.bulk
// completing on an mbarrier; broken variants (no commit, no wait, no
// dealloc, missing transaction bytes, a wrong swizzle) show that the
// emulator reports them. Small two-warp kernels check tcgen05.st/ld
// (16x256b and 32x32b) per warp lane quarter and the warp rules.
//
//===----------------------------------------------------------------------===//

#include "Nvfp4Operands.h"

#include "fp4train/Emulation/GPUEmulator.h"
#include "fp4train/InitFP4Train.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

using namespace mlir;
using namespace mlir::fp4train;
using namespace ::fp4train::emulation_test;

namespace {

constexpr unsigned kM = 128, kN = 64, kK = 64;
// Shared memory images: A 128 rows x 32 bytes in the 128-byte swizzle (8-row
// atoms of 1 KiB), B 64 rows x 32 bytes interleaved (core matrices of 8 x 16
// bytes, 8-row groups 128 bytes apart, the second K chunk LBO = 1 KiB
// later), scale factors as 32 rows of 16 bytes (row r: rows r, r + 32,
// r + 64, r + 96 with their four K-block scales each).
constexpr unsigned kABytes = 16384, kBBytes = 2048, kSfBytes = 512;

uint64_t descriptorHigh(uint32_t lbo, uint32_t sbo, unsigned swizzle) {
  return uint64_t{lbo >> 4} << 16 | uint64_t{sbo >> 4} << 32 | 1ull << 46 |
         uint64_t{swizzle} << 61;
}

struct KernelOptions {
  bool intrinsics = false; // llvm.call_intrinsic for the tcgen05 ops
  bool commit = true, wait = true, dealloc = true;
  unsigned swizzleA = 2; // descriptor swizzle code of A (2: 128B)
  bool descOp = false;   // nvvm.tcgen05.mma_smem_desc for A's descriptor
  /// Thread 0 loads the operands with cp.async.bulk completing on an
  /// mbarrier (expecting `expectBytes`) instead of the threads' copy loop.
  bool bulkLoads = false;
  /// The threads' copy loop ends with fence.proxy.async (the MMA and
  /// tcgen05.cp read shared memory through the asynchronous proxy).
  bool proxyFence = true;
  unsigned expectBytes = kABytes + kBBytes + 2 * kSfBytes;
};

/// The MLIR text of the test: host @main launching @k::@kernel.
std::string makeKernel(const KernelOptions &o) {
  const uint64_t highA = descriptorHigh(16, 1024, o.swizzleA);
  const uint64_t highB = descriptorHigh(1024, 128, 0);
  const uint64_t highSf = descriptorHigh(0, 128, 0);
  // NVFP4 idesc (Table 44): E2M1 A/B (1 at bits 7, 10), N >> 3 at 17,
  // UE4M3 (bit 23 = 0), M >> 7 at 27.
  const uint32_t idesc = 1u << 7 | 1u << 10 | (kN >> 3) << 17 | 1u << 27;
  auto i64 = [](uint64_t v) { return std::to_string(static_cast<int64_t>(v)); };
  auto desc = [&](const std::string &name, const std::string &memref,
                  uint64_t high) {
    return "      %" + name + "_p = memref.extract_aligned_pointer_as_index %" +
           memref + " : memref<" +
           (memref == "sa"   ? std::to_string(kABytes)
            : memref == "sb" ? std::to_string(kBBytes)
                             : std::to_string(kSfBytes)) +
           "xi8, 3> -> index\n      %" + name + "_i = arith.index_cast %" +
           name + "_p : index to i64\n      %" + name + "_e = arith.shrui %" +
           name + "_i, %c4_i64 : i64\n      %" + name + "_h = arith.constant " +
           i64(high) + " : i64\n      %" + name + " = arith.ori %" + name +
           "_e, %" + name + "_h : i64\n";
  };
  auto copy = [](const std::string &from, const std::string &to,
                 unsigned bytes) {
    return "      %n_" + to + " = arith.constant " + std::to_string(bytes) +
           " : index\n      scf.for %i = %t to %n_" + to +
           " step %c128 {\n        %x = memref.load %" + from +
           "[%i] : memref<" + std::to_string(bytes) +
           "xi8>\n        memref.store %x, %" + to + "[%i] : memref<" +
           std::to_string(bytes) + "xi8, 3>\n      }\n";
  };
  auto bulk = [](const std::string &from, const std::string &to,
                 unsigned bytes) {
    const std::string n = std::to_string(bytes);
    return "        %" + from +
           "_gp = memref.extract_aligned_pointer_as_index %" + from +
           " : memref<" + n + "xi8> -> index\n        %" + from +
           "_gi = arith.index_cast %" + from + "_gp : index to i64\n        %" +
           from + "_g = llvm.inttoptr %" + from +
           "_gi : i64 to !llvm.ptr<1>\n        %" + to +
           "_lp = memref.extract_aligned_pointer_as_index %" + to +
           " : memref<" + n + "xi8, 3> -> index\n        %" + to +
           "_li = arith.index_cast %" + to + "_lp : index to i64\n        %" +
           to + "_l = llvm.inttoptr %" + to +
           "_li : i64 to !llvm.ptr<3>\n        %" + to +
           "_n = arith.constant " + n +
           " : i32\n        nvvm.cp.async.bulk.shared.cluster.global %" + to +
           "_l, %" + from + "_g, %lbar_ptr, %" + to +
           "_n : !llvm.ptr<3>, !llvm.ptr<1>\n";
  };
  std::string loads;
  if (o.bulkLoads)
    loads =
        R"(      %lbar_p = memref.extract_aligned_pointer_as_index %lbar : memref<1xi64, 3> -> index
      %lbar_i = arith.index_cast %lbar_p : index to i64
      %lbar_ptr = llvm.inttoptr %lbar_i : i64 to !llvm.ptr<3>
      scf.if %first {
        nvvm.mbarrier.init %lbar_ptr, %c1_i32 : !llvm.ptr<3>, i32
      }
      gpu.barrier
      scf.if %first {
        %tx = arith.constant )" +
        std::to_string(o.expectBytes) + R"( : i32
        nvvm.mbarrier.arrive.expect_tx %lbar_ptr, %tx : !llvm.ptr<3>, i32
)" + bulk("a", "sa", kABytes) +
        bulk("b", "sb", kBBytes) + bulk("sfa", "ssfa", kSfBytes) +
        bulk("sfb", "ssfb", kSfBytes) +
        R"(      }
      nvvm.mbarrier.try_wait.parity %lbar_ptr, %c0_i32, %c0_i32 : !llvm.ptr<3>, i32, i32
)";
  else
    loads = copy("a", "sa", kABytes) + copy("b", "sb", kBBytes) +
            copy("sfa", "ssfa", kSfBytes) + copy("sfb", "ssfb", kSfBytes) +
            (o.proxyFence ? "      nvvm.fence.proxy {kind = "
                            "#nvvm.proxy_kind<async.shared>, space = "
                            "#nvvm.shared_space<cta>}\n"
                          : "");
  std::string alloc, cpA, cpB, mma, commit, ld, dealloc, relinquish;
  if (o.intrinsics) {
    alloc = "        llvm.call_intrinsic "
            "\"llvm.nvvm.tcgen05.alloc.shared.cg1\"(%slot_ptr, %c128_i32) : "
            "(!llvm.ptr<3>, i32) -> ()\n";
    cpA = "        llvm.call_intrinsic "
          "\"llvm.nvvm.tcgen05.cp.32x128b_warpx4.cg1\"(%sfa_t, %dsfa) : "
          "(!llvm.ptr<6>, i64) -> ()\n";
    cpB = "        llvm.call_intrinsic "
          "\"llvm.nvvm.tcgen05.cp.32x128b_warpx4.cg1\"(%sfb_t, %dsfb) : "
          "(!llvm.ptr<6>, i64) -> ()\n";
    mma = "        llvm.call_intrinsic "
          "\"llvm.nvvm.tcgen05.mma.shared.mxf4nvf4.block_scale.block16\"(%d_t, "
          "%da, %db, %idesc, %false, %sfa_t, %sfb_t, %c1_i32, %c0_i32) : "
          "(!llvm.ptr<6>, i64, i64, i32, i1, !llvm.ptr<6>, !llvm.ptr<6>, i32, "
          "i32) -> ()\n";
    commit = "        llvm.call_intrinsic "
             "\"llvm.nvvm.tcgen05.commit.shared.cg1\"(%bar_ptr) : "
             "(!llvm.ptr<3>) -> ()\n";
    ld = "      %v = llvm.call_intrinsic "
         "\"llvm.nvvm.tcgen05.ld.32x32b.x64\"(%w_t, %false) : (!llvm.ptr<6>, "
         "i1) -> vector<64xi32>\n";
    dealloc =
        "        llvm.call_intrinsic \"llvm.nvvm.tcgen05.dealloc.cg1\"(%d_t, "
        "%c128_i32) : (!llvm.ptr<6>, i32) -> ()\n";
    relinquish = "        llvm.call_intrinsic "
                 "\"llvm.nvvm.tcgen05.relinq.alloc.permit.cg1\"() : () -> ()\n";
  } else {
    alloc =
        "        nvvm.tcgen05.alloc %slot_ptr, %c128_i32 : !llvm.ptr<3>, i32\n";
    cpA = "        nvvm.tcgen05.cp %sfa_t, %dsfa {shape = "
          "#nvvm.tcgen05_cp_shape<shape_32x128b>, multicast = "
          "#nvvm.tcgen05_cp_multicast<warpx4>}\n";
    cpB = "        nvvm.tcgen05.cp %sfb_t, %dsfb {shape = "
          "#nvvm.tcgen05_cp_shape<shape_32x128b>, multicast = "
          "#nvvm.tcgen05_cp_multicast<warpx4>}\n";
    mma = "        nvvm.tcgen05.mma.block_scale %d_t, %da, %db, %idesc, "
          "%false, %sfa_t, %sfb_t {kind = #nvvm.block_scale_kind<mxf4nvf4>, "
          "ctaGroup = #nvvm.cta_group<cta_1>, blockScale = "
          "#nvvm.tcgen05_mma_block_scale<block16>} : (!llvm.ptr<6>, i64, i64, "
          "i32, i1, !llvm.ptr<6>, !llvm.ptr<6>)\n";
    commit = "        nvvm.tcgen05.commit %bar_ptr : !llvm.ptr<3>\n";
    ld = "      %v = nvvm.tcgen05.ld %w_t {shape = "
         "#nvvm.tcgen05_ldst_shape<shape_32x32b>} : vector<64xi32>\n";
    dealloc =
        "        nvvm.tcgen05.dealloc %d_t, %c128_i32 : !llvm.ptr<6>, i32\n";
    relinquish = "        nvvm.tcgen05.relinquish_alloc_permit\n";
  }
  std::string k =
      R"(
module attributes {gpu.container_module} {
  gpu.module @k {
    gpu.func @kernel(%a: memref<16384xi8>, %b: memref<2048xi8>,
                     %sfa: memref<512xi8>, %sfb: memref<512xi8>,
                     %out: memref<128x64xf32>)
        workgroup(%sa: memref<16384xi8, 3>, %sb: memref<2048xi8, 3>,
                  %ssfa: memref<512xi8, 3>, %ssfb: memref<512xi8, 3>,
                  %slot: memref<1xi32, 3>, %bar: memref<1xi64, 3>,
                  %lbar: memref<1xi64, 3>) kernel {
      %t = gpu.thread_id x
      %w = gpu.subgroup_id : index
      %c0 = arith.constant 0 : index
      %c128 = arith.constant 128 : index
      %c0_i32 = arith.constant 0 : i32
      %c1_i32 = arith.constant 1 : i32
      %c128_i32 = arith.constant 128 : i32
      %c4_i64 = arith.constant 4 : i64
      %false = arith.constant false
      %idesc = arith.constant )" +
      std::to_string(static_cast<int32_t>(idesc)) +
      R"( : i32
      %first = arith.cmpi eq, %t, %c0 : index
      %warp0 = arith.cmpi eq, %w, %c0 : index
)" + loads +
      R"(
      %slot_p = memref.extract_aligned_pointer_as_index %slot : memref<1xi32, 3> -> index
      %slot_i = arith.index_cast %slot_p : index to i64
      %slot_ptr = llvm.inttoptr %slot_i : i64 to !llvm.ptr<3>
      %bar_p = memref.extract_aligned_pointer_as_index %bar : memref<1xi64, 3> -> index
      %bar_i = arith.index_cast %bar_p : index to i64
      %bar_ptr = llvm.inttoptr %bar_i : i64 to !llvm.ptr<3>
      scf.if %warp0 {
)" + alloc +
      R"(      }
      scf.if %first {
        nvvm.mbarrier.init %bar_ptr, %c1_i32 : !llvm.ptr<3>, i32
      }
      gpu.barrier
      %base = llvm.load %slot_ptr : !llvm.ptr<3> -> i32
      %c64_i32 = arith.constant 64 : i32
      %c68_i32 = arith.constant 68 : i32
      %sfa_a = arith.addi %base, %c64_i32 : i32
      %sfb_a = arith.addi %base, %c68_i32 : i32
      %d_t = llvm.inttoptr %base : i32 to !llvm.ptr<6>
      %sfa_t = llvm.inttoptr %sfa_a : i32 to !llvm.ptr<6>
      %sfb_t = llvm.inttoptr %sfb_a : i32 to !llvm.ptr<6>
)" + (o.descOp ? "" : desc("da", "sa", highA)) +
      (o.descOp
           ? R"(      %da_p = memref.extract_aligned_pointer_as_index %sa : memref<16384xi8, 3> -> index
      %da_i = arith.index_cast %da_p : index to i32
      %c4_i32 = arith.constant 4 : i32
      %da_s = arith.shrui %da_i, %c4_i32 : i32
      %lbo_e = arith.constant 1 : i32
      %sbo_e = arith.constant 64 : i32
      %base_off = arith.constant 0 : i8
      %abs = arith.constant false
      %swz = arith.constant )" +
                 std::to_string(o.swizzleA) + R"( : i8
      %da = nvvm.tcgen05.mma_smem_desc (%da_s, %lbo_e, %sbo_e, %base_off, %abs, %swz) : (i32, i32, i32, i8, i1, i8) -> i64
)"
           : "") +
      desc("db", "sb", highB) + desc("dsfa", "ssfa", highSf) +
      desc("dsfb", "ssfb", highSf) + R"(
      scf.if %first {
)" + cpA +
      cpB + mma + (o.commit ? commit : "") +
      R"(      }
)" +
      (o.wait ? "      nvvm.mbarrier.try_wait.parity %bar_ptr, %c0_i32, "
                "%c0_i32 : !llvm.ptr<3>, i32, i32\n"
              : "") +
      R"(      %wi = arith.index_cast %w : index to i32
      %c21 = arith.constant 21 : i32
      %lane_off = arith.shli %wi, %c21 : i32
      %w_a = arith.addi %base, %lane_off : i32
      %w_t = llvm.inttoptr %w_a : i32 to !llvm.ptr<6>
)" + ld +
      R"(      %f = llvm.bitcast %v : vector<64xi32> to vector<64xf32>
      vector.store %f, %out[%t, %c0] : memref<128x64xf32>, vector<64xf32>
      gpu.barrier
      scf.if %warp0 {
)" + (o.dealloc ? dealloc : "") +
      relinquish + R"(      }
      gpu.return
    }
  }
  func.func @main(%a: memref<16384xi8>, %b: memref<2048xi8>,
                  %sfa: memref<512xi8>, %sfb: memref<512xi8>,
                  %out: memref<128x64xf32>) -> memref<128x64xf32> {
    %c1 = arith.constant 1 : index
    %c128 = arith.constant 128 : index
    gpu.launch_func @k::@kernel blocks in (%c1, %c1, %c1)
        threads in (%c128, %c1, %c1)
        args(%a : memref<16384xi8>, %b : memref<2048xi8>,
             %sfa : memref<512xi8>, %sfb : memref<512xi8>,
             %out : memref<128x64xf32>)
    return %out : memref<128x64xf32>
  }
}
)";
  return k;
}

/// Random NVFP4 operands, their shared-memory images and the reference.
struct Problem : Nvfp4Operands {
  std::vector<uint8_t> imageA, imageB, imageSfa, imageSfb;

  Problem()
      : Nvfp4Operands(kM, kN, kK, 2026), imageA(kABytes), imageB(kBBytes),
        imageSfa(kSfBytes), imageSfb(kSfBytes) {
    swizzled(a, 0, kM, imageA.data());
    // B, interleaved: row n at (n / 8) * 128 + (n % 8) * 16, K chunk 1 at
    // +1024.
    for (unsigned n = 0; n < kN; ++n)
      for (unsigned byte = 0; byte < kK / 2; ++byte)
        imageB[(n / 8) * 128 + (n % 8) * 16 + (byte / 16) * 1024 + byte % 16] =
            b[n * kK + 2 * byte] | b[n * kK + 2 * byte + 1] << 4;
    scaleAtom(sa, 0, kM, imageSfa.data());
    scaleAtom(sb, 0, kN, imageSfb.data());
  }
};

class Tcgen05KernelTest : public ::testing::Test {
protected:
  Tcgen05KernelTest() : context(makeRegistry()) {
    context.loadAllAvailableDialects();
  }
  static DialectRegistry makeRegistry() {
    DialectRegistry registry;
    registerAllDialects(registry);
    return registry;
  }

  /// Runs the kernel; returns the error, or "" and D in `d`.
  std::string run(const KernelOptions &options, const char *chip,
                  std::vector<float> *d) {
    OwningOpRef<ModuleOp> module =
        parseSourceString<ModuleOp>(makeKernel(options), &context);
    if (!module)
      return "parse error";
    using emulation::EmulatorArgument;
    auto results = emulation::emulate(
        *module, "main",
        {EmulatorArgument::buffer(problem.imageA),
         EmulatorArgument::buffer(problem.imageB),
         EmulatorArgument::buffer(problem.imageSfa),
         EmulatorArgument::buffer(problem.imageSfb),
         EmulatorArgument::buffer(std::vector<uint8_t>(kM * kN * 4))},
        chip, &stats);
    if (!results)
      return llvm::toString(results.takeError());
    d->resize(kM * kN);
    std::memcpy(d->data(), (*results)[0].data(), kM * kN * 4);
    return "";
  }

  /// Expects the kernel with `options` to run on `chip` and D to equal the
  /// scalar reference bit for bit, from one MMA.
  void expectReference(const KernelOptions &options, const char *chip) {
    std::vector<float> d;
    ASSERT_EQ(run(options, chip, &d), "");
    EXPECT_EQ(mismatches(d), 0u);
    EXPECT_EQ(stats.mfmas, 1u);
  }

  /// Expects the kernel with `options` to fail on `chip` with `message`.
  void expectError(const KernelOptions &options, const std::string &message,
                   const char *chip = "sm_100a") {
    std::vector<float> d;
    std::string error = run(options, chip, &d);
    EXPECT_NE(error.find(message), std::string::npos) << error;
  }

  unsigned mismatches(const std::vector<float> &d) const {
    unsigned count = 0;
    for (unsigned m = 0; m < kM; ++m)
      for (unsigned n = 0; n < kN; ++n) {
        const float expected = problem.reference(m, n);
        count += std::memcmp(&d[m * kN + n], &expected, 4) != 0;
      }
    return count;
  }

  MLIRContext context;
  Problem problem;
  emulation::EmulatorStats stats;
};

TEST_F(Tcgen05KernelTest, Nvfp4MmaThroughTensorMemoryMatchesTheReference) {
  expectReference({}, "sm_100a");
  EXPECT_EQ(stats.launches, 1u);
}

TEST_F(Tcgen05KernelTest, IntrinsicFormOnSm103a) {
  KernelOptions options;
  options.intrinsics = true;
  expectReference(options, "sm_103a");
}

TEST_F(Tcgen05KernelTest, DescriptorFromMmaSmemDescOp) {
  // A's descriptor from nvvm.tcgen05.mma_smem_desc with encoded fields
  // (start >> 4, LBO 16 >> 4, SBO 1024 >> 4, 128B swizzle).
  KernelOptions options;
  options.descOp = true;
  expectReference(options, "sm_100a");
}

TEST_F(Tcgen05KernelTest, BulkCopiesCompleteOnAnMbarrier) {
  // The operands arrive by cp.async.bulk (expect-tx of all their bytes, one
  // arrive); the MMA reads them after the barrier's phase 0 completes.
  KernelOptions options;
  options.bulkLoads = true;
  expectReference(options, "sm_100a");
}

TEST_F(Tcgen05KernelTest, MissingTransactionBytesDeadlock) {
  KernelOptions options;
  options.bulkLoads = true;
  options.expectBytes += 16; // one transfer more than the copies make
  expectError(options, "which is in phase 0 with 0 pending arrivals and "
                       "tx-count 16");
}

TEST_F(Tcgen05KernelTest, WrongSwizzleInTheDescriptorChangesD) {
  KernelOptions options;
  options.swizzleA = 0; // the 128B-swizzled A read as interleaved
  std::vector<float> d;
  ASSERT_EQ(run(options, "sm_100a", &d), "");
  EXPECT_GT(mismatches(d), 1000u);
  options.swizzleA = 4; // ... or as 64B-swizzled
  ASSERT_EQ(run(options, "sm_100a", &d), "");
  EXPECT_GT(mismatches(d), 1000u);
}

TEST_F(Tcgen05KernelTest, LoadWithoutCommitIsReported) {
  KernelOptions options;
  options.commit = false;
  options.wait = false;
  expectError(options, "which asynchronous tcgen05 operation #3 writes: no "
                       "completed tcgen05.commit");
}

TEST_F(Tcgen05KernelTest, CopiesWithoutProxyFenceAreReported) {
  // st.shared writes through the generic proxy; tcgen05.cp and tcgen05.mma
  // read through the asynchronous one: without fence.proxy.async between
  // them the reads may see stale bytes.
  KernelOptions options;
  options.proxyFence = false;
  expectError(options, "wrote through the generic proxy with no "
                       "fence.proxy.async after the write");
}

TEST_F(Tcgen05KernelTest, WaitWithoutCommitDeadlocks) {
  KernelOptions options;
  options.commit = false;
  expectError(options, "waits for phase parity 0 of the mbarrier at shared "
                       "address 21504, which is in phase 0 with 1 pending "
                       "arrivals");
}

TEST_F(Tcgen05KernelTest, MissingDeallocIsReported) {
  KernelOptions options;
  options.dealloc = false;
  expectError(options, "the kernel exits with 128 columns of tensor memory "
                       "still allocated");
}

TEST_F(Tcgen05KernelTest, Tcgen05IsNotAnSm120Instruction) {
  expectError({},
              "'nvvm.tcgen05.alloc': operation not supported by the "
              "sm_120a emulator",
              "sm_120a");
}

//===----------------------------------------------------------------------===//
// Small kernels: tcgen05.st / ld round trips and the warp rules
//===----------------------------------------------------------------------===//

/// One CTA of `threads` threads running `body` with %t (thread id), %w (warp
/// id), %out: memref<4096xi32> and the tensor memory of a 32-column alloc
/// by warp 0 in %tmem (i32 base address), deallocated at the end.
std::string smallKernel(const std::string &body, int threads = 64) {
  return R"(
module attributes {gpu.container_module} {
  gpu.module @k {
    gpu.func @kernel(%out: memref<4096xi32>)
        workgroup(%slot: memref<1xi32, 3>) kernel {
      %t = gpu.thread_id x
      %w = gpu.subgroup_id : index
      %c0 = arith.constant 0 : index
      %c32_i32 = arith.constant 32 : i32
      %warp0 = arith.cmpi eq, %w, %c0 : index
      %slot_p = memref.extract_aligned_pointer_as_index %slot : memref<1xi32, 3> -> index
      %slot_i = arith.index_cast %slot_p : index to i64
      %slot_ptr = llvm.inttoptr %slot_i : i64 to !llvm.ptr<3>
      scf.if %warp0 {
        nvvm.tcgen05.alloc %slot_ptr, %c32_i32 : !llvm.ptr<3>, i32
      }
      gpu.barrier
      %tmem = memref.load %slot[%c0] : memref<1xi32, 3>
)" + body +
         R"(
      gpu.barrier
      scf.if %warp0 {
        %t_p = llvm.inttoptr %tmem : i32 to !llvm.ptr<6>
        nvvm.tcgen05.dealloc %t_p, %c32_i32 : !llvm.ptr<6>, i32
      }
      gpu.return
    }
  }
  func.func @main(%out: memref<4096xi32>) -> memref<4096xi32> {
    %c1 = arith.constant 1 : index
    %n = arith.constant )" +
         std::to_string(threads) + R"( : index
    gpu.launch_func @k::@kernel blocks in (%c1, %c1, %c1)
        threads in (%n, %c1, %c1) args(%out : memref<4096xi32>)
    return %out : memref<4096xi32>
  }
}
)";
}

class Tcgen05SmallKernelTest : public Tcgen05KernelTest {
protected:
  std::string runSmall(const std::string &source, std::vector<int32_t> *out) {
    OwningOpRef<ModuleOp> module =
        parseSourceString<ModuleOp>(source, &context);
    if (!module)
      return "parse error";
    auto results = emulation::emulate(
        *module, "main",
        {emulation::EmulatorArgument::buffer(std::vector<uint8_t>(4096 * 4))},
        "sm_100a");
    if (!results)
      return llvm::toString(results.takeError());
    out->resize(4096);
    std::memcpy(out->data(), (*results)[0].data(), 4096 * 4);
    return "";
  }
};

TEST_F(Tcgen05SmallKernelTest, StoreAndLoad16x256bPerWarpQuarter) {
  // Each warp w zeroes lanes 32 w .. 32 w + 31, columns 0..15 (32x32b.x16),
  // stores 1000 w + 4 t + i from thread t, register i with 16x256b.x1 at
  // lane 32 w + 8, column 4, and loads the 16 columns back (32x32b.x16).
  // By the 16x256b mapping, lane 32 w + 8 + g (+ 8) column 4 + 2q + {0, 1}
  // holds registers {0, 1} ({2, 3}) of thread 4g + q.
  const std::string body = R"(
      %wi = arith.index_cast %w : index to i32
      %ti = arith.index_cast %t : index to i32
      %c31 = arith.constant 31 : i32
      %lane = arith.andi %ti, %c31 : i32
      %c1000 = arith.constant 1000 : i32
      %c4 = arith.constant 4 : i32
      %wk = arith.muli %wi, %c1000 : i32
      %t4 = arith.muli %lane, %c4 : i32
      %v0 = arith.addi %wk, %t4 : i32
      %c1 = arith.constant 1 : i32
      %c2 = arith.constant 2 : i32
      %c3 = arith.constant 3 : i32
      %v1 = arith.addi %v0, %c1 : i32
      %v2 = arith.addi %v0, %c2 : i32
      %v3 = arith.addi %v0, %c3 : i32
      %v = vector.from_elements %v0, %v1, %v2, %v3 : vector<4xi32>
      %c21 = arith.constant 21 : i32
      %wl = arith.shli %wi, %c21 : i32
      %base = arith.addi %tmem, %wl : i32
      %lane8col4 = arith.constant 524292 : i32
      %st = arith.addi %base, %lane8col4 : i32
      %base_p = llvm.inttoptr %base : i32 to !llvm.ptr<6>
      %st_p = llvm.inttoptr %st : i32 to !llvm.ptr<6>
      %zeros = arith.constant dense<0> : vector<16xi32>
      nvvm.tcgen05.st %base_p, %zeros {shape = #nvvm.tcgen05_ldst_shape<shape_32x32b>} : vector<16xi32>
      nvvm.tcgen05.st %st_p, %v {shape = #nvvm.tcgen05_ldst_shape<shape_16x256b>} : vector<4xi32>
      %r = nvvm.tcgen05.ld %base_p {shape = #nvvm.tcgen05_ldst_shape<shape_32x32b>} : vector<16xi32>
      %c16 = arith.constant 16 : index
      %at = arith.muli %t, %c16 : index
      vector.store %r, %out[%at] : memref<4096xi32>, vector<16xi32>
)";
  std::vector<int32_t> out;
  ASSERT_EQ(runSmall(smallKernel(body), &out), "");
  for (unsigned w = 0; w < 2; ++w)
    for (unsigned row = 0; row < 32; ++row)
      for (unsigned c = 0; c < 16; ++c) {
        int32_t expected = 0;
        if (row >= 8 && row < 24 && c >= 4 && c < 12) {
          const unsigned g = (row - 8) % 8, half = (row - 8) / 8;
          const unsigned q = (c - 4) / 2, reg = 2 * half + (c - 4) % 2;
          expected = 1000 * w + 4 * (4 * g + q) + reg;
        }
        EXPECT_EQ(out[(32 * w + row) * 16 + c], expected)
            << "warp " << w << " lane " << row << " column " << c;
      }
}

TEST_F(Tcgen05SmallKernelTest, WarpOutsideItsLaneQuarterIsAnError) {
  // Warp 1 loads lanes 0-31 (the address's lane field 0).
  std::vector<int32_t> out;
  const std::string body = R"(
      %p = llvm.inttoptr %tmem : i32 to !llvm.ptr<6>
      %c1 = arith.constant 1 : index
      %warp1 = arith.cmpi eq, %w, %c1 : index
      scf.if %warp1 {
        %r = nvvm.tcgen05.ld %p {shape = #nvvm.tcgen05_ldst_shape<shape_32x32b>} : i32
      }
)";
  std::string error = runSmall(smallKernel(body), &out);
  EXPECT_NE(error.find("tcgen05.ld: warp 1 of the warpgroup accesses tensor "
                       "memory lanes 32-63 only, not lanes 0-31"),
            std::string::npos)
      << error;
}

TEST_F(Tcgen05SmallKernelTest, AllocByPartOfAWarpIsAnError) {
  std::vector<int32_t> out;
  std::string source = smallKernel("");
  const std::string all = "      scf.if %warp0 {\n        nvvm.tcgen05.alloc";
  source.replace(source.find(all), all.size(),
                 "      %c16 = arith.constant 16 : index\n"
                 "      %some = arith.cmpi ult, %t, %c16 : index\n"
                 "      scf.if %some {\n        nvvm.tcgen05.alloc");
  std::string error = runSmall(source, &out);
  EXPECT_NE(error.find("warp 0 executes the tcgen05.alloc with 16 of 32 lanes "
                       "active"),
            std::string::npos)
      << error;
}

TEST_F(Tcgen05SmallKernelTest, LoadOfUnwrittenTensorMemoryIsAnError) {
  std::vector<int32_t> out;
  const std::string body = R"(
      %p = llvm.inttoptr %tmem : i32 to !llvm.ptr<6>
      scf.if %warp0 {
        %r = nvvm.tcgen05.ld %p {shape = #nvvm.tcgen05_ldst_shape<shape_32x32b>} : vector<2xi32>
      }
)";
  std::string error = runSmall(smallKernel(body), &out);
  EXPECT_NE(error.find("tcgen05.ld reads tensor memory lane 0, column 0, "
                       "which nothing has written"),
            std::string::npos)
      << error;
}

} // namespace
