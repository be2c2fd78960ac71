//===- consumer-opt.cpp - An opt tool of another project with fp4train ----===//

#include "fp4train/InitFP4Train.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  mlir::fp4train::registerAllDialects(registry);
  mlir::fp4train::registerAllPasses();
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "consumer optimizer\n", registry));
}
