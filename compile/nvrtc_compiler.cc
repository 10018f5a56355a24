#include "compile/nvrtc_compiler.h"

#include <nvrtc.h>

#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <optional>
#include <regex>
#include <sstream>

#include "compile/cpp_compiler.h"
#include "compile/kernel_cache.h"
#include "ir/hash.h"

namespace ingot {

namespace {

struct ProgramDeleter {
  void operator()(nvrtcProgram p) const { nvrtcDestroyProgram(&p); }
};
using Program = std::unique_ptr<std::remove_pointer_t<nvrtcProgram>, ProgramDeleter>;

std::string program_log(nvrtcProgram p) {
  size_t size = 0;
  if (nvrtcGetProgramLogSize(p, &size) != NVRTC_SUCCESS || size <= 1) return "";
  std::string log(size, '\0');
  if (nvrtcGetProgramLog(p, log.data()) != NVRTC_SUCCESS) return "";
  log.resize(size - 1);  // drop the terminating NUL
  return log;
}

// Lines first-2 .. first+2 of source around the first "file(LINE): error" of the log, numbered; "" if none.
std::string source_excerpt(const std::string& source, const std::string& log) {
  static const std::regex error_line(R"(\((\d+)\): (catastrophic )?error)");
  std::smatch m;
  if (!std::regex_search(log, m, error_line)) return "";
  const int wanted = std::stoi(m[1].str());
  std::istringstream in(source);
  std::ostringstream out;
  out << "source around line " << wanted << ":\n";
  std::string text;
  for (int number = 1; std::getline(in, text); ++number) {
    if (number < wanted - 2 || number > wanted + 2) continue;
    out << (number == wanted ? ">" : " ")
        << std::string(number < 10     ? 4
                       : number < 100  ? 3
                       : number < 1000 ? 2
                                       : 1,
                       ' ')
        << number << " | " << text << "\n";
  }
  return out.str();
}

[[noreturn]] void fail(const std::string& what, nvrtcResult result, const std::string& log, const std::string& source) {
  std::string message = what + ": " + nvrtcGetErrorString(result);
  if (!log.empty()) message += "\n" + log;
  std::string excerpt = source_excerpt(source, log);
  if (!excerpt.empty()) message += "\n" + excerpt;
  throw NvrtcError(message, log);
}

Program compile(const std::string& source, const std::string& name, const std::string& arch_option, std::string& log) {
  nvrtcProgram raw = nullptr;
  nvrtcResult created = nvrtcCreateProgram(&raw, source.c_str(), name.c_str(), 0, nullptr, nullptr);
  if (created != NVRTC_SUCCESS) fail("nvrtcCreateProgram failed", created, "", source);
  Program program(raw);
  std::vector<std::string> options = {arch_option, "-std=c++17", "--ptxas-options=-v"};
  for (const std::string& dir : cuda_include_dirs()) options.push_back("-I" + dir);
  std::vector<const char*> argv;
  for (const std::string& o : options) argv.push_back(o.c_str());
  nvrtcResult result = nvrtcCompileProgram(program.get(), static_cast<int>(argv.size()), argv.data());
  log = program_log(program.get());
  if (result != NVRTC_SUCCESS)
    fail("NVRTC compile of " + name + " for " + arch_option + " failed", result, log, source);
  return program;
}

std::optional<std::string> get_ptx(nvrtcProgram p) {
  size_t size = 0;
  if (nvrtcGetPTXSize(p, &size) != NVRTC_SUCCESS || size <= 1) return std::nullopt;
  std::string ptx(size, '\0');
  if (nvrtcGetPTX(p, ptx.data()) != NVRTC_SUCCESS) return std::nullopt;
  ptx.resize(size - 1);
  return ptx;
}

// The integer written just before `marker` in line ("... 1024 bytes smem" -> 1024), if any.
std::optional<int64_t> number_before(const std::string& line, const std::string& marker) {
  size_t end = line.find(marker);
  if (end == std::string::npos) return std::nullopt;
  while (end > 0 && line[end - 1] == ' ') --end;
  size_t begin = end;
  while (begin > 0 && std::isdigit(static_cast<unsigned char>(line[begin - 1]))) --begin;
  if (begin == end) return std::nullopt;
  return std::stoll(line.substr(begin, end - begin));
}

// The name between the first pair of single quotes after marker, or "" ("... for 'k'" forms vary).
std::string quoted_after(const std::string& line, const std::string& marker) {
  size_t at = line.find(marker);
  if (at == std::string::npos) return "";
  size_t open = line.find('\'', at);
  size_t close = open == std::string::npos ? open : line.find('\'', open + 1);
  if (close == std::string::npos) return "";
  return line.substr(open + 1, close - open - 1);
}

}  // namespace

std::vector<std::string> cuda_include_dirs() {
  namespace fs = std::filesystem;
  std::vector<std::string> roots;
  // The headers of the toolkit we were built with match the linked NVRTC; CUDA_HOME is the fallback for a
  // relocated toolkit.
#ifdef INGOT_CUDA_INCLUDE
  std::string built = INGOT_CUDA_INCLUDE;
  for (size_t start = 0; start <= built.size();) {
    size_t end = built.find(';', start);
    if (end == std::string::npos) end = built.size();
    std::string dir = built.substr(start, end - start);
    std::error_code ec;
    if (!dir.empty() && fs::is_directory(dir, ec)) roots.push_back(dir);
    start = end + 1;
  }
#endif
  if (roots.empty()) {
    const char* home = std::getenv("CUDA_HOME");
    std::string dir = std::string(home && *home ? home : "/usr/local/cuda") + "/include";
    std::error_code ec;
    if (fs::is_directory(dir, ec)) roots.push_back(dir);
  }
  std::vector<std::string> dirs;
  auto add = [&](const std::string& d) {
    for (const std::string& have : dirs)
      if (have == d) return;
    dirs.push_back(d);
  };
  for (const std::string& root : roots) {
    add(root);
    std::error_code ec;
    if (fs::is_directory(root + "/cccl", ec)) add(root + "/cccl");
  }
  return dirs;
}

std::string nvrtc_version() {
  int major = 0, minor = 0;
  nvrtcVersion(&major, &minor);
  return std::to_string(major) + "." + std::to_string(minor);
}

PtxasStats parse_ptxas_log(const std::string& log, const std::string& kernel_name) {
  PtxasStats stats;
  std::string chosen = kernel_name;
  std::string current_entry;  // the entry function whose "Used N registers" line comes next
  std::string properties_of;  // the function whose "stack frame" line comes next
  std::istringstream in(log);
  std::string line;
  while (std::getline(in, line)) {
    if (line.find("Compiling entry function") != std::string::npos) {
      current_entry = quoted_after(line, "Compiling entry function");
      if (chosen.empty()) chosen = current_entry;
      continue;
    }
    if (line.find("Function properties for") != std::string::npos) {
      size_t at = line.find("Function properties for") + std::string("Function properties for").size();
      properties_of = line.substr(at);
      properties_of.erase(0, properties_of.find_first_not_of(" \t'"));
      properties_of.erase(properties_of.find_last_not_of(" \t'\r") + 1);
      continue;
    }
    if (line.find("bytes stack frame") != std::string::npos) {
      if (!properties_of.empty() && properties_of == chosen) {
        stats.stack_frame = number_before(line, "bytes stack frame").value_or(0);
        stats.spill_stores = number_before(line, "bytes spill stores").value_or(0);
        stats.spill_loads = number_before(line, "bytes spill loads").value_or(0);
      }
      properties_of.clear();
      continue;
    }
    if (line.find("registers") != std::string::npos && !current_entry.empty() && current_entry == chosen) {
      if (auto regs = number_before(line, "registers")) {
        stats.found = true;
        stats.registers = static_cast<int>(*regs);
        stats.shared_bytes = number_before(line, "bytes smem").value_or(0);
      }
    }
  }
  return stats;
}

CudaBinary compile_cuda(const std::string& source, const std::string& arch, const std::string& kernel_name) {
  static const std::regex real_arch(R"(sm_(\d+)([af]?))");
  std::smatch m;
  if (!std::regex_match(arch, m, real_arch))
    throw std::invalid_argument("compile_cuda: arch must be a real architecture such as sm_80 or sm_90a, not '" + arch +
                                "'");
  const std::string name = (kernel_name.empty() ? std::string("ingot_kernel") : kernel_name) + ".cu";

  CudaBinary out;
  out.arch = arch;
  out.kernel_name = kernel_name;
  Program program = compile(source, name, "-arch=" + arch, out.log);

  size_t cubin_size = 0;
  nvrtcResult r = nvrtcGetCUBINSize(program.get(), &cubin_size);
  if (r != NVRTC_SUCCESS || cubin_size == 0) fail("NVRTC produced no cubin for " + arch, r, out.log, source);
  out.cubin.resize(cubin_size);
  r = nvrtcGetCUBIN(program.get(), out.cubin.data());
  if (r != NVRTC_SUCCESS) fail("nvrtcGetCUBIN failed", r, out.log, source);

  // NVRTC 12+ keeps the PTX of a real-architecture compile; older ones need a compute_XX compile for it.
  std::optional<std::string> ptx = get_ptx(program.get());
  if (!ptx) {
    std::string ignored_log;
    Program virtual_program = compile(source, name, "-arch=compute_" + m[1].str() + m[2].str(), ignored_log);
    ptx = get_ptx(virtual_program.get());
    if (!ptx) fail("NVRTC produced no PTX for " + arch, NVRTC_ERROR_INVALID_PROGRAM, out.log, source);
  }
  out.ptx = std::move(*ptx);

  PtxasStats stats = parse_ptxas_log(out.log, kernel_name);
  out.registers = stats.registers;
  out.shared_bytes = stats.shared_bytes;
  out.spill_stores = stats.spill_stores;
  out.spill_loads = stats.spill_loads;
  out.stack_frame = stats.stack_frame;
  return out;
}

CudaBinary compile_cuda_cached(const std::string& source, const std::string& arch, const std::string& kernel_name,
                               const std::string& cache_dir) {
  const std::filesystem::path dir = cache_dir.empty() ? default_kernel_cache_dir() : cache_dir;
  const std::string hash =
      hash_hex(fnv1a64("nvrtc " + nvrtc_version() + "\narch " + arch + "\nkernel " + kernel_name + "\n" + source));
  const std::filesystem::path path = dir / (hash + ".cubin");
  std::ifstream in(path, std::ios::binary);
  if (in) {
    CudaBinary hit;
    hit.arch = arch;
    hit.kernel_name = kernel_name;
    hit.cubin.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    hit.cache_hit = true;
    if (!hit.cubin.empty()) return hit;
  }
  CudaBinary out = compile_cuda(source, arch, kernel_name);
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw std::runtime_error("cannot create the kernel cache directory '" + dir.string() + "': " + ec.message());
  write_cache_file(path.string(), std::string(out.cubin.begin(), out.cubin.end()));
  return out;
}

}  // namespace ingot
