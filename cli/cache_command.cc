// `ingot cache info|clean`: what the kernel cache holds (compiled libraries, their sources, temporary files a killed
// compile left) and emptying it. Clean only while no tuner runs: a compile in flight would lose its files.
#include <cstdio>
#include <iostream>

#include "cli/commands.h"
#include "compile/cpp_compiler.h"
#include "compile/kernel_cache.h"

namespace ingot::cli {

namespace {

void print_usage(const char* verb, const KernelCacheUsage& u) {
  std::printf("%s %s: %lld libraries, %lld sources, %lld temporary files, %.1f MB\n", verb, u.dir.c_str(),
              (long long)u.libraries, (long long)u.sources, (long long)u.temporary, double(u.bytes) / 1e6);
}

}  // namespace

void add_cache_command(CLI::App& app) {
  CLI::App* cache = app.add_subcommand("cache", "The kernel cache: what it holds, and emptying it");
  cache->require_subcommand(1);
  static std::string dir;
  for (const char* verb : {"info", "clean"}) {
    CLI::App* sub = cache->add_subcommand(verb, std::string(verb) == "info"
                                                    ? "Files and bytes in the kernel cache"
                                                    : "Remove the cache's files (run it while no tuner runs)");
    sub->add_option("--dir", dir, "Cache directory (default: $INGOT_CACHE_DIR, else the build's kernel_cache)");
    sub->callback([verb] {
      std::string where = dir.empty() ? default_kernel_cache_dir() : dir;
      if (std::string(verb) == "info")
        print_usage("kernel cache", kernel_cache_usage(where));
      else
        print_usage("removed from", clean_kernel_cache(where));
    });
  }
}

}  // namespace ingot::cli
