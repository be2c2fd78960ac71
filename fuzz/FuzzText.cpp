//===- FuzzText.cpp - Input filters the fuzzers share ---------------------===//

#include "FuzzText.h"

#include <algorithm>
#include <cstring>

namespace mlir::fp4train::fuzz {

llvm::StringRef asText(const uint8_t *data, size_t size) {
  const void *nul = std::memchr(data, 0, size);
  if (nul)
    size = size_t(static_cast<const uint8_t *>(nul) - data);
  return llvm::StringRef(reinterpret_cast<const char *>(data), size);
}

/// True if `text` starts with `= [i, j, ...]` (spaces allowed).
static bool startsWithIntegerList(llvm::StringRef text) {
  text = text.ltrim();
  if (!text.consume_front("="))
    return false;
  text = text.ltrim();
  if (!text.consume_front("["))
    return false;
  text = text.ltrim();
  if (text.consume_front("]"))
    return true;
  while (true) {
    text.consume_front("-");
    size_t digits = text.find_first_not_of("0123456789");
    if (digits == 0 || digits == llvm::StringRef::npos)
      return false;
    text = text.drop_front(digits).ltrim();
    if (text.consume_front("]"))
      return true;
    if (!text.consume_front(","))
      return false;
    text = text.ltrim();
  }
}

bool hasKnownUpstreamParserCrash(llvm::StringRef text) {
  if (text.contains("batch_matmul") && text.contains("xindex>"))
    return true;
  for (llvm::StringRef op :
       {"linalg.transpose", "linalg.broadcast", "linalg.reduce"}) {
    for (size_t at = text.find(op); at != llvm::StringRef::npos;
         at = text.find(op, at + 1)) {
      // The generic form ("linalg.transpose"(...)) parses its attributes
      // with the generic parser, which is safe.
      if (at > 0 && text[at - 1] == '"')
        continue;
      llvm::StringRef rest = text.drop_front(at + op.size());
      size_t key = std::min(rest.find("permutation"), rest.find("dimensions"));
      if (key == llvm::StringRef::npos)
        continue;
      llvm::StringRef value = rest.drop_front(key);
      value = value.drop_front(value.starts_with("permutation")
                                   ? strlen("permutation")
                                   : strlen("dimensions"));
      if (!startsWithIntegerList(value))
        return true;
    }
  }
  return false;
}

bool touchesTheMachine(llvm::StringRef text) {
  return text.contains("report") || text.contains("toolkit");
}

bool namesOnlyOurPasses(llvm::StringRef text) {
  while (!text.empty()) {
    size_t start = text.find_first_not_of(" \t\n,(){}");
    if (start == llvm::StringRef::npos)
      return true;
    text = text.drop_front(start);
    size_t end = text.find_first_of(" \t\n,(){");
    llvm::StringRef name = text.take_front(end);
    if (!name.starts_with("fp4train-") && name != "builtin.module" &&
        name != "func.func" && name != "any" && name != "gpu.module")
      return false;
    text = text.drop_front(name.size());
    // Skip an option list.
    if (text.starts_with("{")) {
      size_t close = text.find('}');
      if (close == llvm::StringRef::npos)
        return true;
      text = text.drop_front(close + 1);
    }
  }
  return true;
}

} // namespace mlir::fp4train::fuzz
