//===- QuantOptions.h - fp4-quant's options as one request ------*- C++ -*-===//
//
// The options of `fp4-quant quantize` (format, block, axis, rounding, seed,
// amax, Hadamard rotation, ...) spelled as text, checked once and turned into
// the library's configurations. fp4-quant, the C API and the Python package
// all go through it, so they accept the same values, reject the same
// combinations with the same messages and compute the same bits.
//
//===----------------------------------------------------------------------===//

#ifndef FP4TRAIN_NUMERICS_QUANTOPTIONS_H
#define FP4TRAIN_NUMERICS_QUANTOPTIONS_H

#include "fp4train/Numerics/BlockQuant.h"
#include "fp4train/Numerics/Hadamard.h"

#include <map>
#include <string>

namespace fp4train::numerics {

/// A checked quantization request: the block quantization, the rotation
/// applied before it (if any) and whether the dequantized values are rotated
/// back.
struct QuantRequest {
  QuantConfig quant;
  std::optional<HadamardConfig> hadamard;
  bool unrotate = false;
};

/// Builds a request from options named as fp4-quant's (`format`,
/// `scale-mode`, `block`, `axis`, `rounding`, `seed`, `amax`, `hadamard`,
/// `signs`, `step`, `unrotate`), each mapped to its text (`unrotate` to "").
/// Options absent from the map take fp4-quant's defaults; other keys are
/// ignored. Error messages name options as `prefix` + name (`--seed` for the
/// tool, `seed` for keyword arguments).
Expected<QuantRequest>
parseQuantOptions(const std::map<std::string, std::string> &options,
                  const std::string &prefix = "--");

/// The result of running a request on a tensor.
struct QuantResult {
  QuantizedTensor quantized;
  /// The dequantized values, rotated back when the request says `unrotate`.
  std::vector<float> dequantized;
};

/// Checks the block layout against `shape`, rotates a copy of `data` if the
/// request has a rotation, quantizes it and dequantizes the result: what
/// `fp4-quant quantize` writes.
Expected<QuantResult> runQuantRequest(const float *data,
                                      const std::vector<int64_t> &shape,
                                      const QuantRequest &request);

} // namespace fp4train::numerics

#endif // FP4TRAIN_NUMERICS_QUANTOPTIONS_H
