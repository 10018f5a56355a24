// Vertical fusion at the TE level: a non-reduction compute is substituted into its readers' bodies (its reads
// become index expressions over its own inputs) and disappears from the program. Pure Program -> Program;
// outputs and placeholders keep their names, shapes and values. Rules and examples: docs/transforms.md.
#pragma once

#include <string>
#include <vector>

#include "ir/program.h"

namespace ingot {

struct VerticalFusionOptions {
  bool fold_data_movement = true;  // FLOPs-0 TEs (transpose, reshape, slice, pad, fills) into every reader
  bool fold_arithmetic = true;     // element-wise epilogues into a sole, non-reduction reader
};

struct FoldReport {
  std::vector<std::string> folded;  // the tensors substituted away, in topological order
};

// Folds, in topological order, each compute that is not a program output and not a reduction:
// - one doing no arithmetic (ir/flops.h: 0 FLOPs per element once its own producers are folded in) into every
//   reader, reductions included: a transpose or pad becomes the reduction's load index;
// - one doing arithmetic only when exactly one compute reads it, that reader is not a reduction, has no more
//   elements than it, and every read site reads the same element (so nothing is recomputed per reduction step,
//   per broadcast copy or per stencil tap: an epilogue chain after a matmul becomes one element-wise TE).
// Indices of folded reads are simplified with the reader's axis ranges. report, when given, lists the folds.
Program fold_vertical(const Program& program, const VerticalFusionOptions& options = {}, FoldReport* report = nullptr);

// The names fold_vertical would fold, in topological order.
std::vector<std::string> vertical_fold_candidates(const Program& program, const VerticalFusionOptions& options = {});

}  // namespace ingot
