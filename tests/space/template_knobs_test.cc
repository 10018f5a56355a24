// The fixed strategy schedule's knobs (space/strategy_schedule.h, TemplateKnobs): the defaults are the fixed schedule,
// each knob changes the decisions it names, every value of every range lowers on the examples, the task workloads
// and the small paper models under every strategy and both fixed CPU targets, and sampling and mutation are
// deterministic. The golden files (tests/codegen/golden_code_test.cc) check the defaults' code byte for byte.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <random>
#include <set>

#include "analysis/strategies.h"
#include "codegen/pipeline.h"
#include "interp/interpreter.h"
#include "lower/lower.h"
#include "ops/conv.h"
#include "ops/elementwise.h"
#include "runtime/local_run.h"
#include "space/strategy_schedule.h"
#include "tests/support/fixed_targets.h"
#include "workloads/examples.h"
#include "workloads/lstm.h"
#include "workloads/registry.h"
#include "workloads/tasks.h"

namespace ingot {
namespace {

const char* const kStrategies[] = {"unfused", "rules", "subgraph", "global"};

struct NamedProgram {
  std::string name;
  Program program;
  InputRanges ranges;
  std::vector<std::string> weights = {};  // what the schedules may pack (FixedScheduleOptions::weights)
};

// The example programs at their small sizes and the task workloads at their small variants' sizes.
const std::vector<NamedProgram>& examples_and_tasks() {
  static const std::vector<NamedProgram> all = [] {
    std::vector<NamedProgram> out;
    for (const ExampleProgram& e : example_programs()) out.push_back({e.name, e.make_small(), {}});
    for (const TaskWorkload& t : task_workloads())
      out.push_back(
          {t.name, make_workload(t.name, t.small), workload_input_ranges(t.name, t.small), t.weight_names(t.small)});
    return out;
  }();
  return all;
}

std::vector<std::pair<std::string, Target>> targets() {
  return {{"avx512", test_support::avx512_cpu()}, {"avx2", test_support::avx2_cpu()}};
}

// p's strategy schedule with these options, lowered, merged and printed as C++ (the loop IR verified after each
// pass under ctest), reporting the knobs that failed.
void expect_lowers(const NamedProgram& p, const std::string& strategy, const std::string& target_name,
                   const Target& target, const FixedScheduleOptions& options) {
  try {
    FixedScheduleOptions packing = options;
    packing.weights = p.weights;
    compile_to_cpp_source(p.program, make_strategy_program(p.program, strategy, target, packing).schedule);
  } catch (const std::exception& e) {
    ADD_FAILURE() << p.name << " " << strategy << " " << target_name << ": " << knobs_to_string(options) << ": "
                  << e.what();
  }
}

void expect_lowers_everywhere(const NamedProgram& p, const FixedScheduleOptions& options) {
  for (const char* strategy : kStrategies)
    for (const auto& [name, target] : targets()) expect_lowers(p, strategy, name, target, options);
}

// The decisions about one stage, one per line (Decision::to_string).
std::string decisions_of(const Schedule& s, const std::string& stage) {
  std::string out;
  for (const Decision& d : s.decisions())
    if (d.stage == stage) out += d.to_string() + "\n";
  return out;
}

Schedule avx512_schedule(const Program& p, const std::string& strategy, const FixedScheduleOptions& options = {}) {
  return make_strategy_program(p, strategy, test_support::avx512_cpu(), options).schedule;
}

FixedScheduleOptions with_knob(const std::string& name, int value) {
  FixedScheduleOptions options;
  set_knob(options, name, value);
  return options;
}

TEST(TemplateKnobs, DefaultsAreTheFixedSchedulesConstants) {
  EXPECT_EQ(
      TemplateKnobs{}.to_string(),
      "register_tile=4 gemv_rows=8 gate_chunk=16 accumulator_vectors=0 plane_row_share=0 "
      "min_stencil_iterations=64 min_reduction_lanes=8 reuse_operand_order=1 cache_write=1 prefetch=1 "
      "stencil_tiles=1 plane_tiles=1 pack_weights=1 panel_vectors=0 channel_tiles=1 channel_vectors=0 band_rows=16 "
      "pad_rows=1 channel_blocks=1");
  EXPECT_EQ(knobs_to_string(FixedScheduleOptions{}), "max_vector_lanes=64 " + TemplateKnobs{}.to_string());
  FixedScheduleOptions from_ranges;
  from_ranges.max_vector_lanes = 8;
  from_ranges.knobs.cache_write = false;
  for (const KnobRange& range : template_knob_ranges()) {
    EXPECT_EQ(range.default_value, knob_value(FixedScheduleOptions{}, range.name)) << range.name;
    set_knob(from_ranges, range.name, range.default_value);
  }
  EXPECT_EQ(from_ranges, FixedScheduleOptions{});
}

TEST(TemplateKnobs, RangesHoldTheirDefaultAndDistinctValues) {
  std::set<std::string> names;
  for (const KnobRange& range : template_knob_ranges()) {
    EXPECT_TRUE(names.insert(range.name).second) << range.name;
    EXPECT_GE(range.values.size(), 2u) << range.name;
    EXPECT_EQ(std::set<int>(range.values.begin(), range.values.end()).size(), range.values.size()) << range.name;
    EXPECT_THAT(range.values, testing::Contains(range.default_value)) << range.name;
  }
  EXPECT_EQ(template_knob_ranges().front().name, "max_vector_lanes");
  EXPECT_EQ(names.size(), 20u);
}

TEST(TemplateKnobs, SetKnobRefusesUnknownNamesAndValuesOutsideTheRange) {
  FixedScheduleOptions options;
  EXPECT_THAT([&] { set_knob(options, "register_tiles", 2); },
              testing::ThrowsMessage<std::invalid_argument>(
                  testing::HasSubstr("unknown knob 'register_tiles' (knobs: max_vector_lanes, register_tile, ")));
  EXPECT_THAT([&] { set_knob(options, "register_tile", 3); },
              testing::ThrowsMessage<std::invalid_argument>(
                  testing::StrEq("knob register_tile: 3 is not one of {1, 2, 4, 8}")));
  EXPECT_THAT([&] { (void)knob_value(options, "nope"); }, testing::Throws<std::invalid_argument>());
  EXPECT_EQ(options, FixedScheduleOptions{});
  set_knob(options, "cache_write", 0);
  set_knob(options, "max_vector_lanes", 32);
  EXPECT_FALSE(options.knobs.cache_write);
  EXPECT_EQ(options.max_vector_lanes, 32);
  EXPECT_EQ(knob_value(options, "cache_write"), 0);
}

// A linear layer C[i, j] = sum_k A[i, k] W[j, k] alone (unfused): a 4 x 4 register tile by default, inside a parallel
// loop that visits W's rows first, accumulating in a local tile. Each knob changes its part of that.
TEST(TemplateKnobs, KnobsChangeTheLinearLayersDecisions) {
  const int64_t rows = 12, cols = 128, K = 32;
  Tensor A = placeholder("A", {rows, K}), W = placeholder("W", {cols, K});
  IterVar k = reduce_axis(K, "k");
  Tensor C =
      compute("C", {rows, cols}, [&](const std::vector<Expr>& i) { return sum(A(i[0], k.var) * W(i[1], k.var), {k}); });
  Program p({C}, "linear");
  const std::string before =
      "split C [i] by 4\n"
      "split C [j] by 64\n"
      "split C [j.i] by 4\n"
      "reorder C [j.o, i.o, j.i.o, k, i.i, j.i.i]\n"
      "fuse C [j.o, i.o]\n"
      "parallel C [j.o+i.o]\n"
      "cache_write C [j.o+i.o]\n"
      "vectorize C [k]\n"
      "unroll C [i.i]\n"
      "unroll C [j.i.i]\n"
      "explicit_vectors C [k] of 16 lanes\n";
  EXPECT_EQ(decisions_of(avx512_schedule(p, "unfused"), "C"), before);
  // Outside min_reduction_lanes' range, set directly to show what the knob does where k is shorter.
  FixedScheduleOptions long_lanes;
  long_lanes.knobs.min_reduction_lanes = 64;
  struct Case {
    std::string what;
    FixedScheduleOptions options;
    std::string expected;
  };
  const std::vector<Case> cases = {
      {"register_tile=2", with_knob("register_tile", 2),  // a 2 x 2 tile
       "split C [i] by 2\n"
       "split C [j] by 64\n"
       "split C [j.i] by 2\n"
       "reorder C [j.o, i.o, j.i.o, k, i.i, j.i.i]\n"
       "fuse C [j.o, i.o]\n"
       "parallel C [j.o+i.o]\n"
       "cache_write C [j.o+i.o]\n"
       "vectorize C [k]\n"
       "unroll C [i.i]\n"
       "unroll C [j.i.i]\n"
       "explicit_vectors C [k] of 16 lanes\n"},
      {"cache_write=0", with_knob("cache_write", 0),  // accumulates in C itself
       "split C [i] by 4\n"
       "split C [j] by 64\n"
       "split C [j.i] by 4\n"
       "reorder C [j.o, i.o, j.i.o, k, i.i, j.i.i]\n"
       "fuse C [j.o, i.o]\n"
       "parallel C [j.o+i.o]\n"
       "vectorize C [k]\n"
       "unroll C [i.i]\n"
       "unroll C [j.i.i]\n"
       "explicit_vectors C [k] of 16 lanes\n"},
      {"reuse_operand_order=0", with_knob("reuse_operand_order", 0),  // A's rows outermost
       "split C [i] by 4\n"
       "split C [j] by 64\n"
       "split C [j.i] by 4\n"
       "reorder C [i.o, j.o, j.i.o, k, i.i, j.i.i]\n"
       "fuse C [i.o, j.o]\n"
       "parallel C [i.o+j.o]\n"
       "cache_write C [i.o+j.o]\n"
       "vectorize C [k]\n"
       "unroll C [i.i]\n"
       "unroll C [j.i.i]\n"
       "explicit_vectors C [k] of 16 lanes\n"},
      {"max_vector_lanes=32", with_knob("max_vector_lanes", 32),  // 32 columns per iteration
       "split C [i] by 4\n"
       "split C [j] by 32\n"
       "split C [j.i] by 4\n"
       "reorder C [j.o, i.o, j.i.o, k, i.i, j.i.i]\n"
       "fuse C [j.o, i.o]\n"
       "parallel C [j.o+i.o]\n"
       "cache_write C [j.o+i.o]\n"
       "vectorize C [k]\n"
       "unroll C [i.i]\n"
       "unroll C [j.i.i]\n"
       "explicit_vectors C [k] of 16 lanes\n"},
      {"min_reduction_lanes=32", with_knob("min_reduction_lanes", 32), before},  // k (32) is still long enough
      {"min_reduction_lanes=64",
       long_lanes,  // k is too short to vectorize: the columns are unrolled scalar loops instead
       "split C [j] by 64\n"
       "reorder C [i, j.o, k, j.i]\n"
       "fuse C [i, j.o]\n"
       "parallel C [i+j.o]\n"
       "cache_write C [i+j.o]\n"
       "unroll C [j.i]\n"},
  };
  for (const Case& c : cases)
    EXPECT_EQ(decisions_of(avx512_schedule(p, "unfused", c.options), "C"), c.expected) << c.what;
}

// An LSTM under `global`: each step's GEMV U h runs over the cell's chunks of hidden units, all four gates of a chunk
// per iteration, 8 rows at once. gate_chunk splits both the cell and the GEMV (they stay aligned, so codegen still
// merges them and a step keeps one barrier); gemv_rows sets the GEMV's tile.
TEST(TemplateKnobs, GateChunkAndGemvRowsKeepTheLstmGemvAlignedWithItsCell) {
  LstmSizes sizes{1, 4, 32, 16};
  Program p = lstm(sizes);
  EXPECT_EQ(
      decisions_of(avx512_schedule(p, "global"), "uh_l0_t1") + decisions_of(avx512_schedule(p, "global"), "h_l0_t1"),
      "split uh_l0_t1 [i] by 32\n"
      "split uh_l0_t1 [i.i] by 16\n"
      "split uh_l0_t1 [i.i.i] by 8\n"
      "reorder uh_l0_t1 [i.i.o, i.o, i.i.i.o, k, i.i.i.i]\n"
      "parallel uh_l0_t1 [i.i.o]\n"
      "cache_write uh_l0_t1 [i.o]\n"
      "vectorize uh_l0_t1 [k]\n"
      "unroll uh_l0_t1 [i.i.i.i]\n"
      "explicit_vectors uh_l0_t1 [k] of 16 lanes\n"
      "split h_l0_t1 [i] by 16\n"
      "reorder h_l0_t1 [i.o, i.i]\n"
      "parallel h_l0_t1 [i.o]\n"
      "vectorize h_l0_t1 [i.i]\n");
  FixedScheduleOptions options = with_knob("gate_chunk", 8);
  set_knob(options, "gemv_rows", 2);
  Schedule s = avx512_schedule(p, "global", options);
  EXPECT_EQ(decisions_of(s, "uh_l0_t1") + decisions_of(s, "h_l0_t1"),
            "split uh_l0_t1 [i] by 32\n"
            "split uh_l0_t1 [i.i] by 8\n"
            "split uh_l0_t1 [i.i.i] by 2\n"
            "reorder uh_l0_t1 [i.i.o, i.o, i.i.i.o, k, i.i.i.i]\n"
            "parallel uh_l0_t1 [i.i.o]\n"
            "cache_write uh_l0_t1 [i.o]\n"
            "vectorize uh_l0_t1 [k]\n"
            "unroll uh_l0_t1 [i.i.i.i]\n"
            "split h_l0_t1 [i] by 8\n"
            "reorder h_l0_t1 [i.o, i.i]\n"
            "parallel h_l0_t1 [i.o]\n"
            "vectorize h_l0_t1 [i.i]\n");
  std::string cpp = compile_to_cpp_source(p, s).source;
  size_t barriers = 0;
  for (size_t at = cpp.find("#pragma omp barrier"); at != std::string::npos;
       at = cpp.find("#pragma omp barrier", at + 1))
    ++barriers;
  EXPECT_EQ(barriers, size_t(sizes.steps)) << cpp;  // as with the defaults (strategy_schedule_test.cc)
}

// A 1 x 1 convolution runs its plane as one loop, four channels at once; a padded 3 x 3 one a stencil tile of four
// channels. The tile knobs move between them and the plain root schedule.
TEST(TemplateKnobs, TileKnobsChangeTheConvolutionsTiles) {
  Tensor x = placeholder("x", {1, 16, 6, 6}), w = placeholder("w", {8, 16, 1, 1}), b = placeholder("b", {8});
  Program pointwise({relu("y", conv2d("c", x, w, b))}, "pointwise");
  EXPECT_EQ(decisions_of(avx512_schedule(pointwise, "unfused"), "c_conv"),
            "fuse c_conv [l, m]\n"
            "split c_conv [j] by 4\n"
            "reorder c_conv [i, j.o, rc, ry, rx, j.i, l+m]\n"
            "fuse c_conv [i, j.o]\n"
            "parallel c_conv [i+j.o]\n"
            "cache_write c_conv [i+j.o]\n"
            "unroll c_conv [j.i]\n"
            "vectorize c_conv [l+m]\n"
            "explicit_vectors c_conv [l+m] of 16 lanes\n");
  // 8 accumulator registers hold 2 of the plane's rows per vector register quarter: half planes of 18 lanes.
  EXPECT_EQ(decisions_of(avx512_schedule(pointwise, "unfused", with_knob("accumulator_vectors", 8)), "c_conv"),
            "fuse c_conv [l, m]\n"
            "split c_conv [j] by 4\n"
            "split c_conv [l+m] by 18\n"
            "reorder c_conv [i, j.o, l+m.o, rc, ry, rx, j.i, l+m.i]\n"
            "fuse c_conv [i, j.o]\n"
            "fuse c_conv [i+j.o, l+m.o]\n"
            "parallel c_conv [i+j.o+l+m.o]\n"
            "cache_write c_conv [i+j.o+l+m.o]\n"
            "unroll c_conv [j.i]\n"
            "vectorize c_conv [l+m.i]\n"
            "explicit_vectors c_conv [l+m.i] of 16 lanes\n");
  // Without plane tiles, the 1 x 1 convolution takes the stencil tile: one row of the plane at a time.
  EXPECT_EQ(decisions_of(avx512_schedule(pointwise, "unfused", with_knob("plane_tiles", 0)), "c_conv"),
            "split c_conv [j] by 4\n"
            "reorder c_conv [i, j.o, l, rc, ry, rx, j.i, m]\n"
            "fuse c_conv [i, j.o]\n"
            "fuse c_conv [i+j.o, l]\n"
            "parallel c_conv [i+j.o+l]\n"
            "cache_write c_conv [i+j.o+l]\n"
            "unroll c_conv [j.i]\n"
            "vectorize c_conv [m]\n"
            "explicit_vectors c_conv [m] of 16 lanes\n");

  Conv2dAttrs padded;
  padded.padding = {1, 1, 1, 1};
  Tensor w3 = placeholder("w3", {8, 16, 3, 3});
  Program p3({relu("y", conv2d("c", x, w3, b, padded))}, "padded");
  // 4 channels x 1 row: 2 x 6 = 12 iterations of the parallel loop are fewer than 64 already.
  const std::string stencil =
      "split c_conv [j] by 4\n"
      "reorder c_conv [i, j.o, l, rc, ry, rx, j.i, m]\n"
      "fuse c_conv [i, j.o]\n"
      "fuse c_conv [i+j.o, l]\n"
      "parallel c_conv [i+j.o+l]\n"
      "cache_write c_conv [i+j.o+l]\n"
      "unroll c_conv [j.i]\n"
      "vectorize c_conv [m]\n"
      "explicit_vectors c_conv [m] of 16 lanes\n";
  EXPECT_EQ(decisions_of(avx512_schedule(p3, "unfused"), "c_conv"), stencil);
  // With no floor on the parallel loop's iterations, all 6 rows join the tile (4 x 6 accumulators).
  EXPECT_EQ(decisions_of(avx512_schedule(p3, "unfused", with_knob("min_stencil_iterations", 1)), "c_conv"),
            "split c_conv [j] by 4\n"
            "reorder c_conv [i, j.o, rc, ry, rx, j.i, l, m]\n"
            "fuse c_conv [i, j.o]\n"
            "parallel c_conv [i+j.o]\n"
            "cache_write c_conv [i+j.o]\n"
            "unroll c_conv [j.i]\n"
            "unroll c_conv [l]\n"
            "vectorize c_conv [m]\n"
            "explicit_vectors c_conv [m] of 16 lanes\n");
  EXPECT_EQ(decisions_of(avx512_schedule(p3, "unfused", with_knob("stencil_tiles", 0)), "c_conv"),
            "reorder c_conv [i, j, l, rc, ry, rx, m]\n"
            "fuse c_conv [i, j]\n"
            "fuse c_conv [i+j, l]\n"
            "parallel c_conv [i+j+l]\n"
            "cache_write c_conv [i+j+l]\n"
            "vectorize c_conv [m]\n");
  std::string without_cache_write = stencil;
  without_cache_write.erase(without_cache_write.find("cache_write"),
                            std::string("cache_write c_conv [i+j.o+l]\n").size());
  EXPECT_EQ(decisions_of(avx512_schedule(p3, "unfused", with_knob("cache_write", 0)), "c_conv"), without_cache_write);
}

// cache_write=0 drops every cache_write of every strategy's schedule (GEMMs, GEMVs, gates, plane and stencil tiles).
TEST(TemplateKnobs, CacheWriteOffDropsEveryLocalTile) {
  FixedScheduleOptions off = with_knob("cache_write", 0);
  for (const char* model : {"lstm", "bert", "resnext"}) {
    Program p = make_workload(model, find_workload(model)->small);
    for (const char* strategy : kStrategies) {
      auto cache_writes = [&](const FixedScheduleOptions& options) {
        int n = 0;
        Schedule s = avx512_schedule(p, strategy, options);
        for (const Decision& d : s.decisions()) n += d.kind == DecisionKind::kCacheWrite;
        return n;
      };
      EXPECT_GT(cache_writes({}), 0) << model << " " << strategy;
      EXPECT_EQ(cache_writes(off), 0) << model << " " << strategy;
    }
  }
}

// prefetch=0 empties the layout's prefetch lists and changes nothing else. On a GPU: a CPU's plans prefetch nothing
// (prefetch_capacity_bytes).
TEST(TemplateKnobs, PrefetchOffEmptiesTheLayoutsPrefetchLists) {
  Program p = make_workload("mmoe");  // paper size, whose GPU plan prefetches
  const Target gpu = *find_target("sm_90");
  Schedule with = make_strategy_program(p, "global", gpu).schedule,
           without = make_strategy_program(p, "global", gpu, with_knob("prefetch", 0)).schedule;
  StageLayout expected = with.layout();
  size_t prefetches = 0;
  for (LayoutStep& step : expected) {
    prefetches += step.prefetch.size();
    step.prefetch.clear();
  }
  EXPECT_GT(prefetches, 0u);
  EXPECT_EQ(without.layout(), expected);
  EXPECT_EQ(without.decisions(), with.decisions());
  EXPECT_EQ(without.to_json().find("\"prefetch\""), std::string::npos);
  EXPECT_NE(to_string(lower(p, with)).find("prefetch "), std::string::npos);
  EXPECT_EQ(to_string(lower(p, without)).find("prefetch "), std::string::npos);
}

TEST(TemplateKnobs, SampledKnobsLowerOnEveryExampleAndTask) {
  std::mt19937_64 rng(17);
  for (int n = 0; n < 16; ++n) {
    FixedScheduleOptions options = sample_template_knobs(rng);
    for (const NamedProgram& p : examples_and_tasks()) expect_lowers_everywhere(p, options);
  }
}

// Each value of each range, the other knobs at their defaults, on every example and task.
TEST(TemplateKnobs, EveryValueOfEveryKnobLowers) {
  for (const KnobRange& range : template_knob_ranges())
    for (int value : range.values) {
      if (value == range.default_value) continue;
      FixedScheduleOptions options = with_knob(range.name, value);
      for (const NamedProgram& p : examples_and_tasks()) expect_lowers_everywhere(p, options);
    }
}

// The small paper models hold what the tasks do not: whole LSTM steps with their gate GEMVs.
TEST(TemplateKnobs, SampledKnobsLowerOnTheSmallPaperModels) {
  std::mt19937_64 rng(29);
  for (const char* model : {"lstm", "mmoe", "bert", "resnext", "efficientnet", "swin"}) {
    NamedProgram p{model,
                   make_workload(model, find_workload(model)->small),
                   {},
                   find_workload(model)->weight_names(find_workload(model)->small)};
    for (int n = 0; n < 2; ++n) expect_lowers_everywhere(p, sample_template_knobs(rng));
  }
}

// A handful of sampled knobs compile and compute what the interpreter computes (six compiles).
TEST(TemplateKnobs, SampledKnobsComputeWhatTheInterpreterComputes) {
  const std::vector<std::pair<std::string, std::string>> runs = {
      {"task:lstm_cell", "global"},      {"task:resnext_conv3x3_grouped", "global"},
      {"task:resnext_conv1x1", "rules"}, {"task:bert_ffn", "unfused"},
      {"two_gemm", "subgraph"},          {"task:efficientnet_depthwise", "global"},
  };
  std::mt19937_64 rng(5);
  LocalRunOptions run_options;
  run_options.warmup_runs = 0;
  run_options.min_repeat_ms = 0;
  run_options.min_repeats = 1;
  for (const auto& [name, strategy] : runs) {
    const NamedProgram* p = nullptr;
    for (const NamedProgram& candidate : examples_and_tasks())
      if (candidate.name == name) p = &candidate;
    ASSERT_NE(p, nullptr) << name;
    FixedScheduleOptions options = sample_template_knobs(rng);
    options.weights = p->weights;
    Schedule s = avx512_schedule(p->program, strategy, options);
    TensorMap inputs = random_inputs(p->program, 3, p->ranges);
    LocalRunResult r = local_run(p->program, s, inputs, interpret(p->program, inputs), run_options);
    for (const Comparison& c : r.checks) EXPECT_TRUE(c.ok) << name << " " << knobs_to_string(options) << c.message;
    EXPECT_TRUE(r.correct) << name << " " << strategy << ": " << knobs_to_string(options);
  }
}

TEST(TemplateKnobs, SamplingIsDeterministicAndCoversEveryValue) {
  std::mt19937_64 a(1), b(1);
  FixedScheduleOptions first = sample_template_knobs(a);
  EXPECT_EQ(first, sample_template_knobs(b));
  // The draws are rng() % size, the same with every standard library.
  EXPECT_EQ(
      knobs_to_string(first),
      "max_vector_lanes=64 register_tile=4 gemv_rows=1 gate_chunk=8 accumulator_vectors=12 plane_row_share=8 "
      "min_stencil_iterations=1 min_reduction_lanes=2 reuse_operand_order=0 cache_write=0 prefetch=0 "
      "stencil_tiles=1 plane_tiles=1 pack_weights=1 panel_vectors=0 channel_tiles=1 channel_vectors=4 band_rows=0 "
      "pad_rows=1 channel_blocks=0");
  FixedScheduleOptions base;
  base.gpu = true;
  base.simd_fp32_lanes = 8;
  base.gpu_threads = 128;
  std::map<std::string, std::set<int>> seen;
  for (int n = 0; n < 200; ++n) {
    FixedScheduleOptions s = sample_template_knobs(a, base);
    EXPECT_TRUE(s.gpu && s.simd_fp32_lanes == 8 && s.gpu_threads == 128);
    for (const KnobRange& range : template_knob_ranges()) seen[range.name].insert(knob_value(s, range.name));
  }
  for (const KnobRange& range : template_knob_ranges())
    EXPECT_EQ(seen[range.name], std::set<int>(range.values.begin(), range.values.end())) << range.name;
}

TEST(TemplateKnobs, MutationChangesExactlyOneKnobToAnotherValueOfItsRange) {
  std::mt19937_64 rng(3), same(3);
  std::set<std::string> mutated;
  FixedScheduleOptions options;
  for (int n = 0; n < 300; ++n) {
    FixedScheduleOptions next = mutate_one_knob(options, rng);
    EXPECT_EQ(next, mutate_one_knob(options, same));
    std::vector<std::string> changed;
    for (const KnobRange& range : template_knob_ranges())
      if (knob_value(next, range.name) != knob_value(options, range.name)) {
        changed.push_back(range.name);
        EXPECT_THAT(range.values, testing::Contains(knob_value(next, range.name))) << range.name;
      }
    ASSERT_EQ(changed.size(), 1u) << knobs_to_string(options) << " -> " << knobs_to_string(next);
    mutated.insert(changed[0]);
    options = next;
  }
  EXPECT_EQ(mutated.size(), template_knob_ranges().size());
  // A value outside its range still changes, to one inside it.
  FixedScheduleOptions odd;
  odd.knobs.register_tile = 3;
  std::mt19937_64 again(7);
  for (int n = 0; n < 100; ++n) {
    FixedScheduleOptions next = mutate_one_knob(odd, again);
    if (next.knobs.register_tile != 3) {
      EXPECT_THAT(std::vector<int>({1, 2, 4, 8}), testing::Contains(next.knobs.register_tile));
    }
  }
}

}  // namespace
}  // namespace ingot
