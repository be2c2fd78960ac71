//===- QuantToolFuzzer.cpp - The .npy reader and fp4-quant's options ------===//
//
// Input: a first line of fp4-quant arguments (space separated; a leading
// `stats` picks that subcommand, anything else is `quantize`), then the
// bytes of the input .npy. Each input is
//   1. parsed by parseNpy; an array that parses must serialize and parse
//      back to the same dtype, shape and bytes;
//   2. written to a private temporary directory and run through fp4-quant's
//      own entry point (runQuantTool) with the arguments, the input path
//      and an output prefix in that directory appended, so the command-line
//      parser, the option checks, the quantizers and the all-or-nothing
//      writer see exactly what the tool sees. Any extra positional argument
//      in the first line makes the tool refuse the command line, so nothing
//      is written outside the directory.
// A crash, a sanitizer report or a failed round trip is a finding.
//
//===----------------------------------------------------------------------===//

#include "QuantTool.h"

#include "fp4train/Numerics/Npy.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <unistd.h>
#include <vector>

using namespace fp4train::numerics;

namespace {

/// The private directory of this process, removed at exit.
const std::string &getScratchDirectory() {
  static const std::string directory = [] {
    const char *tmp = std::getenv("TMPDIR");
    std::string name =
        std::string(tmp && *tmp ? tmp : "/tmp") + "/fp4-quant-fuzzer.XXXXXX";
    if (!::mkdtemp(name.data())) {
      std::perror("fuzzer setup: mkdtemp");
      std::abort();
    }
    static std::string removed = name;
    std::atexit([] {
      for (const char *suffix : {"/in.npy", "/out.codes.npy", "/out.scales.npy",
                                 "/out.deq.npy", "/out.global.npy"})
        ::unlink((removed + suffix).c_str());
      ::rmdir(removed.c_str());
    });
    return name;
  }();
  return directory;
}

void checkNpyRoundTrip(const uint8_t *data, size_t size) {
  Expected<NpyArray> array = parseNpy(data, size, "input");
  if (!array)
    return;
  std::vector<uint8_t> written =
      serializeNpy(array->dtype, array->shape, array->bytes.data());
  Expected<NpyArray> back = parseNpy(written.data(), written.size(), "copy");
  if (back && back->dtype == array->dtype && back->shape == array->shape &&
      back->bytes == array->bytes)
    return;
  std::fprintf(stderr,
               "fuzzer finding: a parsed .npy does not round-trip%s%s\n",
               back ? "" : ": ", back ? "" : back.error().message.c_str());
  std::abort();
}

std::vector<std::string> splitArguments(const std::string &line) {
  std::vector<std::string> words;
  size_t pos = 0;
  while (pos < line.size()) {
    size_t end = line.find(' ', pos);
    if (end == std::string::npos)
      end = line.size();
    if (end > pos)
      words.push_back(line.substr(pos, end - pos));
    pos = end + 1;
  }
  return words;
}

} // namespace

extern "C" int LLVMFuzzerInitialize(int *, char ***) {
  (void)getScratchDirectory();
  // stats prints a table per input; the findings go to stderr.
  if (!std::freopen("/dev/null", "w", stdout))
    std::perror("fuzzer setup: /dev/null");
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const uint8_t *newline =
      static_cast<const uint8_t *>(std::memchr(data, '\n', size));
  size_t lineSize = newline ? size_t(newline - data) : 0;
  const uint8_t *npy = newline ? newline + 1 : data;
  size_t npySize = size - size_t(npy - data);
  checkNpyRoundTrip(npy, npySize);

  // Arguments are text: a NUL would cut one short in argv.
  std::string line(reinterpret_cast<const char *>(data), lineSize);
  if (line.find('\0') != std::string::npos)
    return 0;
  std::vector<std::string> words = splitArguments(line);
  std::string command = "quantize";
  if (!words.empty() && (words[0] == "stats" || words[0] == "quantize")) {
    command = words[0];
    words.erase(words.begin());
  }

  const std::string &directory = getScratchDirectory();
  std::string input = directory + "/in.npy";
  FILE *file = std::fopen(input.c_str(), "wb");
  if (!file || std::fwrite(npy, 1, npySize, file) != npySize ||
      std::fclose(file) != 0) {
    std::perror("fuzzer setup: writing the input");
    std::abort();
  }

  std::vector<std::string> args = {"fp4-quant", command};
  args.insert(args.end(), words.begin(), words.end());
  args.push_back(input);
  if (command == "quantize")
    args.push_back(directory + "/out");
  std::vector<char *> argv;
  for (std::string &arg : args)
    argv.push_back(arg.data());
  argv.push_back(nullptr);
  (void)fp4train::runQuantTool(int(args.size()), argv.data());
  return 0;
}
