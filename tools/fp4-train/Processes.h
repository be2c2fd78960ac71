//===- Processes.h - The processes a sharded step trains on -----*- C++ -*-===//
//
// A step with a shard.grid is partitioned into one process's program that
// calls MPI (docs/sharding.md); fp4-train then runs as one process of
// `mpiexec -n N`. This is what the trainer needs of that world: which
// process it is, its shard of a whole tensor, the whole tensor from every
// process's shard, a sum over the processes, and an end of every process
// when one fails. MPI (MPICH's ABI) is loaded at run time, so fp4-train
// needs it only for sharded steps, and its absence is a clear error.
//
//===----------------------------------------------------------------------===//

#ifndef FP4TRAIN_TOOLS_FP4TRAIN_PROCESSES_H
#define FP4TRAIN_TOOLS_FP4TRAIN_PROCESSES_H

#include "fp4train/Sharding/Layout.h"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace fp4train::train {

class Processes {
public:
  /// One process, an unsharded step: shards are whole tensors.
  Processes();
  ~Processes();

  /// Loads MPI ($FP4TRAIN_MPI_LIBRARY, else MPICH's libmpich.so.12),
  /// initializes it and checks that mpiexec started as many processes as
  /// `layout`'s grid has. Every failure is one line on every process and
  /// exit status 1. Must precede compiling the step: the JIT resolves the
  /// step's MPI calls in the loaded library.
  static std::unique_ptr<Processes>
  startMPI(const mlir::fp4train::StepLayout &layout);

  int64_t getRank() const { return rank; }
  int64_t getSize() const { return size; }
  bool isRoot() const { return rank == 0; }
  /// The grid's layout of the step's boundary; null for one process.
  const mlir::fp4train::StepLayout *getLayout() const { return layout.get(); }

  /// This process's shard of `whole` (row-major, `value.globalShape`) into
  /// `shard` (row-major, the shard's shape).
  void takeShard(const mlir::fp4train::BoundaryLayout &value, const void *whole,
                 void *shard, size_t elementBytes) const;
  /// Collective: the whole tensor, on the root, from every process's
  /// `shard` (empty elsewhere).
  std::vector<uint8_t> gather(const mlir::fp4train::BoundaryLayout &value,
                              const void *shard, size_t elementBytes) const;
  /// Collective: the sum of `value` over the processes (every process gets
  /// it).
  double sum(double value) const;
  /// Collective, the first of a run: unless every process passes the same
  /// `fingerprint` (of the step and the command line), each reports that
  /// the processes were started differently and every process ends with
  /// exit status 1 after MPI_Finalize. Processes that ran different steps
  /// or options would issue collectives that do not match: a hang, a
  /// truncated message or wrong numbers.
  void checkSameRun(uint64_t fingerprint) const;
  /// Collective: when any process passes an `error`, each that did reports
  /// it and every process ends with exit status 1 after MPI_Finalize.
  /// Failures that every process reaches at the same point go here rather
  /// than to fail(): MPI_Abort may end mpiexec before the failing
  /// process's standard error reaches it, losing the report.
  void failIfAny(const std::optional<std::string> &error) const;

private:
  /// Reports `error`, finalizes MPI and ends this process with status 1.
  [[noreturn]] void end(const std::string &error) const;

  struct MPI;
  std::unique_ptr<MPI> mpi;
  std::unique_ptr<mlir::fp4train::StepLayout> layout;
  int64_t rank = 0, size = 1;
};

} // namespace fp4train::train

#endif // FP4TRAIN_TOOLS_FP4TRAIN_PROCESSES_H
