// Lowering: one Before/Expected test per schedule primitive (printed loop IR, which the loop-IR verifier accepts),
// and must-fail tests for invalid decisions matched on their message.
#include "lower/lower.h"

#include <gtest/gtest.h>

#include "lower/verify_loop_function.h"
#include "workloads/examples.h"

namespace ingot {
namespace {

Program small_matmul() { return matmul(8, 6, 4); }

Program elementwise() {
  Tensor A = placeholder("A", {4, 6});
  Tensor B = compute("B", {4, 6}, [&](const std::vector<Expr>& i) { return A(i[0], i[1]) * 2.0; });
  Tensor C = compute("C", {4, 6}, [&](const std::vector<Expr>& i) { return B(i[0], i[1]) + 1.0; });
  return Program({C}, "chain");
}

// The lowered function's IR; it must keep the contract of docs/loop_semantics.md.
std::string lowered(const Program& p, const Schedule& s) {
  LoopFunction f = lower(p, s);
  EXPECT_EQ(loop_function_problems(f), std::vector<std::string>{}) << to_string(f);
  return to_string(f);
}

void expect_schedule_error(const Program& p, const Schedule& s, const std::string& fragment) {
  try {
    lower(p, s);
    FAIL() << "expected a ScheduleError containing: " << fragment;
  } catch (const ScheduleError& e) {
    EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << "message: " << e.what();
  }
}

TEST(Lower, DefaultScheduleIsOneNestPerCompute) {
  EXPECT_EQ(lowered(small_matmul(), Schedule()), R"(func matmul(A: f32[8, 4], B: f32[4, 6]) -> (C: f32[8, 6]) {
  for C.i in 0..8 {
    for C.j in 0..6 {
      C[((C.i * 6) + C.j)] = 0.0
      for C.k in 0..4 {
        C[((C.i * 6) + C.j)] = (C[((C.i * 6) + C.j)] + (A[((C.i * 4) + C.k)] * B[(C.j + (C.k * 6))]))
      }
    }
  }
}
)");
}

TEST(Lower, Split) {
  EXPECT_EQ(lowered(small_matmul(), Schedule().split("C", "i", 4)),
            R"(func matmul(A: f32[8, 4], B: f32[4, 6]) -> (C: f32[8, 6]) {
  for C.i.o in 0..2 {
    for C.i.i in 0..4 {
      for C.j in 0..6 {
        C[(((C.i.i * 6) + (C.i.o * 24)) + C.j)] = 0.0
        for C.k in 0..4 {
          C[(((C.i.i * 6) + (C.i.o * 24)) + C.j)] = (C[(((C.i.i * 6) + (C.i.o * 24)) + C.j)] + (A[(((C.i.i * 4) + (C.i.o * 16)) + C.k)] * B[(C.j + (C.k * 6))]))
        }
      }
    }
  }
}
)");
}

TEST(Lower, SplitWithGuardedTail) {
  EXPECT_EQ(lowered(small_matmul(), Schedule().split("C", "j", 4, SplitTail::kGuard)),
            R"(func matmul(A: f32[8, 4], B: f32[4, 6]) -> (C: f32[8, 6]) {
  for C.i in 0..8 {
    for C.j.o in 0..2 {
      for C.j.i in 0..4 {
        if ((C.j.i + (C.j.o * 4)) < 6) {
          C[(((C.i * 6) + C.j.i) + (C.j.o * 4))] = 0.0
        }
        for C.k in 0..4 {
          if ((C.j.i + (C.j.o * 4)) < 6) {
            C[(((C.i * 6) + C.j.i) + (C.j.o * 4))] = (C[(((C.i * 6) + C.j.i) + (C.j.o * 4))] + (A[((C.i * 4) + C.k)] * B[((C.j.i + (C.j.o * 4)) + (C.k * 6))]))
          }
        }
      }
    }
  }
}
)");
}

// A shifted tail: 6 columns in blocks of 4 are the block at 0 and the block at 2, which overlaps it and computes
// columns 2 and 3 again. The last block is peeled off the loop, so every block is whole and its indices affine.
TEST(Lower, SplitWithShiftedTail) {
  EXPECT_EQ(lowered(small_matmul(), Schedule().split("C", "j", 4, SplitTail::kShift)),
            R"(func matmul(A: f32[8, 4], B: f32[4, 6]) -> (C: f32[8, 6]) {
  for C.i in 0..8 {
    for C.j.o in 0..1 {
      for C.j.i in 0..4 {
        C[((C.i * 6) + C.j.i)] = 0.0
        for C.k in 0..4 {
          C[((C.i * 6) + C.j.i)] = (C[((C.i * 6) + C.j.i)] + (A[((C.i * 4) + C.k)] * B[(C.j.i + (C.k * 6))]))
        }
      }
    }
    for C.j.i in 0..4 {
      C[(((C.i * 6) + C.j.i) + 2)] = 0.0
      for C.k in 0..4 {
        C[(((C.i * 6) + C.j.i) + 2)] = (C[(((C.i * 6) + C.j.i) + 2)] + (A[((C.i * 4) + C.k)] * B[((C.j.i + (C.k * 6)) + 2)]))
      }
    }
  }
}
)");
  // Where the factor divides, a shifted tail is an exact split.
  EXPECT_EQ(lowered(small_matmul(), Schedule().split("C", "i", 4, SplitTail::kShift)),
            lowered(small_matmul(), Schedule().split("C", "i", 4)));
}

// The blocks of a shifted tail overlap: the loop that lowering peels must stay serial and whole, a reduction's blocks
// must each start their sums, and a reduction axis cannot be shifted.
TEST(Lower, AShiftedTailRejectsWhatWouldComputeItsOverlapWrongly) {
  const Program p = small_matmul();
  expect_schedule_error(p, Schedule().split("C", "k", 3, SplitTail::kShift), "would sum them twice");
  expect_schedule_error(
      p, Schedule().split("C", "j", 4, SplitTail::kShift).reorder("C", {"j.o", "i"}).parallel("C", "j.o"),
      "it cannot be parallel");
  expect_schedule_error(p, Schedule().split("C", "j", 4, SplitTail::kShift).reorder("C", {"k", "j.o"}),
                        "inside a reduction loop");
  expect_schedule_error(
      p, Schedule().split("C", "j", 4, SplitTail::kShift).reorder("C", {"j.i", "i", "j.o"}).parallel("C", "j.i"),
      "runs the blocks of a shifted tail ('j') in parallel");
  expect_schedule_error(p, Schedule().split("C", "j", 4, SplitTail::kShift).cache_write("C", "i"),
                        "cache_write at 'i' holds the blocks of the shifted tail of 'j'");
  expect_schedule_error(p, Schedule().split("C", "j", 4, SplitTail::kShift).fuse("C", "i", "j.o"),
                        "it cannot be fused");
  expect_schedule_error(p, Schedule().split("C", "i", 3, SplitTail::kShift).split("C", "i.o", 2), "it cannot be split");
  expect_schedule_error(p, Schedule().split("C", "j", 7, SplitTail::kShift), "exceeds the extent");
}

TEST(Lower, Reorder) {
  EXPECT_EQ(lowered(small_matmul(), Schedule().reorder("C", {"k", "i"})),
            R"(func matmul(A: f32[8, 4], B: f32[4, 6]) -> (C: f32[8, 6]) {
  for C.j in 0..6 {
    for C.i in 0..8 {
      C[((C.i * 6) + C.j)] = 0.0
    }
  }
  for C.k in 0..4 {
    for C.j in 0..6 {
      for C.i in 0..8 {
        C[((C.i * 6) + C.j)] = (C[((C.i * 6) + C.j)] + (A[((C.i * 4) + C.k)] * B[(C.j + (C.k * 6))]))
      }
    }
  }
}
)");
}

TEST(Lower, FuseThenParallel) {
  EXPECT_EQ(lowered(elementwise(), Schedule().compute_inline("B").fuse("C", "i", "j").parallel("C", "i+j")),
            R"(func chain(A: f32[4, 6]) -> (C: f32[4, 6]) {
  for C.i+j in 0..24 parallel {
    C[C.i+j] = ((A[C.i+j] * 2.0) + 1.0)
  }
}
)");
}

TEST(Lower, VectorizeAndUnroll) {
  EXPECT_EQ(lowered(small_matmul(), Schedule().reorder("C", {"i", "k", "j"}).vectorize("C", "j").unroll("C", "k")),
            R"(func matmul(A: f32[8, 4], B: f32[4, 6]) -> (C: f32[8, 6]) {
  for C.i in 0..8 {
    for C.j in 0..6 vectorized {
      C[((C.i * 6) + C.j)] = 0.0
    }
    for C.k in 0..4 unrolled {
      for C.j in 0..6 vectorized {
        C[((C.i * 6) + C.j)] = (C[((C.i * 6) + C.j)] + (A[((C.i * 4) + C.k)] * B[(C.j + (C.k * 6))]))
      }
    }
  }
}
)");
}

// The innermost reduction loop may be vectorized: the C++ printer makes it a simd reduction (reassociated).
TEST(Lower, VectorizeTheInnermostReductionAxis) {
  EXPECT_EQ(lowered(small_matmul(), Schedule().vectorize("C", "k")),
            R"(func matmul(A: f32[8, 4], B: f32[4, 6]) -> (C: f32[8, 6]) {
  for C.i in 0..8 {
    for C.j in 0..6 {
      C[((C.i * 6) + C.j)] = 0.0
      for C.k in 0..4 vectorized {
        C[((C.i * 6) + C.j)] = (C[((C.i * 6) + C.j)] + (A[((C.i * 4) + C.k)] * B[(C.j + (C.k * 6))]))
      }
    }
  }
}
)");
}

// A register tile: unrolled spatial loops may sit inside the vectorized reduction loop (one accumulator each in the
// C++ printer); a serial spatial loop there may not.
TEST(Lower, VectorizedReductionAroundAnUnrolledTile) {
  EXPECT_EQ(
      lowered(
          small_matmul(),
          Schedule().split("C", "j", 3).reorder("C", {"i", "j.o", "k", "j.i"}).vectorize("C", "k").unroll("C", "j.i")),
      R"(func matmul(A: f32[8, 4], B: f32[4, 6]) -> (C: f32[8, 6]) {
  for C.i in 0..8 {
    for C.j.o in 0..2 {
      for C.j.i in 0..3 unrolled {
        C[(((C.i * 6) + C.j.i) + (C.j.o * 3))] = 0.0
      }
      for C.k in 0..4 vectorized {
        for C.j.i in 0..3 unrolled {
          C[(((C.i * 6) + C.j.i) + (C.j.o * 3))] = (C[(((C.i * 6) + C.j.i) + (C.j.o * 3))] + (A[((C.i * 4) + C.k)] * B[((C.j.i + (C.j.o * 3)) + (C.k * 6))]))
        }
      }
    }
  }
}
)");
  expect_schedule_error(small_matmul(), Schedule().reorder("C", {"i", "k", "j"}).vectorize("C", "k"),
                        "or a loop with only unrolled spatial loops inside: a reduction loop");
}

// A bf16 stage without reduction may vectorize a loop around unrolled spatial loops: each lane writes their elements
// (a tensor of bf16 pairs writes a pixel's two channels side by side). An f32 one may not.
TEST(Lower, VectorizedSpatialLoopAroundUnrolledLoops) {
  Tensor x = placeholder("x", {4, 6});
  Tensor pairs = compute("pairs", {2, 6, 2}, [&](const std::vector<Expr>& i) {
    return cast(DType::kBFloat16, x(i[0] * int64_t(2) + i[2], i[1]));
  });
  EXPECT_EQ(lowered(Program({pairs}, "pairs"), Schedule().vectorize("pairs", "j").unroll("pairs", "l")),
            R"(func pairs(x: f32[4, 6]) -> (pairs: bf16[2, 6, 2]) {
  for pairs.i in 0..2 {
    for pairs.j in 0..6 vectorized {
      for pairs.l in 0..2 unrolled {
        pairs[(((pairs.i * 12) + (pairs.j * 2)) + pairs.l)] = bf16(x[(((pairs.i * 12) + pairs.j) + (pairs.l * 6))])
      }
    }
  }
}
)");
  expect_schedule_error(small_matmul(), Schedule().split("C", "j", 3).vectorize("C", "j.o").unroll("C", "j.i"),
                        "vectorized loop 'j.o' must be the innermost loop");
  Tensor f32_pairs =
      compute("f32_pairs", {2, 6, 2}, [&](const std::vector<Expr>& i) { return x(i[0] * int64_t(2) + i[2], i[1]); });
  expect_schedule_error(Program({f32_pairs}, "f32_pairs"),
                        Schedule().vectorize("f32_pairs", "j").unroll("f32_pairs", "l"),
                        "vectorized loop 'j' must be the innermost loop");
}

// A GEMV's register tile of four rows in explicit vectors: the decision marks the vectorized reduction loop, and
// lowering checks that the loop holds a tile the printer can compute in vectors.
// y[i, j] = sum_k A[i, k] W[j, k]: both operands move along k by one element.
Program dot_products(int64_t rows, int64_t cols, int64_t depth) {
  Tensor A = placeholder("A", {rows, depth}), W = placeholder("W", {cols, depth});
  IterVar k = reduce_axis(depth, "k");
  Tensor C =
      compute("C", {rows, cols}, [&](const std::vector<Expr>& i) { return sum(A(i[0], k.var) * W(i[1], k.var), {k}); });
  return Program({C}, "dot_products");
}

TEST(Lower, ExplicitVectorsMarkARegisterTile) {
  Program gemv = dot_products(8, 4, 32);
  Schedule tile = Schedule().reorder("C", {"i", "k", "j"}).vectorize("C", "k").unroll("C", "j");
  EXPECT_NE(
      lowered(gemv, Schedule(tile).explicit_vectors("C", "k", 16)).find("for C.k in 0..32 vectorized explicit(16) {"),
      std::string::npos);
  EXPECT_NE(
      lowered(gemv, Schedule(tile).explicit_vectors("C", "k", 8)).find("for C.k in 0..32 vectorized explicit(8) {"),
      std::string::npos);
  expect_schedule_error(
      gemv, Schedule(tile).explicit_vectors("C", "k", 4),
      "explicit vectors of 4 lanes: the C++ printer writes 16-lane (AVX-512) and 8-lane (AVX2) vectors only");
  expect_schedule_error(gemv, Schedule().explicit_vectors("C", "k", 16),
                        "stage 'C': loop 'k' has explicit vectors but is serial; vectorize it");
  expect_schedule_error(gemv, Schedule().explicit_vectors("C", "k", 16).split("C", "k", 4),
                        "loop 'k' already has explicit vectors; split it first");
  // Two rows are too few accumulators for vectors (the simd reduction is faster): refused once lowered.
  expect_schedule_error(dot_products(8, 2, 32), Schedule(tile).explicit_vectors("C", "k", 16),
                        "explicit_vectors: loop 'C.k' holds no register tile that explicit vectors of 16 lanes can "
                        "compute");
}

TEST(Lower, ComputeInline) {
  EXPECT_EQ(lowered(elementwise(), Schedule().compute_inline("B")), R"(func chain(A: f32[4, 6]) -> (C: f32[4, 6]) {
  for C.i in 0..4 {
    for C.j in 0..6 {
      C[((C.i * 6) + C.j)] = ((A[((C.i * 6) + C.j)] * 2.0) + 1.0)
    }
  }
}
)");
}

TEST(Lower, ComputeAt) {
  EXPECT_EQ(lowered(elementwise(), Schedule().split("C", "j", 3).compute_at("B", "C", "j.o")),
            R"(func chain(A: f32[4, 6]) -> (C: f32[4, 6]) {
  for C.i in 0..4 {
    for C.j.o in 0..2 {
      alloc B: f32[1, 3] local {
        for B.i in 0..1 {
          for B.j in 0..3 {
            B[B.j] = (A[((B.j + (C.i * 6)) + (C.j.o * 3))] * 2.0)
          }
        }
        for C.j.i in 0..3 {
          C[(((C.i * 6) + C.j.i) + (C.j.o * 3))] = (B[C.j.i] + 1.0)
        }
      }
    }
  }
}
)");
}

// A stage read by two stages computed at the same loop: a softmax's row maximum, read by its sum and its output
// (through the exponential, inlined), lives inside each row of the output beside the sum, which follows it; its
// region covers both readers' reads.
TEST(Lower, ComputeAtBesideAnotherReaderAtTheSameLoop) {
  EXPECT_EQ(lowered(softmax(4, 6),
                    Schedule().compute_inline("e").compute_at("row_max", "Y", "i").compute_at("row_sum", "Y", "i")),
            R"(func softmax(X: f32[4, 6]) -> (Y: f32[4, 6]) {
  for Y.i in 0..4 {
    alloc row_max: f32[1] local {
      for row_max.i in 0..1 {
        row_max[0] = -inf
        for row_max.k in 0..6 {
          row_max[0] = max(row_max[0], X[((Y.i * 6) + row_max.k)])
        }
      }
      alloc row_sum: f32[1] local {
        for row_sum.i in 0..1 {
          row_sum[0] = 0.0
          for row_sum.k in 0..6 {
            row_sum[0] = (row_sum[0] + exp((X[((Y.i * 6) + row_sum.k)] - row_max[0])))
          }
        }
        for Y.j in 0..6 {
          Y[((Y.i * 6) + Y.j)] = (exp((X[((Y.i * 6) + Y.j)] - row_max[0])) / row_sum[0])
        }
      }
    }
  }
}
)");
}

// The region of a stage computed beside another reader covers both readers' reads: Y reads one element of each row
// of P, the row sum A the whole row.
TEST(Lower, ComputeAtBesideAnotherReaderCoversBothReadersRegions) {
  Tensor X = placeholder("X", {4, 6});
  Tensor P = compute("P", {4, 6}, [&](const std::vector<Expr>& i) { return X(i[0], i[1]) * 2.0; });
  IterVar k = reduce_axis(6, "k");
  Tensor A = compute("A", {4}, [&](const std::vector<Expr>& i) { return sum(P(i[0], k.var), {k}); });
  Tensor Y = compute("Y", {4, 6}, [&](const std::vector<Expr>& i) { return P(i[0], Expr(int64_t(0))) + A(i[0]); });
  const std::string lowered_ir =
      lowered(Program({Y}, "row"), Schedule().compute_at("P", "Y", "i").compute_at("A", "Y", "i"));
  EXPECT_NE(lowered_ir.find("alloc P: f32[1, 6] local"), std::string::npos) << lowered_ir;
}

// A stage computed at a reader whose vectorized loop moves along the same dimension as its own, and not its last,
// lays its buffer out with that dimension innermost (a channel tile under an epilogue along the channels): B's
// [1, 4, 6] region is stored [1][6][4], where both loops read and write whole vectors. A reader vectorized along l
// keeps B in order.
TEST(Lower, ALocalBufferLaysOutInnermostTheDimensionBothVectorsMoveAlong) {
  Tensor A = placeholder("A", {2, 4, 6});
  Tensor B = compute("B", {2, 4, 6}, [&](const std::vector<Expr>& i) { return A(i[0], i[1], i[2]) * 2.0; });
  Tensor C = compute("C", {2, 4, 6}, [&](const std::vector<Expr>& i) { return B(i[0], i[1], i[2]) + 1.0; });
  Program p({C}, "planes");
  Schedule along_i = Schedule()
                         .reorder("C", {"i", "l", "j"})
                         .vectorize("C", "j")
                         .compute_at("B", "C", "i")
                         .reorder("B", {"i", "l", "j"})
                         .vectorize("B", "j");
  EXPECT_EQ(lowered(p, along_i), R"(func planes(A: f32[2, 4, 6]) -> (C: f32[2, 4, 6]) {
  for C.i in 0..2 {
    alloc B: f32[1, 6, 4] local {
      for B.i in 0..1 {
        for B.l in 0..6 {
          for B.j in 0..4 vectorized {
            B[(B.j + (B.l * 4))] = (A[(((B.j * 6) + B.l) + (C.i * 24))] * 2.0)
          }
        }
      }
      for C.l in 0..6 {
        for C.j in 0..4 vectorized {
          C[(((C.i * 24) + (C.j * 6)) + C.l)] = (B[(C.j + (C.l * 4))] + 1.0)
        }
      }
    }
  }
}
)");
  Schedule reader_along_l =
      Schedule().vectorize("C", "l").compute_at("B", "C", "i").reorder("B", {"i", "l", "j"}).vectorize("B", "j");
  EXPECT_EQ(lowered(p, reader_along_l), R"(func planes(A: f32[2, 4, 6]) -> (C: f32[2, 4, 6]) {
  for C.i in 0..2 {
    alloc B: f32[1, 4, 6] local {
      for B.i in 0..1 {
        for B.l in 0..6 {
          for B.j in 0..4 vectorized {
            B[((B.j * 6) + B.l)] = (A[(((B.j * 6) + B.l) + (C.i * 24))] * 2.0)
          }
        }
      }
      for C.j in 0..4 {
        for C.l in 0..6 vectorized {
          C[(((C.i * 24) + (C.j * 6)) + C.l)] = (B[((C.j * 6) + C.l)] + 1.0)
        }
      }
    }
  }
}
)");
}

// A band with a halo: C is computed at Y's rows with the row above and below (Y sums three rows of C, zero past the
// map's edges), and B at each of C's rows. The bound on C's rows moves with C's own loop and stays in C's store; B's
// row does not move inside B's nest, so the bound is tested once around it, where the nest's loops stay bare (a
// register tile there stays one).
TEST(Lower, ARegionBoundThatNoLoopOfTheStageMovesGuardsItsWholeNest) {
  Tensor A = placeholder("A", {4, 6});
  Tensor B = compute("B", {4, 6}, [&](const std::vector<Expr>& i) { return A(i[0], i[1]) * 2.0; });
  Tensor C = compute("C", {4, 6}, [&](const std::vector<Expr>& i) { return B(i[0], i[1]) + 1.0; });
  IterVar r = reduce_axis(3, "r");
  Tensor Y = compute("Y", {4, 6}, [&](const std::vector<Expr>& i) {
    Expr row = i[0] + r.var - 1;
    return sum(select(logical_and(ge(row, 0), lt(row, 4)), C(row, i[1]), Expr(0.0)), {r});
  });
  Program p({Y}, "band");
  EXPECT_EQ(lowered(p, Schedule().compute_at("C", "Y", "i").compute_at("B", "C", "i")),
            R"(func band(A: f32[4, 6]) -> (Y: f32[4, 6]) {
  for Y.i in 0..4 {
    alloc C: f32[3, 6] local {
      for C.i in 0..3 {
        alloc B: f32[1, 6] local {
          if (((C.i + Y.i) >= 1) && ((C.i + Y.i) < 5)) {
            for B.i in 0..1 {
              for B.j in 0..6 {
                B[B.j] = (A[(((B.j + (C.i * 6)) + (Y.i * 6)) - 6)] * 2.0)
              }
            }
          }
          for C.j in 0..6 {
            if (((C.i + Y.i) >= 1) && ((C.i + Y.i) < 5)) {
              C[((C.i * 6) + C.j)] = (B[C.j] + 1.0)
            }
          }
        }
      }
      for Y.j in 0..6 {
        Y[((Y.i * 6) + Y.j)] = 0.0
        for Y.r in 0..3 {
          Y[((Y.i * 6) + Y.j)] = (Y[((Y.i * 6) + Y.j)] + select((((Y.i + Y.r) >= 1) && ((Y.i + Y.r) < 5)), C[(Y.j + (Y.r * 6))], 0.0))
        }
      }
    }
  }
}
)");
}

TEST(Lower, CacheWrite) {
  EXPECT_EQ(lowered(small_matmul(),
                    Schedule().split("C", "j", 3).reorder("C", {"i", "j.o", "k", "j.i"}).cache_write("C", "j.o")),
            R"(func matmul(A: f32[8, 4], B: f32[4, 6]) -> (C: f32[8, 6]) {
  for C.i in 0..8 {
    for C.j.o in 0..2 {
      alloc C.acc: f32[1, 3] local {
        for C.acc.init.r0 in 0..1 {
          for C.acc.init.r1 in 0..3 vectorized {
            C.acc[C.acc.init.r1] = 0.0
          }
        }
        for C.k in 0..4 {
          for C.j.i in 0..3 {
            C.acc[C.j.i] = (C.acc[C.j.i] + (A[((C.i * 4) + C.k)] * B[((C.j.i + (C.j.o * 3)) + (C.k * 6))]))
          }
        }
        for C.acc.out.r0 in 0..1 {
          for C.acc.out.r1 in 0..3 vectorized {
            C[((C.acc.out.r1 + (C.i * 6)) + (C.j.o * 3))] = C.acc[C.acc.out.r1]
          }
        }
      }
    }
  }
}
)");
}

TEST(Lower, CacheWriteInsideAReductionAccumulates) {
  EXPECT_EQ(lowered(small_matmul(), Schedule().reorder("C", {"k", "i"}).cache_write("C", "i")),
            R"(func matmul(A: f32[8, 4], B: f32[4, 6]) -> (C: f32[8, 6]) {
  for C.j in 0..6 {
    for C.i in 0..8 {
      C[((C.i * 6) + C.j)] = 0.0
    }
  }
  for C.k in 0..4 {
    for C.j in 0..6 {
      for C.i in 0..8 {
        alloc C.acc: f32[1, 1] local {
          for C.acc.init.r0 in 0..1 {
            for C.acc.init.r1 in 0..1 {
              C.acc[0] = C[((C.i * 6) + C.j)]
            }
          }
          C.acc[0] = (C.acc[0] + (A[((C.i * 4) + C.k)] * B[(C.j + (C.k * 6))]))
          for C.acc.out.r0 in 0..1 {
            for C.acc.out.r1 in 0..1 {
              C[((C.i * 6) + C.j)] = C.acc[0]
            }
          }
        }
      }
    }
  }
}
)");
}

TEST(Lower, CacheRead) {
  EXPECT_EQ(lowered(small_matmul(), Schedule()
                                        .split("C", "k", 2)
                                        .reorder("C", {"k.o", "i", "j", "k.i"})
                                        .cache_read("C", "B", MemoryScope::kLocal, "k.o")),
            R"(func matmul(A: f32[8, 4], B: f32[4, 6]) -> (C: f32[8, 6]) {
  for C.i in 0..8 {
    for C.j in 0..6 {
      C[((C.i * 6) + C.j)] = 0.0
    }
  }
  for C.k.o in 0..2 {
    alloc B.local.C: f32[2, 6] local {
      for B.local.C.r0 in 0..2 {
        for B.local.C.r1 in 0..6 vectorized {
          B.local.C[((B.local.C.r0 * 6) + B.local.C.r1)] = B[(((B.local.C.r0 * 6) + B.local.C.r1) + (C.k.o * 12))]
        }
      }
      for C.i in 0..8 {
        for C.j in 0..6 {
          for C.k.i in 0..2 {
            C[((C.i * 6) + C.j)] = (C[((C.i * 6) + C.j)] + (A[(((C.i * 4) + C.k.i) + (C.k.o * 2))] * B.local.C[(C.j + (C.k.i * 6))]))
          }
        }
      }
    }
  }
}
)");
}

TEST(Lower, BindToBlocksAndThreadsWithSharedCache) {
  EXPECT_EQ(lowered(small_matmul(), Schedule()
                                        .split("C", "i", 4)
                                        .reorder("C", {"i.o", "i.i", "j", "k"})
                                        .bind("C", "i.o", LoopKind::kBlockX)
                                        .bind("C", "i.i", LoopKind::kThreadX)
                                        .cache_read("C", "B", MemoryScope::kShared, "i.o")),
            R"(func matmul(A: f32[8, 4], B: f32[4, 6]) -> (C: f32[8, 6]) {
  for C.i.o in 0..2 blockIdx.x {
    alloc B.shared.C: f32[4, 6] shared {
      for B.shared.C.t in 0..24 threadIdx.x {
        B.shared.C[B.shared.C.t] = B[B.shared.C.t]
      }
      barrier block
      for C.i.i in 0..4 threadIdx.x {
        for C.j in 0..6 {
          C[(((C.i.i * 6) + (C.i.o * 24)) + C.j)] = 0.0
          for C.k in 0..4 {
            C[(((C.i.i * 6) + (C.i.o * 24)) + C.j)] = (C[(((C.i.i * 6) + (C.i.o * 24)) + C.j)] + (A[(((C.i.i * 4) + (C.i.o * 16)) + C.k)] * B.shared.C[(C.j + (C.k * 6))]))
          }
        }
      }
      barrier block
    }
  }
}
)");
}

TEST(Lower, DependentStagesGetAGridBarrier) {
  EXPECT_EQ(lowered(elementwise(), Schedule()), R"(func chain(A: f32[4, 6]) -> (C: f32[4, 6]) {
  workspace B: f32[4, 6]
  for B.i in 0..4 {
    for B.j in 0..6 {
      B[((B.i * 6) + B.j)] = (A[((B.i * 6) + B.j)] * 2.0)
    }
  }
  barrier grid
  for C.i in 0..4 {
    for C.j in 0..6 {
      C[((C.i * 6) + C.j)] = (B[((C.i * 6) + C.j)] + 1.0)
    }
  }
}
)");
}

// Must-fail: every invalid decision is rejected with its reason.
TEST(LowerErrors, SplitFactorMustDivideWithoutGuard) {
  expect_schedule_error(small_matmul(), Schedule().split("C", "j", 4),
                        "split factor 4 does not divide the extent of 'j' (extent 6); use tail=guard");
}

TEST(LowerErrors, UnknownStageAndAxis) {
  expect_schedule_error(small_matmul(), Schedule().split("X", "i", 2), "stage 'X': no such compute");
  expect_schedule_error(small_matmul(), Schedule().split("A", "i", 2), "stage 'A': it is an input, not a compute");
  expect_schedule_error(small_matmul(), Schedule().split("C", "z", 2), "stage 'C' has no loop 'z' (loops: i, j, k)");
}

TEST(LowerErrors, ReductionAxisCannotBeBoundOrParallel) {
  expect_schedule_error(small_matmul(), Schedule().bind("C", "k", LoopKind::kThreadX),
                        "cannot bind reduction axis 'k' to threadIdx.x");
  expect_schedule_error(small_matmul(), Schedule().parallel("C", "k"), "cannot run reduction axis 'k' in parallel");
  expect_schedule_error(small_matmul(), Schedule().reorder("C", {"i", "k", "j"}).vectorize("C", "k"),
                        "vectorized loop 'k' must be the innermost loop");
}

TEST(LowerErrors, FuseRules) {
  expect_schedule_error(small_matmul(), Schedule().fuse("C", "j", "k"),
                        "cannot fuse a reduction axis with a spatial axis");
  expect_schedule_error(small_matmul(), Schedule().fuse("C", "i", "k"), "are not adjacent");
}

TEST(LowerErrors, LoopKindPlacement) {
  expect_schedule_error(small_matmul(), Schedule().parallel("C", "j"), "parallel loop 'j' must be among the outermost");
  expect_schedule_error(small_matmul(), Schedule().vectorize("C", "i"),
                        "vectorized loop 'i' must be the innermost loop");
  expect_schedule_error(small_matmul(), Schedule().bind("C", "i", LoopKind::kThreadX),
                        "thread loop 'i' must be inside a blockIdx loop");
  expect_schedule_error(small_matmul(), Schedule().parallel("C", "i").vectorize("C", "i"),
                        "loop 'i' is already parallel; it cannot also be vectorized");
}

TEST(LowerErrors, InlineRules) {
  expect_schedule_error(small_matmul(), Schedule().compute_inline("C"), "'C' is a reduction and cannot be inlined");
  expect_schedule_error(elementwise(), Schedule().compute_inline("C"), "'C' is an output and cannot be inlined");
  expect_schedule_error(elementwise(), Schedule().compute_inline("B").split("B", "i", 2),
                        "'B' is inlined, so its other decisions have no loops to apply to");
}

TEST(LowerErrors, ComputeAtRules) {
  expect_schedule_error(elementwise(), Schedule().compute_at("C", "B", "i"), "'C' is an output");
  expect_schedule_error(elementwise(), Schedule().compute_at("B", "C", "q"), "'C' has no loop 'q'");
  Program two = two_gemm(4, 6, 4, 2);
  expect_schedule_error(two, Schedule().compute_at("H", "Y", "i"), "'Y' does not read 'H'");
  expect_schedule_error(softmax(4, 6), Schedule().compute_at("e", "Y", "i"),
                        "'e' is also read by 'row_sum', so it cannot live inside 'Y' alone");
  expect_schedule_error(softmax(4, 6),
                        Schedule()
                            .compute_inline("e")
                            .split("Y", "j", 2)
                            .compute_at("row_max", "Y", "i")
                            .compute_at("row_sum", "Y", "j.o"),
                        "'row_max' is also read by 'row_sum', so it cannot live inside 'Y' alone (unless 'row_sum' "
                        "is computed at the same loop)");
}

TEST(LowerErrors, CacheWriteMustSitInsideThreadLoops) {
  expect_schedule_error(small_matmul(),
                        Schedule()
                            .split("C", "i", 4)
                            .bind("C", "i.o", LoopKind::kBlockX)
                            .bind("C", "i.i", LoopKind::kThreadX)
                            .cache_write("C", "i.o"),
                        "cache_write at 'i.o' must be inside every thread loop ('i.i' is inside it)");
}

// A tile must be the elements the loops inside its loop compute, written back whole. With j.o inside the tile at i,
// one tile computes columns j.i and j.i + 3: the box between them has holes that belong to other iterations of the
// cache_write loop, and writing it back would overwrite them.
TEST(LowerErrors, CacheWriteTileMustBeDense) {
  expect_schedule_error(small_matmul(),
                        Schedule().split("C", "j", 3).reorder("C", {"j.i", "i", "j.o", "k"}).cache_write("C", "i"),
                        "cache_write at 'i': the loops inside compute 2 elements spread over a box of 4");
  // At j.o the tile is one element: dense.
  lowered(small_matmul(), Schedule().split("C", "j", 3).reorder("C", {"j.i", "i", "j.o", "k"}).cache_write("C", "j.o"));
}

// A packed input: its buffer has the packed shape, every read goes through the packed index (B [4, 6] in blocks of 3
// of its columns: [2, 4, 3]), and the function lists the layout for the callers that pack the data.
TEST(Lower, PackedInputIsReadThroughItsPackedIndex) {
  EXPECT_EQ(lowered(small_matmul(), Schedule().pack("B", 1, 3).split("C", "j", 3)),
            R"(func matmul(A: f32[8, 4], B: f32[2, 4, 3]) -> (C: f32[8, 6]) {
  packed B [4, 6] packed: dimension 1 in blocks of 3 -> [2, 4, 3]
  for C.i in 0..8 {
    for C.j.o in 0..2 {
      for C.j.i in 0..3 {
        C[(((C.i * 6) + C.j.i) + (C.j.o * 3))] = 0.0
        for C.k in 0..4 {
          C[(((C.i * 6) + C.j.i) + (C.j.o * 3))] = (C[(((C.i * 6) + C.j.i) + (C.j.o * 3))] + (A[((C.i * 4) + C.k)] * B[((C.j.i + (C.j.o * 12)) + (C.k * 3))]))
        }
      }
    }
  }
}
)");
}

// A packed intermediate (B [4, 6] in blocks of 3 of its columns: [2, 4, 3]): B's stage, its columns split by the block,
// writes each block's elements side by side, and C, its loops as they are, reads B through the packed index.
TEST(Lower, PackedComputeIsWrittenAndReadAtItsPackedIndex) {
  Schedule s = Schedule().pack("B", 1, 3).split("B", "j", 3).reorder("B", {"j.o", "i", "j.i"});
  LoopFunction f = lower(elementwise(), s);
  ASSERT_EQ(f.workspace.size(), 1u);
  EXPECT_EQ(f.workspace[0]->shape, (std::vector<int64_t>{2, 4, 3}));
  EXPECT_TRUE(f.packed_inputs.empty());  // made by the program, not by its callers
  EXPECT_EQ(lowered(elementwise(), s), R"(func chain(A: f32[4, 6]) -> (C: f32[4, 6]) {
  workspace B: f32[2, 4, 3]
  for B.j.o in 0..2 {
    for B.i in 0..4 {
      for B.j.i in 0..3 {
        B[(((B.i * 3) + B.j.i) + (B.j.o * 12))] = (A[(((B.i * 6) + B.j.i) + (B.j.o * 3))] * 2.0)
      }
    }
  }
  barrier grid
  for C.i in 0..4 {
    for C.j in 0..6 {
      C[((C.i * 6) + C.j)] = (B[(((C.i * 3) + ((C.j / 3) * 12)) + (C.j % 3))] + 1.0)
    }
  }
}
)");
}

TEST(LowerErrors, PackOfAnOutputAPaddedOrInlinedComputeADimensionOrABlockThatDoesNotFit) {
  expect_schedule_error(elementwise(), Schedule().pack("C", 1, 3), "'C' is an output");
  expect_schedule_error(elementwise(), Schedule().pack("B", 1, 3).pad("B", 1, 2), "'B' is packed");
  expect_schedule_error(elementwise(), Schedule().pad("B", 1, 2).pack("B", 1, 3), "'B' is padded");
  expect_schedule_error(elementwise(), Schedule().pack("B", 1, 3).compute_inline("B"),
                        "pack of 'B': it is computed inside its readers and has no buffer");
  expect_schedule_error(elementwise(), Schedule().pack("B", 1, 3).compute_at("B", "C", "i"),
                        "pack of 'B': it is computed inside its readers and has no buffer");
  expect_schedule_error(elementwise(), Schedule().pack("X", 0, 2), "no tensor 'X'");
  expect_schedule_error(elementwise(), Schedule().pack("A", 2, 2), "'A' has 2 dimensions");
  expect_schedule_error(elementwise(), Schedule().pack("A", 1, 4), "the block must divide the dimension's extent 6");
  expect_schedule_error(elementwise(), Schedule().pack("A", 1, 3).pack("A", 0, 2), "'A' is already packed");
}

// A padded intermediate: B's buffer has 2 elements more per row, B's stage writes and C's reads at its padded index
// (rows 8 apart), and the workspace holds the padded size.
TEST(Lower, PaddedComputeIsWrittenAndReadAtItsPaddedIndex) {
  LoopFunction f = lower(elementwise(), Schedule().pad("B", 1, 2));
  ASSERT_EQ(f.workspace.size(), 1u);
  EXPECT_EQ(f.workspace[0]->shape, (std::vector<int64_t>{4, 8}));
  EXPECT_EQ(lowered(elementwise(), Schedule().pad("B", 1, 2)),
            R"(func chain(A: f32[4, 6]) -> (C: f32[4, 6]) {
  workspace B: f32[4, 8]
  for B.i in 0..4 {
    for B.j in 0..6 {
      B[((B.i * 8) + B.j)] = (A[((B.i * 6) + B.j)] * 2.0)
    }
  }
  barrier grid
  for C.i in 0..4 {
    for C.j in 0..6 {
      C[((C.i * 6) + C.j)] = (B[((C.i * 8) + C.j)] + 1.0)
    }
  }
}
)");
}

TEST(LowerErrors, PadOfAnInputAnOutputAnInlinedComputeOrADimensionThatIsNot) {
  expect_schedule_error(elementwise(), Schedule().pad("A", 1, 2), "'A' is an input");
  expect_schedule_error(elementwise(), Schedule().pad("C", 1, 2), "'C' is an output");
  expect_schedule_error(elementwise(), Schedule().pad("X", 1, 2), "no tensor 'X'");
  expect_schedule_error(elementwise(), Schedule().pad("B", 2, 2), "'B' has 2 dimensions");
  expect_schedule_error(elementwise(), Schedule().pad("B", 1, 0), "a pad adds at least one element");
  expect_schedule_error(elementwise(), Schedule().pad("B", 1, 2).pad("B", 0, 1), "'B' is already padded");
  expect_schedule_error(elementwise(), Schedule().pad("B", 1, 2).compute_inline("B"),
                        "pad of 'B': it is computed inside its readers and has no buffer");
}

TEST(LowerErrors, CacheReadOfATensorNotRead) {
  expect_schedule_error(elementwise(), Schedule().cache_read("C", "A", MemoryScope::kLocal, "i"),
                        "stage 'C' does not read 'A'");
}

}  // namespace
}  // namespace ingot
