#include "analysis/target.h"

#if defined(__x86_64__)
#include <cpuid.h>
#endif
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <charconv>
#include <climits>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <thread>

#include "ir/scalar_text.h"
#include "ir/yaml_values.h"

namespace ingot {

const char* target_kind_name(TargetKind kind) { return kind == TargetKind::kGpu ? "gpu" : "cpu"; }

const char* cpu_isa_name(CpuIsa isa) {
  switch (isa) {
    case CpuIsa::kAvx512: return "avx512";
    case CpuIsa::kAvx2: return "avx2";
    case CpuIsa::kGeneric: break;
  }
  return "generic";
}

std::optional<CpuIsa> parse_cpu_isa(const std::string& name) {
  for (CpuIsa isa : {CpuIsa::kGeneric, CpuIsa::kAvx2, CpuIsa::kAvx512})
    if (name == cpu_isa_name(isa)) return isa;
  return std::nullopt;
}

int64_t cpu_isa_lanes(CpuIsa isa) { return isa == CpuIsa::kAvx512 ? 16 : isa == CpuIsa::kAvx2 ? 8 : 4; }

int64_t cpu_isa_vector_registers(CpuIsa isa) { return isa == CpuIsa::kAvx512 ? 32 : 16; }

CpuIsa cpu_isa_of_lanes(int64_t simd_fp32_lanes) {
  return simd_fp32_lanes == 16 ? CpuIsa::kAvx512 : simd_fp32_lanes == 8 ? CpuIsa::kAvx2 : CpuIsa::kGeneric;
}

bool host_runs(CpuIsa isa) {
#if defined(__x86_64__) || defined(__i386__)
  switch (isa) {
    case CpuIsa::kAvx512:
      return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
             __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl") &&
             __builtin_cpu_supports("avx512cd") && host_runs(CpuIsa::kAvx2);
    case CpuIsa::kAvx2:
      return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && __builtin_cpu_supports("bmi2") &&
             __builtin_cpu_supports("f16c") && __builtin_cpu_supports("movbe");
    case CpuIsa::kGeneric: return true;
  }
  return false;
#else
  return isa == CpuIsa::kGeneric;
#endif
}

bool host_has_avx512_bf16() {
#if defined(__x86_64__) || defined(__i386__)
  return host_runs(CpuIsa::kAvx512) && __builtin_cpu_supports("avx512bf16");
#else
  return false;
#endif
}

bool host_has_amx_bf16() {
#if defined(__x86_64__) && defined(__linux__)
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (!host_has_avx512_bf16() || !__get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx)) return false;
  constexpr unsigned kAmxBf16 = 1u << 22, kAmxTile = 1u << 24;  // CPUID.(EAX=7, ECX=0):EDX
  constexpr long kArchReqXcompPerm = 0x1023, kXfeatureXtiledata = 18;
  return (edx & kAmxBf16) && (edx & kAmxTile) && syscall(SYS_arch_prctl, kArchReqXcompPerm, kXfeatureXtiledata) == 0;
#else
  return false;
#endif
}

CpuIsa host_cpu_isa() {
  for (CpuIsa isa : {CpuIsa::kAvx512, CpuIsa::kAvx2})
    if (host_runs(isa)) return isa;
  return CpuIsa::kGeneric;
}

int64_t bf16_conv_channel_multiple(const Target& t) { return t.kind == TargetKind::kCpu && t.cpu.amx_bf16 ? 32 : 2; }

Target with_cpu_isa(Target t, CpuIsa isa) {
  const int64_t lanes = cpu_isa_lanes(isa);
  if (t.cpu.simd_fp32_lanes > 0) t.peak_fp32_gflops *= double(lanes) / double(t.cpu.simd_fp32_lanes);
  t.cpu.simd_fp32_lanes = lanes;
  t.cpu.isa = isa;
  t.cpu.amx_bf16 = t.cpu.amx_bf16 && isa == CpuIsa::kAvx512;
  return t;
}

std::string cpu_isa_compiler_flags(CpuIsa isa) {
  if (isa == host_cpu_isa()) return "";
#if defined(__x86_64__)
  switch (isa) {
    case CpuIsa::kAvx512: return "-march=x86-64-v4 -mtune=native -mprefer-vector-width=512";
    case CpuIsa::kAvx2: return "-march=x86-64-v3 -mtune=native";
    case CpuIsa::kGeneric: return "-march=x86-64 -mtune=native";
  }
#endif
  return "";
}

namespace {

// ---- Built-in GPUs --------------------------------------------------------------------------------------
// Limits: CUDA C++ Programming Guide, "Technical Specifications per Compute Capability" (8.0 and 9.0 columns),
// and the A100 / H100 tuning guides (shared memory: 164 KB per SM and 163 KB per block opt-in on 8.0; 228 KB
// per SM and 227 KB per block opt-in on 9.0; 48 KB per block without opting in on both). L2: 40 MB on the A100,
// 50 MB on the H100 SXM5 (the A100 and H100 architecture whitepapers).

Target sm_80() {
  // NVIDIA A100 SXM4 (GA100, 108 SMs enabled). Peak fp32 without tensor cores: 108 SMs x 64 FP32 lanes x 2
  // (FMA) x 1.41 GHz boost = 19.5 TFLOP/s (A100 datasheet). Bandwidth: 1555 GB/s is the 40 GB HBM2 part; the
  // 80 GB HBM2e SXM part has 2039 GB/s (datasheet) — a target file with `base: sm_80` can say so.
  Target t;
  t.name = "sm_80";
  t.kind = TargetKind::kGpu;
  t.peak_fp32_gflops = 19500;
  t.memory_bandwidth_gb_s = 1555;
  t.gpu = GpuLimits{.sm_count = 108,
                    .max_threads_per_sm = 2048,
                    .max_threads_per_block = 1024,
                    .max_blocks_per_sm = 32,
                    .registers_per_sm = 65536,
                    .registers_per_block = 65536,
                    .shared_memory_per_sm = 164 * 1024,
                    .shared_memory_per_block = 48 * 1024,
                    .shared_memory_per_block_optin = 163 * 1024,
                    .warp_size = 32,
                    .l2_bytes = 40 * 1024 * 1024};
  return t;
}

Target sm_90() {
  // NVIDIA H100 SXM5 80 GB (GH100, 132 SMs enabled). Peak fp32: 132 SMs x 128 FP32 lanes x 2 (FMA) x 1.98 GHz
  // boost = 66.9 TFLOP/s (H100 datasheet: 67 TFLOP/s). Bandwidth: 3.35 TB/s HBM3 (datasheet).
  Target t;
  t.name = "sm_90";
  t.kind = TargetKind::kGpu;
  t.peak_fp32_gflops = 66900;
  t.memory_bandwidth_gb_s = 3350;
  t.gpu = GpuLimits{.sm_count = 132,
                    .max_threads_per_sm = 2048,
                    .max_threads_per_block = 1024,
                    .max_blocks_per_sm = 32,
                    .registers_per_sm = 65536,
                    .registers_per_block = 65536,
                    .shared_memory_per_sm = 228 * 1024,
                    .shared_memory_per_block = 48 * 1024,
                    .shared_memory_per_block_optin = 227 * 1024,
                    .warp_size = 32,
                    .l2_bytes = 50 * 1024 * 1024};
  return t;
}

// ---- The host CPU ---------------------------------------------------------------------------------------

std::string read_first_line(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

// "48K", "2048K", "105M" or a plain byte count, as /sys/.../cache/index*/size writes it; 0 if unreadable.
int64_t parse_cache_size(const std::string& text) {
  int64_t value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc()) return 0;
  char unit = end < text.data() + text.size() ? *end : ' ';
  if (unit == 'K') value *= 1024;
  if (unit == 'M') value *= 1024 * 1024;
  return value;
}

// Size of the data (or unified) cache of that level from sysfs; 0 when there is none.
int64_t sysfs_cache_bytes(int level) {
  for (int index = 0; index < 8; ++index) {
    std::string dir = "/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(index) + "/";
    std::string found_level = read_first_line(dir + "level");
    if (found_level.empty()) break;
    std::string type = read_first_line(dir + "type");
    if (found_level == std::to_string(level) && (type == "Data" || type == "Unified"))
      return parse_cache_size(read_first_line(dir + "size"));
  }
  return 0;
}

int64_t cache_bytes(int level) {
  // The kernel's view (sysfs) first: in a VM it is the share of the cache this machine gets, while glibc answers
  // from cpuid, which reports the host's (64 MB of L3 where sysfs says 8 MB, on the VMs ingot is developed on; an
  // LSTM whose weights overflow 8 MB slows down there). cpuid where sysfs says nothing.
  if (int64_t from_sysfs = sysfs_cache_bytes(level); from_sysfs > 0) return from_sysfs;
  long from_sysconf = 0;
#if defined(_SC_LEVEL1_DCACHE_SIZE)
  if (level == 1) from_sysconf = sysconf(_SC_LEVEL1_DCACHE_SIZE);
  if (level == 2) from_sysconf = sysconf(_SC_LEVEL2_CACHE_SIZE);
  if (level == 3) from_sysconf = sysconf(_SC_LEVEL3_CACHE_SIZE);
#endif
  return std::max<long>(from_sysconf, 0);
}

// Clock in GHz: the maximum frequency where cpufreq exposes it, else /proc/cpuinfo's "cpu MHz" (the nominal
// clock in a VM, below the turbo clock the cores really run at), else 2 GHz.
double clock_ghz() {
  std::string khz = read_first_line("/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq");
  if (int64_t v = 0; !khz.empty() && std::from_chars(khz.data(), khz.data() + khz.size(), v).ec == std::errc() && v > 0)
    return v / 1e6;
  std::ifstream cpuinfo("/proc/cpuinfo");
  for (std::string line; std::getline(cpuinfo, line);) {
    if (line.rfind("cpu MHz", 0) != 0) continue;
    size_t colon = line.find(':');
    if (colon == std::string::npos) break;
    double mhz = std::atof(line.c_str() + colon + 1);
    if (mhz > 0) return mhz / 1000;
    break;
  }
  return 2.0;
}

bool has_fma() {
#if defined(__x86_64__) || defined(__i386__)
  return __builtin_cpu_supports("fma");
#else
  return true;  // Arm's NEON has fused multiply-add
#endif
}

}  // namespace

Target detect_host_cpu() {
  Target t;
  t.name = "cpu";
  t.kind = TargetKind::kCpu;
  // Threads: those this process may run on (a container or taskset may allow fewer than the machine has).
  std::vector<int> usable;
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) == 0) {
    for (int c = 0; c < CPU_SETSIZE; ++c)
      if (CPU_ISSET(c, &set)) usable.push_back(c);
  }
  if (usable.empty())
    for (unsigned c = 0; c < std::max(1u, std::thread::hardware_concurrency()); ++c) usable.push_back(int(c));
  t.cpu.threads = int64_t(usable.size());
  // Cores: hardware threads that share a core list the same siblings.
  std::set<std::string> sibling_sets;
  for (int c : usable) {
    std::string siblings =
        read_first_line("/sys/devices/system/cpu/cpu" + std::to_string(c) + "/topology/thread_siblings_list");
    sibling_sets.insert(siblings.empty() ? "cpu" + std::to_string(c) : siblings);
  }
  t.cpu.cores = int64_t(sibling_sets.size());
  t.cpu.isa = host_cpu_isa();
  t.cpu.simd_fp32_lanes = cpu_isa_lanes(t.cpu.isa);
  t.cpu.amx_bf16 = host_has_amx_bf16();
  t.cpu.l1d_bytes = cache_bytes(1);
  t.cpu.l2_bytes = cache_bytes(2);
  t.cpu.l3_bytes = cache_bytes(3);
  // Peak: every core issues two vector FMA (or add + mul) instructions a cycle — true of x86 cores since Haswell
  // and of Xeon SP Gold/Platinum with AVX-512 — at the clock found above. On these VMs that is 2 x 16 x 2 x 2 x
  // 2.0 GHz = 256 GFLOP/s, below the 470 GFLOP/s measured, because the turbo clock is not visible in a VM. On a
  // 2-core Zen 4 VM it is 2 x 16 x 2 x 2 x 2.6 GHz = 332 GFLOP/s, above the 234 an FMA loop measures: Zen 4 runs a
  // 512-bit FMA on two 256-bit pipes (one a cycle), at a turbo clock of about 3.65 GHz.
  double flops_per_cycle = double(t.cpu.simd_fp32_lanes) * (has_fma() ? 2 : 1) * 2;
  t.peak_fp32_gflops = double(t.cpu.cores) * flops_per_cycle * clock_ghz();
  // The OS does not know the DRAM bandwidth. 17.5 GB/s per core is what one core streams on this project's
  // machines (18 GB/s one thread, 35 GB/s two); machines with many cores saturate their memory channels far
  // below cores x 17.5 and should describe themselves in a target file.
  t.memory_bandwidth_gb_s = 17.5 * double(t.cpu.cores);
  return t;
}

std::vector<std::string> builtin_target_names() { return {"cpu", "sm_80", "sm_90"}; }

std::optional<Target> find_target(const std::string& name) {
  if (name == "sm_80") return sm_80();
  if (name == "sm_90") return sm_90();
  if (name == "cpu") {
    static const Target host = detect_host_cpu();
    return host;
  }
  return std::nullopt;
}

namespace {

// ---- YAML schema ----------------------------------------------------------------------------------------

struct IntField {
  const char* key;
  int64_t min;
  int64_t GpuLimits::*gpu = nullptr;
  int64_t CpuLimits::*cpu = nullptr;
  bool optional = false;  // absent: 0 (target files written before the key existed stay valid)
  int64_t& of(Target& t) const { return gpu ? t.gpu.*gpu : t.cpu.*cpu; }
  int64_t of(const Target& t) const { return gpu ? t.gpu.*gpu : t.cpu.*cpu; }
};

const std::vector<IntField>& gpu_fields() {
  static const std::vector<IntField> fields = {
      {"sm_count", 1, &GpuLimits::sm_count},
      {"max_threads_per_sm", 1, &GpuLimits::max_threads_per_sm},
      {"max_threads_per_block", 1, &GpuLimits::max_threads_per_block},
      {"max_blocks_per_sm", 1, &GpuLimits::max_blocks_per_sm},
      {"registers_per_sm", 1, &GpuLimits::registers_per_sm},
      {"registers_per_block", 1, &GpuLimits::registers_per_block},
      {"shared_memory_per_sm", 0, &GpuLimits::shared_memory_per_sm},
      {"shared_memory_per_block", 0, &GpuLimits::shared_memory_per_block},
      {"shared_memory_per_block_optin", 0, &GpuLimits::shared_memory_per_block_optin},
      {"warp_size", 1, &GpuLimits::warp_size},
      {"l2_bytes", 0, &GpuLimits::l2_bytes, nullptr, true},
  };
  return fields;
}

const std::vector<IntField>& cpu_fields() {
  static const std::vector<IntField> fields = {
      {"cores", 1, nullptr, &CpuLimits::cores},
      {"threads", 1, nullptr, &CpuLimits::threads},
      {"simd_fp32_lanes", 1, nullptr, &CpuLimits::simd_fp32_lanes},
      {"l1d_bytes", 1, nullptr, &CpuLimits::l1d_bytes},
      {"l2_bytes", 0, nullptr, &CpuLimits::l2_bytes},
      {"l3_bytes", 0, nullptr, &CpuLimits::l3_bytes},
  };
  return fields;
}

const std::vector<std::string> kTopKeys = {"name", "base", "kind", "peak_fp32_gflops", "memory_bandwidth_gb_s",
                                           "gpu",  "cpu"};

std::string join(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

std::vector<std::string> field_keys(const std::vector<IntField>& fields) {
  std::vector<std::string> keys;
  for (const IntField& f : fields) keys.push_back(f.key);
  return keys;
}

bool is_power_of_two(int64_t v) { return v > 0 && (v & (v - 1)) == 0; }

// Reads one file, throwing TargetError at a node's position (ir/yaml_values.h); remembers where each key was written.
class Parser : public YamlValues<TargetError> {
 public:
  explicit Parser(std::string source) : YamlValues(std::move(source)) {}

  Target parse(const std::string& text) {
    std::vector<YAML::Node> documents;
    try {
      documents = YAML::LoadAll(text);
    } catch (const YAML::Exception& e) {
      fail(e.mark, "", "invalid YAML: " + e.msg);
    }
    if (documents.size() > 1)
      fail(documents[1].Mark(), "", "expected one YAML document, found " + std::to_string(documents.size()));
    root_ = documents.empty() ? YAML::Node() : documents[0];
    if (root_.Type() != YAML::NodeType::Map)
      fail(root_.Mark(), "", "expected a mapping of keys (" + join(kTopKeys) + "), got " + describe(root_));
    collect(root_, "", kTopKeys);

    Target t;
    bool from_base = values_.count("base");
    if (from_base) {
      std::string base = string("base");
      std::optional<Target> found = find_target(base);
      if (!found)
        fail(values_.at("base").Mark(), "base",
             "unknown target '" + base + "' (known: " + join(builtin_target_names()) + ")");
      t = *found;
    }
    if (values_.count("kind")) {
      std::string kind = string("kind");
      if (kind != "cpu" && kind != "gpu")
        fail(values_.at("kind").Mark(), "kind", "unknown target kind '" + kind + "' (known: cpu, gpu)");
      TargetKind parsed = kind == "gpu" ? TargetKind::kGpu : TargetKind::kCpu;
      if (from_base && parsed != t.kind)
        fail(values_.at("kind").Mark(), "kind",
             "is " + kind + " but base '" + t.name + "' is a " + target_kind_name(t.kind) + " target");
      t.kind = parsed;
    } else if (!from_base) {
      fail(root_.Mark(), "kind", "missing required key (cpu or gpu; or name a built-in target as base)");
    }
    if (!values_.count("name")) fail(root_.Mark(), "name", "missing required key");
    t.name = string("name");
    if (t.name.empty()) fail(values_.at("name").Mark(), "name", "must not be empty");

    const char* other = t.kind == TargetKind::kGpu ? "cpu" : "gpu";
    if (keys_.count(other))
      fail(keys_.at(other), other,
           std::string("a ") + target_kind_name(t.kind) + " target has no " + other + " section");
    for (const char* key : {"peak_fp32_gflops", "memory_bandwidth_gb_s"}) {
      double& field = std::string(key) == "peak_fp32_gflops" ? t.peak_fp32_gflops : t.memory_bandwidth_gb_s;
      if (values_.count(key))
        field = positive_number(key);
      else if (!from_base)
        fail(root_.Mark(), key, "missing required key");
    }
    const std::string section = target_kind_name(t.kind);
    for (const IntField& f : t.kind == TargetKind::kGpu ? gpu_fields() : cpu_fields()) {
      std::string path = section + "." + f.key;
      if (values_.count(path))
        f.of(t) = integer(path, f.min);
      else if (!from_base && !f.optional)
        fail(keys_.count(section) ? keys_.at(section) : root_.Mark(), path, "missing required key");
    }
    if (t.kind == TargetKind::kCpu) {
      t.cpu.isa = isa(t.cpu.simd_fp32_lanes);
      // A base's AMX goes with its ISA; written, it must have AVX-512.
      t.cpu.amx_bf16 = t.cpu.amx_bf16 && t.cpu.isa == CpuIsa::kAvx512;
      if (values_.count("cpu.amx_bf16")) t.cpu.amx_bf16 = boolean("cpu.amx_bf16");
      if (t.cpu.amx_bf16 && t.cpu.isa != CpuIsa::kAvx512)
        fail(keys_.at("cpu.amx_bf16"), "cpu.amx_bf16",
             std::string("AMX needs an avx512 target, and this one is ") + cpu_isa_name(t.cpu.isa));
    }
    check_consistency(t);
    return t;
  }

 private:
  // Records every key and leaf value under map; unknown keys, duplicates and non-mapping sections fail here.
  void collect(const YAML::Node& map, const std::string& prefix, const std::vector<std::string>& known) {
    for (const auto& entry : map) {
      const YAML::Node key = entry.first, value = entry.second;
      if (key.Type() != YAML::NodeType::Scalar)
        fail(key.Mark(), prefix, "keys must be plain names, got " + describe(key));
      const std::string path = prefix.empty() ? key.Scalar() : prefix + "." + key.Scalar();
      if (std::find(known.begin(), known.end(), key.Scalar()) == known.end())
        fail(key.Mark(), path, "unknown key (known: " + join(known) + ")");
      if (keys_.count(path)) fail(key.Mark(), path, "duplicate key");
      keys_[path] = key.Mark();
      if (path == "gpu" || path == "cpu") {
        if (value.Type() == YAML::NodeType::Null) continue;
        std::vector<std::string> children = field_keys(path == "gpu" ? gpu_fields() : cpu_fields());
        if (path == "cpu") children.insert(children.end(), {"isa", "amx_bf16"});
        if (value.Type() != YAML::NodeType::Map)
          fail(value.Mark(), path, "expected a mapping (keys: " + join(children) + "), got " + describe(value));
        collect(value, path, children);
        continue;
      }
      // A key without a value has no position of its own (yaml-cpp marks where the next token starts).
      if (value.Type() == YAML::NodeType::Null) fail(key.Mark(), path, "expected a value, got nothing");
      values_[path] = value;
    }
  }

  // The value at a key path that collect() recorded.
  std::string string(const std::string& path) const { return YamlValues::string(values_.at(path), path); }
  bool boolean(const std::string& path) const { return YamlValues::boolean(values_.at(path), path); }
  int64_t integer(const std::string& path, int64_t min) const {
    return YamlValues::integer(values_.at(path), path, min, INT64_MAX);
  }
  double positive_number(const std::string& path) const {
    return number(values_.at(path), path, 0, /*min_is_exclusive=*/true);
  }

  // cpu.isa as written, which must have the lanes the file gives; without it, the ISA of those lanes.
  CpuIsa isa(int64_t lanes) const {
    if (!values_.count("cpu.isa")) return cpu_isa_of_lanes(lanes);
    const std::string name = string("cpu.isa");
    std::optional<CpuIsa> parsed = parse_cpu_isa(name);
    if (!parsed)
      fail(values_.at("cpu.isa").Mark(), "cpu.isa", "unknown ISA '" + name + "' (known: generic, avx2, avx512)");
    if (cpu_isa_lanes(*parsed) != lanes && *parsed != CpuIsa::kGeneric)
      fail(values_.at("cpu.isa").Mark(), "cpu.isa",
           name + " has " + std::to_string(cpu_isa_lanes(*parsed)) + " fp32 lanes, but cpu.simd_fp32_lanes is " +
               std::to_string(lanes));
    return *parsed;
  }

  // Where to report a broken relation between two figures: the one written in the file (the second if both).
  YAML::Mark mark_of(const std::string& first, const std::string& second, std::string& path) const {
    path = values_.count(second) ? second : first;
    return values_.count(path) ? values_.at(path).Mark() : root_.Mark();
  }

  void check_at_most(const std::string& section, const char* small, int64_t small_value, const char* large,
                     int64_t large_value) const {
    if (small_value <= large_value) return;
    std::string path;
    YAML::Mark mark = mark_of(section + "." + large, section + "." + small, path);
    fail(mark, path,
         std::string(small) + " (" + std::to_string(small_value) + ") is above " + large + " (" +
             std::to_string(large_value) + ")");
  }

  void check_consistency(const Target& t) const {
    if (t.kind == TargetKind::kGpu) {
      const GpuLimits& g = t.gpu;
      check_at_most("gpu", "max_threads_per_block", g.max_threads_per_block, "max_threads_per_sm",
                    g.max_threads_per_sm);
      check_at_most("gpu", "registers_per_block", g.registers_per_block, "registers_per_sm", g.registers_per_sm);
      check_at_most("gpu", "shared_memory_per_block", g.shared_memory_per_block, "shared_memory_per_block_optin",
                    g.shared_memory_per_block_optin);
      check_at_most("gpu", "shared_memory_per_block_optin", g.shared_memory_per_block_optin, "shared_memory_per_sm",
                    g.shared_memory_per_sm);
      if (!is_power_of_two(g.warp_size)) {
        std::string path;
        fail(mark_of("gpu.warp_size", "gpu.warp_size", path), path,
             "must be a power of two, got " + std::to_string(g.warp_size));
      }
      check_at_most("gpu", "warp_size", g.warp_size, "max_threads_per_block", g.max_threads_per_block);
    } else {
      const CpuLimits& c = t.cpu;
      check_at_most("cpu", "cores", c.cores, "threads", c.threads);
      if (!is_power_of_two(c.simd_fp32_lanes)) {
        std::string path;
        fail(mark_of("cpu.simd_fp32_lanes", "cpu.simd_fp32_lanes", path), path,
             "must be a power of two, got " + std::to_string(c.simd_fp32_lanes));
      }
    }
  }

  YAML::Node root_;
  std::map<std::string, YAML::Mark> keys_;    // every key path seen, sections included
  std::map<std::string, YAML::Node> values_;  // every leaf value
};

}  // namespace

Target parse_target(const std::string& yaml_text, const std::string& source_name) {
  return Parser(source_name).parse(yaml_text);
}

Target load_target(const std::string& path) { return parse_target(read_user_file<TargetError>(path), path); }

Target resolve_target(const std::string& name_or_path) {
  if (std::optional<Target> builtin = find_target(name_or_path)) return *builtin;
  std::error_code ec;
  if (!std::filesystem::is_regular_file(name_or_path, ec))
    throw TargetError(name_or_path, 0, 0, "",
                      "neither a built-in target (" + join(builtin_target_names()) + ") nor a target file");
  return load_target(name_or_path);
}

std::string format_target(const Target& t) {
  std::ostringstream os;
  YAML::Emitter quoted_name;
  quoted_name << YAML::DoubleQuoted << t.name;
  os << "name: " << quoted_name.c_str() << "\n";
  os << "kind: " << target_kind_name(t.kind) << "\n";
  os << "peak_fp32_gflops: " << show_number(t.peak_fp32_gflops) << "\n";
  os << "memory_bandwidth_gb_s: " << show_number(t.memory_bandwidth_gb_s) << "\n";
  os << target_kind_name(t.kind) << ":\n";
  for (const IntField& f : t.kind == TargetKind::kGpu ? gpu_fields() : cpu_fields())
    os << "  " << f.key << ": " << f.of(t) << "\n";
  if (t.kind == TargetKind::kCpu) {
    os << "  isa: " << cpu_isa_name(t.cpu.isa) << "\n";
    os << "  amx_bf16: " << (t.cpu.amx_bf16 ? "true" : "false") << "\n";
  }
  return os.str();
}

}  // namespace ingot
