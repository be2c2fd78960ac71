//===- fp4-opt.cpp - mlir-opt with the fp4train dialect and passes --------===//
//
// Registers exactly the dialects and passes a training graph and its
// lowerings need, then hands over to MlirOptMain.
//
//===----------------------------------------------------------------------===//

#include "fp4train/InitFP4Train.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  mlir::fp4train::registerAllDialects(registry);
  mlir::fp4train::registerAllPasses();
  return mlir::asMainReturnCode(mlir::MlirOptMain(
      argc, argv, "fp4train optimizer driver\n", registry));
}
