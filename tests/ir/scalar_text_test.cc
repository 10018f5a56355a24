// integer_from_text and number_from_text: values, and the problems the YAML readers report for bad ones.
#include "ir/scalar_text.h"

#include <gtest/gtest.h>

#include <climits>

namespace ingot {
namespace {

TEST(ScalarText, ReadsIntegersInRange) {
  std::string problem;
  EXPECT_EQ(integer_from_text("42", 1, 100, problem), 42);
  EXPECT_EQ(integer_from_text("-3", -5, 0, problem), -3);
  EXPECT_EQ(problem, "");
}

TEST(ScalarText, SaysWhyAnIntegerIsRejected) {
  std::string problem;
  EXPECT_FALSE(integer_from_text("0", 1, 100, problem));
  EXPECT_EQ(problem, "must be at least 1, got 0");
  problem.clear();
  EXPECT_FALSE(integer_from_text("101", 1, 100, problem));
  EXPECT_EQ(problem, "must be at most 100, got 101");
  problem.clear();
  EXPECT_FALSE(integer_from_text("99999999999999999999", 1, INT64_MAX, problem));
  EXPECT_EQ(problem, "integer out of range: 99999999999999999999");
  for (const char* text : {"1.5", "12abc", "", "abc", " 4"}) {
    problem.clear();
    EXPECT_FALSE(integer_from_text(text, 0, 100, problem)) << text;
    EXPECT_EQ(problem, "") << text;  // not an integer: the caller describes what it got
  }
}

TEST(ScalarText, ReadsFiniteNumbersAboveTheMinimum) {
  std::string problem;
  EXPECT_EQ(number_from_text("0.5", 0, true, problem), 0.5);
  EXPECT_EQ(number_from_text("0", 0, false, problem), 0.0);
  EXPECT_EQ(problem, "");
  EXPECT_FALSE(number_from_text("0", 0, true, problem));
  EXPECT_EQ(problem, "must be greater than 0, got 0");
  problem.clear();
  EXPECT_FALSE(number_from_text("0.25", 0.5, false, problem));
  EXPECT_EQ(problem, "must be at least 0.5, got 0.25");
  for (const char* text : {"inf", "nan", "1e999", "x"}) {
    problem.clear();
    EXPECT_FALSE(number_from_text(text, 0, false, problem)) << text;
    EXPECT_EQ(problem, "") << text;
  }
}

TEST(ScalarText, ShowsNumbersShortestFirst) {
  EXPECT_EQ(show_number(0.5), "0.5");
  EXPECT_EQ(show_number(1200), "1200");
  EXPECT_EQ(show_number(1e-05), "1e-05");
}

}  // namespace
}  // namespace ingot
