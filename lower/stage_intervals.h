// The stretches of a CPU function between its grid barriers, kernel by kernel, in the order they run: what
// `ingot run --profile` times one by one (the C++ printer's profile marks fall at their ends). Each with the buffers
// its stages store to, the float operations it executes and the bytes of the global buffers it touches. Use on what
// print_cpp prints (after merge_parallel_stages), which follows docs/loop_semantics.md.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ir/stmt.h"

namespace ingot {

struct StageInterval {
  size_t kernel = 0;                // index into kernel_bodies(f.body)
  std::vector<std::string> stores;  // global buffers stored to, in order of first store
  int64_t flops = 0;  // executed: each store's value counted by ir/flops.h's rules, times its loops' trip counts
  int64_t bytes = 0;  // sizes of the distinct global buffers loaded, stored or prefetched, each once
  bool operator==(const StageInterval&) const = default;
};

// Every interval of every kernel, in execution order: a kernel with b grid barriers at its top level (or inside its
// top-level allocations) has b + 1 intervals. A condition counts its larger branch.
std::vector<StageInterval> stage_intervals(const LoopFunction& f);

}  // namespace ingot
