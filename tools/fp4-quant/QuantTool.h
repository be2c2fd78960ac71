//===- QuantTool.h - The fp4-quant command line as a function ---*- C++ -*-===//
//
// fp4-quant's whole command line behind one entry point, shared by the tool's
// main and the fuzzer that drives it (fuzz/QuantToolFuzzer.cpp).
//
//===----------------------------------------------------------------------===//

#ifndef FP4TRAIN_TOOLS_FP4_QUANT_QUANTTOOL_H
#define FP4TRAIN_TOOLS_FP4_QUANT_QUANTTOOL_H

namespace fp4train {

/// Runs `fp4-quant argv[1] ...` (argv[0] is the program name); returns the
/// exit status: 0, or 1 after one error line on stderr.
int runQuantTool(int argc, char **argv);

} // namespace fp4train

#endif // FP4TRAIN_TOOLS_FP4_QUANT_QUANTTOOL_H
