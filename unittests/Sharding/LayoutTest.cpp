//===- LayoutTest.cpp - The layout of a sharded step's boundary -----------===//

#include "fp4train/Sharding/Layout.h"

#include "fp4train/InitFP4Train.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include <gtest/gtest.h>

using namespace mlir;
using namespace mlir::fp4train;

namespace {

using Shape = std::vector<int64_t>;

TEST(LayoutTest, ProcessesAreRankedRowMajor) {
  StepLayout layout;
  layout.gridShape = {2, 3};
  EXPECT_EQ(layout.getNumProcesses(), 6);
  EXPECT_EQ(layout.getCoordinates(0), (Shape{0, 0}));
  EXPECT_EQ(layout.getCoordinates(2), (Shape{0, 2}));
  EXPECT_EQ(layout.getCoordinates(3), (Shape{1, 0}));
  EXPECT_EQ(layout.getCoordinates(5), (Shape{1, 2}));
}

TEST(LayoutTest, ShardsOfOneSplitDimension) {
  // [16, 8] split along dimension 1 by grid axis 1 of a 2 x 4 grid.
  BoundaryLayout value{{16, 8}, {{}, {1}}};
  Shape grid = {2, 4};
  EXPECT_TRUE(value.isSplit());
  EXPECT_EQ(value.getShardShape(grid), (Shape{16, 2}));
  EXPECT_EQ(value.getShardOrigin(grid, {0, 0}), (Shape{0, 0}));
  EXPECT_EQ(value.getShardOrigin(grid, {1, 3}), (Shape{0, 6}));
  // Axis 0 does not split it: two copies of each element.
  EXPECT_EQ(value.getReplication(grid), 2);
}

TEST(LayoutTest, AxesLinearizeInTheirOrder) {
  // [32] split by axes [1, 0] of a 2 x 4 grid: the shard index is
  // c1 * 2 + c0 (the first listed axis is the major one), as in [SH3].
  BoundaryLayout value{{32}, {{1, 0}}};
  Shape grid = {2, 4};
  EXPECT_EQ(value.getShardShape(grid), (Shape{4}));
  EXPECT_EQ(value.getShardOrigin(grid, {1, 0}), (Shape{4}));
  EXPECT_EQ(value.getShardOrigin(grid, {0, 3}), (Shape{24}));
  EXPECT_EQ(value.getShardOrigin(grid, {1, 3}), (Shape{28}));
  EXPECT_EQ(value.getReplication(grid), 1);
}

TEST(LayoutTest, WholeValues) {
  BoundaryLayout scalar;
  BoundaryLayout replicated{{4, 4}, {{}, {}}};
  Shape grid = {2};
  EXPECT_FALSE(scalar.isSplit());
  EXPECT_FALSE(replicated.isSplit());
  EXPECT_EQ(replicated.getShardShape(grid), (Shape{4, 4}));
  EXPECT_EQ(replicated.getShardOrigin(grid, {1}), (Shape{0, 0}));
  EXPECT_EQ(replicated.getReplication(grid), 2);
}

class StepLayoutTest : public ::testing::Test {
protected:
  StepLayoutTest() : context(makeRegistry()) {}

  static DialectRegistry makeRegistry() {
    DialectRegistry registry;
    registerAllDialects(registry);
    return registry;
  }

  /// The layout of @step in `source`.
  FailureOr<std::optional<StepLayout>> layoutOf(llvm::StringRef source) {
    module = parseSourceString<ModuleOp>(source, &context);
    if (!module)
      return failure();
    return getStepLayout(module->lookupSymbol<func::FuncOp>("step"));
  }

  MLIRContext context;
  OwningOpRef<ModuleOp> module;
};

constexpr llvm::StringLiteral kStep = R"mlir(
  shard.grid @dp(shape = 2)
  func.func @step(%x: tensor<8x4xf32>, %w: tensor<4x4xf32> {fp4train.param})
      -> (tensor<f32>, tensor<8x4xf32>) {
    %s = shard.sharding @dp split_axes = [[0]] : !shard.sharding
    %x0 = shard.shard %x to %s annotate_for_users : tensor<8x4xf32>
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<f32>
    %loss = linalg.fill ins(%zero : f32) outs(%e : tensor<f32>) -> tensor<f32>
    %e2 = tensor.empty() : tensor<8x4xf32>
    %y = linalg.matmul ins(%x0, %w : tensor<8x4xf32>, tensor<4x4xf32>)
        outs(%e2 : tensor<8x4xf32>) -> tensor<8x4xf32>
    return %loss, %y : tensor<f32>, tensor<8x4xf32>
  }
)mlir";

TEST_F(StepLayoutTest, ArgumentsAndResults) {
  FailureOr<std::optional<StepLayout>> layout = layoutOf(kStep);
  ASSERT_TRUE(succeeded(layout));
  ASSERT_TRUE(layout->has_value());
  const StepLayout &step = **layout;
  EXPECT_EQ(step.grid, "dp");
  EXPECT_EQ(step.gridShape, (Shape{2}));
  ASSERT_EQ(step.arguments.size(), 2u);
  EXPECT_EQ(step.arguments[0].globalShape, (Shape{8, 4}));
  EXPECT_EQ(step.arguments[0].splitAxes,
            (std::vector<std::vector<int16_t>>{{0}, {}}));
  // The parameter nothing splits is replicated.
  EXPECT_FALSE(step.arguments[1].isSplit());
  ASSERT_EQ(step.results.size(), 2u);
  EXPECT_TRUE(step.results[0].globalShape.empty());
  // The product of split rows comes back split by rows.
  EXPECT_EQ(step.results[1].getShardShape(step.gridShape), (Shape{4, 4}));
}

TEST_F(StepLayoutTest, UnshardedSteps) {
  // No grid, or a grid the step does not use: no layout, one process.
  FailureOr<std::optional<StepLayout>> plain = layoutOf(R"mlir(
    func.func @step(%x: tensor<4xf32>) -> tensor<4xf32> {
      return %x : tensor<4xf32>
    })mlir");
  ASSERT_TRUE(succeeded(plain));
  EXPECT_FALSE(plain->has_value());
  FailureOr<std::optional<StepLayout>> unused = layoutOf(R"mlir(
    shard.grid @dp(shape = 2)
    func.func @step(%x: tensor<4xf32>) -> tensor<4xf32> {
      return %x : tensor<4xf32>
    })mlir");
  ASSERT_TRUE(succeeded(unused));
  EXPECT_FALSE(unused->has_value());
}

TEST_F(StepLayoutTest, TwoGridsAreAnError) {
  std::string message;
  ScopedDiagnosticHandler handler(&context, [&](Diagnostic &diagnostic) {
    message = diagnostic.str();
    return success();
  });
  std::string source = "shard.grid @other(shape = 2)\n" + kStep.str();
  EXPECT_TRUE(failed(layoutOf(source)));
  EXPECT_NE(message.find("runs on 2 grids"), std::string::npos) << message;
}

} // namespace
