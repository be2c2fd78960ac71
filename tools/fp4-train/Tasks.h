//===- Tasks.h - Deterministic training data for fp4-train ------*- C++ -*-===//
//
// The data a step function trains on: for step s, an input and a target
// that depend only on (seed, s), so every recipe of a comparison sees
// exactly the same batches. Regression tasks fill f32 tensors X[T, D] and
// Y[T, D']; the language-model task fills i32 token tensors and also has
// held-out batches for validation.
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
  /// Writes the batch of `step` (row-major, the shapes given at creation;
  /// float for the regression tasks, int32_t token ids for the language
  /// model).
  virtual void getBatch(int64_t step, void *input, void *target) const = 0;
  /// Held-out batches: how many there are (0: the task has no validation
  /// split) and batch `index` of them, in getBatch's layout.
  virtual int64_t getNumValidationBatches() const { return 0; }
  virtual void getValidationBatch(int64_t index, void *input,
                                  void *target) const {}
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

/// Byte-level language modelling on a text for a step that takes token ids
/// [B, S] (or [T]) and the next tokens as targets. `validationFraction` of
/// the text is held out, in chunks at even intervals (4 KiB, or 1/20 of a
/// shorter text); each training step takes B windows of S + 1 consecutive
/// bytes at random offsets in the rest, and the `validationBatches`
/// held-out batches are fixed windows spread evenly over the held-out part.
/// The text must hold at least 20 windows of S + 2 bytes.
std::unique_ptr<Task> createLanguageModelTask(const std::string &text,
                                              int64_t batch, int64_t length,
                                              int64_t validationBatches,
                                              double validationFraction,
                                              uint64_t seed);

} // namespace fp4train::train

#endif // FP4TRAIN_TOOLS_FP4TRAIN_TASKS_H
