// What measuring one tuning candidate produced: its run times and statistics, or the class and message of
// the error that stopped it. Made by the runner (runtime/runner.h) and stored by the results database; the
// error classes and their exact spellings are those of results/error_class.h.
#pragma once

#include <string>
#include <vector>

#include "results/error_class.h"
#include "results/run_statistics.h"

namespace ingot {

struct Measurement {
  ErrorClass error_class = ErrorClass::kNone;
  std::string error_message;  // empty when error_class is kNone

  // Every timed run, in order; empty unless error_class is kNone.
  std::vector<double> run_seconds;
  RunStatistics statistics;  // of run_seconds

  // Compiler wall time; 0 when the library came from the kernel cache.
  double compile_seconds = 0;

  // Largest differences from the expected outputs over all outputs of the verification run (infinity when
  // the first wrong element is NaN, e.g. never written); 0 when it did not take place (a build error, or a
  // crash or timeout before it finished).
  double max_abs_error = 0;
  double max_rel_error = 0;

  bool ok() const { return error_class == ErrorClass::kNone; }
};

}  // namespace ingot
