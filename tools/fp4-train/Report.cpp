//===- Report.cpp - Loss-curve comparison for fp4-train -------------------===//

#include "Report.h"

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

std::string fp4train::train::renderCsv(const std::vector<Run> &runs) {
  MemoryFile file;
  if (!file.handle)
    return "";
  std::fprintf(file.handle, "step");
  size_t rows = 0;
  for (const Run &run : runs) {
    std::fprintf(file.handle, ",%s", run.recipe.c_str());
    rows = std::max(rows, run.losses.size());
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
  }
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
  for (size_t r = 0; r < runs.size(); ++r) {
    const char *color = kColors[r % (sizeof(kColors) / sizeof(kColors[0]))];
    const std::vector<double> &curve = curves[r];
    // At most ~1000 points per curve keeps the file small.
    size_t stride = std::max<size_t>(1, curve.size() / 1000);
    std::fprintf(f, "<polyline fill=\"none\" stroke=\"%s\" points=\"", color);
    for (size_t i = std::max<int64_t>(window, 1) - 1; i < curve.size();
         i += stride)
      std::fprintf(f, "%.1f,%.1f ", x(double(i + 1)), y(curve[i]));
    std::fprintf(f, "\"/>\n");
    double ly = top + 10 + 18 * double(r);
    std::fprintf(f,
                 "<line x1=\"%g\" x2=\"%g\" y1=\"%g\" y2=\"%g\" stroke=\"%s\" "
                 "stroke-width=\"3\"/><text x=\"%g\" y=\"%g\">%s</text>\n",
                 width - right + 12, width - right + 36, ly, ly, color,
                 width - right + 42, ly + 4, runs[r].recipe.c_str());
  }
  std::fprintf(f, "</svg>\n");
  return file.take();
}
