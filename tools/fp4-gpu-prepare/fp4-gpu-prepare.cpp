//===- fp4-gpu-prepare.cpp - The folder fp4-gpu-run checks a GPU with -----===//
//
// Prepares, on a machine without a GPU, everything fp4-gpu-run needs to run
// fp4train's NVIDIA kernels on a device and check them bit for bit:
//
//   fp4-gpu-prepare --chip sm_90a --toolkit DIR --out OUT CASES.txt
//
// CASES.txt holds one case per line, `NAME MODE FILE FUNCTION [RECIPE]`
// (`#` starts a comment; a relative FILE is relative to CASES.txt; RECIPE
// defaults to none). Each case's function is compiled twice from the same
// module: by buildCUDAKernelPipeline, the form the warp emulator executes, and
// by buildCUDAPipeline with format=bin, whose cubins go to OUT/cubins/. Both
// start from the same kernel outlining, so their kernels and operands
// correspond one to one.
//
// The emulator then runs the kernel-pipeline function on generated inputs
// and reports every gpu.launch_func (EmulatorHooks): kernel, grid, block and
// each operand, a memref (its whole allocation) or a scalar. MODE `check`
// stores every memref's bytes before and after each launch (OUT/blobs/,
// content-addressed): fp4-run uploads the first, launches, and compares
// what comes back with the second. Those bytes come from the lane-exact
// emulator, which the test suite holds bit-exact to the numerics library;
// where the function's arguments are plain tensors and scalars, the
// emulated results are also compared here with the CPU path (the JIT of
// buildCPUPipeline) and the agreement goes into the manifest. MODE `timing`
// (shapes too large to emulate) runs the host code with the kernels
// skipped and stores only sizes: the device fills the buffers and times.
//
// Kernel operands reach the cubin as convert-gpu-to-nvvm passes them: a
// memref of rank r as (allocated ptr, aligned ptr, offset, r sizes, r
// strides), every field 8 bytes; an index or i64 as 8 bytes, an i32 or f32
// as 4; a pointer to a TMA tensor map ([TMA1], made on the host by
// nvgpu.tma.create.descriptor) as 8 bytes, recorded as the map's fields and
// its tensor's buffer, which fp4-gpu-run encodes with the driver. A
// tensor a launch reads only through a map is one of the launch's buffers.
// fp4-gpu-run checks each size against cuFuncGetParamInfo.
//
// The manifest (OUT/manifest.txt, one record per line) is documented in
// tools/fp4-gpu-run/fp4-gpu-run.cpp, which reads it.
//
//===----------------------------------------------------------------------===//

#include "CaseFile.h"
#include "fp4train/Conversion/FP4TrainCommon/TypeConversion.h"
#include "fp4train/Dialect/FP4Train/IR/FP4TrainOps.h"
#include "fp4train/Dialect/FP4Train/IR/FP4TrainTypes.h"
#include "fp4train/Emulation/GPUEmulator.h"
#include "fp4train/Emulation/Tma.h"

#include "fp4train/Conversion/FP4TrainToNVVM/FP4TrainToNVVM.h"
#include "fp4train/InitFP4Train.h"
#include "fp4train/Numerics/Files.h"
#include "fp4train/Numerics/Storage.h"
#include "fp4train/ParseModule.h"
#include "fp4train/Pipelines/Pipelines.h"
#include "fp4train/Runtime/JitFunction.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <map>
#include <random>
#include <set>
#include <string>
#include <sys/stat.h>
#include <vector>

using namespace mlir;
using namespace mlir::fp4train;
namespace numerics = ::fp4train::numerics;
namespace ptx = ::fp4train::emulation::ptx;

namespace {

[[noreturn]] void fail(const llvm::Twine &message) {
  llvm::errs() << "fp4-gpu-prepare: error: " << message << "\n";
  std::exit(1);
}

using ::fp4train::gpucheck::Case;

std::vector<Case> readCases(const std::string &path) {
  numerics::Expected<std::vector<uint8_t>> contents = numerics::readFile(path);
  if (!contents)
    fail(contents.error().message);
  numerics::Expected<std::vector<Case>> cases =
      ::fp4train::gpucheck::parseCaseFile(
          std::string_view(reinterpret_cast<const char *>(contents->data()),
                           contents->size()),
          path);
  if (!cases)
    fail(cases.error().message);
  return std::move(*cases);
}

/// 64-bit FNV-1a: names blobs by content, so equal buffers are stored once.
uint64_t hashBytes(const std::vector<uint8_t> &bytes) {
  uint64_t hash = 0xcbf29ce484222325ull;
  for (uint8_t byte : bytes)
    hash = (hash ^ byte) * 0x100000001b3ull;
  return hash;
}

/// Writes the output files and the manifest.
class Folder {
public:
  explicit Folder(std::string root) : root(std::move(root)) {}

  /// Stores `bytes` once; returns its path relative to the folder.
  std::string blob(const std::vector<uint8_t> &bytes) {
    std::string name = llvm::formatv("blobs/{0:x-16}.bin", hashBytes(bytes));
    if (stored.insert(name).second)
      files.push_back({root + "/" + name, bytes});
    return name;
  }
  std::string cubin(const std::string &name, llvm::StringRef bytes) {
    // `name` holds a gpu.binary's symbol, which MLIR lets hold any text.
    if (!numerics::isPlainFileName(name))
      fail("cannot name a cubin '" + name +
           "': not a plain file name (letters, digits, '_', '-', '.')");
    std::string path = "cubins/" + name + ".cubin";
    files.push_back(
        {root + "/" + path, std::vector<uint8_t>(bytes.begin(), bytes.end())});
    return path;
  }
  llvm::raw_string_ostream &manifest() { return manifestStream; }

  /// Creates the folder and writes every file, once all cases succeeded: a
  /// failing case leaves nothing behind.
  void write() {
    for (const char *sub : {"", "/blobs", "/cubins"})
      if (::mkdir((root + sub).c_str(), 0777) != 0 && errno != EEXIST)
        fail("cannot create '" + root + sub + "': " + std::strerror(errno));
    files.push_back(
        {root + "/manifest.txt",
         std::vector<uint8_t>(manifestText.begin(), manifestText.end())});
    numerics::Status status = numerics::writeFiles(files);
    if (!status)
      fail(status.error().message);
    uint64_t total = 0;
    for (const numerics::OutputFile &file : files)
      total += file.contents.size();
    llvm::errs() << llvm::formatv("fp4-gpu-prepare: wrote {0} files, {1} "
                                  "bytes, to {2}\n",
                                  files.size(), total, root);
  }

private:
  std::string root;
  std::set<std::string> stored;
  std::vector<numerics::OutputFile> files;
  std::string manifestText;
  llvm::raw_string_ostream manifestStream{manifestText};
};

/// Inputs for the function's tensor-level arguments, and the same values as
/// the kernel-pipeline function takes them (a scaled tensor becomes its
/// [PK1] stored codes, scales and, for NVFP4, the f32 global decode scale: the
/// 1:N conversion of fp4train-expand).
struct Inputs {
  std::vector<emulation::EmulatorArgument> kernel;
  /// Per tensor-level argument, for the CPU path; empty if it cannot take
  /// them (scaled arguments).
  std::vector<std::vector<uint8_t>> cpu;
  bool cpuComparable = true;
};

std::vector<uint8_t> randomCodes(Type element, int64_t count,
                                 std::mt19937 &rng) {
  std::vector<uint8_t> codes(count);
  std::uniform_int_distribution<int> byte(0, 255);
  for (uint8_t &code : codes) {
    int value = byte(rng);
    if (isa<Float4E2M1FNType>(element))
      value &= 0xF;
    else if (isa<Float8E4M3FNType>(element) && (value & 0x7F) == 0x7F)
      value &= 0xFE; // not NaN
    else if (isa<Float8E5M2Type>(element) && (value & 0x7C) == 0x7C)
      value &= 0xFB; // not Inf/NaN
    code = uint8_t(value);
  }
  return codes;
}

Inputs makeInputs(func::FuncOp function, uint64_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::uniform_int_distribution<int> outlier(0, 63);
  Inputs inputs;
  auto floats = [&](int64_t count) {
    std::vector<float> values(count);
    for (float &v : values)
      v = normal(rng) * (outlier(rng) == 0 ? 40.0f : 1.0f);
    return values;
  };
  auto bytesOf = [](const std::vector<float> &values) {
    std::vector<uint8_t> bytes(values.size() * 4);
    std::memcpy(bytes.data(), values.data(), bytes.size());
    return bytes;
  };
  for (auto [index, type] : llvm::enumerate(function.getArgumentTypes())) {
    if (auto tensor = dyn_cast<RankedTensorType>(type)) {
      if (!tensor.hasStaticShape() || !tensor.getElementType().isF32())
        fail("@" + function.getName() + " argument " + Twine(index) +
             ": only static f32 tensors, scaled tensors and scalars are "
             "supported");
      std::vector<uint8_t> bytes = bytesOf(floats(tensor.getNumElements()));
      inputs.kernel.push_back(emulation::EmulatorArgument::buffer(bytes));
      inputs.cpu.push_back(bytes);
      continue;
    }
    if (auto scaled = dyn_cast<ScaledTensorType>(type)) {
      inputs.cpuComparable = false;
      int64_t count = 1, scales = 1;
      for (int64_t d : scaled.getShape())
        count *= d;
      for (int64_t d : scaled.getScalesShape())
        scales *= d;
      // [PK1] The codes as the converted function takes them: stored.
      std::vector<uint8_t> codes =
          randomCodes(scaled.getElementType(), count, rng);
      if (isPackedStorage(scaled.getElementType()))
        codes = numerics::packCodes(numerics::ElementType::E2M1, codes,
                                    std::vector<int64_t>(scaled.getShape()));
      inputs.kernel.push_back(emulation::EmulatorArgument::buffer(codes));
      // Scales around 1: E8M0 2^-4..2^4, E4M3 0.0156..1.75 (positive).
      // The E8M0 codes lie within 8 of each other, so sm_90a's MXFP4 GEMM
      // folds every block ([WG2], docs/nvvm.md) and the device checks the
      // folded path; MXFP8, which never folds, checks the unfolded one.
      std::vector<uint8_t> scaleCodes(scales);
      bool e8m0 = isa<Float8E8M0FNUType>(scaled.getScaleType());
      std::uniform_int_distribution<int> scale(e8m0 ? 123 : 0x18,
                                               e8m0 ? 131 : 0x3E);
      for (uint8_t &code : scaleCodes)
        code = uint8_t(scale(rng));
      inputs.kernel.push_back(emulation::EmulatorArgument::buffer(scaleCodes));
      if (scaled.getHasGlobalScale()) {
        float global = 1.0f / 2688.0f; // S_dec of an amax of 1: 1/(448*6)
        uint32_t bits;
        std::memcpy(&bits, &global, 4);
        inputs.kernel.push_back(emulation::EmulatorArgument::bits(bits));
      }
      continue;
    }
    if (type.isF32()) {
      float value = 0.01f;
      uint32_t bits;
      std::memcpy(&bits, &value, 4);
      inputs.kernel.push_back(emulation::EmulatorArgument::bits(bits));
      inputs.cpu.push_back({0x0A, 0xD7, 0x23, 0x3C});
      continue;
    }
    if (type.isInteger(64) || type.isIndex()) {
      uint64_t value = 0x5EED + index;
      inputs.kernel.push_back(emulation::EmulatorArgument::bits(value));
      std::vector<uint8_t> bytes(8);
      std::memcpy(bytes.data(), &value, 8);
      inputs.cpu.push_back(bytes);
      continue;
    }
    std::string name;
    llvm::raw_string_ostream os(name);
    type.print(os);
    fail("@" + function.getName() + " argument " + Twine(index) +
         ": unsupported type " + name);
  }
  // The JIT takes and returns plain tensors and scalars only.
  for (Type type : function.getResultTypes())
    inputs.cpuComparable &= !isa<ScaledTensorType>(type);
  return inputs;
}

/// 2·M·N·K (times the batch) summed over the function's scaled_matmul ops.
double countFlops(func::FuncOp function) {
  double flops = 0;
  function.walk([&](ScaledMatmulOp op) {
    auto acc = cast<RankedTensorType>(op.getAcc().getType());
    flops += 2.0 * double(acc.getNumElements()) *
             double(op.getLhs().getType().getShape().back());
  });
  return flops;
}

/// Parses `file` and keeps function `function` only (a case file holds
/// several): the tensor-level module every path of a case starts from.
OwningOpRef<ModuleOp> parseCase(MLIRContext &context, const std::string &file,
                                llvm::StringRef function) {
  numerics::Expected<std::vector<uint8_t>> contents = numerics::readFile(file);
  if (!contents)
    fail(contents.error().message);
  OwningOpRef<ModuleOp> module = parseModule(
      llvm::StringRef(reinterpret_cast<const char *>(contents->data()),
                      contents->size()),
      file, &context);
  if (!module)
    fail("cannot parse '" + file + "'");
  if (!module->lookupSymbol<func::FuncOp>(function))
    fail("'" + file + "' has no function @" + function);
  for (auto other : llvm::make_early_inc_range(module->getOps<func::FuncOp>()))
    if (other.getName() != function)
      other.erase();
  return module;
}

/// A copy of `source` lowered by the pipeline `build` adds.
OwningOpRef<ModuleOp> compile(ModuleOp source,
                              llvm::function_ref<void(OpPassManager &)> build,
                              const Twine &what) {
  OwningOpRef<ModuleOp> module = source.clone();
  PassManager pm(source.getContext(), ModuleOp::getOperationName());
  build(pm);
  // The first error joins the one line of fail().
  std::string reason;
  ScopedDiagnosticHandler handler(source.getContext(), [&](Diagnostic &d) {
    if (reason.empty() && d.getSeverity() == DiagnosticSeverity::Error)
      reason = d.str();
    return success();
  });
  if (failed(pm.run(*module)))
    fail("the case does not compile through the " + what +
         (reason.empty() ? "" : ": " + reason));
  return module;
}

/// The tensor map a pointer kernel operand at `address` points at (the
/// emulator's image of it, ptx::encodeTensorMap) and the
/// allocation of its tensor; fails the case for any other pointer.
std::pair<ptx::TensorMap, emulation::LaunchPointer>
getTensorMap(const emulation::LaunchInfo &launch, uint64_t address) {
  std::optional<emulation::LaunchPointer> image = launch.findGlobal(address);
  if (!image || image->offset + ptx::kTensorMapBytes > image->memory->size())
    fail("a pointer kernel operand points at no host-made tensor map, the "
         "only pointers the runner passes");
  ptx::TensorMap map;
  if (std::string error =
          ptx::decodeTensorMap(llvm::ArrayRef(*image->memory)
                                   .slice(image->offset, ptx::kTensorMapBytes),
                               &map);
      !error.empty())
    fail("a pointer kernel operand: " + error);
  std::optional<emulation::LaunchPointer> tensor =
      launch.findGlobal(map.globalAddress);
  if (!tensor)
    fail("a tensor map's tensor lies in no allocation");
  return {map, *tensor};
}

bool isPointerOperand(Value operand) {
  return isa<LLVM::LLVMPointerType>(operand.getType());
}

/// A buffer a launch touches: the allocation of a memref operand, or of the
/// tensor of a tensor-map operand.
struct LaunchBuffer {
  const void *id;
  const std::vector<uint8_t> *memory;
  unsigned elementBytes;
};

std::vector<LaunchBuffer> getBuffers(const emulation::LaunchInfo &launch) {
  gpu::LaunchFuncOp op = launch.op; // op accessors are not const
  std::vector<LaunchBuffer> buffers;
  for (auto [operand, value] :
       llvm::zip(op.getKernelOperands(), launch.operands)) {
    if (const auto *memref = std::get_if<emulation::LaunchMemRef>(&value)) {
      buffers.push_back({memref->id, memref->memory, memref->elementBytes});
    } else if (isPointerOperand(operand)) {
      auto [map, tensor] = getTensorMap(launch, std::get<uint64_t>(value));
      buffers.push_back({tensor.id, tensor.memory, map.elementBytes});
    }
  }
  return buffers;
}

/// The manifest's param records of one launch (see the file comment).
void writeParams(llvm::raw_ostream &os, const emulation::LaunchInfo &launch,
                 llvm::function_ref<unsigned(const void *)> bufferId) {
  gpu::LaunchFuncOp op = launch.op; // op accessors are not const
  for (auto [operand, value] :
       llvm::zip(op.getKernelOperands(), launch.operands)) {
    if (isPointerOperand(operand)) {
      auto [map, tensor] = getTensorMap(launch, std::get<uint64_t>(value));
      os << "param tensormap " << bufferId(tensor.id) << " " << tensor.offset
         << " " << map.rank << " " << map.elementBytes << " "
         << (map.swizzle == ptx::SwizzleMode::None
                 ? 0
                 : ptx::getSwizzleBytes(map.swizzle))
         << " " << map.l2Promotion;
      for (unsigned d = 0; d < map.rank; ++d)
        os << " " << map.sizes[d];
      for (unsigned d = 1; d < map.rank; ++d)
        os << " " << map.strides[d];
      for (unsigned d = 0; d < map.rank; ++d)
        os << " " << map.box[d];
      os << "\n";
      continue;
    }
    if (const auto *memref = std::get_if<emulation::LaunchMemRef>(&value)) {
      unsigned id = bufferId(memref->id);
      os << "param ptr " << id << "\nparam ptr " << id << "\n";
      os << llvm::formatv("param u64 {0:x}\n", memref->offset);
      for (int64_t size : memref->sizes)
        os << llvm::formatv("param u64 {0:x}\n", size);
      for (int64_t stride : memref->strides)
        os << llvm::formatv("param u64 {0:x}\n", stride);
      continue;
    }
    uint64_t bits = std::get<uint64_t>(value);
    Type type = operand.getType();
    unsigned width = type.isIndex() ? 64 : type.getIntOrFloatBitWidth();
    if (width == 64)
      os << llvm::formatv("param u64 {0:x}\n", bits);
    else if (width == 32)
      os << llvm::formatv("param u32 {0:x}\n", uint32_t(bits));
    else
      fail("a kernel operand of " + Twine(width) +
           " bits, which the runner does not pass");
  }
}

/// A pattern the device fills a timing buffer with: 1.1f for 4-byte
/// elements, bf16 1.0 for 2-byte ones, 0x66 bytes otherwise. 0x66 is finite
/// in every byte format a kernel reads (E2M1 pair 4.0 / 4.0, E4M3 and UE4M3
/// 56, E5M2 1536) and an E8M0 scale 2^-25 inside every window where the
/// sm_90a GEMM takes its fused-scaling loop (69..172 at the narrowest,
/// getFusedScaleWindow in MmaSyncFP8.cpp): a timing measures the loop that
/// real scales take, not the exact fallback that codes like 0x01 (2^-126)
/// would force.
uint32_t getFillPattern(unsigned elementBytes) {
  return elementBytes == 4   ? 0x3F8CCCCDu
         : elementBytes == 2 ? 0x3F803F80u
                             : 0x66666666u;
}

void prepareCase(MLIRContext &context, const Case &c, const GPUTarget &target,
                 const std::string &toolkit, Folder &folder) {
  llvm::errs() << "fp4-gpu-prepare: " << c.name << " (" << c.mode << ")\n";
  CUDAPipelineOptions options;
  options.recipe = c.recipe;
  options.chip = target.chip;
  OwningOpRef<ModuleOp> tensorModule = parseCase(context, c.file, c.function);
  auto source = tensorModule->lookupSymbol<func::FuncOp>(c.function);
  OwningOpRef<ModuleOp> kernels = compile(
      *tensorModule,
      [&](OpPassManager &pm) { buildCUDAKernelPipeline(pm, options); },
      "CUDA kernel pipeline");
  options.format = CUDAFormat::Binary;
  options.toolkit = toolkit;
  OwningOpRef<ModuleOp> binaries = compile(
      *tensorModule, [&](OpPassManager &pm) { buildCUDAPipeline(pm, options); },
      "CUDA pipeline (format=bin)");
  llvm::raw_string_ostream &os = folder.manifest();
  os << llvm::formatv("case {0} {1} {2:e}\n", c.name, c.mode,
                      countFlops(source));
  std::map<std::string, std::string> cubinIds;
  binaries->walk([&](gpu::BinaryOp binary) {
    for (Attribute attr : binary.getObjectsAttr()) {
      auto object = cast<gpu::ObjectAttr>(attr);
      std::string id = c.name + "." + binary.getName().str();
      os << "cubin " << id << " "
         << folder.cubin(id, object.getObject().getValue()) << "\n";
      cubinIds[binary.getName().str()] = id;
    }
  });

  Inputs inputs = makeInputs(
      source, hashBytes(std::vector<uint8_t>(c.name.begin(), c.name.end())));
  bool check = c.mode == "check";

  // Buffers are numbered per case in the order launches first use them.
  std::map<const void *, unsigned> ids;
  auto bufferId = [&](const void *memory) {
    return ids.emplace(memory, unsigned(ids.size())).first->second;
  };
  // The buffers of the launch being executed and their contents before it.
  std::vector<std::pair<unsigned, std::string>> uses;
  emulation::EmulatorHooks hooks;
  hooks.executeKernels = check;
  hooks.onLaunch = [&](const emulation::LaunchInfo &launch, bool after) {
    auto forEachBuffer = [&](auto body) {
      std::set<unsigned> seen;
      for (const LaunchBuffer &buffer : getBuffers(launch))
        if (seen.insert(bufferId(buffer.id)).second)
          body(bufferId(buffer.id), buffer);
    };
    if (after) {
      size_t next = 0;
      forEachBuffer([&](unsigned id, const LaunchBuffer &buffer) {
        os << "use " << id << " before " << uses[next++].second << " after "
           << (check ? folder.blob(*buffer.memory) : std::string("-")) << "\n";
      });
      os << "end\n";
      return;
    }
    gpu::LaunchFuncOp op = launch.op;
    std::string module = op.getKernelModuleName().str();
    if (!cubinIds.count(module))
      fail("kernel module @" + module + " has no cubin");
    os << llvm::formatv("launch {0} {1} {2} {3} {4} {5} {6} {7} {8}\n",
                        cubinIds[module], op.getKernelName(), launch.grid[0],
                        launch.grid[1], launch.grid[2], launch.block[0],
                        launch.block[1], launch.block[2],
                        launch.dynamicSharedBytes);
    uses.clear();
    forEachBuffer([&](unsigned id, const LaunchBuffer &buffer) {
      os << "buffer " << id << " " << buffer.memory->size() << "\n";
      uses.emplace_back(
          id, check ? folder.blob(*buffer.memory)
                    : llvm::formatv("fill {0:x-8}",
                                    getFillPattern(buffer.elementBytes))
                          .str());
    });
    writeParams(os, launch, bufferId);
  };
  auto results = emulation::emulate(*kernels, c.function, inputs.kernel, target,
                                    /*stats=*/nullptr, &hooks);
  if (!results)
    fail(c.name + ": " + llvm::toString(results.takeError()));
  if (!check || !inputs.cpuComparable)
    return;

  // The CPU path on the same inputs: the emulated step against the JIT.
  OwningOpRef<ModuleOp> copy = tensorModule->clone();
  auto jit = JitFunction::compile(*copy, c.function, [&](OpPassManager &pm) {
    CPUPipelineOptions cpu;
    cpu.recipe = c.recipe;
    cpu.outParams = true;
    buildCPUPipeline(pm, cpu);
  });
  if (!jit)
    fail(c.name +
         ": the CPU path does not compile: " + llvm::toString(jit.takeError()));
  std::vector<const void *> args;
  for (const std::vector<uint8_t> &arg : inputs.cpu)
    args.push_back(arg.data());
  std::vector<std::vector<uint8_t>> outputs;
  std::vector<void *> outs;
  for (const JitValue &result : (*jit)->getResults())
    outputs.emplace_back(size_t(result.getNumElements() * result.elementBytes));
  for (auto &output : outputs)
    outs.push_back(output.data());
  if (llvm::Error error = (*jit)->call(args, outs))
    fail(c.name + ": " + llvm::toString(std::move(error)));
  unsigned same = 0;
  for (size_t i = 0; i < outputs.size() && i < results->size(); ++i)
    same += outputs[i] == (*results)[i];
  os << llvm::formatv("note {0}: {1} of {2} results of the emulated kernels "
                      "are bit-identical to the CPU path\n",
                      c.name, same, outputs.size());
  llvm::errs() << llvm::formatv("  {0} of {1} results bit-identical to the "
                                "CPU path\n",
                                same, outputs.size());
}

} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM initLLVM(argc, argv);
  std::string chip = "sm_90a", toolkit = "/usr/local/cuda", out, casesPath;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc)
        fail("option '" + arg + "' needs a value");
      return argv[++i];
    };
    if (arg == "--chip")
      chip = value();
    else if (arg == "--toolkit")
      toolkit = value();
    else if (arg == "--out")
      out = value();
    else if (!arg.empty() && arg[0] != '-' && casesPath.empty())
      casesPath = arg;
    else
      fail("usage: fp4-gpu-prepare [--chip C] [--toolkit DIR] --out DIR "
           "CASES.txt");
  }
  if (out.empty() || casesPath.empty())
    fail("usage: fp4-gpu-prepare [--chip C] [--toolkit DIR] --out DIR "
         "CASES.txt");
  // Options and the case file are checked before any case is compiled.
  std::optional<GPUChip> parsed = parseGPUChip(chip);
  if (!parsed || !getGPUTarget(*parsed).isNVIDIA())
    fail("unknown chip '" + chip + "': expected one of " +
         getGPUChipNames(GPUVendor::NVIDIA));
  const GPUTarget &target = getGPUTarget(*parsed);
  std::vector<Case> cases = readCases(casesPath);
  if (!llvm::sys::fs::can_execute(toolkit + "/bin/ptxas"))
    fail("--toolkit '" + toolkit + "' has no executable bin/ptxas");

  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
  DialectRegistry registry;
  registerAllDialects(registry);
  registerAllPasses();
  MLIRContext context(registry);

  Folder folder(out);
  folder.manifest() << "fp4-gpu-check 3\nchip " << chip << "\n";
  for (const Case &c : cases)
    prepareCase(context, c, target, toolkit, folder);
  folder.write();
  return 0;
}
