//===- Files.cpp - Bounded reads and all-or-nothing writes ----------------===//

#include "fp4train/Numerics/Files.h"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace fp4train::numerics {

uint64_t getPhysicalMemoryBytes() {
  long pages = sysconf(_SC_PHYS_PAGES), pageSize = sysconf(_SC_PAGESIZE);
  return pages > 0 && pageSize > 0 ? uint64_t(pages) * uint64_t(pageSize) : 0;
}

static std::string describeErrno() { return std::strerror(errno); }

Expected<std::vector<uint8_t>> readFile(const std::string &path,
                                        uint64_t maxBytes) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return makeError("cannot open '" + path + "': " + describeErrno());
  struct FdCloser {
    int fd;
    ~FdCloser() { ::close(fd); }
  } closer{fd};
  // fstat on the descriptor, not stat on the name, so the checked file is
  // the one read.
  struct stat info;
  if (::fstat(fd, &info) != 0)
    return makeError("cannot read '" + path + "': " + describeErrno());
  if (!S_ISREG(info.st_mode))
    return makeError("cannot read '" + path + "': not a regular file");
  if (maxBytes == 0)
    maxBytes = getPhysicalMemoryBytes();
  uint64_t size = uint64_t(info.st_size);
  if (maxBytes != 0 && size > maxBytes)
    return makeError("cannot read '" + path + "': it is " +
                     std::to_string(size) + " bytes, more than the " +
                     std::to_string(maxBytes) + " this machine can hold");
  std::vector<uint8_t> contents(size);
  size_t done = 0;
  while (done < contents.size()) {
    ssize_t got = ::read(fd, contents.data() + done, contents.size() - done);
    if (got < 0 && errno == EINTR)
      continue;
    if (got < 0)
      return makeError("cannot read '" + path + "': " + describeErrno());
    if (got == 0)
      break; // Truncated while reading: keep what is there.
    done += size_t(got);
  }
  contents.resize(done);
  return contents;
}

/// Writes `contents` to a new temporary next to `path`; returns its name.
static Expected<std::string> writeTemporary(const OutputFile &file) {
  std::string name = file.path + ".tmp.XXXXXX";
  int fd = ::mkstemp(name.data());
  if (fd < 0)
    return makeError("cannot write '" + file.path + "': " + describeErrno());
  // mkstemp creates 0600; outputs get the usual 0666 & ~umask.
  mode_t mask = ::umask(0);
  ::umask(mask);
  ::fchmod(fd, 0666 & ~mask);
  size_t done = 0;
  bool ok = true;
  while (ok && done < file.contents.size()) {
    ssize_t put = ::write(fd, file.contents.data() + done,
                          file.contents.size() - done);
    if (put < 0 && errno == EINTR)
      continue;
    ok = put > 0;
    if (ok)
      done += size_t(put);
  }
  int savedErrno = ok ? 0 : errno;
  if (::close(fd) != 0 && ok) {
    ok = false;
    savedErrno = errno;
  }
  if (!ok) {
    ::unlink(name.c_str());
    return makeError("cannot write '" + file.path +
                     "': " + std::strerror(savedErrno ? savedErrno : EIO));
  }
  return name;
}

Status writeFiles(const std::vector<OutputFile> &files) {
  // What would make a rename fail is checked before anything is written,
  // so that the renames (the only step that cannot be undone) succeed.
  for (const OutputFile &file : files) {
    struct stat info;
    if (::stat(file.path.c_str(), &info) == 0 && S_ISDIR(info.st_mode))
      return makeError("cannot write '" + file.path + "': it is a directory");
  }
  std::vector<std::string> temporaries;
  auto removeTemporaries = [&] {
    for (const std::string &name : temporaries)
      ::unlink(name.c_str());
  };
  for (const OutputFile &file : files) {
    Expected<std::string> name = writeTemporary(file);
    if (!name) {
      removeTemporaries();
      return name.error();
    }
    temporaries.push_back(*name);
  }
  for (size_t i = 0; i < files.size(); ++i) {
    if (std::rename(temporaries[i].c_str(), files[i].path.c_str()) != 0) {
      std::string message =
          "cannot write '" + files[i].path + "': " + describeErrno();
      // The renamed ones are complete files; only the rest are removed.
      temporaries.erase(temporaries.begin(), temporaries.begin() + i);
      removeTemporaries();
      return makeError(message);
    }
  }
  return Success{};
}

} // namespace fp4train::numerics
