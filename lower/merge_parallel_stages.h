// Merges consecutive parallel stages of a kernel that run over the same parallel loops into one loop nest, when no
// iteration of a later stage reads what another iteration of an earlier one wrote: each thread then runs the
// stages' bodies back to back per iteration, the grid barriers between them go, and what one stage writes is still
// in cache when the next reads it. Runs on a lowered function for the CPU (codegen/pipeline.h, before print_cpp).
#pragma once

#include "ir/stmt.h"

namespace ingot {

// Merged: top-level stages in one kernel (no kernel barrier between), each an outermost chain of parallel loops
// with the same extents, such that every read of a buffer that an earlier merged stage writes is covered by that
// stage's writes in the same iteration of the chain (affine indices: the read's terms are the write's, with the
// same constant, over at most the write's extents). Stages that read nothing of each other merge too: lowering
// leaves no barrier between dependent stages, and merging keeps every stage's iterations in order. A stage that
// writes a buffer an earlier merged stage touches does not merge, nor does an independent stage (reading nothing
// the group wrote) when it and the group each stream an operand of 256 KB or more that the other does not read (the
// Q, K and V GEMMs of a layer: three weight tiles per iteration overflow the cache). A prefetch met after a group's
// last member is dropped when the next stage joins the group (the stage it was for now runs inside the group's loop),
// else it follows the group. Everything else is left as it is.
LoopFunction merge_parallel_stages(const LoopFunction& function);

}  // namespace ingot
