//===- DeviceMemoryTest.cpp - fp4train-gpu-device-memory, executed --------===//
//
// The bundled MLP training step through a GPU kernel pipeline, buffer
// deallocation and fp4train-gpu-device-memory, emulated with separate host
// and device memories (a module that calls gpu.alloc runs that way: a
// kernel may touch only device buffers, a host op only host ones, and a
// fresh device buffer holds 0xFF bytes). Its results must equal, byte for
// byte, those of the same step with kernels on the host's buffers (unified
// memory): every copy the step needs is there. Removing one copy, or
// handing a kernel a host buffer, must be noticed.
//
//===----------------------------------------------------------------------===//

#include "KernelEmulationTestUtils.h"

#include "fp4train/Conversion/Passes.h"
#include "fp4train/Pipelines/Pipelines.h"
#include "fp4train/Target/GPUTarget.h"

#include "mlir/Conversion/BufferizationToMemRef/BufferizationToMemRef.h"
#include "mlir/Dialect/Bufferization/Pipelines/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/MemoryBuffer.h"

#include <algorithm>
#include <random>

using namespace mlir;
using namespace mlir::fp4train;
using namespace ::fp4train::emulation_test;

namespace {

struct StepCase {
  std::string chip, recipe;
};

std::string getStepTestName(const ::testing::TestParamInfo<StepCase> &info) {
  return sanitizeTestName(info.param.chip + "_" + info.param.recipe);
}

/// A training step on every chip of the table of targets (docs/targets.md).
const StepCase kStepCases[] = {{"gfx950", "mxfp4-hadamard"},
                               {"sm_120a", "nvfp4"},
                               {"sm_121a", "mxfp4"},
                               {"sm_100a", "nvfp4"},
                               {"sm_103a", "mxfp8"},
                               {"sm_90a", "mxfp4"},
                               {"sm_89", "nvfp4"}};

/// Whether an earlier case runs a chip of the same MMA kind: the same
/// instruction set and kernels under another name. The sanitized suite
/// (make test-sanitize, ~15 s a case there) skips those; `make test` runs
/// every chip.
bool repeatsAnMMAKind(const StepCase &c) {
  GPUMMAKind kind = getGPUTarget(*parseGPUChip(c.chip)).mma;
  for (const StepCase &earlier : kStepCases) {
    if (earlier.chip == c.chip)
      return false;
    if (getGPUTarget(*parseGPUChip(earlier.chip)).mma == kind)
      return true;
  }
  return false;
}

class DeviceMemoryTest : public KernelEmulationFixture,
                         public ::testing::WithParamInterface<StepCase> {
protected:
  /// examples/mlp_train_step.mlir through the chip's kernel pipeline and
  /// buffer deallocation; with `device`, fp4train-gpu-device-memory too.
  OwningOpRef<ModuleOp> compileStep(bool device) {
    auto file = llvm::MemoryBuffer::getFile(FP4TRAIN_SOURCE_DIR
                                            "/examples/mlp_train_step.mlir");
    if (!file) {
      ADD_FAILURE() << "cannot read examples/mlp_train_step.mlir";
      return nullptr;
    }
    const StepCase &c = GetParam();
    return compile(context, (*file)->getBuffer().str(), [&](OpPassManager &pm) {
      if (c.chip == "gfx950") {
        ROCmPipelineOptions options;
        options.recipe = c.recipe;
        buildROCmKernelPipeline(pm, options);
      } else {
        CUDAPipelineOptions options;
        options.recipe = c.recipe;
        options.chip = *parseGPUChip(c.chip);
        buildCUDAKernelPipeline(pm, options);
      }
      bufferization::buildBufferDeallocationPipeline(pm);
      pm.addPass(createConvertBufferizationToMemRefPass());
      if (device)
        pm.addPass(createFP4TrainGPUDeviceMemory());
    });
  }

  /// Random activations, targets and parameters in [-1, 1), a learning
  /// rate and a step number (the seed of stochastic rounding).
  std::vector<emulation::EmulatorArgument> makeArguments(ModuleOp module) {
    auto step = module.lookupSymbol<func::FuncOp>("train_step");
    std::vector<emulation::EmulatorArgument> arguments;
    std::mt19937 rng(5);
    std::uniform_real_distribution<float> value(-1.0f, 1.0f);
    for (Type type : step.getArgumentTypes()) {
      if (auto memref = dyn_cast<MemRefType>(type)) {
        std::vector<float> data(memref.getNumElements());
        for (float &x : data)
          x = value(rng);
        arguments.push_back(emulation::EmulatorArgument::buffer(asBytes(data)));
      } else if (type.isF32()) {
        arguments.push_back(emulation::EmulatorArgument::bits(
            ::fp4train::numerics::floatToBits(0.05f)));
      } else {
        arguments.push_back(emulation::EmulatorArgument::bits(7));
      }
    }
    return arguments;
  }

  llvm::Expected<std::vector<std::vector<uint8_t>>>
  emulateStep(ModuleOp module, emulation::EmulatorStats *stats = nullptr) {
    return emulation::emulate(module, "train_step", makeArguments(module),
                              GetParam().chip, stats);
  }

  /// The number of results of `module` that differ from `expected`.
  int countDifferences(ModuleOp module,
                       const std::vector<std::vector<uint8_t>> &expected,
                       std::string *error) {
    auto results = emulateStep(module);
    if (!results) {
      *error = llvm::toString(results.takeError());
      return -1;
    }
    int differing = 0;
    for (auto [got, want] : llvm::zip(*results, expected))
      differing += got != want;
    return differing;
  }
};

TEST_P(DeviceMemoryTest, MatchesUnifiedMemory) {
  if (kUnderAddressSanitizer && repeatsAnMMAKind(GetParam()))
    GTEST_SKIP() << "the sanitizers run the first chip of each MMA kind";
  OwningOpRef<ModuleOp> unified = compileStep(/*device=*/false);
  OwningOpRef<ModuleOp> device = compileStep(/*device=*/true);
  ASSERT_TRUE(unified && device);
  int allocations = 0;
  device->walk([&](gpu::AllocOp) { ++allocations; });
  EXPECT_GT(allocations, 0);

  emulation::EmulatorStats unifiedStats, deviceStats;
  auto expected = emulateStep(*unified, &unifiedStats);
  ASSERT_TRUE(static_cast<bool>(expected))
      << llvm::toString(expected.takeError());
  auto results = emulateStep(*device, &deviceStats);
  ASSERT_TRUE(static_cast<bool>(results))
      << llvm::toString(results.takeError());
  EXPECT_GT(deviceStats.launches, 0u);
  EXPECT_EQ(deviceStats.launches, unifiedStats.launches);
  ASSERT_EQ(results->size(), expected->size());
  for (size_t i = 0; i < results->size(); ++i)
    EXPECT_EQ((*results)[i], (*expected)[i]) << "result " << i << " differs";
}

/// The copy checks, on gfx950 and sm_120a: the pass places copies from the
/// host code alone, which is the same on every chip (MatchesUnifiedMemory
/// runs the step on all four), and an NVIDIA step takes ten times longer to
/// emulate.
class DeviceMemoryCopiesTest : public DeviceMemoryTest {};

/// Every copy is needed: without any one of them a result changes or the
/// emulator stops at an access to the wrong memory. All copies on gfx950;
/// eight evenly spaced ones on sm_120a.
TEST_P(DeviceMemoryCopiesTest, EveryCopyMatters) {
  // A property of the compiled step (no copy is redundant), shown by
  // re-running it once per copy: under ASan MatchesUnifiedMemory already runs
  // the same step.
  if (kUnderAddressSanitizer)
    GTEST_SKIP() << "under ASan MatchesUnifiedMemory runs this step";
  OwningOpRef<ModuleOp> device = compileStep(/*device=*/true);
  ASSERT_TRUE(device);
  auto expected = emulateStep(*device);
  ASSERT_TRUE(static_cast<bool>(expected))
      << llvm::toString(expected.takeError());
  SmallVector<gpu::MemcpyOp> copies;
  device->walk([&](gpu::MemcpyOp copy) { copies.push_back(copy); });
  ASSERT_FALSE(copies.empty());
  const unsigned stride = GetParam().chip == "gfx950"
                              ? 1
                              : std::max<unsigned>(1, copies.size() / 8);
  for (unsigned i = 0; i < copies.size(); i += stride) {
    OwningOpRef<ModuleOp> broken = device->clone();
    SmallVector<gpu::MemcpyOp> brokenCopies;
    broken->walk([&](gpu::MemcpyOp copy) { brokenCopies.push_back(copy); });
    brokenCopies[i]->erase();
    std::string error;
    EXPECT_NE(countDifferences(*broken, *expected, &error), 0)
        << "removing copy " << i << " changed nothing";
  }
}

/// The buffer `value` views (through view ops), or null when `value` is
/// not a memref.
Value getRoot(Value value) {
  if (!isa<MemRefType>(value.getType()))
    return nullptr;
  while (auto view = value.getDefiningOp<ViewLikeOpInterface>())
    value = view.getViewSource();
  return value;
}

/// `value`, a view of `from`, rebuilt as the same view of `to`.
Value rebase(OpBuilder &b, Value value, Value from, Value to) {
  if (value == from)
    return to;
  auto view = value.getDefiningOp<ViewLikeOpInterface>();
  IRMapping mapping;
  mapping.map(view.getViewSource(), rebase(b, view.getViewSource(), from, to));
  return b.clone(*view, mapping)->getResult(0);
}

/// In the first op after `copy` in its block that uses a view of `from`
/// and is not a view, a free or a copy (a launch with `launches`, a host op
/// otherwise), makes that operand the same view of `to`.
bool redirectNextUse(gpu::MemcpyOp copy, Value from, Value to, bool launches) {
  for (Operation *op = copy->getNextNode(); op; op = op->getNextNode()) {
    if (isa<ViewLikeOpInterface, memref::DeallocOp, gpu::DeallocOp,
            gpu::MemcpyOp>(op) ||
        isa<gpu::LaunchFuncOp>(op) != launches)
      continue;
    for (OpOperand &operand : op->getOpOperands()) {
      if (getRoot(operand.get()) != from)
        continue;
      OpBuilder b(op);
      operand.set(rebase(b, operand.get(), from, to));
      return true;
    }
  }
  return false;
}

/// A kernel handed a host buffer, and a host op reading a device buffer,
/// are errors of the emulated memory model (what a GPU without unified
/// memory would fault on).
TEST_P(DeviceMemoryCopiesTest, WrongMemoryIsAnError) {
  OwningOpRef<ModuleOp> device = compileStep(/*device=*/true);
  ASSERT_TRUE(device);
  auto expected = emulateStep(*device);
  ASSERT_TRUE(static_cast<bool>(expected))
      << llvm::toString(expected.takeError());

  // `toDevice`: after the first copy to the device, the next launch gets
  // the host buffer; else after the first copy back, the next host op gets
  // the twin.
  auto breakFirstCopy = [&](bool toDevice) -> std::string {
    OwningOpRef<ModuleOp> broken = device->clone();
    bool done = false;
    broken->walk([&](gpu::MemcpyOp copy) {
      if (done)
        return;
      Value twin = toDevice ? copy.getDst() : copy.getSrc();
      Value host = toDevice ? copy.getSrc() : copy.getDst();
      if (!twin.getDefiningOp<gpu::AllocOp>())
        return;
      done = toDevice ? redirectNextUse(copy, twin, host, /*launches=*/true)
                      : redirectNextUse(copy, host, twin, /*launches=*/false);
    });
    EXPECT_TRUE(done) << "no copy " << (toDevice ? "to" : "from")
                      << " the device with a later use";
    std::string error;
    EXPECT_EQ(countDifferences(*broken, *expected, &error), -1);
    return error;
  };
  std::string error = breakFirstCopy(/*toDevice=*/true);
  EXPECT_NE(error.find("is host memory"), std::string::npos) << error;
  error = breakFirstCopy(/*toDevice=*/false);
  EXPECT_NE(error.find("touches device memory"), std::string::npos) << error;
}

INSTANTIATE_TEST_SUITE_P(GPU, DeviceMemoryCopiesTest,
                         ::testing::Values(StepCase{"gfx950", "mxfp4-hadamard"},
                                           StepCase{"sm_120a", "nvfp4"}),
                         getStepTestName);

INSTANTIATE_TEST_SUITE_P(GPU, DeviceMemoryTest, ::testing::ValuesIn(kStepCases),
                         getStepTestName);

} // namespace
