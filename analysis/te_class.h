// Souffle's classification of compute TEs: the dependence class (one-to-one, one-to-many, many-to-many,
// reorganize, shuffle) from how the TE reads its inputs, and compute- vs memory-intensive from arithmetic
// intensity against the target's roofline ridge. The rules are in docs/analysis.md.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "analysis/access.h"
#include "analysis/target.h"
#include "ir/program.h"

namespace ingot {

enum class TeClass : uint8_t { kOneToOne, kOneToMany, kManyToMany, kReorganize, kShuffle };
const char* te_class_name(TeClass c);  // "one-to-one", "one-to-many", "many-to-many", "reorganize", "shuffle"

// The first rule that holds: a reduction is many-to-many; a gather or non-affine read makes a shuffle; a
// remapped read a reorganize; a broadcast read one-to-many; otherwise (identity reads only, or no reads)
// one-to-one. accesses are analyze_accesses(compute).
TeClass classify_te(const Tensor& compute, const std::vector<TensorAccess>& accesses);
TeClass classify_te(const Tensor& compute);

enum class Intensity : uint8_t { kMemory, kCompute };
const char* intensity_name(Intensity i);  // "memory", "compute"

// FLOPs (ir/flops.h) per byte moved, where bytes are each input's footprint plus the output, each tensor
// counted once: the intensity with perfect on-chip reuse, an upper bound of what any schedule reaches.
double arithmetic_intensity(int64_t flops, int64_t bytes);
// Compute-intensive when the intensity reaches the target's ridge point (peak FLOP/s / bandwidth): with
// perfect reuse the TE could be compute-bound there; below it, it is memory-bound whatever the schedule.
Intensity classify_intensity(double arithmetic_intensity, const Target& target);

// One line per compute in topological order, "name: class (input: access, ...)", e.g.
// "D: one-to-many (C: identity, bias: broadcast)"; what tests and `ingot plan` show.
std::string format_te_classes(const Program& program);

}  // namespace ingot
