//===- CaseFile.h - The case files of fp4-gpu-prepare -----------*- C++ -*-===//
//
// A case file lists the kernels `make gpu-check` runs, one per line:
//
//   NAME check|timing FILE FUNCTION [RECIPE]   # comment
//
// NAME becomes file names in the output folder, so it must be a plain file
// name ([PATH1], docs/robustness.md) and distinct; FILE is relative to the
// case file's directory unless absolute. No MLIR dependency: fuzz/ drives
// the parser too.
//
//===----------------------------------------------------------------------===//

#ifndef FP4TRAIN_TOOLS_FP4GPUPREPARE_CASEFILE_H
#define FP4TRAIN_TOOLS_FP4GPUPREPARE_CASEFILE_H

#include "fp4train/Numerics/Error.h"

#include <string>
#include <string_view>
#include <vector>

namespace fp4train::gpucheck {

struct Case {
  std::string name, mode, file, function, recipe = "none";
};

/// The cases of the case file `path` whose contents are `text`, or an error
/// naming the line of the first malformed one.
numerics::Expected<std::vector<Case>> parseCaseFile(std::string_view text,
                                                    const std::string &path);

} // namespace fp4train::gpucheck

#endif // FP4TRAIN_TOOLS_FP4GPUPREPARE_CASEFILE_H
