// Fixed CPU targets for tests: what a test expects must not depend on the machine it runs on (AVX2-only Zen 3,
// AVX-512 Zen 4 and Sapphire Rapids all run the suite). Generated code for an AVX-512 target still compiles and
// runs on an AVX2 machine: the printer guards its explicit 16-lane forms with `#if defined(__AVX512F__)`, and its
// 8-lane ones with `#if defined(__AVX2__) && defined(__FMA__)`.
#pragma once

#include "analysis/target.h"

namespace ingot::test_support {

// A 2-core AVX-512 CPU with Zen 4's caches (16 fp32 lanes, 32 KB L1d, 1 MB L2 per core, 32 MB L3).
inline Target avx512_cpu() {
  Target t;
  t.name = "cpu";
  t.kind = TargetKind::kCpu;
  t.peak_fp32_gflops = 234;
  t.memory_bandwidth_gb_s = 35;
  t.cpu = CpuLimits{2, 2, 16, 32 * 1024, 1024 * 1024, 32 * 1024 * 1024, CpuIsa::kAvx512};
  return t;
}

// The same machine with AVX2 only (8 fp32 lanes) and Zen 3's 512 KB L2.
inline Target avx2_cpu() {
  Target t = avx512_cpu();
  t.peak_fp32_gflops = 117;
  t.cpu.simd_fp32_lanes = 8;
  t.cpu.isa = CpuIsa::kAvx2;
  t.cpu.l2_bytes = 512 * 1024;
  return t;
}

}  // namespace ingot::test_support
