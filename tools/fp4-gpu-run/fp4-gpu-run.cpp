//===- fp4-gpu-run.cpp - Run fp4train's NVIDIA kernels on a device --------===//
//
//   fp4-gpu-run [--reps N] [--no-flush] FOLDER
//
// Runs every kernel launch that fp4-gpu-prepare recorded in
// FOLDER/manifest.txt on the first CUDA device, compares what each kernel
// leaves in its buffers with the lane-exact emulator's bytes, bit for bit,
// and times it; prints one table row per launch and per case, with GB/s
// against the device's memory bandwidth and TFLOP/s against its FP8 dense
// tensor-core peak. Needs nothing but the NVIDIA driver: libcuda.so.1 is
// opened at run time (the CUDA toolkit is needed only to build this file,
// for cuda.h). Exit status: 0 when every check is bit-exact, 1 when one is
// not, 2 when the run cannot happen (no driver, no device, a bad folder).
//
// The manifest, one record per line:
//   fp4-gpu-check 3                      the format
//   chip CHIP                            what the cubins were built for
//   case NAME check|timing FLOPS         starts a case (FLOPS: its GEMMs')
//   cubin ID PATH                        a cubin, by its id
//   note TEXT                            printed as is
//   launch CUBIN KERNEL GX GY GZ BX BY BZ SMEM
//                                        SMEM: dynamic shared memory bytes
//                                        (the kernel is opted in to them
//                                        past the default 48 KiB)
//   buffer ID BYTES                      a device buffer of the case
//   param ptr ID | param u64 HEX | param u32 HEX |
//   param tensormap ID OFFSET RANK ELEMENT SWIZZLE L2 DIMS... STRIDES... BOX...
//                                        the kernel's parameters, in order;
//                                        a tensor map (decimal fields) is
//                                        encoded here (cuTensorMapEncodeTiled)
//                                        over buffer ID + OFFSET bytes: RANK
//                                        dimensions of ELEMENT-byte elements,
//                                        innermost first, RANK - 1 byte
//                                        strides (from dimension 1), the box;
//                                        SWIZZLE 0/32/64/128 bytes, L2
//                                        promotion 0/64/128/256 bytes, zero
//                                        fill out of bounds; the kernel gets a
//                                        pointer to a device copy of the map
//   use ID before BLOB|fill HEX after BLOB|-
//                                        a buffer's contents before the
//                                        launch (a file, or a 32-bit fill
//                                        pattern) and after it (a file to
//                                        compare with, or - for none)
//   end                                  launches the kernel
//
//===----------------------------------------------------------------------===//

#include "fp4train/Numerics/Files.h"

#include <cuda.h>

#include <algorithm>
#include <cerrno>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

namespace {

[[noreturn]] void fatal(const char *format, ...) {
  std::fprintf(stderr, "fp4-gpu-run: error: ");
  va_list args;
  va_start(args, format);
  std::vfprintf(stderr, format, args);
  va_end(args);
  std::fprintf(stderr, "\n");
  std::exit(2);
}

/// The driver API entry points this runner uses, looked up in libcuda.so.1.
struct Driver {
  void *library = nullptr;
#define FP4_DRIVER_FUNCTION(name) decltype(&::name) name = nullptr;
  FP4_DRIVER_FUNCTION(cuInit)
  FP4_DRIVER_FUNCTION(cuDeviceGet)
  FP4_DRIVER_FUNCTION(cuDeviceGetName)
  FP4_DRIVER_FUNCTION(cuDeviceGetAttribute)
  FP4_DRIVER_FUNCTION(cuDevicePrimaryCtxRetain)
  FP4_DRIVER_FUNCTION(cuCtxSetCurrent)
  FP4_DRIVER_FUNCTION(cuCtxSynchronize)
  FP4_DRIVER_FUNCTION(cuModuleLoadData)
  FP4_DRIVER_FUNCTION(cuModuleGetFunction)
  FP4_DRIVER_FUNCTION(cuFuncGetParamInfo)
  FP4_DRIVER_FUNCTION(cuFuncGetAttribute)
  FP4_DRIVER_FUNCTION(cuFuncSetAttribute)
  FP4_DRIVER_FUNCTION(cuLaunchKernel)
  FP4_DRIVER_FUNCTION(cuMemAlloc)
  FP4_DRIVER_FUNCTION(cuMemFree)
  FP4_DRIVER_FUNCTION(cuMemcpyHtoD)
  FP4_DRIVER_FUNCTION(cuMemcpyDtoH)
  FP4_DRIVER_FUNCTION(cuMemsetD32)
  FP4_DRIVER_FUNCTION(cuMemsetD8)
  FP4_DRIVER_FUNCTION(cuEventCreate)
  FP4_DRIVER_FUNCTION(cuEventRecord)
  FP4_DRIVER_FUNCTION(cuEventSynchronize)
  FP4_DRIVER_FUNCTION(cuEventElapsedTime)
  FP4_DRIVER_FUNCTION(cuGetErrorString)
  FP4_DRIVER_FUNCTION(cuTensorMapEncodeTiled)
#undef FP4_DRIVER_FUNCTION

  /// Looks `name` up, versioned names first (cuda.h maps cuMemAlloc to
  /// cuMemAlloc_v2 and so on); null if the driver lacks it.
  void *lookup(const char *name) {
    for (const char *suffix : {"_v2", ""})
      if (void *symbol = ::dlsym(library, (std::string(name) + suffix).c_str()))
        return symbol;
    return nullptr;
  }

  void load() {
    library = ::dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!library)
      fatal("cannot load the NVIDIA driver library libcuda.so.1 (%s); this "
            "runner needs a machine with an NVIDIA GPU and its driver",
            ::dlerror());
#define FP4_LOOKUP(name, required)                                             \
  name = reinterpret_cast<decltype(name)>(lookup(#name));                      \
  if (!name && required)                                                       \
    fatal("the driver has no %s", #name);
    FP4_LOOKUP(cuInit, true)
    FP4_LOOKUP(cuDeviceGet, true)
    FP4_LOOKUP(cuDeviceGetName, true)
    FP4_LOOKUP(cuDeviceGetAttribute, true)
    FP4_LOOKUP(cuDevicePrimaryCtxRetain, true)
    FP4_LOOKUP(cuCtxSetCurrent, true)
    FP4_LOOKUP(cuCtxSynchronize, true)
    FP4_LOOKUP(cuModuleLoadData, true)
    FP4_LOOKUP(cuModuleGetFunction, true)
    FP4_LOOKUP(cuFuncGetParamInfo, false) // CUDA 12.4 drivers and later
    FP4_LOOKUP(cuFuncGetAttribute, true)
    FP4_LOOKUP(cuFuncSetAttribute, true)
    FP4_LOOKUP(cuLaunchKernel, true)
    FP4_LOOKUP(cuMemAlloc, true)
    FP4_LOOKUP(cuMemFree, true)
    FP4_LOOKUP(cuMemcpyHtoD, true)
    FP4_LOOKUP(cuMemcpyDtoH, true)
    FP4_LOOKUP(cuMemsetD32, true)
    FP4_LOOKUP(cuMemsetD8, true)
    FP4_LOOKUP(cuEventCreate, true)
    FP4_LOOKUP(cuEventRecord, true)
    FP4_LOOKUP(cuEventSynchronize, true)
    FP4_LOOKUP(cuEventElapsedTime, true)
    FP4_LOOKUP(cuGetErrorString, true)
    FP4_LOOKUP(cuTensorMapEncodeTiled, false) // CUDA 12 drivers and later
#undef FP4_LOOKUP
  }

  void check(CUresult result, const char *what) const {
    if (result == CUDA_SUCCESS)
      return;
    const char *message = nullptr;
    cuGetErrorString(result, &message);
    fatal("%s: %s (CUresult %d)", what, message ? message : "unknown error",
          int(result));
  }
};

std::vector<uint8_t> readBytes(const std::string &path) {
  std::ifstream file(path, std::ios::binary);
  if (!file)
    fatal("cannot read '%s'", path.c_str());
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(file), {});
}

/// A TMA tensor map over a buffer of the case (the manifest's `param
/// tensormap`).
struct TensorMapParam {
  unsigned buffer = 0, rank = 0, elementBytes = 0, swizzle = 0, l2 = 0;
  uint64_t offset = 0;
  cuuint64_t dims[5] = {}, strides[4] = {};
  cuuint32_t box[5] = {};
};

struct Param {
  enum Kind { Pointer, U64, U32, TensorMap } kind;
  uint64_t value; // buffer id for Pointer
  TensorMapParam map;
};

struct Use {
  unsigned buffer;
  std::string before, after; // a blob path, or "" with fill / no check
  uint32_t fill = 0;
};

struct Launch {
  std::string cubin, kernel;
  unsigned grid[3], block[3];
  unsigned dynamicShared = 0;
  std::vector<Param> params;
  std::vector<Use> uses;
};

struct Case {
  std::string name, mode;
  double flops = 0;
  std::map<unsigned, uint64_t> buffers; // id -> bytes
  std::vector<Launch> launches;
  std::vector<std::string> notes;
};

struct Manifest {
  std::string chip;
  std::map<std::string, std::string> cubins;
  std::vector<Case> cases;
};

/// `relative` (a path the manifest names) joined to `folder`, where it must
/// stay: fp4-gpu-prepare writes only `blobs/NAME` and `cubins/NAME`, NAME a
/// plain file name ([robustness] no path built from input text leaves its
/// folder).
static std::optional<std::string> inFolder(const std::string &folder,
                                           const std::string &relative) {
  size_t slash = relative.find('/');
  if (slash == std::string::npos)
    return std::nullopt;
  std::string sub = relative.substr(0, slash);
  if ((sub != "blobs" && sub != "cubins") ||
      !fp4train::numerics::isPlainFileName(relative.substr(slash + 1)))
    return std::nullopt;
  return folder + "/" + relative;
}

Manifest readManifest(const std::string &folder) {
  std::ifstream file(folder + "/manifest.txt");
  if (!file)
    fatal("cannot read '%s/manifest.txt' (run make gpu-check to prepare the "
          "folder)",
          folder.c_str());
  Manifest manifest;
  Launch launch;
  bool inLaunch = false;
  std::string line;
  unsigned number = 0;
  while (std::getline(file, line)) {
    ++number;
    std::istringstream words(line);
    std::string record;
    words >> record;
    auto bad = [&] {
      fatal("manifest.txt:%u: malformed '%s' record", number, record.c_str());
    };
    if (record.empty())
      continue;
    if (number == 1) {
      std::string version;
      if (record != "fp4-gpu-check" || !(words >> version) || version != "3")
        fatal("manifest.txt is not an fp4-gpu-check 3 manifest (prepare the "
              "folder again with this runner's make gpu-check)");
      continue;
    }
    if (record == "chip") {
      words >> manifest.chip;
    } else if (record == "case") {
      Case c;
      if (!(words >> c.name >> c.mode >> c.flops))
        bad();
      manifest.cases.push_back(c);
    } else if (manifest.cases.empty()) {
      fatal("manifest.txt:%u: '%s' before the first case", number,
            record.c_str());
    } else if (record == "note") {
      std::string rest;
      std::getline(words, rest);
      manifest.cases.back().notes.push_back(
          rest.substr(rest.find_first_not_of(' ')));
    } else if (record == "cubin") {
      std::string id, path;
      std::optional<std::string> resolved;
      if (!(words >> id >> path) || !(resolved = inFolder(folder, path)))
        bad();
      manifest.cubins[id] = *resolved;
    } else if (record == "launch") {
      launch = Launch();
      if (!(words >> launch.cubin >> launch.kernel >> launch.grid[0] >>
            launch.grid[1] >> launch.grid[2] >> launch.block[0] >>
            launch.block[1] >> launch.block[2] >> launch.dynamicShared))
        bad();
      if (!manifest.cubins.count(launch.cubin))
        fatal("manifest.txt:%u: unknown cubin '%s'", number,
              launch.cubin.c_str());
      inLaunch = true;
    } else if (!inLaunch) {
      fatal("manifest.txt:%u: '%s' outside a launch", number, record.c_str());
    } else if (record == "buffer") {
      unsigned id;
      uint64_t bytes;
      if (!(words >> id >> bytes))
        bad();
      uint64_t &size = manifest.cases.back().buffers[id];
      size = std::max(size, bytes);
    } else if (record == "param") {
      std::string kind;
      Param param{};
      if (!(words >> kind))
        bad();
      if (kind == "ptr") {
        param.kind = Param::Pointer;
        if (!(words >> param.value) ||
            !manifest.cases.back().buffers.count(unsigned(param.value)))
          bad();
      } else if (kind == "tensormap") {
        param.kind = Param::TensorMap;
        TensorMapParam &m = param.map;
        if (!(words >> m.buffer >> m.offset >> m.rank >> m.elementBytes >>
              m.swizzle >> m.l2) ||
            !manifest.cases.back().buffers.count(m.buffer) || m.rank < 1 ||
            m.rank > 5)
          bad();
        for (unsigned d = 0; d < m.rank; ++d)
          if (!(words >> m.dims[d]))
            bad();
        for (unsigned d = 1; d < m.rank; ++d)
          if (!(words >> m.strides[d - 1]))
            bad();
        for (unsigned d = 0; d < m.rank; ++d)
          if (!(words >> m.box[d]))
            bad();
        // The tensor lies inside its buffer: it ends at OFFSET + DIM0 *
        // ELEMENT + sum over d > 0 of (DIM_d - 1) * STRIDE_d.
        uint64_t end = m.offset, term = 0;
        auto extend = [&](uint64_t count, uint64_t stride) {
          return !__builtin_mul_overflow(count, stride, &term) &&
                 !__builtin_add_overflow(end, term, &end);
        };
        bool inside = extend(m.dims[0], m.elementBytes);
        for (unsigned d = 0; d < m.rank; ++d)
          inside = inside && m.dims[d] > 0 &&
                   (d == 0 || extend(m.dims[d] - 1, m.strides[d - 1]));
        if (!inside || end > manifest.cases.back().buffers[m.buffer])
          bad();
      } else if (kind == "u64" || kind == "u32") {
        param.kind = kind == "u64" ? Param::U64 : Param::U32;
        std::string hex;
        if (!(words >> hex))
          bad();
        param.value = std::strtoull(hex.c_str(), nullptr, 16);
      } else {
        bad();
      }
      launch.params.push_back(param);
    } else if (record == "use") {
      Use use;
      std::string before, after, source;
      if (!(words >> use.buffer >> before >> source) || before != "before" ||
          !manifest.cases.back().buffers.count(use.buffer))
        bad();
      if (source == "fill") {
        std::string hex;
        if (!(words >> hex))
          bad();
        use.fill = uint32_t(std::strtoul(hex.c_str(), nullptr, 16));
      } else if (std::optional<std::string> path = inFolder(folder, source)) {
        use.before = *path;
      } else {
        bad();
      }
      if (!(words >> after >> source) || after != "after")
        bad();
      if (source != "-") {
        std::optional<std::string> path = inFolder(folder, source);
        if (!path)
          bad();
        use.after = *path;
      }
      launch.uses.push_back(use);
    } else if (record == "end") {
      manifest.cases.back().launches.push_back(launch);
      inLaunch = false;
    } else {
      fatal("manifest.txt:%u: unknown record '%s'", number, record.c_str());
    }
  }
  if (inLaunch)
    fatal("manifest.txt ends inside a launch");
  return manifest;
}

struct Device {
  std::string name;
  int major = 0, minor = 0, sms = 0;
  int maxSharedPerBlock = 0; // bytes, with the opt-in
  double bandwidth = 0;      // bytes/s
  double fp8Peak = 0;        // FLOP/s, 0 when unknown
};

Device describe(const Driver &driver, CUdevice device) {
  Device d;
  char name[256] = {};
  driver.check(driver.cuDeviceGetName(name, sizeof(name), device),
               "cuDeviceGetName");
  d.name = name;
  int memoryClock = 0, busWidth = 0, clock = 0;
  driver.cuDeviceGetAttribute(
      &d.major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, device);
  driver.cuDeviceGetAttribute(
      &d.minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, device);
  driver.cuDeviceGetAttribute(
      &d.maxSharedPerBlock,
      CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, device);
  driver.cuDeviceGetAttribute(&d.sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT,
                              device);
  driver.cuDeviceGetAttribute(&memoryClock,
                              CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE, device);
  driver.cuDeviceGetAttribute(
      &busWidth, CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH, device);
  driver.cuDeviceGetAttribute(&clock, CU_DEVICE_ATTRIBUTE_CLOCK_RATE, device);
  // Double data rate: two transfers per memory clock (kHz) per bus bit.
  d.bandwidth = 2.0 * memoryClock * 1e3 * busWidth / 8.0;
  // Hopper's FP8 tensor cores: 4096 dense FMAs (8192 FLOP) per SM and clock
  // (H100 SXM: 132 SMs x 1.83 GHz x 8192 = 1979 TFLOP/s). Other chips' rates
  // are not tabulated here.
  if (d.major == 9 && d.minor == 0)
    d.fp8Peak = double(d.sms) * clock * 1e3 * 8192.0;
  return d;
}

struct Result {
  double micros = 0;
  uint64_t bytes = 0;
  uint64_t mismatches = 0, firstMismatch = 0;
  bool checked = false;
};

class Runner {
public:
  Runner(Driver &driver, const Manifest &manifest, int reps, bool flush)
      : driver(driver), manifest(manifest), reps(reps), flush(flush) {}

  /// Runs every case; returns false if a check failed.
  bool run() {
    driver.check(driver.cuInit(0), "cuInit");
    CUdevice device;
    driver.check(driver.cuDeviceGet(&device, 0), "cuDeviceGet (no device?)");
    CUcontext context;
    driver.check(driver.cuDevicePrimaryCtxRetain(&context, device),
                 "cuDevicePrimaryCtxRetain");
    driver.check(driver.cuCtxSetCurrent(context), "cuCtxSetCurrent");
    info = describe(driver, device);
    std::printf(
        "device: %s (sm_%d%d, %d SMs), memory bandwidth %.0f GB/s, "
        "FP8 dense peak %s; kernels built for %s\n",
        info.name.c_str(), info.major, info.minor, info.sms,
        info.bandwidth / 1e9,
        info.fp8Peak
            ? (std::to_string(int(info.fp8Peak / 1e12)) + " TFLOP/s").c_str()
            : "not tabulated",
        manifest.chip.c_str());
    // A buffer larger than the L2 cache, written before every timed launch
    // so that its inputs come from memory, not from the cache.
    if (flush)
      driver.check(driver.cuMemAlloc(&scratch, kFlushBytes),
                   "cuMemAlloc (L2 flush buffer)");
    driver.check(driver.cuEventCreate(&start, CU_EVENT_DEFAULT),
                 "cuEventCreate");
    driver.check(driver.cuEventCreate(&stop, CU_EVENT_DEFAULT),
                 "cuEventCreate");

    std::printf("\n| case | launch | kernel | grid | block | time (us) | "
                "GB/s | of bandwidth | result |\n|---|---|---|---|---|---|---|"
                "---|---|\n");
    bool ok = true;
    std::vector<std::string> summaries;
    for (const Case &c : manifest.cases) {
      std::map<unsigned, CUdeviceptr> buffers;
      for (auto [id, bytes] : c.buffers) {
        CUdeviceptr pointer;
        driver.check(driver.cuMemAlloc(&pointer, std::max<uint64_t>(bytes, 4)),
                     "cuMemAlloc");
        buffers[id] = pointer;
      }
      double total = 0;
      unsigned exact = 0, checked = 0;
      for (size_t i = 0; i < c.launches.size(); ++i) {
        Result r = runLaunch(c, c.launches[i], buffers);
        total += r.micros;
        checked += r.checked;
        exact += r.checked && r.mismatches == 0;
        ok &= !r.checked || r.mismatches == 0;
        std::string result = "timed only";
        if (r.checked)
          result = r.mismatches == 0
                       ? "bit-exact"
                       : std::to_string(r.mismatches) +
                             " bytes differ (first at byte " +
                             std::to_string(r.firstMismatch) + ")";
        const Launch &l = c.launches[i];
        double gbs = r.bytes / (r.micros * 1e-6) / 1e9;
        std::printf("| %s | %zu | %s | %ux%ux%u | %ux%ux%u | %.1f | %.0f | "
                    "%.0f %% | %s |\n",
                    c.name.c_str(), i, l.kernel.c_str(), l.grid[0], l.grid[1],
                    l.grid[2], l.block[0], l.block[1], l.block[2], r.micros,
                    gbs, 100.0 * gbs * 1e9 / info.bandwidth, result.c_str());
      }
      for (auto [id, pointer] : buffers)
        driver.cuMemFree(pointer);
      char summary[512];
      std::string flops = "-";
      if (c.flops > 0) {
        double tflops = c.flops / (total * 1e-6) / 1e12;
        flops = std::to_string(tflops).substr(0, 6) + " TFLOP/s";
        if (info.fp8Peak)
          flops += " (" +
                   std::to_string(100.0 * tflops * 1e12 / info.fp8Peak)
                       .substr(0, 5) +
                   " % of FP8 dense peak)";
      }
      std::snprintf(summary, sizeof(summary),
                    "| %s | %s | %zu | %.1f | %s | %s |", c.name.c_str(),
                    c.mode.c_str(), c.launches.size(), total, flops.c_str(),
                    checked ? (std::to_string(exact) + " of " +
                               std::to_string(checked) + " bit-exact")
                                  .c_str()
                            : "timed only");
      summaries.push_back(summary);
      for (const std::string &note : c.notes)
        summaries.push_back("  note: " + note);
    }
    std::printf("\n| case | mode | launches | time (us) | GEMM throughput | "
                "checks |\n|---|---|---|---|---|---|\n");
    for (const std::string &line : summaries)
      std::printf("%s\n", line.c_str());
    return ok;
  }

private:
  static constexpr size_t kFlushBytes = size_t(256) << 20;

  CUfunction getFunction(const Launch &launch) {
    std::string key = launch.cubin + "/" + launch.kernel;
    auto found = functions.find(key);
    if (found != functions.end())
      return found->second;
    CUmodule &module = modules[launch.cubin];
    if (!module) {
      std::vector<uint8_t> image = readBytes(manifest.cubins.at(launch.cubin));
      CUresult result = driver.cuModuleLoadData(&module, image.data());
      if (result == CUDA_ERROR_NO_BINARY_FOR_GPU)
        fatal("the cubins are built for %s, which this device (sm_%d%d) "
              "cannot run",
              manifest.chip.c_str(), info.major, info.minor);
      driver.check(result, "cuModuleLoadData");
    }
    CUfunction function;
    driver.check(
        driver.cuModuleGetFunction(&function, module, launch.kernel.c_str()),
        "cuModuleGetFunction");
    return functions[key] = function;
  }

  /// A launch with dynamic shared memory must first raise the kernel's
  /// CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES past the default 48 KiB
  /// total; what the device cannot give is an error naming both sizes.
  void optInSharedMemory(CUfunction function, const Launch &launch) {
    if (!launch.dynamicShared)
      return;
    int staticBytes = 0;
    driver.check(driver.cuFuncGetAttribute(&staticBytes,
                                           CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES,
                                           function),
                 "cuFuncGetAttribute");
    if (staticBytes + launch.dynamicShared > unsigned(info.maxSharedPerBlock))
      fatal("%s needs %d + %u bytes of shared memory; this device gives a "
            "block at most %d",
            launch.kernel.c_str(), staticBytes, launch.dynamicShared,
            info.maxSharedPerBlock);
    driver.check(driver.cuFuncSetAttribute(
                     function, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                     int(launch.dynamicShared)),
                 "cuFuncSetAttribute (dynamic shared memory)");
  }

  /// A device copy of the tensor map `m` (cuTensorMapEncodeTiled) over its
  /// buffer.
  CUdeviceptr makeTensorMap(const TensorMapParam &m,
                            const std::map<unsigned, CUdeviceptr> &buffers) {
    if (!driver.cuTensorMapEncodeTiled)
      fatal("the driver has no cuTensorMapEncodeTiled (CUDA 12 or later), "
            "which the TMA kernels' tensor maps need");
    CUtensorMapDataType type =
        m.elementBytes == 1   ? CU_TENSOR_MAP_DATA_TYPE_UINT8
        : m.elementBytes == 2 ? CU_TENSOR_MAP_DATA_TYPE_UINT16
        : m.elementBytes == 4 ? CU_TENSOR_MAP_DATA_TYPE_UINT32
                              : CU_TENSOR_MAP_DATA_TYPE_INT64;
    CUtensorMapSwizzle swizzle = m.swizzle == 128  ? CU_TENSOR_MAP_SWIZZLE_128B
                                 : m.swizzle == 64 ? CU_TENSOR_MAP_SWIZZLE_64B
                                 : m.swizzle == 32 ? CU_TENSOR_MAP_SWIZZLE_32B
                                                   : CU_TENSOR_MAP_SWIZZLE_NONE;
    CUtensorMapL2promotion l2 = m.l2 == 256 ? CU_TENSOR_MAP_L2_PROMOTION_L2_256B
                                : m.l2 == 128
                                    ? CU_TENSOR_MAP_L2_PROMOTION_L2_128B
                                : m.l2 == 64 ? CU_TENSOR_MAP_L2_PROMOTION_L2_64B
                                             : CU_TENSOR_MAP_L2_PROMOTION_NONE;
    cuuint32_t elementStrides[5] = {1, 1, 1, 1, 1};
    CUtensorMap map;
    void *address = reinterpret_cast<void *>(buffers.at(m.buffer) + m.offset);
    driver.check(driver.cuTensorMapEncodeTiled(
                     &map, type, m.rank, address, m.dims, m.strides, m.box,
                     elementStrides, CU_TENSOR_MAP_INTERLEAVE_NONE, swizzle, l2,
                     CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE),
                 "cuTensorMapEncodeTiled");
    CUdeviceptr copy;
    driver.check(driver.cuMemAlloc(&copy, sizeof(map)),
                 "cuMemAlloc (tensor map)");
    driver.check(driver.cuMemcpyHtoD(copy, &map, sizeof(map)),
                 "cuMemcpyHtoD (tensor map)");
    return copy;
  }

  Result runLaunch(const Case &c, const Launch &launch,
                   const std::map<unsigned, CUdeviceptr> &buffers) {
    CUfunction function = getFunction(launch);
    Result r;
    auto upload = [&] {
      for (const Use &use : launch.uses) {
        uint64_t bytes = c.buffers.at(use.buffer);
        CUdeviceptr pointer = buffers.at(use.buffer);
        if (use.before.empty()) {
          driver.check(bytes % 4
                           ? driver.cuMemsetD8(pointer, use.fill & 0xFF, bytes)
                           : driver.cuMemsetD32(pointer, use.fill, bytes / 4),
                       "cuMemset");
          continue;
        }
        std::vector<uint8_t> data = readBytes(use.before);
        driver.check(driver.cuMemcpyHtoD(pointer, data.data(), data.size()),
                     "cuMemcpyHtoD");
      }
    };
    // The parameters, each in its own slot, as cuLaunchKernel takes them;
    // tensor maps as device copies, freed after the launch's runs.
    std::vector<uint64_t> values(launch.params.size());
    std::vector<void *> args(launch.params.size());
    std::vector<CUdeviceptr> maps;
    for (size_t i = 0; i < launch.params.size(); ++i) {
      const Param &p = launch.params[i];
      if (p.kind == Param::TensorMap)
        values[i] = maps.emplace_back(makeTensorMap(p.map, buffers));
      else
        values[i] =
            p.kind == Param::Pointer ? buffers.at(unsigned(p.value)) : p.value;
      args[i] = &values[i]; // little-endian: a u32 is the low half
      if (driver.cuFuncGetParamInfo) {
        size_t offset = 0, size = 0;
        driver.check(driver.cuFuncGetParamInfo(function, i, &offset, &size),
                     "cuFuncGetParamInfo (more parameters in the manifest "
                     "than the kernel takes?)");
        size_t expected = p.kind == Param::U32 ? 4 : 8;
        if (size != expected)
          fatal("%s parameter %zu is %zu bytes, the manifest gives %zu",
                launch.kernel.c_str(), i, size, expected);
      }
    }
    if (driver.cuFuncGetParamInfo) {
      size_t offset, size;
      if (driver.cuFuncGetParamInfo(function, launch.params.size(), &offset,
                                    &size) == CUDA_SUCCESS)
        fatal("%s takes more parameters than the manifest gives",
              launch.kernel.c_str());
    }
    optInSharedMemory(function, launch);
    auto launchOnce = [&] {
      driver.check(driver.cuLaunchKernel(
                       function, launch.grid[0], launch.grid[1], launch.grid[2],
                       launch.block[0], launch.block[1], launch.block[2],
                       launch.dynamicShared, nullptr, args.data(), nullptr),
                   "cuLaunchKernel");
    };

    // The check: inputs as the emulator saw them, one launch, every buffer
    // back.
    upload();
    launchOnce();
    driver.check(driver.cuCtxSynchronize(), launch.kernel.c_str());
    for (const Use &use : launch.uses) {
      uint64_t bytes = c.buffers.at(use.buffer);
      r.bytes += bytes;
      if (use.after.empty())
        continue;
      r.checked = true;
      std::vector<uint8_t> expected = readBytes(use.after), actual(bytes);
      driver.check(
          driver.cuMemcpyDtoH(actual.data(), buffers.at(use.buffer), bytes),
          "cuMemcpyDtoH");
      if (expected.size() != actual.size())
        fatal("%s: expected %zu bytes in buffer %u, the manifest says %llu",
              use.after.c_str(), expected.size(), use.buffer,
              (unsigned long long)bytes);
      for (size_t b = 0; b < bytes; ++b)
        if (expected[b] != actual[b] && r.mismatches++ == 0)
          r.firstMismatch = b;
    }

    // The timing: the median of `reps` launches, each after an L2 flush.
    std::vector<float> times;
    for (int rep = 0; rep < reps; ++rep) {
      if (flush)
        driver.check(driver.cuMemsetD8(scratch, uint8_t(rep), kFlushBytes),
                     "cuMemsetD8 (flush)");
      driver.check(driver.cuEventRecord(start, nullptr), "cuEventRecord");
      launchOnce();
      driver.check(driver.cuEventRecord(stop, nullptr), "cuEventRecord");
      driver.check(driver.cuEventSynchronize(stop), launch.kernel.c_str());
      float ms = 0;
      driver.check(driver.cuEventElapsedTime(&ms, start, stop),
                   "cuEventElapsedTime");
      times.push_back(ms);
    }
    std::sort(times.begin(), times.end());
    r.micros = times.empty() ? 0 : times[times.size() / 2] * 1e3;
    for (CUdeviceptr map : maps)
      driver.cuMemFree(map);
    return r;
  }

  Driver &driver;
  const Manifest &manifest;
  int reps;
  bool flush;
  Device info;
  CUdeviceptr scratch = 0;
  CUevent start = nullptr, stop = nullptr;
  std::map<std::string, CUmodule> modules;
  std::map<std::string, CUfunction> functions;
};

} // namespace

int main(int argc, char **argv) {
  int reps = 10;
  bool flush = true;
  std::string folder;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--reps" && i + 1 < argc) {
      // The whole value, in range: atoi took "2^31" or "5x" silently.
      const char *text = argv[++i];
      char *end = nullptr;
      errno = 0;
      long long value = std::strtoll(text, &end, 10);
      if (end == text || *end != '\0' || errno == ERANGE || value < 1 ||
          value > 1000000)
        fatal("--reps must be an integer in [1, 1000000], not '%s'", text);
      reps = int(value);
    } else if (arg == "--no-flush")
      flush = false;
    else if (!arg.empty() && arg[0] != '-' && folder.empty())
      folder = arg;
    else
      fatal("usage: fp4-gpu-run [--reps N] [--no-flush] FOLDER");
  }
  if (folder.empty())
    fatal("usage: fp4-gpu-run [--reps N] [--no-flush] FOLDER");
  Manifest manifest = readManifest(folder);
  Driver driver;
  driver.load();
  Runner runner(driver, manifest, reps, flush);
  return runner.run() ? 0 : 1;
}
