// The kernel cache's usage counts and cleaning touch the cache's own files (named by their hash) and nothing else.
#include "compile/kernel_cache.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "compile/cpp_compiler.h"

namespace ingot {
namespace {

namespace fs = std::filesystem;

TEST(KernelCache, CountsAndCleansOnlyItsOwnFiles) {
  fs::path dir = fs::temp_directory_path() / "ingot_kernel_cache_test";
  fs::remove_all(dir);
  fs::create_directories(dir);
  auto write = [&](const std::string& name, int bytes) { std::ofstream(dir / name) << std::string(bytes, 'x'); };
  write("0123456789abcdef.so", 100);
  write("0123456789abcdef.cc", 10);
  write("fedcba9876543210.tmp.123_4.so", 7);
  write("fedcba9876543210.so.tmp.9", 3);
  write("notes.txt", 5);            // not the cache's
  write("0123456789ABCDEF.so", 5);  // upper-case hex: not a name the cache writes
  KernelCacheUsage usage = kernel_cache_usage(dir.string());
  EXPECT_EQ(usage.libraries, 1);
  EXPECT_EQ(usage.sources, 1);
  EXPECT_EQ(usage.temporary, 2);
  EXPECT_EQ(usage.bytes, 120);
  KernelCacheUsage removed = clean_kernel_cache(dir.string());
  EXPECT_EQ(removed.bytes, 120);
  EXPECT_EQ(kernel_cache_usage(dir.string()).bytes, 0);
  EXPECT_TRUE(fs::exists(dir / "notes.txt"));
  EXPECT_TRUE(fs::exists(dir / "0123456789ABCDEF.so"));
  fs::remove_all(dir);
  EXPECT_EQ(kernel_cache_usage(dir.string()).libraries, 0);  // a missing directory holds nothing
}

// A library compile_cpp made is counted, and after cleaning it is compiled again.
// The pid of a process that ran and was reaped: no process has it now (unless the system reuses it at once).
pid_t finished_process() {
  pid_t pid = ::fork();
  if (pid == 0) ::_exit(0);
  ::waitpid(pid, nullptr, 0);
  return pid;
}

TEST(KernelCache, SweepsTheTemporaryFilesOfProcessesThatAreGone) {
  fs::path dir = fs::temp_directory_path() / ("ingot_kernel_cache_sweep_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  auto write = [&](const std::string& name) { std::ofstream(dir / name) << "x"; };
  const std::string gone = std::to_string(finished_process()), alive = std::to_string(::getpid());
  write("0123456789abcdef.tmp." + gone + ".0.so");  // a compile killed with its tuner
  write("0123456789abcdef.cc.tmp." + gone + ".1");
  write("1111111111111111.tmp." + alive + ".0.so");  // this process's compile in flight
  write("0123456789abcdef.so");
  KernelCacheUsage swept = sweep_orphaned_temporary_files(dir.string());
  EXPECT_EQ(swept.temporary, 2);
  EXPECT_FALSE(fs::exists(dir / ("0123456789abcdef.tmp." + gone + ".0.so")));
  EXPECT_TRUE(fs::exists(dir / ("1111111111111111.tmp." + alive + ".0.so")));
  EXPECT_TRUE(fs::exists(dir / "0123456789abcdef.so"));

  // The first compile of a process into the directory sweeps it.
  write("2222222222222222.tmp." + gone + ".3.so");
  CompileOptions options;
  options.cache_dir = dir.string();
  compile_cpp("extern \"C\" int ingot_sweep_probe() { return 1; }\n", options);
  EXPECT_FALSE(fs::exists(dir / ("2222222222222222.tmp." + gone + ".3.so")));
  fs::remove_all(dir);
}

TEST(KernelCache, ACleanedLibraryIsCompiledAgain) {
  fs::path dir = fs::temp_directory_path() / "ingot_kernel_cache_compile_test";
  fs::remove_all(dir);
  CompileOptions options;
  options.cache_dir = dir.string();
  const std::string source = "extern \"C\" int ingot_cache_test(void) { return 7; }\n";
  EXPECT_FALSE(compile_cpp(source, options).cache_hit);
  EXPECT_TRUE(compile_cpp(source, options).cache_hit);
  KernelCacheUsage usage = kernel_cache_usage(dir.string());
  EXPECT_EQ(usage.libraries, 1);
  EXPECT_EQ(usage.sources, 1);
  EXPECT_EQ(usage.temporary, 0);
  clean_kernel_cache(dir.string());
  EXPECT_FALSE(compile_cpp(source, options).cache_hit);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace ingot
