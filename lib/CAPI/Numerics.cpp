//===- Numerics.cpp - C API: block quantization on caller buffers ---------===//

#include "fp4train-c/Numerics.h"

#include "Diagnostics.h"

#include "fp4train/Numerics/QuantOptions.h"

#include "mlir/CAPI/Support.h"

#include <algorithm>
#include <cstring>
#include <numeric>

using namespace mlir::fp4train;
namespace numerics = ::fp4train::numerics;

void fp4trainQuantOptionsInit(FP4TrainQuantOptions *options) {
  std::memset(options, 0, sizeof(*options));
  options->axis = -1;
}

/// fp4-quant's option map for `options`: only what the caller gave.
static std::map<std::string, std::string>
getOptionMap(const FP4TrainQuantOptions &options) {
  std::map<std::string, std::string> map;
  auto text = [&](const char *name, const char *value) {
    if (value)
      map[name] = value;
  };
  text("format", options.format);
  text("scale-mode", options.scaleMode);
  text("block", options.block);
  text("rounding", options.rounding);
  text("signs", options.signs);
  map["axis"] = std::to_string(options.axis);
  if (options.hasSeed)
    map["seed"] = std::to_string(options.seed);
  if (options.hasAmax) {
    // Bit-exact round trip through text.
    char buffer[32];
    std::snprintf(buffer, sizeof(buffer), "%.9g", options.amax);
    map["amax"] = buffer;
  }
  if (options.hadamard)
    map["hadamard"] = std::to_string(options.hadamard);
  if (options.hasStep)
    map["step"] = std::to_string(options.step);
  if (options.unrotate)
    map["unrotate"] = "";
  return map;
}

namespace {
/// A request checked against its tensor's shape.
struct CheckedRequest {
  numerics::QuantRequest request;
  /// The block quantization validated against `shape` (axis normalized).
  numerics::QuantConfig config;
  std::vector<int64_t> shape;
};
} // namespace

/// Checks `options` and the shape; reports and returns nothing on error.
static std::optional<CheckedRequest>
checkRequest(const FP4TrainQuantOptions *options, intptr_t rank,
             const int64_t *shape, MlirStringCallback onError, void *userData) {
  if (!options || rank < 0 || (rank > 0 && !shape)) {
    capi::reportError(onError, userData,
                      "quantization needs options and a shape");
    return std::nullopt;
  }
  std::vector<int64_t> shapeVector(shape, shape + rank);
  for (int64_t size : shapeVector) {
    if (size < 0) {
      capi::reportError(onError, userData, "negative dimension size");
      return std::nullopt;
    }
  }
  numerics::Expected<numerics::QuantRequest> request =
      numerics::parseQuantOptions(getOptionMap(*options), /*prefix=*/"");
  if (!request) {
    capi::reportError(onError, userData, request.error().message);
    return std::nullopt;
  }
  numerics::Expected<numerics::QuantConfig> config =
      numerics::validateConfig(shapeVector, request->quant);
  if (!config) {
    capi::reportError(onError, userData, config.error().message);
    return std::nullopt;
  }
  return CheckedRequest{*request, *config, std::move(shapeVector)};
}

MlirLogicalResult fp4trainQuantizeGetScalesShape(
    const FP4TrainQuantOptions *options, intptr_t rank, const int64_t *shape,
    int64_t *scalesShape, MlirStringCallback onError, void *userData) {
  std::optional<CheckedRequest> checked =
      checkRequest(options, rank, shape, onError, userData);
  if (!checked)
    return mlirLogicalResultFailure();
  std::vector<int64_t> scales =
      numerics::getScaleShape(checked->shape, checked->config);
  std::copy(scales.begin(), scales.end(), scalesShape);
  return mlirLogicalResultSuccess();
}

MlirLogicalResult fp4trainQuantize(const FP4TrainQuantOptions *options,
                                   intptr_t rank, const int64_t *shape,
                                   const float *data, uint8_t *codes,
                                   uint8_t *scales, float *globalScale,
                                   float *dequantized,
                                   MlirStringCallback onError, void *userData) {
  std::optional<CheckedRequest> checked =
      checkRequest(options, rank, shape, onError, userData);
  if (!checked)
    return mlirLogicalResultFailure();
  numerics::Expected<numerics::QuantResult> result =
      numerics::runQuantRequest(data, checked->shape, checked->request);
  if (!result) {
    capi::reportError(onError, userData, result.error().message);
    return mlirLogicalResultFailure();
  }
  const numerics::QuantizedTensor &q = result->quantized;
  std::copy(q.codes.begin(), q.codes.end(), codes);
  std::copy(q.scales.begin(), q.scales.end(), scales);
  if (globalScale) {
    globalScale[0] = q.amax;
    globalScale[1] = q.globalDecodeScale;
  }
  if (dequantized)
    std::copy(result->dequantized.begin(), result->dequantized.end(),
              dequantized);
  return mlirLogicalResultSuccess();
}

MlirLogicalResult
fp4trainDequantize(const FP4TrainQuantOptions *options, intptr_t rank,
                   const int64_t *shape, const uint8_t *codes,
                   const uint8_t *scales, float globalDecodeScale, float *out,
                   MlirStringCallback onError, void *userData) {
  std::optional<CheckedRequest> checked =
      checkRequest(options, rank, shape, onError, userData);
  if (!checked)
    return mlirLogicalResultFailure();
  const std::vector<int64_t> &shapeVector = checked->shape;
  const numerics::QuantRequest *request = &checked->request;
  numerics::QuantizedTensor tensor;
  tensor.config = checked->config;
  tensor.shape = shapeVector;
  tensor.scaleShape = numerics::getScaleShape(shapeVector, checked->config);
  auto count = [](const std::vector<int64_t> &s) {
    return std::accumulate(s.begin(), s.end(), int64_t(1),
                           std::multiplies<int64_t>());
  };
  tensor.codes.assign(codes, codes + count(shapeVector));
  tensor.scales.assign(scales, scales + count(tensor.scaleShape));
  tensor.globalDecodeScale = checked->config.format == numerics::Format::NVFP4
                                 ? globalDecodeScale
                                 : 1.0f;
  std::vector<float> values = numerics::dequantize(tensor);
  if (request->hadamard && request->unrotate) {
    numerics::Status status = numerics::hadamardRotate(
        values.data(), shapeVector, *request->hadamard, true);
    if (!status) {
      capi::reportError(onError, userData, status.error().message);
      return mlirLogicalResultFailure();
    }
  }
  std::copy(values.begin(), values.end(), out);
  return mlirLogicalResultSuccess();
}

MlirLogicalResult
fp4trainHadamardRotate(intptr_t rank, const int64_t *shape, float *data,
                       int64_t size, const char *signs, uint64_t seed,
                       uint64_t step, int64_t axis, bool inverse,
                       MlirStringCallback onError, void *userData) {
  if (rank < 0 || (rank > 0 && !shape)) {
    capi::reportError(onError, userData, "a rotation needs a shape");
    return mlirLogicalResultFailure();
  }
  numerics::HadamardConfig config;
  if (!numerics::isValidHadamardSize(size)) {
    capi::reportError(onError, userData,
                      "invalid hadamard size " + std::to_string(size) +
                          " (expected 16, 32, 64, 128 or 256)");
    return mlirLogicalResultFailure();
  }
  config.size = size;
  if (signs) {
    std::optional<numerics::HadamardSigns> parsed =
        numerics::parseHadamardSigns(signs);
    if (!parsed) {
      capi::reportError(onError, userData,
                        std::string("invalid signs '") + signs +
                            "' (expected none, fixed or random)");
      return mlirLogicalResultFailure();
    }
    config.signs = *parsed;
  }
  config.seed = seed;
  config.step = step;
  config.axis = axis;
  numerics::Status status = numerics::hadamardRotate(
      data, std::vector<int64_t>(shape, shape + rank), config, inverse);
  if (!status) {
    capi::reportError(onError, userData, status.error().message);
    return mlirLogicalResultFailure();
  }
  return mlirLogicalResultSuccess();
}
