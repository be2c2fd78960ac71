//===- Processes.cpp - The processes a sharded step trains on -------------===//

#include "Processes.h"

#include "Failure.h"

#include "llvm/ADT/Twine.h"
#include "llvm/Support/DynamicLibrary.h"
#include "llvm/Support/FormatVariadic.h"

#include <mpi.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>
#include <thread>

using namespace fp4train::train;
using mlir::fp4train::BoundaryLayout;
using mlir::fp4train::StepLayout;

/// The MPI functions fp4-train calls, resolved in the loaded library. The
/// constants (MPI_COMM_WORLD, MPI_DOUBLE, ...) are MPICH's from its mpi.h:
/// the ABI the step's own MPI calls were lowered for (docs/sharding.md).
struct Processes::MPI {
  decltype(&::MPI_Init_thread) initThread = nullptr;
  decltype(&::MPI_Finalize) finalize = nullptr;
  decltype(&::MPI_Comm_rank) commRank = nullptr;
  decltype(&::MPI_Comm_size) commSize = nullptr;
  decltype(&::MPI_Allreduce) allreduce = nullptr;
  decltype(&::MPI_Gather) gather = nullptr;
};

/// What fail() calls to end every process, not only the failing one.
static decltype(&::MPI_Abort) abortWorld = nullptr;

Processes::Processes() = default;

Processes::~Processes() {
  if (mpi)
    mpi->finalize();
}

std::unique_ptr<Processes> Processes::startMPI(const StepLayout &layout) {
  const char *override = std::getenv("FP4TRAIN_MPI_LIBRARY");
  std::string library = override && *override ? override : "libmpich.so.12";
  std::string processes =
      std::to_string(layout.getNumProcesses()) + " processes";
  std::string error;
  if (llvm::sys::DynamicLibrary::LoadLibraryPermanently(library.c_str(),
                                                        &error))
    fail("the step is sharded over grid @" + layout.grid + " (" + processes +
         ") and needs MPI, which cannot be loaded: " + error +
         " (install MPICH, scripts/setup.sh, or name an MPI library with "
         "MPICH's ABI in FP4TRAIN_MPI_LIBRARY)");
  auto resolve = [&](auto &function, const char *name) {
    function = reinterpret_cast<std::remove_reference_t<decltype(function)>>(
        llvm::sys::DynamicLibrary::SearchForAddressOfSymbol(name));
    if (!function)
      fail("the MPI library '" + library + "' has no " + name);
  };
  auto result = std::unique_ptr<Processes>(new Processes());
  result->mpi = std::make_unique<MPI>();
  MPI &mpi = *result->mpi;
  resolve(mpi.initThread, "MPI_Init_thread");
  resolve(mpi.finalize, "MPI_Finalize");
  resolve(mpi.commRank, "MPI_Comm_rank");
  resolve(mpi.commSize, "MPI_Comm_size");
  resolve(mpi.allreduce, "MPI_Allreduce");
  resolve(mpi.gather, "MPI_Gather");
  resolve(abortWorld, "MPI_Abort");

  // Only the thread that trains calls MPI (the runs of a sharded step
  // train one after another; the numerics library's threads never do).
  int provided = 0;
  if (mpi.initThread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided) !=
      MPI_SUCCESS)
    fail("MPI_Init_thread failed");
  int rank = 0, size = 0;
  mpi.commRank(MPI_COMM_WORLD, &rank);
  mpi.commSize(MPI_COMM_WORLD, &size);
  result->rank = rank;
  result->size = size;
  result->layout = std::make_unique<StepLayout>(layout);
  // Checked before any collective, so every process reports it and none
  // waits for the others.
  if (size != layout.getNumProcesses())
    fail("the step is sharded over grid @" + layout.grid + " (" + processes +
         "): run it with mpiexec -n " + llvm::Twine(layout.getNumProcesses()) +
         ", not " + llvm::Twine(size) + " process" + (size == 1 ? "" : "es"));
  setFailureHandler(
      "process " + std::to_string(rank) + " of " + std::to_string(size) + ": ",
      [] {
        // mpiexec takes a process's standard error and its
        // abort through different channels and may end the
        // run on the abort before it has forwarded the
        // report (seen: 1 run in 8); the pause lets the
        // report out first.
        std::this_thread::sleep_for(std::chrono::milliseconds(200));
        abortWorld(MPI_COMM_WORLD, 1);
      });
  return result;
}

/// Copies the box of `shardShape` elements at `origin` of the row-major
/// `wholeShape` tensor from `whole` into the row-major `shard`, or back
/// (`intoWhole`).
static void copyBox(const std::vector<int64_t> &wholeShape,
                    const std::vector<int64_t> &shardShape,
                    const std::vector<int64_t> &origin, uint8_t *whole,
                    uint8_t *shard, size_t elementBytes, bool intoWhole) {
  size_t rank = wholeShape.size();
  if (rank == 0) {
    std::memcpy(intoWhole ? whole : shard, intoWhole ? shard : whole,
                elementBytes);
    return;
  }
  // The whole tensor's strides, in elements; the shard is copied one row
  // (of its last dimension) at a time.
  std::vector<int64_t> wholeStride(rank, 1);
  for (size_t d = rank - 1; d-- > 0;)
    wholeStride[d] = wholeStride[d + 1] * wholeShape[d + 1];
  int64_t rows = 1;
  for (size_t d = 0; d + 1 < rank; ++d)
    rows *= shardShape[d];
  size_t rowBytes = size_t(shardShape[rank - 1]) * elementBytes;
  for (int64_t row = 0; row < rows; ++row) {
    int64_t wholeOffset = origin[rank - 1], rest = row;
    for (size_t d = rank - 1; d-- > 0;) {
      wholeOffset += (rest % shardShape[d] + origin[d]) * wholeStride[d];
      rest /= shardShape[d];
    }
    uint8_t *w = whole + size_t(wholeOffset) * elementBytes;
    uint8_t *s = shard + size_t(row) * rowBytes;
    std::memcpy(intoWhole ? w : s, intoWhole ? s : w, rowBytes);
  }
}

void Processes::takeShard(const BoundaryLayout &value, const void *whole,
                          void *shard, size_t elementBytes) const {
  std::vector<int64_t> shape =
      layout ? value.getShardShape(layout->gridShape) : value.globalShape;
  std::vector<int64_t> origin =
      layout ? value.getShardOrigin(layout->gridShape,
                                    layout->getCoordinates(rank))
             : std::vector<int64_t>(value.globalShape.size(), 0);
  copyBox(value.globalShape, shape, origin,
          static_cast<uint8_t *>(const_cast<void *>(whole)),
          static_cast<uint8_t *>(shard), elementBytes, /*intoWhole=*/false);
}

std::vector<uint8_t> Processes::gather(const BoundaryLayout &value,
                                       const void *shard,
                                       size_t elementBytes) const {
  int64_t elements = 1;
  for (int64_t extent : value.globalShape)
    elements *= extent;
  size_t wholeBytes = size_t(elements) * elementBytes;
  if (!layout) {
    auto *bytes = static_cast<const uint8_t *>(shard);
    return std::vector<uint8_t>(bytes, bytes + wholeBytes);
  }
  std::vector<int64_t> shape = value.getShardShape(layout->gridShape);
  int64_t shardElements = 1;
  for (int64_t extent : shape)
    shardElements *= extent;
  size_t shardBytes = size_t(shardElements) * elementBytes;
  // MPI counts are ints.
  if (shardBytes > size_t(std::numeric_limits<int>::max()))
    fail("a shard of " + llvm::Twine(uint64_t(shardBytes)) +
         " bytes is too large for one MPI_Gather");
  std::vector<uint8_t> all(isRoot() ? shardBytes * size : 0);
  mpi->gather(shard, int(shardBytes), MPI_BYTE, all.data(), int(shardBytes),
              MPI_BYTE, 0, MPI_COMM_WORLD);
  if (!isRoot())
    return {};
  std::vector<uint8_t> whole(wholeBytes);
  for (int64_t process = 0; process < size; ++process)
    copyBox(value.globalShape, shape,
            value.getShardOrigin(layout->gridShape,
                                 layout->getCoordinates(process)),
            whole.data(), all.data() + size_t(process) * shardBytes,
            elementBytes, /*intoWhole=*/true);
  return whole;
}

double Processes::sum(double value) const {
  if (!mpi)
    return value;
  double total = 0;
  mpi->allreduce(&value, &total, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  return total;
}

void Processes::failIfAny(const std::optional<std::string> &error) const {
  if (!mpi) {
    if (error)
      fail(*error);
    return;
  }
  int failed = error.has_value(), anyFailed = 0;
  mpi->allreduce(&failed, &anyFailed, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (!anyFailed)
    return;
  if (!error) {
    mpi->finalize();
    std::_Exit(1);
  }
  end(*error);
}

void Processes::checkSameRun(uint64_t fingerprint) const {
  if (!mpi)
    return;
  // One reduction gives the largest fingerprint and, through its
  // complement, the smallest: they are equal when every process's is.
  unsigned long long mine[2] = {fingerprint, ~fingerprint}, largest[2] = {};
  mpi->allreduce(mine, largest, 2, MPI_UNSIGNED_LONG_LONG, MPI_MAX,
                 MPI_COMM_WORLD);
  if (largest[0] == ~largest[1])
    return;
  end(llvm::formatv("the {0} processes were not started alike: this one "
                    "runs a step or options with fingerprint {1:x16}, "
                    "another differs (start every process of mpiexec with "
                    "the same step and command line)",
                    size, fingerprint)
          .str());
}

void Processes::end(const std::string &error) const {
  reportError(error);
  mpi->finalize();
  std::_Exit(1);
}
