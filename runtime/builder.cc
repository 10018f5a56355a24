#include "runtime/builder.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <exception>
#include <mutex>
#include <stdexcept>
#include <thread>

#include "codegen/cuda_printer.h"
#include "codegen/pipeline.h"

namespace ingot {

namespace {

// Lowers and prints one candidate; returns an invalid_schedule result, or fills `source` for compiling (for the GPU,
// where the runner compiles, it stays empty).
BuildResult lower_and_print(const BuildInput& input, bool gpu, std::string& source) {
  BuildResult result;
  if (!input.program) {
    result.function = input.function;
    source = input.source;
    return result;
  }
  try {
    result.function = lower_program(*input.program, input.schedule);
  } catch (const ScheduleError& e) {
    result.error_class = ErrorClass::kInvalidSchedule;
    result.error_message = e.what();
    return result;
  }
  if (gpu) {
    try {
      for (const LoopFunction& kernel : prepare_for_gpu(result.function)) print_cuda_canonical(kernel);
    } catch (const std::invalid_argument& e) {
      result.error_class = ErrorClass::kInvalidSchedule;
      result.error_message = std::string("the CUDA backend cannot print this candidate: ") + e.what();
    }
    return result;
  }
  try {
    source = cpp_source(result.function).source;
  } catch (const std::invalid_argument& e) {
    // The printer rejects only what the CPU backend cannot run (e.g. GPU thread bindings): a property of
    // the schedule, so the candidate is invalid for this target rather than ingot broken.
    result.error_class = ErrorClass::kInvalidSchedule;
    result.error_message = std::string("the CPU backend cannot print this candidate: ") + e.what();
  }
  return result;
}

void compile(const std::string& source, const CompileOptions& options, BuildResult& result) {
  using Clock = std::chrono::steady_clock;
  auto started = Clock::now();
  try {
    result.library = compile_cpp(source, options);
    result.compile_seconds = result.library.compile_seconds;
  } catch (const CompileError& e) {
    double elapsed = std::chrono::duration<double>(Clock::now() - started).count();
    result.compile_seconds = elapsed;
    result.error_class = e.timed_out() ? ErrorClass::kCompileTimeout : ErrorClass::kCompileError;
    result.error_message = e.what();
  }
}

}  // namespace

Builder::Builder(BuilderOptions options) : options_(std::move(options)) {
  if (options_.workers < 0)
    throw std::invalid_argument("Builder: workers must be 0 (one per core) or more, not " +
                                std::to_string(options_.workers));
  if (options_.workers == 0) options_.workers = std::max(1u, std::thread::hardware_concurrency());
}

std::vector<BuildResult> Builder::build(const std::vector<BuildInput>& inputs,
                                        const std::function<void(size_t compiled, size_t total)>& on_compiled) const {
  std::vector<BuildResult> results(inputs.size());
  std::vector<std::string> sources(inputs.size());
  std::vector<size_t> to_compile;
  for (size_t n = 0; n < inputs.size(); ++n) {
    results[n] = lower_and_print(inputs[n], options_.gpu, sources[n]);
    if (results[n].ok() && !options_.gpu) to_compile.push_back(n);
  }

  std::atomic<size_t> next{0};
  std::atomic<bool> stop{false};
  std::mutex failure_mutex, progress_mutex;
  std::exception_ptr failure;
  size_t compiled = 0;
  auto work = [&] {
    while (!stop) {
      size_t k = next++;
      if (k >= to_compile.size()) return;
      size_t n = to_compile[k];
      try {
        compile(sources[n], options_.compile, results[n]);
        if (on_compiled) {
          std::lock_guard<std::mutex> lock(progress_mutex);
          on_compiled(++compiled, to_compile.size());
        }
      } catch (...) {
        std::lock_guard<std::mutex> lock(failure_mutex);
        if (!failure) failure = std::current_exception();
        stop = true;
      }
    }
  };
  size_t thread_count = std::min(size_t(options_.workers), to_compile.size());
  std::vector<std::thread> workers;
  for (size_t t = 1; t < thread_count; ++t) workers.emplace_back(work);
  work();  // the calling thread is one of the workers
  for (std::thread& t : workers) t.join();
  if (failure) std::rethrow_exception(failure);
  return results;
}

}  // namespace ingot
