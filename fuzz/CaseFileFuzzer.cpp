//===- CaseFileFuzzer.cpp - fp4-gpu-prepare's case files ------------------===//
//
// Input: the text of a case file. parseCaseFile must accept it or give an
// error naming a line; every case it accepts has a distinct name that is a
// plain file name, so the cubins fp4-gpu-prepare names after it stay inside
// --out ([PATH1], docs/robustness.md). A crash, a sanitizer report, an empty
// error or an accepted name that could leave the folder is a finding.
//
//===----------------------------------------------------------------------===//

#include "CaseFile.h"

#include "fp4train/Numerics/Files.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <set>
#include <string>

using namespace fp4train;

/// Nothing to set up (ReplayMain calls it as libFuzzer does).
extern "C" int LLVMFuzzerInitialize(int *, char ***) { return 0; }

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string_view text(reinterpret_cast<const char *>(data), size);
  numerics::Expected<std::vector<gpucheck::Case>> cases =
      gpucheck::parseCaseFile(text, "fuzz/cases.txt");
  if (!cases) {
    const std::string &message = cases.error().message;
    if (message.rfind("fuzz/cases.txt:", 0) != 0) {
      std::fprintf(stderr, "fuzzer finding: an error without its line: %s\n",
                   message.c_str());
      std::abort();
    }
    return 0;
  }
  std::set<std::string> names;
  for (const gpucheck::Case &c : *cases) {
    // What fp4-gpu-prepare joins to the output folder.
    std::string cubin = "cubins/" + c.name + ".kernels.cubin";
    bool escapes = !numerics::isPlainFileName(c.name) ||
                   c.name.find('/') != std::string::npos ||
                   cubin.find("/../") != std::string::npos;
    if (escapes || !names.insert(c.name).second ||
        (c.mode != "check" && c.mode != "timing") || c.file.empty() ||
        c.function.empty()) {
      std::fprintf(stderr, "fuzzer finding: accepted case '%s' (%s)\n",
                   c.name.c_str(), c.mode.c_str());
      std::abort();
    }
  }
  return 0;
}
