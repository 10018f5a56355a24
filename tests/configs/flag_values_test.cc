// Flags that override config keys are checked as the keys are: NaN, negative counts, text and out-of-range
// integers are refused with the flag's name and the problem.
#include "configs/flag_values.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <stdexcept>

namespace ingot {
namespace {

std::string problem_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "(accepted)";
}

TEST(FlagValues, IntegersAreCheckedAsConfigKeys) {
  EXPECT_EQ(integer_flag("--trials", "8", 0, INT64_MAX), 8);
  EXPECT_EQ(problem_of([] { integer_flag("--trials", "-1", 0, INT64_MAX); }), "--trials: must be at least 0, got -1");
  EXPECT_EQ(problem_of([] { integer_flag("--trials", "abc", 0, INT64_MAX); }),
            "--trials: expected an integer, got 'abc'");
  EXPECT_NE(problem_of([] { integer_flag("--seed", "18446744073709551616", 0, INT64_MAX); }).find("--seed: "),
            std::string::npos);
  EXPECT_NE(problem_of([] { integer_flag("--seed", "18446744073709551616", 0, INT64_MAX); }), "(accepted)");
  EXPECT_EQ(problem_of([] { integer_flag("--limit", "-5", 0, INT64_MAX); }), "--limit: must be at least 0, got -5");
}

TEST(FlagValues, NumbersAreFinite) {
  EXPECT_EQ(number_flag("--minutes", "1.5", 0, false), 1.5);
  for (const char* bad : {"nan", "inf", "-1", "x"})
    EXPECT_EQ(problem_of([&] { number_flag("--minutes", bad, 0, false); }).rfind("--minutes: ", 0), 0u) << bad;
}

}  // namespace
}  // namespace ingot
