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
  EXPECT_EQ(status.error().message, "cannot write '" + b + "': it is a directory");
  EXPECT_FALSE(exists(a));
  status = writeFiles({{a, {1}}, {dir.path + "/missing/c", {2}}});
  ASSERT_FALSE(bool(status));
  EXPECT_FALSE(exists(a));
  EXPECT_EQ(std::system(("test -z \"$(ls -A '" + dir.path +
                         "' | grep -v '^b$')\"").c_str()),
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

  // A full device fails the set, after the regular files are in place.
  Status full = writeFiles({{"/dev/full", {1}}});
  ASSERT_FALSE(bool(full));
  EXPECT_NE(full.error().message.find("No space left on device"),
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
