#include "configs/flag_values.h"

#include <optional>
#include <stdexcept>

#include "ir/scalar_text.h"

namespace ingot {

int64_t integer_flag(const std::string& flag, const std::string& text, int64_t min, int64_t max) {
  std::string problem;
  std::optional<int64_t> value = integer_from_text(text, min, max, problem);
  if (!value)
    throw std::invalid_argument(flag + ": " + (problem.empty() ? "expected an integer, got '" + text + "'" : problem));
  return *value;
}

double number_flag(const std::string& flag, const std::string& text, double min, bool min_is_exclusive) {
  std::string problem;
  std::optional<double> value = number_from_text(text, min, min_is_exclusive, problem);
  if (!value)
    throw std::invalid_argument(flag + ": " +
                                (problem.empty() ? "expected a finite number, got '" + text + "'" : problem));
  return *value;
}

}  // namespace ingot
