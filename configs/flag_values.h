// Command-line values checked as the config keys they override are: the same ranges and the same problems
// (ir/scalar_text.h), named by the flag, e.g. "--trials: must be at least 0, got -1". For the CLI's flags.
#pragma once

#include <cstdint>
#include <string>

namespace ingot {

// An integer in [min, max]; throws std::invalid_argument naming the flag and the problem.
int64_t integer_flag(const std::string& flag, const std::string& text, int64_t min, int64_t max);

// A finite number >= min (> min when min_is_exclusive); throws std::invalid_argument naming the flag.
double number_flag(const std::string& flag, const std::string& text, double min, bool min_is_exclusive);

}  // namespace ingot
