// The root loop nest both schedule generators build: the decisions it writes for each part (Before/Expected), and
// that a nest with every part lowers and computes what the interpreter computes.
#include "space/root_loop_nest.h"

#include <gtest/gtest.h>

#include "interp/interpreter.h"
#include "lower/lower.h"
#include "runtime/local_run.h"
#include "workloads/examples.h"

namespace ingot {
namespace {

// C[i, j] = sum_k A[i, k] B[k, j], 64 x 32 x 16, with i split by 4, j by 16 and k by 4.
struct SplitMatmul {
  Program program = matmul(64, 32, 16);
  Tensor c = program.computes().back();
  std::string i = c->axes[0].name(), j = c->axes[1].name(), k = c->reduction()->axes[0].name();
  Schedule splits() const {
    Schedule s;
    s.split(c->name, i, 4);
    s.split(c->name, j, 16);
    s.split(c->name, k, 4);
    return s;
  }
};

// A nest with a part of each kind: i.o and j.o fused and parallel, k.o, i.i, k.i, and j.i vectorized.
RootLoopNest nest_of_every_part(const SplitMatmul& m) {
  RootLoopNest nest;
  nest.outer = {m.i + ".o", m.j + ".o"};
  nest.fused = 2;
  nest.parallel = true;
  nest.reduction_outer = {m.k + ".o"};
  nest.inner = {m.i + ".i"};
  nest.reduction_inner = {m.k + ".i"};
  nest.innermost = m.j + ".i";
  nest.innermost_kind = RootLoopNest::Innermost::kVectorized;
  return nest;
}

TEST(RootLoopNest, ArrangesThePartsInOrderAndFusesTheLeadingLoops) {
  SplitMatmul m;
  RootLoopNest nest = nest_of_every_part(m);
  nest.unroll_reduction_inner = true;
  Schedule s = m.splits();
  std::vector<std::string> outer = arrange_root_loop_nest(m.c->name, nest, s);
  mark_root_loop_nest(m.c->name, nest, s);

  const std::string fused = m.i + ".o+" + m.j + ".o";
  EXPECT_EQ(outer, std::vector<std::string>{fused});
  Schedule expected = m.splits();
  expected.reorder(m.c->name, {m.i + ".o", m.j + ".o", m.k + ".o", m.i + ".i", m.k + ".i", m.j + ".i"});
  expected.fuse(m.c->name, m.i + ".o", m.j + ".o");
  expected.parallel(m.c->name, fused);
  expected.vectorize(m.c->name, m.j + ".i");
  expected.unroll(m.c->name, m.k + ".i");
  EXPECT_EQ(s, expected) << s.to_json();
}

TEST(RootLoopNest, AVectorizedReductionUnrollsItsTileAndLeavesTheInnermostLoopPlain) {
  SplitMatmul m;
  RootLoopNest nest;
  nest.outer = {m.i + ".o"};
  nest.inner = {m.j + ".o", m.j + ".i"};
  nest.reduction_inner = {m.k + ".o", m.k + ".i"};
  nest.tile = {m.i + ".i"};
  nest.vectorize_reduction = true;
  nest.innermost_kind = RootLoopNest::Innermost::kVectorized;  // ignored: the reduction holds the vectors
  Schedule s = m.splits();
  EXPECT_EQ(arrange_root_loop_nest(m.c->name, nest, s), std::vector<std::string>{m.i + ".o"});
  mark_root_loop_nest(m.c->name, nest, s);

  Schedule expected = m.splits();
  expected.reorder(m.c->name, {m.i + ".o", m.j + ".o", m.j + ".i", m.k + ".o", m.k + ".i", m.i + ".i"});
  expected.vectorize(m.c->name, m.k + ".i");
  expected.unroll(m.c->name, m.i + ".i");
  EXPECT_EQ(s, expected) << s.to_json();
}

TEST(RootLoopNest, ASingleLoopIsNotReorderedAndAnUnsplitNestParallelizesItsFirstLoop) {
  Program p = matmul(8, 8, 8);
  Tensor c = p.computes().back();
  RootLoopNest nest;
  nest.inner = {c->axes[0].name()};
  nest.parallel = true;
  Schedule s;
  EXPECT_TRUE(arrange_root_loop_nest(c->name, nest, s).empty());
  Schedule expected;
  expected.parallel(c->name, c->axes[0].name());
  EXPECT_EQ(s, expected) << s.to_json();
}

TEST(RootLoopNest, TheArrangedNestComputesWhatTheInterpreterComputes) {
  SplitMatmul m;
  RootLoopNest nest = nest_of_every_part(m);
  Schedule s = m.splits();
  std::vector<std::string> outer = arrange_root_loop_nest(m.c->name, nest, s);
  s.cache_write(m.c->name, outer.back());
  mark_root_loop_nest(m.c->name, nest, s);
  EXPECT_NO_THROW(lower(m.program, s));

  TensorMap inputs = random_inputs(m.program, 1);
  LocalRunOptions options;
  options.warmup_runs = 0;
  options.min_repeat_ms = 0;
  options.min_repeats = 1;
  LocalRunResult r = local_run(m.program, s, inputs, interpret(m.program, inputs), options);
  for (const Comparison& check : r.checks) EXPECT_TRUE(check.ok) << check.message;
  EXPECT_TRUE(r.correct);
}

}  // namespace
}  // namespace ingot
