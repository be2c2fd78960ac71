//===- Files.h - Bounded reads and all-or-nothing writes --------*- C++ -*-===//
//
// How the tools touch files, so that no input can exhaust memory and no
// failure leaves a partial set of outputs behind:
//
// - readFile stats the file first: only regular files are read, and only
//   when they fit in the machine's memory (a read of /dev/zero or of a FIFO
//   would never end; an enormous file would die in the allocator);
// - writeFiles writes every file of a set to a temporary next to its
//   destination, checks every write and the close, and renames the
//   temporaries over the destinations only once all of them are complete.
//
//===----------------------------------------------------------------------===//

#ifndef FP4TRAIN_NUMERICS_FILES_H
#define FP4TRAIN_NUMERICS_FILES_H

#include "fp4train/Numerics/Error.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace fp4train::numerics {

/// The machine's physical memory in bytes (0 when unknown): the bound of
/// readFile and of what the tools allocate from their inputs.
uint64_t getPhysicalMemoryBytes();

/// The contents of the regular file `path`, or an error for a missing,
/// unreadable or non-regular file and for one larger than `maxBytes`
/// (default: the physical memory).
Expected<std::vector<uint8_t>> readFile(const std::string &path,
                                        uint64_t maxBytes = 0);

/// readFile, or standard input for "-": a regular file as readFile reads it,
/// a pipe (standard input, or a named one such as the `/dev/fd/N` of a
/// shell's `<(...)`) or a terminal to its end (an error once it passes
/// `maxBytes`, default the physical memory); any other kind (a character
/// device such as /dev/zero, a socket) is refused.
Expected<std::vector<uint8_t>> readFileOrStdin(const std::string &path,
                                               uint64_t maxBytes = 0);

/// How deeply the tools let MLIR text nest brackets (`{ ( [ <`). MLIR's
/// parser recurses once per level of regions, attributes and types, so
/// 100,000 nested `module {` overflow any thread's stack; real training
/// graphs nest a few dozen levels.
constexpr unsigned kMaxTextNesting = 512;

/// The 1-based line on which MLIR text `text` first has more than
/// `maxDepth` brackets open, or 0 when it never has. A lexical scan that
/// skips string literals and `//` comments and does not take the `>` of `->`
/// or `>=` for a closing bracket, so the depth it counts is never below the
/// parser's recursion depth.
unsigned findExcessiveNesting(std::string_view text,
                              unsigned maxDepth = kMaxTextNesting);

/// The reason every tool gives for such a text (after its `FILE:LINE: `).
std::string describeExcessiveNesting();

/// A file name made from input text (a case name, a symbol) is safe to join
/// to an output folder: non-empty, at most 200 characters of letters,
/// digits, `_`, `-` and `.`, not starting with `.`. Such a name has no `/`
/// and is never `.` or `..`, so the joined path stays inside the folder.
bool isPlainFileName(std::string_view name);

/// One file of an output set.
struct OutputFile {
  std::string path;
  std::vector<uint8_t> contents;
};

/// Writes every file of `files` or none: each goes to a temporary in its
/// destination's directory first, and the temporaries are renamed over the
/// destinations only when all of them were written and closed without error.
/// On failure the temporaries are removed and the destinations are left as
/// they were.
/// A destination that exists and is not a regular file (/dev/null, a FIFO)
/// cannot be replaced: it is written in place, after the renames.
Status writeFiles(const std::vector<OutputFile> &files);

} // namespace fp4train::numerics

#endif // FP4TRAIN_NUMERICS_FILES_H
