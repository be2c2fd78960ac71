//===- Failure.cpp - How fp4-train reports errors and ends ----------------===//

#include "Failure.h"

#include "llvm/Support/raw_ostream.h"

#include <cstdio>
#include <cstdlib>

using namespace fp4train::train;

namespace {
std::string failurePrefix;
void (*endOnFailure)() = nullptr;
} // namespace

void fp4train::train::setFailureHandler(std::string prefix, void (*end)()) {
  failurePrefix = std::move(prefix);
  endOnFailure = end;
}

void fp4train::train::reportError(const llvm::Twine &message) {
  std::fflush(stdout);
  // One write: the processes of a sharded run share standard error.
  llvm::errs() << ("fp4-train: error: " + failurePrefix + message + "\n").str();
  std::fflush(nullptr);
}

void fp4train::train::fail(const llvm::Twine &message) {
  reportError(message);
  if (endOnFailure)
    endOnFailure();
  std::_Exit(1);
}
