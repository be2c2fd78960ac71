//===- TransposeKernel.cpp - fp4train.transpose of codes and scales -------===//
//
// The transposed view of a 16x16-blocked tensor ([NV1]: the weight that
// feeds Dgrad) is a transpose of its codes and of its scale codes, byte for
// byte; the global scale is unchanged. On the host (fp4train-expand) that is
// two linalg.transpose ops, which under device memory would send the
// quantized weight to the host and back every step. Here each of the two
// byte tensors, viewed as [batch, rows, columns] with the blocked dimensions
// last, goes through a shared-memory tiled transpose: a 256-thread
// workgroup reads a 32 x 32 tile row by row (consecutive threads along the
// row: coalesced), stores it into a 32 x 33 shared tile (the extra column
// keeps the column reads of a warp on distinct banks), and after one
// barrier writes the transposed tile row by row. Rows and columns past the
// tensor's are skipped on both sides.
//
// E2M1 codes are stored two per byte along the rows ([PK1]), so a byte of
// the transposed tensor holds the codes of two input rows: the tile is read
// as 32 rows of 16 bytes, each byte split into its two codes in the shared
// tile, and written as 32 rows of 16 bytes, byte x of output row c joining
// tile elements (2x, c) (low nibble) and (2x + 1, c). Rows and columns are
// multiples of 16, so no byte is half inside the tensor.
//
//===----------------------------------------------------------------------===//

#include "fp4train/Conversion/FP4TrainCommon/TypeConversion.h"
#include "fp4train/Conversion/FP4TrainGPUCommon/Buffers.h"
#include "fp4train/Conversion/FP4TrainGPUCommon/KernelBuilders.h"
#include "fp4train/Conversion/FP4TrainGPUCommon/KernelUtils.h"
#include "fp4train/Dialect/FP4Train/IR/FP4TrainOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

using namespace mlir;
using namespace mlir::fp4train;

namespace {

constexpr int64_t kTile = 32;
constexpr int64_t kThreads = 256;

/// True when the kernel takes `op`: two blocked dimensions that are the
/// last two (what the type allows for 16x16 blocks), with a grid that fits
/// a launch.
bool isTransposeKernelShape(TransposeOp op) {
  ScaledTensorType type = op.getInput().getType();
  SmallVector<int64_t> dims = type.getBlockedDims();
  const int64_t rank = type.getRank();
  if (dims.size() != 2 || dims[0] != rank - 2 || dims[1] != rank - 1)
    return false;
  ArrayRef<int64_t> shape = type.getShape();
  int64_t batch = 1;
  for (int64_t d : shape.drop_back(2))
    batch *= d;
  // y and z grid dimensions are limited to 65535 on both vendors.
  return batch <= 65535 && (shape[rank - 2] + kTile - 1) / kTile <= 65535;
}

/// `tensor` ([..., rows, columns] of codes stored `perByte` to a byte, 1 or
/// 2) with its last two (logical) dimensions swapped, by the tiled kernel.
Value buildTransposeKernel(OpBuilder &b, Location loc, Value tensor,
                           int64_t perByte) {
  auto type = cast<RankedTensorType>(tensor.getType());
  const int64_t rank = type.getRank();
  SmallVector<int64_t> shape(type.getShape());
  const int64_t rows = shape[rank - 2], columns = shape[rank - 1] * perByte;
  int64_t batch = 1;
  for (int64_t d : ArrayRef<int64_t>(shape).drop_back(2))
    batch *= d;
  Type element = type.getElementType();
  Value input = toKernelBuffer(b, loc, collapseTo3D(b, loc, tensor));
  Value output = allocKernelBuffer(
      b, loc, MemRefType::get({batch, columns, rows / perByte}, element));
  // Bytes per tile row, and tile rows per pass of the workgroup.
  const int64_t rowBytes = kTile / perByte;
  const int64_t rowsPerPass = kThreads / rowBytes;

  IndexMath im{b, loc};
  auto tileType = MemRefType::get(
      {kTile, kTile + 1}, element, AffineMap(),
      gpu::AddressSpaceAttr::get(b.getContext(), gpu::AddressSpace::Workgroup));
  auto launch = gpu::LaunchOp::create(
      b, loc, im.c((columns + kTile - 1) / kTile),
      im.c((rows + kTile - 1) / kTile), im.c(batch), im.c(kThreads), im.c(1),
      im.c(1), /*dynamicSharedMemorySize=*/nullptr,
      /*asyncTokenType=*/nullptr, /*asyncDependencies=*/{},
      /*workgroupAttributions=*/{tileType});
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(&launch.getBody().front());
    Value tile = launch.getWorkgroupAttributions().front();
    Value tid = launch.getThreadIds().x;
    Value x = im.rem(tid, rowBytes), y = im.div(tid, rowBytes);
    Value batchId = launch.getBlockIds().z;
    Value rowBase = im.mul(launch.getBlockIds().y, kTile);
    Value columnBase = im.mul(launch.getBlockIds().x, kTile);
    // row < rowLimit and column < columnLimit, checked only along
    // dimensions the tiles do not divide (null: always true).
    auto inBounds = [&](Value row, int64_t rowLimit, Value column,
                        int64_t columnLimit) {
      return im.both(rowLimit % kTile ? im.lt(row, rowLimit) : Value(),
                     columnLimit % kTile ? im.lt(column, columnLimit)
                                         : Value());
    };
    Type i8 = b.getI8Type();
    auto byteConst = [&](int64_t v) -> Value {
      return arith::ConstantIntOp::create(b, loc, i8, v);
    };
    // Tile row r = y + rowsPerPass i, byte x: input (rowBase + r,
    // columnBase / perByte + x), tile elements perByte x ...
    for (int64_t i = 0; i < kTile; i += rowsPerPass) {
      Value r = im.add(y, i);
      Value row = im.add(rowBase, r);
      Value column = im.add(columnBase, im.mul(x, perByte));
      buildIf(b, loc, inBounds(row, rows, column, columns), [&] {
        Value byte = memref::LoadOp::create(
            b, loc, input,
            ValueRange{batchId, row, im.add(im.div(columnBase, perByte), x)});
        if (perByte == 1) {
          memref::StoreOp::create(b, loc, byte, tile, ValueRange{r, x});
          return;
        }
        Value low = arith::AndIOp::create(b, loc, byte, byteConst(0x0F));
        Value high = arith::ShRUIOp::create(b, loc, byte, byteConst(4));
        Value x2 = im.mul(x, 2);
        memref::StoreOp::create(b, loc, low, tile, ValueRange{r, x2});
        memref::StoreOp::create(b, loc, high, tile,
                                ValueRange{r, im.add(x2, 1)});
      });
    }
    gpu::BarrierOp::create(b, loc);
    // Output row columnBase + c (an input column), byte x: input rows
    // rowBase + perByte x ..., tile elements (perByte x ..., c).
    for (int64_t i = 0; i < kTile; i += rowsPerPass) {
      Value c = im.add(y, i);
      Value row = im.add(columnBase, c);
      Value inputRow = im.add(rowBase, im.mul(x, perByte));
      buildIf(b, loc, inBounds(row, columns, inputRow, rows), [&] {
        Value byte;
        if (perByte == 1) {
          byte = memref::LoadOp::create(b, loc, tile, ValueRange{x, c});
        } else {
          Value x2 = im.mul(x, 2);
          Value low = memref::LoadOp::create(b, loc, tile, ValueRange{x2, c});
          Value high = memref::LoadOp::create(b, loc, tile,
                                              ValueRange{im.add(x2, 1), c});
          byte = arith::OrIOp::create(
              b, loc, low, arith::ShLIOp::create(b, loc, high, byteConst(4)));
        }
        memref::StoreOp::create(
            b, loc, byte, output,
            ValueRange{batchId, row, im.add(im.div(rowBase, perByte), x)});
      });
    }
    gpu::TerminatorOp::create(b, loc);
  }
  shape[rank - 2] = columns;
  shape[rank - 1] = rows / perByte;
  return expandFrom3D(b, loc, fromKernelBuffer(b, loc, output),
                      RankedTensorType::get(shape, element));
}

struct TransposeOpLowering : public OpConversionPattern<TransposeOp> {
  TransposeOpLowering(TypeConverter &converter, MLIRContext *context)
      : OpConversionPattern(converter, context, /*benefit=*/2) {}

  LogicalResult
  matchAndRewrite(TransposeOp op, OneToNOpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (!isTransposeKernelShape(op))
      return rewriter.notifyMatchFailure(op, "grid past the launch limits");
    Location loc = op.getLoc();
    ValueRange parts = adaptor.getInput();
    // [PK1] E2M1 codes two per byte, FP8 codes and scales one.
    int64_t codesPerByte =
        isPackedStorage(op.getInput().getType().getElementType()) ? 2 : 1;
    SmallVector<Value> results = {
        buildTransposeKernel(rewriter, loc, parts[0], codesPerByte),
        buildTransposeKernel(rewriter, loc, parts[1], 1)};
    if (parts.size() == 3)
      results.push_back(parts[2]);
    rewriter.replaceOpWithMultiple(op, {results});
    return success();
  }
};

} // namespace

void mlir::fp4train::populateTransposeKernelPatterns(
    TypeConverter &converter, RewritePatternSet &patterns) {
  patterns.add<TransposeOpLowering>(converter, patterns.getContext());
}
