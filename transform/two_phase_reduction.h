// Two-phase reductions (rfactor): a reduction whose output is too small to fill the machine is split into a
// partial reduction with an extra spatial axis over chunks of one reduce axis, and a final reduction of the
// partials. Pure Program -> Program; the split tensor keeps its name, so readers and outputs are unchanged.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "analysis/program_analysis.h"
#include "analysis/target.h"
#include "ir/program.h"

namespace ingot {

// The reduce axis split_reduction splits: the one of largest extent, the outermost among equals (the most
// steps to share out, and on a tie the one whose chunks keep the inner axes' contiguous reads whole).
size_t split_axis(const ReduceNode& reduction);

// The partial tensor's name: tensor + "_partial".
std::string partial_name(const std::string& tensor);

// Rewrites T[i..] = combine_k body(k) (k the split_axis, extent K) as
//   T_partial[i.., ko] = combine_{ki, other reduce axes} body(ko * factor + ki)   (ko < ceil(K / factor))
//   T[i..] = combine_ko T_partial[i.., ko]
// guarding body with select(ko * factor + ki < K, body, identity) when factor does not divide K. New axes are
// named after k: "<k>_o" and "<k>_i" (renamed if taken). Throws std::invalid_argument naming the tensor when it
// is not a compute of the program, has no reduction, when factor is not in [1, K], or the partial name is taken.
Program split_reduction(const Program& program, const std::string& tensor, int64_t factor);

// split_reduction for several tensors at once (one rebuild of the program); throws as it does, and when a
// tensor is named twice.
Program split_reductions(const Program& program, const std::vector<std::pair<std::string, int64_t>>& splits);

struct TwoPhaseOptions {
  int64_t min_reduction = 64;  // the split axis's extent must reach this: two chunks of at least 32 steps
};

// Reductions worth splitting on target: a many-to-many TE (a reduction) whose split axis has at least
// options.min_reduction steps and whose output cannot fill the target on its own:
// - GPU: fewer output blocks (docs/plans.md: 1024 outputs per block of 256 threads) than SMs;
// - CPU: fewer output elements than cores x fp32 SIMD lanes (one vector per core).
// MMoE's gate and expert GEMVs and an LSTM's GEMVs at batch 1 are the typical picks on a GPU. Names in
// ProgramAnalysis::tes order.
std::vector<std::string> two_phase_candidates(const ProgramAnalysis& analysis, const Target& target,
                                              const TwoPhaseOptions& options = {});
bool is_two_phase_candidate(const TeAnalysis& te, const Target& target, const TwoPhaseOptions& options = {});

// A factor (chunk length) for a candidate: enough chunks that outputs x chunks fill the target as above, each
// chunk at least 32 steps (so the partial reduction still has work), at least 2 chunks; K itself when K < 64.
int64_t two_phase_factor(const TeAnalysis& te, const Target& target);

// Splits every candidate with its two_phase_factor, in one rebuild.
Program split_candidates(const Program& program, const Target& target, const TwoPhaseOptions& options = {});

}  // namespace ingot
