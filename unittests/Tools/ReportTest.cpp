//===- ReportTest.cpp - fp4-train's loss plot: ticks, title, labels -------===//

#include "Report.h"

#include "gtest/gtest.h"

#include <string>
#include <vector>

using namespace fp4train::train;

namespace {

std::vector<std::string> labels(const std::vector<double> &ticks) {
  std::vector<std::string> out;
  for (double tick : ticks)
    out.push_back(formatTick(tick));
  return out;
}

using Labels = std::vector<std::string>;

TEST(ReportTicks, LinearStepsAreRound) {
  // 485 steps once had ticks at 97, 194, ...
  EXPECT_EQ(labels(linearTicks(0, 485, 8, 1)),
            (Labels{"0", "100", "200", "300", "400"}));
  EXPECT_EQ(labels(linearTicks(0, 970, 8, 1)),
            (Labels{"0", "200", "400", "600", "800"}));
  EXPECT_EQ(labels(linearTicks(0, 60, 8, 1)),
            (Labels{"0", "10", "20", "30", "40", "50", "60"}));
  EXPECT_EQ(labels(linearTicks(0, 16, 8, 1)), (Labels{"0", "5", "10", "15"}));
  EXPECT_EQ(labels(linearTicks(0, 2000, 8, 1)),
            (Labels{"0", "500", "1000", "1500", "2000"}));
  // Steps are whole: no step below 1.
  EXPECT_EQ(labels(linearTicks(0, 1, 8, 1)), (Labels{"0", "1"}));
  EXPECT_EQ(labels(linearTicks(0, 3, 8, 1)), (Labels{"0", "1", "2", "3"}));
}

TEST(ReportTicks, LinearFractions) {
  // Exact decimals, never 0.30000000000000004 or -0.
  EXPECT_EQ(labels(linearTicks(0.25, 0.75, 6)),
            (Labels{"0.3", "0.4", "0.5", "0.6", "0.7"}));
  EXPECT_EQ(labels(linearTicks(-0.001, 0.3, 4)),
            (Labels{"0", "0.1", "0.2", "0.3"}));
  EXPECT_TRUE(linearTicks(1, 0, 8).empty());
}

TEST(ReportTicks, LogDecadesOverAWideRange) {
  EXPECT_EQ(labels(logTicks(1e-4, 10)),
            (Labels{"0.0001", "0.001", "0.01", "0.1", "1", "10"}));
  // More decades than ticks: every n-th one (21 decades: every third).
  std::vector<double> wide = logTicks(1e-12, 1e8);
  EXPECT_LE(wide.size(), 10u);
  EXPECT_GE(wide.size(), 4u);
  EXPECT_EQ(formatTick(wide.front()), "1e-12");
  EXPECT_EQ(formatTick(wide[1]), "1e-09");
}

TEST(ReportTicks, LogSubDecadesOverANarrowRange) {
  // 1.5 decades: 1-2-5.
  EXPECT_EQ(labels(logTicks(0.0316, 1)),
            (Labels{"0.05", "0.1", "0.2", "0.5", "1"}));
  // Two decades hold 3 powers of ten only: 1-2-5 too.
  EXPECT_EQ(labels(logTicks(0.01, 1)),
            (Labels{"0.01", "0.02", "0.05", "0.1", "0.2", "0.5", "1"}));
  // One decade: 1-2-3-5.
  EXPECT_EQ(labels(logTicks(0.178, 1.78)), (Labels{"0.2", "0.3", "0.5", "1"}));
  // Half a decade (a language model's cross-entropy): 1..9.
  EXPECT_EQ(labels(logTicks(1.78, 5.62)), (Labels{"2", "3", "4", "5"}));
  EXPECT_EQ(labels(logTicks(0.562, 1)),
            (Labels{"0.6", "0.7", "0.8", "0.9", "1"}));
  // 1..9 would leave 1 to 1.78, half the axis, without a tick: linear.
  EXPECT_EQ(labels(logTicks(0.562, 1.78)),
            (Labels{"0.6", "0.8", "1", "1.2", "1.4", "1.6"}));
  // Under a factor of two: linear.
  EXPECT_EQ(labels(logTicks(3.16, 5.62)),
            (Labels{"3.5", "4", "4.5", "5", "5.5"}));
  EXPECT_EQ(labels(logTicks(2.1, 2.5)),
            (Labels{"2.1", "2.2", "2.3", "2.4", "2.5"}));
}

TEST(ReportTicks, LogAlwaysEnough) {
  // Every range from a factor of 1.01 to 10^6, anywhere: at least 4 ticks,
  // at most 12, all inside the range and increasing.
  for (double low = 1e-5; low < 1e3; low *= 1.37)
    for (double ratio = 1.01; ratio < 1e6; ratio *= 1.21) {
      double high = low * ratio;
      std::vector<double> ticks = logTicks(low, high);
      ASSERT_GE(ticks.size(), 4u) << low << " " << high;
      ASSERT_LE(ticks.size(), 12u) << low << " " << high;
      for (size_t i = 0; i < ticks.size(); ++i) {
        ASSERT_GE(ticks[i], low * (1 - 1e-9));
        ASSERT_LE(ticks[i], high * (1 + 1e-9));
        if (i)
          ASSERT_LT(ticks[i - 1], ticks[i]);
      }
    }
  EXPECT_TRUE(logTicks(0, 1).empty());
  EXPECT_TRUE(logTicks(1, 1).empty());
}

TEST(ReportTitle, PathsBecomeBaseNames) {
  EXPECT_EQ(fitTitle("/work/main/examples/mlp_train_step.mlir @train_step: "
                     "regression onto a teacher, 64 samples per step",
                     200),
            "mlp_train_step.mlir @train_step: regression onto a teacher, 64 "
            "samples per step");
  EXPECT_EQ(fitTitle("examples/gpt.mlir @f: x", 200), "gpt.mlir @f: x");
  // Not paths: kept.
  EXPECT_EQ(fitTitle("a.mlir @f: loss 1/T, tanh(X·A)·B", 200),
            "a.mlir @f: loss 1/T, tanh(X·A)·B");
}

TEST(ReportTitle, ShortenedToFit) {
  std::string title = "/tmp/x/mlp_train_step.mlir @train_step: regression "
                      "onto a fixed random teacher tanh(X·A)·B, X ~ N(0,1), "
                      "64 samples per step";
  // Whole clauses of the task go first; · counts as one character.
  EXPECT_EQ(fitTitle(title, 99),
            "mlp_train_step.mlir @train_step: regression onto a fixed random "
            "teacher tanh(X·A)·B, X ~ N(0,1)");
  EXPECT_EQ(fitTitle(title, 90),
            "mlp_train_step.mlir @train_step: regression onto a fixed random "
            "teacher tanh(X·A)·B");
  // Asides go before clauses; a ", " inside one is not a clause.
  std::string text = "/w/transformer_block_train_step.mlir @train_step: "
                     "next-character prediction (fixed random char "
                     "embeddings as inputs and targets, MSE), 32 characters "
                     "per step";
  EXPECT_EQ(fitTitle(text, 99),
            "transformer_block_train_step.mlir @train_step: next-character "
            "prediction, 32 characters per step");
  EXPECT_EQ(fitTitle(text, 80),
            "transformer_block_train_step.mlir @train_step: next-character "
            "prediction");
  EXPECT_EQ(fitTitle("a.mlir @f: x (y, z)", 10), "a.mlir @f…");
  // Then an ellipsis.
  EXPECT_EQ(fitTitle(title, 40), "mlp_train_step.mlir @train_step: regres…");
  EXPECT_EQ(fitTitle("abcdef", 6), "abcdef");
  EXPECT_EQ(fitTitle("abcdefg", 6), "abcde…");
}

TEST(ReportLabels, LossAxisNamesTheLoss) {
  EXPECT_EQ(lossAxisLabel("byte-level language modelling, cross-entropy, "
                          "2x32 tokens per step"),
            "cross-entropy (nats/token)");
  EXPECT_EQ(lossAxisLabel("regression onto a fixed random teacher"),
            "mean squared error");
  EXPECT_EQ(lossAxisLabel("next-character prediction (fixed random char "
                          "embeddings as inputs and targets, MSE)"),
            "mean squared error");
  EXPECT_EQ(lossAxisLabel("something else"), "loss");
}

TEST(ReportSvg, TitleTicksAndLabels) {
  fp4train::train::Run run;
  run.recipe = "f32";
  run.steps = 485;
  for (int i = 0; i < 485; ++i)
    run.losses.push_back(1.0 / (1 + i / 50.0));
  std::string svg = renderSvg({run}, 10,
                              "/abs/dir/mlp.mlir @train_step: regression "
                              "onto a teacher <&>");
  EXPECT_NE(svg.find(">mlp.mlir @train_step: regression onto a teacher "
                     "&lt;&amp;&gt;</text>"),
            std::string::npos)
      << svg;
  EXPECT_EQ(svg.find("/abs"), std::string::npos);
  EXPECT_NE(svg.find("class=\"xtick\""), std::string::npos);
  for (const char *label : {">0<", ">100<", ">400<", ">mean squared error<",
                            ">step<", ">0.1<", ">0.2<", ">0.5<", ">1<"})
    EXPECT_NE(svg.find(label), std::string::npos) << label;
  EXPECT_EQ(svg.find(">-0<"), std::string::npos);
}

TEST(ReportSvg, InlineRecipeNamesAreEscaped) {
  fp4train::train::Run run;
  run.recipe = "#fp4train.recipe<name = \"x\">";
  run.steps = 3;
  run.losses = {1, 0.5, 0.25};
  std::string svg = renderSvg({run}, 1, "a.mlir @f: regression");
  EXPECT_NE(svg.find(">#fp4train.recipe&lt;name = &quot;x&quot;&gt;</text>"),
            std::string::npos)
      << svg;
}

} // namespace
