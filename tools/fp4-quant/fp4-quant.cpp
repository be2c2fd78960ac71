//===- fp4-quant.cpp - Quantize .npy tensors and report the error ---------===//
//
// The fp4-quant tool; see QuantTool.cpp for what it does.
//
//===----------------------------------------------------------------------===//

#include "QuantTool.h"

int main(int argc, char **argv) { return fp4train::runQuantTool(argc, argv); }
