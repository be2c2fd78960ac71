//===- Report.cpp - Loss-curve comparison for fp4-train -------------------===//

#include "Report.h"

#include "llvm/ADT/STLExtras.h"

#include <algorithm>
#include <cctype>
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

std::string Run::getRecipeLabel() const {
  return switchedAt ? recipe + "+switch" : recipe;
}

std::string Run::getLabel(bool withSeed) const {
  return withSeed ? getRecipeLabel() + "@" + std::to_string(seed)
                  : getRecipeLabel();
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
    if (!llvm::is_contained(recipes, run.getRecipeLabel()))
      recipes.push_back(run.getRecipeLabel());
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
    std::vector<double> finals, bits, gaps, equivalents, overheads, extraTokens,
        seconds;
    size_t atOrBelow = 0;
    for (const Run &run : runs) {
      if (run.getRecipeLabel() != recipe)
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
      std::optional<double> steps = interpolatedReach(f32->validation, final);
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
                      std::to_string(overheads.size()) + " at or below f32]";
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
                    f32Reach
                        ? double(int64_t(run.losses.size()) - *f32Reach - 1) /
                              double(*f32Reach + 1) * 100.0
                        : 0.0);
    }
    std::printf("| %s | %.6f | %+.2f%% | %s | %s | %.1f |\n",
                run.getRecipeLabel().c_str(), final, gap, reachText, overhead,
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

namespace {

/// m · 10^k, exactly where it can be (10^-k is exact, 10^k is not for k < 0).
double scaled(double mantissa, int k) {
  return k >= 0 ? mantissa * std::pow(10.0, k) : mantissa / std::pow(10.0, -k);
}

/// The characters (UTF-8 code points) of `text`.
size_t countChars(const std::string &text) {
  size_t count = 0;
  for (unsigned char c : text)
    count += (c & 0xC0) != 0x80;
  return count;
}

/// `text` cut to `maxChars` characters, "…" last if it was cut.
std::string truncateChars(const std::string &text, size_t maxChars) {
  if (countChars(text) <= maxChars)
    return text;
  size_t kept = 0, end = 0;
  for (; end < text.size(); ++end) {
    if ((static_cast<unsigned char>(text[end]) & 0xC0) == 0x80)
      continue;
    if (kept + 1 >= maxChars)
      break;
    ++kept;
  }
  return text.substr(0, end) + (maxChars ? "…" : "");
}

/// Whether `word` is a file path: it starts with '/' or has a '/' before a
/// name with an extension ("examples/mlp.mlir", not "1/T").
bool isPath(const std::string &word) {
  if (word.empty())
    return false;
  if (word[0] == '/')
    return true;
  size_t slash = word.rfind('/');
  if (slash == std::string::npos)
    return false;
  std::string name = word.substr(slash + 1);
  size_t dot = name.rfind('.');
  return dot != std::string::npos && dot > 0 && dot + 1 < name.size() &&
         std::isalpha(static_cast<unsigned char>(name[dot + 1]));
}

/// The ')' that closes the '(' at `open`, if any.
size_t findClosing(const std::string &text, size_t open) {
  int depth = 0;
  for (size_t i = open; i < text.size(); ++i) {
    depth += text[i] == '(' ? 1 : text[i] == ')' ? -1 : 0;
    if (depth == 0)
      return i;
  }
  return std::string::npos;
}

/// `text` with &, <, > and " escaped for XML.
std::string escapeXml(const std::string &text) {
  std::string out;
  for (char c : text) {
    switch (c) {
    case '&':
      out += "&amp;";
      break;
    case '<':
      out += "&lt;";
      break;
    case '>':
      out += "&gt;";
      break;
    case '"':
      out += "&quot;";
      break;
    default:
      out += c;
    }
  }
  return out;
}

} // namespace

std::vector<double> fp4train::train::linearTicks(double low, double high,
                                                 size_t maxTicks,
                                                 double minStep) {
  if (!std::isfinite(low) || !std::isfinite(high) || high < low)
    return {};
  maxTicks = std::max<size_t>(maxTicks, 2);
  double range = std::max(high - low, minStep > 0 ? minStep : 1e-300);
  // From a step a decade below the one that gives maxTicks, up.
  int k = int(std::floor(std::log10(range / double(maxTicks)))) - 1;
  for (;; ++k)
    for (double mantissa : {1.0, 2.0, 5.0}) {
      double step = scaled(mantissa, k);
      if (step < minStep)
        continue;
      double first = std::ceil(low / step - 1e-9);
      double last = std::floor(high / step + 1e-9);
      if (last - first + 1 > double(maxTicks))
        continue;
      std::vector<double> ticks;
      for (double i = first; i <= last; ++i)
        ticks.push_back(scaled(i * mantissa, k) + 0.0); // -0 to 0
      return ticks;
    }
}

std::vector<double> fp4train::train::logTicks(double low, double high,
                                              size_t minTicks,
                                              size_t maxTicks) {
  if (!(low > 0) || !(low < high) || !std::isfinite(high))
    return {};
  int kLow = int(std::floor(std::log10(low))) - 1;
  int kHigh = int(std::ceil(std::log10(high))) + 1;
  auto inRange = [&](double v) {
    return v >= low * (1 - 1e-9) && v <= high * (1 + 1e-9);
  };
  std::vector<double> decades;
  for (int k = kLow; k <= kHigh; ++k)
    if (inRange(scaled(1, k)))
      decades.push_back(scaled(1, k));
  if (decades.size() >= minTicks) {
    size_t stride = (decades.size() + maxTicks - 1) / maxTicks;
    std::vector<double> ticks;
    for (size_t i = 0; i < decades.size(); i += stride)
      ticks.push_back(decades[i]);
    return ticks;
  }
  // Sub-decade ticks, where they cover the axis: no stretch without a tick
  // over 40% of it (1..9 over 0.56 to 1.78 would leave 1 to 1.78 bare).
  auto coversAxis = [&](const std::vector<double> &ticks) {
    double span = std::log10(high / low), gap = 0, previous = low;
    for (double tick : ticks) {
      gap = std::max(gap, std::log10(tick / previous));
      previous = tick;
    }
    gap = std::max(gap, std::log10(high / previous));
    return gap <= 0.4 * span;
  };
  static const std::vector<double> kMantissas[] = {
      {1, 2, 5}, {1, 2, 3, 5}, {1, 2, 3, 4, 5, 6, 7, 8, 9}};
  for (const std::vector<double> &mantissas : kMantissas) {
    std::vector<double> ticks;
    for (int k = kLow; k <= kHigh; ++k)
      for (double m : mantissas)
        if (inRange(scaled(m, k)))
          ticks.push_back(scaled(m, k));
    if (ticks.size() >= minTicks && coversAxis(ticks))
      return ticks;
  }
  // The coarsest round linear ticks that are enough.
  for (size_t count = minTicks;; ++count) {
    std::vector<double> ticks = linearTicks(low, high, count);
    if (ticks.size() >= minTicks || count >= std::max(maxTicks, minTicks))
      return ticks;
  }
}

std::string fp4train::train::formatTick(double value) {
  char text[32];
  std::snprintf(text, sizeof(text), "%g", value + 0.0); // never "-0"
  return text;
}

std::string fp4train::train::fitTitle(const std::string &title,
                                      size_t maxChars) {
  // Paths to base names, word by word (runs of spaces kept).
  std::string text;
  for (size_t i = 0; i < title.size();) {
    size_t end = title.find(' ', i);
    if (end == std::string::npos)
      end = title.size();
    std::string word = title.substr(i, end - i);
    if (isPath(word))
      word = word.substr(word.rfind('/') + 1);
    text += word;
    if (end < title.size())
      text += ' ';
    i = end + 1;
  }
  // While the title is too long: drop the task's last aside " (...)", else
  // its last clause (from a ", " outside parentheses).
  size_t colon = text.find(": ");
  while (countChars(text) > maxChars && colon != std::string::npos) {
    size_t open = text.rfind(" (");
    if (open != std::string::npos && open > colon) {
      size_t close = findClosing(text, open + 1);
      if (close != std::string::npos) {
        text.erase(open, close + 1 - open);
        continue;
      }
    }
    size_t comma = std::string::npos;
    int depth = 0;
    for (size_t i = colon + 2; i + 1 < text.size(); ++i) {
      depth += text[i] == '(' ? 1 : text[i] == ')' ? -1 : 0;
      if (depth == 0 && text[i] == ',' && text[i + 1] == ' ')
        comma = i;
    }
    if (comma == std::string::npos)
      break;
    text.resize(comma);
  }
  return truncateChars(text, maxChars);
}

std::string fp4train::train::lossAxisLabel(const std::string &description) {
  if (description.find("cross-entropy") != std::string::npos)
    return "cross-entropy (nats/token)";
  if (description.find("MSE") != std::string::npos ||
      description.find("regression") != std::string::npos)
    return "mean squared error";
  return "loss";
}

std::string fp4train::train::renderSvg(const std::vector<Run> &runs,
                                       int64_t window, const std::string &title,
                                       const std::string &lossLabel) {
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
  // The title fits the width at 14 px (about 8.4 px per character, an
  // upper bound for sans-serif text); the full one is the SVG's <title>.
  const double titleX = 12;
  std::string shownTitle = fitTitle(title, size_t((width - 2 * titleX) / 8.4));
  std::string fullTitle = fitTitle(title, std::string::npos);
  std::string yLabel = lossLabel.empty() ? lossAxisLabel(title) : lossLabel;

  MemoryFile file;
  if (!file.handle)
    return "";
  FILE *f = file.handle;
  std::fprintf(f,
               "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%g\" "
               "height=\"%g\" font-family=\"sans-serif\" font-size=\"12\">\n"
               "<title>%s</title>\n"
               "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n"
               "<text class=\"title\" x=\"%g\" y=\"22\" "
               "font-size=\"14\">%s</text>\n",
               width, height, escapeXml(fullTitle).c_str(), titleX,
               escapeXml(shownTitle).c_str());
  // Axes; a grid line and a label per loss tick, a label per step tick.
  std::fprintf(f,
               "<path d=\"M%g %g V%g H%g\" stroke=\"black\" fill=\"none\"/>\n",
               left, top, height - bottom, width - right);
  for (double v : logTicks(std::pow(10.0, logLow), std::pow(10.0, logHigh))) {
    double py = y(v);
    std::fprintf(f,
                 "<line x1=\"%g\" x2=\"%g\" y1=\"%g\" y2=\"%g\" "
                 "stroke=\"#ddd\"/><line x1=\"%g\" x2=\"%g\" y1=\"%g\" "
                 "y2=\"%g\" stroke=\"black\"/><text class=\"ytick\" "
                 "x=\"%g\" y=\"%g\" text-anchor=\"end\">%s</text>\n",
                 left, width - right, py, py, left - 4, left, py, py, left - 6,
                 py + 4, formatTick(v).c_str());
  }
  for (double step : linearTicks(0, double(maxSteps), 8, 1)) {
    double px = x(step);
    std::fprintf(f,
                 "<line x1=\"%g\" x2=\"%g\" y1=\"%g\" y2=\"%g\" "
                 "stroke=\"black\"/><text class=\"xtick\" x=\"%g\" "
                 "y=\"%g\" text-anchor=\"middle\">%s</text>\n",
                 px, px, height - bottom, height - bottom + 4, px,
                 height - bottom + 18, formatTick(step).c_str());
  }
  std::fprintf(f,
               "<text class=\"xlabel\" x=\"%g\" y=\"%g\" "
               "text-anchor=\"middle\">step</text>\n"
               "<text class=\"ylabel\" x=\"16\" y=\"%g\" "
               "transform=\"rotate(-90 16 %g)\" "
               "text-anchor=\"middle\">%s</text>\n",
               (left + width - right) / 2, height - 10, (top + height) / 2,
               (top + height) / 2, escapeXml(yLabel).c_str());
  // The phase switch ([SW1]): every switching run switches at one step.
  for (const Run &run : runs) {
    if (!run.switchedAt)
      continue;
    double px = x(double(*run.switchedAt));
    std::fprintf(f,
                 "<line class=\"switch\" x1=\"%g\" x2=\"%g\" y1=\"%g\" "
                 "y2=\"%g\" stroke=\"#888\" stroke-dasharray=\"6 4\"/>"
                 "<text x=\"%g\" y=\"%g\" text-anchor=\"middle\" "
                 "fill=\"#888\">switch</text>\n",
                 px, px, top, height - bottom, px, top - 4);
    break;
  }
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
                 escapeXml(recipe).c_str());
  }
  double noteY = top + 28 + 18 * double(recipes.size());
  if (anyValidation) {
    std::fprintf(f,
                 "<text x=\"%g\" y=\"%g\">thick: held-out loss</text>\n"
                 "<text x=\"%g\" y=\"%g\">faint: training loss</text>\n",
                 width - right + 12, noteY, width - right + 12, noteY + 18);
    noteY += 36;
  }
  // The training curves are moving means (under "faint: training loss"
  // where there are held-out curves).
  if (window > 1)
    std::fprintf(f, "<text x=\"%g\" y=\"%g\">%s%lld steps%s</text>\n",
                 width - right + 12, noteY,
                 anyValidation ? "(mean of " : "curves: mean of ",
                 (long long)window, anyValidation ? ")" : "");
  std::fprintf(f, "</svg>\n");
  return file.take();
}
