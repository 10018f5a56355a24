// merge_parallel_stages: which consecutive parallel stages become one loop nest (Before/Expected loop IR), and that
// a merged program computes what the unmerged one does.
#include "lower/merge_parallel_stages.h"

#include <gtest/gtest.h>

#include "codegen/pipeline.h"
#include "compile/cpp_compiler.h"
#include "compile/kernel_module.h"
#include "tests/support/cpu_test_kernels.h"

namespace ingot {
namespace {

using cpu_test::global_buffer;

// A stage over `chunks` parallel iterations of 4 elements: out[p * 4 + i] = in[read(p, i)] * 2.
Stmt chunked(const Buffer& in, const Buffer& out, const std::string& name, int64_t chunks,
             const std::function<Expr(const Expr&, const Expr&)>& read) {
  Expr p = var(name + ".p"), i = var(name + ".i");
  return for_loop(p, chunks, LoopKind::kParallel,
                  for_loop(i, 4, LoopKind::kSerial, store(out, p * 4 + i, load(in, read(p, i)) * 2.0)));
}

Expr same_element(const Expr& p, const Expr& i) { return p * 4 + i; }

std::string merged(const LoopFunction& f) { return to_string(merge_parallel_stages(f)); }

// b reads only what the same iteration of a wrote: the barrier goes, the bodies share one loop (b's loop variable
// renamed to a's), and c, which reads a at its own elements too, joins as well.
TEST(MergeParallelStages, MergesStagesWhoseIterationsReadOnlyTheirOwnWrites) {
  Buffer x = global_buffer("x", {16}), a = global_buffer("a", {16}), b = global_buffer("b", {16}),
         c = global_buffer("c", {16});
  LoopFunction f{"chain",
                 {x},
                 {b, c},
                 {a},
                 seq({chunked(x, a, "A", 4, same_element), barrier(BarrierKind::kGrid),
                      chunked(a, b, "B", 4, same_element), chunked(a, c, "C", 4, same_element)})};
  EXPECT_EQ(merged(f), R"(func chain(x: f32[16]) -> (b: f32[16], c: f32[16]) {
  workspace a: f32[16]
  for A.p in 0..4 parallel {
    for A.i in 0..4 {
      a[((A.p * 4) + A.i)] = (x[((A.p * 4) + A.i)] * 2.0)
    }
    for B.i in 0..4 {
      b[((A.p * 4) + B.i)] = (a[((A.p * 4) + B.i)] * 2.0)
    }
    for C.i in 0..4 {
      c[((A.p * 4) + C.i)] = (a[((A.p * 4) + C.i)] * 2.0)
    }
  }
}
)");
}

// A chain fused from two loops indexes with `v / 4` and `v % 4` (BERT's FFN bias and its GELU, an EfficientNet
// convolution and its SiLU): the same non-affine term of the chain in the read and the write is the same element.
TEST(MergeParallelStages, TermsOfAFusedChainInReadAndWriteAreTheSameElement) {
  Buffer x = global_buffer("x", {64}), a = global_buffer("a", {64}), b = global_buffer("b", {64});
  auto fused = [](const std::string& name, const Buffer& in, const Buffer& out, bool shifted) {
    Expr p = var(name + ".p"), i = var(name + ".i");
    Expr element = (p / 4) * 4 + (p % 4) * 16 + i;
    Expr read = shifted ? (p % 4) * 4 + (p / 4) * 16 + i : element;  // another iteration's element
    return for_loop(p, 16, LoopKind::kParallel,
                    for_loop(i, 4, LoopKind::kSerial, store(out, element, load(in, read) * 2.0)));
  };
  LoopFunction f{
      "fused", {x}, {b}, {a}, seq({fused("A", x, a, false), barrier(BarrierKind::kGrid), fused("B", a, b, false)})};
  EXPECT_EQ(merged(f), R"(func fused(x: f32[64]) -> (b: f32[64]) {
  workspace a: f32[64]
  for A.p in 0..16 parallel {
    for A.i in 0..4 {
      a[((((A.p / 4) * 4) + ((A.p % 4) * 16)) + A.i)] = (x[((((A.p / 4) * 4) + ((A.p % 4) * 16)) + A.i)] * 2.0)
    }
    for B.i in 0..4 {
      b[((((A.p / 4) * 4) + ((A.p % 4) * 16)) + B.i)] = (a[((((A.p / 4) * 4) + ((A.p % 4) * 16)) + B.i)] * 2.0)
    }
  }
}
)");
  LoopFunction g{
      "swapped", {x}, {b}, {a}, seq({fused("A", x, a, false), barrier(BarrierKind::kGrid), fused("B", a, b, true)})};
  EXPECT_EQ(merged(g), to_string(g));
}

// A read of another iteration's element (reversed), a different parallel extent, or a stage that writes what the
// group reads: the barrier and the separate loops stay.
TEST(MergeParallelStages, KeepsStagesApartWhenAnIterationReadsAnothersWrites) {
  Buffer x = global_buffer("x", {16}), a = global_buffer("a", {16}), b = global_buffer("b", {16});
  auto reversed = [](const Expr& p, const Expr& i) { return Expr(15) - (p * 4 + i); };
  LoopFunction f{
      "reversed",
      {x},
      {b},
      {a},
      seq({chunked(x, a, "A", 4, same_element), barrier(BarrierKind::kGrid), chunked(a, b, "B", 4, reversed)})};
  EXPECT_EQ(merged(f), to_string(f));

  Expr p = var("B.p"), i = var("B.i");
  Stmt halves =
      for_loop(p, 2, LoopKind::kParallel, for_loop(i, 8, LoopKind::kSerial, store(b, p * 8 + i, load(a, p * 8 + i))));
  LoopFunction g{
      "other_extent", {x}, {b}, {a}, seq({chunked(x, a, "A", 4, same_element), barrier(BarrierKind::kGrid), halves})};
  EXPECT_EQ(merged(g), to_string(g));

  // The second stage reads x, which the first wrote in place: not an SSA pair, so not merged (the write-after-read
  // order across iterations could change).
  LoopFunction h{
      "in_place", {}, {a, x}, {}, seq({chunked(x, a, "A", 4, same_element), chunked(a, x, "B", 4, reversed)})};
  EXPECT_EQ(merged(h), to_string(h));
}

// A stage that reads what a stage outside the group wrote since the last barrier (here u, written just before the
// group started) keeps the barrier that ordered the two: the small LSTM went wrong without this rule.
TEST(MergeParallelStages, KeepsTheBarrierThatOrdersWritesFromOutsideTheGroup) {
  Buffer x = global_buffer("x", {16}), u = global_buffer("u", {16}), a = global_buffer("a", {16}),
         b = global_buffer("b", {16});
  Expr p = var("U.p"), i = var("U.i");
  Stmt halves =
      for_loop(p, 2, LoopKind::kParallel, for_loop(i, 8, LoopKind::kSerial, store(u, p * 8 + i, load(x, p * 8 + i))));
  Expr q = var("B.p"), j = var("B.i");
  Stmt reader =
      for_loop(q, 4, LoopKind::kParallel,
               for_loop(j, 4, LoopKind::kSerial, store(b, q * 4 + j, load(a, q * 4 + j) + load(u, q * 4 + j))));
  LoopFunction f{"outside",
                 {x},
                 {b},
                 {u, a},
                 seq({halves, chunked(x, a, "A", 4, same_element), barrier(BarrierKind::kGrid), reader})};
  EXPECT_EQ(merged(f), to_string(f));
}

// Writes are ordered too: a stage that writes what a stage outside the group still reads (x, read by C) keeps the
// barrier; so does a reader of a guarded write, whose guard may skip the element it reads.
TEST(MergeParallelStages, KeepsTheBarrierBeforeAWriteOfWhatOthersRead) {
  Buffer x = global_buffer("x", {16}), a = global_buffer("a", {16}), c = global_buffer("c", {16});
  Expr p = var("C.p"), i = var("C.i");
  Stmt reads_x = for_loop(p, 2, LoopKind::kParallel,
                          for_loop(i, 8, LoopKind::kSerial, store(c, p * 8 + i, load(x, 15 - p * 8 - i))));
  LoopFunction f{"write_after_read",
                 {},
                 {c, a, x},
                 {},
                 seq({reads_x, chunked(c, a, "A", 4, same_element), barrier(BarrierKind::kGrid),
                      chunked(a, x, "B", 4, same_element)})};
  EXPECT_EQ(merged(f), to_string(f));

  Expr q = var("G.p"), j = var("G.i");
  Stmt guarded = for_loop(
      q, 4, LoopKind::kParallel,
      for_loop(j, 4, LoopKind::kSerial, if_then_else(lt(q * 4 + j, 14), store(a, q * 4 + j, load(c, q * 4 + j)))));
  LoopFunction g{
      "guarded", {c}, {x}, {a}, seq({guarded, barrier(BarrierKind::kGrid), chunked(a, x, "B", 4, same_element)})};
  EXPECT_EQ(merged(g), to_string(g));
}

// The reader's element may sit at a constant offset inside the writer's iteration: a writer iteration that writes
// rows p * 4 + i of two 16-element halves (gates stacked in one tensor) covers a reader's p * 4 + i + 16.
TEST(MergeParallelStages, AnOffsetInsideTheWritersIterationIsCovered) {
  Buffer x = global_buffer("x", {32}), g = global_buffer("g", {32}), y = global_buffer("y", {16});
  Expr p = var("G.p"), q = var("G.q"), i = var("G.i");
  Stmt gates = for_loop(
      p, 4, LoopKind::kParallel,
      for_loop(q, 2, LoopKind::kSerial,
               for_loop(i, 4, LoopKind::kSerial, store(g, q * 16 + p * 4 + i, load(x, q * 16 + p * 4 + i) * 2.0))));
  Expr r = var("Y.p"), j = var("Y.i");
  Stmt cell =
      for_loop(r, 4, LoopKind::kParallel,
               for_loop(j, 4, LoopKind::kSerial, store(y, r * 4 + j, load(g, r * 4 + j) + load(g, r * 4 + j + 16))));
  LoopFunction f{"gates", {x}, {y}, {g}, seq({gates, barrier(BarrierKind::kGrid), cell})};
  std::string text = merged(f);
  EXPECT_EQ(text.find("barrier"), std::string::npos) << text;
  EXPECT_NE(text.find("y[((G.p * 4) + Y.i)] = (g[((G.p * 4) + Y.i)] + g[(((G.p * 4) + Y.i) + 16)])"), std::string::npos)
      << text;

  // Offset 32 is past the writer's second half: another iteration's (and here no) element.
  Stmt past = for_loop(r, 4, LoopKind::kParallel,
                       for_loop(j, 4, LoopKind::kSerial, store(y, r * 4 + j, load(g, (r * 4 + j + 20) % 32))));
  LoopFunction g2{"past", {x}, {y}, {g}, seq({gates, barrier(BarrierKind::kGrid), past})};
  EXPECT_EQ(merged(g2), to_string(g2));
}

// When a merged group dropped a barrier, a following stage that stays apart gets one before it: it may read what
// the group's first stages wrote, which the dropped barrier used to order. A kernel barrier ends a group.
TEST(MergeParallelStages, KeepsABarrierAfterAGroupThatDroppedOne) {
  Buffer x = global_buffer("x", {16}), a = global_buffer("a", {16}), b = global_buffer("b", {16}),
         c = global_buffer("c", {16}), d = global_buffer("d", {16});
  Expr p = var("D.p"), i = var("D.i");
  Stmt reader_of_a = for_loop(p, 2, LoopKind::kParallel,
                              for_loop(i, 8, LoopKind::kSerial, store(d, p * 8 + i, load(a, 15 - p * 8 - i))));
  LoopFunction f{
      "group_then_other",
      {x},
      {b, d, c},
      {a},
      seq({chunked(x, a, "A", 4, same_element), barrier(BarrierKind::kGrid), chunked(a, b, "B", 4, same_element),
           reader_of_a, barrier(BarrierKind::kKernel), chunked(x, c, "C", 4, same_element)})};
  std::string text = merged(f);
  size_t group = text.find("for A.p"), drop = text.find("barrier grid"), other = text.find("for D.p");
  ASSERT_NE(drop, std::string::npos) << text;
  EXPECT_LT(group, drop) << text;
  EXPECT_LT(drop, other) << text;
  EXPECT_NE(text.find("b[((A.p * 4) + B.i)]"), std::string::npos) << text;  // B merged into A's loop
  EXPECT_NE(text.find("barrier kernel"), std::string::npos) << text;
  EXPECT_NE(text.find("for C.p"), std::string::npos) << text;  // after the kernel barrier: its own loop
}

// The merged program, printed and run on the threads OpenMP gives it, computes what the stages compute apart.
// A prefetch for the stage after the barrier: when that stage joins the group it runs inside the group's loop, so
// the prefetch has nothing left to overlap and goes; when it stays apart, the prefetch follows the group, before
// the barrier.
TEST(MergeParallelStages, APrefetchGoesWithTheStageItServes) {
  Buffer x = global_buffer("x", {16}), w = global_buffer("w", {16}), a = global_buffer("a", {16}),
         b = global_buffer("b", {16});
  auto reversed = [](const Expr& p, const Expr& i) { return Expr(15) - (p * 4 + i); };
  // A, then a prefetch of w and a barrier, then B reading `second`'s element (p, i).
  auto with_prefetch = [&](const std::string& name, const Buffer& second,
                           const std::function<Expr(const Expr&, const Expr&)>& read) {
    return LoopFunction{name,
                        {x, w},
                        {b},
                        {a},
                        seq({chunked(x, a, "A", 4, same_element), prefetch(w), barrier(BarrierKind::kGrid),
                             chunked(second, b, "B", 4, read)})};
  };
  LoopFunction joins = with_prefetch("joins", w, same_element);
  std::string text = merged(joins);
  EXPECT_EQ(text.find("prefetch"), std::string::npos) << text;
  EXPECT_EQ(text.find("barrier"), std::string::npos) << text;
  LoopFunction apart = with_prefetch("apart", a, reversed);
  text = merged(apart);
  size_t fetch = text.find("prefetch w"), sync = text.find("barrier grid"), second = text.find("for B.p");
  ASSERT_NE(fetch, std::string::npos) << text;
  EXPECT_LT(text.find("for A.p"), fetch) << text;
  EXPECT_LT(fetch, sync) << text;
  EXPECT_LT(sync, second) << text;
}

// Independent stages that each stream their own large operand (two GEMMs with their own 256 KB weights) stay apart:
// merged, every iteration would hold a tile of both. Reading one shared large operand (the input projections of an
// LSTM layer: one W, a small x per step), they merge.
TEST(MergeParallelStages, IndependentStagesStreamingTheirOwnLargeOperandsStayApart) {
  const int64_t rows = 256, k = 256;  // 256 x 256 floats: 256 KB
  Buffer x = global_buffer("x", {k}), x2 = global_buffer("x2", {k}), w1 = global_buffer("w1", {rows, k}),
         w2 = global_buffer("w2", {rows, k}), y1 = global_buffer("y1", {rows}), y2 = global_buffer("y2", {rows});
  auto gemv = [&](const Buffer& w, const Buffer& in, const Buffer& out, const std::string& name) {
    Expr r = var(name + ".r"), j = var(name + ".k");
    return for_loop(
        r, w->shape[0], LoopKind::kParallel,
        seq({store(out, r, Expr(0.0)),
             for_loop(j, k, LoopKind::kSerial, store(out, r, load(out, r) + load(w, r * k + j) * load(in, j)))}));
  };
  LoopFunction own{"own_weights", {x, w1, w2}, {y1, y2}, {}, seq({gemv(w1, x, y1, "A"), gemv(w2, x, y2, "B")})};
  EXPECT_EQ(merged(own), to_string(own));
  LoopFunction shared{"shared_weight", {x, x2, w1}, {y1, y2}, {}, seq({gemv(w1, x, y1, "A"), gemv(w1, x2, y2, "B")})};
  std::string text = merged(shared);
  EXPECT_EQ(text.find("for B.r"), std::string::npos) << text;
  // A smaller weight (64 KB each) stays in cache: those merge.
  Buffer s1 = global_buffer("s1", {64, k}), s2 = global_buffer("s2", {64, k}), z1 = global_buffer("z1", {64}),
         z2 = global_buffer("z2", {64});
  LoopFunction small{"small_weights", {x, s1, s2}, {z1, z2}, {}, seq({gemv(s1, x, z1, "A"), gemv(s2, x, z2, "B")})};
  text = merged(small);
  EXPECT_EQ(text.find("for B.r"), std::string::npos) << text;
}

TEST(MergeParallelStages, MergedProgramComputesTheSameValues) {
  const int64_t n = 4096;
  Buffer x = global_buffer("x", {n}), a = global_buffer("a", {n}), b = global_buffer("b", {n}),
         c = global_buffer("c", {n});
  auto stage = [&](const Buffer& in, const Buffer& out, const std::string& name, double scale) {
    Expr p = var(name + ".p"), i = var(name + ".i");
    return for_loop(p, n / 64, LoopKind::kParallel,
                    for_loop(i, 64, LoopKind::kVectorized, store(out, p * 64 + i, load(in, p * 64 + i) * scale + 1.0)));
  };
  LoopFunction f{"three",
                 {x},
                 {c},
                 {a, b},
                 seq({stage(x, a, "A", 2.0), barrier(BarrierKind::kGrid), stage(a, b, "B", 3.0),
                      barrier(BarrierKind::kGrid), stage(b, c, "C", 0.5)})};
  std::string source = cpp_source(f).source;
  EXPECT_EQ(source.find("omp barrier"), std::string::npos) << source;
  KernelModule module(compile_cpp(source).path, f);
  HostTensor in(DType::kFloat32, {n}), out(DType::kFloat32, {n});
  for (int64_t i = 0; i < n; ++i) in.f32()[i] = float(i % 97) - 40.0f;
  module.run({&in}, {&out});
  for (int64_t i = 0; i < n; ++i) {
    float want = ((in.f32()[i] * 2.0f + 1.0f) * 3.0f + 1.0f) * 0.5f + 1.0f;
    ASSERT_EQ(out.f32()[i], want) << i;
  }
}

}  // namespace
}  // namespace ingot
