#include "compile/kernel_cache.h"

#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <system_error>

namespace ingot {

namespace {

namespace fs = std::filesystem;

enum class CacheFile { kNone, kLibrary, kSource, kTemporary };

// The cache names its files by a 16-digit hex hash (ir/hash.h): <hash>.so, <hash>.cubin, <hash>.cc, <hash>.*.tmp.*
// and <hash>.tmp.*.so.
CacheFile kind_of(const fs::path& path) {
  std::string name = path.filename().string();
  if (name.size() < 17) return CacheFile::kNone;
  for (size_t n = 0; n < 16; ++n)
    if (!std::isxdigit(static_cast<unsigned char>(name[n])) || std::isupper(static_cast<unsigned char>(name[n])))
      return CacheFile::kNone;
  std::string rest = name.substr(16);
  if (rest.find(".tmp.") != std::string::npos) return CacheFile::kTemporary;
  if (rest == ".so" || rest == ".cubin") return CacheFile::kLibrary;
  if (rest == ".cc") return CacheFile::kSource;
  return CacheFile::kNone;
}

// The writer of a temporary file is gone: its name's pid (the digits after ".tmp.") runs no process here.
bool writer_is_gone(const fs::path& path) {
  const std::string name = path.filename().string();
  const size_t at = name.find(".tmp.");
  if (at == std::string::npos) return false;
  const char* first = name.data() + at + 5;
  const char* last = name.data() + name.size();
  pid_t pid = 0;
  auto [end, error] = std::from_chars(first, last, pid);
  if (error != std::errc() || end == first || pid <= 0) return false;
  return ::kill(pid, 0) == -1 && errno == ESRCH;
}

KernelCacheUsage walk(const std::string& dir, bool remove, bool only_orphans = false) {
  KernelCacheUsage usage;
  usage.dir = dir;
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return usage;
  for (const fs::directory_entry& entry : fs::directory_iterator(dir, ec)) {
    if (!entry.is_regular_file(ec)) continue;
    CacheFile kind = kind_of(entry.path());
    if (kind == CacheFile::kNone) continue;
    if (only_orphans && (kind != CacheFile::kTemporary || !writer_is_gone(entry.path()))) continue;
    int64_t size = int64_t(entry.file_size(ec));
    if (remove && !fs::remove(entry.path(), ec)) continue;  // gone already, or not ours to remove: not counted
    usage.bytes += size;
    if (kind == CacheFile::kLibrary) ++usage.libraries;
    if (kind == CacheFile::kSource) ++usage.sources;
    if (kind == CacheFile::kTemporary) ++usage.temporary;
  }
  return usage;
}

}  // namespace

std::string unique_cache_suffix() {
  static std::atomic<uint64_t> counter{0};
  return std::to_string(::getpid()) + "." + std::to_string(counter++);
}

void write_cache_file(const std::string& path, const std::string& content) {
  const std::string temp = path + ".tmp." + unique_cache_suffix();
  {
    std::ofstream out(temp, std::ios::binary);
    out << content;
    out.close();
    if (!out) throw std::runtime_error("cannot write '" + temp + "'");
  }
  std::error_code ec;
  fs::rename(temp, path, ec);
  if (ec) {
    std::string why = ec.message();
    fs::remove(temp, ec);
    throw std::runtime_error("cannot rename a file to '" + path + "': " + why);
  }
}

KernelCacheUsage kernel_cache_usage(const std::string& dir) { return walk(dir, false); }

KernelCacheUsage clean_kernel_cache(const std::string& dir) { return walk(dir, true); }

KernelCacheUsage sweep_orphaned_temporary_files(const std::string& dir) { return walk(dir, true, true); }

}  // namespace ingot
