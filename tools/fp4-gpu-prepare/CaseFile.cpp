//===- CaseFile.cpp - The case files of fp4-gpu-prepare -------------------===//

#include "CaseFile.h"

#include "fp4train/Numerics/Files.h"

#include <algorithm>

using namespace fp4train;
using namespace fp4train::gpucheck;

/// `text` split at `separator`, empty pieces kept or dropped.
static std::vector<std::string_view> split(std::string_view text,
                                           char separator, bool keepEmpty) {
  std::vector<std::string_view> pieces;
  while (true) {
    size_t at = text.find(separator);
    std::string_view piece = text.substr(0, at);
    if (keepEmpty || !piece.empty())
      pieces.push_back(piece);
    if (at == std::string_view::npos)
      return pieces;
    text.remove_prefix(at + 1);
  }
}

static std::string_view trim(std::string_view text) {
  const char *space = " \t\r\v\f";
  size_t first = text.find_first_not_of(space);
  if (first == std::string_view::npos)
    return {};
  return text.substr(first, text.find_last_not_of(space) - first + 1);
}

numerics::Expected<std::vector<Case>>
gpucheck::parseCaseFile(std::string_view text, const std::string &path) {
  size_t slash = path.rfind('/');
  std::string directory =
      slash == std::string::npos ? "" : path.substr(0, slash);
  std::vector<Case> cases;
  unsigned lineNumber = 0;
  for (std::string_view line : split(text, '\n', /*keepEmpty=*/true)) {
    ++lineNumber;
    std::string where = path + ":" + std::to_string(lineNumber) + ": ";
    line = trim(line.substr(0, line.find('#')));
    if (line.empty())
      continue;
    std::vector<std::string_view> words = split(line, ' ', false);
    if (words.size() < 4 || words.size() > 5 ||
        (words[1] != "check" && words[1] != "timing"))
      return numerics::makeError(
          where + "expected `NAME check|timing FILE FUNCTION [RECIPE]`");
    // [PATH1] Case names become file names in the output folder.
    if (!numerics::isPlainFileName(words[0]))
      return numerics::makeError(
          where + "case name '" + std::string(words[0]) +
          "' is not a plain file name (letters, digits, '_', '-', '.'; not "
          "starting with '.')");
    if (std::any_of(cases.begin(), cases.end(),
                    [&](const Case &c) { return c.name == words[0]; }))
      return numerics::makeError(where + "case '" + std::string(words[0]) +
                                 "' is defined twice");
    std::string file(words[2]);
    if (file.front() != '/' && !directory.empty())
      file = directory + "/" + file;
    Case c{std::string(words[0]), std::string(words[1]), file,
           std::string(words[3])};
    if (words.size() == 5)
      c.recipe = std::string(words[4]);
    cases.push_back(c);
  }
  return cases;
}
