// Builds one candidate (program + schedule) for the CPU, runs it in this process, checks its outputs
// against expected tensors (the interpreter's) and times it: warm-up, then repeats until a minimum time has
// passed, keeping every run time. Compilation finishes before any timing starts. For isolated, crash-proof
// measurement of untrusted candidates the tuner's runner uses child processes; this is the direct path used
// by `ingot run`, the benchmarks and the property tests.
#pragma once

#include <string>
#include <vector>

#include "compile/cpp_compiler.h"
#include "ir/host_tensor.h"
#include "ir/program.h"
#include "ir/schedule.h"
#include "ir/stmt.h"
#include "lower/stage_intervals.h"
#include "results/run_statistics.h"

namespace ingot {

struct LocalRunOptions {
  CompileOptions compile;
  int threads = 0;  // OpenMP threads; 0 = the OpenMP default
  int warmup_runs = 1;
  double min_repeat_ms = 100;  // keep repeating until this much time was spent...
  int min_repeats = 3;         // ...and at least this many runs
  int max_repeats = 1000;
  // Verification tolerance, per element: |actual - expected| <= atol * max(1, max|expected|) + rtol * |expected| +
  // kRoundingNoiseFactor * noise (rounding_noise below).
  // The absolute part scales with the output's magnitude because a schedule may sum a reduction in another
  // order than the interpreter, and f32 rounding grows with the size of the partial sums, not of the result.
  double rtol = kDefaultRtol;
  double atol = kDefaultAtol;
  // Each output's f32 rounding noise (interp/rounding_noise.h); an output not named has none.
  RoundingNoise rounding_noise;
  // Prints the program with profile marks (codegen/cpp_printer.h) and times each stage interval in every timed run.
  bool profile = false;
};

struct LocalRunResult {
  LoopFunction function;
  CompiledLibrary library;
  std::vector<Comparison> checks;  // one per program output, in order
  bool correct = false;
  std::vector<double> seconds;  // every timed run; empty when the first run was wrong
  RunStatistics statistics;     // of seconds
  double pack_seconds = 0;      // packing the packed inputs (function.packed_inputs), once before the runs
  // With LocalRunOptions::profile: the stage intervals of the function as printed (lower/stage_intervals.h), and
  // each one's median seconds over the timed runs (same order).
  std::vector<StageInterval> intervals;
  std::vector<double> interval_seconds;
};

// Throws ScheduleError for an invalid schedule and CompileError when the compiler fails. A wrong answer is
// not an exception: correct is false, checks say where, and nothing is timed.
LocalRunResult local_run(const Program& program, const Schedule& schedule, const TensorMap& inputs,
                         const TensorMap& expected, const LocalRunOptions& options = {});

}  // namespace ingot
