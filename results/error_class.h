// The outcome class of measuring one candidate, shared by the builder, the runner, the tuner and the
// database. The spellings of to_string are fixed: they are what the database stores and what users query.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace ingot {

enum class ErrorClass : uint8_t {
  kNone,             // "none": built, verified against the reference and timed
  kInvalidSchedule,  // "invalid_schedule": lowering rejected the schedule
  kCompileError,     // "compile_error": the C++ compiler failed
  kCompileTimeout,   // "compile_timeout": the compiler ran past its time limit and was killed
  kRuntimeError,     // "runtime_error": the measuring child crashed, exited early or reported a failure
  kRunTimeout,       // "run_timeout": the measurement ran past its time limit and was killed
  kWrongAnswer,      // "wrong_answer": the first run's outputs differ from the reference beyond the tolerance
};

// "none", "invalid_schedule", "compile_error", "compile_timeout", "runtime_error", "run_timeout",
// "wrong_answer".
std::string to_string(ErrorClass error_class);
// Inverse of to_string; throws std::invalid_argument quoting the text and listing the valid spellings.
ErrorClass error_class_from_string(const std::string& text);
// Every class, in declaration order.
const std::vector<ErrorClass>& all_error_classes();

}  // namespace ingot
