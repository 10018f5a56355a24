// The tuning loop's runner: measures one built candidate at a time, alone, in a forked child process. The
// child loads the library (for the GPU: compiles the kernels with NVRTC and runs them on the device), checks the
// first run against the expected outputs, warms up and times repeated runs, and reports through a pipe; the parent
// enforces one time limit on all of it. A crash, a hang or a
// wrong answer becomes a Measurement with its error class and the caller carries on. Call it with no other
// thread running in the process (see "Why fork without exec is safe" below).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "ir/host_tensor.h"
#include "ir/program.h"
#include "runtime/builder.h"
#include "runtime/measurement.h"

namespace ingot {

struct RunnerOptions {
  int threads = 0;  // OpenMP threads in the child (KernelModule::set_num_threads); 0 = the OpenMP default
  int warmup_runs = 1;
  double min_repeat_ms = 100;  // keep repeating until this much time was spent in timed runs...
  int min_repeats = 3;         // ...and at least this many runs
  int max_repeats = 1000;      // but never more runs than this
  // Bytes written before each warm-up and timed run, outside its time (but inside min_repeat_ms), so that it starts
  // with cold caches; 0 = none.
  // A task of a model is measured alone many times over, where its weights would stay in cache between runs, while
  // in the model each stage finds them in memory (whole-model tuning sets it: tuner/model_tune_job.h).
  int64_t flush_cache_bytes = 0;
  // Verification tolerance, exactly as LocalRunOptions (runtime/local_run.h) documents it: per element,
  // |actual - expected| <= atol * max(1, max|expected|) + rtol * |expected| + kRoundingNoiseFactor * noise.
  double rtol = kDefaultRtol;
  double atol = kDefaultAtol;
  RoundingNoise rounding_noise;  // as in LocalRunOptions
  // The whole measurement: loading the library, the verification run, the warm-up and every timed run. A
  // child still running after this long is killed (SIGKILL) and the candidate gets run_timeout.
  double run_timeout_seconds = 60;
  // Measure on the GPU: the child compiles the candidate's kernels with NVRTC for its device and runs them
  // (runtime/cuda_run.h) instead of loading a library; the NVRTC compile counts towards run_timeout_seconds and
  // the Measurement's compile_seconds, and a kernel NVRTC rejects gives compile_error. threads and
  // flush_cache_bytes do not apply.
  bool gpu = false;
  // GPU: where the compiled kernels are kept (CudaRunOptions::kernel_cache_dir): a candidate measured again (side by
  // side, or after a restart) loads them instead of compiling; "" = the default kernel cache.
  std::string kernel_cache_dir;
};

// What a child process found when it opened the CUDA driver.
struct GpuProbe {
  bool available = false;
  std::string device;  // "NVIDIA H200" when available
  std::string arch;    // "sm_90" when available
  std::string reason;  // why no GPU is usable, when not available
};
// Opens the CUDA driver in a child process, so that this process never initializes CUDA (a CUDA context does not
// survive fork, and the GPU runner forks a child per measurement). Same rule as measure(): no other thread may run.
GpuProbe probe_gpu(double timeout_seconds = 60);

// Why fork without exec is safe here, and the rule it needs. The child is a copy of this process: it has the
// input and expected tensors without serializing them, and it loads and runs the kernel with the same code as
// local_run (compile/kernel_module.h). But only the forking thread exists in the child, so a lock that any
// other thread held at fork time (in malloc, the dynamic loader, or an OpenMP runtime, whose idle thread pool
// the child would wait on forever) stays held there. Hence measure() must be called while this process runs
// no other thread: the builder's workers have all exited when Builder::build returns, and the idle OpenMP
// pool that kernels run in this process leave behind (local_run, KernelModule) is released with
// omp_pause_resource_all(omp_pause_hard) before forking. If other threads remain, measure() throws
// std::logic_error instead of risking a deadlock that would be recorded as the candidate's run_timeout.
//
// The child leaves with _exit, so it never flushes stdio buffers or runs atexit handlers copied from the
// parent; its stdout and stderr go to a pipe that the parent reads (the tail is quoted in error messages),
// never to the parent's terminal. It ignores SIGINT, SIGTERM, SIGHUP and SIGQUIT, so that stopping the tuner
// from a terminal does not record a killed child as a crash; it dies with the parent (PR_SET_PDEATHSIG on
// Linux), and the parent's time limit bounds it otherwise.
class Runner {
 public:
  // inputs: one tensor per placeholder of `program`, by name; expected: one per output (the interpreter's).
  // Throws std::invalid_argument naming a missing tensor or one whose dtype or shape does not match, or a
  // bad option.
  Runner(const Program& program, const TensorMap& inputs, const TensorMap& expected, RunnerOptions options = {});
  const RunnerOptions& options() const { return options_; }
  // This runner (its program, inputs and expected outputs) with other options; throws as the constructor does for a
  // bad option.
  Runner with_options(RunnerOptions options) const;

  // Measures one candidate built for this runner's program. A failed build gives a Measurement with the
  // build's error (nothing runs). Otherwise: the first run's outputs (which start as NaN, so an element the
  // kernel never writes fails) are compared with the expected ones; a difference beyond the tolerance gives
  // wrong_answer naming the output and its first bad element, with nothing timed. Then warmup_runs untimed
  // runs, then timed runs until min_repeats and min_repeat_ms are both reached or max_repeats runs are done.
  // A child killed by a signal gives runtime_error naming it (e.g. "SIGSEGV"); one that exits early, fails to
  // load the library or writes a malformed report gives runtime_error with what it said; a child still running
  // after run_timeout_seconds is killed: run_timeout. The message says which step the child was in.
  // Throws std::invalid_argument when the candidate's function takes other buffers than the program's, and
  // std::logic_error when other threads are running (see above), or std::runtime_error when a pipe or a
  // process cannot be created.
  Measurement measure(const BuildResult& candidate) const;

  // Measures several candidates in one child, in alternation: each is loaded and its first run verified as by
  // measure(), each warmed up, and then the timed runs go round the candidates one call at a time (each pass starting
  // one candidate further on) until every candidate has min_repeats runs and the passes took min_repeat_ms per
  // candidate, or max_repeats passes are done. All of them then meet the same moments of the machine's speed, which
  // on a shared machine moves by tens of percent within seconds (docs/search.md): the comparisons side by side
  // (runtime/side_by_side.h) take their rounds this way. One Measurement per candidate, in order; each has the same
  // number of runs. A failed build gives its error (nothing runs). On the GPU, with fewer than two built candidates,
  // or where the shared child fails (a crash, a hang, a wrong answer), each candidate is measured alone by measure(),
  // so a fault is recorded against the candidate that has it. The time limit is run_timeout_seconds per candidate.
  // Throws as measure() does.
  std::vector<Measurement> measure_alternating(const std::vector<BuildResult>& candidates) const;

 private:
  // Throws std::invalid_argument naming a bad option.
  void check_options() const;
  // absolute_tolerances_ under options_.
  void set_absolute_tolerances();
  // Throws std::invalid_argument (naming `who`) when the candidate's function takes other buffers than the program's.
  void check_buffers(const BuildResult& candidate, const char* who) const;

  RunnerOptions options_;
  std::shared_ptr<const Program> program_;   // what cuda_run needs besides the tensors (options_.gpu)
  std::vector<std::string> input_names_;     // the program's placeholders, in order
  std::vector<HostTensor> inputs_;           // same order
  std::vector<std::string> output_names_;    // the program's outputs, in order
  std::vector<HostTensor> expected_;         // same order
  std::vector<double> absolute_tolerances_;  // per output: absolute_tolerance() under options_
};

}  // namespace ingot
