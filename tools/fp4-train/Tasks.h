//===- Tasks.h - Deterministic training data for fp4-train ------*- C++ -*-===//
//
// The data a step function trains on: for step s, an input X[T, D] and a
// target Y[T, D'] that depend only on (seed, s), so every recipe of a
// comparison sees exactly the same batches.
//
//===----------------------------------------------------------------------===//

#ifndef FP4TRAIN_TOOLS_FP4TRAIN_TASKS_H
#define FP4TRAIN_TOOLS_FP4TRAIN_TASKS_H

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace fp4train::train {

class Task {
public:
  virtual ~Task() = default;
  /// Writes the batch of `step` (row-major, the shapes given at creation).
  virtual void getBatch(int64_t step, float *input, float *target) const = 0;
  /// One line describing the task, for the report.
  virtual std::string describe() const = 0;
};

/// Regression onto a fixed random teacher network: X ~ N(0, 1) per step and
/// Y = tanh(X · A) · B with A [D, 64], B [64, D'] drawn once from `seed`
/// (unit-variance targets). Rows are independent samples (tokens).
std::unique_ptr<Task> createTeacherTask(int64_t rows, int64_t inputWidth,
                                        int64_t targetWidth, uint64_t seed);

/// Character-level language modelling on a text: each step takes T + 1
/// consecutive bytes at a random offset; X row t is the embedding of byte t
/// and Y row t the embedding of byte t + 1, through a fixed random embedding
/// table E[256, D] (unit-variance rows, drawn from `seed`). With an MSE loss
/// this is next-character prediction in embedding space: the model must
/// learn which characters follow which contexts.
std::unique_ptr<Task> createTextTask(const std::string &text, int64_t rows,
                                     int64_t width, uint64_t seed);

} // namespace fp4train::train

#endif // FP4TRAIN_TOOLS_FP4TRAIN_TASKS_H
