// Mutations and crossover of schedules, the evolutionary search's moves (tuner/evolutionary_search.h): each changes one
// decision of a schedule, or mixes two schedules stage by stage, and returns only what lower() accepts. Pure functions
// of their arguments and the random engine's state; any thread may run them on its own engine (docs/schedules.md).
#pragma once

#include <optional>
#include <random>
#include <vector>

#include "ir/program.h"
#include "ir/schedule.h"

namespace ingot {

// What a mutation changes. Every kind works on the schedule with its explicit_vectors decisions stripped; the result
// gets them back from with_explicit_vectors (space/explicit_vectors.h), so a move that makes a register tile
// (in)eligible gains (loses) the decision. Stages are named by the compute they schedule.
//   kResplit: a split gets another inner extent. The extent E of the split loop at that decision is replayed from
//     the stage's domain (its compute's axes and reduce axes; for a stage computed at a reader, the region lowering
//     gives it) through the stage's splits and fuses before it (x by f: x.o = ceil(E / f), x.i = f; a, b fused: a+b
//     = Ea * Eb). An exact split takes another divisor d of E, 1 < d < E; a guarded one keeps its guard and takes
//     any other factor from 2 to E - 1 that divides E or is at most 64. Loop names stay, so later decisions (and
//     stages computed at x.o or x.i) still name loops; those that no longer fit (a later split of x.i that no longer
//     divides) make lowering refuse the draw.
//   kUnroll: an unroll decision is removed, or one is added (after the stage's last decision) on a loop that is
//     serial (no parallel, vectorize, unroll or bind decision) with extent 2 to 16.
//   kReorder: two adjacent loops of a reorder decision's list swap places.
//   kParallelGranularity: a `parallel` loop P loses or gains a fused loop. Drop: the fuse that made P (a, b -> a+b)
//     is removed, and every later reference to P names a instead (a reorder naming P names a, b). Grow: the loop N
//     after P at the parallel decision (spatial, not annotated, and split, annotated or fused by no later decision)
//     is fused into it just before the decision, and every later reference to P or N names P+N (a reorder naming
//     both names P+N once). References are the stage's own decisions (parallel, reorder, cache_write, cache_read)
//     and the compute_at decisions of stages computed at P (or N).
//   kCacheWrite: a reduction stage's cache_write is removed, or one is added (after its last decision) at its
//     parallel loop, else its innermost thread loop (GPU), else its outermost loop.
//   kComputeLocation: a stage computed at a reader's loop moves to another loop of that reader's nest (any but a
//     vectorized one); stages computed at the root (or inlined) have no such move.
//   kSplit: a new tile level: `split x by d` is inserted for a loop x the stage has at some point of its replay (an
//     axis, or a part of a split) that is serial or a reduction, not annotated, neither made by a fuse nor split by a
//     later decision, with extent E >= 4 and d a divisor, 1 < d < E (half the time drawn among 2, 4 and 8 where one
//     divides). It goes right after the split that made x (for an axis: at the stage's first decision). Later
//     decisions follow: a reorder names x.o, x.i in x's place; an unroll or vectorize of x names x.i; anything else
//     (a fuse, parallel, cache_write, cache_read, bind, and a compute_at at x) names x.o, and a loop a later fuse (or
//     a split of it) made from x is renamed with it (a+x -> a+x.o). Half the time the tile variant also moves x.i to
//     the innermost position before the stage's vectorized loop (the last when there is none; within the reorder
//     lists naming it, else by a reorder of all the stage's loops before its first later fuse) and unrolls it when
//     d <= 16: a GEMM's `reorder C [i, j.o, k, j.i]; fuse C [i, j.o]` becomes the 2-D register tile `split C [i] by 4;
//     reorder C [i.o, j.o, k, i.i, j.i]; fuse C [i.o, j.o]; ...; unroll C [i.i]`. A move is one loop; its factor and
//     variant are drawn when it is tried.
//   kVectorAxis: a stage's vectorize decision is removed, or the stage vectorizes another loop instead: a spatial
//     loop of its final replay that no decision annotates, of at least 4 iterations. Its vectorize decisions go, and
//     `reorder` (the loops after x, then x; none when x is innermost) and `vectorize x` follow its last decision.
//     The fixed schedules vectorize the innermost axis along memory; this move reaches the other axes.
// GPU schedules (those with a bind decision) get no explicit_vectors; kParallelGranularity and kVectorAxis never apply
// to them.
enum class MutationKind {
  kResplit,
  kUnroll,
  kReorder,
  kParallelGranularity,
  kCacheWrite,
  kComputeLocation,
  kSplit,
  kVectorAxis
};
const char* mutation_kind_name(MutationKind);  // "resplit", "unroll", ..., "split", "vector_axis"
std::vector<MutationKind> all_mutation_kinds();

struct MutationOptions {
  // The target's; register tiles that qualify get explicit_vectors at 16 (space/explicit_vectors.h).
  int simd_fp32_lanes = 16;
  // Draws tried before giving up: moves of one kind (mutate), children (crossover).
  int max_attempts = 8;
};

// One random mutation of a kind drawn uniformly among those that apply; nullopt when none gave a schedule lower()
// accepts that differs from `schedule`. A kind whose draws all fail is set aside and another applicable kind is drawn.
std::optional<Schedule> mutate(const Program& program, const Schedule& schedule, std::mt19937_64& rng,
                               const MutationOptions& options = {});
// One random mutation of the given kind: up to max_attempts of its possible moves, drawn without repetition; nullopt
// when the kind does not apply to the schedule or no draw gave a schedule that lowers and differs from `schedule`.
std::optional<Schedule> mutate(const Program& program, const Schedule& schedule, MutationKind kind,
                               std::mt19937_64& rng, const MutationOptions& options = {});
// A schedule with batch decisions (ir/horizontal_batch.h) mutates, and crosses over, as a schedule of the batched
// program, keeping its batch decisions.
// A child taking each stage's decisions from a or b at random (a's layout; nullopt when the layouts or the batch
// decisions differ or no valid, new child was found in max_attempts draws). Only stages whose decisions differ between
// a and b are drawn, and a child is never a or b; the child's decisions are grouped per stage, stages in the order a
// names them first (then b's others).
std::optional<Schedule> crossover(const Program& program, const Schedule& a, const Schedule& b, std::mt19937_64& rng,
                                  const MutationOptions& options = {});

}  // namespace ingot
