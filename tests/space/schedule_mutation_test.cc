// The evolutionary search's moves (space/schedule_mutation.h): every mutation and crossover of strategy, sampled and
// hand schedules of the examples and task workloads lowers and differs from its input, each kind fires where it
// applies, the same seed gives the same move, and a few results compute what the interpreter computes. Fixed targets.
#include "space/schedule_mutation.h"

#include <gtest/gtest.h>

#include <map>
#include <set>
#include <sstream>
#include <stdexcept>

#include "interp/interpreter.h"
#include "ir/horizontal_batch.h"
#include "lower/lower.h"
#include "runtime/local_run.h"
#include "space/explicit_vectors.h"
#include "space/hand_schedules.h"
#include "space/schedule_sampler.h"
#include "space/strategy_schedule.h"
#include "tests/support/fixed_targets.h"
#include "workloads/examples.h"
#include "workloads/lstm.h"
#include "workloads/tasks.h"

namespace ingot {
namespace {

const std::vector<std::string>& strategies() {
  static const std::vector<std::string> names = {"unfused", "rules", "subgraph", "global"};
  return names;
}

// One decision a line, as Decision::to_string writes it.
std::string text(const Schedule& s) {
  std::string out;
  for (const Decision& d : s.decisions()) out += d.to_string() + "\n";
  return out;
}

std::string text(const std::optional<Schedule>& s) { return s ? text(*s) : "nullopt"; }

Schedule strip_explicit_vectors(const Schedule& s) {
  Schedule out;
  for (const Decision& d : s.decisions())
    if (d.kind != DecisionKind::kExplicitVectors) out.append(d);
  out.set_layout(s.layout());
  return out;
}

bool is_gpu(const Schedule& s) {
  for (const Decision& d : s.decisions())
    if (d.kind == DecisionKind::kBind) return true;
  return false;
}

struct NamedProgram {
  std::string name;
  Program program;
  InputRanges ranges;
};

// The examples' small sizes and the task workloads' small sizes (each a few thousand to a million elements).
const std::vector<NamedProgram>& test_programs() {
  static const std::vector<NamedProgram> programs = [] {
    std::vector<NamedProgram> out;
    for (const ExampleProgram& e : example_programs()) out.push_back({e.name, e.make_small(), {}});
    for (const TaskWorkload& w : task_workloads()) out.push_back({w.name, w.build(w.small), w.input_ranges(w.small)});
    return out;
  }();
  return programs;
}

struct NamedSchedule {
  std::string name;
  Schedule schedule;
};

// The schedules mutated for a program on a target of `lanes` fp32 lanes: the four strategies', the hand schedule
// where there is one, and sampled ones (without a layout, with the global plan's, and GPU-bound).
std::vector<NamedSchedule> schedules_of(const Program& p, int lanes) {
  Target target = lanes == 16 ? test_support::avx512_cpu() : test_support::avx2_cpu();
  std::vector<NamedSchedule> out;
  StageLayout global_layout;
  for (const std::string& strategy : strategies()) {
    StrategyProgram sp = make_strategy_program(p, strategy, target);
    if (strategy == "global") global_layout = sp.schedule.layout();
    out.push_back({"strategy:" + strategy, sp.schedule});
  }
  if (lanes == 16) try {
      out.push_back({"hand", hand_schedule(p)});
    } catch (const std::invalid_argument&) {
    }
  SamplerOptions plain, in_layout, gpu;
  plain.simd_fp32_lanes = in_layout.simd_fp32_lanes = lanes;
  in_layout.layout = global_layout;
  gpu.gpu = true;
  for (uint64_t seed = 0; seed < 2; ++seed) {
    std::mt19937_64 rng(seed);
    out.push_back({"sampled:" + std::to_string(seed), sample_schedule(p, rng, plain)});
    out.push_back({"sampled_in_layout:" + std::to_string(seed), sample_schedule(p, rng, in_layout)});
  }
  std::mt19937_64 rng(7);
  out.push_back({"sampled_gpu", sample_schedule(p, rng, gpu)});
  return out;
}

// What every result must be: a schedule lower() accepts, other than its input, whose explicit_vectors decisions are
// exactly what the rule derives for it (none on a GPU schedule or a target of other than 16 lanes).
void expect_valid_result(const Program& p, const Schedule& input, const Schedule& result, int lanes,
                         const std::string& what) {
  EXPECT_NO_THROW(lower(p, result)) << what << "\n" << result.to_json();
  EXPECT_FALSE(result == input) << what;
  EXPECT_EQ(result.layout(), input.layout()) << what;
  Schedule stripped = strip_explicit_vectors(result);
  Schedule derived = is_gpu(result) ? stripped : with_explicit_vectors(p, stripped, lanes);
  EXPECT_EQ(derived.to_json(), result.to_json()) << what;
}

// Three chains of 10 random mutations from every schedule of every program, and one mutation of each kind from each:
// every result is valid, nearly every draw finds one, and every kind fires somewhere.
TEST(ScheduleMutation, EveryMutationLowersAndDiffersFromItsInput) {
  std::map<MutationKind, int> fired;
  int draws = 0, found = 0;
  for (int lanes : {16, 8}) {
    MutationOptions options;
    options.simd_fp32_lanes = lanes;
    for (const NamedProgram& np : test_programs()) {
      uint64_t seed = 0;
      for (const NamedSchedule& ns : schedules_of(np.program, lanes)) {
        std::string where = np.name + " " + ns.name + " (" + std::to_string(lanes) + " lanes)";
        ASSERT_NO_THROW(lower(np.program, ns.schedule)) << where;
        std::mt19937_64 rng(++seed);
        for (int chain = 0; chain < 3; ++chain) {
          Schedule current = ns.schedule;
          for (int step = 0; step < 10; ++step) {
            ++draws;
            std::optional<Schedule> next = mutate(np.program, current, rng, options);
            if (!next) continue;
            ++found;
            expect_valid_result(np.program, current, *next, lanes, where + " step " + std::to_string(step));
            current = *next;
          }
        }
        for (MutationKind kind : all_mutation_kinds()) {
          std::optional<Schedule> next = mutate(np.program, ns.schedule, kind, rng, options);
          if (!next) continue;
          ++fired[kind];
          expect_valid_result(np.program, ns.schedule, *next, lanes, where + " " + mutation_kind_name(kind));
        }
      }
    }
  }
  EXPECT_GT(found, draws * 9 / 10) << found << " of " << draws << " draws found a mutation";
  for (MutationKind kind : all_mutation_kinds()) EXPECT_GT(fired[kind], 10) << mutation_kind_name(kind);
}

// Crossover of schedules with the same layout (a strategy's and samples in its layout, two samples, two GPU samples):
// every child lowers, is neither parent, and takes each stage's decisions from one of them; different layouts give
// none.
TEST(ScheduleMutation, EveryCrossoverLowersAndMixesItsParentsStageByStage) {
  auto stage_decisions = [](const Schedule& s) {
    std::map<std::string, std::vector<Decision>> out;
    Schedule stripped = strip_explicit_vectors(s);
    for (const Decision& d : stripped.decisions()) out[d.stage].push_back(d);
    return out;
  };
  int tries = 0, children = 0;
  for (const NamedProgram& np : test_programs()) {
    const Program& p = np.program;
    Schedule global = make_strategy_program(p, "global", test_support::avx512_cpu()).schedule;
    SamplerOptions in_layout, gpu;
    in_layout.layout = global.layout();
    gpu.gpu = true;
    std::mt19937_64 sampler(3);
    std::vector<std::pair<Schedule, Schedule>> pairs;
    for (int n = 0; n < 3; ++n) {
      pairs.emplace_back(global, sample_schedule(p, sampler, in_layout));
      pairs.emplace_back(sample_schedule(p, sampler), sample_schedule(p, sampler));
    }
    pairs.emplace_back(sample_schedule(p, sampler, gpu), sample_schedule(p, sampler, gpu));
    uint64_t seed = 0;
    for (const auto& [a, b] : pairs) {
      std::mt19937_64 rng(++seed);
      for (int n = 0; n < 3; ++n) {
        ++tries;
        std::optional<Schedule> child = crossover(p, a, b, rng);
        if (!child) continue;
        ++children;
        std::string where = np.name + " pair " + std::to_string(seed) + "\na: " + a.to_json() + "\nb: " + b.to_json() +
                            "\nchild: " + child->to_json();
        expect_valid_result(p, a, *child, 16, where);
        EXPECT_FALSE(*child == b) << where;
        auto of_a = stage_decisions(a), of_b = stage_decisions(b);
        for (const auto& [stage, decisions] : stage_decisions(*child))
          EXPECT_TRUE(decisions == of_a[stage] || decisions == of_b[stage]) << stage << " " << where;
        // Mutations and further crossovers of a child stay valid.
        if (std::optional<Schedule> again = mutate(p, *child, rng)) expect_valid_result(p, *child, *again, 16, where);
        if (std::optional<Schedule> again = crossover(p, *child, b, rng))
          expect_valid_result(p, *child, *again, 16, where);
      }
    }
    // A schedule with itself has no new child; schedules of different layouts have none.
    std::mt19937_64 rng(1);
    EXPECT_FALSE(crossover(p, global, global, rng)) << np.name;
    Schedule unfused = make_strategy_program(p, "unfused", test_support::avx512_cpu()).schedule;
    if (!(unfused.layout() == global.layout())) {
      EXPECT_FALSE(crossover(p, global, unfused, rng)) << np.name;
    }
  }
  EXPECT_GT(children, tries / 3) << children << " of " << tries;
}

// A schedule that batches computes (ir/horizontal_batch.h) is about the batched program: its mutations lower and keep
// the batch decisions, and it crosses over only with a schedule that batches the same groups.
TEST(ScheduleMutation, ABatchedScheduleMutatesOverTheBatchedProgram) {
  const Program program = lstm(LstmSizes{.layers = 2, .steps = 4, .hidden = 16, .input = 16});
  Schedule batches;
  for (const BatchGroup& g : batchable_groups(program)) batches.batch(g.batched, g.members, g.stacked);
  ASSERT_EQ(batch_groups_of(batches).size(), 2u);
  const Program batched = batched_program(program, batches);
  const Schedule fixed = make_strategy_program(batched, "global", test_support::avx512_cpu()).schedule;
  Schedule schedule = batches;
  for (const Decision& d : fixed.decisions()) schedule.append(d);
  schedule.set_layout(fixed.layout());
  ASSERT_NO_THROW(lower(program, schedule));
  MutationOptions options;
  std::mt19937_64 rng(5);
  int found = 0;
  for (int step = 0; step < 10; ++step) {
    std::optional<Schedule> next = mutate(program, schedule, rng, options);
    if (!next) continue;
    ++found;
    EXPECT_NO_THROW(lower(program, *next)) << next->to_json();
    EXPECT_EQ(batch_groups_of(*next), batch_groups_of(schedule));
    EXPECT_FALSE(crossover(program, *next, fixed, rng, options).has_value());  // the unbatched schedule
  }
  EXPECT_GT(found, 5);
}

// The same engine state gives the same mutation of each kind and the same child; other seeds give other moves.
TEST(ScheduleMutation, SameSeedSameResult) {
  for (const NamedProgram& np : test_programs()) {
    const Program& p = np.program;
    Schedule s = make_strategy_program(p, "global", test_support::avx512_cpu()).schedule;
    std::mt19937_64 sampler(5);
    SamplerOptions in_layout;
    in_layout.layout = s.layout();
    Schedule other = sample_schedule(p, sampler, in_layout);
    std::set<std::string> distinct;
    for (uint64_t seed = 0; seed < 4; ++seed) {
      std::mt19937_64 a(seed), b(seed);
      std::string first = text(mutate(p, s, a)) + text(crossover(p, s, other, a));
      EXPECT_EQ(first, text(mutate(p, s, b)) + text(crossover(p, s, other, b))) << np.name << " seed " << seed;
      for (MutationKind kind : all_mutation_kinds()) {
        std::mt19937_64 c(seed), d(seed);
        EXPECT_EQ(text(mutate(p, s, kind, c)), text(mutate(p, s, kind, d)))
            << np.name << " " << mutation_kind_name(kind);
      }
      distinct.insert(first);
    }
    EXPECT_GT(distinct.size(), 1u) << np.name;
  }
}

TEST(ScheduleMutation, KindsHaveNames) {
  std::set<std::string> names;
  for (MutationKind kind : all_mutation_kinds()) names.insert(mutation_kind_name(kind));
  EXPECT_EQ(names, (std::set<std::string>{"resplit", "unroll", "reorder", "parallel_granularity", "cache_write",
                                          "compute_location", "split", "vector_axis"}));
}

// Every result of `kind` on s over many seeds (at most one per seed).
std::vector<Schedule> results_of(const Program& p, const Schedule& s, MutationKind kind, int seeds = 40) {
  std::vector<Schedule> out;
  for (int seed = 0; seed < seeds; ++seed) {
    std::mt19937_64 rng(seed);
    if (std::optional<Schedule> r = mutate(p, s, kind, rng)) out.push_back(*r);
  }
  return out;
}

std::set<std::string> texts(const std::vector<Schedule>& schedules) {
  std::set<std::string> out;
  for (const Schedule& s : schedules) out.insert(text(s));
  return out;
}

const TaskWorkload& task(const std::string& name) {
  for (const TaskWorkload& w : task_workloads())
    if (w.name == name) return w;
  throw std::invalid_argument(name);
}

// BERT's QKV projection under the global strategy: the GEMM is computed per 4 rows of its epilogue, inside a register
// tile of 4 rows x 4 columns (j split by 4) around its vectorized reduction, held in explicit vectors. A resplit gives
// the columns another divisor of their extent; tiles of more than 24 folds lose their explicit vectors.
TEST(ScheduleMutation, ResplitOfTheGemmRegisterTileTakesAnotherDivisor) {
  const TaskWorkload& w = task("task:bert_qkv");
  Program p = w.build(w.small);
  Schedule s = make_strategy_program(p, "global", test_support::avx512_cpu()).schedule;
  EXPECT_EQ(text(s),
            "compute_at qkv_matmul [i.o] at qkv\n"
            "split qkv_matmul [j] by 4\n"
            "reorder qkv_matmul [j.o, k, i, j.i]\n"
            "vectorize qkv_matmul [k]\n"
            "unroll qkv_matmul [i]\n"
            "unroll qkv_matmul [j.i]\n"
            "split qkv [i] by 4\n"
            "reorder qkv [i.o, i.i, j]\n"
            "parallel qkv [i.o]\n"
            "vectorize qkv [j]\n"
            "explicit_vectors qkv_matmul [k] of 16 lanes\n");
  const int64_t columns = p.find("qkv_matmul")->shape[1];
  std::set<int64_t> factors;
  bool with_vectors = false, without_vectors = false;
  for (const Schedule& r : results_of(p, s, MutationKind::kResplit)) {
    const Decision& split = r.decisions()[1];
    ASSERT_TRUE(split.kind == DecisionKind::kSplit && split.stage == "qkv_matmul") << text(r);
    if (split.factor == 4) continue;  // the epilogue's split of its rows, the other site
    EXPECT_EQ(columns % split.factor, 0) << split.factor;
    factors.insert(split.factor);
    // Nothing else changed but the explicit vectors.
    std::vector<Decision> before = strip_explicit_vectors(s).decisions(), after = strip_explicit_vectors(r).decisions();
    after[1].factor = 4;
    EXPECT_EQ(before, after) << text(r);
    bool vectors = r.decisions().back().kind == DecisionKind::kExplicitVectors;
    EXPECT_EQ(vectors, 4 * split.factor <= 24) << text(r);  // lower/vector_tiles.h: 4 to 24 folds
    (vectors ? with_vectors : without_vectors) = true;
  }
  EXPECT_GE(factors.size(), 3u);
  EXPECT_TRUE(with_vectors);
  EXPECT_TRUE(without_vectors);
}

// A stage computed at a reader's loop splits the region it computes there: C at D's i.o covers 8 rows, so its split
// of i by 4 can only become 2 (a divisor of 8, not of C's 24 rows).
TEST(ScheduleMutation, ResplitOfAStageComputedAtAReaderUsesItsRegion) {
  Program p = matmul_bias_relu(24, 20, 16);
  Schedule s;
  s.compute_at("C", "D", "i.o").split("C", "i", 4).reorder("C", {"i.o", "k", "i.i", "j"}).vectorize("C", "j");
  s.split("D", "i", 8).parallel("D", "i.o");
  EXPECT_EQ(texts(results_of(p, s, MutationKind::kResplit)),
            (std::set<std::string>{"compute_at C [i.o] at D\n"
                                   "split C [i] by 2\n"
                                   "reorder C [i.o, k, i.i, j]\n"
                                   "vectorize C [j]\n"
                                   "split D [i] by 8\n"
                                   "parallel D [i.o]\n",
                                   // D's rows by 2, 3, 4, 6 or 12: 4 and 12 leave C's split of 4 dividing its rows
                                   "compute_at C [i.o] at D\n"
                                   "split C [i] by 4\n"
                                   "reorder C [i.o, k, i.i, j]\n"
                                   "vectorize C [j]\n"
                                   "split D [i] by 4\n"
                                   "parallel D [i.o]\n",
                                   "compute_at C [i.o] at D\n"
                                   "split C [i] by 4\n"
                                   "reorder C [i.o, k, i.i, j]\n"
                                   "vectorize C [j]\n"
                                   "split D [i] by 12\n"
                                   "parallel D [i.o]\n"}));
}

// A guarded split stays guarded and may take a factor that does not divide; an extent of 2 has nothing to resplit.
TEST(ScheduleMutation, ResplitKeepsAGuardedSplitGuarded) {
  Tensor x = placeholder("x", {10});
  Program p({compute("y", {10}, [&](const std::vector<Expr>& i) { return x(i[0]) * 2.0; })}, "scale");
  Schedule s;
  s.split("y", "i", 4, SplitTail::kGuard);
  std::set<int64_t> factors;
  for (const Schedule& r : results_of(p, s, MutationKind::kResplit)) {
    ASSERT_EQ(r.decisions().size(), 1u);
    EXPECT_EQ(r.decisions()[0].tail, SplitTail::kGuard);
    factors.insert(r.decisions()[0].factor);
  }
  EXPECT_EQ(factors, (std::set<int64_t>{2, 3, 5, 6, 7, 8, 9}));
  Tensor z = placeholder("z", {2});
  Program pair({compute("w", {2}, [&](const std::vector<Expr>& i) { return z(i[0]) * 2.0; })}, "pair");
  Schedule halves;
  halves.split("w", "i", 1);
  std::mt19937_64 rng(0);
  EXPECT_FALSE(mutate(pair, halves, MutationKind::kResplit, rng));
}

// A shifted split stays shifted and takes the factors whose last block recomputes at most one element in 16 (of 40:
// those whose last block overlaps the one before by up to 2); its outer loop, which lowering peels, is never unrolled.
TEST(ScheduleMutation, ResplitKeepsAShiftedSplitShiftedWithASmallOverlap) {
  Tensor x = placeholder("x", {40});
  Program p({compute("y", {40}, [&](const std::vector<Expr>& i) { return x(i[0]) * 2.0; })}, "scale");
  Schedule s;
  s.split("y", "i", 6, SplitTail::kShift);
  std::set<int64_t> factors;
  for (const Schedule& r : results_of(p, s, MutationKind::kResplit, 200)) {
    ASSERT_EQ(r.decisions().size(), 1u);
    EXPECT_EQ(r.decisions()[0].tail, SplitTail::kShift);
    factors.insert(r.decisions()[0].factor);
  }
  EXPECT_EQ(factors, (std::set<int64_t>{2, 3, 4, 5, 7, 8, 10, 14, 20, 21}));  // 9, 13 and 39: 5, 12 and 38
  // i.o (7 iterations) would be unrolled, were it not peeled.
  EXPECT_EQ(texts(results_of(p, s, MutationKind::kUnroll)),
            (std::set<std::string>{"split y [i] by 6 (shifted tail)\nunroll y [i.i]\n"}));
}

// Unroll adds an unroll on a serial loop of at most 16 iterations, or removes one.
TEST(ScheduleMutation, UnrollAddsOrRemovesAnUnroll) {
  Tensor x = placeholder("x", {8, 64});
  Program p({compute("y", {8, 64}, [&](const std::vector<Expr>& i) { return x(i[0], i[1]) * 2.0; })}, "scale");
  Schedule s;
  s.parallel("y", "j");  // j is parallel (64 iterations anyway); i is the one serial loop of at most 16
  s.reorder("y", {"j", "i"});
  EXPECT_EQ(texts(results_of(p, s, MutationKind::kUnroll)),
            (std::set<std::string>{"parallel y [j]\nreorder y [j, i]\nunroll y [i]\n"}));
  Schedule unrolled;
  unrolled.reorder("y", {"j", "i"}).unroll("y", "i").parallel("y", "j");  // the only move: j is parallel, i unrolled
  EXPECT_EQ(texts(results_of(p, unrolled, MutationKind::kUnroll)),
            (std::set<std::string>{"reorder y [j, i]\nparallel y [j]\n"}));
  // A loop of 64 iterations is not unrolled.
  Schedule wide;
  wide.reorder("y", {"j", "i"}).unroll("y", "i");
  EXPECT_EQ(texts(results_of(p, wide, MutationKind::kUnroll)), (std::set<std::string>{"reorder y [j, i]\n"}));
}

// Reorder swaps two adjacent loops of a reorder decision; swaps lowering refuses (a parallel loop moved inside) are
// never returned.
TEST(ScheduleMutation, ReorderSwapsAdjacentLoops) {
  Program p = matmul(24, 20, 16);
  Schedule s;
  s.reorder("C", {"i", "k", "j"});
  EXPECT_EQ(texts(results_of(p, s, MutationKind::kReorder)),
            (std::set<std::string>{"reorder C [k, i, j]\n", "reorder C [i, j, k]\n"}));
  s.parallel("C", "i");
  EXPECT_EQ(texts(results_of(p, s, MutationKind::kReorder)),
            (std::set<std::string>{"reorder C [i, j, k]\nparallel C [i]\n"}));
}

// The parallel loop gains the next loop (renaming what names it) or loses its last fuse; one undoes the other.
TEST(ScheduleMutation, ParallelGranularityFusesOrUnfusesTheParallelLoop) {
  Tensor x = placeholder("x", {4, 6, 16});
  Program p({compute("y", {4, 6, 16}, [&](const std::vector<Expr>& i) { return x(i[0], i[1], i[2]) + 1.0; })},
            "add_one");
  Schedule s;
  s.parallel("y", "i").vectorize("y", "l");
  std::mt19937_64 rng(0);
  std::optional<Schedule> grown = mutate(p, s, MutationKind::kParallelGranularity, rng);
  EXPECT_EQ(text(grown), "fuse y [i, j]\nparallel y [i+j]\nvectorize y [l]\n");
  ASSERT_TRUE(grown);
  std::optional<Schedule> dropped = mutate(p, *grown, MutationKind::kParallelGranularity, rng);
  // Dropping is the only move once i+j's next loop is vectorized.
  EXPECT_EQ(text(dropped), text(s));

  // The strategy's GEMM epilogue: the GEMM is computed at the fused parallel loop, and follows it.
  Program mbr = matmul_bias_relu(24, 80, 16);
  Schedule global = make_strategy_program(mbr, "global", test_support::avx512_cpu()).schedule;
  EXPECT_EQ(text(global),
            "compute_at C [i+j.o] at D\n"
            "reorder C [i, k, j]\n"
            "vectorize C [j]\n"
            "split D [j] by 40\n"
            "reorder D [i, j.o, j.i]\n"
            "fuse D [i, j.o]\n"
            "parallel D [i+j.o]\n"
            "vectorize D [j.i]\n");
  EXPECT_EQ(texts(results_of(mbr, global, MutationKind::kParallelGranularity)),
            (std::set<std::string>{"compute_at C [i] at D\n"
                                   "reorder C [i, k, j]\n"
                                   "vectorize C [j]\n"
                                   "split D [j] by 40\n"
                                   "reorder D [i, j.o, j.i]\n"
                                   "parallel D [i]\n"
                                   "vectorize D [j.i]\n"}));

  // The softmax's row reductions: the loop after the parallel one joins it, and the cache_write follows.
  Program sm = softmax(64, 32);
  Schedule row;
  row.split("row_max", "i", 16)
      .split("row_max", "i.i", 8)
      .reorder("row_max", {"i.o", "i.i.o", "k", "i.i.i"})
      .parallel("row_max", "i.o")
      .cache_write("row_max", "i.o")
      .vectorize("row_max", "k")
      .unroll("row_max", "i.i.i");
  EXPECT_EQ(texts(results_of(sm, row, MutationKind::kParallelGranularity)),
            (std::set<std::string>{"split row_max [i] by 16\n"
                                   "split row_max [i.i] by 8\n"
                                   "reorder row_max [i.o, i.i.o, k, i.i.i]\n"
                                   "fuse row_max [i.o, i.i.o]\n"
                                   "parallel row_max [i.o+i.i.o]\n"
                                   "cache_write row_max [i.o+i.i.o]\n"
                                   "vectorize row_max [k]\n"
                                   "unroll row_max [i.i.i]\n"}));
}

// cache_write is removed where there is one and added at the parallel loop where there is none.
TEST(ScheduleMutation, CacheWriteTogglesTheReductionsTile) {
  Program p = matmul(24, 20, 16);
  Schedule s = make_strategy_program(p, "unfused", test_support::avx512_cpu()).schedule;
  EXPECT_EQ(text(s), "reorder C [i, k, j]\nparallel C [i]\ncache_write C [i]\nvectorize C [j]\n");
  std::mt19937_64 rng(0);
  std::optional<Schedule> without = mutate(p, s, MutationKind::kCacheWrite, rng);
  EXPECT_EQ(text(without), "reorder C [i, k, j]\nparallel C [i]\nvectorize C [j]\n");
  ASSERT_TRUE(without);
  EXPECT_EQ(text(mutate(p, *without, MutationKind::kCacheWrite, rng)),
            "reorder C [i, k, j]\nparallel C [i]\nvectorize C [j]\ncache_write C [i]\n");
  // No parallel loop: the outermost.
  Schedule serial;
  serial.reorder("C", {"k", "i", "j"});
  EXPECT_EQ(text(mutate(p, serial, MutationKind::kCacheWrite, rng)), "reorder C [k, i, j]\ncache_write C [k]\n");
}

// A stage computed at its reader's loop moves to another loop of the reader (never a vectorized one); a program
// computed at the root has no such move.
TEST(ScheduleMutation, ComputeLocationMovesAStageWithinItsReader) {
  Program p = matmul_bias_relu(24, 20, 16);
  Schedule s;
  s.compute_at("C", "D", "i.o").reorder("C", {"k", "i", "j"}).vectorize("C", "j");
  s.split("D", "i", 8).parallel("D", "i.o").vectorize("D", "j");
  EXPECT_EQ(texts(results_of(p, s, MutationKind::kComputeLocation)), (std::set<std::string>{"compute_at C [i.i] at D\n"
                                                                                            "reorder C [k, i, j]\n"
                                                                                            "vectorize C [j]\n"
                                                                                            "split D [i] by 8\n"
                                                                                            "parallel D [i.o]\n"
                                                                                            "vectorize D [j]\n"}));
  std::mt19937_64 rng(0);
  EXPECT_FALSE(mutate(p, Schedule(), MutationKind::kComputeLocation, rng));
}

FixedScheduleOptions without_stencil_tiles() {
  FixedScheduleOptions options;
  options.knobs.stencil_tiles = false;
  return options;
}

// Without stencil tiles (their knob off: the fixed schedule's panels of register tiles are a stencil tile's), the fixed
// schedule of a 512^3 GEMM under the global plan keeps 64 columns in the vectorized loop and fuses the rows with the
// column blocks into its parallel loop. A split adds a tile level: of j.o (plain), where the fuse, parallel
// loop and cache_write that name what j.o made follow it; or of i into the 2-D register tile (the tile variant): i.i
// moved just inside k and unrolled, 4 rows x 64 columns accumulated across k, held in explicit vectors. (A plain split
// of i leaves i.i between the fuse's loops and never lowers.)
TEST(ScheduleMutation, SplitInsertsATileLevelAndRenamesWhatFollows) {
  Program p = matmul(512, 512, 512);
  Schedule s = make_strategy_program(p, "global", test_support::avx512_cpu(), without_stencil_tiles()).schedule;
  EXPECT_EQ(text(s),
            "split C [j] by 64\n"
            "reorder C [i, j.o, k, j.i]\n"
            "fuse C [i, j.o]\n"
            "parallel C [i+j.o]\n"
            "cache_write C [i+j.o]\n"
            "vectorize C [j.i]\n");
  std::vector<Schedule> results = results_of(p, s, MutationKind::kSplit, 64);
  std::set<std::string> got = texts(results);
  EXPECT_TRUE(
      got.count("split C [j] by 64\n"
                "split C [j.o] by 2\n"
                "reorder C [i, j.o.o, j.o.i, k, j.i]\n"
                "fuse C [i, j.o.o]\n"
                "parallel C [i+j.o.o]\n"
                "cache_write C [i+j.o.o]\n"
                "vectorize C [j.i]\n"))
      << results.size();
  EXPECT_TRUE(
      got.count("split C [i] by 4\n"
                "split C [j] by 64\n"
                "reorder C [i.o, j.o, k, i.i, j.i]\n"
                "fuse C [i.o, j.o]\n"
                "parallel C [i.o+j.o]\n"
                "cache_write C [i.o+j.o]\n"
                "vectorize C [j.i]\n"
                "unroll C [i.i]\n"
                "explicit_vectors C [j.i] of 16 lanes\n"));
  // Every result is the input with one split more (and what follows from it), by a divisor of the split loop.
  const std::map<std::string, int64_t> extents = {{"i", 512}, {"j.o", 8}, {"k", 512}};
  std::set<std::string> split_loops;
  for (const Schedule& r : results) {
    int splits = 0;
    for (const Decision& d : r.decisions())
      if (d.kind == DecisionKind::kSplit && d.axes[0] != "j") {
        ++splits;
        ASSERT_TRUE(extents.count(d.axes[0])) << text(r);
        EXPECT_EQ(extents.at(d.axes[0]) % d.factor, 0) << text(r);
        split_loops.insert(d.axes[0]);
      }
    EXPECT_EQ(splits, 1) << text(r);
  }
  EXPECT_EQ(split_loops, (std::set<std::string>{"i", "j.o", "k"}));
}

// The 2-D register tile of the GEMM is one split away from that schedule: among 64 seeds, some split of i moves i.i
// inside k, just outside the vectorized columns, and unrolls it.
TEST(ScheduleMutation, SplitReachesTheRegisterTileOfAGemm) {
  Program p = matmul(512, 512, 512);
  Schedule s = make_strategy_program(p, "global", test_support::avx512_cpu(), without_stencil_tiles()).schedule;
  std::set<int64_t> rows;
  for (const Schedule& r : results_of(p, s, MutationKind::kSplit, 64)) {
    bool tile = false, unrolled = false;
    for (const Decision& d : r.decisions()) {
      tile |= d.kind == DecisionKind::kReorder && d.axes == std::vector<std::string>{"i.o", "j.o", "k", "i.i", "j.i"};
      unrolled |= d.kind == DecisionKind::kUnroll && d.axes[0] == "i.i";
    }
    if (tile && unrolled) rows.insert(r.decisions()[0].factor);
  }
  EXPECT_TRUE(rows.count(4)) << rows.size();
}

// A split renames what follows: a stage computed at the split loop moves to its outer part, and the tile variant's
// unroll names the inner part.
TEST(ScheduleMutation, SplitRenamesAComputeAtTarget) {
  Program p = matmul_bias_relu(24, 20, 16);
  Schedule s;
  s.compute_at("C", "D", "i").reorder("C", {"k", "i", "j"}).vectorize("C", "j");
  s.reorder("D", {"i", "j"}).vectorize("D", "j");
  int of_d = 0;
  for (const Schedule& r : results_of(p, s, MutationKind::kSplit, 64)) {
    const std::vector<Decision>& ds = r.decisions();
    if (ds.size() < 4 || ds[3].kind != DecisionKind::kSplit || ds[3].stage != "D") continue;
    ++of_d;
    std::string prefix = "compute_at C [i.o] at D\nreorder C [k, i, j]\nvectorize C [j]\nsplit D [i] by " +
                         std::to_string(ds[3].factor) + "\nreorder D [i.o, i.i, j]\nvectorize D [j]\n";
    EXPECT_EQ(text(r).substr(0, prefix.size()), prefix);
    EXPECT_TRUE(text(r) == prefix || text(r) == prefix + "unroll D [i.i]\n") << text(r);
  }
  EXPECT_GT(of_d, 3);
}

// A handful of mutated and crossed schedules compile and compute what the interpreter computes.
// Vector axis removes a vectorize decision, or vectorizes another unannotated spatial loop, moved innermost by a
// reorder of the loops from it inward.
TEST(ScheduleMutation, VectorAxisMovesTheVectorizedLoop) {
  Tensor x = placeholder("x", {8, 64});
  Program p({compute("y", {8, 64}, [&](const std::vector<Expr>& i) { return x(i[0], i[1]) * 2.0; })}, "scale");
  EXPECT_EQ(texts(results_of(p, Schedule(), MutationKind::kVectorAxis)),
            (std::set<std::string>{"vectorize y [j]\n", "reorder y [j, i]\nvectorize y [i]\n"}));
  Schedule s;
  s.vectorize("y", "j");
  EXPECT_EQ(texts(results_of(p, s, MutationKind::kVectorAxis)),
            (std::set<std::string>{"", "reorder y [j, i]\nvectorize y [i]\n"}));
  // A parallel loop is never moved or vectorized; a split's inner part is, behind the loops after it.
  Schedule tiled;
  tiled.split("y", "j", 4).parallel("y", "i").vectorize("y", "j.i");
  EXPECT_EQ(texts(results_of(p, tiled, MutationKind::kVectorAxis)),
            (std::set<std::string>{"split y [j] by 4\nparallel y [i]\n",
                                   "split y [j] by 4\nparallel y [i]\nreorder y [j.i, j.o]\nvectorize y [j.o]\n"}));
}

TEST(ScheduleMutation, MutatedSchedulesComputeWhatTheInterpreterComputes) {
  LocalRunOptions options;
  options.warmup_runs = 0;
  options.min_repeat_ms = 0;
  options.min_repeats = 1;
  auto check = [&](const Program& p, const Schedule& s, const InputRanges& ranges) {
    TensorMap inputs = random_inputs(p, 3, ranges);
    EXPECT_TRUE(local_run(p, s, inputs, interpret(p, inputs), options).correct) << p.name() << ": " << s.to_json();
  };
  auto chain = [](const Program& p, Schedule s, uint64_t seed) {
    std::mt19937_64 rng(seed);
    for (int n = 0; n < 4; ++n)
      if (std::optional<Schedule> next = mutate(p, s, rng)) s = *next;
    return s;
  };
  Program mbr = matmul_bias_relu(24, 20, 16);
  Schedule global = make_strategy_program(mbr, "global", test_support::avx512_cpu()).schedule;
  check(mbr, chain(mbr, global, 1), {});
  Program gemms = two_gemm(8, 24, 16, 12);
  std::mt19937_64 sampler(4);
  check(gemms, chain(gemms, sample_schedule(gemms, sampler), 2), {});
  Program sm = softmax(6, 20);
  Schedule sm_global = make_strategy_program(sm, "global", test_support::avx512_cpu()).schedule;
  SamplerOptions in_layout;
  in_layout.layout = sm_global.layout();
  std::optional<Schedule> child;
  for (uint64_t seed = 0; !child && seed < 10; ++seed) {
    std::mt19937_64 rng(seed);
    child = crossover(sm, sm_global, sample_schedule(sm, sampler, in_layout), rng);
  }
  ASSERT_TRUE(child);
  check(sm, *child, {});
  // The QKV GEMM with its register tile resplit, still held in explicit vectors.
  const TaskWorkload& w = task("task:bert_qkv");
  Program qkv = w.build(w.small);
  Schedule qkv_global = make_strategy_program(qkv, "global", test_support::avx512_cpu()).schedule;
  std::optional<Schedule> resplit;
  for (const Schedule& r : results_of(qkv, qkv_global, MutationKind::kResplit))
    if (!resplit && r.decisions()[1].factor != 4 && r.decisions().back().kind == DecisionKind::kExplicitVectors)
      resplit = r;
  ASSERT_TRUE(resplit);
  check(qkv, *resplit, w.input_ranges(w.small));
  // A GEMM split into its 2-D register tile: 4 rows (i.i unrolled inside k) x 64 columns, in explicit vectors.
  Program mm = matmul(64, 128, 64);
  Schedule mm_global = make_strategy_program(mm, "global", test_support::avx512_cpu()).schedule;
  std::optional<Schedule> tile;
  for (const Schedule& r : results_of(mm, mm_global, MutationKind::kSplit, 64))
    for (const Decision& d : r.decisions())
      if (!tile && d.kind == DecisionKind::kUnroll && d.axes[0] == "i.i" && r.decisions()[0].factor == 4 &&
          r.decisions().back().kind == DecisionKind::kExplicitVectors)
        tile = r;
  ASSERT_TRUE(tile) << text(mm_global);
  check(mm, *tile, {});
  // The depthwise convolution's global schedule with another loop vectorized.
  const TaskWorkload& dw = task("task:efficientnet_depthwise");
  Program depthwise = dw.build(dw.small);
  Schedule dw_global = make_strategy_program(depthwise, "global", test_support::avx512_cpu()).schedule;
  std::vector<Schedule> moved = results_of(depthwise, dw_global, MutationKind::kVectorAxis);
  ASSERT_FALSE(moved.empty()) << text(dw_global);
  for (size_t n = 0; n < moved.size() && n < 3; ++n) check(depthwise, moved[n], dw.input_ranges(dw.small));
}

}  // namespace
}  // namespace ingot
