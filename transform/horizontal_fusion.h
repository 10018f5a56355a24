// Horizontal fusion at the TE level: independent computes of one output shape, dtype and reduction become one
// compute with a leading group axis g whose body picks member g's body; readers of member m read merged[m, ...].
// Pure Program -> Program; outputs and placeholders are unchanged. Rules and examples: docs/transforms.md.
#pragma once

#include <string>
#include <vector>

#include "ir/program.h"

namespace ingot {

// The merged tensor's name for a group: its first member's name + "_hmerge".
std::string horizontal_merge_name(const std::vector<std::string>& group);

// Merges each group (member names, merged in the order given) into one compute named horizontal_merge_name:
// shape [group size, member shape...], axes g then the first member's axis names (g renamed if it clashes),
// body select(g == 0, body0, select(g == 1, body1, ...)) with each member's axes renamed to the merged ones; a
// reduction keeps one reduce over the first member's reduce axes around the select. Throws std::invalid_argument
// naming the member and the reason when a group is not mergeable: fewer than two members, an unknown name, a
// placeholder, a repeated member, a program output (its name must stay a tensor of the program), a member of
// another group, a shape, dtype or reduction (combiner or reduce extents) unlike the first member's, a member
// that depends on another, two groups that each read the other's results, or a merged name already taken. All
// groups merge in one rebuild of the program.
Program merge_horizontal(const Program& program, const std::vector<std::vector<std::string>>& groups);

struct HorizontalGroupOptions {
  // Also require members to be connected through tensors they read in common (Q/K/V reading one hidden state,
  // MMoE gates reading one input); off, the rule is docs/plans.md's (depth, shape, reduction).
  bool require_common_input = false;
};

// Groups of reductions that merge_horizontal accepts, as docs/plans.md's `global` strategy pairs them: computes
// with a reduction, not program outputs, of the same TE depth (longest path from the inputs over computes, so
// members are independent), output shape, dtype, combiner and reduce extents; groups of two or more, members
// in topological order, groups ordered by their first member. Finds BERT's Q/K/V projections, an LSTM
// wavefront diagonal's wx and uh products and MMoE's task gates.
std::vector<std::vector<std::string>> find_horizontal_groups(const Program& program,
                                                             const HorizontalGroupOptions& options = {});

}  // namespace ingot
