// The kernel cache's usage counts and cleaning touch the cache's own files (named by their hash) and nothing else.
#include "compile/kernel_cache.h"

#include <gtest/gtest.h>

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
