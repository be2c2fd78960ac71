//===- Runtime.cpp - CPU runtime entry points of the fp4train ops ---------===//
//
// Each entry point turns its memref descriptors into dense row-major buffers
// (a view when the memref already is one, a copy otherwise), calls the
// numerics library and writes the result back. The lowering validates every
// configuration at compile time, so a failure here is a misuse of the C ABI:
// it is reported and aborts, as MLIR's own runtime libraries do.
//
//===----------------------------------------------------------------------===//

#include "fp4train/Runtime/Runtime.h"

#include "fp4train/Numerics/BlockGemm.h"
#include "fp4train/Numerics/BlockQuant.h"
#include "fp4train/Numerics/Hadamard.h"
#include "fp4train/Numerics/Storage.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace numerics = ::fp4train::numerics;

namespace {

[[noreturn]] void fail(const char *entry, const std::string &message) {
  std::fprintf(stderr, "fp4train runtime: %s: %s\n", entry, message.c_str());
  std::abort();
}

/// A memref seen as a dense row-major array. Reading borrows the memref's
/// data when it is already dense and copies otherwise; writing goes to the
/// memref directly when dense and through `store` otherwise.
template <typename T> class DenseView {
public:
  explicit DenseView(UnrankedMemRefType<T> *memref)
      : ref(*memref), shape(ref.sizes, ref.sizes + ref.rank) {
    count = 1;
    for (int64_t size : shape)
      count *= size;
    dense = true;
    for (int64_t d = ref.rank - 1, stride = 1; d >= 0; --d) {
      if (shape[d] != 1 && ref.strides[d] != stride)
        dense = false;
      stride *= shape[d];
    }
  }

  const std::vector<int64_t> &getShape() const { return shape; }
  int64_t size() const { return count; }

  /// The elements in row-major order.
  T *data() {
    if (dense)
      return ref.data + ref.offset;
    if (copy.empty()) {
      copy.resize(count);
      forEachElement(
          [&](int64_t linear, T *element) { copy[linear] = *element; });
    }
    return copy.data();
  }

  /// Writes back what was written through data() when the memref is strided.
  void store() {
    if (!dense)
      forEachElement(
          [&](int64_t linear, T *element) { *element = copy[linear]; });
  }

private:
  template <typename Fn> void forEachElement(Fn fn) {
    std::vector<int64_t> index(ref.rank, 0);
    for (int64_t linear = 0; linear < count; ++linear) {
      int64_t offset = ref.offset;
      for (int64_t d = 0; d < ref.rank; ++d)
        offset += index[d] * ref.strides[d];
      fn(linear, ref.data + offset);
      for (int64_t d = ref.rank - 1; d >= 0 && ++index[d] == shape[d]; --d)
        index[d] = 0;
    }
  }

  DynamicMemRefType<T> ref;
  std::vector<int64_t> shape;
  int64_t count;
  bool dense;
  std::vector<T> copy;
};

numerics::Format toFormat(const char *entry, int32_t format) {
  switch (format) {
  case FP4TRAIN_RT_MXFP4:
    return numerics::Format::MXFP4;
  case FP4TRAIN_RT_NVFP4:
    return numerics::Format::NVFP4;
  case FP4TRAIN_RT_MXFP8_E4M3:
    return numerics::Format::MXFP8E4M3;
  case FP4TRAIN_RT_MXFP8_E5M2:
    return numerics::Format::MXFP8E5M2;
  }
  fail(entry, "unknown format " + std::to_string(format));
}

/// The configuration of the arguments, validated against `shape`.
numerics::QuantConfig checkedConfig(const char *entry,
                                    const std::vector<int64_t> &shape,
                                    const numerics::QuantConfig &config) {
  numerics::Expected<numerics::QuantConfig> checked =
      numerics::validateConfig(shape, config);
  if (!checked)
    fail(entry, checked.error().message);
  return *checked;
}

void copyBytes(DenseView<int8_t> &to, const std::vector<uint8_t> &from,
               const char *entry, const char *what) {
  if (size_t(to.size()) != from.size())
    fail(entry, std::string(what) + " has " + std::to_string(to.size()) +
                    " elements, expected " + std::to_string(from.size()));
  std::memcpy(to.data(), from.data(), from.size());
  to.store();
}

} // namespace

numerics::QuantConfig
fp4train::runtime::makeQuantConfig(int32_t format, int64_t blockSize,
                                   int64_t axis, int32_t flags, int64_t seed,
                                   float amax) {
  numerics::QuantConfig config;
  config.format = toFormat("quantize", format);
  config.blockSize = blockSize;
  config.axis = axis;
  config.twoDimensional = flags & FP4TRAIN_RT_TWO_D;
  config.scaleMode = flags & FP4TRAIN_RT_RCEIL ? numerics::ScaleMode::RCeil
                                               : numerics::ScaleMode::Floor;
  config.rounding = flags & FP4TRAIN_RT_STOCHASTIC
                        ? numerics::Rounding::Stochastic
                        : numerics::Rounding::NearestEven;
  config.seed = uint64_t(seed);
  if (flags & FP4TRAIN_RT_SUPPLIED_AMAX)
    config.amax = amax;
  else if (flags & FP4TRAIN_RT_NO_GLOBAL)
    // [NV1] with amax_tensor = 448·6 gives S_enc = S_dec = 1 exactly: the
    // two-level rule without its global level.
    config.amax = 448.0f * 6.0f;
  return config;
}

float _mlir_ciface_fp4train_rt_quantize(UnrankedMemRefType<float> *input,
                                        UnrankedMemRefType<int8_t> *codes,
                                        UnrankedMemRefType<int8_t> *scales,
                                        int32_t format, int64_t blockSize,
                                        int64_t axis, int32_t flags,
                                        int64_t seed, float amax,
                                        UnrankedMemRefType<int64_t> *part) {
  const char *entry = "quantize";
  DenseView<float> x(input);
  numerics::QuantConfig config = fp4train::runtime::makeQuantConfig(
      format, blockSize, axis, flags, seed, amax);
  DenseView<int64_t> partView(part);
  if (partView.size() != 0) {
    size_t rank = x.getShape().size();
    if (partView.size() != int64_t(2 * rank))
      fail(entry, "a part needs an origin and a logical size per dimension");
    const int64_t *values = partView.data();
    config.origin.assign(values, values + rank);
    config.logicalShape.assign(values + rank, values + 2 * rank);
  }
  config = checkedConfig(entry, x.getShape(), config);
  // Buffers are reused across calls (training steps quantize the same shapes
  // over and over); one per thread keeps concurrent callers apart.
  thread_local numerics::QuantizedTensor quantized;
  numerics::Status status =
      numerics::quantizeInto(x.data(), x.getShape(), config, quantized);
  if (!status)
    fail(entry, status.error().message);
  // [PK1] The codes are stored packed.
  thread_local std::vector<uint8_t> stored;
  numerics::ElementType element = numerics::getElementType(config.format);
  stored.resize(size_t(numerics::getStoredBytes(element, quantized.shape)));
  int64_t rowLength = quantized.shape.empty() ? 1 : quantized.shape.back();
  numerics::packCodes(element, quantized.codes.data(),
                      int64_t(quantized.codes.size()) / rowLength, rowLength,
                      stored.data());
  DenseView<int8_t> codeView(codes), scaleView(scales);
  copyBytes(codeView, stored, entry, "codes");
  copyBytes(scaleView, quantized.scales, entry, "scales");
  bool hasGlobal = config.format == numerics::Format::NVFP4 &&
                   !(flags & FP4TRAIN_RT_NO_GLOBAL);
  return hasGlobal ? quantized.globalDecodeScale : 1.0f;
}

void _mlir_ciface_fp4train_rt_dequantize(UnrankedMemRefType<int8_t> *codes,
                                         UnrankedMemRefType<int8_t> *scales,
                                         UnrankedMemRefType<float> *result,
                                         int32_t format, int64_t blockSize,
                                         int64_t axis, int32_t flags,
                                         float globalDecode) {
  const char *entry = "dequantize";
  DenseView<int8_t> codeView(codes), scaleView(scales);
  DenseView<float> out(result);
  numerics::QuantizedTensor quantized;
  quantized.shape = out.getShape();
  quantized.config =
      checkedConfig(entry, quantized.shape,
                    fp4train::runtime::makeQuantConfig(format, blockSize, axis,
                                                       flags, 0, 0.0f));
  quantized.scaleShape = scaleView.getShape();
  auto bytes = [](DenseView<int8_t> &view) {
    auto *data = reinterpret_cast<const uint8_t *>(view.data());
    return std::vector<uint8_t>(data, data + view.size());
  };
  numerics::ElementType element =
      numerics::getElementType(quantized.config.format);
  if (codeView.size() != numerics::getStoredBytes(element, quantized.shape))
    fail(entry, "the codes do not store a tensor of the result's shape");
  quantized.codes =
      numerics::unpackCodes(element, bytes(codeView), quantized.shape);
  quantized.scales = bytes(scaleView);
  quantized.globalDecodeScale = globalDecode;
  std::vector<float> values = numerics::dequantize(quantized);
  std::memcpy(out.data(), values.data(), values.size() * sizeof(float));
  out.store();
}

void _mlir_ciface_fp4train_rt_hadamard(UnrankedMemRefType<float> *input,
                                       UnrankedMemRefType<float> *result,
                                       UnrankedMemRefType<float> *signs,
                                       int64_t size, int64_t dim,
                                       int32_t signMode, int64_t seed,
                                       int64_t step, int32_t inverse) {
  const char *entry = "hadamard";
  DenseView<float> x(input), y(result);
  if (x.getShape() != y.getShape())
    fail(entry, "input and result shapes differ");
  float *data = y.data();
  std::memcpy(data, x.data(), x.size() * sizeof(float));

  numerics::HadamardConfig config;
  config.size = size;
  config.axis = dim;
  config.seed = uint64_t(seed);
  config.step = uint64_t(step);
  switch (signMode) {
  case FP4TRAIN_RT_SIGNS_NONE:
  case FP4TRAIN_RT_SIGNS_EXPLICIT:
    config.signs = numerics::HadamardSigns::None;
    break;
  case FP4TRAIN_RT_SIGNS_FIXED:
    config.signs = numerics::HadamardSigns::Fixed;
    break;
  case FP4TRAIN_RT_SIGNS_RANDOM:
    config.signs = numerics::HadamardSigns::Random;
    break;
  default:
    fail(entry, "unknown sign mode " + std::to_string(signMode));
  }

  // [H1] applies the signs first (forward) or last (inverse), each an exact
  // multiply by ±1, around the transform and the normalization; so an
  // explicit vector is applied here around the library's unsigned rotation,
  // giving the same bits as a rotation that carried it.
  const std::vector<int64_t> &shape = x.getShape();
  auto multiplySigns = [&] {
    DenseView<float> signView(signs);
    if (signView.size() != size)
      fail(entry,
           "the sign vector must have " + std::to_string(size) + " elements");
    const float *s = signView.data();
    int64_t inner = 1;
    for (size_t d = dim + 1; d < shape.size(); ++d)
      inner *= shape[d];
    for (int64_t i = 0; i < x.size(); ++i)
      data[i] *= s[(i / inner) % size];
  };
  bool explicitSigns = signMode == FP4TRAIN_RT_SIGNS_EXPLICIT;
  if (explicitSigns && !inverse)
    multiplySigns();
  numerics::Status status =
      numerics::hadamardRotate(data, shape, config, inverse);
  if (!status)
    fail(entry, status.error().message);
  if (explicitSigns && inverse)
    multiplySigns();
  y.store();
}

void _mlir_ciface_fp4train_rt_scaled_matmul(
    UnrankedMemRefType<int8_t> *lhsCodes, UnrankedMemRefType<int8_t> *lhsScales,
    UnrankedMemRefType<int8_t> *rhsCodes, UnrankedMemRefType<int8_t> *rhsScales,
    UnrankedMemRefType<float> *acc, UnrankedMemRefType<float> *result,
    int32_t lhsFormat, int32_t lhsFlags, float lhsGlobalDecode,
    int32_t rhsFormat, int32_t rhsFlags, float rhsGlobalDecode,
    int64_t blockSize) {
  const char *entry = "scaled_matmul";
  DenseView<int8_t> a(lhsCodes), sa(lhsScales), b(rhsCodes), sb(rhsScales);
  DenseView<float> c0(acc), c(result);
  const std::vector<int64_t> &shape = c.getShape();
  int64_t rank = int64_t(shape.size());
  if (rank < 2 || a.getShape().size() != shape.size() ||
      b.getShape().size() != shape.size() || c0.getShape() != shape)
    fail(entry, "operand ranks do not match the result");
  int64_t m = shape[rank - 2], n = shape[rank - 1];
  int64_t k = sa.getShape().empty() ? 0 : sa.getShape().back() * blockSize;
  int64_t batches = c.size() / (m * n);

  // One GEMM per batch; a 2-D-blocked operand's scale of (row, K block) is
  // that of its 16x16 tile (scaleRowGroup = block).
  // [PK1] Stored E2M1 codes are unpacked to one per byte, the operand
  // layout of blockScaledGemm (whose kernels pack panels of their own).
  thread_local std::vector<uint8_t> unpacked[2];
  auto operand = [&](DenseView<int8_t> &codes, DenseView<int8_t> &scales,
                     int32_t format, int32_t flags, float globalDecode,
                     int64_t rows, unsigned index) {
    numerics::Format f = toFormat(entry, format);
    bool twoD = flags & FP4TRAIN_RT_TWO_D;
    numerics::ElementType element = numerics::getElementType(f);
    int64_t total = batches * rows;
    if (codes.size() != total * numerics::getStoredRowBytes(element, k))
      fail(entry, "the codes of an operand do not store a " +
                      std::to_string(rows) + " x " + std::to_string(k) +
                      " matrix per batch");
    unpacked[index].resize(size_t(total * k));
    numerics::unpackCodes(element,
                          reinterpret_cast<const uint8_t *>(codes.data()),
                          total, k, unpacked[index].data());
    numerics::GemmOperand op;
    op.codes = unpacked[index].data();
    op.rows = rows;
    op.k = k;
    op.elementType = numerics::getElementType(f);
    op.scaleType = numerics::getScaleType(f);
    op.blockSize = blockSize;
    op.scales = reinterpret_cast<const uint8_t *>(scales.data());
    op.scaleRowGroup = twoD ? blockSize : 1;
    op.scaleRowStride = k / blockSize;
    op.globalDecodeScale = globalDecode;
    return op;
  };
  numerics::GemmOperand lhs =
      operand(a, sa, lhsFormat, lhsFlags, lhsGlobalDecode, m, 0);
  numerics::GemmOperand rhs =
      operand(b, sb, rhsFormat, rhsFlags, rhsGlobalDecode, n, 1);
  int64_t lhsScaleBatch = sa.size() / batches,
          rhsScaleBatch = sb.size() / batches;
  const float *accData = c0.data();
  float *out = c.data();
  for (int64_t batch = 0; batch < batches; ++batch) {
    numerics::GemmOperand lhsBatch = lhs, rhsBatch = rhs;
    lhsBatch.codes += batch * m * k;
    lhsBatch.scales += batch * lhsScaleBatch;
    rhsBatch.codes += batch * n * k;
    rhsBatch.scales += batch * rhsScaleBatch;
    numerics::Status status = numerics::blockScaledGemm(
        lhsBatch, rhsBatch, accData + batch * m * n, out + batch * m * n);
    if (!status)
      fail(entry, status.error().message);
  }
  c.store();
}

/// `memrefCopy` of MLIR's C runner utilities: bufferization lowers copies
/// between buffers of different layouts (the zero padding and slicing around
/// block-scaled GEMMs) to calls of it. Provided here rather than by linking
/// libmlir_c_runner_utils.so, which depends on libMLIR.so and would load a
/// second copy of MLIR next to the static one every JIT host links.
static void copyMemref(int64_t elementSize, UnrankedMemRefType<char> *source,
                       UnrankedMemRefType<char> *destination) {
  DynamicMemRefType<char> src(*source), dst(*destination);
  int64_t rank = src.rank;
  char *srcBase = src.data + src.offset * elementSize;
  char *dstBase = dst.data + dst.offset * elementSize;
  std::vector<int64_t> index(rank, 0);
  for (int64_t dim = 0; dim < rank; ++dim)
    if (src.sizes[dim] == 0)
      return;
  // The innermost dimension is copied as one run when both are unit-strided.
  bool innerRuns =
      rank > 0 && src.strides[rank - 1] == 1 && dst.strides[rank - 1] == 1;
  int64_t runLength = innerRuns ? src.sizes[rank - 1] : 1;
  int64_t outerRank = innerRuns ? rank - 1 : rank;
  while (true) {
    int64_t srcOffset = 0, dstOffset = 0;
    for (int64_t dim = 0; dim < outerRank; ++dim) {
      srcOffset += index[dim] * src.strides[dim];
      dstOffset += index[dim] * dst.strides[dim];
    }
    std::memcpy(dstBase + dstOffset * elementSize,
                srcBase + srcOffset * elementSize, runLength * elementSize);
    int64_t dim = outerRank - 1;
    for (; dim >= 0; --dim) {
      if (++index[dim] < src.sizes[dim])
        break;
      index[dim] = 0;
    }
    if (dim < 0)
      return;
  }
}

/// The first failed check of the current call on this thread ([IDX1]).
static thread_local std::optional<fp4train::runtime::IndexError> indexError;

void fp4train_rt_index_error(int64_t site, int64_t dim, int64_t index,
                             int64_t size) {
  if (!indexError)
    indexError = fp4train::runtime::IndexError{site, dim, index, size};
}

std::optional<fp4train::runtime::IndexError>
fp4train::runtime::takeIndexError() {
  std::optional<IndexError> error = indexError;
  indexError.reset();
  return error;
}

std::vector<fp4train::runtime::Symbol> fp4train::runtime::getSymbols() {
  return {
      {"memrefCopy", reinterpret_cast<void *>(&copyMemref)},
      {kIndexErrorFunction, reinterpret_cast<void *>(&fp4train_rt_index_error)},
      {"_mlir_ciface_fp4train_rt_quantize",
       reinterpret_cast<void *>(&_mlir_ciface_fp4train_rt_quantize)},
      {"_mlir_ciface_fp4train_rt_dequantize",
       reinterpret_cast<void *>(&_mlir_ciface_fp4train_rt_dequantize)},
      {"_mlir_ciface_fp4train_rt_hadamard",
       reinterpret_cast<void *>(&_mlir_ciface_fp4train_rt_hadamard)},
      {"_mlir_ciface_fp4train_rt_scaled_matmul",
       reinterpret_cast<void *>(&_mlir_ciface_fp4train_rt_scaled_matmul)},
  };
}
