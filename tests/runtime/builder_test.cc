// The builder: lowering errors, compiler errors and compiler timeouts become results with their error class,
// results keep the input order with several workers, and good candidates come back as loadable libraries.
#include "runtime/builder.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>

#include "analysis/strategies.h"
#include "compile/kernel_module.h"
#include "lower/lower.h"
#include "space/strategy_schedule.h"
#include "workloads/examples.h"

namespace ingot {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

// A directory of its own for each test, removed afterwards, so that compiles really run.
class ScratchDirectory {
 public:
  ScratchDirectory() {
    static std::atomic<int> counter{0};
    path_ = fs::temp_directory_path() /
            ("ingot-builder-test-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
    fs::create_directories(path_);
  }
  ~ScratchDirectory() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

BuilderOptions options_in(const ScratchDirectory& dir, int workers) {
  BuilderOptions o;
  o.compile.cache_dir = (dir.path() / "cache").string();
  o.workers = workers;
  return o;
}

// A shell script standing in for the compiler: answers --version, then runs `body` for a compile.
std::string fake_compiler(const ScratchDirectory& dir, const std::string& name, const std::string& body) {
  fs::path script = dir.path() / name;
  std::ofstream(script) << "#!/bin/sh\nif [ \"$1\" = --version ]; then echo " << name << " 1.0; exit 0; fi\n"
                        << body << "\n";
  fs::permissions(script, fs::perms::owner_all);
  return script.string();
}

TEST(Builder, AnInvalidScheduleGivesTheLoweringMessage) {
  ScratchDirectory dir;
  Program p = find_example("matmul").make_small();
  Schedule bad = Schedule().split("C", "no_such_axis", 4);
  std::string lowering_message;
  try {
    lower(p, bad);
  } catch (const ScheduleError& e) {
    lowering_message = e.what();
  }
  ASSERT_FALSE(lowering_message.empty()) << "the schedule was expected to be invalid";

  std::vector<BuildResult> r = Builder(options_in(dir, 1)).build({BuildInput(p, bad)});
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].error_class, ErrorClass::kInvalidSchedule);
  EXPECT_EQ(r[0].error_message, lowering_message);
  EXPECT_TRUE(r[0].library.path.empty());
  EXPECT_FALSE(fs::exists(dir.path() / "cache")) << "nothing should have been compiled";
}

// For the GPU the builder lowers and prints CUDA, and compiles nothing: the GPU runner compiles for its device.
TEST(Builder, GpuCandidatesAreLoweredAndPrintedButNotCompiled) {
  ScratchDirectory dir;
  Program p = find_example("matmul").make_small();
  BuilderOptions o = options_in(dir, 1);
  o.gpu = true;
  FixedScheduleOptions gpu;
  gpu.gpu = true;
  Schedule bound = make_strategy_program(p, "global", resolve_target("sm_90"), gpu).schedule;
  std::vector<BuildResult> r =
      Builder(o).build({BuildInput(p, bound), BuildInput(p, Schedule().split("C", "no_such_axis", 4))});
  ASSERT_EQ(r.size(), 2u);
  EXPECT_TRUE(r[0].ok()) << r[0].error_message;
  EXPECT_EQ(r[0].function.name, lower(p, bound).name);
  EXPECT_TRUE(r[0].library.path.empty());
  EXPECT_EQ(r[0].compile_seconds, 0);
  EXPECT_EQ(r[1].error_class, ErrorClass::kInvalidSchedule);
  EXPECT_FALSE(fs::exists(dir.path() / "cache")) << "nothing should have been compiled";
}

TEST(Builder, ACompilerFailureIsACompileError) {
  ScratchDirectory dir;
  LoopFunction f = lower(find_example("matmul").make_small(), Schedule());
  std::vector<BuildResult> r = Builder(options_in(dir, 1)).build({BuildInput(f, "this is not C++ at all;\n")});
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].error_class, ErrorClass::kCompileError);
  EXPECT_THAT(r[0].error_message, HasSubstr("failed with exit code"));
  EXPECT_THAT(r[0].error_message, HasSubstr("error"));  // the compiler's own diagnostics are quoted
  EXPECT_FALSE(r[0].ok());
}

TEST(Builder, KeepsTheInputOrderWithTwoWorkers) {
  ScratchDirectory dir;
  Program mm = find_example("matmul").make_small();
  Program sm = find_example("softmax").make_small();
  LoopFunction raw = lower(mm, Schedule());
  std::vector<BuildInput> inputs = {
      BuildInput(mm, Schedule().split("C", "i", 4).parallel("C", "i.o")),
      BuildInput(sm, Schedule().split("Y", "nope", 2)),
      BuildInput(raw, "#error deliberately broken\n"),
      BuildInput(sm, Schedule()),
      BuildInput(mm, Schedule()),
  };
  std::vector<std::pair<size_t, size_t>> progress;  // one call per compile, failed ones included, one at a time
  std::vector<BuildResult> r = Builder(options_in(dir, 2)).build(inputs, [&](size_t compiled, size_t total) {
    progress.emplace_back(compiled, total);
  });
  EXPECT_EQ(progress, (std::vector<std::pair<size_t, size_t>>{{1, 4}, {2, 4}, {3, 4}, {4, 4}}));
  ASSERT_EQ(r.size(), inputs.size());
  EXPECT_EQ(r[0].error_class, ErrorClass::kNone) << r[0].error_message;
  EXPECT_EQ(r[1].error_class, ErrorClass::kInvalidSchedule);
  EXPECT_EQ(r[2].error_class, ErrorClass::kCompileError);
  EXPECT_THAT(r[2].error_message, HasSubstr("deliberately broken"));
  EXPECT_EQ(r[3].error_class, ErrorClass::kNone) << r[3].error_message;
  EXPECT_EQ(r[4].error_class, ErrorClass::kNone) << r[4].error_message;

  EXPECT_EQ(r[0].function.name, "matmul");
  EXPECT_EQ(r[3].function.name, "softmax");
  EXPECT_EQ(r[4].function.name, "matmul");
  EXPECT_NE(r[0].library.path, r[4].library.path);  // two schedules, two kernels
  for (size_t n : {0u, 3u, 4u}) {
    EXPECT_GT(r[n].compile_seconds, 0) << n;
    EXPECT_FALSE(r[n].library.cache_hit) << n;
    // Each library belongs to its own function: loading checks the argument counts and workspace size.
    KernelModule module(r[n].library.path, r[n].function);
    EXPECT_EQ(module.num_inputs(), int(r[n].function.inputs.size())) << n;
  }
}

TEST(Builder, AKilledCompilerIsACompileTimeout) {
  ScratchDirectory dir;
  BuilderOptions o = options_in(dir, 1);
  o.compile.compiler = fake_compiler(dir, "sleepy-compiler", "exec sleep 30");
  o.compile.timeout_seconds = 0.5;
  LoopFunction f = lower(find_example("matmul").make_small(), Schedule());
  auto started = std::chrono::steady_clock::now();
  std::vector<BuildResult> r = Builder(o).build({BuildInput(f, "int x;\n")});
  double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].error_class, ErrorClass::kCompileTimeout) << r[0].error_message;
  EXPECT_THAT(r[0].error_message, HasSubstr("timed out"));
  EXPECT_GE(r[0].compile_seconds, 0.5);
  EXPECT_LT(elapsed, 10);
}

TEST(Builder, AFastFailingCompilerIsNotATimeout) {
  ScratchDirectory dir;
  BuilderOptions o = options_in(dir, 1);
  o.compile.compiler = fake_compiler(dir, "broken-compiler", "echo cannot compile anything; exit 1");
  o.compile.timeout_seconds = 5;
  LoopFunction f = lower(find_example("matmul").make_small(), Schedule());
  std::vector<BuildResult> r = Builder(o).build({BuildInput(f, "int x;\n")});
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].error_class, ErrorClass::kCompileError);
  EXPECT_THAT(r[0].error_message, HasSubstr("cannot compile anything"));
  EXPECT_LT(r[0].compile_seconds, 5);
}

TEST(Builder, RejectsANegativeWorkerCount) {
  BuilderOptions o;
  o.workers = -1;
  EXPECT_THROW(Builder{o}, std::invalid_argument);
  o.workers = 0;
  EXPECT_GE(Builder(o).options().workers, 1);
}

}  // namespace
}  // namespace ingot
