#include "runtime/runner.h"

#include <dirent.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <link.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#ifdef __linux__
#include <sys/prctl.h>
#endif

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <limits>
#include <memory>
#include <set>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "compile/file_descriptor.h"
#include "compile/kernel_module.h"
#include "runtime/cuda_driver.h"
#include "runtime/cuda_run.h"
#include "runtime/local_run.h"
#ifdef INGOT_HAVE_CUDA
#include "compile/nvrtc_compiler.h"
#endif

namespace ingot {

namespace {

using Clock = std::chrono::steady_clock;

// The child's report is a sequence of records: a kind byte, a 4-byte payload length, the payload. Step
// records name what the child is about to do, so that a crash or a timeout can say where it happened; the
// report ends with exactly one final record (result, wrong answer or failure).
constexpr char kStepRecord = 'S';
constexpr char kResultRecord = 'R';        // max abs error, max rel error, then every run time (doubles)
constexpr char kAlternatingRecord = 'A';   // candidates n, passes p, n x (max abs, max rel), then n x p run times
constexpr char kWrongAnswerRecord = 'W';   // max abs error, max rel error, then the message
constexpr char kFailureRecord = 'F';       // the message of an exception in the child
constexpr char kCompileTimeRecord = 'T';   // GPU: NVRTC's wall time (a double), before the final record
constexpr char kCompileErrorRecord = 'C';  // GPU: the message of a kernel NVRTC rejected
constexpr char kDeviceRecord = 'D';        // the GPU probe: available (one byte), then the device or the reason

// Exit codes of a child that could not report at all.
constexpr int kExitReportFailed = 101;
constexpr int kExitParentGone = 102;

// The tail of the child's stdout and stderr that error messages quote.
constexpr size_t kOutputTailBytes = 4096;

// omp_pause_hard in both libgomp's and LLVM libomp's omp.h.
constexpr int kOmpPauseHard = 2;

void append_double(std::string& out, double v) { out.append(reinterpret_cast<const char*>(&v), sizeof v); }

std::string record(char kind, const std::string& payload) {
  uint32_t size = uint32_t(std::min<size_t>(payload.size(), std::numeric_limits<uint32_t>::max()));
  std::string r(1, kind);
  r.append(reinterpret_cast<const char*>(&size), sizeof size);
  r.append(payload, 0, size);
  return r;
}

// What a child reports through: a record of `kind` (it leaves with kExitReportFailed when the pipe is gone).
using Send = std::function<void(char kind, const std::string& payload)>;

bool write_all(int fd, const std::string& data) {
  size_t done = 0;
  while (done < data.size()) {
    ssize_t n = ::write(fd, data.data() + done, data.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += size_t(n);
  }
  return true;
}

struct ChildReport {
  std::string step;     // the last step the child announced; empty when none
  char final_kind = 0;  // 0 when no final record arrived
  double max_abs_error = 0, max_rel_error = 0;
  std::vector<double> seconds;
  std::string text;
  double compile_seconds = 0;
  std::string malformed;  // why the report is not well formed; empty when it is
};

ChildReport parse_report(const std::string& bytes) {
  ChildReport report;
  size_t pos = 0;
  auto read_double = [&](const std::string& payload, size_t& at, double& v) {
    if (at + sizeof v > payload.size()) return false;
    std::memcpy(&v, payload.data() + at, sizeof v);
    at += sizeof v;
    return true;
  };
  while (pos < bytes.size()) {
    if (report.final_kind) {
      report.malformed = std::to_string(bytes.size() - pos) + " bytes follow the final record";
      return report;
    }
    uint32_t size = 0;
    if (pos + 1 + sizeof size > bytes.size()) {
      report.malformed = "a record header is cut off";
      return report;
    }
    char kind = bytes[pos];
    std::memcpy(&size, bytes.data() + pos + 1, sizeof size);
    pos += 1 + sizeof size;
    if (pos + size > bytes.size()) {
      report.malformed = "a record of " + std::to_string(size) + " bytes is cut off";
      return report;
    }
    std::string payload = bytes.substr(pos, size);
    pos += size;
    size_t at = 0;
    switch (kind) {
      case kStepRecord: report.step = payload; break;
      case kCompileTimeRecord:
        if (!read_double(payload, at, report.compile_seconds)) {
          report.malformed = "a compile time record is too short";
          return report;
        }
        break;
      case kDeviceRecord:
      case kCompileErrorRecord:
      case kFailureRecord:
        report.final_kind = kind;
        report.text = payload;
        break;
      case kAlternatingRecord:
        if (payload.size() % sizeof(double) != 0) {
          report.malformed = "an alternating result record holds a partial number";
          return report;
        }
        for (double v; read_double(payload, at, v);) report.seconds.push_back(v);
        report.final_kind = kind;
        break;
      case kWrongAnswerRecord:
      case kResultRecord:
        if (!read_double(payload, at, report.max_abs_error) || !read_double(payload, at, report.max_rel_error)) {
          report.malformed = "a result record is too short";
          return report;
        }
        if (kind == kWrongAnswerRecord) {
          report.text = payload.substr(at);
        } else {
          if ((payload.size() - at) % sizeof(double) != 0) {
            report.malformed = "a result record holds a partial run time";
            return report;
          }
          for (double v; read_double(payload, at, v);) report.seconds.push_back(v);
        }
        report.final_kind = kind;
        break;
      default:
        report.malformed = "unknown record kind " + std::to_string(int(static_cast<unsigned char>(kind)));
        return report;
    }
  }
  if (!report.final_kind) report.malformed = "the report has no result";
  return report;
}

// Keeps the last kOutputTailBytes of what the child wrote to stdout and stderr.
class OutputTail {
 public:
  void append(const char* data, size_t n) {
    total_ += n;
    tail_.append(data, n);
    if (tail_.size() > kOutputTailBytes) tail_.erase(0, tail_.size() - kOutputTailBytes);
  }
  // "" when the child wrote nothing, else a paragraph to append to an error message.
  std::string quoted() const {
    if (total_ == 0) return "";
    std::string heading = total_ > tail_.size() ? "\nits output (last " + std::to_string(tail_.size()) + " of " +
                                                      std::to_string(total_) + " bytes):\n"
                                                : "\nits output:\n";
    return heading + tail_;
  }

 private:
  std::string tail_;
  size_t total_ = 0;
};

struct Pipe {
  Pipe() {
    int fds[2];
    // Close-on-exec keeps the pipe out of compilers that another part of the process may spawn meanwhile.
    if (::pipe2(fds, O_CLOEXEC) != 0) throw std::runtime_error(std::string("pipe2 failed: ") + std::strerror(errno));
    read_end = std::make_unique<FileDescriptor>(fds[0]);
    write_end = std::make_unique<FileDescriptor>(fds[1]);
  }
  std::unique_ptr<FileDescriptor> read_end, write_end;
};

std::string seconds_text(double seconds) {
  std::ostringstream s;
  s << seconds << " s";
  return s.str();
}

std::string signal_name(int signal) {
  switch (signal) {
    case SIGSEGV: return "SIGSEGV";
    case SIGBUS: return "SIGBUS";
    case SIGFPE: return "SIGFPE";
    case SIGILL: return "SIGILL";
    case SIGABRT: return "SIGABRT";
    case SIGTRAP: return "SIGTRAP";
    case SIGSYS: return "SIGSYS";
    case SIGKILL: return "SIGKILL";
    case SIGTERM: return "SIGTERM";
    case SIGINT: return "SIGINT";
    case SIGHUP: return "SIGHUP";
    case SIGQUIT: return "SIGQUIT";
    case SIGPIPE: return "SIGPIPE";
    case SIGXCPU: return "SIGXCPU";
    case SIGXFSZ: return "SIGXFSZ";
    default: return "signal " + std::to_string(signal);
  }
}

int count_threads() {
#ifdef __linux__
  DIR* dir = ::opendir("/proc/self/task");
  if (!dir) return 1;
  int n = 0;
  while (const dirent* entry = ::readdir(dir))
    if (entry->d_name[0] != '.') ++n;
  ::closedir(dir);
  return n;
#else
  return 1;
#endif
}

// Kernels run in this process leave their OpenMP runtime's idle thread pool behind; a forked child would
// wait on those threads forever at its first parallel region. omp_pause_resource_all ends them (and the
// runtime starts a new pool when next needed). The runtime may be loaded RTLD_LOCAL, as a kernel library's
// dependency, so every loaded object is asked for the symbol.
void release_idle_openmp_threads() {
  std::vector<std::string> objects;
  ::dl_iterate_phdr(
      [](dl_phdr_info* info, size_t, void* names) {
        if (info->dlpi_name && *info->dlpi_name)
          static_cast<std::vector<std::string>*>(names)->push_back(info->dlpi_name);
        return 0;
      },
      &objects);
  std::set<void*> paused;
  for (const std::string& name : objects) {
    void* handle = ::dlopen(name.c_str(), RTLD_LAZY | RTLD_NOLOAD);
    if (!handle) continue;
    void* pause = ::dlsym(handle, "omp_pause_resource_all");
    if (pause && paused.insert(pause).second) reinterpret_cast<int (*)(int)>(pause)(kOmpPauseHard);
    ::dlclose(handle);
  }
}

void ensure_no_other_threads() {
  if (count_threads() <= 1) return;
  release_idle_openmp_threads();
  // The released threads leave asynchronously.
  auto give_up = Clock::now() + std::chrono::seconds(1);
  int threads = count_threads();
  while (threads > 1 && Clock::now() < give_up) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
    threads = count_threads();
  }
  if (threads > 1)
    throw std::logic_error("Runner::measure forks a child process to measure in, but this process runs " +
                           std::to_string(threads - 1) +
                           " other thread(s) even after releasing idle OpenMP threads; a lock one of them holds "
                           "could hang the child (see runtime/runner.h)");
}

// What the child needs; all of it is in the parent's memory before fork.
struct ChildTask {
  const RunnerOptions* options;
  const LoopFunction* function;
  const std::string* library_path;
  const std::vector<HostTensor>* inputs;
  const std::vector<std::string>* output_names;
  const std::vector<HostTensor>* expected;
  const std::vector<double>* absolute_tolerances;
};

void prepare_child_process(pid_t parent, int output_fd) {
#ifdef __linux__
  // A tuner killed mid-measurement must not leave a hung candidate running.
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (::getppid() != parent) ::_exit(kExitParentGone);
#else
  (void)parent;
#endif
  // Default actions, so that a crash ends the child with its signal even if the parent installed handlers
  // (a sanitizer's, say) that would turn it into an exit code.
  for (int s : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGTRAP, SIGSYS, SIGPIPE}) ::signal(s, SIG_DFL);
  // The parent decides the child's lifetime (see runner.h).
  for (int s : {SIGINT, SIGTERM, SIGHUP, SIGQUIT}) ::signal(s, SIG_IGN);
  sigset_t none;
  sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
  int null = ::open("/dev/null", O_RDONLY);
  if (null >= 0) {
    ::dup2(null, 0);
    ::close(null);
  }
  ::dup2(output_fd, 1);
  ::dup2(output_fd, 2);
  ::close(output_fd);
  // Unbuffered, so that what a kernel prints before it crashes reaches the error message.
  std::setvbuf(stdout, nullptr, _IONBF, 0);
}

void fill_unwritten_marker(HostTensor& t) {
  if (is_float(t.dtype())) {
    for (int64_t i = 0; i < t.num_elements(); ++i) t.set(i, std::numeric_limits<double>::quiet_NaN());
  } else {
    std::memset(t.data(), 0xA5, t.num_bytes());
  }
}

// The verification run's verdict over all outputs: the largest differences, and the first wrong output's message.
struct Verdict {
  double max_abs = 0, max_rel = 0;
  std::string wrong;  // empty when every output is within the tolerance

  void add(const Comparison& c, const std::string& output_name) {
    max_abs = std::max(max_abs, c.max_abs_error);
    max_rel = std::max(max_rel, c.max_rel_error);
    if (!c.ok && wrong.empty()) wrong = "output '" + output_name + "': " + c.message;
  }
  // What the result and wrong-answer records open with: the two maxima.
  std::string maxima() const {
    std::string out;
    append_double(out, max_abs);
    append_double(out, max_rel);
    return out;
  }
  // Sends the wrong-answer record when an output is wrong; says whether it did.
  bool send_if_wrong(const Send& send) const {
    if (wrong.empty()) return false;
    send(kWrongAnswerRecord, maxima() + wrong);
    return true;
  }
};

// A candidate loaded in the child: its library, its inputs (packed as its function lists) and its outputs, which
// start as the unwritten marker.
struct LoadedCandidate {
  KernelModule module;
  std::vector<HostTensor> packed;
  std::vector<const HostTensor*> in;
  std::vector<HostTensor> outputs;
  std::vector<HostTensor*> out;

  explicit LoadedCandidate(const ChildTask& task) : module(*task.library_path, *task.function) {
    if (task.options->threads > 0) module.set_num_threads(task.options->threads);
    for (const HostTensor& t : *task.inputs) in.push_back(&t);
    in = pack_inputs(*task.function, in, packed);
    for (const HostTensor& e : *task.expected) {
      outputs.emplace_back(e.dtype(), e.shape());
      fill_unwritten_marker(outputs.back());
    }
    for (HostTensor& t : outputs) out.push_back(&t);
  }
  void run() { module.run(in, out); }
};

// The verification run's outputs against the expected ones.
Verdict verify(const ChildTask& task, const LoadedCandidate& candidate) {
  const RunnerOptions& options = *task.options;
  Verdict verdict;
  for (size_t n = 0; n < candidate.outputs.size(); ++n) {
    const HostTensor& output = candidate.outputs[n];
    const HostTensor& expected = (*task.expected)[n];
    Comparison c = compare(output, expected, options.rtol, (*task.absolute_tolerances)[n]);
    verdict.add(c, (*task.output_names)[n]);
    // compare() leaves NaN differences out of its maxima; a first bad element that is NaN (or NaN where a
    // number was expected) counts as an infinite error.
    if (!c.ok && c.first_bad_index >= 0 && std::isnan(output.get(c.first_bad_index) - expected.get(c.first_bad_index)))
      verdict.max_abs = verdict.max_rel = std::numeric_limits<double>::infinity();
  }
  return verdict;
}

// Writes flush_cache_bytes before a run (RunnerOptions::flush_cache_bytes); nothing when 0.
class CacheFlush {
 public:
  explicit CacheFlush(int64_t bytes) : bytes_(size_t(bytes)) {}
  void operator()() {
    ++round_;
    for (size_t i = 0; i < bytes_.size(); i += 64) bytes_[i] = round_;
    // The writes must happen: the compiler may not drop them as dead stores.
    __asm__ __volatile__("" : : "r"(bytes_.data()) : "memory");
  }

 private:
  std::vector<unsigned char> bytes_;
  unsigned char round_ = 0;
};

// Runs in the child (run_child): loads the library, verifies the first run and times the runs after it, sending
// each step and the final record.
void measure_in_child(const ChildTask& task, const Send& send) {
  const RunnerOptions& options = *task.options;
  send(kStepRecord, "the library load");
  LoadedCandidate candidate(task);
  send(kStepRecord, "the verification run");
  candidate.run();
  const Verdict verdict = verify(task, candidate);
  if (verdict.send_if_wrong(send)) return;

  CacheFlush flush_caches(options.flush_cache_bytes);
  send(kStepRecord, "the warm-up runs");
  for (int w = 0; w < options.warmup_runs; ++w) {
    flush_caches();
    candidate.run();
  }
  send(kStepRecord, "the timed runs");
  std::vector<double> seconds;
  // The flushes count towards min_repeat_ms: with them a run of microseconds would otherwise repeat thousands of
  // flushes of tens of megabytes.
  auto started = Clock::now();
  while (int(seconds.size()) < options.max_repeats) {
    flush_caches();
    auto t0 = Clock::now();
    candidate.run();
    auto t1 = Clock::now();
    seconds.push_back(std::chrono::duration<double>(t1 - t0).count());
    double spent_ms = std::chrono::duration<double, std::milli>(t1 - started).count();
    if (int(seconds.size()) >= options.min_repeats && spent_ms >= options.min_repeat_ms) break;
  }
  std::string result = verdict.maxima();
  for (double s : seconds) append_double(result, s);
  send(kResultRecord, result);
}

// Runs in the child as measure_in_child does, for several candidates at once: each is loaded and verified, then the
// timed runs go round them one call at a time, the first of each pass moving on by one, until every candidate has
// min_repeats runs and the passes took min_repeat_ms per candidate, or max_repeats passes are done. A wrong answer
// ends the child with that candidate's wrong-answer record.
void measure_alternating_in_child(const std::vector<ChildTask>& tasks, const Send& send) {
  const RunnerOptions& options = *tasks.front().options;
  const size_t n = tasks.size();
  std::vector<std::unique_ptr<LoadedCandidate>> candidates;
  for (size_t c = 0; c < n; ++c) {
    send(kStepRecord, "the library load of candidate " + std::to_string(c));
    candidates.push_back(std::make_unique<LoadedCandidate>(tasks[c]));
  }
  std::string maxima;
  for (size_t c = 0; c < n; ++c) {
    send(kStepRecord, "the verification run of candidate " + std::to_string(c));
    candidates[c]->run();
    Verdict verdict = verify(tasks[c], *candidates[c]);
    if (!verdict.wrong.empty()) verdict.wrong = "candidate " + std::to_string(c) + ": " + verdict.wrong;
    if (verdict.send_if_wrong(send)) return;
    maxima += verdict.maxima();
  }
  CacheFlush flush_caches(options.flush_cache_bytes);
  send(kStepRecord, "the warm-up runs");
  for (int w = 0; w < options.warmup_runs; ++w)
    for (const std::unique_ptr<LoadedCandidate>& candidate : candidates) {
      flush_caches();
      candidate->run();
    }
  send(kStepRecord, "the timed runs");
  std::vector<std::vector<double>> seconds(n);
  int passes = 0;
  auto started = Clock::now();
  while (passes < options.max_repeats) {
    for (size_t step = 0; step < n; ++step) {
      const size_t c = (size_t(passes) + step) % n;
      flush_caches();
      auto t0 = Clock::now();
      candidates[c]->run();
      seconds[c].push_back(std::chrono::duration<double>(Clock::now() - t0).count());
    }
    ++passes;
    double spent_ms = std::chrono::duration<double, std::milli>(Clock::now() - started).count();
    if (passes >= options.min_repeats && spent_ms >= options.min_repeat_ms * double(n)) break;
  }
  std::string result;
  append_double(result, double(n));
  append_double(result, double(passes));
  result += maxima;
  for (const std::vector<double>& runs : seconds)
    for (double s : runs) append_double(result, s);
  send(kAlternatingRecord, result);
}

// What the GPU child needs; all of it is in the parent's memory before fork.
struct GpuChildTask {
  const RunnerOptions* options;
  const Program* program;
  const LoopFunction* function;
  const std::vector<std::string>* input_names;
  const std::vector<HostTensor>* inputs;
  const std::vector<std::string>* output_names;
  const std::vector<HostTensor>* expected;
};

// Runs in the child (run_child), as measure_in_child does, on the GPU: cuda_run compiles the function's kernels with
// NVRTC for the device, checks the first run against the expected outputs and times the runs after it. The CUDA driver
// is opened here, never in the parent: a CUDA context does not survive fork, so every measurement gets its own.
void measure_on_gpu_in_child(const GpuChildTask& task, const Send& send) {
  const RunnerOptions& options = *task.options;
  TensorMap inputs, expected;
  for (size_t n = 0; n < task.inputs->size(); ++n) inputs.emplace((*task.input_names)[n], (*task.inputs)[n]);
  for (size_t n = 0; n < task.expected->size(); ++n) expected.emplace((*task.output_names)[n], (*task.expected)[n]);
  CudaRunOptions run_options;
  run_options.warmup_runs = options.warmup_runs;
  run_options.min_repeat_ms = options.min_repeat_ms;
  run_options.min_repeats = options.min_repeats;
  run_options.max_repeats = options.max_repeats;
  run_options.rtol = options.rtol;
  run_options.atol = options.atol;
  run_options.rounding_noise = options.rounding_noise;
  run_options.kernel_cache_dir = options.kernel_cache_dir;
  send(kStepRecord, "the NVRTC compile, the verification run and the timed runs on the GPU");
  CudaRunResult result;
  try {
    result = cuda_run(*task.program, *task.function, inputs, expected, run_options);
  } catch (const std::exception& e) {
#ifdef INGOT_HAVE_CUDA
    if (dynamic_cast<const NvrtcError*>(&e)) {
      send(kCompileErrorRecord, e.what());
      return;
    }
#endif
    throw;
  }
  std::string compile_seconds;
  append_double(compile_seconds, result.compile_seconds);
  send(kCompileTimeRecord, compile_seconds);
  Verdict verdict;
  for (size_t n = 0; n < result.checks.size(); ++n) verdict.add(result.checks[n], (*task.output_names)[n]);
  // compare() leaves NaN differences out of its maxima: a wrong answer with no finite difference is a NaN.
  if (!verdict.wrong.empty() && verdict.max_abs == 0)
    verdict.max_abs = verdict.max_rel = std::numeric_limits<double>::infinity();
  if (verdict.send_if_wrong(send)) return;
  std::string errors = verdict.maxima();
  for (double s : result.seconds) append_double(errors, s);
  send(kResultRecord, errors);
}

// What a forked child left behind: its report, the tail of its output and its wait status.
struct ChildOutcome {
  std::string report;
  OutputTail output;
  int status = 0;
  bool timed_out = false;
};

// Forks a child that runs body(send) with prepare_child_process's settings (an exception it throws is sent as the
// failure record) and then leaves with _exit; collects its report and output until it ends, or kills it once
// timeout_seconds have passed. `who` starts the messages of
// what it throws (a pipe, fork or poll that failed; std::logic_error from ensure_no_other_threads).
ChildOutcome run_child(double timeout_seconds, const std::function<void(const Send&)>& body, const std::string& who) {
  ensure_no_other_threads();
  Pipe report, output;
  const pid_t parent = ::getpid();
  // Anything still buffered would otherwise be written twice if the child flushed its copy.
  std::fflush(nullptr);
  auto started = Clock::now();
  pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error(who + ": fork failed: " + std::strerror(errno));
  if (pid == 0) {
    report.read_end->reset();
    output.read_end->reset();
    prepare_child_process(parent, output.write_end->get());
    const int report_fd = report.write_end->get();
    const Send send = [report_fd](char kind, const std::string& payload) {
      if (!write_all(report_fd, record(kind, payload))) ::_exit(kExitReportFailed);
    };
    try {
      body(send);
    } catch (const std::exception& e) {
      send(kFailureRecord, e.what());
    } catch (...) {
      send(kFailureRecord, "an exception that is not a std::exception");
    }
    ::_exit(0);
  }
  report.write_end->reset();
  output.write_end->reset();

  auto deadline = started + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(timeout_seconds));
  ChildOutcome outcome;
  std::string& report_bytes = outcome.report;
  OutputTail& output_tail = outcome.output;
  bool& timed_out = outcome.timed_out;
  FileDescriptor* sources[2] = {report.read_end.get(), output.read_end.get()};
  char buffer[4096];
  while (sources[0]->get() >= 0 || sources[1]->get() >= 0) {
    auto remaining = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (remaining <= 0) {
      timed_out = true;
      break;
    }
    pollfd polled[2];
    int count = 0;
    for (FileDescriptor* f : sources)
      if (f->get() >= 0) polled[count++] = pollfd{f->get(), POLLIN, 0};
    int ready = ::poll(polled, nfds_t(count), int(std::min<long long>(remaining, 1000)));
    if (ready < 0 && errno == EINTR) continue;
    if (ready < 0) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, nullptr, 0);
      throw std::runtime_error(who + ": poll failed: " + std::strerror(errno));
    }
    for (int k = 0; k < count; ++k) {
      if (!(polled[k].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      FileDescriptor* f = polled[k].fd == sources[0]->get() ? sources[0] : sources[1];
      ssize_t n = ::read(f->get(), buffer, sizeof buffer);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        f->reset();
      } else if (f == sources[0]) {
        report_bytes.append(buffer, size_t(n));
      } else {
        output_tail.append(buffer, size_t(n));
      }
    }
  }
  int& status = outcome.status;
  for (;;) {
    if (!timed_out) {
      pid_t r = ::waitpid(pid, &status, WNOHANG);
      if (r == pid) break;
      if (r < 0 && errno != EINTR) throw std::runtime_error(who + ": waitpid failed: " + std::strerror(errno));
      if (Clock::now() < deadline) {
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
        continue;
      }
      timed_out = true;
    }
    ::kill(pid, SIGKILL);
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    break;
  }

  return outcome;
}

// The measurement a child's outcome gives (m holds what the caller knew before: the compile time).
Measurement measurement_of(const ChildOutcome& child, double timeout_seconds, Measurement m) {
  const std::string& report_bytes = child.report;
  const OutputTail& output_tail = child.output;
  const int status = child.status;
  ChildReport parsed = parse_report(report_bytes);
  std::string during = parsed.step.empty() ? "" : " during " + parsed.step;
  auto fail = [&](ErrorClass error_class, const std::string& message) {
    m.error_class = error_class;
    m.error_message = message + output_tail.quoted();
    return m;
  };
  if (child.timed_out)
    return fail(ErrorClass::kRunTimeout, "the measurement did not finish within " + seconds_text(timeout_seconds) +
                                             " (still in" +
                                             (parsed.step.empty() ? std::string(" its start") : " " + parsed.step) +
                                             "); the child process was killed");
  if (WIFSIGNALED(status)) {
    int sig = WTERMSIG(status);
    return fail(ErrorClass::kRuntimeError,
                "the candidate was killed by " + signal_name(sig) + " (" + ::strsignal(sig) + ")" + during);
  }
  int exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  m.compile_seconds += parsed.compile_seconds;
  if (parsed.final_kind == kFailureRecord)
    return fail(ErrorClass::kRuntimeError, "the measuring child failed" + during + ": " + parsed.text);
  if (parsed.final_kind == kCompileErrorRecord) return fail(ErrorClass::kCompileError, parsed.text);
  if (exit_code != 0)
    return fail(ErrorClass::kRuntimeError, "the measuring child exited with code " + std::to_string(exit_code) +
                                               during + " without reporting a result");
  if (!parsed.malformed.empty())
    return fail(ErrorClass::kRuntimeError, "the measuring child sent a malformed report (" + parsed.malformed + ", " +
                                               std::to_string(report_bytes.size()) + " bytes)" + during);
  m.max_abs_error = parsed.max_abs_error;
  m.max_rel_error = parsed.max_rel_error;
  if (parsed.final_kind == kWrongAnswerRecord) {
    m.error_class = ErrorClass::kWrongAnswer;
    m.error_message = parsed.text;
    return m;
  }
  m.run_seconds = std::move(parsed.seconds);
  m.statistics = run_statistics(m.run_seconds);
  return m;
}

}  // namespace

Runner::Runner(const Program& program, const TensorMap& inputs, const TensorMap& expected, RunnerOptions options)
    : options_(options), program_(std::make_shared<const Program>(program)) {
  auto check = [](const char* what, const Tensor& t, const TensorMap& map) -> const HostTensor& {
    auto it = map.find(t->name);
    if (it == map.end())
      throw std::invalid_argument(std::string("Runner: no ") + what + " tensor for '" + t->name + "'");
    if (it->second.dtype() != t->dtype || it->second.shape() != t->shape)
      throw std::invalid_argument(std::string("Runner: the ") + what + " tensor for '" + t->name +
                                  "' has another dtype or shape than the program's tensor");
    return it->second;
  };
  for (const Tensor& t : program.placeholders()) {
    input_names_.push_back(t->name);
    inputs_.push_back(check("input", t, inputs));
  }
  for (const Tensor& t : program.outputs()) {
    output_names_.push_back(t->name);
    expected_.push_back(check("expected", t, expected));
  }
  check_options();
  set_absolute_tolerances();
}

Runner Runner::with_options(RunnerOptions options) const {
  Runner other = *this;
  other.options_ = options;
  other.check_options();
  other.set_absolute_tolerances();
  return other;
}

void Runner::set_absolute_tolerances() {
  absolute_tolerances_.clear();
  for (size_t n = 0; n < expected_.size(); ++n)
    absolute_tolerances_.push_back(
        absolute_tolerance(options_.atol, expected_[n], output_names_[n], options_.rounding_noise));
}

void Runner::check_options() const {
  auto require = [](bool ok, const std::string& message) {
    if (!ok) throw std::invalid_argument("Runner: " + message);
  };
  require(options_.threads >= 0, "threads must be 0 (the OpenMP default) or more");
  require(options_.warmup_runs >= 0, "warmup_runs must be 0 or more");
  require(options_.min_repeats >= 1, "min_repeats must be at least 1");
  require(options_.max_repeats >= options_.min_repeats, "max_repeats must be at least min_repeats");
  require(options_.min_repeat_ms >= 0, "min_repeat_ms must be 0 or more");
  require(options_.flush_cache_bytes >= 0, "flush_cache_bytes must be 0 or more");
  require(options_.rtol >= 0 && options_.atol >= 0, "rtol and atol must be 0 or more");
  require(options_.run_timeout_seconds > 0, "run_timeout_seconds must be positive");
}

void Runner::check_buffers(const BuildResult& candidate, const char* who) const {
  auto names_match = [](const std::vector<Buffer>& buffers, const std::vector<std::string>& names) {
    if (buffers.size() != names.size()) return false;
    for (size_t n = 0; n < names.size(); ++n)
      if (buffers[n]->name != names[n]) return false;
    return true;
  };
  if (!names_match(candidate.function.inputs, input_names_) || !names_match(candidate.function.outputs, output_names_))
    throw std::invalid_argument(std::string(who) + ": function '" + candidate.function.name +
                                "' takes other buffers than this runner's program");
}

Measurement Runner::measure(const BuildResult& candidate) const {
  Measurement m;
  m.compile_seconds = candidate.compile_seconds;
  if (!candidate.ok()) {
    m.error_class = candidate.error_class;
    m.error_message = candidate.error_message;
    return m;
  }
  check_buffers(candidate, "Runner::measure");

  ChildOutcome child;
  if (options_.gpu) {
    GpuChildTask task{&options_, program_.get(), &candidate.function, &input_names_,
                      &inputs_,  &output_names_, &expected_};
    child = run_child(
        options_.run_timeout_seconds, [&](const Send& send) { measure_on_gpu_in_child(task, send); },
        "Runner::measure");
  } else {
    ChildTask task{&options_,      &candidate.function, &candidate.library.path, &inputs_,
                   &output_names_, &expected_,          &absolute_tolerances_};
    child = run_child(
        options_.run_timeout_seconds, [&](const Send& send) { measure_in_child(task, send); }, "Runner::measure");
  }
  return measurement_of(child, options_.run_timeout_seconds, std::move(m));
}

std::vector<Measurement> Runner::measure_alternating(const std::vector<BuildResult>& candidates) const {
  std::vector<Measurement> out(candidates.size());
  std::vector<size_t> built;
  for (size_t c = 0; c < candidates.size(); ++c) {
    if (!candidates[c].ok()) continue;
    check_buffers(candidates[c], "Runner::measure_alternating");
    built.push_back(c);
  }
  auto each_alone = [&] {
    for (size_t c = 0; c < candidates.size(); ++c) out[c] = measure(candidates[c]);
    return out;
  };
  if (options_.gpu || built.size() < 2) return each_alone();
  std::vector<ChildTask> tasks;
  for (size_t c : built)
    tasks.push_back({&options_, &candidates[c].function, &candidates[c].library.path, &inputs_, &output_names_,
                     &expected_, &absolute_tolerances_});
  const double timeout = options_.run_timeout_seconds * double(built.size());
  ChildOutcome child = run_child(
      timeout, [&](const Send& send) { measure_alternating_in_child(tasks, send); }, "Runner::measure_alternating");
  // A crash, a hang or a wrong answer in the shared child: each candidate is measured alone, so that the fault is
  // recorded against the candidate that has it and the others still get their times.
  const Measurement shared = measurement_of(child, timeout, Measurement{});
  const std::vector<double>& numbers = shared.run_seconds;
  const size_t n = built.size();
  if (!shared.ok() || numbers.size() < 2 || numbers[0] != double(n)) return each_alone();
  const size_t passes = size_t(numbers[1]);
  if (numbers.size() != 2 + 2 * n + n * passes) return each_alone();
  for (size_t c = 0; c < candidates.size(); ++c)
    if (!candidates[c].ok()) out[c] = measure(candidates[c]);  // the build's error, nothing run
  for (size_t i = 0; i < n; ++i) {
    Measurement& m = out[built[i]];
    m.compile_seconds = candidates[built[i]].compile_seconds;
    m.max_abs_error = numbers[2 + 2 * i];
    m.max_rel_error = numbers[3 + 2 * i];
    auto runs = numbers.begin() + std::ptrdiff_t(2 + 2 * n + i * passes);
    m.run_seconds.assign(runs, runs + std::ptrdiff_t(passes));
    m.statistics = run_statistics(m.run_seconds);
  }
  return out;
}

GpuProbe probe_gpu(double timeout_seconds) {
  ChildOutcome child = run_child(
      timeout_seconds,
      [](const Send& send) {
        std::string payload;
#ifndef INGOT_HAVE_CUDA
        // A GPU without NVRTC: cuda_run could not compile a kernel, so no candidate could be measured.
        payload = "0ingot was built without the CUDA toolkit, so it cannot compile kernels";
#else
        try {
          std::shared_ptr<CudaDriver> driver = CudaDriver::open();
          payload = driver->available() ? "1" + driver->device_name() + "\n" + driver->arch() : "0" + driver->reason();
        } catch (const std::exception& e) {
          payload = std::string("0") + e.what();
        }
#endif
        send(kDeviceRecord, payload);
      },
      "probe_gpu");
  GpuProbe probe;
  ChildReport parsed = parse_report(child.report);
  if (child.timed_out) {
    probe.reason = "opening the CUDA driver took longer than " + seconds_text(timeout_seconds);
  } else if (parsed.final_kind != kDeviceRecord || parsed.text.empty()) {
    probe.reason = "the process that opened the CUDA driver ended without saying what it found" +
                   (WIFSIGNALED(child.status) ? " (killed by " + signal_name(WTERMSIG(child.status)) + ")" : "") +
                   child.output.quoted();
  } else if (parsed.text[0] == '1') {
    const size_t newline = parsed.text.find('\n');
    probe.available = true;
    probe.device = parsed.text.substr(1, newline - 1);
    probe.arch = newline == std::string::npos ? "" : parsed.text.substr(newline + 1);
  } else {
    probe.reason = parsed.text.substr(1);
  }
  return probe;
}

}  // namespace ingot
