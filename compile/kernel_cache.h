// The kernel cache on disk (compile/cpp_compiler.h keeps every compiled library there by content hash, and
// compile/nvrtc_compiler.h every cubin): what it holds, writing to it, and emptying it. Clean it only while no tuner
// or compile runs: a compile in flight loses its files.
#pragma once

#include <cstdint>
#include <string>

namespace ingot {

// Files of the cache: libraries (<hash>.so, and CUDA kernels as <hash>.cubin), their sources (<hash>.cc) and temporary
// files that a killed compile left (<hash>...tmp...). Other files in the directory are not the cache's and are not
// counted.
struct KernelCacheUsage {
  std::string dir;
  int64_t libraries = 0;
  int64_t sources = 0;
  int64_t temporary = 0;
  int64_t bytes = 0;  // of all three kinds
};

// A name part that no other writer uses at the same time: <pid>.<n>. Temporary files carry it after ".tmp.".
std::string unique_cache_suffix();
// Writes content to path under a private temporary name (<path>.tmp.<unique_cache_suffix>) and renames it, so that a
// reader sees either no file or the whole file. Throws std::runtime_error when it cannot.
void write_cache_file(const std::string& path, const std::string& content);

// What the cache at dir holds; a missing directory holds nothing.
KernelCacheUsage kernel_cache_usage(const std::string& dir);

// Removes the cache's files (the three kinds above) and returns what was removed; other files stay.
KernelCacheUsage clean_kernel_cache(const std::string& dir);
// Removes the temporary files whose writer is gone: a temporary file names the process that writes it
// (<hash>...tmp.<pid>.<n>...), and one whose process no longer runs on this machine was left by a killed compile.
// Files of running processes (and of a reused pid) stay. Returns what was removed. Safe beside running tuners.
KernelCacheUsage sweep_orphaned_temporary_files(const std::string& dir);

}  // namespace ingot
