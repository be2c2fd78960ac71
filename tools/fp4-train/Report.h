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
  uint64_t seed = 1;
  std::vector<double> losses;
  /// Held-out loss after (step count, loss) updates, every few steps from
  /// 0 on; empty for tasks without a validation split.
  std::vector<std::pair<int64_t, double>> validation;
  int64_t steps = 0;
  double seconds = 0;
  /// The step from which the run's switched roles ran in high precision
  /// (--switch-at, [SW1]); nullopt when it did not switch.
  std::optional<int64_t> switchedAt;

  /// The recipe, with "+switch" when the run switched ([SW1]).
  std::string getRecipeLabel() const;
  /// getRecipeLabel(), with "@seed" when a comparison has several seeds.
  std::string getLabel(bool withSeed) const;
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

/// The comparison of runs with a validation split (language models), one
/// row per recipe over its seeds (mean ± standard deviation): final
/// held-out loss and bits per byte, gap against the f32 run of the same
/// seed, and the token overhead as effective compute: the steps s at which
/// that f32 run's held-out curve (interpolated between measurements) first
/// comes down to this run's final loss, and horizon / s - 1. A run that ends
/// at or below f32's final loss counts as 0 (the table says how many).
/// Every recipe has a run for each seed, the f32 runs included.
void printValidationComparison(const std::vector<Run> &runs,
                               int64_t tokensPerStep);

/// The text of losses.csv: one row per step, one column per run (empty past
/// a run's end), and a "<run> val" column per run with a validation curve
/// (its loss after `step` updates, where measured).
std::string renderCsv(const std::vector<Run> &runs, bool withSeed);

/// An SVG plot of the moving-mean loss curves and, where runs have them,
/// the validation curves (thicker, with markers); log-scale loss axis, one
/// colour per recipe; a dashed vertical line labelled "switch" at the step
/// where runs switched roles to high precision. `title` is "<step file>
/// @<function>: <task>"; it is shown through fitTitle. `lossLabel` names the
/// loss axis; empty: taken from the task description in `title`
/// (lossAxisLabel).
std::string renderSvg(const std::vector<Run> &runs, int64_t window,
                      const std::string &title,
                      const std::string &lossLabel = "");

// The pieces of the plot, pure functions (unit-tested in
// unittests/Tools/ReportTest.cpp).

/// Ticks for a linear axis over [low, high]: every multiple of the finest
/// 1-2-5 × 10^k step, not below `minStep`, that gives at most `maxTicks`
/// ticks in the range (0, 200, 400, ... for 0 to 970 and 8 ticks).
std::vector<double> linearTicks(double low, double high, size_t maxTicks,
                                double minStep = 0);

/// Ticks for a log axis over [low, high] (0 < low < high): the powers of
/// ten (every n-th one past `maxTicks`) where the range holds `minTicks` of
/// them; else the first of 1-2-5, 1-2-3-5 and 1..9 × 10^k sub-decade ticks
/// that gives `minTicks` and leaves no stretch over 40% of the axis without
/// a tick (at most 12 ticks: such a range spans under 4 decades); else (a
/// range of about a factor of three or less) the coarsest 1-2-5 × 10^k
/// linear ticks that give `minTicks`.
std::vector<double> logTicks(double low, double high, size_t minTicks = 4,
                             size_t maxTicks = 10);

/// A tick label: "%g" (0.05, 2.5, 400, 1e-05).
std::string formatTick(double value);

/// The plot title for `title`, "<step file> @<function>: <task clauses>":
/// a word that is a path (it starts with '/', or has a '/' before a file
/// name with an extension) is cut to its base name; then, until the title
/// has at most `maxChars` characters (UTF-8 code points), the task's last
/// aside " (...)" is dropped, else its last ", " clause; a title still too
/// long ends in "…".
std::string fitTitle(const std::string &title, size_t maxChars);

/// The loss axis label for a task description (Task::describe): a
/// cross-entropy task is "cross-entropy (nats/token)" (the language models'
/// natural-log loss); a regression or MSE task "mean squared error"; else
/// "loss".
std::string lossAxisLabel(const std::string &taskDescription);

} // namespace fp4train::train

#endif // FP4TRAIN_TOOLS_FP4TRAIN_REPORT_H
