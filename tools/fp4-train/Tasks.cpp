//===- Tasks.cpp - Deterministic training data for fp4-train --------------===//

#include "Tasks.h"

#include <algorithm>
#include <cmath>
#include <random>
#include <string_view>

using namespace fp4train::train;

namespace {

/// A generator for (seed, step, stream): batches do not depend on how many
/// draws earlier steps made.
std::mt19937_64 makeRng(uint64_t seed, int64_t step, uint64_t stream) {
  std::seed_seq sequence{uint32_t(seed), uint32_t(seed >> 32), uint32_t(step),
                         uint32_t(uint64_t(step) >> 32), uint32_t(stream)};
  return std::mt19937_64(sequence);
}

std::vector<float> normalMatrix(std::mt19937_64 &rng, int64_t rows,
                                int64_t cols, float stddev) {
  std::normal_distribution<float> normal(0.0f, stddev);
  std::vector<float> m(rows * cols);
  for (float &x : m)
    x = normal(rng);
  return m;
}

class TeacherTask : public Task {
public:
  TeacherTask(int64_t rows, int64_t inputWidth, int64_t targetWidth,
              uint64_t seed)
      : rows(rows), inputWidth(inputWidth), targetWidth(targetWidth),
        seed(seed) {
    std::mt19937_64 rng = makeRng(seed, -1, 0);
    // tanh of a unit-variance pre-activation has variance ~0.39; B's scale
    // brings the targets back to unit variance.
    first = normalMatrix(rng, inputWidth, kHidden,
                         1.0f / std::sqrt(float(inputWidth)));
    second = normalMatrix(rng, kHidden, targetWidth,
                          1.0f / std::sqrt(0.39f * kHidden));
  }

  void getBatch(int64_t step, void *inputBuffer,
                void *targetBuffer) const override {
    auto *input = static_cast<float *>(inputBuffer);
    auto *target = static_cast<float *>(targetBuffer);
    std::mt19937_64 rng = makeRng(seed, step, 1);
    std::normal_distribution<float> normal;
    for (int64_t i = 0; i < rows * inputWidth; ++i)
      input[i] = normal(rng);
    std::vector<float> hidden(kHidden);
    for (int64_t r = 0; r < rows; ++r) {
      for (int64_t h = 0; h < kHidden; ++h) {
        float sum = 0.0f;
        for (int64_t i = 0; i < inputWidth; ++i)
          sum += input[r * inputWidth + i] * first[i * kHidden + h];
        hidden[h] = std::tanh(sum);
      }
      for (int64_t o = 0; o < targetWidth; ++o) {
        float sum = 0.0f;
        for (int64_t h = 0; h < kHidden; ++h)
          sum += hidden[h] * second[h * targetWidth + o];
        target[r * targetWidth + o] = sum;
      }
    }
  }

  std::string describe() const override {
    return "regression onto a fixed random teacher tanh(X·A)·B, X ~ N(0,1), " +
           std::to_string(rows) + " samples per step";
  }

private:
  static constexpr int64_t kHidden = 64;
  int64_t rows, inputWidth, targetWidth;
  uint64_t seed;
  std::vector<float> first, second;
};

class TextTask : public Task {
public:
  TextTask(const std::string &text, int64_t rows, int64_t width, uint64_t seed)
      : text(text), rows(rows), width(width), seed(seed) {
    std::mt19937_64 rng = makeRng(seed, -1, 2);
    embedding = normalMatrix(rng, 256, width, 1.0f);
  }

  void getBatch(int64_t step, void *inputBuffer,
                void *targetBuffer) const override {
    auto *input = static_cast<float *>(inputBuffer);
    auto *target = static_cast<float *>(targetBuffer);
    std::mt19937_64 rng = makeRng(seed, step, 3);
    std::uniform_int_distribution<int64_t> offset(0, int64_t(text.size()) -
                                                         rows - 1);
    int64_t start = offset(rng);
    for (int64_t t = 0; t < rows; ++t) {
      const float *x = &embedding[uint8_t(text[start + t]) * width];
      const float *y = &embedding[uint8_t(text[start + t + 1]) * width];
      std::copy(x, x + width, input + t * width);
      std::copy(y, y + width, target + t * width);
    }
  }

  std::string describe() const override {
    return "next-character prediction (fixed random char embeddings as "
           "inputs and targets, MSE), " +
           std::to_string(rows) + " characters per step";
  }

private:
  std::string text;
  int64_t rows, width;
  uint64_t seed;
  std::vector<float> embedding;
};

class LanguageModelTask : public Task {
public:
  LanguageModelTask(const std::string &corpus, int64_t batch, int64_t length,
                    int64_t validationBatches, double validationFraction,
                    uint64_t seed)
      : batch(batch), length(length), validationBatches(validationBatches),
        seed(seed) {
    // Chunks of the corpus are held out at even intervals, so the held-out
    // text is drawn from all of it (a corpus of several documents is not
    // validated on its last document only).
    // At least 20 chunks, each longer than a window.
    int64_t chunk = std::max<int64_t>(
        length + 2, std::min<int64_t>(4096, int64_t(corpus.size()) / 20));
    int64_t chunks = (int64_t(corpus.size()) + chunk - 1) / chunk;
    std::string heldOut;
    double owed = 0;
    for (int64_t c = 0; c < chunks; ++c) {
      std::string_view piece =
          std::string_view(corpus).substr(c * chunk, chunk);
      owed += validationFraction;
      if (owed >= 1) {
        owed -= 1;
        heldOut += piece;
      } else {
        text += piece;
      }
    }
    trainBytes = int64_t(text.size());
    text += heldOut;
  }

  void getBatch(int64_t step, void *input, void *target) const override {
    std::mt19937_64 rng = makeRng(seed, step, 4);
    std::uniform_int_distribution<int64_t> offset(0, trainBytes - length - 1);
    for (int64_t b = 0; b < batch; ++b)
      copyWindow(offset(rng), b, input, target);
  }

  int64_t getNumValidationBatches() const override { return validationBatches; }

  void getValidationBatch(int64_t index, void *input,
                          void *target) const override {
    // Windows spread evenly over the held-out bytes, the same for every run.
    // In 128 bits: span · window reaches 2^64 for a large corpus and
    // --eval-batches (it once wrapped to a negative offset and a SIGSEGV).
    int64_t span =
        std::max<int64_t>(0, int64_t(text.size()) - trainBytes - length - 1);
    __int128 windows =
        std::max<__int128>(__int128(validationBatches) * batch, 1);
    for (int64_t b = 0; b < batch; ++b) {
      __int128 window = __int128(index) * batch + b;
      copyWindow(trainBytes + int64_t(__int128(span) * window / windows), b,
                 input, target);
    }
  }

  std::string describe() const override {
    return "byte-level language modelling, cross-entropy, " +
           std::to_string(batch) + "x" + std::to_string(length) +
           " tokens per step, " + std::to_string(trainBytes) +
           " training and " + std::to_string(text.size() - trainBytes) +
           " held-out bytes";
  }

private:
  /// Row `row` of the batch: bytes [start, start + length) as inputs and the
  /// bytes after them as targets.
  void copyWindow(int64_t start, int64_t row, void *input, void *target) const {
    auto *tokens = static_cast<int32_t *>(input) + row * length;
    auto *next = static_cast<int32_t *>(target) + row * length;
    for (int64_t t = 0; t < length; ++t) {
      tokens[t] = uint8_t(text[start + t]);
      next[t] = uint8_t(text[start + t + 1]);
    }
  }

  std::string text;
  int64_t batch, length, validationBatches;
  int64_t trainBytes;
  uint64_t seed;
};

} // namespace

std::unique_ptr<Task> fp4train::train::createTeacherTask(int64_t rows,
                                                         int64_t inputWidth,
                                                         int64_t targetWidth,
                                                         uint64_t seed) {
  return std::make_unique<TeacherTask>(rows, inputWidth, targetWidth, seed);
}

std::unique_ptr<Task> fp4train::train::createTextTask(const std::string &text,
                                                      int64_t rows,
                                                      int64_t width,
                                                      uint64_t seed) {
  return std::make_unique<TextTask>(text, rows, width, seed);
}

std::unique_ptr<Task> fp4train::train::createLanguageModelTask(
    const std::string &text, int64_t batch, int64_t length,
    int64_t validationBatches, double validationFraction, uint64_t seed) {
  return std::make_unique<LanguageModelTask>(
      text, batch, length, validationBatches, validationFraction, seed);
}
