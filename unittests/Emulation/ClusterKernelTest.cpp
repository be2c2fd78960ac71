//===- ClusterKernelTest.cpp - Clusters and CTA pairs on sm_100a ----------===//
//
// Hand-written kernels for the emulator's clusters (ExecutionContext's
// cluster functions, lib/Emulation/PTX/ClusterOps.cpp):
//  - the special registers, mapa, a remote mbarrier arrive and the cluster
//    barrier in a grid of two clusters of two CTAs: each thread arrives on
//    its peer's mbarrier and waits on its own, which only the peer can
//    complete (the CTAs of a cluster run concurrently);
//  - a CTA pair's block-scaled MMA (tcgen05.mma.cta_group::2, M = 256,
//    N = 128, NVFP4): each CTA stages its 128 rows of A, its 64 rows of B,
//    the scale factors of its A rows and of all of B; both allocate tensor
//    memory together, the even CTA copies the scales (tcgen05.cp
//    .cta_group::2) and issues the MMA, whose commit is multicast to both
//    CTAs' mbarriers; each CTA loads its 128 rows of D. D is compared with
//    a scalar reference computed here;
//  - what the model reports: a wait at the cluster barrier without an
//    arrive, a try_wait on the peer's mbarrier, an arrive on a CTA that has
//    returned, a commit that only reaches the even CTA (the odd CTA never
//    gets past its wait), operands the odd CTA did not stage, mixed
//    .cta_group, a pair without a peer, clusters that do not divide the
//    grid.
//
//===----------------------------------------------------------------------===//

#include "Nvfp4Operands.h"

#include "fp4train/Emulation/GPUEmulator.h"
#include "fp4train/InitFP4Train.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <utility>
#include <vector>

using namespace mlir;
using namespace mlir::fp4train;
using namespace ::fp4train::emulation_test;

namespace {

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

class ClusterKernelTest : public ::testing::Test {
protected:
  ClusterKernelTest() : context(makeRegistry()) {
    context.loadAllAvailableDialects();
  }
  static DialectRegistry makeRegistry() {
    DialectRegistry registry;
    registerAllDialects(registry);
    return registry;
  }

  /// Emulates @main of `text` with `arguments`; returns the error, or "" and
  /// the first result in `out`.
  std::string run(const std::string &text,
                  std::vector<emulation::EmulatorArgument> arguments,
                  std::vector<uint8_t> *out) {
    OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(text, &context);
    if (!module)
      return "parse error";
    auto results =
        emulation::emulate(*module, "main", arguments, "sm_100a", &stats);
    if (!results)
      return llvm::toString(results.takeError());
    *out = (*results)[0];
    return "";
  }

  MLIRContext context;
  emulation::EmulatorStats stats;
};

//===----------------------------------------------------------------------===//
// Registers, mapa, remote arrives, the cluster barrier
//===----------------------------------------------------------------------===//

struct BarrierOptions {
  std::string cluster = "%c2, %c1, %c1";
  /// Every thread arrives on its peer's mbarrier (mapa), else on its own.
  bool remoteArrive = true;
  /// The cluster barrier between the mbarrier inits and the arrives.
  bool arriveBeforeInitWait = true;
  /// Thread 0 of CTA 1 waits on CTA 0's mbarrier (a .shared::cluster
  /// address) instead of its own.
  bool remoteWait = false;
  /// CTA 1 returns at once (before CTA 0's threads arrive on its mbarrier).
  bool oddReturnsEarly = false;
};

/// Grid 4 x 64 threads in clusters of two; out[cta][4] = %cluster_ctarank,
/// %cluster_nctarank, %clusterid.x, %cluster_ctaid.x.
std::string barrierKernel(const BarrierOptions &o) {
  const std::string text = R"(
module attributes {gpu.container_module} {
  gpu.module @k {
    gpu.func @kernel(%out: memref<4x4xi32>)
        workgroup(%bar : memref<1xi64, 3>) kernel {
      %t = gpu.thread_id x
      %cta = gpu.block_id x
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c2 = arith.constant 2 : index
      %c3 = arith.constant 3 : index
      %c0_i32 = arith.constant 0 : i32
      %c1_i32 = arith.constant 1 : i32
      %c64_i32 = arith.constant 64 : i32
      %first = arith.cmpi eq, %t, %c0 : index
      %rank = nvvm.read.ptx.sreg.cluster.ctarank : i32
      %n = nvvm.read.ptx.sreg.cluster.nctarank : i32
      %cid = nvvm.read.ptx.sreg.clusterid.x : i32
      %cx = nvvm.read.ptx.sreg.cluster.ctaid.x : i32
      %odd = arith.cmpi eq, %rank, %c1_i32 : i32
$EARLY      %bar_p = memref.extract_aligned_pointer_as_index %bar : memref<1xi64, 3> -> index
      %bar_i = arith.index_cast %bar_p : index to i64
      %bar_ptr = llvm.inttoptr %bar_i : i64 to !llvm.ptr<3>
      scf.if %first {
        nvvm.mbarrier.init %bar_ptr, %c64_i32 : !llvm.ptr<3>, i32
      }
$INITBARRIER      %peer = arith.xori %rank, %c1_i32 : i32
      %target = arith.select %remote, %peer, %rank : i32
      %remote_bar = nvvm.mapa %bar_ptr, %target : !llvm.ptr<3> -> !llvm.ptr<7>
      nvvm.mbarrier.arrive %remote_bar {scope = #nvvm.mem_scope<cluster>} : !llvm.ptr<7>
$WAIT      scf.if %first {
        memref.store %rank, %out[%cta, %c0] : memref<4x4xi32>
        memref.store %n, %out[%cta, %c1] : memref<4x4xi32>
        memref.store %cid, %out[%cta, %c2] : memref<4x4xi32>
        memref.store %cx, %out[%cta, %c3] : memref<4x4xi32>
      }
      nvvm.cluster.arrive {aligned}
      nvvm.cluster.wait {aligned}
$EARLYEND      gpu.return
    }
  }
  func.func @main(%out: memref<4x4xi32>) -> memref<4x4xi32> {
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c4 = arith.constant 4 : index
    %c64 = arith.constant 64 : index
    gpu.launch_func @k::@kernel clusters in ($CLUSTER)
        blocks in (%c4, %c1, %c1) threads in (%c64, %c1, %c1)
        args(%out : memref<4x4xi32>)
    return %out : memref<4x4xi32>
  }
}
)";
  const std::string ownWait =
      "      nvvm.mbarrier.try_wait.parity %bar_ptr, %c0_i32, %c0_i32 : "
      "!llvm.ptr<3>, i32, i32\n";
  // CTA 1's thread 0 waits on CTA 0's mbarrier (its address from mapa,
  // cast to a shared::cta pointer).
  const std::string remoteWait =
      R"(      %zero_bar = nvvm.mapa %bar_ptr, %c0_i32 : !llvm.ptr<3> -> !llvm.ptr<7>
      %zero_i = llvm.ptrtoint %zero_bar : !llvm.ptr<7> to i64
      %zero_ptr = llvm.inttoptr %zero_i : i64 to !llvm.ptr<3>
      %odd_first = arith.andi %odd, %first : i1
      %wait_ptr = arith.select %odd_first, %zero_ptr, %bar_ptr : !llvm.ptr<3>
      nvvm.mbarrier.try_wait.parity %wait_ptr, %c0_i32, %c0_i32 : !llvm.ptr<3>, i32, i32
)";
  return substitute(
      text,
      {{"$CLUSTER", o.cluster},
       {"$EARLYEND", o.oddReturnsEarly ? "      }\n" : ""},
       {"$EARLY", o.oddReturnsEarly ? "      %yes = arith.constant true\n"
                                      "      %live = arith.xori %odd, %yes "
                                      ": i1\n      scf.if %live {\n"
                                    : ""},
       {"$INITBARRIER",
        std::string(o.arriveBeforeInitWait ? "      nvvm.cluster.arrive\n"
                                           : "") +
            "      nvvm.cluster.wait\n      %remote = arith.constant " +
            (o.remoteArrive ? "true" : "false") + "\n"},
       {"$WAIT", o.remoteWait ? remoteWait : ownWait}});
}

TEST_F(ClusterKernelTest, RegistersMapaRemoteArrivesAndTheClusterBarrier) {
  std::vector<uint8_t> out;
  ASSERT_EQ(run(barrierKernel({}),
                {emulation::EmulatorArgument::buffer(
                    std::vector<uint8_t>(4 * 4 * 4))},
                &out),
            "");
  std::vector<int32_t> values(16);
  std::memcpy(values.data(), out.data(), 64);
  for (int cta = 0; cta < 4; ++cta) {
    EXPECT_EQ(values[4 * cta + 0], cta % 2) << "rank of CTA " << cta;
    EXPECT_EQ(values[4 * cta + 1], 2) << "cluster size";
    EXPECT_EQ(values[4 * cta + 2], cta / 2) << "cluster id of CTA " << cta;
    EXPECT_EQ(values[4 * cta + 3], cta % 2) << "cluster ctaid of CTA " << cta;
  }
  EXPECT_EQ(stats.workgroups, 4u);
}

TEST_F(ClusterKernelTest, OwnArrivesWorkToo) {
  BarrierOptions o;
  o.remoteArrive = false;
  std::vector<uint8_t> out;
  EXPECT_EQ(run(barrierKernel(o),
                {emulation::EmulatorArgument::buffer(
                    std::vector<uint8_t>(4 * 4 * 4))},
                &out),
            "");
}

TEST_F(ClusterKernelTest, WaitWithoutArriveIsReported) {
  BarrierOptions o;
  o.arriveBeforeInitWait = false;
  std::vector<uint8_t> out;
  const std::string error = run(
      barrierKernel(o),
      {emulation::EmulatorArgument::buffer(std::vector<uint8_t>(64))}, &out);
  EXPECT_NE(error.find("waits at the cluster barrier without arriving first"),
            std::string::npos)
      << error;
}

TEST_F(ClusterKernelTest, WaitOnThePeersMbarrierIsReported) {
  BarrierOptions o;
  o.remoteWait = true;
  std::vector<uint8_t> out;
  const std::string error = run(
      barrierKernel(o),
      {emulation::EmulatorArgument::buffer(std::vector<uint8_t>(64))}, &out);
  EXPECT_NE(error.find("mbarrier.try_wait on an mbarrier of CTA 0 of the "
                       "cluster"),
            std::string::npos)
      << error;
}

TEST_F(ClusterKernelTest, ArriveOnAReturnedCtaIsReported) {
  BarrierOptions o;
  o.oddReturnsEarly = true;
  std::vector<uint8_t> out;
  const std::string error = run(
      barrierKernel(o),
      {emulation::EmulatorArgument::buffer(std::vector<uint8_t>(64))}, &out);
  EXPECT_NE(error.find("reaches workgroup 1 of the cluster, which has "
                       "returned"),
            std::string::npos)
      << error;
}

TEST_F(ClusterKernelTest, ClustersMustDivideTheGrid) {
  BarrierOptions o;
  o.cluster = "%c1, %c1, %c2";
  std::vector<uint8_t> out;
  const std::string error = run(
      barrierKernel(o),
      {emulation::EmulatorArgument::buffer(std::vector<uint8_t>(64))}, &out);
  EXPECT_NE(error.find("cluster size 2 in dimension 2 does not divide the "
                       "grid's 1"),
            std::string::npos)
      << error;
}

//===----------------------------------------------------------------------===//
// A CTA pair's block-scaled MMA
//===----------------------------------------------------------------------===//

constexpr unsigned kM = 256, kN = 128, kK = 64;
// Per CTA: A 128 rows and B 64 rows of 32 bytes in the 128-byte swizzle
// (row r at (r / 8) 1024 + (r % 8) 128, 16-byte chunk c at c ^ (r % 8)),
// the scale factors as 32 rows of 16 bytes (row r: rows r, r + 32, r + 64,
// r + 96 with their four K-block scales each): SFA of the CTA's rows, SFB of
// all 128 columns.
constexpr unsigned kABytes = 16384, kBBytes = 8192, kSfBytes = 512;

struct PairOptions {
  /// tcgen05.commit multicast to both CTAs (mask 3), else only to the
  /// even CTA's mbarrier.
  bool multicastCommit = true;
  /// The odd CTA does not stage its half of B.
  bool oddSkipsB = false;
  /// The odd CTA stages the even CTA's half of B.
  bool wrongHalfOfB = false;
  /// The allocation with .cta_group::1 (the rest stays ::2).
  bool allocGroup1 = false;
  std::string cluster = "%c2, %c1, %c1";
};

std::string pairKernel(const PairOptions &o) {
  const std::string text = R"(
module attributes {gpu.container_module} {
  gpu.module @k {
    gpu.func @kernel(%a: memref<2x16384xi8>, %b: memref<2x8192xi8>,
                     %sfa: memref<2x512xi8>, %sfb: memref<512xi8>,
                     %out: memref<256x128xf32>)
        workgroup(%sa: memref<16384xi8, 3>, %sb: memref<8192xi8, 3>,
                  %ssfa: memref<512xi8, 3>, %ssfb: memref<512xi8, 3>,
                  %slot: memref<1xi32, 3>, %bar: memref<1xi64, 3>) kernel {
      %t = gpu.thread_id x
      %w = gpu.subgroup_id : index
      %c0 = arith.constant 0 : index
      %c128 = arith.constant 128 : index
      %c0_i32 = arith.constant 0 : i32
      %c1_i32 = arith.constant 1 : i32
      %c256_i32 = arith.constant 256 : i32
      %c4_i64 = arith.constant 4 : i64
      %false = arith.constant false
      %first = arith.cmpi eq, %t, %c0 : index
      %warp0 = arith.cmpi eq, %w, %c0 : index
      %rank = nvvm.read.ptx.sreg.cluster.ctarank : i32
      %rank_x = arith.index_cast %rank : i32 to index
      %even = arith.cmpi eq, %rank, %c0_i32 : i32
      %half_b = $HALFB
      %c8192 = arith.constant 8192 : index
      %b_odd = arith.select %even, %c8192, %c0 : index
      %n_a = arith.constant 16384 : index
      scf.for %i = %t to %n_a step %c128 {
        %x = memref.load %a[%rank_x, %i] : memref<2x16384xi8>
        memref.store %x, %sa[%i] : memref<16384xi8, 3>
      }
      scf.for %i = %t to $NB step %c128 {
        %x = memref.load %b[%half_b, %i] : memref<2x8192xi8>
        memref.store %x, %sb[%i] : memref<8192xi8, 3>
      }
      %n_s = arith.constant 512 : index
      scf.for %i = %t to %n_s step %c128 {
        %x = memref.load %sfa[%rank_x, %i] : memref<2x512xi8>
        memref.store %x, %ssfa[%i] : memref<512xi8, 3>
        %y = memref.load %sfb[%i] : memref<512xi8>
        memref.store %y, %ssfb[%i] : memref<512xi8, 3>
      }
      nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
      %slot_p = memref.extract_aligned_pointer_as_index %slot : memref<1xi32, 3> -> index
      %slot_i = arith.index_cast %slot_p : index to i64
      %slot_ptr = llvm.inttoptr %slot_i : i64 to !llvm.ptr<3>
      %bar_p = memref.extract_aligned_pointer_as_index %bar : memref<1xi64, 3> -> index
      %bar_i = arith.index_cast %bar_p : index to i64
      %bar_ptr = llvm.inttoptr %bar_i : i64 to !llvm.ptr<3>
      scf.if %warp0 {
        nvvm.tcgen05.alloc %slot_ptr, %c256_i32 {group = #nvvm.cta_group<$ALLOCGROUP>} : !llvm.ptr<3>, i32
      }
      scf.if %first {
        nvvm.mbarrier.init %bar_ptr, %c1_i32 : !llvm.ptr<3>, i32
      }
      nvvm.cluster.arrive {aligned}
      nvvm.cluster.wait {aligned}
      %base = llvm.load %slot_ptr : !llvm.ptr<3> -> i32
      %c128_col = arith.constant 128 : i32
      %c132_col = arith.constant 132 : i32
      %sfa_a = arith.addi %base, %c128_col : i32
      %sfb_a = arith.addi %base, %c132_col : i32
      %d_t = llvm.inttoptr %base : i32 to !llvm.ptr<6>
      %sfa_t = llvm.inttoptr %sfa_a : i32 to !llvm.ptr<6>
      %sfb_t = llvm.inttoptr %sfb_a : i32 to !llvm.ptr<6>
$DESCS      %idesc = arith.constant $IDESC : i32
      %leader = arith.andi %even, %first : i1
      scf.if %leader {
        nvvm.tcgen05.cp %sfa_t, %dsfa {shape = #nvvm.tcgen05_cp_shape<shape_32x128b>, group = #nvvm.cta_group<cta_2>, multicast = #nvvm.tcgen05_cp_multicast<warpx4>}
        nvvm.tcgen05.cp %sfb_t, %dsfb {shape = #nvvm.tcgen05_cp_shape<shape_32x128b>, group = #nvvm.cta_group<cta_2>, multicast = #nvvm.tcgen05_cp_multicast<warpx4>}
        nvvm.tcgen05.mma.block_scale %d_t, %da, %db, %idesc, %false, %sfa_t, %sfb_t {kind = #nvvm.block_scale_kind<mxf4nvf4>, ctaGroup = #nvvm.cta_group<cta_2>, blockScale = #nvvm.tcgen05_mma_block_scale<block16>} : (!llvm.ptr<6>, i64, i64, i32, i1, !llvm.ptr<6>, !llvm.ptr<6>)
$COMMIT      }
      nvvm.mbarrier.try_wait.parity %bar_ptr, %c0_i32, %c0_i32 : !llvm.ptr<3>, i32, i32
      %wi = arith.index_cast %w : index to i32
      %c21 = arith.constant 21 : i32
      %lane_off = arith.shli %wi, %c21 : i32
      %w_a = arith.addi %base, %lane_off : i32
      %w_t = llvm.inttoptr %w_a : i32 to !llvm.ptr<6>
      %v = nvvm.tcgen05.ld %w_t {shape = #nvvm.tcgen05_ldst_shape<shape_32x32b>} : vector<128xi32>
      %f = llvm.bitcast %v : vector<128xi32> to vector<128xf32>
      %row0 = arith.muli %rank_x, %c128 : index
      %row = arith.addi %row0, %t : index
      vector.store %f, %out[%row, %c0] : memref<256x128xf32>, vector<128xf32>
      nvvm.cluster.arrive {aligned}
      nvvm.cluster.wait {aligned}
      scf.if %warp0 {
        nvvm.tcgen05.dealloc %d_t, %c256_i32 {group = #nvvm.cta_group<cta_2>} : !llvm.ptr<6>, i32
        nvvm.tcgen05.relinquish_alloc_permit {group = #nvvm.cta_group<cta_2>}
      }
      gpu.return
    }
  }
  func.func @main(%a: memref<2x16384xi8>, %b: memref<2x8192xi8>,
                  %sfa: memref<2x512xi8>, %sfb: memref<512xi8>,
                  %out: memref<256x128xf32>) -> memref<256x128xf32> {
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c128 = arith.constant 128 : index
    gpu.launch_func @k::@kernel clusters in ($CLUSTER)
        blocks in (%c2, %c1, %c1) threads in (%c128, %c1, %c1)
        args(%a : memref<2x16384xi8>, %b : memref<2x8192xi8>,
             %sfa : memref<2x512xi8>, %sfb : memref<512xi8>,
             %out : memref<256x128xf32>)
    return %out : memref<256x128xf32>
  }
}
)";
  // K-major descriptors: 128-byte swizzle, SBO 1024 (8-row groups) for the
  // operands; no swizzle, SBO 128 for the scale atoms.
  auto high = [](uint32_t lbo, uint32_t sbo, unsigned swizzle) {
    return uint64_t{lbo >> 4} << 16 | uint64_t{sbo >> 4} << 32 | 1ull << 46 |
           uint64_t{swizzle} << 61;
  };
  auto desc = [](const std::string &name, const std::string &memref,
                 unsigned bytes, uint64_t highBits) {
    const std::string type = "memref<" + std::to_string(bytes) + "xi8, 3>";
    return substitute(
        "      %N_p = memref.extract_aligned_pointer_as_index %M : T -> index\n"
        "      %N_i = arith.index_cast %N_p : index to i64\n"
        "      %N_e = arith.shrui %N_i, %c4_i64 : i64\n"
        "      %N_h = arith.constant H : i64\n"
        "      %N = arith.ori %N_e, %N_h : i64\n",
        {{"%N", "%" + name},
         {"%M", "%" + memref},
         {" T ", " " + type + " "},
         {" H ", " " + std::to_string(static_cast<int64_t>(highBits)) + " "}});
  };
  // NVFP4 idesc (Table 44): E2M1 A/B (1 at bits 7, 10), N >> 3 at 17, UE4M3
  // (bit 23 = 0), M >> 7 = 2 at 27.
  const uint32_t idesc = 1u << 7 | 1u << 10 | (kN >> 3) << 17 | 2u << 27;
  const std::string commit =
      o.multicastCommit
          ? "        %mask = arith.constant 3 : i16\n"
            "        nvvm.tcgen05.commit %bar_ptr, multicast_mask = %mask "
            "{group = #nvvm.cta_group<cta_2>} : !llvm.ptr<3>, i16\n"
          : "        nvvm.tcgen05.commit %bar_ptr {group = "
            "#nvvm.cta_group<cta_2>} : !llvm.ptr<3>\n";
  return substitute(
      text,
      {{"$HALFB", o.wrongHalfOfB ? "arith.constant 0 : index"
                                 : "arith.index_cast %rank : i32 to index"},
       {"$ALLOCGROUP", o.allocGroup1 ? "cta_1" : "cta_2"},
       {"$NB", o.oddSkipsB ? "%b_odd" : "%c8192"},
       {"$DESCS", desc("da", "sa", kABytes, high(16, 1024, 2)) +
                      desc("db", "sb", kBBytes, high(16, 1024, 2)) +
                      desc("dsfa", "ssfa", kSfBytes, high(0, 128, 0)) +
                      desc("dsfb", "ssfb", kSfBytes, high(0, 128, 0))},
       {"$IDESC", std::to_string(static_cast<int32_t>(idesc))},
       {"$COMMIT", commit},
       {"$CLUSTER", o.cluster}});
}

/// Random NVFP4 operands of the 256 x 128 x 64 MMA, the pair's shared-memory
/// images and the reference.
struct PairProblem : Nvfp4Operands {
  std::vector<uint8_t> imageA, imageB, imageSfa, imageSfb;

  PairProblem()
      : Nvfp4Operands(kM, kN, kK, 2027), imageA(2 * kABytes),
        imageB(2 * kBBytes), imageSfa(2 * kSfBytes), imageSfb(kSfBytes) {
    for (unsigned v = 0; v < 2; ++v) {
      swizzled(a, 128 * v, 128, imageA.data() + v * kABytes);
      swizzled(b, 64 * v, 64, imageB.data() + v * kBBytes);
      scaleAtom(sa, 128 * v, kM, imageSfa.data() + v * kSfBytes);
    }
    scaleAtom(sb, 0, kN, imageSfb.data());
  }
};

class CtaPairTest : public ClusterKernelTest {
protected:
  std::string runPair(const PairOptions &o, std::vector<float> *d) {
    using emulation::EmulatorArgument;
    std::vector<uint8_t> out;
    std::string error =
        run(pairKernel(o),
            {EmulatorArgument::buffer(problem.imageA),
             EmulatorArgument::buffer(problem.imageB),
             EmulatorArgument::buffer(problem.imageSfa),
             EmulatorArgument::buffer(problem.imageSfb),
             EmulatorArgument::buffer(std::vector<uint8_t>(kM * kN * 4))},
            &out);
    if (error.empty()) {
      d->resize(kM * kN);
      std::memcpy(d->data(), out.data(), kM * kN * 4);
    }
    return error;
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
  void expectError(const PairOptions &o, const std::string &message) {
    std::vector<float> d;
    const std::string error = runPair(o, &d);
    EXPECT_NE(error.find(message), std::string::npos) << error;
  }

  PairProblem problem;
};

TEST_F(CtaPairTest, PairMmaMatchesTheReference) {
  std::vector<float> d;
  ASSERT_EQ(runPair({}, &d), "");
  EXPECT_EQ(mismatches(d), 0u);
  EXPECT_EQ(stats.mfmas, 1u);
  EXPECT_EQ(stats.workgroups, 2u);
}

TEST_F(CtaPairTest, TheOddCtasHalfOfBIsRead) {
  // Staging the even CTA's half of B in the odd CTA changes columns 64..127
  // of every row, and only those.
  PairOptions o;
  o.wrongHalfOfB = true;
  std::vector<float> d;
  ASSERT_EQ(runPair(o, &d), "");
  unsigned wrongLeft = 0, wrongRight = 0;
  for (unsigned m = 0; m < kM; ++m)
    for (unsigned n = 0; n < kN; ++n) {
      const float expected = problem.reference(m, n);
      const bool wrong = std::memcmp(&d[m * kN + n], &expected, 4) != 0;
      (n < kN / 2 ? wrongLeft : wrongRight) += wrong;
    }
  EXPECT_EQ(wrongLeft, 0u);
  EXPECT_GT(wrongRight, kM * kN / 4);
}

TEST_F(CtaPairTest, CommitToTheEvenCtaOnlyLeavesTheOddWaiting) {
  PairOptions o;
  o.multicastCommit = false;
  expectError(o, "the cluster barrier never completes: thread 0 of CTA 1 "
                 "has not arrived");
}

TEST_F(CtaPairTest, UnstagedPeerOperandsAreReported) {
  // The MMA reads B's second half from the odd CTA's shared memory.
  PairOptions o;
  o.oddSkipsB = true;
  expectError(o, "reads shared memory byte 0, which no thread has written");
}

TEST_F(CtaPairTest, MixedCtaGroupsAreReported) {
  PairOptions o;
  o.allocGroup1 = true;
  expectError(o, "all of a kernel's must name the same group");
}

TEST_F(CtaPairTest, APairNeedsAPeer) {
  PairOptions o;
  o.cluster = "%c1, %c1, %c1";
  expectError(o, ".cta_group::2 needs the peer CTA (rank 1), but the cluster "
                 "has 1 CTA(s)");
}

} // namespace
