//===- Files.cpp - Bounded reads and all-or-nothing writes ----------------===//

#include "fp4train/Numerics/Files.h"

#include <cctype>
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
  return "cannot read " + path + ": it is " + std::to_string(size) +
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
      return makeError("cannot read " + path + ": " + describeErrno());
    if (got == 0)
      break; // The end, or a regular file truncated while reading.
    done += size_t(got);
  }
  contents.resize(done);
  return contents;
}

/// Reads the open descriptor `fd` named `name`: a regular file by its size,
/// and, when `streams`, a pipe or a terminal to its end. Any other kind (a
/// character device such as /dev/zero, a socket, a directory) is refused.
static Expected<std::vector<uint8_t>>
readOpened(int fd, const std::string &name, bool streams, uint64_t maxBytes) {
  // fstat on the descriptor, not stat on the name, so the checked file is
  // the one read.
  struct stat info;
  if (::fstat(fd, &info) != 0)
    return makeError("cannot read " + name + ": " + describeErrno());
  bool regular = S_ISREG(info.st_mode);
  if (!regular && !(streams && (S_ISFIFO(info.st_mode) || ::isatty(fd))))
    return makeError("cannot read " + name +
                     (streams ? ": not a regular file, a pipe or a terminal"
                              : ": not a regular file"));
  return readDescriptor(fd, name, regular, uint64_t(info.st_size),
                        maxBytes ? maxBytes : getPhysicalMemoryBytes());
}

/// Opens and reads `path` as readOpened does.
static Expected<std::vector<uint8_t>>
readPath(const std::string &path, bool streams, uint64_t maxBytes) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return makeError("cannot open '" + path + "': " + describeErrno());
  struct FdCloser {
    int fd;
    ~FdCloser() { ::close(fd); }
  } closer{fd};
  return readOpened(fd, "'" + path + "'", streams, maxBytes);
}

Expected<std::vector<uint8_t>> readFile(const std::string &path,
                                        uint64_t maxBytes) {
  return readPath(path, /*streams=*/false, maxBytes);
}

Expected<std::vector<uint8_t>> readFileOrStdin(const std::string &path,
                                               uint64_t maxBytes) {
  if (path != "-")
    return readPath(path, /*streams=*/true, maxBytes);
  return readOpened(STDIN_FILENO, "<stdin>", /*streams=*/true, maxBytes);
}

unsigned findExcessiveNesting(std::string_view text, unsigned maxDepth) {
  unsigned depth = 0, line = 1;
  for (size_t i = 0, e = text.size(); i < e; ++i) {
    char c = text[i];
    switch (c) {
    case '\n':
      ++line;
      break;
    case '"': // A string literal, with backslash escapes, ends at '"'.
      for (++i; i < e && text[i] != '"'; ++i) {
        if (text[i] == '\\')
          ++i;
        else if (text[i] == '\n')
          ++line;
      }
      break;
    case '/':
      if (i + 1 < e && text[i + 1] == '/')
        while (i + 1 < e && text[i + 1] != '\n')
          ++i;
      break;
    case '{':
    case '(':
    case '[':
    case '<':
      if (++depth > maxDepth)
        return line;
      break;
    case '>':
      if ((i > 0 && text[i - 1] == '-') || (i + 1 < e && text[i + 1] == '='))
        break;
      [[fallthrough]];
    case '}':
    case ')':
    case ']':
      depth -= depth > 0;
      break;
    default:
      break;
    }
  }
  return 0;
}

std::string describeExcessiveNesting() {
  return "brackets nest deeper than " + std::to_string(kMaxTextNesting) +
         " levels, more than the parser can take";
}

bool isPlainFileName(std::string_view name) {
  if (name.empty() || name.size() > 200 || name.front() == '.')
    return false;
  for (char c : name)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '-' &&
        c != '.')
      return false;
  return true;
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
  // Special files are written in place before any rename, so that one that
  // fails (a link to /dev/full) leaves no renamed file of the set behind. A
  // FIFO is opened without blocking: with no reader that is an error, not a
  // hang.
  for (size_t i = 0; i < files.size(); ++i) {
    if (!temporaries[i].empty())
      continue;
    int fd = ::open(files[i].path.c_str(), O_WRONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) {
      std::string message =
          "cannot write '" + files[i].path + "': " + describeErrno();
      removeTemporaries(0);
      return makeError(message);
    }
    ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
    Status status = writeAndClose(fd, files[i]);
    if (!status) {
      removeTemporaries(0);
      return status;
    }
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
  return Success{};
}

} // namespace fp4train::numerics
