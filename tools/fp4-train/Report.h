//===- Report.h - Loss-curve comparison for fp4-train -----------*- C++ -*-===//
//
// Final loss, loss gap against the f32 run, and the token overhead to reach
// the f32 run's final loss (the metric of the AMD MXFP4 training paper:
// how many more tokens a low-precision recipe needs to reach the loss the
// high-precision run ends at), plus losses.csv and an SVG plot.
//
//===----------------------------------------------------------------------===//

#ifndef FP4TRAIN_TOOLS_FP4TRAIN_REPORT_H
#define FP4TRAIN_TOOLS_FP4TRAIN_REPORT_H

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace fp4train::train {

/// The losses of one recipe, step by step. The first `steps` are the
/// compared horizon; runs that had not reached the reference loss by then
/// may continue past it (extension steps) to measure their overhead.
struct Run {
  std::string recipe;
  std::vector<double> losses;
  int64_t steps = 0;
  double seconds = 0;
};

/// Mean loss over the window of `window` steps ending at `end` (exclusive).
double windowMean(const std::vector<double> &losses, int64_t end,
                  int64_t window);

/// The first step at whose end the moving mean over `window` steps is at or
/// below `target`, if any.
std::optional<int64_t> firstStepReaching(const std::vector<double> &losses,
                                         int64_t window, double target);

/// Prints the comparison table (Markdown) to stdout; `reference` indexes the
/// f32 run in `runs`, `tokensPerStep` converts steps to tokens.
void printComparison(const std::vector<Run> &runs, size_t reference,
                     int64_t window, int64_t tokensPerStep);

/// The text of losses.csv: one row per step, one column per recipe (empty
/// past a run's end).
std::string renderCsv(const std::vector<Run> &runs);

/// An SVG plot of the moving-mean loss curves (log-scale loss axis).
std::string renderSvg(const std::vector<Run> &runs, int64_t window,
                      const std::string &title);

} // namespace fp4train::train

#endif // FP4TRAIN_TOOLS_FP4TRAIN_REPORT_H
