// A target description: the hardware figures the partitioner and the schedule rules may assume (GPU: SMs,
// threads, registers, shared memory; CPU: cores, SIMD width, caches; both: peak FLOP/s and bandwidth). Plain
// data: built-ins `sm_80`, `sm_90` and `cpu` (read from this machine), or loaded from YAML (docs/analysis.md).
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "ir/located_error.h"

namespace ingot {

enum class TargetKind : uint8_t { kCpu, kGpu };
const char* target_kind_name(TargetKind kind);  // "cpu", "gpu"

// Per-device limits of an NVIDIA GPU, as the CUDA programming guide's "technical specifications per compute
// capability" table and cudaDeviceProp name them. Sizes in bytes.
struct GpuLimits {
  int64_t sm_count = 0;
  int64_t max_threads_per_sm = 0;
  int64_t max_threads_per_block = 0;
  int64_t max_blocks_per_sm = 0;
  int64_t registers_per_sm = 0;     // 32-bit registers
  int64_t registers_per_block = 0;  // 32-bit registers
  int64_t shared_memory_per_sm = 0;
  int64_t shared_memory_per_block = 0;        // without opting in (static shared memory)
  int64_t shared_memory_per_block_optin = 0;  // with cudaFuncAttributeMaxDynamicSharedMemorySize
  int64_t warp_size = 0;
  int64_t l2_bytes = 0;  // the device-wide L2 cache, shared by all SMs; 0 = unknown (no next-stage prefetch)
  bool operator==(const GpuLimits&) const = default;
};

// The instruction set a CPU target's code is written for: the vectors its schedules plan with and the C++ printer
// writes (AVX-512: 16 fp32 lanes, 32 registers; AVX2 with FMA: 8 lanes, 16 registers; generic: whatever the compiler
// makes of plain loops, 4 lanes planned), and the compiler flags that select it. A target of another ISA than this
// machine's is compiled (and verified, where this CPU runs it) on this machine: both forms on one machine.
enum class CpuIsa : uint8_t { kGeneric, kAvx2, kAvx512 };
const char* cpu_isa_name(CpuIsa isa);  // "generic", "avx2", "avx512"
std::optional<CpuIsa> parse_cpu_isa(const std::string& name);
int64_t cpu_isa_lanes(CpuIsa isa);                 // fp32 lanes: 4, 8, 16
int64_t cpu_isa_vector_registers(CpuIsa isa);      // 16, 16, 32
CpuIsa cpu_isa_of_lanes(int64_t simd_fp32_lanes);  // 16: avx512, 8: avx2, else generic
// The ISA of this machine's CPU (AVX-512 needs F, BW, DQ, VL and CD: x86-64-v4), and whether it runs code of isa.
CpuIsa host_cpu_isa();
bool host_runs(CpuIsa isa);
// Whether this CPU has AVX-512 BF16 (vdpbf16ps: products of bf16 pairs added to f32), which precision: bf16 needs.
bool host_has_avx512_bf16();
// Whether this CPU has AMX's bf16 tiles (tdpbf16ps: Sapphire Rapids and later) and Linux lets this process use them
// (arch_prctl ARCH_REQ_XCOMP_PERM for the tile data, which this asks for). Generated code asks again before it uses
// them.
bool host_has_amx_bf16();

// A CPU as OpenMP code sees it. Cache sizes in bytes per core (L1d, L2) or per socket (L3; 0 = none).
struct CpuLimits {
  int64_t cores = 0;            // physical cores available to this process
  int64_t threads = 0;          // hardware threads available to this process
  int64_t simd_fp32_lanes = 0;  // fp32 lanes of the widest vector unit: 16 (AVX-512), 8 (AVX2), 4 (SSE, NEON)
  int64_t l1d_bytes = 0;
  int64_t l2_bytes = 0;
  int64_t l3_bytes = 0;
  CpuIsa isa = CpuIsa::kGeneric;  // agrees with simd_fp32_lanes (cpu_isa_of_lanes)
  // AMX's bf16 tiles (host_has_amx_bf16), on an avx512 target only: bf16 GEMM tiles then plan 16 rows, an AMX tile's.
  bool amx_bf16 = false;
  bool operator==(const CpuLimits&) const = default;
};

struct Target {
  std::string name;
  TargetKind kind = TargetKind::kCpu;
  double peak_fp32_gflops = 0;       // fp32 FLOP/s / 1e9 without tensor cores or AMX; an FMA counts 2
  double memory_bandwidth_gb_s = 0;  // DRAM bytes/s / 1e9
  GpuLimits gpu;                     // kind == kGpu only; zero otherwise
  CpuLimits cpu;                     // kind == kCpu only; zero otherwise
  bool operator==(const Target&) const = default;

  // FLOPs per DRAM byte at which the roofline turns from memory-bound to compute-bound.
  double ridge_flops_per_byte() const { return peak_fp32_gflops / memory_bandwidth_gb_s; }
};

// A mistake in a target file, located as ir/located_error.h says.
class TargetError : public LocatedError {
 public:
  using LocatedError::LocatedError;
};

// Names of the built-in targets: cpu, sm_80, sm_90.
std::vector<std::string> builtin_target_names();
// The built-in target of that name, or std::nullopt. "cpu" is read from this machine once per process.
std::optional<Target> find_target(const std::string& name);
// The CPU this process runs on: cores and threads it may use, SIMD width, caches, estimated peak (see
// docs/analysis.md for how each figure is found and estimated). Named "cpu".
Target detect_host_cpu();

// The CPU target t for code of another ISA: its lanes, and its peak scaled by them (half the lanes, half the FMAs a
// cycle); AMX only with AVX-512. Caches, cores and bandwidth stay.
Target with_cpu_isa(Target t, CpuIsa isa);

// What a bf16 program pads its 1 x 1 convolutions' input channels to (workloads/bf16_products.h): 32, the values of k
// one step of AMX's bf16 tiles takes (lower/vector_tiles.h, kAmxTileK), on a CPU target with AMX; else 2, no padding.
int64_t bf16_conv_channel_multiple(const Target& t);

// The compiler flags (g++ and clang) that select the target's ISA: "" where it is this machine's own (the compiler's
// default flags, -march=native, apply), else the x86-64 level that has it (x86-64-v3 for AVX2 and FMA, x86-64-v4 for
// AVX-512) tuned for this machine.
std::string cpu_isa_compiler_flags(CpuIsa isa);

// Parses a target from YAML (schema in docs/analysis.md); source_name names it in errors. Throws TargetError
// on unknown keys, wrong types, values out of range, missing figures, inconsistent limits (a per-block limit
// above its per-SM limit, ...) or an unknown base.
Target parse_target(const std::string& yaml_text, const std::string& source_name);
// Reads the file at path and parses it; throws TargetError as parse_target does and when it cannot be read.
Target load_target(const std::string& path);
// A built-in name, or else a path to a YAML file; throws TargetError (naming the built-ins) when neither.
Target resolve_target(const std::string& name_or_path);

// Every figure as YAML, in the schema's order: parse_target(format_target(t), ...) == t.
std::string format_target(const Target& target);

}  // namespace ingot
