// Compiles a generated C++ source (see cpp_printer.h) into a shared library with the system compiler and
// caches the result on disk by content hash, so an unchanged kernel is compiled once per machine. Safe to
// call from several threads and processes at once: libraries appear in the cache atomically.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

namespace ingot {

// -O3 -march=native -fno-math-errno -fopenmp -fPIC -shared, plus -mprefer-vector-width=512 on x86-64: g++
// otherwise keeps to 256-bit vectors on AVX-512 machines, which halves the FMA peak of a vectorized loop. Plus
// vector_math_flags(). -fno-math-errno: generated code never reads errno, and with it g++ vectorizes sqrtf (a
// layer norm's 1 / sqrt(var + eps) kept its loop scalar: BERT's normalizations ran 10x slower).
std::string default_cpp_flags();
// Its ISA part: -march=native, and -mprefer-vector-width=512 on x86-64 (what `ingot export`'s build command uses
// for programs measured with them).
std::string default_isa_flags();
// The default flags with isa_flags (e.g. "-march=x86-64-v3 -mtune=native") in place of -march=native and
// -mprefer-vector-width=512.
std::string cpp_flags(const std::string& isa_flags);

// On x86-64 glibc, "-DINGOT_LIBMVEC -lmvec": generated code then calls glibc's SIMD expf, logf, tanhf and erff
// (libmvec) in vectorized loops (cpp_printer.h); empty elsewhere, where those loops call the scalar functions.
std::string vector_math_flags();

struct CompileOptions {
  // The compiler command; empty means $CXX, else `c++`. It may hold several words ("ccache g++").
  std::string compiler;
  // Split on whitespace; the command is <compiler> <flags> -o <library> <source> <the -l flags>, so that libraries
  // named in the flags (-lmvec) link.
  std::string flags = default_cpp_flags();
  // Empty means $INGOT_CACHE_DIR, else the build tree's kernel_cache directory; created when missing.
  std::string cache_dir;
  // A compiler still running after this long is killed (with the processes it started).
  double timeout_seconds = 300;
};

struct CompiledLibrary {
  std::string path;            // <cache_dir>/<hash>.so; the source is kept beside it as <hash>.cc
  std::string log;             // the compiler's stdout and stderr (warnings, -fopt-info reports), also on a hit
  bool cache_hit = false;      // the library was already in the cache and nothing was compiled
  double compile_seconds = 0;  // wall time of the compiler, 0 on a cache hit
  uint64_t source_hash = 0;    // fnv1a64 (ir/hash.h) of source, flags, compiler command and compiler version
};

// Thrown when the compiler cannot be started, fails, or times out. what() names the source hash, the
// command and shows the first lines of the log; log() has all of it.
class CompileError : public std::runtime_error {
 public:
  CompileError(const std::string& message, std::string log, uint64_t source_hash, bool timed_out = false)
      : std::runtime_error(message), log_(std::move(log)), source_hash_(source_hash), timed_out_(timed_out) {}
  const std::string& log() const { return log_; }
  uint64_t source_hash() const { return source_hash_; }
  // The compiler ran past CompileOptions::timeout_seconds and was killed.
  bool timed_out() const { return timed_out_; }

 private:
  std::string log_;
  uint64_t source_hash_;
  bool timed_out_;
};

// Errors are reported by throwing CompileError (or std::runtime_error when the cache directory cannot be
// created or written).
CompiledLibrary compile_cpp(const std::string& source, const CompileOptions& options = {});

// A compiler or flags that cannot build anything: the environment's fault, never a candidate's.
class ToolchainError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Builds a small OpenMP kernel with these options (through the cache, so a toolchain that worked once costs a
// lookup). Throws ToolchainError naming the compiler, the flags and the compiler's first lines of output when it
// cannot: a tuning run checks this before it records anything, so that a missing compiler or a bad flag is not
// stored as every candidate's compile_error.
void check_toolchain(const CompileOptions& options);

// The cache directory compile_cpp uses when CompileOptions::cache_dir is empty.
std::string default_kernel_cache_dir();

}  // namespace ingot
