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

static std::string describeTooLarge(const std::string &path, uint64_t size,
                                    uint64_t maxBytes) {
  return "cannot read '" + path + "': it is " + std::to_string(size) +
         " bytes, more than the " + std::to_string(maxBytes) +
         " this machine can hold";
}

/// Reads `fd` (a regular file of `size` bytes when `sized`, else a stream)
/// to its end; a stream longer than `maxBytes` is an error.
static Expected<std::vector<uint8_t>> readDescriptor(int fd,
                                                     const std::string &path,
                                                     bool sized, uint64_t size,
                                                     uint64_t maxBytes) {
  if (sized && maxBytes != 0 && size > maxBytes)
    return makeError(describeTooLarge(path, size, maxBytes));
  std::vector<uint8_t> contents(sized ? size : 1 << 16);
  size_t done = 0;
  while (true) {
    if (done == contents.size()) {
      if (sized)
        break;
      if (maxBytes != 0 && done >= maxBytes)
        return makeError(describeTooLarge(path, done + 1, maxBytes));
      contents.resize(contents.size() * 2);
    }
    ssize_t got = ::read(fd, contents.data() + done, contents.size() - done);
    if (got < 0 && errno == EINTR)
      continue;
    if (got < 0)
      return makeError("cannot read '" + path + "': " + describeErrno());
    if (got == 0)
      break; // The end, or a regular file truncated while reading.
    done += size_t(got);
  }
  contents.resize(done);
  return contents;
}

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
  return readDescriptor(fd, path, /*sized=*/true, uint64_t(info.st_size),
                        maxBytes ? maxBytes : getPhysicalMemoryBytes());
}

Expected<std::vector<uint8_t>> readFileOrStdin(const std::string &path,
                                               uint64_t maxBytes) {
  if (path != "-")
    return readFile(path, maxBytes);
  const std::string name = "<stdin>";
  struct stat info;
  if (::fstat(STDIN_FILENO, &info) != 0)
    return makeError("cannot read " + name + ": " + describeErrno());
  bool regular = S_ISREG(info.st_mode);
  if (!regular && !S_ISFIFO(info.st_mode) && !::isatty(STDIN_FILENO))
    return makeError("cannot read " + name +
                     ": not a regular file, a pipe or a terminal");
  return readDescriptor(STDIN_FILENO, name, regular, uint64_t(info.st_size),
                        maxBytes ? maxBytes : getPhysicalMemoryBytes());
}

/// Writes all of `contents` to `fd`; false (errno set) on a failed write.
static bool writeAll(int fd, const std::vector<uint8_t> &contents) {
  size_t done = 0;
  while (done < contents.size()) {
    ssize_t put = ::write(fd, contents.data() + done, contents.size() - done);
    if (put < 0 && errno == EINTR)
      continue;
    if (put <= 0) {
      if (put == 0)
        errno = EIO;
      return false;
    }
    done += size_t(put);
  }
  return true;
}

/// Writes `contents` to `fd` and closes it; an error names `path`.
static Status writeAndClose(int fd, const OutputFile &file) {
  bool ok = writeAll(fd, file.contents);
  int savedErrno = ok ? 0 : errno;
  if (::close(fd) != 0 && ok) {
    ok = false;
    savedErrno = errno;
  }
  if (!ok)
    return makeError("cannot write '" + file.path +
                     "': " + std::strerror(savedErrno ? savedErrno : EIO));
  return Success{};
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
  Status status = writeAndClose(fd, file);
  if (!status) {
    ::unlink(name.c_str());
    return status.error();
  }
  return name;
}

/// True for a destination that exists and is not a regular file (a device
/// such as /dev/null, a FIFO): it cannot be replaced, only written in place.
static bool isSpecialFile(const std::string &path) {
  struct stat info;
  return ::stat(path.c_str(), &info) == 0 && !S_ISREG(info.st_mode) &&
         !S_ISDIR(info.st_mode);
}

Status writeFiles(const std::vector<OutputFile> &files) {
  // What would make a rename fail is checked before anything is written,
  // so that the renames (the only step that cannot be undone) succeed.
  for (const OutputFile &file : files) {
    struct stat info;
    if (::stat(file.path.c_str(), &info) == 0 && S_ISDIR(info.st_mode))
      return makeError("cannot write '" + file.path + "': it is a directory");
  }
  // temporaries[i] is empty for a special file, written in place last.
  std::vector<std::string> temporaries;
  auto removeTemporaries = [&](size_t from) {
    for (size_t i = from; i < temporaries.size(); ++i)
      if (!temporaries[i].empty())
        ::unlink(temporaries[i].c_str());
  };
  for (const OutputFile &file : files) {
    if (isSpecialFile(file.path)) {
      temporaries.emplace_back();
      continue;
    }
    Expected<std::string> name = writeTemporary(file);
    if (!name) {
      removeTemporaries(0);
      return name.error();
    }
    temporaries.push_back(*name);
  }
  for (size_t i = 0; i < files.size(); ++i) {
    if (temporaries[i].empty())
      continue;
    if (std::rename(temporaries[i].c_str(), files[i].path.c_str()) != 0) {
      std::string message =
          "cannot write '" + files[i].path + "': " + describeErrno();
      // The renamed ones are complete files; only the rest are removed.
      removeTemporaries(i);
      return makeError(message);
    }
  }
  for (size_t i = 0; i < files.size(); ++i) {
    if (!temporaries[i].empty())
      continue;
    int fd = ::open(files[i].path.c_str(), O_WRONLY | O_CLOEXEC);
    if (fd < 0)
      return makeError("cannot write '" + files[i].path +
                       "': " + describeErrno());
    Status status = writeAndClose(fd, files[i]);
    if (!status)
      return status;
  }
  return Success{};
}

} // namespace fp4train::numerics
