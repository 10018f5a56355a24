// Numbers read from the text of a scalar in a user's file (target descriptions, run configs): the value, or the
// problem a user should see ("integer out of range: ...", "must be at least 1, got 0"). Plain text: the YAML
// readers check a node's type and quoting themselves and say where the problem is (ir/located_error.h).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace ingot {

// An integer in [min, max]. On failure `problem` says why, or stays empty when the text is no integer at all (the
// caller then says what it got).
std::optional<int64_t> integer_from_text(const std::string& text, int64_t min, int64_t max, std::string& problem);

// A finite number >= min (> min when min_is_exclusive); `problem` as for integer_from_text.
std::optional<double> number_from_text(const std::string& text, double min, bool min_is_exclusive,
                                       std::string& problem);

// The shortest text that reads back as v (std::to_chars): 0.5, 1e-05, 1200.
std::string show_number(double v);

}  // namespace ingot
