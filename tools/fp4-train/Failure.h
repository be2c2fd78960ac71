//===- Failure.h - How fp4-train reports errors and ends --------*- C++ -*-===//
//
// The one error path of fp4-train: the trainer, the processes of a sharded
// run and the driver report through it, and a sharded run ends every
// process on the first failure.
//
//===----------------------------------------------------------------------===//

#ifndef FP4TRAIN_TOOLS_FP4TRAIN_FAILURE_H
#define FP4TRAIN_TOOLS_FP4TRAIN_FAILURE_H

#include "llvm/ADT/Twine.h"

#include <string>

namespace fp4train::train {

/// Prints "fp4-train: error: MESSAGE" and ends the process at once (runs
/// train on several threads: no static destructors under the others' feet).
[[noreturn]] void fail(const llvm::Twine &message);

/// Prints "fp4-train: error: MESSAGE" (with the failure handler's prefix)
/// and goes on.
void reportError(const llvm::Twine &message);

/// Makes fail() put `prefix` before its message and call `end` (which ends
/// every process of a sharded run, not only the failing one) before it
/// exits.
void setFailureHandler(std::string prefix, void (*end)());

} // namespace fp4train::train

#endif // FP4TRAIN_TOOLS_FP4TRAIN_FAILURE_H
