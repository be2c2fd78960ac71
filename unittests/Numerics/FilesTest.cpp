//===- FilesTest.cpp - Bounded reads and all-or-nothing writes ------------===//

#include "fp4train/Numerics/Files.h"

#include "gtest/gtest.h"

#include <cstdio>
#include <cstdlib>
#include <string>
#include <sys/stat.h>
#include <unistd.h>

using namespace fp4train::numerics;

namespace {

/// A fresh directory, removed (with what the test left) at the end.
struct TempDir {
  std::string path;
  TempDir() {
    char name[] = "/tmp/fp4train-files-XXXXXX";
    path = ::mkdtemp(name);
  }
  ~TempDir() { std::system(("rm -rf '" + path + "'").c_str()); }
};

bool exists(const std::string &path) {
  struct stat info;
  return ::stat(path.c_str(), &info) == 0;
}

TEST(Files, ReadsRegularFilesOnly) {
  TempDir dir;
  std::string path = dir.path + "/a";
  ASSERT_TRUE(bool(writeFiles({{path, {1, 2, 3}}})));
  Expected<std::vector<uint8_t>> contents = readFile(path);
  ASSERT_TRUE(bool(contents));
  EXPECT_EQ(*contents, (std::vector<uint8_t>{1, 2, 3}));

  // /dev/zero never ends; a directory is no data.
  Expected<std::vector<uint8_t>> zero = readFile("/dev/zero");
  ASSERT_FALSE(bool(zero));
  EXPECT_EQ(zero.error().message,
            "cannot read '/dev/zero': not a regular file");
  EXPECT_FALSE(bool(readFile(dir.path)));

  // Larger than the bound: rejected from the size, before any allocation.
  Expected<std::vector<uint8_t>> big = readFile(path, /*maxBytes=*/2);
  ASSERT_FALSE(bool(big));
  EXPECT_NE(big.error().message.find("it is 3 bytes, more than the 2"),
            std::string::npos);
}

TEST(Files, WritesAllOrNothing) {
  TempDir dir;
  std::string a = dir.path + "/a", b = dir.path + "/b";
  // The second destination cannot be written: the first is not created
  // either, and no temporary is left behind.
  ASSERT_EQ(::mkdir(b.c_str(), 0755), 0);
  Status status = writeFiles({{a, {1}}, {b, {2}}});
  ASSERT_FALSE(bool(status));
  EXPECT_EQ(status.error().message,
            "cannot write '" + b + "': it is a directory");
  EXPECT_FALSE(exists(a));
  status = writeFiles({{a, {1}}, {dir.path + "/missing/c", {2}}});
  ASSERT_FALSE(bool(status));
  EXPECT_FALSE(exists(a));
  EXPECT_EQ(
      std::system(
          ("test -z \"$(ls -A '" + dir.path + "' | grep -v '^b$')\"").c_str()),
      0);
}

} // namespace

TEST(Files, WritesDevicesInPlace) {
  // A device cannot be replaced by a rename (as root, a rename would turn
  // /dev/null into a regular file): it is written in place, with the other
  // files of the set renamed as usual.
  TempDir dir;
  std::string path = dir.path + "/b";
  ASSERT_TRUE(bool(writeFiles({{"/dev/null", {1, 2}}, {path, {3}}})));
  struct stat info;
  ASSERT_EQ(::stat("/dev/null", &info), 0);
  EXPECT_TRUE(S_ISCHR(info.st_mode));
  EXPECT_TRUE(exists(path));

  // A full device fails the set before any regular file is renamed into
  // place: none of the set is left behind (the SVG of fp4-train's set once
  // was, next to a losses.csv linked to /dev/full).
  std::string kept = dir.path + "/kept";
  Status full = writeFiles({{kept, {1}}, {"/dev/full", {1}}});
  ASSERT_FALSE(bool(full));
  EXPECT_NE(full.error().message.find("No space left on device"),
            std::string::npos);
  EXPECT_FALSE(exists(kept));
  EXPECT_EQ(
      std::system(
          ("test -z \"$(ls -A '" + dir.path + "' | grep -v '^b$')\"").c_str()),
      0);
}

TEST(Files, FifoWithoutReaderIsAnErrorNotAHang) {
  TempDir dir;
  std::string fifo = dir.path + "/fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  Status status = writeFiles({{fifo, {1}}});
  ASSERT_FALSE(bool(status));
  EXPECT_NE(status.error().message.find("cannot write '" + fifo + "'"),
            std::string::npos);
}

TEST(Files, ReadsStandardInputOnlyFromFilesPipesAndTerminals) {
  // Under the test runner stdin is whatever lit or ctest gives; what can be
  // checked here is that a path other than "-" behaves as readFile.
  TempDir dir;
  std::string path = dir.path + "/c";
  ASSERT_TRUE(bool(writeFiles({{path, {7}}})));
  Expected<std::vector<uint8_t>> contents = readFileOrStdin(path);
  ASSERT_TRUE(bool(contents));
  EXPECT_EQ(*contents, (std::vector<uint8_t>{7}));
  EXPECT_FALSE(bool(readFileOrStdin("/dev/zero")));
}

TEST(Files, ReadsNamedPipesByPath) {
  // `fp4-opt <(...)`: the shell passes /dev/fd/N, a pipe. readFile still
  // refuses it; readFileOrStdin reads it to its end.
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  ASSERT_EQ(::write(fds[1], "abc", 3), 3);
  ::close(fds[1]);
  std::string path = "/dev/fd/" + std::to_string(fds[0]);
  EXPECT_FALSE(bool(readFile(path)));
  Expected<std::vector<uint8_t>> contents = readFileOrStdin(path);
  ::close(fds[0]);
  ASSERT_TRUE(bool(contents));
  EXPECT_EQ(*contents, (std::vector<uint8_t>{'a', 'b', 'c'}));
}

TEST(Files, FindsExcessiveNesting) {
  // [NEST1] The line where more than maxDepth brackets are open.
  EXPECT_EQ(findExcessiveNesting("module {\n}\n"), 0u);
  EXPECT_EQ(findExcessiveNesting("{{\n{", 2), 2u);
  EXPECT_EQ(findExcessiveNesting("{}{}{}{}{}", 1), 0u);
  std::string deep(100000, '{');
  EXPECT_EQ(findExcessiveNesting(deep), 1u);
  // Every kind counts; closers of any kind close.
  EXPECT_EQ(findExcessiveNesting("([<{", 3), 1u);
  EXPECT_EQ(findExcessiveNesting("([<>])([<>])", 3), 0u);
  // Strings (with escapes) and comments do not count.
  EXPECT_EQ(findExcessiveNesting("\"{{{\\\"{{\" // {{{\n{", 1), 0u);
  // The `>` of `->` and `>=` does not close, so it cannot hide depth.
  EXPECT_EQ(findExcessiveNesting("(<->(<>=(", 4), 1u);
  EXPECT_EQ(findExcessiveNesting("f(x) -> (y)", 1), 0u);
  // Stray closers do not make room below zero.
  EXPECT_EQ(findExcessiveNesting("}}}}{{", 1), 1u);
}

TEST(Files, PlainFileNames) {
  // [PATH1]
  for (const char *name : {"gemm", "gemm-big.k_0", "A1", "x.cubin"})
    EXPECT_TRUE(isPlainFileName(name)) << name;
  for (const char *name : {"", ".", "..", ".hidden", "../x", "a/b", "/abs",
                           "a b", "tab\t", "nul\x01"})
    EXPECT_FALSE(isPlainFileName(name)) << name;
  EXPECT_TRUE(isPlainFileName(std::string(200, 'a')));
  EXPECT_FALSE(isPlainFileName(std::string(201, 'a')));
}
