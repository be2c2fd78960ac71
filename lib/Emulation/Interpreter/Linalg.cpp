//===- Linalg.cpp - Structured linalg ops on host buffers -----------------===//
//
// Host code that the kernel pipeline leaves, e.g. the Philox draw of random
// Hadamard signs or the reduction of NVFP4's per-workgroup amax words (a
// linalg.fill of the init, then a reduction linalg.generic), and the rest of
// a training step's host code (named ops: transpose, the matmuls a recipe
// keeps, reduce): the payload runs once per iteration point, one lane.
//
//===----------------------------------------------------------------------===//

#include "Executor.h"

#include <cstring>

using namespace mlir;
using namespace mlir::fp4train::emulation::detail;

LogicalResult Executor::executeGeneric(linalg::LinalgOp op) {
  if (kernel || lanes != 1)
    return fail(op, "linalg ops inside a kernel");
  if (!op.hasPureBufferSemantics())
    return fail(op, "only linalg ops on buffers are supported");
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  if (llvm::any_of(ranges, ShapedType::isDynamic))
    return fail(op, "dynamic iteration domain");
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  Block &body = *op.getBlock();

  // The element of `operand` at `point`, through its indexing map.
  auto element = [&](OpOperand &operand,
                     ArrayRef<int64_t> point) -> FailureOr<uint8_t *> {
    const View &view = views[operand.get()];
    SmallVector<int64_t> indices =
        maps[operand.getOperandNumber()].compose(point);
    int64_t offset = view.offset;
    for (auto [d, i] : llvm::enumerate(indices)) {
      if (i < 0 || i >= view.sizes[d])
        return fail(op, "index out of bounds");
      offset += i * view.strides[d];
    }
    return view.memory->bytes.data() + offset * view.elementBytes;
  };

  int64_t total = 1;
  for (int64_t r : ranges)
    total *= r;
  SmallVector<int64_t> point(ranges.size(), 0);
  const Mask one{1};
  for (int64_t n = 0; n < total; ++n) {
    linalgPoint = point;
    for (OpOperand &operand : op->getOpOperands()) {
      BlockArgument argument = body.getArgument(operand.getOperandNumber());
      Lanes value(1, 1);
      if (isa<MemRefType>(operand.get().getType())) {
        FailureOr<uint8_t *> address = element(operand, point);
        if (failed(address))
          return failure();
        std::memcpy(&value.at(0), *address, views[operand.get()].elementBytes);
      } else {
        value.at(0) = get(operand.get()).at(0);
      }
      values[argument] = std::move(value);
    }
    SmallVector<Value> yielded;
    if (failed(run(body, one, &yielded)))
      return failure();
    for (auto [k, init] : llvm::enumerate(op.getDpsInitsMutable())) {
      FailureOr<uint8_t *> address = element(init, point);
      if (failed(address))
        return failure();
      const Word w = get(yielded[k]).at(0);
      std::memcpy(*address, &w, views[init.get()].elementBytes);
    }
    for (int64_t d = static_cast<int64_t>(ranges.size()) - 1; d >= 0; --d) {
      if (++point[d] < ranges[d])
        break;
      point[d] = 0;
    }
  }
  linalgPoint.clear();
  return success();
}

LogicalResult Executor::executeFill(linalg::FillOp op) {
  if (kernel || lanes != 1)
    return fail(op, "linalg.fill inside a kernel");
  if (!op.hasPureBufferSemantics())
    return fail(op, "only linalg.fill on buffers is supported");
  const Word w = get(op.getInputs()[0]).at(0);
  const View &view = views[op.getOutputs()[0]];
  view.forEachElement([&](int64_t, int64_t element) {
    std::memcpy(view.memory->bytes.data() + element * view.elementBytes, &w,
                view.elementBytes);
  });
  return success();
}
