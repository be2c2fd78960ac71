//===- Vector.cpp - vector ops on the lanes' element words ----------------===//
//
// 1-D vector ops (and n-D ones that only reshape): loads and stores go
// through the memref checks of MemRef.cpp.
//
//===----------------------------------------------------------------------===//

#include "Executor.h"

#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "llvm/ADT/TypeSwitch.h"

#include <cmath>

using namespace mlir;
using namespace mlir::fp4train::emulation::detail;

namespace {

/// Flat element position of a static or dynamic vector position in `lane`.
int64_t getFlatPosition(ArrayRef<OpFoldResult> position, VectorType type,
                        DenseMap<Value, Lanes> &values, unsigned lane) {
  int64_t flat = 0;
  for (auto [d, p] : llvm::enumerate(position)) {
    int64_t index;
    if (auto attr = dyn_cast<Attribute>(p))
      index = cast<IntegerAttr>(attr).getInt();
    else
      index =
          static_cast<int64_t>(values.find(cast<Value>(p))->second.at(lane));
    flat = flat * type.getDimSize(d) + index;
  }
  // A partial position addresses a whole trailing subvector.
  for (int64_t d = position.size(); d < type.getRank(); ++d)
    flat *= type.getDimSize(d);
  return flat;
}

} // namespace

LogicalResult Executor::executeVector(Operation &op, const Mask &mask) {
  return llvm::TypeSwitch<Operation *, LogicalResult>(&op)
      .Case([&](vector::LoadOp load) {
        return this->load(&op, views[load.getBase()], load.getIndices(),
                          load.getResult(), mask);
      })
      .Case([&](vector::StoreOp store) {
        return this->store(&op, views[store.getBase()], store.getIndices(),
                           store.getValueToStore(), mask);
      })
      .Case([&](vector::BitCastOp cast) {
        Lanes &out = define(cast.getResult());
        repack(get(cast.getSource()),
               getElementBits(cast.getSourceVectorType()), out,
               getElementBits(cast.getResultVectorType()), lanes);
        return success();
      })
      .Case([&](vector::ShapeCastOp cast) {
        Lanes copy = get(cast.getSource());
        values[cast.getResult()] = std::move(copy);
        return success();
      })
      .Case([&](vector::ShuffleOp shuffle) {
        const Lanes &v1 = get(shuffle.getV1());
        const Lanes &v2 = get(shuffle.getV2());
        Lanes out(lanes, getWidth(shuffle.getResult().getType()));
        ArrayRef<int64_t> indices = shuffle.getMask();
        for (unsigned lane = 0; lane < lanes; ++lane)
          for (auto [i, index] : llvm::enumerate(indices)) {
            if (index < 0)
              out.at(lane, i) = 0; // poison
            else if (index < static_cast<int64_t>(v1.width))
              out.at(lane, i) = v1.at(lane, index);
            else
              out.at(lane, i) = v2.at(lane, index - v1.width);
          }
        values[shuffle.getResult()] = std::move(out);
        return success();
      })
      .Case([&](vector::ExtractOp extract) {
        VectorType type = extract.getSourceVectorType();
        const unsigned width = getWidth(extract.getResult().getType());
        Lanes out(lanes, width);
        SmallVector<OpFoldResult> position = extract.getMixedPosition();
        const Lanes &source = get(extract.getSource());
        for (unsigned lane = 0; lane < lanes; ++lane) {
          const int64_t flat = getFlatPosition(position, type, values, lane);
          if (flat < 0 || flat + width > source.width) {
            if (mask[lane])
              return fail(&op, "position out of range");
            continue;
          }
          for (unsigned i = 0; i < width; ++i)
            out.at(lane, i) = source.at(lane, flat + i);
        }
        values[extract.getResult()] = std::move(out);
        return success();
      })
      .Case([&](vector::InsertOp insert) {
        VectorType type = insert.getDestVectorType();
        Lanes out = get(insert.getDest());
        const Lanes &source = get(insert.getValueToStore());
        SmallVector<OpFoldResult> position = insert.getMixedPosition();
        for (unsigned lane = 0; lane < lanes; ++lane) {
          const int64_t flat = getFlatPosition(position, type, values, lane);
          if (flat < 0 || flat + source.width > out.width) {
            if (mask[lane])
              return fail(&op, "position out of range");
            continue;
          }
          for (unsigned i = 0; i < source.width; ++i)
            out.at(lane, flat + i) = source.at(lane, i);
        }
        values[insert.getResult()] = std::move(out);
        return success();
      })
      .Case([&](vector::FromElementsOp from) {
        Lanes out(lanes, from.getElements().size());
        for (auto [i, element] : llvm::enumerate(from.getElements())) {
          const Lanes &e = get(element);
          for (unsigned lane = 0; lane < lanes; ++lane)
            out.at(lane, i) = e.at(lane);
        }
        values[from.getResult()] = std::move(out);
        return success();
      })
      .Case([&](vector::BroadcastOp broadcast) {
        const Lanes &source = get(broadcast.getSource());
        const unsigned width = getWidth(broadcast.getResult().getType());
        if (source.width != 1 && source.width != width)
          return fail(&op, "only scalar or same-size broadcasts are supported");
        Lanes out(lanes, width);
        for (unsigned lane = 0; lane < lanes; ++lane)
          for (unsigned i = 0; i < width; ++i)
            out.at(lane, i) = source.at(lane, source.width == 1 ? 0 : i);
        values[broadcast.getResult()] = std::move(out);
        return success();
      })
      .Case([&](vector::ExtractStridedSliceOp slice) {
        if (slice.getSourceVectorType().getRank() != 1)
          return fail(&op, "only 1-D slices are supported");
        const int64_t offset =
            cast<IntegerAttr>(slice.getOffsets()[0]).getInt();
        const int64_t stride =
            cast<IntegerAttr>(slice.getStrides()[0]).getInt();
        const Lanes &source = get(slice.getSource());
        Lanes out(lanes, getWidth(slice.getResult().getType()));
        for (unsigned lane = 0; lane < lanes; ++lane)
          for (unsigned i = 0; i < out.width; ++i)
            out.at(lane, i) = source.at(lane, offset + i * stride);
        values[slice.getResult()] = std::move(out);
        return success();
      })
      .Case([&](vector::InsertStridedSliceOp slice) {
        if (slice.getDestVectorType().getRank() != 1)
          return fail(&op, "only 1-D slices are supported");
        const int64_t offset =
            cast<IntegerAttr>(slice.getOffsets()[0]).getInt();
        const int64_t stride =
            cast<IntegerAttr>(slice.getStrides()[0]).getInt();
        const Lanes &source = get(slice.getValueToStore());
        Lanes out = get(slice.getDest());
        for (unsigned lane = 0; lane < lanes; ++lane)
          for (unsigned i = 0; i < source.width; ++i)
            out.at(lane, offset + i * stride) = source.at(lane, i);
        values[slice.getResult()] = std::move(out);
        return success();
      })
      .Case([&](vector::ReductionOp reduction) {
        using vector::CombiningKind;
        Type element = reduction.getSourceVectorType().getElementType();
        const unsigned bits = getElementBits(element);
        const Lanes &source = get(reduction.getVector());
        Lanes out(lanes, 1);
        auto combine = [&](CombiningKind kind, Word a, Word b) -> Word {
          switch (kind) {
          case CombiningKind::ADD:
            if (isa<FloatType>(element))
              return doubleToFloat(floatToDouble(a, element) +
                                       floatToDouble(b, element),
                                   element);
            return truncate(a + b, bits);
          case CombiningKind::MUL:
            if (isa<FloatType>(element))
              return doubleToFloat(floatToDouble(a, element) *
                                       floatToDouble(b, element),
                                   element);
            return truncate(a * b, bits);
          case CombiningKind::MINUI:
            return std::min(a, b);
          case CombiningKind::MAXUI:
            return std::max(a, b);
          case CombiningKind::MINSI:
            return signExtend(a, bits) <= signExtend(b, bits) ? a : b;
          case CombiningKind::MAXSI:
            return signExtend(a, bits) >= signExtend(b, bits) ? a : b;
          case CombiningKind::AND:
            return a & b;
          case CombiningKind::OR:
            return a | b;
          case CombiningKind::XOR:
            return a ^ b;
          case CombiningKind::MINNUMF:
            return doubleToFloat(
                std::fmin(floatToDouble(a, element), floatToDouble(b, element)),
                element);
          case CombiningKind::MAXNUMF:
            return doubleToFloat(
                std::fmax(floatToDouble(a, element), floatToDouble(b, element)),
                element);
          default:
            return a;
          }
        };
        CombiningKind kind = reduction.getKind();
        if (kind == CombiningKind::MINIMUMF || kind == CombiningKind::MAXIMUMF)
          return fail(&op, "NaN-propagating reductions are not supported");
        if (isa<FloatType>(element) && !element.isF32() &&
            (kind == CombiningKind::ADD || kind == CombiningKind::MUL))
          return fail(&op, "only f32 float reductions are supported");
        for (unsigned lane = 0; lane < lanes; ++lane) {
          // Sequential order, element 0 first (any order is exact for the
          // integer and min/max kinds; f32 add/mul follow this order).
          Word acc = source.at(lane, 0);
          for (unsigned i = 1; i < source.width; ++i)
            acc = combine(kind, acc, source.at(lane, i));
          if (reduction.getAcc())
            acc = combine(kind, get(reduction.getAcc()).at(lane), acc);
          out.at(lane) = acc;
        }
        values[reduction.getResult()] = std::move(out);
        return success();
      })
      .Default([&](Operation *) { return failUnsupported(&op); });
}
