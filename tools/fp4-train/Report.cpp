//===- Report.cpp - Loss-curve comparison for fp4-train -------------------===//

#include "Report.h"

#include "llvm/ADT/STLExtras.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>

using namespace fp4train::train;

double fp4train::train::windowMean(const std::vector<double> &losses,
                                   int64_t end, int64_t window) {
  // A run may hold fewer steps than the window or horizon asked for (a
  // short --steps): never read past its losses.
  end = std::min<int64_t>(end, int64_t(losses.size()));
  int64_t begin = std::max<int64_t>(0, end - window);
  double sum = 0;
  for (int64_t i = begin; i < end; ++i)
    sum += losses[i];
  return end > begin ? sum / double(end - begin) : NAN;
}

std::optional<int64_t>
fp4train::train::firstStepReaching(const std::vector<double> &losses,
                                   int64_t window, double target) {
  // A full window first, so one lucky batch does not count as reaching.
  for (int64_t end = window; end <= int64_t(losses.size()); ++end)
    if (windowMean(losses, end, window) <= target)
      return end - 1;
  return std::nullopt;
}

std::string Run::getLabel(bool withSeed) const {
  return withSeed ? recipe + "@" + std::to_string(seed) : recipe;
}

namespace {
/// Mean and sample standard deviation.
struct Spread {
  double mean = 0, stddev = 0;
  size_t count = 0;
};

Spread getSpread(const std::vector<double> &values) {
  Spread spread;
  spread.count = values.size();
  if (values.empty())
    return spread;
  for (double v : values)
    spread.mean += v;
  spread.mean /= double(values.size());
  if (values.size() > 1) {
    double sum = 0;
    for (double v : values)
      sum += (v - spread.mean) * (v - spread.mean);
    spread.stddev = std::sqrt(sum / double(values.size() - 1));
  }
  return spread;
}

/// "mean" or "mean ± stddev" with `format` for each number.
std::string formatSpread(const Spread &spread, const char *format) {
  char mean[64], stddev[64];
  std::snprintf(mean, sizeof(mean), format, spread.mean);
  if (spread.count < 2)
    return mean;
  std::snprintf(stddev, sizeof(stddev), format, spread.stddev);
  // The deviation is never negative: drop a sign the format asked for.
  const char *magnitude = stddev[0] == '+' ? stddev + 1 : stddev;
  return std::string(mean) + " ± " + magnitude;
}

/// The step count, interpolated linearly between measurements, at which
/// `curve` first comes down to `loss`; nothing if it never does.
std::optional<double>
interpolatedReach(const std::vector<std::pair<int64_t, double>> &curve,
                  double loss) {
  for (size_t i = 1; i < curve.size(); ++i) {
    auto [s0, l0] = curve[i - 1];
    auto [s1, l1] = curve[i];
    if (l1 > loss)
      continue;
    if (l0 <= l1)
      return double(s1);
    return double(s0) + double(s1 - s0) * (l0 - loss) / (l0 - l1);
  }
  return std::nullopt;
}

double finalValidation(const Run &run) {
  // The loss at the horizon (runs may have continued past it).
  for (auto [steps, loss] : run.validation)
    if (steps == run.steps)
      return loss;
  return run.validation.empty() ? NAN : run.validation.back().second;
}
} // namespace

void fp4train::train::printValidationComparison(const std::vector<Run> &runs,
                                                int64_t tokensPerStep) {
  std::vector<std::string> recipes;
  for (const Run &run : runs)
    if (!llvm::is_contained(recipes, run.recipe))
      recipes.push_back(run.recipe);
  auto reference = [&](uint64_t seed) -> const Run * {
    for (const Run &run : runs)
      if (run.recipe == "f32" && run.seed == seed)
        return &run;
    return nullptr;
  };
  std::printf("| recipe | seeds | final val loss | bits/byte | gap vs f32 | "
              "f32 steps to that loss | token overhead | time (s) |\n");
  std::printf("|---|---|---|---|---|---|---|---|\n");
  for (const std::string &recipe : recipes) {
    std::vector<double> finals, bits, gaps, equivalents, overheads,
        extraTokens, seconds;
    size_t atOrBelow = 0;
    for (const Run &run : runs) {
      if (run.recipe != recipe)
        continue;
      const Run *f32 = reference(run.seed);
      double final = finalValidation(run);
      double f32Final = f32 ? finalValidation(*f32) : NAN;
      finals.push_back(final);
      bits.push_back(final / std::log(2.0));
      gaps.push_back((final - f32Final) / f32Final * 100.0);
      seconds.push_back(run.seconds);
      if (!f32)
        continue;
      // The steps f32 took to get where this run ends; a run that ends at
      // or below f32's final loss needs no more tokens than f32.
      std::optional<double> steps =
          interpolatedReach(f32->validation, final);
      double equivalent = steps ? *steps : double(run.steps);
      atOrBelow += !steps || *steps >= double(run.steps);
      equivalent = std::min(equivalent, double(run.steps));
      equivalents.push_back(equivalent);
      overheads.push_back((double(run.steps) / equivalent - 1) * 100.0);
      extraTokens.push_back((double(run.steps) - equivalent) *
                            double(tokensPerStep));
    }
    std::string overheadText =
        formatSpread(getSpread(overheads), "%+.1f") + "% (" +
        formatSpread(getSpread(extraTokens), "%+.0f") + " tokens)";
    if (recipe != "f32" && atOrBelow)
      overheadText += " [" + std::to_string(atOrBelow) + " of " +
                      std::to_string(overheads.size()) +
                      " at or below f32]";
    std::printf("| %s | %zu | %s | %s | %s | %s | %s | %.1f |\n",
                recipe.c_str(), finals.size(),
                formatSpread(getSpread(finals), "%.4f").c_str(),
                formatSpread(getSpread(bits), "%.4f").c_str(),
                (formatSpread(getSpread(gaps), "%+.2f") + "%").c_str(),
                formatSpread(getSpread(equivalents), "%.0f").c_str(),
                overheadText.c_str(), getSpread(seconds).mean);
  }
}

void fp4train::train::printComparison(const std::vector<Run> &runs,
                                      size_t reference, int64_t window,
                                      int64_t tokensPerStep) {
  const Run &f32 = runs[reference];
  double target = windowMean(f32.losses, f32.steps, window);
  std::optional<int64_t> f32Reach =
      firstStepReaching(f32.losses, window, target);
  std::printf("| recipe | final loss | gap vs f32 | steps to f32 loss | token "
              "overhead | time (s) |\n");
  std::printf("|---|---|---|---|---|---|\n");
  for (const Run &run : runs) {
    double final = windowMean(run.losses, run.steps, window);
    double gap = (final - target) / target * 100.0;
    std::optional<int64_t> reach =
        firstStepReaching(run.losses, window, target);
    char reachText[64], overhead[64];
    if (reach && f32Reach) {
      std::snprintf(reachText, sizeof(reachText), "%lld",
                    (long long)(*reach + 1));
      int64_t tokens = (*reach + 1) * tokensPerStep;
      int64_t f32Tokens = (*f32Reach + 1) * tokensPerStep;
      std::snprintf(overhead, sizeof(overhead), "%+.1f%% (%+lld tokens)",
                    double(tokens - f32Tokens) / double(f32Tokens) * 100.0,
                    (long long)(tokens - f32Tokens));
    } else {
      std::snprintf(reachText, sizeof(reachText), "not reached in %zu",
                    run.losses.size());
      std::snprintf(overhead, sizeof(overhead), "> %+.0f%%",
                    f32Reach ? double(int64_t(run.losses.size()) - *f32Reach -
                                      1) /
                                   double(*f32Reach + 1) * 100.0
                             : 0.0);
    }
    std::printf("| %s | %.6f | %+.2f%% | %s | %s | %.1f |\n",
                run.recipe.c_str(), final, gap, reachText, overhead,
                run.seconds);
  }
}

namespace {

/// A FILE that writes into memory: the report is rendered first and
/// written with the other outputs as one set (fp4train/Numerics/Files.h).
struct MemoryFile {
  char *buffer = nullptr;
  size_t size = 0;
  FILE *handle = open_memstream(&buffer, &size);
  ~MemoryFile() {
    if (handle)
      std::fclose(handle);
    std::free(buffer);
  }
  /// The text written so far; the stream stays usable.
  std::string take() {
    if (!handle || std::fflush(handle) != 0)
      return "";
    return std::string(buffer, size);
  }
};

} // namespace

std::string fp4train::train::renderCsv(const std::vector<Run> &runs,
                                      bool withSeed) {
  MemoryFile file;
  if (!file.handle)
    return "";
  std::fprintf(file.handle, "step");
  size_t rows = 0;
  for (const Run &run : runs) {
    std::fprintf(file.handle, ",%s", run.getLabel(withSeed).c_str());
    rows = std::max(rows, run.losses.size());
  }
  // Validation columns, each run's losses by step count.
  std::vector<std::vector<double>> validation;
  for (const Run &run : runs) {
    if (run.validation.empty())
      continue;
    std::fprintf(file.handle, ",%s val", run.getLabel(withSeed).c_str());
    std::vector<double> &column = validation.emplace_back();
    for (auto [steps, loss] : run.validation) {
      if (size_t(steps) >= column.size())
        column.resize(steps + 1, NAN);
      column[steps] = loss;
    }
    rows = std::max(rows, column.size());
  }
  std::fprintf(file.handle, "\n");
  for (size_t step = 0; step < rows; ++step) {
    std::fprintf(file.handle, "%zu", step);
    for (const Run &run : runs) {
      if (step < run.losses.size())
        std::fprintf(file.handle, ",%.9g", run.losses[step]);
      else
        std::fprintf(file.handle, ",");
    }
    for (const std::vector<double> &column : validation) {
      if (step < column.size() && !std::isnan(column[step]))
        std::fprintf(file.handle, ",%.9g", column[step]);
      else
        std::fprintf(file.handle, ",");
    }
    std::fprintf(file.handle, "\n");
  }
  return file.take();
}

std::string fp4train::train::renderSvg(const std::vector<Run> &runs,
                                      int64_t window,
                                      const std::string &title) {
  static const char *const kColors[] = {"#000000", "#1f77b4", "#ff7f0e",
                                        "#2ca02c", "#d62728", "#9467bd",
                                        "#8c564b", "#e377c2", "#17becf"};
  const double width = 860, height = 520, left = 70, right = 190, top = 40,
               bottom = 50;
  // Moving means, from the first full window on.
  std::vector<std::vector<double>> curves;
  size_t maxSteps = 1;
  double low = INFINITY, high = -INFINITY;
  for (const Run &run : runs) {
    std::vector<double> &curve = curves.emplace_back();
    for (int64_t end = 1; end <= int64_t(run.losses.size()); ++end) {
      double mean = windowMean(run.losses, end, window);
      curve.push_back(mean);
      if (end >= window && std::isfinite(mean) && mean > 0) {
        low = std::min(low, mean);
        high = std::max(high, mean);
      }
    }
    maxSteps = std::max(maxSteps, run.losses.size());
    for (auto [steps, loss] : run.validation) {
      maxSteps = std::max(maxSteps, size_t(steps));
      if (std::isfinite(loss) && loss > 0) {
        low = std::min(low, loss);
        high = std::max(high, loss);
      }
    }
  }
  // One colour and legend entry per recipe (its seeds share them).
  std::vector<std::string> recipes;
  std::vector<size_t> colorOf;
  for (const Run &run : runs) {
    auto it = std::find(recipes.begin(), recipes.end(), run.recipe);
    colorOf.push_back(size_t(it - recipes.begin()));
    if (it == recipes.end())
      recipes.push_back(run.recipe);
  }
  constexpr size_t kNumColors = sizeof(kColors) / sizeof(kColors[0]);
  if (!(low < high)) {
    low = 1e-3;
    high = 1;
  }
  double logLow = std::floor(std::log10(low) * 4) / 4;
  double logHigh = std::ceil(std::log10(high) * 4) / 4;
  auto x = [&](double step) {
    return left + step / double(maxSteps) * (width - left - right);
  };
  auto y = [&](double loss) {
    double v = std::log10(std::max(loss, std::pow(10.0, logLow)));
    v = std::min(v, logHigh);
    return top + (logHigh - v) / (logHigh - logLow) * (height - top - bottom);
  };

  MemoryFile file;
  if (!file.handle)
    return "";
  FILE *f = file.handle;
  std::fprintf(f,
               "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%g\" "
               "height=\"%g\" font-family=\"sans-serif\" font-size=\"12\">\n"
               "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n"
               "<text x=\"%g\" y=\"22\" font-size=\"14\">%s</text>\n",
               width, height, left, title.c_str());
  // Axes, a grid line per power of ten (and its halves), step ticks.
  std::fprintf(f,
               "<path d=\"M%g %g V%g H%g\" stroke=\"black\" fill=\"none\"/>\n",
               left, top, height - bottom, width - right);
  for (double v = std::ceil(logLow * 2) / 2; v <= logHigh + 1e-9; v += 0.5) {
    double py = y(std::pow(10.0, v));
    std::fprintf(f,
                 "<line x1=\"%g\" x2=\"%g\" y1=\"%g\" y2=\"%g\" "
                 "stroke=\"#ddd\"/><text x=\"%g\" y=\"%g\" "
                 "text-anchor=\"end\">%.3g</text>\n",
                 left, width - right, py, py, left - 6, py + 4,
                 std::pow(10.0, v));
  }
  for (int tick = 0; tick <= 5; ++tick) {
    double step = double(maxSteps) * tick / 5;
    std::fprintf(f,
                 "<text x=\"%g\" y=\"%g\" text-anchor=\"middle\">%.0f</text>\n",
                 x(step), height - bottom + 18, step);
  }
  std::fprintf(f,
               "<text x=\"%g\" y=\"%g\" text-anchor=\"middle\">step</text>\n"
               "<text x=\"16\" y=\"%g\" transform=\"rotate(-90 16 %g)\" "
               "text-anchor=\"middle\">loss (mean of %lld steps)</text>\n",
               (left + width - right) / 2, height - 10, (top + height) / 2,
               (top + height) / 2, (long long)window);
  bool anyValidation = false;
  for (size_t r = 0; r < runs.size(); ++r) {
    const char *color = kColors[colorOf[r] % kNumColors];
    const std::vector<double> &curve = curves[r];
    // At most ~1000 points per curve keeps the file small.
    size_t stride = std::max<size_t>(1, curve.size() / 1000);
    bool hasValidation = !runs[r].validation.empty();
    anyValidation |= hasValidation;
    // Training curves are thin (and faint under validation curves).
    std::fprintf(f,
                 "<polyline fill=\"none\" stroke=\"%s\" stroke-opacity=\"%s\" "
                 "points=\"",
                 color, hasValidation ? "0.35" : "1");
    for (size_t i = std::max<int64_t>(window, 1) - 1; i < curve.size();
         i += stride)
      std::fprintf(f, "%.1f,%.1f ", x(double(i + 1)), y(curve[i]));
    std::fprintf(f, "\"/>\n");
    if (!hasValidation)
      continue;
    std::fprintf(f,
                 "<polyline class=\"validation\" fill=\"none\" stroke=\"%s\" "
                 "stroke-width=\"2.5\" points=\"",
                 color);
    for (auto [steps, loss] : runs[r].validation)
      std::fprintf(f, "%.1f,%.1f ", x(double(steps)), y(loss));
    std::fprintf(f, "\"/>\n");
  }
  for (auto [i, recipe] : llvm::enumerate(recipes)) {
    double ly = top + 10 + 18 * double(i);
    std::fprintf(f,
                 "<line x1=\"%g\" x2=\"%g\" y1=\"%g\" y2=\"%g\" stroke=\"%s\" "
                 "stroke-width=\"3\"/><text x=\"%g\" y=\"%g\">%s</text>\n",
                 width - right + 12, width - right + 36, ly, ly,
                 kColors[i % kNumColors], width - right + 42, ly + 4,
                 recipe.c_str());
  }
  if (anyValidation)
    std::fprintf(f,
                 "<text x=\"%g\" y=\"%g\">thick: held-out loss</text>\n"
                 "<text x=\"%g\" y=\"%g\">faint: training loss</text>\n",
                 width - right + 12, top + 28 + 18 * double(recipes.size()),
                 width - right + 12, top + 46 + 18 * double(recipes.size()));
  std::fprintf(f, "</svg>\n");
  return file.take();
}
