// The runner: a good candidate is verified and timed in a child process with consistent statistics; a
// candidate that crashes, hangs, exits or computes wrong numbers becomes a measurement with its error class
// and message, and the same runner goes on to measure a good candidate correctly afterwards.
#include "runtime/runner.h"

#include <dirent.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <limits>
#include <map>
#include <mutex>
#include <thread>

#include "analysis/strategies.h"
#include "codegen/cpp_printer.h"
#include "interp/interpreter.h"
#include "lower/lower.h"
#include "runtime/builder.h"
#include "runtime/local_run.h"
#include "space/strategy_schedule.h"
#include "workloads/examples.h"

namespace ingot {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

Program small_matmul() { return find_example("matmul").make_small(); }

// A hand-written kernel source with the C ABI of cpp_printer.h for the small matmul (C = A * B), whose
// ingot_run is `run_body`; `reference_matmul(a, b, c)` computes the right answer.
std::string raw_kernel(const std::string& run_body) {
  Program p = small_matmul();
  std::string m = std::to_string(p.outputs()[0]->shape[0]), n = std::to_string(p.outputs()[0]->shape[1]);
  std::string k = std::to_string(p.placeholders()[0]->shape[1]);
  return "#include <cstdint>\n#include <cstdio>\n#include <cstdlib>\n#include <unistd.h>\n"
         "extern \"C\" int ingot_abi_version(void) { return " +
         std::to_string(kCppKernelAbiVersion) +
         "; }\n"
         "extern \"C\" int ingot_num_inputs(void) { return 2; }\n"
         "extern \"C\" int ingot_num_outputs(void) { return 1; }\n"
         "extern \"C\" int64_t ingot_workspace_bytes(void) { return 0; }\n"
         "static void reference_matmul(const float* a, const float* b, float* c) {\n"
         "  for (int i = 0; i < " +
         m +
         "; ++i)\n"
         "    for (int j = 0; j < " +
         n +
         "; ++j) {\n"
         "      float s = 0;\n"
         "      for (int k = 0; k < " +
         k + "; ++k) s += a[i * " + k + " + k] * b[k * " + n +
         " + j];\n"
         "      c[i * " +
         n +
         " + j] = s;\n"
         "    }\n"
         "}\n"
         "float* volatile nowhere = nullptr;  // volatile: the compiler cannot see that it is null\n"
         "extern \"C\" void ingot_run(void* const* args, void* workspace) {\n"
         "  const float* a = static_cast<const float*>(args[0]);\n"
         "  const float* b = static_cast<const float*>(args[1]);\n"
         "  float* c = static_cast<float*>(args[2]);\n"
         "  (void)a; (void)b; (void)c; (void)workspace;\n" +
         run_body + "\n}\n";
}

enum Candidate {
  kGood,
  kSegfault,
  kEndlessLoop,
  kWrongNumbers,
  kAbortWithMessage,
  kExitEarly,
  kWrongAbi,
  kWritesNothing,
  kPackedInput,
  kSlowGood
};

class RunnerTest : public ::testing::Test {
 protected:
  // Built once for all tests: compiling is the slow part.
  static void SetUpTestSuite() {
    Program p = small_matmul();
    LoopFunction raw = lower(p, Schedule());
    std::vector<BuildInput> inputs = {
        BuildInput(p, Schedule()
                          .split("C", "i", 4)
                          .reorder("C", {"i.o", "i.i", "k", "j"})
                          .parallel("C", "i.o")
                          .vectorize("C", "j")),
        BuildInput(raw, raw_kernel("*nowhere = 1.0f;")),
        BuildInput(raw, raw_kernel("volatile int spin = 1;\n  while (spin) {\n  }")),
        BuildInput(raw, raw_kernel("reference_matmul(a, b, c);\n  c[7] += 1.0f;")),
        BuildInput(raw, raw_kernel("std::printf(\"kernel gave up\\n\");\n  std::abort();")),
        BuildInput(raw, raw_kernel("_exit(3);")),
        BuildInput(raw, "extern \"C\" int ingot_abi_version(void) { return 999; }\n"),
        BuildInput(raw, raw_kernel("")),
        BuildInput(p, Schedule().pack("B", 1, p.placeholders()[1]->shape[1])),
        BuildInput(raw, raw_kernel("reference_matmul(a, b, c);\n  usleep(2000);")),
    };
    BuilderOptions o;
    o.workers = 2;
    built_ = new std::vector<BuildResult>(Builder(o).build(inputs));
    inputs_ = new TensorMap(random_inputs(p, 7));
    expected_ = new TensorMap(interpret(p, *inputs_));
  }
  static void TearDownTestSuite() {
    delete built_;
    delete inputs_;
    delete expected_;
  }

  static RunnerOptions quick() {
    RunnerOptions o;
    o.threads = 2;
    o.warmup_runs = 1;
    o.min_repeat_ms = 5;
    o.min_repeats = 5;
    o.run_timeout_seconds = 20;
    return o;
  }
  static Runner runner(RunnerOptions o = quick()) { return Runner(small_matmul(), *inputs_, *expected_, o); }
  static const BuildResult& candidate(Candidate c) {
    const BuildResult& b = (*built_)[c];
    EXPECT_TRUE(b.ok()) << "candidate " << c << " did not build: " << b.error_message;
    return b;
  }

  static void expect_good_measurement(const Measurement& m) {
    ASSERT_EQ(m.error_class, ErrorClass::kNone) << to_string(m.error_class) << ": " << m.error_message;
    EXPECT_TRUE(m.error_message.empty());
    ASSERT_GE(m.run_seconds.size(), 5u);
    for (double s : m.run_seconds) EXPECT_GT(s, 0);
    RunStatistics stats = run_statistics(m.run_seconds);
    EXPECT_DOUBLE_EQ(m.statistics.min, stats.min);
    EXPECT_DOUBLE_EQ(m.statistics.median, stats.median);
    EXPECT_DOUBLE_EQ(m.statistics.mean, stats.mean);
    EXPECT_DOUBLE_EQ(m.statistics.stddev, stats.stddev);
    EXPECT_LE(m.statistics.min, m.statistics.median);
    EXPECT_LE(m.statistics.min, m.statistics.mean);
    EXPECT_LT(m.max_abs_error, 1e-4);
  }

  static std::vector<BuildResult>* built_;
  static TensorMap* inputs_;
  static TensorMap* expected_;
};

std::vector<BuildResult>* RunnerTest::built_ = nullptr;
TensorMap* RunnerTest::inputs_ = nullptr;
TensorMap* RunnerTest::expected_ = nullptr;

int threads_in_this_process() {
  int n = 0;
  if (DIR* dir = opendir("/proc/self/task")) {
    while (const dirent* e = readdir(dir))
      if (e->d_name[0] != '.') ++n;
    closedir(dir);
  }
  return n;
}

TEST_F(RunnerTest, MeasuresAGoodCandidate) {
  Measurement m = runner().measure(candidate(kGood));
  expect_good_measurement(m);
  EXPECT_EQ(m.compile_seconds, candidate(kGood).compile_seconds);
}

// B passed packed: the child packs the runner's inputs once, before the verification run, as the function lists.
TEST_F(RunnerTest, PacksThePackedInputsBeforeRunning) {
  ASSERT_EQ(candidate(kPackedInput).function.packed_inputs.size(), 1u);
  expect_good_measurement(runner().measure(candidate(kPackedInput)));
}

TEST_F(RunnerTest, RepeatsUntilMinRepeatsAndMinTimeButNotPastMaxRepeats) {
  RunnerOptions o = quick();
  o.min_repeat_ms = 0;
  o.min_repeats = 4;
  EXPECT_EQ(runner(o).measure(candidate(kGood)).run_seconds.size(), 4u);
  o.min_repeat_ms = 1e9;
  o.max_repeats = 7;
  EXPECT_EQ(runner(o).measure(candidate(kGood)).run_seconds.size(), 7u);
  o.min_repeat_ms = 30;
  o.min_repeats = 1;
  o.max_repeats = 1000000;
  Measurement m = runner(o).measure(candidate(kGood));
  double total = 0;
  for (double s : m.run_seconds) total += s;
  EXPECT_GE(total, 0.030 * 0.5);  // the clock also runs between runs, so the runs themselves take a little less
}

// Flushing the caches before each run (whole-model tuning's tasks) keeps the measurement correct; the flushes count
// towards min_repeat_ms, so a fast kernel does not repeat thousands of them.
TEST_F(RunnerTest, FlushesTheCachesBeforeEachRun) {
  RunnerOptions o = quick();
  o.flush_cache_bytes = 64 << 20;
  o.min_repeat_ms = 50;
  o.max_repeats = 100000;
  Measurement m = runner(o).measure(candidate(kGood));
  expect_good_measurement(m);
  // Each flush writes 64 MiB (milliseconds), so 50 ms hold far fewer runs than the kernel alone would fit.
  EXPECT_LT(m.run_seconds.size(), 1000u);
  o.flush_cache_bytes = -1;
  EXPECT_THROW(runner(o), std::invalid_argument);
}

// In alternation the candidates share one child and take turns call by call, so each gets as many runs as the
// passes: the fast ones stop when the slow one (2 ms a call) has filled the passes' time, where alone they would
// repeat until their own runs filled min_repeat_ms (up to max_repeats).
TEST_F(RunnerTest, MeasuresCandidatesInAlternationCallByCall) {
  RunnerOptions o = quick();
  o.min_repeat_ms = 20;
  o.max_repeats = 1000;
  Runner r = runner(o);
  const std::vector<Measurement> m =
      r.measure_alternating({candidate(kGood), candidate(kSlowGood), candidate(kPackedInput)});
  ASSERT_EQ(m.size(), 3u);
  for (const Measurement& each : m) expect_good_measurement(each);
  EXPECT_EQ(m[0].run_seconds.size(), m[1].run_seconds.size());
  EXPECT_EQ(m[0].run_seconds.size(), m[2].run_seconds.size());
  EXPECT_LT(m[0].run_seconds.size(), 100u);  // 20 ms for each of three candidates at about 2 ms a pass
  EXPECT_GT(m[1].statistics.median, 0.002);
  EXPECT_EQ(m[2].compile_seconds, candidate(kPackedInput).compile_seconds);
}

// A candidate that crashes or computes wrong numbers in the shared child: every candidate is measured again alone,
// so the fault is recorded against the one that has it; a failed build keeps its error and nothing of it runs.
TEST_F(RunnerTest, AFaultInAlternationIsRecordedAgainstItsCandidateOnly) {
  Runner r = runner();
  BuildResult not_built;
  not_built.error_class = ErrorClass::kCompileError;
  not_built.error_message = "no compiler today";
  const std::vector<Measurement> m = r.measure_alternating(
      {candidate(kGood), candidate(kSegfault), candidate(kWrongNumbers), not_built, candidate(kPackedInput)});
  ASSERT_EQ(m.size(), 5u);
  expect_good_measurement(m[0]);
  EXPECT_EQ(m[1].error_class, ErrorClass::kRuntimeError);
  EXPECT_THAT(m[1].error_message, HasSubstr("SIGSEGV"));
  EXPECT_EQ(m[2].error_class, ErrorClass::kWrongAnswer);
  EXPECT_THAT(m[2].error_message, HasSubstr("element 7:"));
  EXPECT_EQ(m[3].error_class, ErrorClass::kCompileError);
  EXPECT_EQ(m[3].error_message, "no compiler today");
  expect_good_measurement(m[4]);
  // Only the wrong one in the shared child: it is still found, and the others are measured.
  const std::vector<Measurement> wrong = r.measure_alternating({candidate(kWrongNumbers), candidate(kGood)});
  EXPECT_EQ(wrong[0].error_class, ErrorClass::kWrongAnswer);
  expect_good_measurement(wrong[1]);
}

TEST_F(RunnerTest, ASegfaultIsARuntimeErrorNamingTheSignalAndTheRunGoesOn) {
  Runner r = runner();
  Measurement m = r.measure(candidate(kSegfault));
  EXPECT_EQ(m.error_class, ErrorClass::kRuntimeError);
  EXPECT_THAT(m.error_message, HasSubstr("SIGSEGV"));
  EXPECT_THAT(m.error_message, HasSubstr("verification run"));
  EXPECT_TRUE(m.run_seconds.empty());
  expect_good_measurement(r.measure(candidate(kGood)));
}

TEST_F(RunnerTest, AnEndlessLoopIsKilledAtTheTimeoutAndTheRunGoesOn) {
  RunnerOptions o = quick();
  o.run_timeout_seconds = 1;
  Runner r = runner(o);
  auto started = std::chrono::steady_clock::now();
  Measurement m = r.measure(candidate(kEndlessLoop));
  double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  EXPECT_EQ(m.error_class, ErrorClass::kRunTimeout);
  EXPECT_THAT(m.error_message, HasSubstr("within 1 s"));
  EXPECT_THAT(m.error_message, HasSubstr("verification run"));
  EXPECT_TRUE(m.run_seconds.empty());
  EXPECT_GE(elapsed, 1.0);
  EXPECT_LT(elapsed, 3.0);
  expect_good_measurement(r.measure(candidate(kGood)));
}

TEST_F(RunnerTest, WrongNumbersAreAWrongAnswerNamingTheFirstBadElementAndTheRunGoesOn) {
  Runner r = runner();
  Measurement m = r.measure(candidate(kWrongNumbers));
  EXPECT_EQ(m.error_class, ErrorClass::kWrongAnswer);
  EXPECT_THAT(m.error_message, HasSubstr("output 'C'"));
  EXPECT_THAT(m.error_message, HasSubstr("element 7:"));
  EXPECT_TRUE(m.run_seconds.empty());
  EXPECT_EQ(m.statistics.min, 0);
  EXPECT_NEAR(m.max_abs_error, 1.0, 1e-3);
  expect_good_measurement(r.measure(candidate(kGood)));
}

// The candidate off by 1 at one element is right within kRoundingNoiseFactor (4) times a rounding noise of 0.3, and
// wrong within 4 times 0.2; with_options takes the new noise.
TEST_F(RunnerTest, AnOutputsRoundingNoiseWidensItsTolerance) {
  RunnerOptions o = quick();
  o.rounding_noise = {{"C", 0.3}};
  const Runner r = runner(o);
  const Measurement m = r.measure(candidate(kWrongNumbers));
  EXPECT_EQ(m.error_class, ErrorClass::kNone) << m.error_message;
  EXPECT_NEAR(m.max_abs_error, 1.0, 1e-3);
  EXPECT_GE(m.run_seconds.size(), 5u);
  o.rounding_noise = {{"C", 0.2}};
  EXPECT_EQ(r.with_options(o).measure(candidate(kWrongNumbers)).error_class, ErrorClass::kWrongAnswer);
  EXPECT_EQ(runner(o).measure_alternating({candidate(kWrongNumbers), candidate(kGood)})[0].error_class,
            ErrorClass::kWrongAnswer);
}

TEST_F(RunnerTest, AnAbortQuotesWhatTheKernelWrote) {
  Runner r = runner();
  Measurement m = r.measure(candidate(kAbortWithMessage));
  EXPECT_EQ(m.error_class, ErrorClass::kRuntimeError);
  EXPECT_THAT(m.error_message, HasSubstr("SIGABRT"));
  EXPECT_THAT(m.error_message, HasSubstr("kernel gave up"));
  expect_good_measurement(r.measure(candidate(kGood)));
}

TEST_F(RunnerTest, AnOutputElementTheKernelNeverWritesIsWrongEvenWhereZeroIsExpected) {
  // All-zero inputs make every expected element 0, which an output buffer that started zeroed would match.
  Program p = small_matmul();
  TensorMap zeros;
  for (const Tensor& t : p.placeholders()) zeros.emplace(t->name, HostTensor(t->dtype, t->shape));
  Runner r(p, zeros, interpret(p, zeros), quick());
  Measurement m = r.measure(candidate(kWritesNothing));
  EXPECT_EQ(m.error_class, ErrorClass::kWrongAnswer);
  EXPECT_THAT(m.error_message, HasSubstr("element 0: got nan, expected 0"));
  EXPECT_EQ(m.max_abs_error, std::numeric_limits<double>::infinity());
  expect_good_measurement(r.measure(candidate(kGood)));
}

TEST_F(RunnerTest, AnEarlyExitIsARuntimeErrorWithItsCode) {
  Runner r = runner();
  Measurement m = r.measure(candidate(kExitEarly));
  EXPECT_EQ(m.error_class, ErrorClass::kRuntimeError);
  EXPECT_THAT(m.error_message, HasSubstr("exited with code 3"));
  EXPECT_THAT(m.error_message, HasSubstr("without reporting a result"));
  expect_good_measurement(r.measure(candidate(kGood)));
}

TEST_F(RunnerTest, ALibraryThatDoesNotLoadIsARuntimeErrorWithTheLoadersMessage) {
  const BuildResult& wrong_abi = candidate(kWrongAbi);
  ASSERT_TRUE(wrong_abi.ok()) << wrong_abi.error_message;
  Measurement m = runner().measure(wrong_abi);
  EXPECT_EQ(m.error_class, ErrorClass::kRuntimeError);
  EXPECT_THAT(m.error_message, HasSubstr("library load"));
  EXPECT_THAT(m.error_message, HasSubstr("ingot_num_inputs"));  // the first symbol it lacks
}

TEST_F(RunnerTest, AFailedBuildIsPassedThroughWithoutRunning) {
  BuildResult failed;
  failed.error_class = ErrorClass::kCompileTimeout;
  failed.error_message = "compiler killed";
  failed.compile_seconds = 2.5;
  Measurement m = runner().measure(failed);
  EXPECT_EQ(m.error_class, ErrorClass::kCompileTimeout);
  EXPECT_EQ(m.error_message, "compiler killed");
  EXPECT_EQ(m.compile_seconds, 2.5);
  EXPECT_TRUE(m.run_seconds.empty());
}

TEST_F(RunnerTest, AnIdleOpenMpPoolInThisProcessIsReleasedBeforeForking) {
  // Running a parallel kernel in this process leaves OpenMP's worker threads waiting; a forked child would
  // hang at its first parallel region if the runner did not end them first.
  Program p = small_matmul();
  LocalRunOptions in_process;
  in_process.threads = 2;
  in_process.min_repeat_ms = 0;
  LocalRunResult local = local_run(p, Schedule().parallel("C", "i"), *inputs_, *expected_, in_process);
  ASSERT_TRUE(local.correct);
  ASSERT_GT(threads_in_this_process(), 1);
  expect_good_measurement(runner().measure(candidate(kGood)));
  EXPECT_EQ(threads_in_this_process(), 1);
}

TEST_F(RunnerTest, RefusesToForkWhileAnotherThreadRuns) {
  std::mutex mutex;
  std::condition_variable cv;
  bool release = false;
  std::thread other([&] {
    std::unique_lock<std::mutex> lock(mutex);
    cv.wait(lock, [&] { return release; });
  });
  try {
    runner().measure(candidate(kGood));
    ADD_FAILURE() << "measure forked beside another thread";
  } catch (const std::logic_error& e) {
    EXPECT_THAT(e.what(), HasSubstr("1 other thread"));
  }
  {
    std::lock_guard<std::mutex> lock(mutex);
    release = true;
  }
  cv.notify_one();
  other.join();
  expect_good_measurement(runner().measure(candidate(kGood)));
}

TEST_F(RunnerTest, RejectsMissingOrMismatchedTensorsAndBadOptions) {
  Program p = small_matmul();
  TensorMap missing = *inputs_;
  missing.erase("B");
  try {
    Runner(p, missing, *expected_);
    ADD_FAILURE() << "a missing input was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_THAT(e.what(), HasSubstr("'B'"));
  }
  TensorMap reshaped = *expected_;
  reshaped["C"] = HostTensor(DType::kFloat32, {2, 2});
  EXPECT_THROW(Runner(p, *inputs_, reshaped), std::invalid_argument);
  RunnerOptions o = quick();
  o.max_repeats = 2;  // below min_repeats
  EXPECT_THROW(Runner(p, *inputs_, *expected_, o), std::invalid_argument);
  // A candidate of another program is refused before anything runs.
  Program other = find_example("softmax").make_small();
  EXPECT_THROW(
      Runner(other, random_inputs(other, 1), interpret(other, random_inputs(other, 1))).measure(candidate(kGood)),
      std::invalid_argument);
}

// GPU candidates are measured by a child that opens the CUDA driver itself (this process never does: a context does
// not survive fork). With no usable GPU the probe says why and a measurement is a runtime error with that reason; with
// one, the small matmul's GPU schedule is compiled by NVRTC in the child, verified and timed, and wrong numbers are a
// wrong answer.
TEST(GpuRunner, MeasuresOnTheGpuInAChildOrSaysWhyNot) {
  const GpuProbe probe = probe_gpu();
  EXPECT_EQ(probe_gpu().available, probe.available);
  Program p = small_matmul();
  TensorMap inputs = random_inputs(p, 1);
  TensorMap expected = interpret(p, inputs);
  RunnerOptions o;
  o.gpu = true;
  o.warmup_runs = 0;
  o.min_repeat_ms = 1;
  FixedScheduleOptions gpu;
  gpu.gpu = true;
  Schedule s = make_strategy_program(p, "global", resolve_target("sm_90"), gpu).schedule;
  BuilderOptions builder;
  builder.gpu = true;
  std::vector<BuildResult> built = Builder(builder).build({BuildInput(p, s)});
  ASSERT_TRUE(built.at(0).ok()) << built[0].error_message;
  Measurement m = Runner(p, inputs, expected, o).measure(built[0]);
  if (!probe.available) {
    EXPECT_FALSE(probe.reason.empty());
    EXPECT_EQ(m.error_class, ErrorClass::kRuntimeError);
    EXPECT_THAT(m.error_message, HasSubstr("no usable GPU"));
    GTEST_SKIP() << "no usable GPU: " << probe.reason;
  }
  EXPECT_THAT(probe.arch, ::testing::StartsWith("sm_"));
  ASSERT_TRUE(m.ok()) << m.error_message;
  EXPECT_GT(m.compile_seconds, 0);
  EXPECT_FALSE(m.run_seconds.empty());
  EXPECT_GT(m.statistics.median, 0);
  TensorMap wrong = expected;
  wrong.at("C").set(3, wrong.at("C").get(3) + 100);
  Measurement w = Runner(p, inputs, wrong, o).measure(built[0]);
  EXPECT_EQ(w.error_class, ErrorClass::kWrongAnswer);
  EXPECT_THAT(w.error_message, HasSubstr("'C'"));
}

}  // namespace
}  // namespace ingot
