//===- TaskFuzzer.cpp - fp4-train's corpus handling -----------------------===//
//
// Input: 16 bytes of parameters, then a corpus. The parameters pick a
// language-model batch (1..16), window length (1..1024), held-out batches
// (1..10^6, fp4-train's bound) and seed; the corpus is taken as fp4-train
// takes it once it passes the tool's check (20 windows of length + 2 bytes).
// Training batches of early and very late steps and the first and last
// held-out batches are read: every token must come from the corpus (a byte
// value), every window from inside it (ASan). The text task (an embedding
// per byte) is driven the same way. A crash, a sanitizer report or a token
// outside [0, 256) is a finding.
//
//===----------------------------------------------------------------------===//

#include "Tasks.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

using namespace fp4train::train;

namespace {

uint64_t readWord(const uint8_t *data) {
  uint64_t word;
  std::memcpy(&word, data, 8);
  return word;
}

void checkTokens(const std::vector<int32_t> &tokens, const char *what) {
  for (int32_t token : tokens)
    if (token < 0 || token > 255) {
      std::fprintf(stderr, "fuzzer finding: %s token %d\n", what, token);
      std::abort();
    }
}

} // namespace

/// Nothing to set up (ReplayMain calls it as libFuzzer does).
extern "C" int LLVMFuzzerInitialize(int *, char ***) { return 0; }

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 16)
    return 0;
  uint64_t a = readWord(data), seed = readWord(data + 8);
  int64_t batch = 1 + int64_t(a % 16);
  int64_t length = 1 + int64_t((a >> 4) % 1024);
  int64_t evalBatches = 1 + int64_t((a >> 14) % 1000000);
  std::string corpus(reinterpret_cast<const char *>(data + 16), size - 16);
  // fp4-train's own check (fp4-train.cpp): shorter corpora are an error.
  if (int64_t(corpus.size()) < 20 * (length + 2))
    return 0;

  std::unique_ptr<Task> task = createLanguageModelTask(
      corpus, batch, length, evalBatches, /*validationFraction=*/0.1, seed);
  std::vector<int32_t> input(batch * length), target(batch * length);
  for (int64_t step : {int64_t(0), int64_t(1), int64_t(1) << 40})
    task->getBatch(step, input.data(), target.data());
  checkTokens(input, "training input");
  checkTokens(target, "training target");
  for (int64_t index : {int64_t(0), task->getNumValidationBatches() - 1}) {
    task->getValidationBatch(index, input.data(), target.data());
    checkTokens(input, "held-out input");
    checkTokens(target, "held-out target");
  }

  // The text task: rows of width `length % 64 + 1` embeddings.
  int64_t width = 1 + length % 64;
  if (int64_t(corpus.size()) >= batch + 2) {
    std::unique_ptr<Task> text = createTextTask(corpus, batch, width, seed);
    std::vector<float> x(batch * width), y(batch * width);
    text->getBatch(int64_t(seed % 1000), x.data(), y.data());
  }
  return 0;
}
