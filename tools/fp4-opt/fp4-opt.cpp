//===- fp4-opt.cpp - mlir-opt with the fp4train dialect and passes --------===//
//
// Registers exactly the dialects and passes a training graph and its
// lowerings need, then hands over to MlirOptMain, with the files handled the
// way docs/robustness.md promises rather than by mlir-opt's defaults:
//
// - the input is read with a bound: a character device such as /dev/zero, a
//   socket or a file larger than the machine's memory is an error, not an
//   endless read (mlir-opt reads /dev/zero until memory runs out);
// - the output (`-o`) is written all-or-nothing: to a temporary renamed over
//   the destination once complete, every write checked, so a full disk is a
//   diagnostic ("LLVM ERROR: IO failure on output stream" in mlir-opt) and a
//   failed run leaves an existing output untouched.
//
//===----------------------------------------------------------------------===//

#include "fp4train/InitFP4Train.h"
#include "fp4train/Numerics/Files.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <string>
#include <vector>

namespace numerics = ::fp4train::numerics;

static int fail(const std::string &message) {
  llvm::errs() << "fp4-opt: error: " << message << "\n";
  return 1;
}

int main(int argc, char **argv) {
  llvm::InitLLVM initLLVM(argc, argv);
  mlir::DialectRegistry registry;
  mlir::fp4train::registerAllDialects(registry);
  mlir::fp4train::registerAllPasses();
  auto [inputFilename, outputFilename] = mlir::registerAndParseCLIOptions(
      argc, argv, "fp4train optimizer driver\n", registry);
  mlir::MlirOptMainConfig config =
      mlir::MlirOptMainConfig::createFromCLOptions();

  // --show-dialects and --list-passes print and return before any input.
  if (config.shouldShowDialects() || config.shouldListPasses())
    return mlir::asMainReturnCode(mlir::MlirOptMain(
        llvm::outs(), llvm::MemoryBuffer::getMemBuffer(""), registry, config));

  numerics::Expected<std::vector<uint8_t>> input =
      numerics::readFileOrStdin(inputFilename);
  if (!input)
    return fail(input.error().message);
  // MLIR's parser recurses per nesting level (docs/robustness.md).
  if (unsigned line = numerics::findExcessiveNesting(std::string_view(
          reinterpret_cast<const char *>(input->data()), input->size())))
    return fail(inputFilename + ":" + std::to_string(line) + ": " +
                numerics::describeExcessiveNesting());
  std::unique_ptr<llvm::MemoryBuffer> buffer =
      llvm::MemoryBuffer::getMemBufferCopy(
          llvm::StringRef(reinterpret_cast<const char *>(input->data()),
                          input->size()),
          inputFilename);

  if (outputFilename == "-") {
    mlir::LogicalResult result =
        mlir::MlirOptMain(llvm::outs(), std::move(buffer), registry, config);
    llvm::outs().flush();
    if (llvm::outs().has_error()) {
      std::string message = llvm::outs().error().message();
      llvm::outs().clear_error();
      return fail("cannot write the output: " + message);
    }
    return mlir::asMainReturnCode(result);
  }

  std::string output;
  llvm::raw_string_ostream os(output);
  if (mlir::failed(mlir::MlirOptMain(os, std::move(buffer), registry, config)))
    return 1;
  numerics::Status written = numerics::writeFiles(
      {{outputFilename, std::vector<uint8_t>(output.begin(), output.end())}});
  if (!written)
    return fail(written.error().message);
  return 0;
}
