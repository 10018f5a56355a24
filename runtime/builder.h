// The tuning loop's builder: lowers each candidate (program + schedule), prints it as C++ and compiles the
// sources in a pool of worker threads (each compile is a child process with CompileOptions' time limit); GPU
// candidates are lowered and printed as CUDA only (the GPU runner compiles them).
// Every candidate gets a result, in input order: its library, or the class and message of what failed.
// All worker threads have exited when build() returns, as the runner's fork requires (runtime/runner.h).
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "compile/cpp_compiler.h"
#include "ir/program.h"
#include "ir/schedule.h"
#include "ir/stmt.h"
#include "runtime/measurement.h"

namespace ingot {

struct BuildInput {
  // A candidate to lower (lower/lower.h) and print (codegen/cpp_printer.h).
  BuildInput(Program program, Schedule schedule) : program(std::move(program)), schedule(std::move(schedule)) {}
  // An already lowered function with its C++ source, which must export cpp_printer.h's C ABI for it.
  BuildInput(LoopFunction function, std::string source) : function(std::move(function)), source(std::move(source)) {}

  std::optional<Program> program;  // empty for an already lowered function
  Schedule schedule;
  LoopFunction function;  // used when program is empty
  std::string source;     // used when program is empty
};

struct BuildResult {
  ErrorClass error_class = ErrorClass::kNone;  // none, invalid_schedule, compile_error or compile_timeout
  std::string error_message;                   // empty when error_class is kNone
  LoopFunction function;                       // the lowered function; unset for invalid_schedule
  CompiledLibrary library;                     // set when ok()
  // The compiler's wall time (0 on a kernel-cache hit); for a failed compile, the time until it failed.
  double compile_seconds = 0;

  bool ok() const { return error_class == ErrorClass::kNone; }
};

struct BuilderOptions {
  CompileOptions compile;  // compiler, flags, kernel cache and the per-compile time limit
  int workers = 0;         // compiles at once; 0 = std::thread::hardware_concurrency()
  // GPU candidates: each is lowered and its kernels printed as CUDA (a printer rejection gives invalid_schedule),
  // and nothing is compiled here: the GPU runner compiles with NVRTC for the device it measures on
  // (RunnerOptions::gpu), in its child process, whose time limit also bounds the compile.
  bool gpu = false;
};

class Builder {
 public:
  explicit Builder(BuilderOptions options = {});
  const BuilderOptions& options() const { return options_; }

  // One result per input, in input order. A lowering ScheduleError gives invalid_schedule (so does a lowered
  // function the C++ printer rejects, with the printer's reason); a failed compile gives compile_error; a
  // compiler killed at CompileOptions::timeout_seconds gives compile_timeout. Lowering and printing run on
  // the calling thread (they are quick next to compiling); only the compiles are spread over the workers.
  // Throws what is not a candidate's fault: std::runtime_error when the kernel cache cannot be written, and
  // any other exception from lowering (an ingot bug must not be recorded as a bad candidate).
  // on_compiled, when set, is called after each compile (as `compiled` of `total` candidates to compile), one call
  // at a time from whichever worker finished it: long batches show their progress (the paper LSTM's compile for
  // more than a minute each).
  std::vector<BuildResult> build(const std::vector<BuildInput>& inputs,
                                 const std::function<void(size_t compiled, size_t total)>& on_compiled = {}) const;

 private:
  BuilderOptions options_;
};

}  // namespace ingot
