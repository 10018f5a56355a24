// Side-by-side timing: every contender is timed once per round (after the first, the correct ones in turn in one
// child), a failed one is never run again, and the speed-up is the median of the rounds' paired ratios (a slow period
// slows both schedules of a round).
#include "runtime/side_by_side.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <stdexcept>

#include "codegen/cpp_printer.h"
#include "interp/interpreter.h"
#include "lower/lower.h"
#include "workloads/examples.h"

namespace ingot {
namespace {

namespace fs = std::filesystem;

Measurement timed(double median_seconds) {
  Measurement m;
  m.run_seconds = {median_seconds};
  m.statistics = run_statistics(m.run_seconds);
  return m;
}

Measurement failed(ErrorClass error) {
  Measurement m;
  m.error_class = error;
  m.error_message = "broken";
  return m;
}

TEST(SideBySide, TheSpeedUpIsTheMedianOfPairedRatios) {
  // Round 3 met a slow period of the reference only... and rounds 1-2 a fast one of both.
  std::vector<std::vector<Measurement>> rounds = {
      {timed(2.0), timed(1.0)}, {timed(4.0), timed(2.0)}, {timed(2.0), timed(4.0)}};
  // Unpaired, the medians (2 and 2) would say 1x; paired, two rounds of three say 2x.
  EXPECT_DOUBLE_EQ(*paired_speedup(rounds, 0, 1), 2.0);
  EXPECT_DOUBLE_EQ(*paired_speedup(rounds, 1, 0), 0.5);
  EXPECT_DOUBLE_EQ(*median_of_rounds(rounds, 0), 2.0);
  EXPECT_DOUBLE_EQ(*median_of_rounds(rounds, 1), 2.0);
}

TEST(SideBySide, RoundsWithAFailureArePairedWithNothing) {
  std::vector<std::vector<Measurement>> rounds = {{timed(3.0), failed(ErrorClass::kRuntimeError)},
                                                  {timed(3.0), timed(1.0)}};
  EXPECT_DOUBLE_EQ(*paired_speedup(rounds, 0, 1), 3.0);
  EXPECT_DOUBLE_EQ(*median_of_rounds(rounds, 1), 1.0);
  std::vector<std::vector<Measurement>> never = {{timed(3.0), failed(ErrorClass::kWrongAnswer)}};
  EXPECT_FALSE(paired_speedup(never, 0, 1).has_value());
  EXPECT_FALSE(median_of_rounds(never, 1).has_value());
}

TEST(SideBySide, TimesEveryContenderEachRoundAndAFailedOneOnlyOnce) {
  const fs::path dir = fs::temp_directory_path() / ("ingot-side-by-side-test-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const fs::path calls = dir / "calls";
  Program p = find_example("matmul").make_small();
  LoopFunction function = lower(p, Schedule());
  // Writes nothing to its output (a wrong answer) and leaves one byte in `calls` per run.
  const std::string counting_wrong_kernel =
      "#include <cstdint>\n#include <cstdio>\n"
      "extern \"C\" int ingot_abi_version(void) { return " +
      std::to_string(kCppKernelAbiVersion) +
      "; }\n"
      "extern \"C\" int ingot_num_inputs(void) { return 2; }\n"
      "extern \"C\" int ingot_num_outputs(void) { return 1; }\n"
      "extern \"C\" int64_t ingot_workspace_bytes(void) { return 0; }\n"
      "extern \"C\" void ingot_run(void* const*, void*) {\n"
      "  FILE* f = std::fopen(\"" +
      calls.string() +
      "\", \"a\");\n"
      "  std::fputc('x', f);\n"
      "  std::fclose(f);\n"
      "}\n";
  BuilderOptions options;
  options.compile.cache_dir = (dir / "cache").string();
  std::vector<BuildResult> built = Builder(options).build(
      {BuildInput(p, Schedule()), BuildInput(p, Schedule().split("C", "nope", 2)),
       BuildInput(function, counting_wrong_kernel), BuildInput(p, Schedule().split("C", "i", 2).parallel("C", "i.o"))});
  TensorMap inputs = random_inputs(p, 1);
  RunnerOptions runner_options;
  runner_options.min_repeat_ms = 1;
  Runner runner(p, inputs, interpret(p, inputs), runner_options);

  const std::vector<std::vector<Measurement>> rounds = measure_side_by_side(runner, built, 3);
  ASSERT_EQ(rounds.size(), 3u);
  for (const std::vector<Measurement>& round : rounds) {
    ASSERT_EQ(round.size(), 4u);
    EXPECT_TRUE(round[0].ok()) << round[0].error_message;
    EXPECT_EQ(round[1].error_class, ErrorClass::kInvalidSchedule);
    EXPECT_EQ(round[2].error_class, ErrorClass::kWrongAnswer);
    EXPECT_TRUE(round[3].ok()) << round[3].error_message;
    EXPECT_GT(round[0].statistics.median, 0);
  }
  // After the first round the two correct contenders share a child and take turns call by call: as many runs each.
  for (size_t r = 1; r < rounds.size(); ++r)
    EXPECT_EQ(rounds[r][0].run_seconds.size(), rounds[r][3].run_seconds.size()) << "round " << r;
  std::ifstream in(calls);
  const std::string written((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(written, "x") << "the wrong kernel ran its verification run once, and never again";
  EXPECT_TRUE(paired_speedup(rounds, 0, 3).has_value());
  EXPECT_FALSE(paired_speedup(rounds, 0, 2).has_value());

  EXPECT_THROW(measure_side_by_side(runner, built, 0), std::invalid_argument);

  // A sequential test: after the rounds asked for, one round more each time `more` says so, with every round so far;
  // a failed contender's extra rounds repeat its failure, and the wrong kernel still never runs again.
  std::vector<size_t> asked;
  const std::vector<std::vector<Measurement>> longer =
      measure_side_by_side(runner, built, 2, nullptr, [&](const std::vector<std::vector<Measurement>>& so_far) {
        asked.push_back(so_far.size());
        return so_far.size() < 4;
      });
  ASSERT_EQ(longer.size(), 4u);
  EXPECT_EQ(asked, (std::vector<size_t>{2, 3, 4}));
  for (const std::vector<Measurement>& round : longer) {
    EXPECT_TRUE(round[0].ok() && round[3].ok());
    EXPECT_EQ(round[2].error_class, ErrorClass::kWrongAnswer);
  }
  std::ifstream again(calls);
  EXPECT_EQ(std::string((std::istreambuf_iterator<char>(again)), std::istreambuf_iterator<char>()), "xx")
      << "once more for the second timing's verification, and never in its rounds";
  // Never asked before the rounds asked for are done, nor once a stop is set.
  std::atomic<bool> stop{false};
  asked.clear();
  EXPECT_EQ(measure_side_by_side(runner, built, 3, &stop,
                                 [&](const std::vector<std::vector<Measurement>>& so_far) {
                                   asked.push_back(so_far.size());
                                   stop = true;
                                   return true;
                                 })
                .size(),
            3u);
  EXPECT_EQ(asked, (std::vector<size_t>{3}));
  fs::remove_all(dir);
}

}  // namespace
}  // namespace ingot
