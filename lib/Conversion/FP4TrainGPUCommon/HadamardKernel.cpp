//===- HadamardKernel.cpp - Hadamard rotation to a GPU kernel -------------===//
//
// fp4train.hadamard becomes a gpu.launch of a fast Walsh-Hadamard transform
// whose every f32 operation is the numerics library's (hadamardRotateBlock)
// and the expansion's, so the three agree bit for bit ([H1]):
//
//   forward: x_k *= s_k (exact); stages h = 1, 2, 4, ..., n/2 in that order,
//            each pair (i, i + h) with (i & h) == 0 becoming
//            (x_i + x_{i+h}, x_i - x_{i+h}), one rounded f32 op each;
//            x_k *= f32(1/sqrt(n)) (one rounded multiply);
//   inverse: the stages, the normalization, then x_k *= s_k.
//
// A block of n elements is held by L = n/16 lanes, 16 elements each:
//
//  - phase 1: lane l of a block holds elements k = 16 l + j, j = 0..15, so
//    stages h = 1..8 (bits 0-3 of k) are register butterflies;
//  - phase 2 (n > 16): the lanes exchange their values through shared memory
//  (one
//    barrier) and lane l then holds k = 16 hi + R l + lo (R = 16 / L,
//    hi < L, lo < R): bits 4..log2(n)-1 of k are now register bits, so
//    stages h = 16..n/2 are register butterflies too, and every lane's
//    elements come in runs of R consecutive ones for the stores.
//
// Stage order and the operands of every add and subtract are those of the
// scalar transform; which lane computes a pair does not change its bits.
// The tensor is viewed as [outer, D/n, n, inner] (D the rotated dimension):
// with inner = 1 a block is contiguous and lanes read it with 16-byte loads;
// otherwise consecutive lanes take consecutive inner positions, so each
// scalar access of a wave is contiguous. Signs (fixed or random) are built on
// the host by the expansion's own builder and read by the kernel as a small
// buffer. The kernel body uses only arith, 1-D vector, memref, scf.if and
// gpu id/barrier ops (no math, cf, or subgroup shuffles).
//
//===----------------------------------------------------------------------===//

#include "HadamardKernel.h"

#include "fp4train/Conversion/FP4TrainGPUCommon/Buffers.h"
#include "fp4train/Conversion/FP4TrainGPUCommon/KernelBuilders.h"
#include "fp4train/Conversion/FP4TrainToStandard/FP4TrainToStandard.h"
#include "fp4train/Dialect/FP4Train/IR/FP4TrainOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/TypeUtilities.h"

#include <cmath>

using namespace mlir;
using namespace mlir::fp4train;

using namespace mlir::fp4train::hadamard_kernel;

/// Largest grid dimension used for the outer and block-row counts of a
/// strided rotation (the limit of the y and z grid dimensions of HIP and CUDA).
static constexpr int64_t kMaxGridYZ = 65535;

std::optional<HadamardShape>
mlir::fp4train::hadamard_kernel::getHadamardShape(HadamardOp op) {
  auto type = cast<RankedTensorType>(op.getInput().getType());
  if (!type.hasStaticShape())
    return std::nullopt;
  HadamardShape s;
  s.n = op.getRotation().getSize();
  int64_t dim = op.getDim();
  ArrayRef<int64_t> shape = type.getShape();
  s.outer = 1;
  for (int64_t d : shape.take_front(dim))
    s.outer *= d;
  s.rows = shape[dim] / s.n;
  s.inner = 1;
  for (int64_t d : shape.drop_front(dim + 1))
    s.inner *= d;
  s.numElements = type.getNumElements();
  return s;
}

bool mlir::fp4train::isHadamardKernelShape(HadamardOp op) {
  std::optional<HadamardShape> s = getHadamardShape(op);
  if (!s || s->numElements == 0)
    return false;
  // Work-items per grid dimension must fit in 32 bits.
  if (s->groupsX() * kThreads > int64_t(UINT32_MAX))
    return false;
  return s->contiguous() || (s->rows <= kMaxGridYZ && s->outer <= kMaxGridYZ);
}

Value HadamardKernelBuilder::index(int64_t v) {
  return arith::ConstantIndexOp::create(b, loc, v);
}

Value HadamardKernelBuilder::add(Value x, Value y) {
  if (isConstantIntValue(x, 0))
    return y;
  if (isConstantIntValue(y, 0))
    return x;
  return arith::AddIOp::create(b, loc, x, y);
}

Value HadamardKernelBuilder::mul(Value x, int64_t c) {
  if (std::optional<int64_t> v = getConstantIntValue(x))
    return index(*v * c);
  return c == 1 ? x : arith::MulIOp::create(b, loc, x, index(c)).getResult();
}

Value HadamardKernelBuilder::load(Value memref, Value offset) {
  return toF32(memref::LoadOp::create(b, loc, memref, offset));
}

Value HadamardKernelBuilder::toF32(Value v) {
  Type f32 = b.getF32Type();
  if (getElementTypeOrSelf(v) == f32)
    return v;
  Type type = f32;
  if (auto vector = dyn_cast<VectorType>(v.getType()))
    type = vector.clone(f32);
  return arith::ExtFOp::create(b, loc, type, v);
}

SmallVector<Value> HadamardKernelBuilder::loadRun(Value memref, Value offset,
                                                  int64_t count, bool aligned) {
  SmallVector<Value> values;
  int64_t width = std::min<int64_t>(count, 4);
  Type element = cast<MemRefType>(memref.getType()).getElementType();
  int64_t bytes = element.getIntOrFloatBitWidth() / 8;
  for (int64_t i = 0; i < count; i += width) {
    Value at = i == 0 ? offset : add(offset, index(i));
    if (width == 1) {
      values.push_back(load(memref, at));
      continue;
    }
    auto type = VectorType::get({width}, element);
    Value v = aligned ? vector::LoadOp::create(b, loc, type, memref, at,
                                               /*nontemporal=*/false,
                                               llvm::Align(bytes * width))
                      : vector::LoadOp::create(b, loc, type, memref, at);
    v = toF32(v);
    for (int64_t e = 0; e < width; ++e)
      values.push_back(vector::ExtractOp::create(b, loc, v, e));
  }
  return values;
}

void HadamardKernelBuilder::storeRun(ArrayRef<Value> values, Value memref,
                                     Value offset, bool aligned) {
  int64_t width = std::min<int64_t>(values.size(), 4);
  for (int64_t i = 0; i < int64_t(values.size()); i += width) {
    Value at = i == 0 ? offset : add(offset, index(i));
    if (width == 1) {
      memref::StoreOp::create(b, loc, values[i], memref, at);
      continue;
    }
    Value v = vector::FromElementsOp::create(
        b, loc, VectorType::get({width}, b.getF32Type()),
        values.slice(i, width));
    if (aligned)
      vector::StoreOp::create(b, loc, v, memref, at, /*nontemporal=*/false,
                              llvm::Align(4 * width));
    else
      vector::StoreOp::create(b, loc, v, memref, at);
  }
}

Value HadamardKernelBuilder::elementOffset(Value k) {
  return add(base, mul(k, s.inner));
}

void HadamardKernelBuilder::butterflies(SmallVectorImpl<Value> &x,
                                        int64_t registerStride,
                                        int64_t stages) {
  // Register r + registerStride * 2^t pairs with r in stage t, exactly the
  // element pair (i, i + h) of the scalar transform; the sum goes to the
  // lower element, the difference to the upper one.
  for (int64_t t = 0; t < stages; ++t) {
    int64_t h = registerStride << t;
    for (int64_t r = 0; r < int64_t(x.size()); ++r) {
      if (r & h)
        continue;
      Value lo = x[r], hi = x[r + h];
      x[r] = arith::AddFOp::create(b, loc, lo, hi);
      x[r + h] = arith::SubFOp::create(b, loc, lo, hi);
    }
  }
}

RotatedLane HadamardKernelBuilder::rotate(gpu::LaunchOp launch) {
  const int64_t n = s.n, lanes = s.lanesPerBlock(),
                groupBlocks = s.blocksPerGroup();
  Type f32 = b.getF32Type();

  // Thread decomposition (the launch's block dimensions, so no division):
  // contiguous: (x, y) = (lane l, block b), consecutive lanes of a block
  // adjacent; strided: (x, y) = (block b, lane l), consecutive blocks (inner
  // positions) adjacent. With one lane per block, x is the block.
  Value tx = launch.getThreadIds().x, ty = launch.getThreadIds().y;
  Value lane, block;
  if (lanes == 1) {
    lane = index(0);
    block = tx;
  } else if (s.contiguous()) {
    lane = tx;
    block = ty;
  } else {
    lane = ty;
    block = tx;
  }
  // The shared-memory row of the thread with (block, lane) = (bb, ll): its
  // linear thread id.
  auto rowOf = [&](Value bb, Value ll) -> Value {
    return s.contiguous() ? add(mul(bb, lanes), ll)
                          : add(mul(ll, groupBlocks), bb);
  };
  RotatedLane result;
  result.groupBlock = block;

  // The lane's block; out-of-range lanes (last workgroup) read the last
  // block, compute with everyone (they must reach the barrier) and store
  // nothing.
  Value global = add(mul(launch.getBlockIds().x, groupBlocks), block);
  if (s.laneBlocks() % groupBlocks != 0) {
    result.inRange = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                                           global, index(s.laneBlocks()));
    global = arith::SelectOp::create(b, loc, result.inRange, global,
                                     index(s.laneBlocks() - 1));
  }
  if (s.contiguous()) {
    base = mul(global, n);
  } else {
    Value row =
        add(mul(launch.getBlockIds().z, s.rows), launch.getBlockIds().y);
    base = add(mul(row, n * s.inner), global);
  }
  result.base = base;

  // Phase 1: elements 16 l + j.
  Value first = mul(lane, kPerLane);
  SmallVector<Value> &x = result.x;
  if (s.contiguous()) {
    x = loadRun(input, add(base, first), kPerLane, /*aligned=*/true);
  } else {
    for (int64_t j = 0; j < kPerLane; ++j)
      x.push_back(load(input, elementOffset(add(first, index(j)))));
  }
  auto multiplySigns = [&](SmallVectorImpl<Value> &values, ArrayRef<Value> sv) {
    for (size_t i = 0; i < values.size(); ++i)
      values[i] = arith::MulFOp::create(b, loc, values[i], sv[i]);
  };
  if (signs && !inverse)
    multiplySigns(x, loadRun(signs, first, kPerLane, /*aligned=*/false));
  int64_t phase1Stages = llvm::Log2_64(std::min(n, kPerLane));
  butterflies(x, /*registerStride=*/1, phase1Stages);

  // Phase 2: register r = hi * R + lo holds element 16 hi + R l + lo.
  result.run = kPerLane / lanes; // R
  int64_t run = result.run;
  // Offsets of the lane's runs: 16 hi + R l.
  SmallVector<Value> &runStarts = result.runStarts;
  if (lanes == 1) {
    runStarts.push_back(index(0));
  } else {
    Value lds = launch.getWorkgroupAttributions().front();
    result.tid = rowOf(block, lane);
    Value ownRow = mul(result.tid, kRowStride);
    for (int64_t j = 0; j < kPerLane; ++j)
      memref::StoreOp::create(b, loc, x[j], lds, add(ownRow, index(j)));
    gpu::BarrierOp::create(b, loc);
    Value column = mul(lane, run);
    for (int64_t hi = 0; hi < lanes; ++hi) {
      Value from = add(mul(rowOf(block, index(hi)), kRowStride), column);
      for (int64_t lo = 0; lo < run; ++lo)
        x[hi * run + lo] = memref::LoadOp::create(
            b, loc, lds, lo == 0 ? from : add(from, index(lo)));
      runStarts.push_back(add(index(kPerLane * hi), column));
    }
    butterflies(x, /*registerStride=*/run, llvm::Log2_64(lanes));
  }

  // Normalization, then (inverse) the signs, element by element.
  Value norm = arith::ConstantOp::create(
      b, loc, f32, b.getF32FloatAttr(float(1.0 / std::sqrt(double(n)))));
  for (Value &v : x)
    v = arith::MulFOp::create(b, loc, v, norm);
  if (signs && inverse) {
    SmallVector<Value> sv;
    for (Value start : runStarts)
      llvm::append_range(sv, loadRun(signs, start, run, /*aligned=*/false));
    multiplySigns(x, sv);
  }
  if (!result.tid)
    result.tid = rowOf(block, lane);
  return result;
}

void HadamardKernelBuilder::build(gpu::LaunchOp launch, Value output) {
  RotatedLane lane = rotate(launch);

  // Stores, run by run.
  OpBuilder::InsertionGuard guard(b);
  if (lane.inRange) {
    auto ifOp = scf::IfOp::create(b, loc, lane.inRange, /*withElse=*/false);
    b.setInsertionPointToStart(ifOp.thenBlock());
  }
  for (auto [i, start] : llvm::enumerate(lane.runStarts)) {
    ArrayRef<Value> values =
        ArrayRef<Value>(lane.x).slice(i * lane.run, lane.run);
    if (s.contiguous()) {
      storeRun(values, output, add(base, start), /*aligned=*/true);
      continue;
    }
    for (auto [lo, v] : llvm::enumerate(values))
      memref::StoreOp::create(
          b, loc, v, output,
          elementOffset(lo == 0 ? start : add(start, index(lo))));
  }
}

Value mlir::fp4train::hadamard_kernel::getSignsBuffer(OpBuilder &b,
                                                      Location loc,
                                                      HadamardOp op, Value seed,
                                                      Value step) {
  Value signTensor = buildHadamardSigns(b, loc, op.getRotation(), seed, step);
  return signTensor ? toKernelBuffer(b, loc, signTensor) : Value();
}

gpu::LaunchOp mlir::fp4train::hadamard_kernel::createHadamardLaunch(
    OpBuilder &b, Location loc, const HadamardShape &shape, int64_t sharedWords,
    TypeRange extraShared) {
  auto c = [&](int64_t v) -> Value {
    return arith::ConstantIndexOp::create(b, loc, v);
  };
  int64_t lanes = shape.lanesPerBlock(), groupBlocks = shape.blocksPerGroup();
  int64_t threadsX = lanes == 1 || !shape.contiguous() ? groupBlocks : lanes;
  int64_t threadsY = kThreads / threadsX;
  SmallVector<Type> lds;
  if (sharedWords > 0)
    lds.push_back(
        MemRefType::get({sharedWords}, b.getF32Type(), AffineMap(),
                        gpu::AddressSpaceAttr::get(
                            b.getContext(), gpu::AddressSpace::Workgroup)));
  llvm::append_range(lds, extraShared);
  int64_t gridY = shape.contiguous() ? 1 : shape.rows;
  int64_t gridZ = shape.contiguous() ? 1 : shape.outer;
  return gpu::LaunchOp::create(
      b, loc, c(shape.groupsX()), c(gridY), c(gridZ), c(threadsX), c(threadsY),
      c(1), /*dynamicSharedMemorySize=*/nullptr,
      /*asyncTokenType=*/nullptr, /*asyncDependencies=*/{},
      /*workgroupAttributions=*/lds);
}

Value mlir::fp4train::hadamard_kernel::buildHadamardKernel(
    OpBuilder &b, Location loc, HadamardOp op, Value input, Value seed,
    Value step) {
  HadamardShape shape = *getHadamardShape(op);
  auto type = cast<RankedTensorType>(op.getInput().getType());
  // Flat 1-D buffers: the [outer, rows, n, inner] view is index math.
  Value flat = toKernelBuffer(b, loc, flattenTensor(b, loc, input));
  Value output = allocKernelBuffer(
      b, loc, MemRefType::get({shape.numElements}, b.getF32Type()));
  Value signs = getSignsBuffer(b, loc, op, seed, step);
  auto launch = createHadamardLaunch(b, loc, shape, shape.exchangeWords());
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(&launch.getBody().front());
    HadamardKernelBuilder(b, loc, shape, flat, signs, op.getInverse())
        .build(launch, output);
    gpu::TerminatorOp::create(b, loc);
  }
  return unflattenTensor(b, loc, fromKernelBuffer(b, loc, output),
                         type.getShape());
}

namespace {

struct HadamardOpLowering : public OpConversionPattern<HadamardOp> {
  HadamardOpLowering(TypeConverter &converter, MLIRContext *context)
      : OpConversionPattern(converter, context, /*benefit=*/2) {}

  LogicalResult
  matchAndRewrite(HadamardOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (!isHadamardKernelShape(op))
      return rewriter.notifyMatchFailure(op, "not a static-shaped rotation");
    rewriter.replaceOp(
        op, buildHadamardKernel(rewriter, op.getLoc(), op, adaptor.getInput(),
                                adaptor.getSeed(), adaptor.getStep()));
    return success();
  }
};

} // namespace

void mlir::fp4train::populateHadamardKernelPatterns(
    TypeConverter &converter, RewritePatternSet &patterns) {
  patterns.add<HadamardOpLowering>(converter, patterns.getContext());
}
