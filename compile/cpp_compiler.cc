#include "compile/cpp_compiler.h"

#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <set>
#include <sstream>

#include "compile/child_process.h"
#include "compile/kernel_cache.h"
#include "ir/hash.h"

#ifndef INGOT_DEFAULT_CACHE_DIR
#define INGOT_DEFAULT_CACHE_DIR "kernel_cache"
#endif

namespace ingot {

std::string default_cpp_flags() { return cpp_flags(default_isa_flags()); }

std::string default_isa_flags() {
#if defined(__x86_64__)
  return "-march=native -mprefer-vector-width=512";
#else
  return "-march=native";
#endif
}

std::string cpp_flags(const std::string& isa_flags) {
  std::string flags = "-O3 " + isa_flags + " -fno-math-errno -fopenmp -fPIC -shared";
  std::string math = vector_math_flags();
  return math.empty() ? flags : flags + " " + math;
}

std::string vector_math_flags() {
#if defined(__x86_64__) && defined(__GLIBC__)
  return "-DINGOT_LIBMVEC -lmvec";
#else
  return "";
#endif
}

namespace fs = std::filesystem;

namespace {

constexpr int kLogLinesInErrors = 30;

std::vector<std::string> split_words(const std::string& text) {
  std::vector<std::string> words;
  std::istringstream in(text);
  for (std::string w; in >> w;) words.push_back(w);
  return words;
}

std::string join(const std::vector<std::string>& words) {
  std::string s;
  for (const std::string& w : words) s += (s.empty() ? "" : " ") + w;
  return s;
}

std::string first_lines(const std::string& text, int count) {
  size_t pos = 0;
  for (int i = 0; i < count && pos != std::string::npos; ++i) {
    pos = text.find('\n', pos);
    if (pos != std::string::npos) ++pos;
  }
  if (pos == std::string::npos || pos >= text.size()) return text;
  return text.substr(0, pos) + "[... " + std::to_string(text.size() - pos) + " more bytes of log]\n";
}

std::vector<std::string> compiler_command(const CompileOptions& options) {
  std::string compiler = options.compiler;
  if (compiler.empty()) {
    const char* env = std::getenv("CXX");
    compiler = env && *env ? env : "c++";
  }
  std::vector<std::string> words = split_words(compiler);
  if (words.empty()) throw CompileError("compile_cpp: the compiler command is blank", "", 0);
  return words;
}

// `<compiler> --version`, asked once per command per process: the cache key must change when the compiler
// is upgraded, since the same flags can then produce different code.
std::string compiler_version(const std::vector<std::string>& compiler) {
  static std::mutex mutex;
  static std::map<std::vector<std::string>, std::string> versions;
  std::lock_guard<std::mutex> lock(mutex);
  if (auto it = versions.find(compiler); it != versions.end()) return it->second;
  std::vector<std::string> argv = compiler;
  argv.push_back("--version");
  ChildProcessResult r;
  try {
    r = run_child_process(argv, 60);
  } catch (const std::exception& e) {
    throw CompileError(std::string("cannot run the C++ compiler: ") + e.what(), "", 0);
  }
  if (r.exit_code != 0)
    throw CompileError("'" + join(argv) + "' failed (exit code " + std::to_string(r.exit_code) + "):\n" +
                           first_lines(r.output, kLogLinesInErrors),
                       r.output, 0);
  return versions[compiler] = r.output;
}

// A killed run's temporary files go the first time this process compiles into a cache directory.
void sweep_once(const std::string& dir) {
  static std::mutex mutex;
  static std::set<std::string> swept;
  std::lock_guard lock(mutex);
  if (swept.insert(dir).second) sweep_orphaned_temporary_files(dir);
}

std::string read_file_or_empty(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace

std::string default_kernel_cache_dir() {
  const char* env = std::getenv("INGOT_CACHE_DIR");
  return env && *env ? env : INGOT_DEFAULT_CACHE_DIR;
}

CompiledLibrary compile_cpp(const std::string& source, const CompileOptions& options) {
  std::vector<std::string> compiler = compiler_command(options);
  std::vector<std::string> flags = split_words(options.flags);
  std::string version = compiler_version(compiler);

  CompiledLibrary result;
  result.source_hash = fnv1a64(source + "\n" + join(flags) + "\n" + join(compiler) + "\n" + version);
  std::string hash = hash_hex(result.source_hash);

  fs::path dir = options.cache_dir.empty() ? default_kernel_cache_dir() : options.cache_dir;
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw std::runtime_error("cannot create the kernel cache directory '" + dir.string() + "': " + ec.message());
  sweep_once(dir.string());
  fs::path library = dir / (hash + ".so");
  fs::path log_path = dir / (hash + ".log");
  result.path = library.string();

  if (fs::exists(library)) {
    result.cache_hit = true;
    result.log = read_file_or_empty(log_path);
    return result;
  }

  fs::path source_path = dir / (hash + ".cc");
  write_cache_file(source_path.string(), source);
  fs::path temp_library = dir / (hash + ".tmp." + unique_cache_suffix() + ".so");
  std::vector<std::string> argv = compiler;
  // Libraries (-l...) after the source, so that the linker keeps them; every other flag before it, as given.
  std::vector<std::string> libraries;
  for (const std::string& flag : flags) (flag.rfind("-l", 0) == 0 ? libraries : argv).push_back(flag);
  argv.insert(argv.end(), {"-o", temp_library.string(), source_path.string()});
  argv.insert(argv.end(), libraries.begin(), libraries.end());

  ChildProcessResult run;
  try {
    run = run_child_process(argv, options.timeout_seconds);
  } catch (const std::exception& e) {
    throw CompileError("cannot compile kernel source " + hash + ": " + e.what(), "", result.source_hash);
  }
  result.log = run.output;
  result.compile_seconds = run.seconds;
  if (run.timed_out || run.exit_code != 0 || !fs::exists(temp_library)) {
    fs::remove(temp_library, ec);
    std::string why = run.timed_out ? "timed out after " + std::to_string(options.timeout_seconds) + " s and was killed"
                      : run.signal  ? "was killed by signal " + std::to_string(run.signal)
                      : run.exit_code != 0 ? "failed with exit code " + std::to_string(run.exit_code)
                                           : "produced no library";
    throw CompileError("compiling kernel source " + hash + " (" + source_path.string() + ") " + why +
                           "\ncommand: " + join(argv) + "\n" + first_lines(run.output, kLogLinesInErrors),
                       run.output, result.source_hash, run.timed_out);
  }
  write_cache_file(log_path.string(), run.output);
  fs::rename(temp_library, library, ec);
  if (ec) {
    std::string why = ec.message();
    fs::remove(temp_library, ec);
    throw std::runtime_error("cannot move the compiled kernel to '" + library.string() + "': " + why);
  }
  return result;
}

void check_toolchain(const CompileOptions& options) {
  // What every generated kernel needs: C linkage, OpenMP and a vectorizable loop (ingot_toolchain_probe names it).
  static const char* const kProbe =
      "#include <cstdint>\n"
      "extern \"C\" void ingot_toolchain_probe(float* y, const float* x, int64_t n) {\n"
      "#pragma omp parallel for\n"
      "  for (int64_t i = 0; i < n; ++i) y[i] = x[i] * 2.0f + 1.0f;\n"
      "}\n";
  try {
    compile_cpp(kProbe, options);
  } catch (const CompileError& e) {
    throw ToolchainError("the C++ toolchain cannot build a test kernel (compiler '" +
                         (options.compiler.empty() ? std::string("$CXX or c++") : options.compiler) + "', flags '" +
                         options.flags +
                         "'), so no candidate could be built; fix target.compiler or target.flags: " + e.what());
  }
}

}  // namespace ingot
