//===- ReplayMain.cpp - Run a fuzzer's inputs without libFuzzer -----------===//
//
// The main of the fuzzers in builds without libFuzzer (the normal build):
// every file named on the command line, and every file under a directory
// named there, is passed once to LLVMFuzzerTestOneInput, in sorted order.
// Arguments starting with '-' (libFuzzer flags such as -runs=0) are
// ignored, so one command line replays a corpus with either main. A finding
// aborts, as under libFuzzer.
//
//===----------------------------------------------------------------------===//

#include "fp4train/Numerics/Files.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <dirent.h>
#include <string>
#include <sys/stat.h>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
extern "C" int LLVMFuzzerInitialize(int *argc, char ***argv);

/// Appends the regular files under `path` (or `path` itself) to `files`.
static bool collect(const std::string &path, std::vector<std::string> &files) {
  struct stat info;
  if (::stat(path.c_str(), &info) != 0) {
    std::fprintf(stderr, "replay: cannot read '%s'\n", path.c_str());
    return false;
  }
  if (!S_ISDIR(info.st_mode)) {
    files.push_back(path);
    return true;
  }
  DIR *dir = ::opendir(path.c_str());
  if (!dir) {
    std::fprintf(stderr, "replay: cannot list '%s'\n", path.c_str());
    return false;
  }
  std::vector<std::string> entries;
  while (const dirent *entry = ::readdir(dir)) {
    std::string name = entry->d_name;
    if (name != "." && name != "..")
      entries.push_back(path + "/" + name);
  }
  ::closedir(dir);
  std::sort(entries.begin(), entries.end());
  for (const std::string &entry : entries)
    if (!collect(entry, files))
      return false;
  return true;
}

int main(int argc, char **argv) {
  LLVMFuzzerInitialize(&argc, &argv);
  std::vector<std::string> files;
  for (int i = 1; i < argc; ++i)
    if (argv[i][0] != '-' && !collect(argv[i], files))
      return 1;
  for (const std::string &file : files) {
    fp4train::numerics::Expected<std::vector<uint8_t>> contents =
        fp4train::numerics::readFile(file);
    if (!contents) {
      std::fprintf(stderr, "replay: %s\n", contents.error().message.c_str());
      return 1;
    }
    LLVMFuzzerTestOneInput(contents->data(), contents->size());
  }
  std::fprintf(stderr, "replay: %zu inputs, no finding\n", files.size());
  return 0;
}
