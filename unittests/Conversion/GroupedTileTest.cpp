//===- GroupedTileTest.cpp - The GEMM kernels' grouped tile order ---------===//
//
// [RAS1]: getGroupedTile builds the index arithmetic that maps a GEMM
// kernel's workgroup (x, y) to its output tile. Here it is evaluated for
// every workgroup of many grids and band heights: each tile must be taken
// exactly once, consecutive workgroups must walk a band column by column, and
// degenerate grids must keep the launch order.
//
//===----------------------------------------------------------------------===//

#include "fp4train/Conversion/FP4TrainGPUCommon/KernelUtils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/TypeSwitch.h"

#include <gtest/gtest.h>

#include <set>

using namespace mlir;

namespace {

/// The value of `v`, an index computed by arith ops from constants and the
/// `bound` values.
int64_t evaluate(Value v, const llvm::DenseMap<Value, int64_t> &bound) {
  if (auto it = bound.find(v); it != bound.end())
    return it->second;
  Operation *op = v.getDefiningOp();
  auto operand = [&](unsigned i) { return evaluate(op->getOperand(i), bound); };
  return llvm::TypeSwitch<Operation *, int64_t>(op)
      .Case([](arith::ConstantIndexOp c) { return c.value(); })
      .Case([&](arith::AddIOp) { return operand(0) + operand(1); })
      .Case([&](arith::SubIOp) { return operand(0) - operand(1); })
      .Case([&](arith::MulIOp) { return operand(0) * operand(1); })
      .Case([&](arith::DivUIOp) { return operand(0) / operand(1); })
      .Case([&](arith::RemUIOp) { return operand(0) % operand(1); })
      .Case([&](arith::MinUIOp) { return std::min(operand(0), operand(1)); })
      .Default([](Operation *op) -> int64_t {
        ADD_FAILURE() << "unexpected op " << op->getName().getStringRef().str();
        return -1;
      });
}

class GroupedTile : public ::testing::Test {
protected:
  GroupedTile() : builder(&context), loc(builder.getUnknownLoc()) {
    context.loadDialect<arith::ArithDialect>();
    module = ModuleOp::create(loc);
    builder.setInsertionPointToStart(module->getBody());
    x = arith::ConstantIndexOp::create(builder, loc, 0);
    y = arith::ConstantIndexOp::create(builder, loc, 0);
  }

  /// (row tile, column tile) of every workgroup of a tilesN x tilesM grid,
  /// in launch order (x fastest).
  std::vector<std::pair<int64_t, int64_t>> tiles(int64_t tilesN, int64_t tilesM,
                                                 int64_t group) {
    auto [row, col] =
        fp4train::getGroupedTile(builder, loc, x, y, tilesN, tilesM, group);
    std::vector<std::pair<int64_t, int64_t>> out;
    for (int64_t j = 0; j < tilesM; ++j)
      for (int64_t i = 0; i < tilesN; ++i) {
        llvm::DenseMap<Value, int64_t> bound{{x, i}, {y, j}};
        out.emplace_back(evaluate(row, bound), evaluate(col, bound));
      }
    return out;
  }

  MLIRContext context;
  OpBuilder builder;
  Location loc;
  OwningOpRef<ModuleOp> module;
  Value x, y;
};

TEST_F(GroupedTile, EveryTileExactlyOnce) {
  for (int64_t tilesN : {1, 2, 3, 5, 8, 13})
    for (int64_t tilesM : {1, 2, 3, 7, 8, 9, 16, 17, 23})
      for (int64_t group : {1, 2, 3, 8}) {
        std::set<std::pair<int64_t, int64_t>> seen;
        for (auto [row, col] : tiles(tilesN, tilesM, group)) {
          ASSERT_TRUE(row >= 0 && row < tilesM && col >= 0 && col < tilesN)
              << tilesN << "x" << tilesM << " group " << group;
          ASSERT_TRUE(seen.insert({row, col}).second)
              << "tile (" << row << ", " << col << ") twice in " << tilesN
              << "x" << tilesM << " group " << group;
        }
        EXPECT_EQ(int64_t(seen.size()), tilesN * tilesM);
      }
}

TEST_F(GroupedTile, ConsecutiveWorkgroupsWalkABandColumnByColumn) {
  // 3 column tiles, 10 row tiles, bands of 4: rows 0-3, 4-7, then 8-9.
  auto order = tiles(3, 10, 4);
  std::vector<std::pair<int64_t, int64_t>> want;
  for (int64_t band : {0, 4, 8})
    for (int64_t col = 0; col < 3; ++col)
      for (int64_t row = band; row < std::min<int64_t>(band + 4, 10); ++row)
        want.emplace_back(row, col);
  EXPECT_EQ(order, want);
}

TEST_F(GroupedTile, OneRowOrOneColumnKeepsTheLaunchOrder) {
  EXPECT_EQ(tiles(5, 1, 8), (std::vector<std::pair<int64_t, int64_t>>{
                                {0, 0}, {0, 1}, {0, 2}, {0, 3}, {0, 4}}));
  EXPECT_EQ(tiles(1, 4, 8), (std::vector<std::pair<int64_t, int64_t>>{
                                {0, 0}, {1, 0}, {2, 0}, {3, 0}}));
}

} // namespace
