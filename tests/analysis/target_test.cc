#include "analysis/target.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "lower/vector_tiles.h"

namespace ingot {
namespace {

std::string yaml(const std::vector<std::string>& lines) {
  std::string text;
  for (const std::string& l : lines) text += l + "\n";
  return text;
}

// The message parse_target throws for text named "t.yaml", or "<no error>".
std::string error_of(const std::string& text) {
  try {
    parse_target(text, "t.yaml");
  } catch (const TargetError& e) {
    return e.what();
  }
  return "<no error>";
}

// A complete GPU target file, line by line, so that a test can change one line.
std::vector<std::string> gpu_lines() {
  return {"name: my_gpu",                             // 1
          "kind: gpu",                                // 2
          "peak_fp32_gflops: 19500",                  // 3
          "memory_bandwidth_gb_s: 2039",              // 4
          "gpu:",                                     // 5
          "  sm_count: 108",                          // 6
          "  max_threads_per_sm: 2048",               // 7
          "  max_threads_per_block: 1024",            // 8
          "  max_blocks_per_sm: 32",                  // 9
          "  registers_per_sm: 65536",                // 10
          "  registers_per_block: 65536",             // 11
          "  shared_memory_per_sm: 167936",           // 12
          "  shared_memory_per_block: 49152",         // 13
          "  shared_memory_per_block_optin: 166912",  // 14
          "  warp_size: 32",                          // 15
          "  l2_bytes: 41943040"};                    // 16
}

std::string gpu_with(size_t line, const std::string& replacement) {
  std::vector<std::string> lines = gpu_lines();
  lines[line - 1] = replacement;
  return yaml(lines);
}

TEST(Target, BuiltinGpuFigures) {
  Target a100 = *find_target("sm_80");
  EXPECT_EQ(a100.name, "sm_80");
  EXPECT_EQ(a100.kind, TargetKind::kGpu);
  EXPECT_EQ(a100.gpu.sm_count, 108);
  EXPECT_EQ(a100.gpu.max_threads_per_sm, 2048);
  EXPECT_EQ(a100.gpu.max_threads_per_block, 1024);
  EXPECT_EQ(a100.gpu.max_blocks_per_sm, 32);
  EXPECT_EQ(a100.gpu.registers_per_sm, 65536);
  EXPECT_EQ(a100.gpu.registers_per_block, 65536);
  EXPECT_EQ(a100.gpu.shared_memory_per_sm, 167936);
  EXPECT_EQ(a100.gpu.shared_memory_per_block, 49152);
  EXPECT_EQ(a100.gpu.shared_memory_per_block_optin, 166912);
  EXPECT_EQ(a100.gpu.warp_size, 32);
  EXPECT_EQ(a100.peak_fp32_gflops, 19500);
  EXPECT_EQ(a100.memory_bandwidth_gb_s, 1555);
  EXPECT_NEAR(a100.ridge_flops_per_byte(), 12.54, 0.01);
  EXPECT_EQ(a100.cpu, CpuLimits{});

  Target h100 = *find_target("sm_90");
  EXPECT_EQ(h100.gpu.sm_count, 132);
  EXPECT_EQ(h100.gpu.max_threads_per_sm, 2048);
  EXPECT_EQ(h100.gpu.shared_memory_per_sm, 233472);
  EXPECT_EQ(h100.gpu.shared_memory_per_block, 49152);
  EXPECT_EQ(h100.gpu.shared_memory_per_block_optin, 232448);
  EXPECT_EQ(h100.gpu.registers_per_sm, 65536);
  EXPECT_EQ(h100.peak_fp32_gflops, 66900);
  EXPECT_EQ(h100.memory_bandwidth_gb_s, 3350);
  EXPECT_NEAR(h100.ridge_flops_per_byte(), 19.97, 0.01);
}

TEST(Target, HostCpuIsReadFromThisMachine) {
  Target cpu = *find_target("cpu");
  EXPECT_EQ(cpu.name, "cpu");
  EXPECT_EQ(cpu.kind, TargetKind::kCpu);
  EXPECT_GE(cpu.cpu.threads, 1);
  EXPECT_GE(cpu.cpu.cores, 1);
  EXPECT_LE(cpu.cpu.cores, cpu.cpu.threads);
  EXPECT_LE(cpu.cpu.threads, sysconf(_SC_NPROCESSORS_ONLN));
#if defined(__x86_64__)
  int64_t lanes = __builtin_cpu_supports("avx512f") ? 16 : __builtin_cpu_supports("avx2") ? 8 : 4;
  EXPECT_EQ(cpu.cpu.simd_fp32_lanes, lanes);
  EXPECT_EQ(cpu.cpu.isa, cpu_isa_of_lanes(lanes));
#endif
  // Cache sizes as the kernel presents them (sysfs), which in a VM may be less than cpuid says.
  for (int index = 0; index < 8; ++index) {
    std::string dir = "/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(index) + "/";
    std::ifstream level(dir + "level"), type(dir + "type"), size(dir + "size");
    int n = 0;
    int64_t kib = 0;
    std::string kind, unit;
    if (!(level >> n) || !(type >> kind) || !(size >> kib >> unit) || unit != "K") continue;
    if (n == 1 && kind == "Data") {
      EXPECT_EQ(cpu.cpu.l1d_bytes, kib * 1024);
    } else if (n == 2 && kind == "Unified") {
      EXPECT_EQ(cpu.cpu.l2_bytes, kib * 1024);
    } else if (n == 3 && kind == "Unified") {
      EXPECT_EQ(cpu.cpu.l3_bytes, kib * 1024);
    }
  }
  EXPECT_GT(cpu.cpu.l1d_bytes, 0);
  // Peak: cores x lanes x 2 (FMA) x 2 pipes x clock, with a clock between 1 and 6 GHz.
  double per_ghz = double(cpu.cpu.cores * cpu.cpu.simd_fp32_lanes * 4);
  EXPECT_GE(cpu.peak_fp32_gflops, per_ghz * 0.5);
  EXPECT_LE(cpu.peak_fp32_gflops, per_ghz * 6);
  EXPECT_EQ(cpu.memory_bandwidth_gb_s, 17.5 * double(cpu.cpu.cores));
  EXPECT_EQ(cpu.gpu, GpuLimits{});
  // Read once: the same figures every time.
  EXPECT_EQ(*find_target("cpu"), cpu);
}

TEST(Target, BuiltinNames) {
  EXPECT_EQ(builtin_target_names(), (std::vector<std::string>{"cpu", "sm_80", "sm_90"}));
  for (const std::string& name : builtin_target_names()) EXPECT_EQ(find_target(name)->name, name);
  EXPECT_FALSE(find_target("sm_70"));
}

TEST(Target, FormatParsesBackToTheSameTarget) {
  for (const std::string& name : builtin_target_names()) {
    Target t = *find_target(name);
    EXPECT_EQ(parse_target(format_target(t), name + ".yaml"), t) << format_target(t);
  }
  EXPECT_EQ(format_target(*find_target("sm_80")),
            yaml({"name: \"sm_80\"", "kind: gpu", "peak_fp32_gflops: 19500", "memory_bandwidth_gb_s: 1555",
                  "gpu:", "  sm_count: 108", "  max_threads_per_sm: 2048", "  max_threads_per_block: 1024",
                  "  max_blocks_per_sm: 32", "  registers_per_sm: 65536", "  registers_per_block: 65536",
                  "  shared_memory_per_sm: 167936", "  shared_memory_per_block: 49152",
                  "  shared_memory_per_block_optin: 166912", "  warp_size: 32", "  l2_bytes: 41943040"}));
  Target odd = *find_target("sm_90");
  odd.name = "h100: \"custom\"";
  odd.memory_bandwidth_gb_s = 3352.5;
  EXPECT_EQ(parse_target(format_target(odd), "odd.yaml"), odd);
}

TEST(Target, ParsesACompleteGpuFile) {
  Target t = parse_target(yaml(gpu_lines()), "t.yaml");
  Target expected = *find_target("sm_80");
  expected.name = "my_gpu";
  expected.memory_bandwidth_gb_s = 2039;
  EXPECT_EQ(t, expected);
}

TEST(Target, ParsesACompleteCpuFile) {
  Target t = parse_target(
      yaml({"name: laptop", "kind: cpu", "peak_fp32_gflops: 300.5", "memory_bandwidth_gb_s: 40", "cpu:", "  cores: 4",
            "  threads: 8", "  simd_fp32_lanes: 8", "  l1d_bytes: 32768", "  l2_bytes: 262144", "  l3_bytes: 0"}),
      "t.yaml");
  EXPECT_EQ(t.name, "laptop");
  EXPECT_EQ(t.kind, TargetKind::kCpu);
  EXPECT_EQ(t.peak_fp32_gflops, 300.5);
  EXPECT_EQ(t.cpu, (CpuLimits{4, 8, 8, 32768, 262144, 0, CpuIsa::kAvx2}));  // the ISA of 8 lanes
}

// A 2-core CPU's file with these lanes and, where not empty, one more line of its cpu section (line 12).
std::string box_cpu_file(const std::string& lanes, const std::string& line12) {
  std::vector<std::string> lines{
      "name: box",    "kind: cpu",    "peak_fp32_gflops: 100",       "memory_bandwidth_gb_s: 20", "cpu:",
      "  cores: 2",   "  threads: 2", "  simd_fp32_lanes: " + lanes, "  l1d_bytes: 32768",        "  l2_bytes: 1048576",
      "  l3_bytes: 0"};
  if (!line12.empty()) lines.push_back("  " + line12);
  return yaml(lines);
}

std::string error_of_file(const std::string& text) {
  try {
    parse_target(text, "t.yaml");
  } catch (const TargetError& e) {
    return std::string(e.what());
  }
  return std::string("no error");
}

TEST(Target, CpuFilesNameAnIsaThatAgreesWithTheirLanes) {
  auto cpu_file = [](const std::string& lanes, const std::string& isa) {
    return box_cpu_file(lanes, isa.empty() ? "" : "isa: " + isa);
  };
  EXPECT_EQ(parse_target(cpu_file("16", ""), "t.yaml").cpu.isa, CpuIsa::kAvx512);
  EXPECT_EQ(parse_target(cpu_file("8", "avx2"), "t.yaml").cpu.isa, CpuIsa::kAvx2);
  EXPECT_EQ(parse_target(cpu_file("4", ""), "t.yaml").cpu.isa, CpuIsa::kGeneric);
  EXPECT_EQ(parse_target(cpu_file("16", "generic"), "t.yaml").cpu.isa, CpuIsa::kGeneric);
  EXPECT_EQ(error_of_file(cpu_file("16", "avx2")),
            "t.yaml:12:8: cpu.isa: avx2 has 8 fp32 lanes, but cpu.simd_fp32_lanes is 16");
  EXPECT_EQ(error_of_file(cpu_file("16", "sse9")),
            "t.yaml:12:8: cpu.isa: unknown ISA 'sse9' (known: generic, avx2, avx512)");
  Target t = parse_target(cpu_file("8", "avx2"), "t.yaml");
  EXPECT_EQ(parse_target(format_target(t), "t.yaml"), t);
}

// amx_bf16 (AMX's bf16 tiles) is a key of AVX-512 CPU targets: read, written back, dropped with another ISA, refused
// on another ISA's file with where it is written.
TEST(Target, AmxBf16IsAKeyOfAvx512CpuTargets) {
  auto cpu_file = [](const std::string& lanes, const std::string& amx) {
    return box_cpu_file(lanes, "amx_bf16: " + amx);
  };
  Target amx = parse_target(cpu_file("16", "true"), "t.yaml");
  EXPECT_TRUE(amx.cpu.amx_bf16);
  EXPECT_FALSE(parse_target(cpu_file("16", "false"), "t.yaml").cpu.amx_bf16);
  EXPECT_EQ(parse_target(format_target(amx), "t.yaml"), amx);
  EXPECT_FALSE(with_cpu_isa(amx, CpuIsa::kAvx2).cpu.amx_bf16);
  EXPECT_EQ(error_of_file(cpu_file("8", "true")),
            "t.yaml:12:3: cpu.amx_bf16: AMX needs an avx512 target, and this one is avx2");
  EXPECT_EQ(error_of_file(cpu_file("16", "yes")), "t.yaml:12:13: cpu.amx_bf16: expected true or false, got 'yes'");
  // A base's AMX goes with its ISA: this machine's target with 8 lanes has none.
  Target eight = parse_target(yaml({"name: eight", "base: cpu", "cpu:", "  simd_fp32_lanes: 8"}), "t.yaml");
  EXPECT_FALSE(eight.cpu.amx_bf16);
  EXPECT_EQ(find_target("cpu")->cpu.amx_bf16, host_has_amx_bf16());
  // A bf16 program pads its 1 x 1 convolutions' input channels to AMX's k per step where the target has AMX.
  EXPECT_EQ(bf16_conv_channel_multiple(amx), kAmxTileK);
  EXPECT_EQ(bf16_conv_channel_multiple(parse_target(cpu_file("16", "false"), "t.yaml")), 2);
  EXPECT_EQ(bf16_conv_channel_multiple(with_cpu_isa(amx, CpuIsa::kAvx2)), 2);
  EXPECT_EQ(bf16_conv_channel_multiple(*find_target("sm_80")), 2);
}

TEST(Target, AnotherIsaKeepsTheMachineAndScalesLanesAndPeak) {
  Target avx512 = parse_target(
      yaml({"name: box", "kind: cpu", "peak_fp32_gflops: 200", "memory_bandwidth_gb_s: 20", "cpu:", "  cores: 2",
            "  threads: 2", "  simd_fp32_lanes: 16", "  l1d_bytes: 32768", "  l2_bytes: 1048576", "  l3_bytes: 0"}),
      "t.yaml");
  Target avx2 = with_cpu_isa(avx512, CpuIsa::kAvx2);
  EXPECT_EQ(avx2.cpu.isa, CpuIsa::kAvx2);
  EXPECT_EQ(avx2.cpu.simd_fp32_lanes, 8);
  EXPECT_EQ(avx2.peak_fp32_gflops, 100);
  EXPECT_EQ(avx2.cpu.l2_bytes, avx512.cpu.l2_bytes);
  EXPECT_EQ(with_cpu_isa(avx2, CpuIsa::kAvx512), avx512);
  EXPECT_EQ(cpu_isa_vector_registers(CpuIsa::kAvx512), 32);
  EXPECT_EQ(cpu_isa_vector_registers(CpuIsa::kAvx2), 16);
  for (CpuIsa isa : {CpuIsa::kGeneric, CpuIsa::kAvx2, CpuIsa::kAvx512})
    EXPECT_EQ(parse_cpu_isa(cpu_isa_name(isa)), isa);
  EXPECT_FALSE(parse_cpu_isa("avx"));
}

TEST(Target, CodeOfThisCpusIsaCompilesNativeAndOtherIsasByTheirX86Level) {
  const CpuIsa host = host_cpu_isa();
  EXPECT_EQ(find_target("cpu")->cpu.isa, host);
  EXPECT_TRUE(host_runs(host));
  EXPECT_TRUE(host_runs(CpuIsa::kGeneric));
  EXPECT_EQ(cpu_isa_compiler_flags(host), "");
#if defined(__x86_64__)
  if (host != CpuIsa::kAvx2) {
    EXPECT_EQ(cpu_isa_compiler_flags(CpuIsa::kAvx2), "-march=x86-64-v3 -mtune=native");
  }
  if (host != CpuIsa::kAvx512) {
    EXPECT_EQ(cpu_isa_compiler_flags(CpuIsa::kAvx512), "-march=x86-64-v4 -mtune=native -mprefer-vector-width=512");
  }
  // An ISA runs where every wider one does.
  if (host_runs(CpuIsa::kAvx512)) {
    EXPECT_TRUE(host_runs(CpuIsa::kAvx2));
  }
#endif
}

TEST(Target, BaseSuppliesTheFiguresNotGiven) {
  Target t = parse_target(yaml({"name: a100_80gb", "base: sm_80", "memory_bandwidth_gb_s: 2039",
                                "gpu:", "  shared_memory_per_block_optin: 100000"}),
                          "t.yaml");
  Target expected = *find_target("sm_80");
  expected.name = "a100_80gb";
  expected.memory_bandwidth_gb_s = 2039;
  expected.gpu.shared_memory_per_block_optin = 100000;
  EXPECT_EQ(t, expected);
  // A derived CPU: this machine with the measured peak.
  Target cpu = parse_target(yaml({"name: measured", "base: cpu", "kind: cpu", "peak_fp32_gflops: 470"}), "t.yaml");
  EXPECT_EQ(cpu.cpu, find_target("cpu")->cpu);
  EXPECT_EQ(cpu.peak_fp32_gflops, 470);
}

TEST(Target, MistakesNameFileLineColumnAndKey) {
  // Unknown keys, at the top level and in a section.
  EXPECT_EQ(error_of(gpu_with(4, "bandwidth: 2039")),
            "t.yaml:4:1: bandwidth: unknown key (known: name, base, kind, peak_fp32_gflops, memory_bandwidth_gb_s, "
            "gpu, cpu)");
  EXPECT_EQ(error_of(gpu_with(6, "  sm_cout: 108")),
            "t.yaml:6:3: gpu.sm_cout: unknown key (known: sm_count, max_threads_per_sm, max_threads_per_block, "
            "max_blocks_per_sm, registers_per_sm, registers_per_block, shared_memory_per_sm, shared_memory_per_block, "
            "shared_memory_per_block_optin, warp_size, l2_bytes)");
  // Wrong types.
  EXPECT_EQ(error_of(gpu_with(6, "  sm_count: many")), "t.yaml:6:13: gpu.sm_count: expected an integer, got 'many'");
  EXPECT_EQ(error_of(gpu_with(6, "  sm_count: \"108\"")),
            "t.yaml:6:13: gpu.sm_count: expected an integer, got the string \"108\"");
  EXPECT_EQ(error_of(gpu_with(6, "  sm_count: 10.5")), "t.yaml:6:13: gpu.sm_count: expected an integer, got '10.5'");
  EXPECT_EQ(error_of(gpu_with(6, "  sm_count: [1, 2]")), "t.yaml:6:13: gpu.sm_count: expected an integer, got a list");
  EXPECT_EQ(error_of(gpu_with(3, "peak_fp32_gflops: fast")),
            "t.yaml:3:19: peak_fp32_gflops: expected a finite number, got 'fast'");
  EXPECT_EQ(error_of(gpu_with(1, "name: {a: 1}")), "t.yaml:1:7: name: expected a string, got a mapping");
  EXPECT_EQ(error_of(gpu_with(6, "  sm_count:")), "t.yaml:6:3: gpu.sm_count: expected a value, got nothing");
  // Out of range.
  EXPECT_EQ(error_of(gpu_with(6, "  sm_count: 0")), "t.yaml:6:13: gpu.sm_count: must be at least 1, got 0");
  EXPECT_EQ(error_of(gpu_with(6, "  sm_count: 99999999999999999999")),
            "t.yaml:6:13: gpu.sm_count: integer out of range: 99999999999999999999");
  EXPECT_EQ(error_of(gpu_with(4, "memory_bandwidth_gb_s: 0")),
            "t.yaml:4:24: memory_bandwidth_gb_s: must be greater than 0, got 0");
  // Missing figures.
  EXPECT_EQ(error_of(gpu_with(15, "")), "t.yaml:5:1: gpu.warp_size: missing required key");
  // l2_bytes is optional (files from before it existed): absent, it is 0 and plans prefetch nothing on that GPU.
  EXPECT_EQ(parse_target(gpu_with(16, ""), "t.yaml").gpu.l2_bytes, 0);
  EXPECT_EQ(error_of(gpu_with(3, "")), "t.yaml:1:1: peak_fp32_gflops: missing required key");
  EXPECT_EQ(error_of(gpu_with(1, "")), "t.yaml:2:1: name: missing required key");
  EXPECT_EQ(error_of(gpu_with(2, "")),
            "t.yaml:1:1: kind: missing required key (cpu or gpu; or name a built-in target as base)");
  EXPECT_EQ(error_of(gpu_with(1, "name: \"\"")), "t.yaml:1:7: name: must not be empty");
  // Kinds, bases and sections.
  EXPECT_EQ(error_of(gpu_with(2, "kind: tpu")), "t.yaml:2:7: kind: unknown target kind 'tpu' (known: cpu, gpu)");
  EXPECT_EQ(error_of(yaml({"name: x", "base: sm_70"})),
            "t.yaml:2:7: base: unknown target 'sm_70' (known: cpu, sm_80, sm_90)");
  EXPECT_EQ(error_of(yaml({"name: x", "base: sm_80", "kind: cpu"})),
            "t.yaml:3:7: kind: is cpu but base 'sm_80' is a gpu target");
  EXPECT_EQ(error_of(yaml({"name: x", "base: sm_80", "cpu:", "  cores: 2"})),
            "t.yaml:3:1: cpu: a gpu target has no cpu section");
  EXPECT_EQ(error_of(yaml({"name: x", "base: sm_80", "gpu: 12"})),
            "t.yaml:3:6: gpu: expected a mapping (keys: sm_count, max_threads_per_sm, max_threads_per_block, "
            "max_blocks_per_sm, registers_per_sm, registers_per_block, shared_memory_per_sm, shared_memory_per_block, "
            "shared_memory_per_block_optin, warp_size, l2_bytes), got '12'");
  // Limits that contradict each other.
  EXPECT_EQ(error_of(gpu_with(8, "  max_threads_per_block: 4096")),
            "t.yaml:8:26: gpu.max_threads_per_block: max_threads_per_block (4096) is above max_threads_per_sm (2048)");
  EXPECT_EQ(error_of(gpu_with(14, "  shared_memory_per_block_optin: 200000")),
            "t.yaml:14:34: gpu.shared_memory_per_block_optin: shared_memory_per_block_optin (200000) is above "
            "shared_memory_per_sm (167936)");
  EXPECT_EQ(error_of(yaml({"name: x", "base: sm_80", "gpu:", "  shared_memory_per_block_optin: 1024"})),
            "t.yaml:4:34: gpu.shared_memory_per_block_optin: shared_memory_per_block (49152) is above "
            "shared_memory_per_block_optin (1024)");
  EXPECT_EQ(error_of(gpu_with(15, "  warp_size: 24")), "t.yaml:15:14: gpu.warp_size: must be a power of two, got 24");
  EXPECT_EQ(error_of(yaml({"name: x", "base: cpu", "cpu:", "  cores: 4096"})),
            "t.yaml:4:10: cpu.cores: cores (4096) is above threads (" +
                std::to_string(find_target("cpu")->cpu.threads) + ")");
  EXPECT_EQ(error_of(yaml({"name: x", "base: cpu", "cpu:", "  simd_fp32_lanes: 6"})),
            "t.yaml:4:20: cpu.simd_fp32_lanes: must be a power of two, got 6");
  // The file as a whole.
  EXPECT_EQ(error_of(gpu_with(2, "kind: gpu\nkind: gpu")), "t.yaml:3:1: kind: duplicate key");
  EXPECT_EQ(error_of("name: [unclosed\n"), "t.yaml:2:1: invalid YAML: end of sequence flow not found");
  EXPECT_EQ(error_of("- name: x\n"),
            "t.yaml:1:1: expected a mapping of keys (name, base, kind, peak_fp32_gflops, memory_bandwidth_gb_s, gpu, "
            "cpu), got a list");
  EXPECT_EQ(error_of(""),
            "t.yaml:1:1: expected a mapping of keys (name, base, kind, peak_fp32_gflops, memory_bandwidth_gb_s, gpu, "
            "cpu), got nothing");
  EXPECT_EQ(error_of("name: a\n---\nname: b\n"), "t.yaml:3:1: expected one YAML document, found 2");
}

TEST(Target, LoadsFilesAndResolvesNames) {
  std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("ingot_target_test_" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  std::string path = (dir / "a100.yaml").string();
  std::ofstream(path) << yaml(gpu_lines());
  EXPECT_EQ(load_target(path).name, "my_gpu");
  EXPECT_EQ(resolve_target(path).name, "my_gpu");
  EXPECT_EQ(resolve_target("sm_90").name, "sm_90");
  try {
    load_target((dir / "missing.yaml").string());
    ADD_FAILURE() << "no error";
  } catch (const TargetError& e) {
    EXPECT_EQ(std::string(e.what()),
              (dir / "missing.yaml").string() + ":0:0: cannot open the file: No such file or directory");
    EXPECT_EQ(e.line(), 0);
  }
  try {
    resolve_target("sm_75");
    ADD_FAILURE() << "no error";
  } catch (const TargetError& e) {
    EXPECT_EQ(std::string(e.what()), "sm_75:0:0: neither a built-in target (cpu, sm_80, sm_90) nor a target file");
  }
  std::ofstream(path) << gpu_with(6, "  sm_count: -3");
  try {
    load_target(path);
    ADD_FAILURE() << "no error";
  } catch (const TargetError& e) {
    EXPECT_EQ(e.file(), path);
    EXPECT_EQ(e.line(), 6);
    EXPECT_EQ(e.column(), 13);
    EXPECT_EQ(e.key_path(), "gpu.sm_count");
    EXPECT_EQ(e.problem(), "must be at least 1, got -3");
  }
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace ingot
