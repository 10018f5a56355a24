#include "ir/scalar_text.h"

#include <charconv>
#include <cmath>

namespace ingot {

std::optional<int64_t> integer_from_text(const std::string& text, int64_t min, int64_t max, std::string& problem) {
  int64_t value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec == std::errc::result_out_of_range) {
    problem = "integer out of range: " + text;
    return std::nullopt;
  }
  if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  if (value < min) problem = "must be at least " + std::to_string(min) + ", got " + text;
  if (value > max) problem = "must be at most " + std::to_string(max) + ", got " + text;
  if (!problem.empty()) return std::nullopt;
  return value;
}

std::optional<double> number_from_text(const std::string& text, double min, bool min_is_exclusive,
                                       std::string& problem) {
  double value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || !std::isfinite(value)) return std::nullopt;
  if (min_is_exclusive ? value <= min : value < min) {
    problem = std::string(min_is_exclusive ? "must be greater than " : "must be at least ") + show_number(min) +
              ", got " + text;
    return std::nullopt;
  }
  return value;
}

std::string show_number(double v) {
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, res.ptr);
}

}  // namespace ingot
