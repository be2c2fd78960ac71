//===- EmulatorChecksTest.cpp - What the gfx950 emulator reports ----------===//
//
// Lockstep execution would hide a missing barrier and a GPU would not report
// an out-of-bounds index; the emulator does both, and rejects what it cannot
// execute faithfully. Each check gets a small hand-written kernel that trips
// it, next to the corrected kernel that passes.
//
//===----------------------------------------------------------------------===//

#include "fp4train/Emulation/GPUEmulator.h"
#include "fp4train/InitFP4Train.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>

using namespace mlir;
using namespace mlir::fp4train;

namespace {

/// A 256-thread kernel that writes its thread id to LDS and reads back the
/// mirrored slot (255 - t): `beforeRead` goes between the write and the read,
/// `readIndex` computes the slot from %t.
std::string mirrorKernel(
    const std::string &beforeRead,
    const std::string &readIndex = "%r = arith.subi %c255, %t : index") {
  return R"(
module attributes {gpu.container_module} {
  gpu.module @k {
    gpu.func @mirror(%out: memref<256xi32>)
        workgroup(%lds: memref<256xi32, #gpu.address_space<workgroup>>)
        kernel {
      %c255 = arith.constant 255 : index
      %c64 = arith.constant 64 : index
      %t = gpu.thread_id x
      %v = arith.index_cast %t : index to i32
      memref.store %v, %lds[%t] : memref<256xi32, #gpu.address_space<workgroup>>
      )" +
         beforeRead + R"(
      )" +
         readIndex + R"(
      %x = memref.load %lds[%r] : memref<256xi32, #gpu.address_space<workgroup>>
      memref.store %x, %out[%t] : memref<256xi32>
      gpu.return
    }
  }
  func.func @main(%out: memref<256xi32>) -> memref<256xi32> {
    %c1 = arith.constant 1 : index
    %c256 = arith.constant 256 : index
    gpu.launch_func @k::@mirror blocks in (%c1, %c1, %c1)
        threads in (%c256, %c1, %c1) args(%out : memref<256xi32>)
    return %out : memref<256xi32>
  }
}
)";
}

class EmulatorChecksTest : public ::testing::Test {
protected:
  EmulatorChecksTest() : context(makeRegistry()) {
    context.loadAllAvailableDialects();
  }
  static DialectRegistry makeRegistry() {
    DialectRegistry registry;
    registerAllDialects(registry);
    return registry;
  }

  /// Emulates @main; returns the error message, or "" and the result.
  std::string run(const std::string &source,
                  std::vector<int32_t> *result = nullptr) {
    OwningOpRef<ModuleOp> module =
        parseSourceString<ModuleOp>(source, &context);
    if (!module)
      return "parse error";
    auto results = emulation::emulate(
        *module, "main",
        {emulation::EmulatorArgument::buffer(std::vector<uint8_t>(1024))});
    if (!results)
      return llvm::toString(results.takeError());
    if (result) {
      result->resize(256);
      std::memcpy(result->data(), (*results)[0].data(), 1024);
    }
    return "";
  }

  MLIRContext context;
};

TEST_F(EmulatorChecksTest, BarrierSeparatesWavesAndComputes) {
  std::vector<int32_t> out;
  ASSERT_EQ(run(mirrorKernel("gpu.barrier"), &out), "");
  for (int t = 0; t < 256; ++t)
    EXPECT_EQ(out[t], 255 - t);
}

TEST_F(EmulatorChecksTest, MissingBarrierIsARace) {
  std::string error = run(mirrorKernel(""));
  EXPECT_NE(error.find("LDS race: wave 0 reads byte"), std::string::npos)
      << error;
}

TEST_F(EmulatorChecksTest, SameWaveNeedsNoBarrier) {
  // Each lane reads its neighbour's slot, written by its own wave: no race
  // without a barrier.
  std::vector<int32_t> out;
  ASSERT_EQ(run(mirrorKernel("", "%c1 = arith.constant 1 : index\n"
                                 "      %r = arith.xori %t, %c1 : index"),
                &out),
            "");
  for (int t = 0; t < 256; ++t)
    EXPECT_EQ(out[t], t ^ 1);
}

TEST_F(EmulatorChecksTest, OutOfBoundsIndexIsReported) {
  std::string error =
      run(mirrorKernel("gpu.barrier", "%c1 = arith.constant 1 : index\n"
                                      "      %r = arith.addi %t, %c1 : index"));
  EXPECT_NE(error.find("lane 255: index 256 (+1) out of bounds of dimension 0 "
                       "(size 256)"),
            std::string::npos)
      << error;
}

TEST_F(EmulatorChecksTest, BarrierInDivergentCodeIsReported) {
  std::string error =
      run(mirrorKernel("%first = arith.cmpi ult, %t, %c64 : index\n"
                       "      scf.if %first {\n"
                       "        gpu.barrier\n"
                       "      }"));
  EXPECT_NE(error.find("wave 1 does not reach the barrier"), std::string::npos)
      << error;
}

TEST_F(EmulatorChecksTest, UnsupportedOpIsNamed) {
  std::string error = run(mirrorKernel("gpu.barrier\n"
                                       "      %f = arith.constant 2.0 : f32\n"
                                       "      %s = math.sqrt %f : f32"));
  EXPECT_NE(error.find("'math.sqrt': operation not supported by the gfx950 "
                       "emulator"),
            std::string::npos)
      << error;
}

TEST_F(EmulatorChecksTest, UninitializedLdsReadIsReported) {
  // Lanes write only the even slots; lane 0 reads slot 255 of wave 3.
  std::string source = mirrorKernel("gpu.barrier");
  const std::string store = "memref.store %v, %lds[%t] : memref<256xi32, "
                            "#gpu.address_space<workgroup>>";
  source.replace(source.find(store), store.size(),
                 "%c2 = arith.constant 2 : index\n"
                 "      %odd = arith.remui %t, %c2 : index\n"
                 "      %c0 = arith.constant 0 : index\n"
                 "      %even = arith.cmpi eq, %odd, %c0 : index\n"
                 "      scf.if %even {\n        " +
                     store + "\n      }");
  std::string error = run(source);
  EXPECT_NE(error.find("which no thread has written"), std::string::npos)
      << error;
}

} // namespace

TEST_F(EmulatorChecksTest, HostFillAndScalarResults) {
  // Host code as the NVFP4 amax reduction leaves it: a linalg.fill of a
  // buffer, and scalar results returned as their bytes.
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(R"(
func.func @main(%out: memref<4x4xi32>, %x: f32) -> (memref<4x4xi32>, f32, i16) {
  %c7 = arith.constant 7 : i32
  linalg.fill ins(%c7 : i32) outs(%out : memref<4x4xi32>)
  %y = arith.addf %x, %x : f32
  %h = arith.constant -2 : i16
  return %out, %y, %h : memref<4x4xi32>, f32, i16
}
)",
                                                             &context);
  ASSERT_TRUE(module);
  const float x = 1.5f;
  uint32_t bits;
  std::memcpy(&bits, &x, 4);
  auto results = emulation::emulate(
      *module, "main",
      {emulation::EmulatorArgument::buffer(std::vector<uint8_t>(64)),
       emulation::EmulatorArgument::bits(bits)});
  ASSERT_TRUE(static_cast<bool>(results))
      << llvm::toString(results.takeError());
  ASSERT_EQ(results->size(), 3u);
  std::vector<int32_t> out(16);
  std::memcpy(out.data(), (*results)[0].data(), 64);
  for (int i = 0; i < 16; ++i)
    EXPECT_EQ(out[i], 7) << "element " << i;
  ASSERT_EQ((*results)[1].size(), 4u);
  float y;
  std::memcpy(&y, (*results)[1].data(), 4);
  EXPECT_EQ(y, 3.0f);
  EXPECT_EQ((*results)[2], (std::vector<uint8_t>{0xFE, 0xFF}));
}

TEST_F(EmulatorChecksTest, HostNamedOpsCopiesAndMath) {
  // The host code a training step leaves between its kernels: a named
  // linalg op, a memref.copy and f32 math (tools/fp4-gpu-prepare runs whole
  // steps through the emulator).
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(R"(
func.func @main(%in: memref<2x3xf32>) -> memref<3x2xf32> {
  %t = memref.alloc() : memref<3x2xf32>
  linalg.transpose ins(%in : memref<2x3xf32>) outs(%t : memref<3x2xf32>)
      permutation = [1, 0]
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>],
                  iterator_types = ["parallel", "parallel"]}
      outs(%t : memref<3x2xf32>) {
  ^bb0(%x: f32):
    %e = math.exp %x : f32
    linalg.yield %e : f32
  }
  %out = memref.alloc() : memref<3x2xf32>
  memref.copy %t, %out : memref<3x2xf32> to memref<3x2xf32>
  return %out : memref<3x2xf32>
}
)",
                                                             &context);
  ASSERT_TRUE(module);
  const float in[6] = {0, 1, 2, 3, 4, 5};
  std::vector<uint8_t> bytes(sizeof(in));
  std::memcpy(bytes.data(), in, sizeof(in));
  auto results = emulation::emulate(
      *module, "main", {emulation::EmulatorArgument::buffer(bytes)});
  ASSERT_TRUE(static_cast<bool>(results))
      << llvm::toString(results.takeError());
  float out[6];
  std::memcpy(out, (*results)[0].data(), sizeof(out));
  const int source[6] = {0, 3, 1, 4, 2, 5}; // out[i][j] = exp(in[j][i])
  for (int i = 0; i < 6; ++i)
    EXPECT_EQ(out[i], std::exp(in[source[i]])) << "element " << i;
}

TEST_F(EmulatorChecksTest, HooksSeeEveryLaunchBeforeAndAfter) {
  OwningOpRef<ModuleOp> module =
      parseSourceString<ModuleOp>(mirrorKernel("gpu.barrier"), &context);
  ASSERT_TRUE(module);
  std::vector<std::vector<uint8_t>> seen;
  emulation::EmulatorHooks hooks;
  hooks.onLaunch = [&](const emulation::LaunchInfo &launch, bool after) {
    ASSERT_EQ(launch.operands.size(), 1u);
    const auto &memref = std::get<emulation::LaunchMemRef>(launch.operands[0]);
    EXPECT_EQ(launch.block[0], 256);
    EXPECT_EQ(memref.sizes, SmallVector<int64_t>{256});
    seen.push_back(*memref.memory);
    (void)after;
  };
  auto results = emulation::emulate(
      *module, "main",
      {emulation::EmulatorArgument::buffer(std::vector<uint8_t>(1024))},
      "gfx950", nullptr, &hooks);
  ASSERT_TRUE(static_cast<bool>(results))
      << llvm::toString(results.takeError());
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_EQ(seen[0], std::vector<uint8_t>(1024)); // before: as given
  EXPECT_EQ(seen[1], (*results)[0]);              // after: the result

  // With the kernels skipped the launch is still reported, its buffer
  // untouched.
  seen.clear();
  hooks.executeKernels = false;
  results = emulation::emulate(
      *module, "main",
      {emulation::EmulatorArgument::buffer(std::vector<uint8_t>(1024))},
      "gfx950", nullptr, &hooks);
  ASSERT_TRUE(static_cast<bool>(results));
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_EQ(seen[1], std::vector<uint8_t>(1024));
}
