#include "compile/cpp_compiler.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <thread>

#include "codegen/cpp_printer.h"
#include "compile/child_process.h"
#include "compile/kernel_module.h"
#include "ir/hash.h"
#include "tests/support/cpu_test_kernels.h"

namespace ingot {
namespace {

namespace fs = std::filesystem;

// A fresh cache directory per test, so that the first compile of a source is always a miss.
class CppCompilerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (fs::temp_directory_path() / "ingot_cpp_compiler_test_XXXXXX").string();
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    cache_dir_ = pattern;
    options_.cache_dir = cache_dir_;
  }
  void TearDown() override { fs::remove_all(cache_dir_); }

  std::vector<std::string> cache_files() const {
    std::vector<std::string> names;
    for (const auto& entry : fs::directory_iterator(cache_dir_)) names.push_back(entry.path().filename().string());
    std::sort(names.begin(), names.end());
    return names;
  }

  std::string cache_dir_;
  CompileOptions options_;
};

const char* kValidSource = "extern \"C\" int forty_two(void) { return 42; }\n";

TEST_F(CppCompilerTest, SecondCompileOfTheSameSourceIsACacheHit) {
  CompiledLibrary first = compile_cpp(kValidSource, options_);
  EXPECT_FALSE(first.cache_hit);
  EXPECT_GT(first.compile_seconds, 0);
  EXPECT_EQ(first.path, (fs::path(cache_dir_) / (hash_hex(first.source_hash) + ".so")).string());
  EXPECT_TRUE(fs::exists(first.path));

  CompiledLibrary second = compile_cpp(kValidSource, options_);
  EXPECT_TRUE(second.cache_hit);
  EXPECT_EQ(second.compile_seconds, 0);
  EXPECT_EQ(second.path, first.path);
  EXPECT_EQ(second.source_hash, first.source_hash);
  EXPECT_EQ(second.log, first.log);
  // Only the library, its source and its log remain; no temporary files.
  std::string hash = hash_hex(first.source_hash);
  EXPECT_EQ(cache_files(), (std::vector<std::string>{hash + ".cc", hash + ".log", hash + ".so"}));
}

TEST_F(CppCompilerTest, FlagsArePartOfTheCacheKey) {
  CompiledLibrary o3 = compile_cpp(kValidSource, options_);
  options_.flags = "-O1 -fPIC -shared";
  CompiledLibrary o1 = compile_cpp(kValidSource, options_);
  EXPECT_FALSE(o1.cache_hit);
  EXPECT_NE(o1.source_hash, o3.source_hash);
  EXPECT_NE(o1.path, o3.path);
}

TEST_F(CppCompilerTest, CacheDirectoryComesFromTheEnvironmentByDefault) {
  std::string nested = cache_dir_ + "/from_env/kernels";
  const char* old = std::getenv("INGOT_CACHE_DIR");
  std::string saved = old ? old : "";
  ::setenv("INGOT_CACHE_DIR", nested.c_str(), 1);
  EXPECT_EQ(default_kernel_cache_dir(), nested);
  CompiledLibrary library = compile_cpp(kValidSource);  // no cache_dir: uses the environment, creating it
  if (old)
    ::setenv("INGOT_CACHE_DIR", saved.c_str(), 1);
  else
    ::unsetenv("INGOT_CACHE_DIR");
  EXPECT_EQ(fs::path(library.path).parent_path(), fs::path(nested));
  EXPECT_TRUE(fs::exists(library.path));
}

TEST_F(CppCompilerTest, CompileErrorCarriesTheLogAndTheSourceHash) {
  try {
    compile_cpp("int broken( {\n", options_);
    FAIL() << "a syntax error must throw";
  } catch (const CompileError& e) {
    std::string message = e.what();
    EXPECT_NE(message.find(hash_hex(e.source_hash())), std::string::npos) << message;
    EXPECT_NE(message.find("exit code"), std::string::npos) << message;
    EXPECT_NE(message.find("error"), std::string::npos) << message;
    EXPECT_NE(e.log().find("error"), std::string::npos) << e.log();
    // The failed library is not cached (the source stays for inspection).
    EXPECT_EQ(cache_files(), (std::vector<std::string>{hash_hex(e.source_hash()) + ".cc"}));
  }
}

TEST_F(CppCompilerTest, KillsACompilerThatRunsPastTheTimeout) {
  options_.timeout_seconds = 0.05;
  auto start = std::chrono::steady_clock::now();
  try {
    compile_cpp(print_cpp(cpu_test::matmul_function()), options_);
    FAIL() << "a 50 ms limit must stop an -O3 compile";
  } catch (const CompileError& e) {
    EXPECT_NE(std::string(e.what()).find("timed out"), std::string::npos) << e.what();
  }
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 5.0);
  for (const std::string& name : cache_files()) EXPECT_EQ(name.find(".so"), std::string::npos) << name;
}

TEST_F(CppCompilerTest, MissingCompilerIsAClearError) {
  options_.compiler = "/nonexistent/ingot-c++";
  try {
    compile_cpp(kValidSource, options_);
    FAIL() << "a missing compiler must throw";
  } catch (const CompileError& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/ingot-c++"), std::string::npos) << e.what();
  }
}

// The toolchain check builds a small OpenMP kernel: it passes with the default compiler and flags, and names the
// compiler or the flag when they cannot build anything.
TEST_F(CppCompilerTest, ToolchainCheckRefusesAMissingCompilerAndABadFlag) {
  EXPECT_NO_THROW(check_toolchain(options_));
  CompileOptions missing = options_;
  missing.compiler = "/nonexistent/ingot-c++";
  try {
    check_toolchain(missing);
    FAIL() << "a missing compiler must be refused";
  } catch (const ToolchainError& e) {
    EXPECT_NE(std::string(e.what()).find("compiler '/nonexistent/ingot-c++'"), std::string::npos) << e.what();
  }
  CompileOptions bad_flag = options_;
  bad_flag.flags += " -fno-such-flag-ingot";
  try {
    check_toolchain(bad_flag);
    FAIL() << "a flag the compiler refuses must be refused";
  } catch (const ToolchainError& e) {
    EXPECT_NE(std::string(e.what()).find("-fno-such-flag-ingot"), std::string::npos) << e.what();
  }
}

// Two compiles of one source racing into one cache both succeed and agree; neither sees a partial file.
TEST_F(CppCompilerTest, ConcurrentCompilesOfOneSourceAgree) {
  std::string source = print_cpp(cpu_test::tiny_two_stage_function());
  CompiledLibrary results[2];
  std::thread other([&] { results[1] = compile_cpp(source, options_); });
  results[0] = compile_cpp(source, options_);
  other.join();
  EXPECT_EQ(results[0].path, results[1].path);
  KernelModule module(results[0].path, cpu_test::tiny_two_stage_function());
  EXPECT_EQ(module.num_inputs(), 1);
  std::string hash = hash_hex(results[0].source_hash);
  EXPECT_EQ(cache_files(), (std::vector<std::string>{hash + ".cc", hash + ".log", hash + ".so"}));
}

TEST(ChildProcess, CapturesOutputAndExitCode) {
  ChildProcessResult r = run_child_process({"sh", "-c", "echo out; echo err >&2; exit 3"}, 10);
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_FALSE(r.timed_out);
  EXPECT_NE(r.output.find("out\n"), std::string::npos);
  EXPECT_NE(r.output.find("err\n"), std::string::npos);
}

TEST(ChildProcess, KillsTheWholeProcessGroupOnTimeout) {
  auto start = std::chrono::steady_clock::now();
  // The background sleep holds the output pipe too; it must die with the shell for the call to return.
  ChildProcessResult r = run_child_process({"sh", "-c", "sleep 30 & sleep 30"}, 0.2);
  EXPECT_TRUE(r.timed_out);
  EXPECT_EQ(r.exit_code, -1);
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 5.0);
}

// A tuner killed with SIGKILL takes its compilers with it: the program and what it started in the background end
// within seconds of the parent, not when they would have finished.
TEST(ChildProcess, TheProgramAndItsChildrenDieWithAKilledParent) {
  const std::string dir = ::testing::TempDir(), ready = dir + "ingot_orphan_pids";
  std::remove(ready.c_str());
  std::fflush(nullptr);
  const pid_t parent = ::fork();
  ASSERT_GE(parent, 0);
  if (parent == 0) {
    run_child_process(
        {"sh", "-c",
         "sleep 60 & echo $$ $! > " + ready + ".tmp && mv " + ready + ".tmp " + ready + " && exec sleep 60"},
        120);
    ::_exit(0);
  }
  pid_t program = 0, background = 0;
  for (int tries = 0; tries < 1000 && !program; ++tries) {
    std::ifstream in(ready);
    if (!(in >> program >> background)) program = 0;
    if (!program) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ASSERT_GT(program, 0) << "the program did not start";
  ::kill(parent, SIGKILL);
  ::waitpid(parent, nullptr, 0);
  auto running = [](pid_t pid) {  // a zombie has ended; only its parent's reaping is left
    std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
    std::string line;
    if (!std::getline(stat, line)) return false;
    return line.size() > line.rfind(')') + 2 && line[line.rfind(')') + 2] != 'Z';
  };
  for (int tries = 0; tries < 500 && (running(program) || running(background)); ++tries)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  EXPECT_FALSE(running(program));
  EXPECT_FALSE(running(background));
  ::kill(program, SIGKILL);  // in case it failed: not left for 60 s
  ::kill(background, SIGKILL);
  std::remove(ready.c_str());
}

TEST(ChildProcess, UnknownProgramThrows) {
  EXPECT_THROW(run_child_process({"/nonexistent/program"}, 10), std::runtime_error);
}

}  // namespace
}  // namespace ingot
