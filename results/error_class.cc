#include "results/error_class.h"

#include <stdexcept>

namespace ingot {

std::string to_string(ErrorClass error_class) {
  switch (error_class) {
    case ErrorClass::kNone: return "none";
    case ErrorClass::kInvalidSchedule: return "invalid_schedule";
    case ErrorClass::kCompileError: return "compile_error";
    case ErrorClass::kCompileTimeout: return "compile_timeout";
    case ErrorClass::kRuntimeError: return "runtime_error";
    case ErrorClass::kRunTimeout: return "run_timeout";
    case ErrorClass::kWrongAnswer: return "wrong_answer";
  }
  throw std::invalid_argument("unknown ErrorClass value " + std::to_string(static_cast<int>(error_class)));
}

ErrorClass error_class_from_string(const std::string& text) {
  std::string accepted;
  for (ErrorClass c : all_error_classes()) {
    if (text == to_string(c)) return c;
    accepted += (accepted.empty() ? "" : ", ") + to_string(c);
  }
  throw std::invalid_argument("unknown error class '" + text + "' (expected one of: " + accepted + ")");
}

const std::vector<ErrorClass>& all_error_classes() {
  static const std::vector<ErrorClass> classes = {
      ErrorClass::kNone,         ErrorClass::kInvalidSchedule, ErrorClass::kCompileError, ErrorClass::kCompileTimeout,
      ErrorClass::kRuntimeError, ErrorClass::kRunTimeout,      ErrorClass::kWrongAnswer};
  return classes;
}

}  // namespace ingot
