//===- QuantTool.cpp - fp4-quant: quantize .npy tensors, report the error -===//
//
// A command-line front end to the numerics library for people studying block
// formats:
//
//   fp4-quant quantize --format F [options] IN.npy OUT
//       writes OUT.codes.npy, OUT.scales.npy, OUT.deq.npy (and, for nvfp4,
//       OUT.global.npy holding [amax, S_dec]);
//   fp4-quant stats [--bf16] IN.npy
//       prints the quantization error of every format and scale mode, with and
//       without a 16- and 32-point Hadamard rotation, as a Markdown table.
//
// Every failure is one line on stderr and exit status 1. The tool is a
// library function so that the fuzzer of fuzz/ drives exactly this code.
//
//===----------------------------------------------------------------------===//

#include "QuantTool.h"

#include "fp4train/Numerics/BlockQuant.h"
#include "fp4train/Numerics/Files.h"
#include "fp4train/Numerics/Hadamard.h"
#include "fp4train/Numerics/Npy.h"
#include "fp4train/Numerics/QuantOptions.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

using namespace fp4train::numerics;

static const char kUsage[] =
    "usage: fp4-quant quantize --format mxfp4|nvfp4|mxfp8-e4m3|mxfp8-e5m2\n"
    "                          [--scale-mode floor|rceil] [--block "
    "16|32|16x16]\n"
    "                          [--axis N] [--rounding rne|sr]\n"
    "                          [--hadamard 16|32|64|128|256\n"
    "                           [--signs none|fixed|random [--step S]]\n"
    "                           [--unrotate]]\n"
    "                          [--seed N] [--amax A] [--bf16] IN.npy OUT\n"
    "       fp4-quant stats [--bf16] IN.npy\n"
    "\n"
    "quantize reads a float32 .npy (bfloat16 bits as uint16 with --bf16) and\n"
    "writes OUT.codes.npy (uint8, one code per element), OUT.scales.npy\n"
    "(uint8 scale codes), OUT.deq.npy (float32; rotated back only with\n"
    "--unrotate) and for nvfp4 OUT.global.npy (float32 [amax, S_dec]).\n"
    "Blocks run along the last axis unless --axis says otherwise.\n"
    "--seed (default 0) keys stochastic rounding and random Hadamard signs;\n"
    "it needs --rounding sr or --signs random.\n"
    "\n"
    "stats prints MSE, SNR, max abs error, the share of elements larger than\n"
    "their block can represent (clipped) and of blocks that quantize to all\n"
    "zeros, for every format and scale mode, without and with a 16/32-point\n"
    "Hadamard rotation (fixed signs) along the last axis.\n";

/// Prints a one-line error and returns the failing exit status.
static int fail(const std::string &message) {
  std::fprintf(stderr, "fp4-quant: error: %s\n", message.c_str());
  return 1;
}

namespace {

/// Parsed command line: options (without the leading dashes) and positionals.
struct CommandLine {
  std::map<std::string, std::string> options;
  std::vector<std::string> positional;
  bool has(const std::string &name) const { return options.count(name); }
};

/// Options that take a value, and flags, per subcommand.
struct OptionSpec {
  std::vector<std::string> valued;
  std::vector<std::string> flags;
};

} // namespace

static bool contains(const std::vector<std::string> &list,
                     const std::string &item) {
  for (const std::string &entry : list)
    if (entry == item)
      return true;
  return false;
}

/// Parses `--name value`, `--name=value` and `--flag`; returns an error
/// message or an empty string.
static std::string parseCommandLine(int argc, char **argv,
                                    const OptionSpec &spec,
                                    CommandLine &result) {
  for (int i = 2; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg.size() < 2 || arg.compare(0, 2, "--") != 0 || arg == "--") {
      result.positional.push_back(arg);
      continue;
    }
    std::string name = arg.substr(2), value;
    size_t equals = name.find('=');
    bool inlineValue = equals != std::string::npos;
    if (inlineValue) {
      value = name.substr(equals + 1);
      name.resize(equals);
    }
    if (contains(spec.flags, name)) {
      if (inlineValue)
        return "option '--" + name + "' takes no value";
      result.options[name] = "";
      continue;
    }
    if (!contains(spec.valued, name))
      return "unknown option '" + arg + "'";
    if (!inlineValue) {
      if (i + 1 >= argc)
        return "option '--" + name + "' needs a value";
      value = argv[++i];
    }
    result.options[name] = value;
  }
  return "";
}

/// Reads the input tensor as f32, honouring --bf16.
static Expected<NpyArray> readInput(const std::string &path, bool bf16) {
  Expected<NpyArray> array = readNpy(path);
  if (!array)
    return array;
  NpyDType expected = bf16 ? NpyDType::UInt16 : NpyDType::Float32;
  if (array->dtype != expected)
    return makeError(path + ": expected " +
                     (bf16 ? "uint16 bfloat16 bits ('<u2') with --bf16"
                           : "float32 ('<f4'), or uint16 bfloat16 bits with "
                             "--bf16") +
                     ", got '" + getNpyDescriptor(array->dtype) + "'");
  return array;
}

static int runQuantize(int argc, char **argv) {
  CommandLine cl;
  OptionSpec spec{{"format", "scale-mode", "block", "axis", "rounding", "seed",
                   "hadamard", "signs", "step", "amax"},
                  {"bf16", "unrotate"}};
  std::string error = parseCommandLine(argc, argv, spec, cl);
  if (!error.empty())
    return fail(error);
  Expected<QuantRequest> request = parseQuantOptions(cl.options);
  if (!request)
    return fail(request.error().message);
  if (cl.positional.size() != 2)
    return fail("expected an input .npy and an output prefix, got " +
                std::to_string(cl.positional.size()) + " positional arguments");
  const std::string &inputPath = cl.positional[0], &out = cl.positional[1];

  Expected<NpyArray> input = readInput(inputPath, cl.has("bf16"));
  if (!input)
    return fail(input.error().message);
  std::vector<float> data = input->toFloats();
  Expected<QuantResult> result =
      runQuantRequest(data.data(), input->shape, *request);
  if (!result)
    return fail(result.error().message);
  const QuantizedTensor *quantized = &result->quantized;
  const std::vector<float> &deq = result->dequantized;

  // All outputs or none: a failure on the last one must not leave the
  // first ones behind, looking like a complete result.
  std::vector<OutputFile> files = {
      {out + ".codes.npy", serializeNpy(NpyDType::UInt8, quantized->shape,
                                        quantized->codes.data())},
      {out + ".scales.npy", serializeNpy(NpyDType::UInt8, quantized->scaleShape,
                                         quantized->scales.data())},
      {out + ".deq.npy",
       serializeNpy(NpyDType::Float32, quantized->shape, deq.data())}};
  if (quantized->config.format == Format::NVFP4) {
    float global[2] = {quantized->amax, quantized->globalDecodeScale};
    files.push_back(
        {out + ".global.npy", serializeNpy(NpyDType::Float32, {2}, global)});
  }
  Status status = writeFiles(files);
  if (!status)
    return fail(status.error().message);
  return 0;
}

namespace {

/// Error figures of one configuration.
struct ErrorStats {
  double mse = 0, snrDb = 0, maxAbsError = 0, clippedPercent = 0,
         zeroBlocksPercent = 0;
};

} // namespace

/// Quantizes `data` (blocks along the last axis, optionally rotated first)
/// and measures the error against the unrotated original.
static Expected<ErrorStats> measure(const std::vector<float> &data,
                                    const std::vector<int64_t> &shape,
                                    const QuantConfig &config,
                                    int64_t hadamardSize) {
  std::vector<float> rotated = data;
  HadamardConfig rotation;
  rotation.size = hadamardSize;
  rotation.signs = HadamardSigns::Fixed;
  if (hadamardSize) {
    Status status = hadamardRotate(rotated.data(), shape, rotation);
    if (!status)
      return status.error();
  }
  Expected<QuantizedTensor> q = quantize(rotated.data(), shape, config);
  if (!q)
    return q.error();
  std::vector<float> deq = dequantize(*q);
  if (hadamardSize) {
    Status status = hadamardRotate(deq.data(), shape, rotation, true);
    if (!status)
      return status.error();
  }

  ErrorStats stats;
  double signal = 0, noise = 0;
  int64_t count = int64_t(data.size()), clipped = 0, zeroBlocks = 0;
  ElementType type = getElementType(config.format);
  uint8_t maxCode = getMaxFiniteCode(type);
  for (int64_t i = 0; i < count; ++i) {
    double error = double(deq[i]) - double(data[i]);
    signal += double(data[i]) * data[i];
    noise += error * error;
    stats.maxAbsError = std::max(stats.maxAbsError, std::fabs(error));
    // Blocks run along the (contiguous) last axis.
    float largest = dequantizeElement(config.format, maxCode,
                                      q->scales[i / config.blockSize],
                                      q->globalDecodeScale);
    clipped += std::fabs(rotated[i]) > largest;
  }
  uint8_t magnitudeMask = type == ElementType::E2M1 ? 0x7 : 0x7F;
  for (int64_t b = 0; b < count / config.blockSize; ++b) {
    bool allZero = true;
    for (int64_t j = 0; j < config.blockSize; ++j)
      allZero &= (q->codes[b * config.blockSize + j] & magnitudeMask) == 0;
    zeroBlocks += allZero;
  }
  stats.mse = count ? noise / double(count) : 0.0;
  stats.snrDb = 10.0 * std::log10(signal / noise);
  stats.clippedPercent = count ? 100.0 * double(clipped) / double(count) : 0.0;
  int64_t blocks = count / config.blockSize;
  stats.zeroBlocksPercent =
      blocks ? 100.0 * double(zeroBlocks) / double(blocks) : 0.0;
  return stats;
}

static int runStats(int argc, char **argv) {
  CommandLine cl;
  std::string error =
      parseCommandLine(argc, argv, OptionSpec{{}, {"bf16"}}, cl);
  if (!error.empty())
    return fail(error);
  if (cl.positional.size() != 1)
    return fail("expected one input .npy, got " +
                std::to_string(cl.positional.size()) + " positional arguments");
  Expected<NpyArray> input = readInput(cl.positional[0], cl.has("bf16"));
  if (!input)
    return fail(input.error().message);
  std::vector<float> data = input->toFloats();

  std::printf("| format | scale mode | hadamard | MSE | SNR (dB) | max abs err "
              "| clipped %% | zero blocks %% |\n"
              "|---|---|---|---|---|---|---|---|\n");
  const Format formats[] = {Format::MXFP4, Format::NVFP4, Format::MXFP8E4M3,
                            Format::MXFP8E5M2};
  for (Format format : formats) {
    std::vector<std::optional<ScaleMode>> modes = {std::nullopt};
    if (format != Format::NVFP4)
      modes = {ScaleMode::Floor, ScaleMode::RCeil};
    for (std::optional<ScaleMode> mode : modes) {
      for (int64_t hadamardSize : {0, 16, 32}) {
        QuantConfig config;
        config.format = format;
        config.blockSize = getDefaultBlockSize(format);
        config.scaleMode = mode.value_or(ScaleMode::Floor);
        std::string name = std::string(getFormatName(format));
        std::string modeName =
            mode ? std::string(getScaleModeName(*mode)) : "-";
        std::string rotation =
            hadamardSize ? std::to_string(hadamardSize) : "none";
        Expected<ErrorStats> stats =
            measure(data, input->shape, config, hadamardSize);
        if (!stats) {
          std::printf("| %s | %s | %s | n/a: %s |||||\n", name.c_str(),
                      modeName.c_str(), rotation.c_str(),
                      stats.error().message.c_str());
          continue;
        }
        std::printf("| %s | %s | %s | %.6g | %.2f | %.6g | %.3f | %.3f |\n",
                    name.c_str(), modeName.c_str(), rotation.c_str(),
                    stats->mse, stats->snrDb, stats->maxAbsError,
                    stats->clippedPercent, stats->zeroBlocksPercent);
      }
    }
  }
  return 0;
}

int fp4train::runQuantTool(int argc, char **argv) {
  if (argc < 2)
    return fail("expected a subcommand: quantize or stats (see --help)");
  std::string command = argv[1];
  if (command == "--help" || command == "-h" || command == "help") {
    std::fputs(kUsage, stdout);
    return 0;
  }
  if (command == "quantize")
    return runQuantize(argc, argv);
  if (command == "stats")
    return runStats(argc, argv);
  return fail("unknown subcommand '" + command +
              "' (expected quantize or stats)");
}
