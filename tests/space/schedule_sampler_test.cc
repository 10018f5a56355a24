#include "space/schedule_sampler.h"

#include <gtest/gtest.h>

#include <optional>
#include <set>

#include "codegen/pipeline.h"
#include "interp/interpreter.h"
#include "lower/lower.h"
#include "runtime/local_run.h"
#include "workloads/examples.h"

namespace ingot {
namespace {

TEST(ScheduleSampler, SameSeedSameSchedule) {
  Program p = matmul_bias_relu(24, 20, 16);
  std::mt19937_64 a(7), b(7), c(8);
  std::string first = sample_schedule(p, a).to_json();
  EXPECT_EQ(first, sample_schedule(p, b).to_json());
  std::string other = sample_schedule(p, c).to_json();
  std::mt19937_64 d(7);
  EXPECT_EQ(first, sample_schedule(p, d).to_json());
  (void)other;
}

TEST(ScheduleSampler, EverySampleLowersOnEveryExample) {
  for (const ExampleProgram& e : example_programs()) {
    Program p = e.make_small();
    std::mt19937_64 rng(2024);
    for (int n = 0; n < 200; ++n) {
      Schedule s = sample_schedule(p, rng);
      EXPECT_NO_THROW(lower(p, s)) << e.name << " sample " << n << ": " << s.to_json();
    }
  }
}

// Sampled register tiles of a GEMV-like program (y[i, j] = sum_k A[i, k] W[j, k]) that explicit vectors can hold
// get the decision, of the target's lanes: 16, or 8 where the tile has at most 8 folds (AVX2's registers); every such
// schedule lowers and computes what the interpreter computes.
TEST(ScheduleSampler, RegisterTilesGetExplicitVectorsOfTheTargetsLanes) {
  Tensor A = placeholder("A", {8, 64}), W = placeholder("W", {16, 64});
  IterVar k = reduce_axis(64, "k");
  Tensor C =
      compute("C", {8, 16}, [&](const std::vector<Expr>& i) { return sum(A(i[0], k.var) * W(i[1], k.var), {k}); });
  Program p({C}, "dot_products");
  auto explicit_count = [](const Schedule& s) {
    int n = 0;
    for (const Decision& d : s.decisions()) n += d.kind == DecisionKind::kExplicitVectors;
    return n;
  };
  SamplerOptions avx2;
  avx2.simd_fp32_lanes = 8;
  int with_vectors = 0, narrow_with_vectors = 0;
  for (uint64_t seed = 0; seed < 40; ++seed) {
    std::mt19937_64 rng(seed), same(seed);
    Schedule s = sample_schedule(p, rng);
    Schedule narrow = sample_schedule(p, same, avx2);
    for (const Decision& d : narrow.decisions()) {
      if (d.kind == DecisionKind::kExplicitVectors) {
        EXPECT_EQ(d.factor, 8) << seed;
      }
    }
    if (explicit_count(narrow) > 0) {
      ++narrow_with_vectors;
      EXPECT_NE(compile_to_cpp_source(p, narrow).source.find("#define INGOT_F32_LANES 8"), std::string::npos) << seed;
      if (narrow_with_vectors <= 2) {
        TensorMap inputs = random_inputs(p, 5, {});
        EXPECT_TRUE(local_run(p, narrow, inputs, interpret(p, inputs)).correct) << narrow.to_json();
      }
    }
    if (explicit_count(s) == 0) continue;
    ++with_vectors;
    EXPECT_NE(compile_to_cpp_source(p, s).source.find("ingot_vacc"), std::string::npos) << s.to_json();
    if (with_vectors <= 2) {
      TensorMap inputs = random_inputs(p, 5, {});
      LocalRunResult r = local_run(p, s, inputs, interpret(p, inputs));
      EXPECT_TRUE(r.correct) << s.to_json();
    }
  }
  EXPECT_GT(with_vectors, 0);
  EXPECT_GT(narrow_with_vectors, 0);
}

TEST(ScheduleSampler, GpuSamplesBindBlocksAndThreads) {
  for (const ExampleProgram& e : example_programs()) {
    Program p = e.make_small();
    std::mt19937_64 rng(99);
    SamplerOptions gpu;
    gpu.gpu = true;
    for (int n = 0; n < 50; ++n) {
      Schedule s = sample_schedule(p, rng, gpu);
      LoopFunction f;
      ASSERT_NO_THROW(f = lower(p, s)) << e.name << ": " << s.to_json();
      bool block = false, thread = false;
      for_each_stmt(f.body, [&](const Stmt& st) {
        if (auto* loop = as<ForNode>(st)) {
          block |= is_gpu_block(loop->loop_kind);
          thread |= is_gpu_thread(loop->loop_kind);
        }
      });
      EXPECT_TRUE(block && thread) << e.name << ": " << s.to_json();
    }
  }
}

TEST(ScheduleSampler, SamplesCoverTheSpace) {
  // Over many seeds the sampler uses every CPU decision kind at least once on these two programs.
  std::set<DecisionKind> seen;
  for (const Program& p : {matmul_bias_relu(24, 20, 16), two_gemm(8, 24, 16, 12)}) {
    std::mt19937_64 rng(5);
    for (int n = 0; n < 300; ++n) {
      Schedule s = sample_schedule(p, rng);
      for (const Decision& d : s.decisions()) seen.insert(d.kind);
    }
  }
  for (DecisionKind k : {DecisionKind::kSplit, DecisionKind::kReorder, DecisionKind::kFuse, DecisionKind::kParallel,
                         DecisionKind::kVectorize, DecisionKind::kUnroll, DecisionKind::kComputeAt,
                         DecisionKind::kComputeInline, DecisionKind::kCacheWrite, DecisionKind::kCacheRead})
    EXPECT_TRUE(seen.count(k)) << decision_kind_name(k);
}

// A GEMV over W[row, k] reads W along its reduction axis: some samples run that axis innermost as a simd
// reduction, some of those around a register tile of rows; such samples lower and compute what the interpreter
// computes. A GEMM reading B[k, col] never vectorizes its reduction.
TEST(ScheduleSampler, SamplesVectorizedReductionsAlongMemory) {
  const int64_t rows = 32, K = 64;
  Tensor W = placeholder("W", {rows, K}), x = placeholder("x", {K});
  IterVar k = reduce_axis(K, "k");
  Program gemv({compute("y", {rows}, [&](const std::vector<Expr>& i) { return sum(W(i[0], k.var) * x(k.var), {k}); })},
               "gemv");
  auto vectorizes_reduction = [](const Program& p, const Schedule& s) {
    for (const Decision& d : s.decisions()) {
      if (d.kind != DecisionKind::kVectorize) continue;
      for (const IterVar& r : p.find(d.stage)->reduction()->axes)
        if (d.axes[0] == r.name() || d.axes[0] == r.name() + ".i") return true;
    }
    return false;
  };
  std::mt19937_64 rng(11);
  std::optional<Schedule> found;
  for (int n = 0; n < 100 && !found; ++n) {
    Schedule s = sample_schedule(gemv, rng);
    if (vectorizes_reduction(gemv, s)) found = s;
  }
  ASSERT_TRUE(found) << "no sample vectorized the reduction of a GEMV along memory";
  // A simd reduction, or explicit vectors for a register tile of 4 or more rows.
  std::string cpp = compile_to_cpp_source(gemv, *found).source;
  EXPECT_TRUE(cpp.find("#pragma omp simd reduction(+:ingot_acc") != std::string::npos ||
              cpp.find("ingot_vacc0 += ") != std::string::npos)
      << found->to_json();
  TensorMap inputs = random_inputs(gemv, 1, {});
  LocalRunOptions options;
  options.warmup_runs = 0;
  options.min_repeat_ms = 0;
  options.min_repeats = 1;
  EXPECT_TRUE(local_run(gemv, *found, inputs, interpret(gemv, inputs), options).correct) << found->to_json();
  // Some of them compute several rows at once (a register tile, one accumulator per row), correctly too.
  std::optional<Schedule> tiled;
  for (int n = 0; n < 200 && !tiled; ++n) {
    Schedule s = sample_schedule(gemv, rng);
    if (vectorizes_reduction(gemv, s) && compile_to_cpp_source(gemv, s).source.find("ingot_acc1") != std::string::npos)
      tiled = s;
  }
  ASSERT_TRUE(tiled) << "no sample computed a register tile";
  EXPECT_TRUE(local_run(gemv, *tiled, inputs, interpret(gemv, inputs), options).correct) << tiled->to_json();

  Program gemm = matmul(24, 20, 16);
  std::mt19937_64 again(11);
  for (int n = 0; n < 200; ++n) EXPECT_FALSE(vectorizes_reduction(gemm, sample_schedule(gemm, again)));
}

}  // namespace
}  // namespace ingot
