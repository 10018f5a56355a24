// Ansor-style features of a lowered program for a learned cost model: one row per store of the loop IR (compute
// by kind, loop structure, memory accesses and reuse, arithmetic intensity, local buffers, target), identical
// stores merged. Use on any LoopFunction that follows docs/loop_semantics.md; docs/costmodel.md names every column.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "analysis/target.h"
#include "ir/stmt.h"

namespace ingot {

// Bump when the names, the order or the meaning of a feature change: models trained on another version are stale.
inline constexpr int kFeatureSetVersion = 3;

// The column names of StageFeatures::values, in order (docs/costmodel.md, "## Features").
const std::vector<std::string>& stage_feature_names();

// Figures of a compiled GPU kernel (from ptxas), when the caller has them.
struct CompiledKernelFigures {
  int64_t registers_per_thread = 0;
  int64_t shared_bytes_per_block = 0;
};

struct StageFeatures {
  std::string store;          // name of the buffer the stage's store writes (first instance)
  int64_t multiplicity = 1;   // how many identical stores (same computation up to buffer names) this row stands for
  std::vector<float> values;  // log2(1 + x) of each feature, in stage_feature_names() order
};

// One row per StoreNode of the function (identical ones merged, counted by multiplicity), in order of first
// appearance. Identical means the same computation up to the names of buffers and loop variables and the constant
// offset of each buffer's accesses: same shapes, scopes, extents, loop kinds, index structure, guards and stage
// context; a merged row holds its first instance's values, its position in the program included.
// kernel_figures: one per kernel of the function (GPU targets); empty means unknown and those features are 0.
// Throws std::invalid_argument when kernel_figures is neither empty nor one per kernel, or when an index uses a
// variable that no enclosing loop binds.
std::vector<StageFeatures> extract_stage_features(const LoopFunction& function, const Target& target,
                                                  const std::vector<CompiledKernelFigures>& kernel_figures = {});

}  // namespace ingot
