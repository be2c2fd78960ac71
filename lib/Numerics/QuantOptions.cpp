//===- QuantOptions.cpp - fp4-quant's options as one request --------------===//

#include "fp4train/Numerics/QuantOptions.h"

#include "BlockLayout.h"

#include <cerrno>
#include <cstdlib>

using namespace fp4train::numerics;

/// Parses a whole decimal integer in [min, max].
static bool parseInteger(const std::string &text, long long min, long long max,
                         long long &value) {
  if (text.empty())
    return false;
  char *end = nullptr;
  errno = 0;
  value = std::strtoll(text.c_str(), &end, 10);
  return errno == 0 && *end == '\0' && value >= min && value <= max;
}

static bool parseUnsigned64(const std::string &text, uint64_t &value) {
  if (text.empty() || text[0] == '-')
    return false;
  char *end = nullptr;
  errno = 0;
  value = std::strtoull(text.c_str(), &end, 0);
  return errno == 0 && *end == '\0';
}

namespace {
/// The options of one request and how to name them in messages.
struct Options {
  const std::map<std::string, std::string> &values;
  const std::string &prefix;

  bool has(const std::string &name) const { return values.count(name); }
  const std::string &get(const std::string &name) const {
    return values.at(name);
  }
  std::string spell(const std::string &name) const { return prefix + name; }

  /// Parses the enumerated option `name` with `parse` into `out`; returns an
  /// error message naming the accepted spellings, or "".
  template <typename T, typename Parse>
  std::string parseEnum(const std::string &name, Parse parse,
                        const char *expected, T &out) const {
    std::optional<T> value = parse(get(name));
    if (!value)
      return "invalid " + spell(name) + " '" + get(name) + "' (expected " +
             expected + ")";
    out = *value;
    return "";
  }
};
} // namespace

static std::string makeRequest(const Options &cl, QuantRequest &request) {
  QuantConfig &quant = request.quant;
  if (!cl.has("format"))
    return "missing required option '" + cl.spell("format") + "'";
  std::string error =
      cl.parseEnum("format", parseFormat,
                   "mxfp4, nvfp4, mxfp8-e4m3 or mxfp8-e5m2", quant.format);
  if (!error.empty())
    return error;
  quant.blockSize = getDefaultBlockSize(quant.format);

  if (cl.has("scale-mode")) {
    if (quant.format == Format::NVFP4)
      return cl.spell("scale-mode") + " applies to the MX formats only";
    error = cl.parseEnum("scale-mode", parseScaleMode, "floor or rceil",
                         quant.scaleMode);
    if (!error.empty())
      return error;
  }
  if (cl.has("block")) {
    const std::string &block = cl.get("block");
    if (block == "16x16") {
      quant.blockSize = 16;
      quant.twoDimensional = true;
    } else if (block == "16" || block == "32") {
      quant.blockSize = std::stoi(block);
    } else {
      return "invalid " + cl.spell("block") + " '" + block +
             "' (expected 16, 32 or 16x16)";
    }
  }
  if (cl.has("axis")) {
    long long axis;
    if (!parseInteger(cl.get("axis"), -64, 63, axis))
      return "invalid " + cl.spell("axis") + " '" + cl.get("axis") + "'";
    quant.axis = axis;
  }
  if (cl.has("rounding")) {
    error =
        cl.parseEnum("rounding", parseRounding, "rne or sr", quant.rounding);
    if (!error.empty())
      return error;
  }
  if (cl.has("seed")) {
    // One seed keys both random streams: [SR1] words and [H1] random signs
    // (whose value is checked with the other rotation options).
    bool randomSigns = cl.has("signs") && cl.get("signs") == "random";
    if (quant.rounding != Rounding::Stochastic && !randomSigns)
      return cl.spell("seed") + " requires " + cl.spell("rounding") +
             " sr or " + cl.spell("signs") + " random";
    if (!parseUnsigned64(cl.get("seed"), quant.seed))
      return "invalid " + cl.spell("seed") + " '" + cl.get("seed") + "'";
  }
  if (cl.has("amax")) {
    const std::string &text = cl.get("amax");
    char *end = nullptr;
    float amax = std::strtof(text.c_str(), &end);
    if (text.empty() || *end != '\0')
      return "invalid " + cl.spell("amax") + " '" + text + "'";
    quant.amax = amax;
  }

  if (!cl.has("hadamard")) {
    for (const char *option : {"signs", "step", "unrotate"})
      if (cl.has(option))
        return cl.spell(option) + " requires " + cl.spell("hadamard");
    return "";
  }
  HadamardConfig rotation;
  long long size;
  if (!parseInteger(cl.get("hadamard"), 0, 1 << 20, size) ||
      !isValidHadamardSize(size))
    return "invalid " + cl.spell("hadamard") + " '" + cl.get("hadamard") +
           "' (expected 16, 32, 64, 128 or 256)";
  rotation.size = size;
  rotation.axis = quant.axis;
  if (cl.has("signs")) {
    error = cl.parseEnum("signs", parseHadamardSigns, "none, fixed or random",
                         rotation.signs);
    if (!error.empty())
      return error;
  }
  if (cl.has("step")) {
    if (rotation.signs != HadamardSigns::Random)
      return cl.spell("step") + " requires " + cl.spell("signs") + " random";
    if (!parseUnsigned64(cl.get("step"), rotation.step))
      return "invalid " + cl.spell("step") + " '" + cl.get("step") + "'";
  }
  // Random signs are keyed by the same seed as SR when one is given.
  rotation.seed = quant.seed;
  request.hadamard = rotation;
  request.unrotate = cl.has("unrotate");
  return "";
}

Expected<QuantRequest> fp4train::numerics::parseQuantOptions(
    const std::map<std::string, std::string> &options,
    const std::string &prefix) {
  QuantRequest request;
  std::string error = makeRequest(Options{options, prefix}, request);
  if (!error.empty())
    return makeError(error);
  return request;
}

Expected<QuantResult>
fp4train::numerics::runQuantRequest(const float *data,
                                    const std::vector<int64_t> &shape,
                                    const QuantRequest &request) {
  // Check the block layout before rotating so a bad shape names the block.
  Expected<QuantConfig> validated = validateConfig(shape, request.quant);
  if (!validated)
    return validated.error();
  std::vector<float> rotated;
  if (request.hadamard) {
    rotated.assign(data, data + getNumElements(shape));
    Status status = hadamardRotate(rotated.data(), shape, *request.hadamard);
    if (!status)
      return status.error();
    data = rotated.data();
  }
  Expected<QuantizedTensor> quantized = quantize(data, shape, request.quant);
  if (!quantized)
    return quantized.error();
  QuantResult result{std::move(*quantized), {}};
  result.dequantized = dequantize(result.quantized);
  if (request.hadamard && request.unrotate) {
    Status status = hadamardRotate(result.dequantized.data(), shape,
                                   *request.hadamard, /*inverse=*/true);
    if (!status)
      return status.error();
  }
  return result;
}
