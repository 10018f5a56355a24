// Every fusion strategy's program, lowered from its plan with the fixed schedules, computes what the
// interpreter computes on the small variants of the six paper models, and the kernels it runs are the plan's.
#include "space/strategy_schedule.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "analysis/strategies.h"
#include "codegen/pipeline.h"
#include "compile/cpp_compiler.h"
#include "interp/interpreter.h"
#include "ir/functor.h"
#include "lower/kernels.h"
#include "lower/lower.h"
#include "ops/conv.h"
#include "ops/elementwise.h"
#include "ops/reduce.h"
#include "runtime/local_run.h"
#include "tests/support/fixed_targets.h"
#include "workloads/lstm.h"
#include "workloads/registry.h"

namespace ingot {

// Test parameters print as the ISA's name (ADL finds it in CpuIsa's namespace).
void PrintTo(CpuIsa isa, std::ostream* os) { *os << cpu_isa_name(isa); }

namespace {

// A fixed AVX-512 CPU: the schedules must not depend on the machine running the test. Their code still runs
// on an AVX2-only machine, where the printer's explicit 16-lane forms fall back to their portable loops.
const Target& cpu() {
  static const Target target = test_support::avx512_cpu();
  return target;
}

TEST(StrategySchedule, PlanLayoutHasOneStepPerStageAndAKernelBoundaryPerKernel) {
  Program p = make_workload("mmoe", find_workload("mmoe")->small);
  PartitionPlan plan = make_plan("unfused", p, cpu());
  StageLayout layout = plan_layout(plan);
  ASSERT_EQ(layout.size(), p.computes().size());
  EXPECT_FALSE(layout[0].kernel_before);
  for (size_t n = 1; n < layout.size(); ++n) EXPECT_TRUE(layout[n].kernel_before) << n;
  LoopFunction f = lower(p, strategy_schedule(p, plan));
  EXPECT_EQ(kernel_traffic(f).kernel_count(), plan.kernel_count());
  EXPECT_EQ(split_kernels(f).size(), size_t(plan.kernel_count()));
}

// A CPU target gives its lanes, L2 and AMX and keeps the caller's knobs and weights; a GPU target changes nothing.
TEST(StrategySchedule, FixedOptionsForTargetTakeTheCpuTargetsLanesL2AndAmx) {
  FixedScheduleOptions given;
  given.knobs.register_tile = 2;
  given.weights = {"W"};
  Target cpu = test_support::avx2_cpu();
  cpu.cpu.amx_bf16 = true;
  FixedScheduleOptions fixed = fixed_options_for_target(given, cpu);
  EXPECT_EQ(fixed.simd_fp32_lanes, 8);
  EXPECT_EQ(fixed.l2_bytes, 512 * 1024);
  EXPECT_TRUE(fixed.amx_bf16);
  EXPECT_EQ(fixed.knobs, given.knobs);
  EXPECT_EQ(fixed.weights, given.weights);
  EXPECT_EQ(fixed_options_for_target(given, resolve_target("sm_90")), given);
}

TEST(StrategySchedule, GlobalFusesAndMovesLessThanUnfused) {
  for (const char* model : {"mmoe", "lstm", "bert"}) {
    Program p = make_workload(model, find_workload(model)->small);
    StrategyProgram unfused = make_strategy_program(p, "unfused", cpu());
    StrategyProgram global = make_strategy_program(p, "global", cpu());
    KernelTraffic u = kernel_traffic(lower(p, unfused.schedule));
    KernelTraffic g = kernel_traffic(lower(p, global.schedule));
    EXPECT_EQ(g.kernel_count(), 1) << model;
    EXPECT_GT(u.kernel_count(), 10) << model;
    EXPECT_LT(g.bytes_moved(), u.bytes_moved()) << model;
  }
}

TEST(StrategySchedule, ScheduleRoundTripsThroughJsonWithItsLayout) {
  Program p = make_workload("mmoe", find_workload("mmoe")->small);
  for (const char* strategy : {"rules", "global"}) {
    Schedule s = make_strategy_program(p, strategy, cpu()).schedule;
    Schedule back = Schedule::from_json(s.to_json());
    EXPECT_EQ(back, s);
    EXPECT_EQ(back.layout(), s.layout());
  }
}

bool has_decision(const Schedule& s, DecisionKind kind, const std::string& stage, const std::string& axis = "") {
  for (const Decision& d : s.decisions())
    if (d.kind == kind && d.stage == stage && (axis.empty() || (!d.axes.empty() && d.axes[0] == axis))) return true;
  return false;
}

// The loops of `stage`'s last reorder (empty when it has none).
std::vector<std::string> reordered(const Schedule& s, const std::string& stage) {
  std::vector<std::string> order;
  for (const Decision& d : s.decisions())
    if (d.kind == DecisionKind::kReorder && d.stage == stage) order = d.axes;
  return order;
}

// Whether `first` comes before `second` among `order`'s loops (both present).
bool loop_before(const std::vector<std::string>& order, const std::string& first, const std::string& second) {
  auto a = std::find(order.begin(), order.end(), first), b = std::find(order.begin(), order.end(), second);
  return a != order.end() && b != order.end() && a < b;
}

size_t barrier_count(const std::string& cpp) {
  size_t barriers = 0;
  for (size_t at = cpp.find("#pragma omp barrier"); at != std::string::npos;
       at = cpp.find("#pragma omp barrier", at + 1))
    ++barriers;
  return barriers;
}

TensorMap inputs_for(const Program& p) { return random_inputs(p, 3, {}); }

// extra_flags: " -mno-avx512f" runs the plain loops that stand where AVX-512 is not.
void expect_matches_interpreter(const Program& p, const Schedule& s, const std::string& extra_flags = "") {
  TensorMap inputs = inputs_for(p);
  LocalRunOptions options;
  options.compile.flags += extra_flags;
  options.warmup_runs = 0;
  options.min_repeat_ms = 0;
  options.min_repeats = 1;
  LocalRunResult r = local_run(p, s, inputs, interpret(p, inputs), options);
  for (const Comparison& c : r.checks) EXPECT_TRUE(c.ok) << c.message;
  EXPECT_TRUE(r.correct);
}

// A squeeze-excitation gate (a sigmoid per channel) broadcast over a feature map stays a stage of its own even
// in the global plan's single stage: inlined, it would run once per pixel instead of once per channel. A
// transpose read the same way (pure data movement) is still folded into its reader.
TEST(StrategySchedule, KeepsComputedValuesTheirReaderRereadsOutOfTheReader) {
  const int64_t C = 8, HW = 64;
  Tensor x = placeholder("x", {C, HW}), w = placeholder("w", {C});
  auto scaled_by = [&](const Tensor& per_channel) {
    return compute("y", {C, HW}, [&](const std::vector<Expr>& i) { return x(i[0], i[1]) * per_channel(i[0]); });
  };
  Tensor gate = compute("gate", {C}, [&](const std::vector<Expr>& i) { return math::sigmoid(w(i[0])); });
  Program excite({scaled_by(gate)}, "squeeze_excite");
  Tensor moved = compute("moved", {C}, [&](const std::vector<Expr>& i) { return w(C - 1 - i[0]); });
  Program reversed({scaled_by(moved)}, "reversed_scale");
  for (const Program* p : {&excite, &reversed}) {
    StrategyProgram global = make_strategy_program(*p, "global", cpu());
    ASSERT_EQ(global.plan.kernel_count(), 1);
    ASSERT_EQ(global.plan.kernels[0].stages.size(), 1u) << p->name();
    expect_matches_interpreter(*p, global.schedule);
  }
  Schedule excite_schedule = make_strategy_program(excite, "global", cpu()).schedule;
  EXPECT_FALSE(has_decision(excite_schedule, DecisionKind::kComputeInline, "gate")) << excite_schedule.to_json();
  Schedule reversed_schedule = make_strategy_program(reversed, "global", cpu()).schedule;
  EXPECT_TRUE(has_decision(reversed_schedule, DecisionKind::kComputeInline, "moved")) << reversed_schedule.to_json();
}

// A batch norm read twice at the same element by its SiLU (x * sigmoid(x)) is inlined: the compiler computes the two
// reads once, where storing it would write and read back the whole map. Read at two different elements (a sum of
// neighbours), it is computed twice per element inlined, so it stays stored.
TEST(StrategySchedule, InlinesAValueItsReaderReadsTwiceAtTheSameElement) {
  const int64_t C = 8, HW = 64;
  Tensor x = placeholder("x", {C, HW}), scale = placeholder("scale", {C});
  Tensor bn = compute("bn", {C, HW}, [&](const std::vector<Expr>& i) { return x(i[0], i[1]) * scale(i[0]); });
  Tensor silu = compute("silu", {C, HW},
                        [&](const std::vector<Expr>& i) { return bn(i[0], i[1]) * math::sigmoid(bn(i[0], i[1])); });
  Program same({silu}, "silu");
  Tensor bn2 = compute("bn", {C, HW}, [&](const std::vector<Expr>& i) { return x(i[0], i[1]) * scale(i[0]); });
  Tensor neighbours = compute("neighbours", {C, HW}, [&](const std::vector<Expr>& i) {
    return bn2(i[0], i[1]) * math::sigmoid(bn2(i[0], (i[1] + 1) % HW));
  });
  Program different({neighbours}, "neighbours");
  Schedule inlined = make_strategy_program(same, "global", cpu()).schedule;
  EXPECT_TRUE(has_decision(inlined, DecisionKind::kComputeInline, "bn")) << inlined.to_json();
  expect_matches_interpreter(same, inlined);
  Schedule stored = make_strategy_program(different, "global", cpu()).schedule;
  EXPECT_FALSE(has_decision(stored, DecisionKind::kComputeInline, "bn")) << stored.to_json();
  expect_matches_interpreter(different, stored);
}

// Attention heads merged back into rows (a transpose, then a reshape that merges the transposed axis) read by a
// GEMM: folding both would load ctx[k / 8, i, k % 8] on the GEMM's vectorized reduction loop, so the transpose
// is stored and the reshape, affine on the stored transpose, is still folded.
TEST(StrategySchedule, StoresDataMovementThatWouldLeaveAReductionLoadNonAffine) {
  const int64_t heads = 2, rows = 4, depth = 8, K = heads * depth, cols = 16;
  Tensor ctx = placeholder("ctx", {heads, rows, depth}), W = placeholder("W", {cols, K});
  Tensor t = compute("t", {rows, heads, depth}, [&](const std::vector<Expr>& i) { return ctx(i[1], i[0], i[2]); });
  Tensor m = compute("m", {rows, K}, [&](const std::vector<Expr>& i) { return t(i[0], i[1] / depth, i[1] % depth); });
  IterVar k = reduce_axis(K, "k");
  Tensor y =
      compute("y", {rows, cols}, [&](const std::vector<Expr>& i) { return sum(m(i[0], k.var) * W(i[1], k.var), {k}); });
  Program p({y}, "merge_heads");
  StrategyProgram global = make_strategy_program(p, "global", cpu());
  ASSERT_EQ(global.plan.kernel_count(), 1);
  EXPECT_TRUE(has_decision(global.schedule, DecisionKind::kComputeInline, "m")) << global.schedule.to_json();
  EXPECT_FALSE(has_decision(global.schedule, DecisionKind::kComputeInline, "t")) << global.schedule.to_json();
  std::string cpp = compile_to_cpp_source(p, global.schedule).source;
  EXPECT_EQ(cpp.find("/ 8"), std::string::npos) << cpp;
  expect_matches_interpreter(p, global.schedule);
}

// Window attention's logits over 49 keys (a 7 x 7 window), q . k along the head's 32 channels: 49 has no divisor up
// to the 4-output tile, so 7 dot products go together (one at a time before). Still what the interpreter computes.
TEST(StrategySchedule, DotProductsOfAnExtentWithoutSmallDivisorsStillShareATile) {
  const int64_t windows = 4, tokens = 49, channels = 32;
  Tensor q = placeholder("q", {windows, tokens, channels}), k = placeholder("k", {windows, tokens, channels});
  IterVar c = reduce_axis(channels, "c");
  Tensor scores = compute("scores", {windows, tokens, tokens}, [&](const std::vector<Expr>& i) {
    return sum(q(i[0], i[1], c.var) * k(i[0], i[2], c.var), {c});
  });
  Tensor logits = compute("logits", {windows, tokens, tokens},
                          [&](const std::vector<Expr>& i) { return scores(i[0], i[1], i[2]) * Expr(0.25); });
  Program p({logits}, "window_logits");
  Schedule s = make_strategy_program(p, "global", cpu()).schedule;
  bool split_by_7 = false;
  for (const Decision& d : s.decisions())
    split_by_7 = split_by_7 || (d.stage == "scores" && d.kind == DecisionKind::kSplit && d.factor == 7);
  EXPECT_TRUE(split_by_7) << s.to_json();
  EXPECT_TRUE(has_decision(s, DecisionKind::kVectorize, "scores", "c")) << s.to_json();
  std::string source = compile_to_cpp_source(p, s).source;
  EXPECT_NE(source.find("ingot_vacc6 += "), std::string::npos) << source;
  expect_matches_interpreter(p, s);
}

// Attention's q . k^T per head, k^T laid out [head, channel, key] (as ONNX files transpose it): the heads read their
// own keys, so the tile takes rows of queries, which share each load of k^T, not heads (3 heads x 1 row before).
TEST(StrategySchedule, TilesOfABatchedProductTakeRowsNotHeads) {
  const int64_t heads = 4, queries = 32, keys = 128, channels = 16;
  Tensor q = placeholder("q", {heads, queries, channels}), kt = placeholder("kt", {heads, channels, keys});
  IterVar c = reduce_axis(channels, "c");
  Tensor scores = compute("scores", {heads, queries, keys}, [&](const std::vector<Expr>& i) {
    return sum(q(i[0], i[1], c.var) * kt(i[0], c.var, i[2]), {c});
  });
  Tensor scaled = compute("scaled", {heads, queries, keys},
                          [&](const std::vector<Expr>& i) { return scores(i[0], i[1], i[2]) * Expr(0.125); });
  Program p({scaled}, "attention_logits");
  Schedule s = make_strategy_program(p, "global", cpu()).schedule;
  const std::string heads_axis = scaled->axes[0].name(), rows_axis = scaled->axes[1].name();
  EXPECT_FALSE(has_decision(s, DecisionKind::kSplit, "scaled", heads_axis)) << s.to_json();
  EXPECT_TRUE(has_decision(s, DecisionKind::kSplit, "scaled", rows_axis)) << s.to_json();
  expect_matches_interpreter(p, s);
}

// y[i] = sum_k W[i, k] x[k] reads W along k: the fixed CPU schedule vectorizes k (a simd reduction, a dot
// product per row, two rows at once sharing the loads of x) instead of the rows, which would gather across them.
TEST(StrategySchedule, VectorizesTheReductionAxisOfAReductionAlongMemory) {
  const int64_t rows = 64, K = 48;
  Tensor W = placeholder("W", {rows, K}), x = placeholder("x", {K}), b = placeholder("b", {rows});
  IterVar k = reduce_axis(K, "k");
  Tensor gemv =
      compute("gemv", {rows}, [&](const std::vector<Expr>& i) { return sum(W(i[0], k.var) * x(k.var), {k}); });
  Tensor y = compute("y", {rows}, [&](const std::vector<Expr>& i) { return gemv(i[0]) + b(i[0]); });
  Program p({y}, "gemv");
  for (const char* strategy : {"unfused", "global"}) {
    Schedule s = make_strategy_program(p, strategy, cpu()).schedule;
    EXPECT_TRUE(has_decision(s, DecisionKind::kVectorize, "gemv", "k")) << strategy << ": " << s.to_json();
    // Eight rows at once, each load of x shared by them: explicit vectors with AVX-512, a simd reduction elsewhere.
    std::string source = compile_to_cpp_source(p, s).source;
    EXPECT_NE(source.find("ingot_vacc7 += "), std::string::npos) << strategy << "\n" << source;
    EXPECT_EQ(source.find("ingot_vacc8"), std::string::npos) << strategy << "\n" << source;
    EXPECT_NE(source.find("#pragma omp simd reduction(+:ingot_acc0, ingot_acc1, ingot_acc2, ingot_acc3, ingot_acc4, "
                          "ingot_acc5, ingot_acc6, ingot_acc7)\n"),
              std::string::npos)
        << strategy << "\n"
        << source;
    expect_matches_interpreter(p, s);
  }
  // A GEMM that reads both operands along its rows keeps vectorizing its columns.
  Tensor A = placeholder("A", {16, K}), B = placeholder("B", {K, 32});
  IterVar kk = reduce_axis(K, "k");
  Tensor C =
      compute("C", {16, 32}, [&](const std::vector<Expr>& i) { return sum(A(i[0], kk.var) * B(kk.var, i[1]), {kk}); });
  Schedule s = make_strategy_program(Program({C}, "gemm"), "unfused", cpu()).schedule;
  EXPECT_TRUE(has_decision(s, DecisionKind::kVectorize, "C", "j")) << s.to_json();
}

// A 1 x 1 convolution over an NCHW map, with its bias and ReLU (global: computed inside the epilogue's loop) or
// alone (unfused): the last two axes run as one vectorized loop over the whole 6 x 6 plane, two output channels at
// once (a register tile: 2 x 3 vectors of 16 lanes), instead of one row of 6 at a time. A padded 3 x 3
// convolution, whose border guards use the rows and columns, and a strided 1 x 1 convolution keep their rows and
// compute four channels at once where vectors have 16 lanes (a stencil tile, held in vector registers by the C++
// printer: the border guards become lane masks, the strided loads the even elements of two vectors).
TEST(StrategySchedule, ConvolutionsOverAContiguousPlaneVectorizeTheWholePlane) {
  Tensor x = placeholder("x", {1, 16, 6, 6}), w = placeholder("w", {8, 16, 1, 1}), b = placeholder("b", {8});
  Tensor y = relu("y", conv2d("c", x, w, b));
  Program p({y}, "pointwise");
  Schedule global = make_strategy_program(p, "global", cpu()).schedule;
  for (const char* stage : {"y", "c_conv"}) {
    EXPECT_TRUE(has_decision(global, DecisionKind::kFuse, stage, "l")) << stage << ": " << global.to_json();
    EXPECT_TRUE(has_decision(global, DecisionKind::kVectorize, stage, "l+m")) << stage << ": " << global.to_json();
  }
  EXPECT_TRUE(has_decision(global, DecisionKind::kSplit, "c_conv", "j")) << global.to_json();
  EXPECT_TRUE(has_decision(global, DecisionKind::kUnroll, "c_conv", "j.i")) << global.to_json();
  EXPECT_TRUE(has_decision(global, DecisionKind::kComputeAt, "c_conv")) << global.to_json();
  expect_matches_interpreter(p, global);
  Schedule unfused = make_strategy_program(p, "unfused", cpu()).schedule;
  EXPECT_TRUE(has_decision(unfused, DecisionKind::kVectorize, "c_conv", "l+m")) << unfused.to_json();
  EXPECT_TRUE(has_decision(unfused, DecisionKind::kCacheWrite, "c_conv")) << unfused.to_json();
  expect_matches_interpreter(p, unfused);

  // The channels computed together fit the accumulator registers: the 36-element plane is 3 vectors of 16 lanes, so
  // 4 channels (12 of AVX-512's 32 registers); with 8-lane vectors (16 registers, 12 for accumulators) it is 5
  // vectors, so 2 channels.
  auto channel_rows = [](const Schedule& s) {
    for (const Decision& d : s.decisions())
      if (d.kind == DecisionKind::kSplit && d.stage == "c_conv" && d.axes[0] == "j") return d.factor;
    return int64_t(1);
  };
  FixedScheduleOptions avx2;
  avx2.simd_fp32_lanes = 8;
  Schedule narrow = strategy_schedule(p, make_plan("unfused", p, cpu()), avx2);
  EXPECT_EQ(channel_rows(unfused), cpu().cpu.simd_fp32_lanes >= 16 ? 4 : 2) << unfused.to_json();
  EXPECT_EQ(channel_rows(narrow), 2) << narrow.to_json();
  EXPECT_TRUE(has_decision(narrow, DecisionKind::kVectorize, "c_conv", "l+m")) << narrow.to_json();
  expect_matches_interpreter(p, narrow);

  Conv2dAttrs padded;
  padded.padding = {1, 1, 1, 1};
  Tensor w3 = placeholder("w3", {8, 16, 3, 3});
  Program p3({relu("y", conv2d("c", x, w3, b, padded))}, "padded");
  Conv2dAttrs strided;
  strided.stride = {2, 2};
  Program p2({relu("y", conv2d("c", x, w, b, strided))}, "strided");
  for (const auto& [program, loads] :
       {std::pair{p3, "ingot_lane_range("}, std::pair{p2, "= ingot_load_even_f32xN(0, 3, &x["}}) {
    Schedule tiled = make_strategy_program(program, "global", cpu()).schedule;
    EXPECT_FALSE(has_decision(tiled, DecisionKind::kFuse, "c_conv", "l")) << tiled.to_json();
    EXPECT_TRUE(has_decision(tiled, DecisionKind::kVectorize, "c_conv", "m")) << tiled.to_json();
    expect_matches_interpreter(program, tiled);
    if (cpu().cpu.simd_fp32_lanes < 16) continue;
    EXPECT_TRUE(has_decision(tiled, DecisionKind::kUnroll, "c_conv", "j.i")) << tiled.to_json();
    std::string source = compile_to_cpp_source(program, tiled).source;
    EXPECT_NE(source.find("ingot_t3 = {};"), std::string::npos) << source;
    EXPECT_NE(source.find(loads), std::string::npos) << source;
  }
}

// A 1 x 1 convolution over a long reduction whose weight may be packed turns the plane tile round: its weight packed
// by output channel, vectors of output channels times pixels of the plane broadcast, the accumulators gathered and
// scattered once per tile, where a plane tile's rows would not fill their vectors (14-pixel rows). With AVX-512 (28
// accumulators) 2 vectors x 14 pixels, one row; with AVX2 (12) 4 vectors x 2 pixels (2 vectors would take 2 pixels
// of a row, 1 vector 7: too few accumulators). Under its bias and ReLU (the host) and alone, without a bias (its own
// root). A short reduction, no weight list, the knob off or rows that fill their vectors keep the plane tile. A
// strided one, which has no plane tile, takes a channel tile where its rows would not fill a stencil tile's vectors;
// so does a grouped one whose groups hold a tile's channels.
// A depthwise convolution's epilogue (batch norm and SiLU in EfficientNet) runs over the tile's plane as one loop
// where its rows leave lanes idle: rows of 7 pixels would fill 7 of 16 (or 8) lanes.
TEST(StrategySchedule, AStencilEpilogueVectorizesTheTilesPlaneWhereRowsLeaveLanesIdle) {
  Conv2dAttrs depthwise;
  depthwise.padding = {1, 1, 1, 1};
  depthwise.groups = 256;
  auto program = [&](int64_t map) {
    Tensor x = placeholder("x", {1, 256, map, map}), w = placeholder("w", {256, 1, 3, 3});
    return Program({silu("y", conv2d("c", x, w, Tensor(), depthwise))}, "depthwise");
  };
  const Program small = program(7), whole_vectors = program(16);
  Schedule s = strategy_schedule(small, make_plan("global", small, cpu()), FixedScheduleOptions{});
  EXPECT_TRUE(has_decision(s, DecisionKind::kComputeAt, "c")) << s.to_json();
  EXPECT_TRUE(has_decision(s, DecisionKind::kVectorize, "y", "l+m")) << s.to_json();
  EXPECT_TRUE(has_decision(s, DecisionKind::kVectorize, "c", "m")) << s.to_json();  // the stencil's rows as before
  expect_matches_interpreter(small, s);
  Schedule rows = strategy_schedule(whole_vectors, make_plan("global", whole_vectors, cpu()), FixedScheduleOptions{});
  EXPECT_TRUE(has_decision(rows, DecisionKind::kVectorize, "y", "m")) << rows.to_json();
  expect_matches_interpreter(whole_vectors, rows);
  // AVX2's stencil tile here is 4 channels of one row: no rows in the tile to fuse, the epilogue as before.
  FixedScheduleOptions avx2;
  avx2.simd_fp32_lanes = 8;
  Schedule narrow = strategy_schedule(small, make_plan("global", small, test_support::avx2_cpu()), avx2);
  EXPECT_TRUE(has_decision(narrow, DecisionKind::kVectorize, "y", "m")) << narrow.to_json();
  expect_matches_interpreter(small, narrow);
}

// An inverted bottleneck on a 7 x 7 map (EfficientNet's last stages): a 1 x 1 expansion under its SiLU (a channel tile,
// its epilogue along the channels), a depthwise 3 x 3 convolution under its SiLU, a squeeze-excitation's pooling and
// scaling, a 1 x 1 projection (a channel tile). With AVX-512 the expanded, depthwise and scaled maps are stored in
// blocks of 16 channels and the depthwise weight packed alike: the expansion's epilogue stores each vector of channels
// whole, the depthwise convolution runs channels in the lanes over a row of 7 pixels, and the pooling and the scaling
// vectorize the blocks' channels. The expansion's reduction of 80 input channels takes a channel tile only so (64 or
// more; 96 with its maps whole). AVX2 stores them in blocks of 8. The knob off, a projection that is no channel tile,
// or a reader that is none of these (an output) keeps the maps whole.
TEST(StrategySchedule, ADepthwiseConvolutionBetweenChannelTilesRunsOverBlocksOfChannels) {
  Conv2dAttrs depthwise;
  depthwise.padding = {1, 1, 1, 1};
  depthwise.groups = 128;
  Tensor x = placeholder("x", {1, 80, 7, 7}), we = placeholder("we", {128, 80, 1, 1}),
         wd = placeholder("wd", {128, 1, 3, 3}), wp = placeholder("wp", {32, 128, 1, 1});
  Tensor e = silu("e", conv2d("ce", x, we, Tensor(), Conv2dAttrs{}));
  Tensor d = silu("d", conv2d("cd", e, wd, Tensor(), depthwise));
  Tensor pool = reduce_mean("pool", d, {2, 3}, false);
  Tensor gate = sigmoid("gate", pool);
  Tensor scaled = compute("scaled", d->shape, [&](const std::vector<Expr>& i) { return d(i) * gate(i[0], i[1]); });
  Program block({conv2d("y", scaled, wp, Tensor(), Conv2dAttrs{})}, "inverted_bottleneck");
  FixedScheduleOptions options;
  options.weights = {"we", "wd", "wp"};
  Schedule s = strategy_schedule(block, make_plan("global", block, cpu()), options);
  std::vector<std::string> packed;
  for (const Decision& dec : s.decisions())
    if (dec.kind == DecisionKind::kPack) packed.push_back(dec.to_string());
  EXPECT_THAT(packed, ::testing::IsSupersetOf(
                          {"pack e dimension 1 in blocks of 16", "pack d dimension 1 in blocks of 16",
                           "pack scaled dimension 1 in blocks of 16", "pack wd dimension 0 in blocks of 16"}))
      << s.to_json();
  EXPECT_TRUE(has_decision(s, DecisionKind::kVectorize, "e", "j.i.i")) << s.to_json();  // the tile's lanes in blocks
  EXPECT_TRUE(has_decision(s, DecisionKind::kVectorize, "cd", "j.i")) << s.to_json();
  EXPECT_TRUE(has_decision(s, DecisionKind::kUnroll, "cd", "m")) << s.to_json();
  EXPECT_TRUE(has_decision(s, DecisionKind::kVectorize, "d", "j.i")) << s.to_json();
  EXPECT_TRUE(has_decision(s, DecisionKind::kVectorize, "pool", "j.i")) << s.to_json();
  EXPECT_TRUE(has_decision(s, DecisionKind::kVectorize, "scaled", "j.i")) << s.to_json();
  EXPECT_TRUE(has_decision(s, DecisionKind::kExplicitVectors, "cd", "j.i")) << s.to_json();
  expect_matches_interpreter(block, s);

  auto packs_a_map = [](const Schedule& schedule) {
    return std::any_of(schedule.decisions().begin(), schedule.decisions().end(), [](const Decision& dec) {
      return dec.kind == DecisionKind::kPack && (dec.stage == "e" || dec.stage == "d" || dec.stage == "wd");
    });
  };
  FixedScheduleOptions off = options;
  off.knobs.channel_blocks = false;
  EXPECT_FALSE(packs_a_map(strategy_schedule(block, make_plan("global", block, cpu()), off)));
  // AVX2: blocks of 8 channels, the same roles.
  FixedScheduleOptions avx2 = options;
  avx2.simd_fp32_lanes = 8;
  Schedule narrow = strategy_schedule(block, make_plan("global", block, test_support::avx2_cpu()), avx2);
  std::vector<std::string> packed_by_8;
  for (const Decision& dec : narrow.decisions())
    if (dec.kind == DecisionKind::kPack) packed_by_8.push_back(dec.to_string());
  EXPECT_THAT(packed_by_8,
              ::testing::IsSupersetOf({"pack e dimension 1 in blocks of 8", "pack d dimension 1 in blocks of 8",
                                       "pack scaled dimension 1 in blocks of 8", "pack wd dimension 0 in blocks of 8"}))
      << narrow.to_json();
  EXPECT_TRUE(has_decision(narrow, DecisionKind::kExplicitVectors, "cd", "j.i")) << narrow.to_json();
  expect_matches_interpreter(block, narrow);
  FixedScheduleOptions avx2_off = avx2;
  avx2_off.knobs.channel_blocks = false;
  EXPECT_FALSE(packs_a_map(strategy_schedule(block, make_plan("global", block, test_support::avx2_cpu()), avx2_off)));
  // A projection that no channel tile computes (its weight not a model weight, so not packed) reads the scaled map
  // along its pixels: nothing is stored in blocks.
  FixedScheduleOptions plain_projection = options;
  plain_projection.weights = {"we", "wd"};
  EXPECT_FALSE(packs_a_map(strategy_schedule(block, make_plan("global", block, cpu()), plain_projection)));
  Program read_out({conv2d("y", scaled, wp, Tensor(), Conv2dAttrs{}), d}, "inverted_bottleneck_read_out");
  EXPECT_FALSE(packs_a_map(strategy_schedule(read_out, make_plan("global", read_out, cpu()), options)));
}

// A channel tile's SiLU epilogue that only a global pooling reads (EfficientNet's head) is stored in blocks of channels
// too, and the pooling vectorizes a block's channels; with no depthwise convolution to gain, not from a reduction of 80
// input channels (a plane tile there, as with the map whole).
TEST(StrategySchedule, AChannelTileThatOnlyAPoolingReadsIsStoredInBlocksOfChannels) {
  Tensor x = placeholder("x", {1, 128, 7, 7}), w = placeholder("w", {64, 128, 1, 1});
  Tensor head = silu("head", conv2d("c", x, w, Tensor(), Conv2dAttrs{}));
  Program p({reduce_mean("pool", head, {2, 3}, false)}, "head");
  FixedScheduleOptions options;
  options.weights = {"w"};
  Schedule s = strategy_schedule(p, make_plan("global", p, cpu()), options);
  EXPECT_TRUE(has_decision(s, DecisionKind::kPack, "head")) << s.to_json();
  EXPECT_TRUE(has_decision(s, DecisionKind::kVectorize, "pool", "j.i")) << s.to_json();
  expect_matches_interpreter(p, s);
  Tensor narrow_x = placeholder("x", {1, 80, 7, 7}), narrow_w = placeholder("w", {64, 80, 1, 1});
  Program narrow(
      {reduce_mean("pool", silu("head", conv2d("c", narrow_x, narrow_w, Tensor(), Conv2dAttrs{})), {2, 3}, false)},
      "narrow_head");
  EXPECT_FALSE(has_decision(strategy_schedule(narrow, make_plan("global", narrow, cpu()), options), DecisionKind::kPack,
                            "head"));
}

// Swin's patch embedding, a 4 x 4 convolution at stride 4 over the image's 3 channels: no stencil tile reads a window
// at that stride, and the plain loops loaded the image with it, one output pixel at a time (Swin's interval with the
// patch embedding 1.76 -> 0.45 ms, Zen 5). A channel tile broadcasts each pixel, so it takes one although its
// reduction (3 x 4 x 4 = 48) is shorter than a 1 x 1 convolution's must be; without packed weights it keeps the loops.
TEST(StrategySchedule, AStrideFourPatchConvolutionTakesAChannelTile) {
  Conv2dAttrs patches;
  patches.stride = {4, 4};
  Tensor image = placeholder("x", {1, 3, 56, 56}), w = placeholder("w", {64, 3, 4, 4}), b = placeholder("b", {64});
  Program p({conv2d("c", image, w, b, patches)}, "patch_embed");
  FixedScheduleOptions options;
  options.weights = {"w", "b"};
  for (const Target& target : {cpu(), test_support::avx2_cpu()}) {
    FixedScheduleOptions isa = options;
    isa.simd_fp32_lanes = int(target.cpu.simd_fp32_lanes);
    Schedule s = strategy_schedule(p, make_plan("global", p, target), isa);
    EXPECT_TRUE(has_decision(s, DecisionKind::kPack, "w")) << s.to_json();
    EXPECT_TRUE(has_decision(s, DecisionKind::kExplicitVectors, "c_conv", "j.i.i")) << s.to_json();
    // No padding, no border conditions: the reduction keeps its own order (the taps go first only under a condition).
    EXPECT_TRUE(loop_before(reordered(s, "c_conv"), "rc", "ry")) << s.to_json();
    expect_matches_interpreter(p, s);
  }
  Schedule unpacked = strategy_schedule(p, make_plan("global", p, cpu()), FixedScheduleOptions{});
  EXPECT_FALSE(has_decision(unpacked, DecisionKind::kExplicitVectors, "c_conv", "j.i.i")) << unpacked.to_json();
  expect_matches_interpreter(p, unpacked);
}

// ResNeXt's stem, a padded 7 x 7 convolution at stride 2 whose output rows fill their vectors (32 pixels here, 112 in
// the model): a stencil tile would pick every other element of two vectors per load; a channel tile (its reduction
// 3 x 7 x 7 = 147 steps) broadcasts each pixel, padded ones as zero (1.17x on the model's stem). The window's taps
// run outside the input channels, so that each pixel's border condition holds across the innermost loop; with
// AVX2 as well.
TEST(StrategySchedule, AStrideTwoStemTakesAChannelTile) {
  Conv2dAttrs stem;
  stem.stride = {2, 2};
  stem.padding = {3, 3, 3, 3};
  Tensor image = placeholder("x", {1, 3, 64, 64}), w = placeholder("w", {64, 3, 7, 7}), b = placeholder("b", {64});
  Program p({relu("y", conv2d("c", image, w, b, stem))}, "stem");
  FixedScheduleOptions options;
  options.weights = {"w", "b"};
  Schedule s = strategy_schedule(p, make_plan("global", p, cpu()), options);
  EXPECT_TRUE(has_decision(s, DecisionKind::kPack, "w")) << s.to_json();
  EXPECT_TRUE(has_decision(s, DecisionKind::kExplicitVectors, "c_conv", "j.i.i")) << s.to_json();
  const std::vector<std::string> order = reordered(s, "c_conv");
  EXPECT_TRUE(loop_before(order, "ry", "rx") && loop_before(order, "rx", "rc")) << s.to_json();
  expect_matches_interpreter(p, s);
  FixedScheduleOptions avx2 = options;
  avx2.simd_fp32_lanes = 8;
  Schedule narrow = strategy_schedule(p, make_plan("global", p, test_support::avx2_cpu()), avx2);
  EXPECT_TRUE(has_decision(narrow, DecisionKind::kExplicitVectors, "c_conv", "j.i.i")) << narrow.to_json();
  EXPECT_TRUE(loop_before(reordered(narrow, "c_conv"), "rx", "rc")) << narrow.to_json();
  expect_matches_interpreter(p, narrow);
}

// With AVX2's 12 accumulators a 56-pixel row (7 vectors) leaves room for no second channel or row, so neither a
// plane nor a stencil tile fits. A 1 x 1 convolution then takes a channel tile, a grouped 3 x 3 one (whose channel
// blocks would span groups) a stencil tile over one-vector panels of its rows; before, both ran as plain loops with
// their accumulators in memory (ResNeXt's first stage 5x and 50x slower than with AVX-512). AVX-512's tiles stay.
TEST(StrategySchedule, AvxTwoRowsTooWideForTwoChannelsTakeChannelTilesOrPanels) {
  Conv2dAttrs grouped;
  grouped.groups = 4;
  grouped.padding = {1, 1, 1, 1};
  Tensor x = placeholder("x", {1, 16, 56, 56}), w1 = placeholder("w1", {16, 128, 1, 1});
  Tensor x128 = placeholder("x", {1, 128, 56, 56});
  Tensor w3 = placeholder("w3", {16, 4, 3, 3});
  Program pointwise({relu("y", conv2d("c", x128, w1))}, "pointwise"),
      group({relu("y", conv2d("c", x, w3, Tensor(), grouped))}, "grouped");
  FixedScheduleOptions options;
  options.weights = {"w1", "w3"};
  options.simd_fp32_lanes = int(test_support::avx2_cpu().cpu.simd_fp32_lanes);
  Schedule s = strategy_schedule(pointwise, make_plan("global", pointwise, test_support::avx2_cpu()), options);
  EXPECT_TRUE(has_decision(s, DecisionKind::kPack, "w1")) << s.to_json();
  EXPECT_TRUE(has_decision(s, DecisionKind::kExplicitVectors, "c", "j.i.i")) << s.to_json();
  expect_matches_interpreter(pointwise, s);
  s = strategy_schedule(group, make_plan("global", group, test_support::avx2_cpu()), options);
  EXPECT_TRUE(has_decision(s, DecisionKind::kSplit, "c", "m")) << s.to_json();
  EXPECT_TRUE(has_decision(s, DecisionKind::kExplicitVectors, "c", "m.i")) << s.to_json();
  expect_matches_interpreter(group, s);
  FixedScheduleOptions wide = options;
  wide.simd_fp32_lanes = int(cpu().cpu.simd_fp32_lanes);
  s = strategy_schedule(group, make_plan("global", group, cpu()), wide);
  EXPECT_FALSE(has_decision(s, DecisionKind::kSplit, "c", "m")) << s.to_json();
  EXPECT_TRUE(has_decision(s, DecisionKind::kExplicitVectors, "c", "m")) << s.to_json();
}

// A depthwise convolution of 32 channels (kernel x kernel, padded to keep the map, at `stride`).
Conv2dAttrs depthwise_attrs(int64_t kernel, int64_t stride = 1) {
  Conv2dAttrs depthwise;
  depthwise.groups = 32;
  const int64_t pad = kernel / 2;
  depthwise.padding = {pad, pad, pad, pad};
  depthwise.stride = {stride, stride};
  return depthwise;
}

// The fixed global schedule where one core's L2 holds 16 KB: the test programs' 48 KB maps do not fit.
FixedScheduleOptions small_l2() {
  FixedScheduleOptions options;
  options.l2_bytes = 16 * 1024;
  return options;
}

Schedule global_schedule(const Program& p, const FixedScheduleOptions& options, const Target& target = cpu()) {
  return strategy_schedule(p, make_plan("global", p, target), options);
}

// An expansion whose map only a depthwise convolution reads, and which would not stay in one core's L2, is computed
// in that convolution's bands (knobs.band_rows): the expanded rows of 4 channels that a band reads, halo rows
// included, then the band's output rows; the two plan stages share one layout step, with no barrier between them.
TEST(StrategySchedule, AnExpansionLargerThanL2IsComputedInItsDepthwiseBands) {
  struct Window {
    int64_t kernel, stride;
  };
  for (Window window : {Window{3, 2}, Window{5, 1}}) {
    Tensor x = placeholder("x", {1, 8, 24, 16}), we = placeholder("we", {32, 8, 1, 1});
    Tensor wd = placeholder("wd", {32, 1, window.kernel, window.kernel});
    Tensor expanded = silu("expanded", conv2d("expand", x, we));
    Program p({silu("y", conv2d("dw", expanded, wd, Tensor(), depthwise_attrs(window.kernel, window.stride)))},
              "mbconv");
    FixedScheduleOptions options = small_l2();
    Schedule s = global_schedule(p, options);
    SCOPED_TRACE(s.to_json());
    EXPECT_TRUE(has_decision(s, DecisionKind::kComputeAt, "expanded"));
    EXPECT_TRUE(has_decision(s, DecisionKind::kComputeAt, "expand"));
    EXPECT_TRUE(has_decision(s, DecisionKind::kExplicitVectors, "expand"));
    EXPECT_TRUE(has_decision(s, DecisionKind::kSplit, "y", "l"));
    ASSERT_EQ(s.layout().size(), 1u);
    EXPECT_EQ(s.layout()[0].computes, (std::vector<std::string>{"expand", "expanded", "dw", "y"}));
    expect_matches_interpreter(p, s);
    // Other heights of the knob's range too: bands of 2 rows, and of 12 (the largest divisor up to 16 of the 12 or 24
    // output rows).
    for (int rows : {2, 16}) {
      FixedScheduleOptions other = options;
      other.knobs.band_rows = rows;
      expect_matches_interpreter(p, global_schedule(p, other));
    }
    // AVX2's 16 registers hold the expansion's 4 x 2 vectors of a 16-pixel row too (wider rows: the next test).
    FixedScheduleOptions avx2 = options;
    avx2.simd_fp32_lanes = int(test_support::avx2_cpu().cpu.simd_fp32_lanes);
    Schedule narrow = global_schedule(p, avx2, test_support::avx2_cpu());
    EXPECT_TRUE(has_decision(narrow, DecisionKind::kComputeAt, "expanded")) << narrow.to_json();
    expect_matches_interpreter(p, narrow);

    // Where the map stays in L2, or with band_rows=0, it is stored as the plan has it.
    options.l2_bytes = 1 << 20;
    Schedule stored = global_schedule(p, options);
    EXPECT_FALSE(has_decision(stored, DecisionKind::kComputeAt, "expanded"));
    EXPECT_EQ(stored.layout().size(), 2u);
    options = small_l2();
    options.knobs.band_rows = 0;
    Schedule unbanded = global_schedule(p, options);
    EXPECT_FALSE(has_decision(unbanded, DecisionKind::kComputeAt, "expanded")) << unbanded.to_json();
    EXPECT_EQ(unbanded.layout().size(), 2u);
    expect_matches_interpreter(p, unbanded);
  }
}

// The factor of stage's split of axis, 0 where it is not split.
int64_t split_factor(const Schedule& s, const std::string& stage, const std::string& axis) {
  for (const Decision& d : s.decisions())
    if (d.kind == DecisionKind::kSplit && d.stage == stage && !d.axes.empty() && d.axes[0] == axis) return d.factor;
  return 0;
}

// With AVX2's 16 registers, 4 channels x a row of 112 pixels (56 accumulators) do not fit: a band's register tiles
// take 4 channels x the widest chunk of whole vectors that divides the row, else 2 channels x the row (28 pixels:
// 4 vectors, the last one half full). With AVX-512 the rows stay whole (4 x 7 vectors on 112 pixels), and with AVX2
// so do rows that fit (4 x 2 vectors on 14 pixels).
TEST(StrategySchedule, AvxTwoBandsTileTheirRowsInChunksOfWholeVectors) {
  struct Case {
    int64_t width;                                   // of the expanded map; the depthwise convolution has stride 2
    int64_t expand_pixels, dw_pixels;                // each tile's split of the row (0: the whole row)
    int64_t expand_channel_split, dw_channel_split;  // each tile's split of its 4 channels (0: all 4)
  };
  for (Case c : {Case{112, 16, 8, 0, 0}, Case{56, 8, 0, 0, 2}, Case{28, 0, 0, 2, 0}}) {
    SCOPED_TRACE(c.width);
    Tensor x = placeholder("x", {1, 8, 6, c.width}), we = placeholder("we", {32, 8, 1, 1});
    Tensor expanded = silu("expanded", conv2d("expand", x, we));
    Program p({silu("y", conv2d("dw", expanded, placeholder("wd", {32, 1, 3, 3}), Tensor(), depthwise_attrs(3, 2)))},
              "mbconv");
    FixedScheduleOptions avx2 = small_l2();
    avx2.simd_fp32_lanes = int(test_support::avx2_cpu().cpu.simd_fp32_lanes);
    Schedule s = global_schedule(p, avx2, test_support::avx2_cpu());
    SCOPED_TRACE(s.to_json());
    EXPECT_TRUE(has_decision(s, DecisionKind::kComputeAt, "expanded"));
    EXPECT_EQ(split_factor(s, "expand", "m"), c.expand_pixels);
    EXPECT_EQ(split_factor(s, "dw", "m"), c.dw_pixels);
    EXPECT_EQ(split_factor(s, "expand", "j"), c.expand_channel_split);
    EXPECT_EQ(split_factor(s, "dw", "j.i"), c.dw_channel_split);
    EXPECT_TRUE(has_decision(s, DecisionKind::kExplicitVectors, "expand", c.expand_pixels ? "m.i" : "m"));
    EXPECT_TRUE(has_decision(s, DecisionKind::kExplicitVectors, "dw", c.dw_pixels ? "m.i" : "m"));
    expect_matches_interpreter(p, s);
    // More accumulators than lowering's AVX2 register tiles take (12) leave the tiles as they are, not plain loops.
    FixedScheduleOptions many = avx2;
    many.knobs.accumulator_vectors = 28;
    Schedule capped = global_schedule(p, many, test_support::avx2_cpu());
    EXPECT_EQ(split_factor(capped, "expand", "m"), c.expand_pixels) << capped.to_json();
    EXPECT_EQ(split_factor(capped, "dw", "m"), c.dw_pixels) << capped.to_json();
    EXPECT_TRUE(has_decision(capped, DecisionKind::kExplicitVectors, "expand")) << capped.to_json();

    Schedule wide = global_schedule(p, small_l2());
    EXPECT_TRUE(has_decision(wide, DecisionKind::kComputeAt, "expanded")) << wide.to_json();
    EXPECT_EQ(split_factor(wide, "expand", "m"), 0) << wide.to_json();
    EXPECT_EQ(split_factor(wide, "dw", "m"), 0) << wide.to_json();
  }
}

// Two depthwise convolutions in a row: the first one's output would be the second band's expanded map and the first
// band's epilogue at once; it keeps the first role.
TEST(StrategySchedule, ATensorTakesOneRoleInDepthwiseBands) {
  Tensor x = placeholder("x", {1, 8, 24, 16}), we = placeholder("we", {32, 8, 1, 1});
  Tensor first = silu("first", conv2d("dw1", silu("expanded", conv2d("expand", x, we)),
                                      placeholder("wd1", {32, 1, 3, 3}), Tensor(), depthwise_attrs(3)));
  Program p({silu("y", conv2d("dw2", first, placeholder("wd2", {32, 1, 3, 3}), Tensor(), depthwise_attrs(3)))},
            "twice");
  Schedule s = global_schedule(p, small_l2());
  EXPECT_TRUE(has_decision(s, DecisionKind::kComputeAt, "expanded")) << s.to_json();
  EXPECT_FALSE(has_decision(s, DecisionKind::kComputeAt, "first")) << s.to_json();
  expect_matches_interpreter(p, s);
}

// A 3 x 3 stride-2 convolution of an image (EfficientNet's stem) bands the same way, its own window inside.
TEST(StrategySchedule, AStemConvolutionBandsWithItsDepthwiseReader) {
  Conv2dAttrs stem_window;
  stem_window.stride = {2, 2};
  stem_window.padding = {1, 1, 1, 1};
  Tensor image = placeholder("image", {1, 3, 48, 32}), ws = placeholder("ws", {32, 3, 3, 3});
  Tensor stem = silu("stem", conv2d("stem_conv", image, ws, Tensor(), stem_window));
  Program p({silu("y", conv2d("dw", stem, placeholder("wd", {32, 1, 3, 3}), Tensor(), depthwise_attrs(3)))}, "stem");
  Schedule s = global_schedule(p, small_l2());
  EXPECT_TRUE(has_decision(s, DecisionKind::kComputeAt, "stem")) << s.to_json();
  EXPECT_TRUE(has_decision(s, DecisionKind::kExplicitVectors, "stem_conv")) << s.to_json();
  expect_matches_interpreter(p, s);
}

// A squeeze-excitation layer, a 1 x 1 convolution of a 1 x 1 map under its SiLU, vectorizes its reduction over the
// channels (it reduced one scalar at a time: no loop of its output is longer than one).
TEST(StrategySchedule, AOnePointConvolutionVectorizesItsChannelReduction) {
  Tensor x = placeholder("x", {1, 256, 1, 1}), w = placeholder("w", {64, 256, 1, 1}), b = placeholder("b", {64});
  Program p({silu("y", conv2d("c", x, w, b))}, "squeeze");
  for (const Target& target : {cpu(), test_support::avx2_cpu()}) {
    FixedScheduleOptions options;
    options.simd_fp32_lanes = int(target.cpu.simd_fp32_lanes);
    Schedule s = strategy_schedule(p, make_plan("global", p, target), options);
    EXPECT_TRUE(has_decision(s, DecisionKind::kComputeAt, "c_conv")) << s.to_json();
    EXPECT_TRUE(has_decision(s, DecisionKind::kVectorize, "c_conv", "rc")) << s.to_json();
    EXPECT_NE(compile_to_cpp_source(p, s).source.find("reduction(+:"), std::string::npos);
    expect_matches_interpreter(p, s);
  }
}

TEST(StrategySchedule, ChannelTilesVectorizeTheOutputChannelsOfAPackedWeight) {
  Tensor x = placeholder("x", {1, 256, 14, 14}), w = placeholder("w", {64, 256, 1, 1}), b = placeholder("b", {64});
  Program fused({relu("y", conv2d("c", x, w, b))}, "pointwise_relu"), alone({conv2d("c", x, w)}, "pointwise");
  FixedScheduleOptions options;
  options.weights = {"w", "b"};
  auto pack_of = [](const Schedule& s) {
    for (const Decision& d : s.decisions())
      if (d.kind == DecisionKind::kPack && d.stage == "w") return std::pair{d.dim, d.factor};
    return std::pair<int64_t, int64_t>{-1, 0};
  };
  auto split_of = [](const Schedule& s, const std::string& stage, const std::string& axis) {
    for (const Decision& d : s.decisions())
      if (d.kind == DecisionKind::kSplit && d.stage == stage && d.axes[0] == axis) return d.factor;
    return int64_t(0);
  };
  for (const Target& target : {cpu(), test_support::avx2_cpu()}) {
    const int64_t lanes = target.cpu.simd_fp32_lanes;
    FixedScheduleOptions isa = options;
    isa.simd_fp32_lanes = int(lanes);
    for (const Program* p : {&fused, &alone}) {
      const std::string conv = p == &fused ? "c_conv" : "c";  // without a bias the convolution is c itself
      Schedule s = strategy_schedule(*p, make_plan("global", *p, target), isa);
      // AVX2: 1 vector x 14 pixels (AvxTwoChannelTilesOfOneVectorTakeARowOfFourteenPixels).
      const int64_t vectors = lanes == 16 ? 2 : 1, pixels = 14;
      EXPECT_EQ(pack_of(s), (std::pair<int64_t, int64_t>{0, vectors * lanes})) << s.to_json();
      EXPECT_EQ(split_of(s, conv, "j"), vectors * lanes) << s.to_json();
      EXPECT_EQ(split_of(s, conv, "j.i"), lanes) << s.to_json();
      EXPECT_EQ(split_of(s, conv, "l+m"), pixels) << s.to_json();
      EXPECT_TRUE(has_decision(s, DecisionKind::kVectorize, conv, "j.i.i")) << s.to_json();
      EXPECT_TRUE(has_decision(s, DecisionKind::kUnroll, conv, "l+m.i")) << s.to_json();
      EXPECT_TRUE(has_decision(s, DecisionKind::kExplicitVectors, conv, "j.i.i")) << s.to_json();
      EXPECT_EQ(has_decision(s, DecisionKind::kComputeAt, conv), p == &fused) << s.to_json();
      EXPECT_FALSE(has_decision(s, DecisionKind::kCacheWrite, conv)) << s.to_json();
      const std::string source = compile_to_cpp_source(*p, s).source;
      // Zeroed just before, the accumulators start from zero registers (no gather); they are scattered once. The
      // zeros are stored before the plain loops, which run where the vectors' ISA is not.
      EXPECT_NE(source.find("ingot_f32xN ingot_t0 = {};"), std::string::npos);
      EXPECT_EQ(source.find("= ingot_load_strided_f32xN("), std::string::npos);
      EXPECT_NE(source.find("ingot_store_strided_f32xN(" + std::to_string(lanes) + ", "), std::string::npos);
      EXPECT_NE(source.find("ingot_t" + std::to_string(vectors * pixels - 1) + " "), std::string::npos);
      EXPECT_EQ(source.find("ingot_t" + std::to_string(vectors * pixels) + " "), std::string::npos);
      expect_matches_interpreter(*p, s);
      expect_matches_interpreter(*p, s, lanes == 16 ? " -mno-avx512f" : " -mno-avx2");
    }
  }
  auto plane_tiled = [](const Program& p, const FixedScheduleOptions& o) {
    Schedule s = strategy_schedule(p, make_plan("global", p, cpu()), o);
    return has_decision(s, DecisionKind::kVectorize, "c_conv", "l+m") ||
           has_decision(s, DecisionKind::kVectorize, "c_conv", "l+m.i");
  };
  EXPECT_TRUE(plane_tiled(fused, FixedScheduleOptions{}));  // no weights: nothing may be packed
  FixedScheduleOptions off = options;
  off.knobs.channel_tiles = false;
  EXPECT_TRUE(plane_tiled(fused, off));
  Tensor short_x = placeholder("x", {1, 64, 14, 14}), short_w = placeholder("w", {64, 64, 1, 1});
  Program short_reduction({relu("y", conv2d("c", short_x, short_w, b))}, "short");
  EXPECT_TRUE(plane_tiled(short_reduction, options));
  Tensor wide_x = placeholder("x", {1, 256, 16, 16});  // rows of 16 pixels: whole vectors
  Program full_rows({relu("y", conv2d("c", wide_x, w, b))}, "full_rows");
  EXPECT_TRUE(plane_tiled(full_rows, options));

  // A strided 1 x 1 convolution (ResNeXt's downsampling) has no plane tile; its 14-pixel output rows leave lanes of a
  // stencil tile idle, and the broadcast pixels need no contiguous input: a channel tile too.
  Conv2dAttrs strided;
  strided.stride = {2, 2};
  Tensor big_x = placeholder("x", {1, 256, 28, 28});
  Program downsample({relu("y", conv2d("c", big_x, w, b, strided))}, "downsample");
  Schedule s = strategy_schedule(downsample, make_plan("global", downsample, cpu()), options);
  EXPECT_EQ(pack_of(s), (std::pair<int64_t, int64_t>{0, 32})) << s.to_json();
  EXPECT_TRUE(has_decision(s, DecisionKind::kExplicitVectors, "c_conv", "j.i.i")) << s.to_json();
  expect_matches_interpreter(downsample, s);

  // A grouped 3 x 3 convolution reads X[c / G * G + k]: the same pixel for every channel of a tile within one group,
  // so groups of 32 channels take 2 vectors x 14 pixels, its padded border a broadcast select (the window's taps
  // outside the group's input channels, which its condition does not use); groups of 8 (fewer than a vector's
  // channels) keep the stencil tile.
  Conv2dAttrs grouped;
  grouped.padding = {1, 1, 1, 1};
  grouped.groups = 2;
  Program groups_of_32({relu("y", conv2d("c", x, placeholder("w", {64, 128, 3, 3}), b, grouped))}, "groups_of_32");
  Schedule g = strategy_schedule(groups_of_32, make_plan("global", groups_of_32, cpu()), options);
  EXPECT_EQ(pack_of(g), (std::pair<int64_t, int64_t>{0, 32})) << g.to_json();
  EXPECT_EQ(split_of(g, "c_conv", "l+m"), 14) << g.to_json();
  EXPECT_TRUE(has_decision(g, DecisionKind::kExplicitVectors, "c_conv", "j.i.i")) << g.to_json();
  EXPECT_TRUE(loop_before(reordered(g, "c_conv"), "rx", "rc")) << g.to_json();
  expect_matches_interpreter(groups_of_32, g);
  grouped.groups = 8;
  Program groups_of_8({relu("y", conv2d("c", x, placeholder("w", {64, 32, 3, 3}), b, grouped))}, "groups_of_8");
  Schedule eight = strategy_schedule(groups_of_8, make_plan("global", groups_of_8, cpu()), options);
  EXPECT_EQ(pack_of(eight).first, -1) << eight.to_json();

  // On a 7 x 7 map a tile holds 7 pixels, fewer than the lanes: a ReLU's epilogue runs over them, a SiLU's (an
  // exponential per element) along the tile's channels, as its accumulators do. Its local tile is then laid out
  // [pixel][channel] and each vector of the result scattered into the output's planes.
  Tensor small_x = placeholder("x", {1, 256, 7, 7});
  Tensor small_conv = conv2d("c", small_x, w, b);
  Program relu7({relu("y", small_conv)}, "relu7");
  auto silu_of = [](const Tensor& conv, const std::string& name) {
    return Program({compute("y", conv->shape,
                            [&](const std::vector<Expr>& i) {
                              Expr v = conv(i[0], i[1], i[2], i[3]);
                              return v * math::sigmoid(v);
                            })},
                   name);
  };
  Program silu7 = silu_of(small_conv, "silu7");
  EXPECT_FALSE(plane_tiled(relu7, options));
  Schedule relu_tile = strategy_schedule(relu7, make_plan("global", relu7, cpu()), options);
  EXPECT_TRUE(has_decision(relu_tile, DecisionKind::kVectorize, "y", "l+m.i")) << relu_tile.to_json();
  Schedule silu_tile = strategy_schedule(silu7, make_plan("global", silu7, cpu()), options);
  EXPECT_TRUE(has_decision(silu_tile, DecisionKind::kExplicitVectors, "c_conv", "j.i.i")) << silu_tile.to_json();
  EXPECT_TRUE(has_decision(silu_tile, DecisionKind::kVectorize, "y", "j.i")) << silu_tile.to_json();
  const std::string source = compile_to_cpp_source(silu7, silu_tile).source;
  EXPECT_NE(source.find("ingot_store_strided_f32x16(&y["), std::string::npos) << source;
  EXPECT_EQ(source.find("ingot_store_strided_f32xN("), std::string::npos) << source;  // the accumulators stored whole
  expect_matches_interpreter(silu7, silu_tile);
  // With AVX2 a scatter would store lane by lane: on a 6 x 6 map, where 2 vectors x 6 pixels fill 12 accumulators, a
  // ReLU takes the channel tile and a SiLU does not. A function no vector map prints (erf) keeps the plane tile.
  FixedScheduleOptions avx2 = options;
  avx2.simd_fp32_lanes = 8;
  auto avx2_channel_tile = [&](const Program& p) {
    Schedule s = strategy_schedule(p, make_plan("global", p, test_support::avx2_cpu()), avx2);
    return has_decision(s, DecisionKind::kExplicitVectors, "c_conv", "j.i.i");
  };
  Tensor six_conv = conv2d("c", placeholder("x", {1, 256, 6, 6}), w, b);
  EXPECT_TRUE(avx2_channel_tile(Program({relu("y", six_conv)}, "relu6")));
  EXPECT_FALSE(avx2_channel_tile(silu_of(six_conv, "silu6")));
  Program erf7({compute("y", {1, 64, 7, 7},
                        [&](const std::vector<Expr>& i) { return math::erf(small_conv(i[0], i[1], i[2], i[3])); })},
               "erf7");
  EXPECT_TRUE(plane_tiled(erf7, options));
  // A reduction of 96 or more input channels takes such a tile; 64 keep the plane tile.
  EXPECT_TRUE(plane_tiled(silu_of(conv2d("c", placeholder("x", {1, 64, 7, 7}), short_w, b), "silu_short"), options));
}

// A channel tile of c_conv: the block its weight w is packed by, its channels' split and its plane's.
using ChannelTileShape = std::tuple<int64_t, int64_t, int64_t>;
ChannelTileShape tile_of(const Schedule& s) {
  int64_t pack = 0, channels = 0, pixels = 0;
  for (const Decision& d : s.decisions()) {
    if (d.kind == DecisionKind::kPack && d.stage == "w") pack = d.factor;
    if (d.kind == DecisionKind::kSplit && d.stage == "c_conv" && d.axes[0] == "j") channels = d.factor;
    if (d.kind == DecisionKind::kSplit && d.stage == "c_conv" && d.axes[0] == "l+m") pixels = d.factor;
  }
  return {pack, channels, pixels};
}

// With AVX2 a channel tile takes rows of 7 pixels where no tile within 12 accumulators broadcasts more: on a 7 x 7
// map two vectors within 12 would take one pixel each (a stencil tile of 4 accumulators ran before), and EfficientNet's
// projections of 14 x 14 maps to 80 channels two (a plane tile of 2 channels x 28 pixels ran). One vector x 7 pixels
// fills 7 accumulators; two vectors x 7 fill 14, the second vector of weights read from memory by each of its FMAs
// (the code checked below). A SiLU epilogue over its 7 pixels leaves one of 8 lanes idle and keeps the tile (with
// AVX-512 a function over 7 of 16 lanes does not: ChannelTilesVectorizeTheOutputChannelsOfAPackedWeight). AVX-512's
// tiles stay (4 vectors x 7 pixels for 64 channels on 7 x 7).
TEST(StrategySchedule, AvxTwoChannelTilesOfSevenPixels) {
  FixedScheduleOptions options;
  options.weights = {"w", "b"};
  Tensor conv7 =
      conv2d("c", placeholder("x", {1, 256, 7, 7}), placeholder("w", {64, 256, 1, 1}), placeholder("b", {64}));
  Tensor conv14 =
      conv2d("c", placeholder("x", {1, 480, 14, 14}), placeholder("w", {80, 480, 1, 1}), placeholder("b", {80}));
  Program seven({relu("y", conv7)}, "seven_by_seven"), fourteen({relu("y", conv14)}, "fourteen_to_80");
  Program silu({compute("y", conv7->shape,
                        [&](const std::vector<Expr>& i) {
                          Expr v = conv7(i[0], i[1], i[2], i[3]);
                          return v * math::sigmoid(v);
                        })},
               "silu");
  for (const Target& target : {cpu(), test_support::avx2_cpu()}) {
    const int64_t lanes = target.cpu.simd_fp32_lanes;
    FixedScheduleOptions isa = options;
    isa.simd_fp32_lanes = int(lanes);
    SCOPED_TRACE(lanes);
    for (const Program* p : {&seven, &fourteen}) {
      if (p == &fourteen && lanes == 16) continue;
      Schedule s = strategy_schedule(*p, make_plan("global", *p, target), isa);
      const int64_t channels = (lanes == 16 ? 4 : 2) * lanes;
      EXPECT_EQ(tile_of(s), (ChannelTileShape{channels, channels, 7})) << s.to_json();
      EXPECT_TRUE(has_decision(s, DecisionKind::kExplicitVectors, "c_conv", "j.i.i")) << s.to_json();
      if (lanes == 8) {
        // 14 accumulators, the first vector of weights loaded once per step, the second read by the FMAs of the
        // seven odd accumulators.
        const std::string source = compile_to_cpp_source(*p, s).source;
        EXPECT_NE(source.find("ingot_t12 += "), std::string::npos);
        EXPECT_NE(source.find("ingot_t13 = ingot_fma_from_memory(ingot_t13, "), std::string::npos);
        EXPECT_EQ(source.find("ingot_t14"), std::string::npos);
        EXPECT_NE(source.find("const ingot_f32xN ingot_v0 = ingot_load_f32xN("), std::string::npos);
        EXPECT_EQ(source.find("ingot_f32xN ingot_v1 ="), std::string::npos);
        size_t from_memory = 0;
        for (size_t at = source.find("= ingot_fma_from_memory(ingot_t"); at != std::string::npos;
             at = source.find("= ingot_fma_from_memory(ingot_t", at + 1))
          ++from_memory;
        EXPECT_EQ(from_memory, 7u);
        EXPECT_NE(source.find("vfmadd231ps {%2, %1, %0|%0, %1, %2}"), std::string::npos);
      }
      expect_matches_interpreter(*p, s);
      expect_matches_interpreter(*p, s, lanes == 16 ? " -mno-avx512f" : " -mno-avx2");
    }
  }
  FixedScheduleOptions avx2 = options;
  avx2.simd_fp32_lanes = int(test_support::avx2_cpu().cpu.simd_fp32_lanes);
  Schedule s = strategy_schedule(silu, make_plan("global", silu, test_support::avx2_cpu()), avx2);
  EXPECT_EQ(tile_of(s), (ChannelTileShape{16, 16, 7})) << s.to_json();
  EXPECT_TRUE(has_decision(s, DecisionKind::kExplicitVectors, "c_conv", "j.i.i")) << s.to_json();
  expect_matches_interpreter(silu, s);
}

// With AVX2, where the channel tiles within 12 accumulators broadcast fewer than 4 pixels (4 vectors x 2 pixels on a 14
// x 14 map), one vector of channels takes a row of 14 pixels: 14 accumulators, one register for the weights and one
// for the pixel broadcast in turn (ChannelTilesVectorizeTheOutputChannelsOfAPackedWeight checks its code). On a 28 x 28
// map, where 2 vectors x 4 pixels hold 8 accumulators, 2 vectors x 7 pixels hold 14, the second vector of weights read
// from memory in each FMA (explicit vectors); a grouped convolution keeps 4 x 2, and so do the knobs that fix the
// vectors or the accumulators.
TEST(StrategySchedule, AvxTwoChannelTilesOfOneVectorTakeARowOfFourteenPixels) {
  auto pointwise = [](int64_t size) {
    Tensor conv =
        conv2d("c", placeholder("x", {1, 256, size, size}), placeholder("w", {64, 256, 1, 1}), placeholder("b", {64}));
    return Program({relu("y", conv)}, "pointwise_" + std::to_string(size));
  };
  const Program fourteen = pointwise(14), twenty_eight = pointwise(28);
  const Target avx2_cpu = test_support::avx2_cpu();
  FixedScheduleOptions avx2;
  avx2.weights = {"w", "b"};
  avx2.simd_fp32_lanes = int(avx2_cpu.cpu.simd_fp32_lanes);
  Schedule row = strategy_schedule(fourteen, make_plan("global", fourteen, avx2_cpu), avx2);
  EXPECT_EQ(tile_of(row), (ChannelTileShape{8, 8, 14})) << row.to_json();
  // A grouped convolution keeps its tile (not measured): groups of 32 channels, 4 vectors x 2 pixels.
  Conv2dAttrs grouped;
  grouped.padding = {1, 1, 1, 1};
  grouped.groups = 2;
  Program groups_of_32({relu("y", conv2d("c", placeholder("x", {1, 256, 14, 14}), placeholder("w", {64, 128, 3, 3}),
                                         placeholder("b", {64}), grouped))},
                       "groups_of_32");
  Schedule g = strategy_schedule(groups_of_32, make_plan("global", groups_of_32, avx2_cpu), avx2);
  EXPECT_EQ(tile_of(g), (ChannelTileShape{32, 32, 2})) << g.to_json();
  Schedule wide = strategy_schedule(twenty_eight, make_plan("global", twenty_eight, avx2_cpu), avx2);
  EXPECT_EQ(tile_of(wide), (ChannelTileShape{16, 16, 7})) << wide.to_json();
  EXPECT_TRUE(has_decision(wide, DecisionKind::kExplicitVectors, "c_conv", "j.i.i")) << wide.to_json();
  expect_matches_interpreter(twenty_eight, wide);
  // Knobs: 4 x 2 where they fix the vectors or the accumulators; the knob's one vector takes up to 14 pixels on any
  // map; accumulator_vectors=16 gives 2 vectors x 7 pixels, 14 accumulators of two vectors of weights, which lowering
  // takes as explicit vectors (the printer reads the second vector from memory in its FMAs).
  auto with = [&](int TemplateKnobs::*knob, int value) {
    FixedScheduleOptions o = avx2;
    o.knobs.*knob = value;
    return o;
  };
  struct KnobCase {
    const Program& program;
    FixedScheduleOptions options;
    ChannelTileShape tile;
    bool explicit_vectors;
  };
  for (const KnobCase& k : {KnobCase{fourteen, with(&TemplateKnobs::channel_vectors, 4), {32, 32, 2}, true},
                            KnobCase{fourteen, with(&TemplateKnobs::accumulator_vectors, 12), {32, 32, 2}, true},
                            KnobCase{twenty_eight, with(&TemplateKnobs::channel_vectors, 1), {8, 8, 14}, true},
                            KnobCase{fourteen, with(&TemplateKnobs::accumulator_vectors, 16), {16, 16, 7}, true}}) {
    Schedule s = strategy_schedule(k.program, make_plan("global", k.program, avx2_cpu), k.options);
    EXPECT_EQ(tile_of(s), k.tile) << s.to_json();
    EXPECT_EQ(has_decision(s, DecisionKind::kExplicitVectors, "c_conv", "j.i.i"), k.explicit_vectors) << s.to_json();
    expect_matches_interpreter(k.program, s);
  }
}

// With AVX2, where the weight outweighs the map (the channels' blocks outermost), a channel tile is BLIS's 6 x 16: 2
// vectors of channels x 6 pixels in registers, over the whole plane of each block of channels, which the epilogue's
// parallel loop computes; on a 14 x 14 map the plane's 196 pixels are 32 blocks and one shifted back to pixel 190. A
// map that outweighs the weight keeps its tile, the plane's blocks in the parallel loop.
TEST(StrategySchedule, AvxTwoChannelTilesOfSixPixelsRunOverThePlaneOfABlockOfChannels) {
  auto pointwise = [](int64_t in, int64_t out) {
    Tensor conv =
        conv2d("c", placeholder("x", {1, in, 14, 14}), placeholder("w", {out, in, 1, 1}), placeholder("b", {out}));
    return Program({relu("y", conv)}, "pointwise_" + std::to_string(in) + "_" + std::to_string(out));
  };
  FixedScheduleOptions avx2;
  avx2.weights = {"w", "b"};
  avx2.simd_fp32_lanes = int(test_support::avx2_cpu().cpu.simd_fp32_lanes);
  auto decision = [](const Schedule& s, DecisionKind kind, const std::string& stage) {
    for (const Decision& d : s.decisions())
      if (d.kind == kind && d.stage == stage) return d.to_string();
    return std::string();
  };
  const Program heavy_weight = pointwise(128, 256), heavy_map = pointwise(256, 64);
  Schedule s = strategy_schedule(heavy_weight, make_plan("global", heavy_weight, test_support::avx2_cpu()), avx2);
  EXPECT_EQ(tile_of(s), (ChannelTileShape{16, 16, 6})) << s.to_json();
  bool shifted = false;
  for (const Decision& d : s.decisions())
    shifted |=
        d.kind == DecisionKind::kSplit && d.stage == "c_conv" && d.axes[0] == "l+m" && d.tail == SplitTail::kShift;
  EXPECT_TRUE(shifted) << s.to_json();
  EXPECT_EQ(decision(s, DecisionKind::kComputeAt, "c_conv"), "compute_at c_conv [i+j.o] at y") << s.to_json();
  EXPECT_EQ(decision(s, DecisionKind::kParallel, "y"), "parallel y [i+j.o]") << s.to_json();
  EXPECT_TRUE(has_decision(s, DecisionKind::kExplicitVectors, "c_conv", "j.i.i")) << s.to_json();
  const std::string cpp = compile_to_cpp_source(heavy_weight, s).source;
  EXPECT_NE(cpp.find("ingot_f32xN ingot_t11 = "), std::string::npos) << cpp;
  EXPECT_EQ(cpp.find("ingot_t12"), std::string::npos) << cpp;
  expect_matches_interpreter(heavy_weight, s);
  Schedule kept = strategy_schedule(heavy_map, make_plan("global", heavy_map, test_support::avx2_cpu()), avx2);
  EXPECT_EQ(tile_of(kept), (ChannelTileShape{8, 8, 14})) << kept.to_json();
}

// A 1 x 1 convolution whose operands do not fit half of one core's L2 runs the plane's blocks outside the channels', so
// that the map (its largest operand) is read once rather than once per four channels; operands that fit, or an unknown
// cache, keep the channels outermost (the output written in order, split by channels as the next stage reads it).
TEST(StrategySchedule, PlaneTilesVisitTheLargestOperandFirstWhenItDoesNotFitTheCache) {
  Tensor x = placeholder("x", {1, 64, 28, 28}), w = placeholder("w", {64, 64, 1, 1}), b = placeholder("b", {64});
  Program p({relu("y", conv2d("c", x, w, b))}, "pointwise");
  auto outer_order = [&](int64_t l2_bytes) {
    FixedScheduleOptions options;
    options.l2_bytes = l2_bytes;
    Schedule s = strategy_schedule(p, make_plan("global", p, cpu()), options);
    expect_matches_interpreter(p, s);
    for (const Decision& d : s.decisions())
      if (d.kind == DecisionKind::kReorder && d.stage == "y") return d.axes;
    return std::vector<std::string>{};
  };
  // x is 200 KB, w 16 KB: the plane of 784 is cut into 7 blocks of 4 rows (112 lanes), the channels into 16 of 4.
  const std::vector<std::string> plane_first = {"i", "l+m.o", "j.o", "j.i", "l+m.i"};
  const std::vector<std::string> channels_first = {"i", "j.o", "l+m.o", "j.i", "l+m.i"};
  EXPECT_EQ(outer_order(128 << 10), plane_first);
  EXPECT_EQ(outer_order(300 << 10), plane_first);  // within the L2, but more than half of it
  EXPECT_EQ(outer_order(1 << 20), channels_first);
  EXPECT_EQ(outer_order(0), channels_first);
  FixedScheduleOptions own_order;
  own_order.l2_bytes = 128 << 10;
  own_order.knobs.reuse_operand_order = false;
  Schedule kept = strategy_schedule(p, make_plan("global", p, cpu()), own_order);
  EXPECT_TRUE(has_decision(kept, DecisionKind::kParallel, "y", "i+j.o+l+m.o")) << kept.to_json();
}

// The operand read once is the one that saves the most bytes, not the largest: with 1024 output channels the weight
// (256 KB) outweighs the map (200 KB), but the channels' 256 blocks first would read the map 256 times (51 MB) and
// the plane's 7 blocks first read the weight 7 times (2 MB).
TEST(StrategySchedule, PlaneTilesReadOnceTheOperandThatSavesTheMostBytes) {
  Tensor x = placeholder("x", {1, 64, 28, 28}), w = placeholder("w", {1024, 64, 1, 1}), b = placeholder("b", {1024});
  Program p({relu("y", conv2d("c", x, w, b))}, "pointwise_wide");
  FixedScheduleOptions options;
  options.l2_bytes = 128 << 10;
  Schedule s = strategy_schedule(p, make_plan("global", p, cpu()), options);
  expect_matches_interpreter(p, s);
  std::vector<std::string> order;
  for (const Decision& d : s.decisions())
    if (d.kind == DecisionKind::kReorder && d.stage == "y") order = d.axes;
  EXPECT_EQ(order, (std::vector<std::string>{"i", "l+m.o", "j.o", "j.i", "l+m.i"}));
}

// A GEMM whose B moves along the output's columns (C[i, j] = sum_k A[i, k] B[k, j] + b[j], as ONNX exports a linear
// layer): rows far wider than the registers are cut into panels, the panel loop outermost and parallel, B's panel
// copied once per panel, and each step computes 6 rows of A by 4 vectors of 16 lanes (AVX-512: of the tiles of 24
// accumulators whose rows divide 96, 8 x 3 too, the one with the fewest loads per k) or 6 rows by 2 vectors of 8
// (AVX2), held in explicit vectors across k; alone and under its bias add.
TEST(StrategySchedule, WideGemmRowsRunAsPanelsOfRegisterTiles) {
  const int64_t rows = 96, cols = 768, K = 64;
  Tensor A = placeholder("A", {rows, K}), B = placeholder("B", {K, cols}), b = placeholder("b", {cols});
  IterVar k = reduce_axis(K, "k");
  Tensor C =
      compute("C", {rows, cols}, [&](const std::vector<Expr>& i) { return sum(A(i[0], k.var) * B(k.var, i[1]), {k}); });
  Tensor y = compute("y", {rows, cols}, [&](const std::vector<Expr>& i) { return C(i[0], i[1]) + b(i[1]); });
  Program p({y}, "linear_kn");
  for (const Target& target : {cpu(), test_support::avx2_cpu()}) {
    const bool avx512 = target.cpu.simd_fp32_lanes == 16;
    for (const char* strategy : {"unfused", "global"}) {
      Schedule s = make_strategy_program(p, strategy, target).schedule;
      const std::string host = std::string(strategy) == "unfused" ? "C" : "y";
      std::string json = s.to_json();
      const std::string panel = std::string("{\"axis\":\"j\",\"factor\":") + (avx512 ? "64" : "16") +
                                ",\"kind\":\"split\",\"stage\":\"" + host + "\"";
      const std::string tile_rows =
          std::string("{\"axis\":\"i\",\"factor\":") + "6" + ",\"kind\":\"split\",\"stage\":\"C\"";
      EXPECT_NE(json.find(panel), std::string::npos) << strategy << " " << json;
      EXPECT_NE(json.find(tile_rows), std::string::npos) << strategy << " " << json;
      // The panel loop is the parallel one; B's panel is copied at its top, once per panel.
      EXPECT_TRUE(has_decision(s, DecisionKind::kParallel, host, "j.o")) << strategy << " " << json;
      EXPECT_TRUE(has_decision(s, DecisionKind::kCacheRead, "C", "j.o")) << strategy << " " << json;
      EXPECT_NE(json.find("\"tensor\":\"B\""), std::string::npos) << strategy << " " << json;
      EXPECT_TRUE(has_decision(s, DecisionKind::kExplicitVectors, "C", "j.i")) << strategy << " " << json;
      std::string cpp = compile_to_cpp_source(p, s).source;
      const int accumulators = avx512 ? 24 : 12;
      EXPECT_NE(cpp.find("ingot_t" + std::to_string(accumulators - 1) + " += "), std::string::npos) << strategy << cpp;
      EXPECT_EQ(cpp.find("ingot_t" + std::to_string(accumulators) + " "), std::string::npos) << strategy << cpp;
      expect_matches_interpreter(p, s);
    }
  }
}

// A row that fits the registers but would leave room for fewer than 4 rows of it (128 columns: 8 vectors of 16 lanes)
// is cut into panels too: 6 rows x 4 vectors, B's panel copied. 64 columns (4 vectors, 7 rows) stay whole rows.
TEST(StrategySchedule, GemmRowsOfMoreThanSevenVectorsRunAsPanels) {
  const int64_t rows = 96, K = 64;
  auto gemm = [&](int64_t cols) {
    Tensor A = placeholder("A", {rows, K}), B = placeholder("B", {K, cols});
    IterVar k = reduce_axis(K, "k");
    return Program({compute("C", {rows, cols},
                            [&](const std::vector<Expr>& i) { return sum(A(i[0], k.var) * B(k.var, i[1]), {k}); })},
                   "gemm");
  };
  Program wide = gemm(128), narrow = gemm(64);
  Schedule panels = make_strategy_program(wide, "global", cpu()).schedule;
  EXPECT_TRUE(has_decision(panels, DecisionKind::kCacheRead, "C", "j.o")) << panels.to_json();
  EXPECT_NE(panels.to_json().find(R"({"axis":"j","factor":64,"kind":"split","stage":"C")"), std::string::npos)
      << panels.to_json();
  EXPECT_TRUE(has_decision(panels, DecisionKind::kExplicitVectors, "C", "j.i")) << panels.to_json();
  expect_matches_interpreter(wide, panels);
  Schedule whole = make_strategy_program(narrow, "global", cpu()).schedule;
  EXPECT_FALSE(has_decision(whole, DecisionKind::kCacheRead, "C")) << whole.to_json();
  expect_matches_interpreter(narrow, whole);
}

// Tokens on a map (A[h, w, k], as Swin's ONNX file multiplies its [1, 14, 14, 512] activations by W[512, 2048]): the
// same weights for every token, so the panel of W is copied once per panel and the map's rows are serial inside it.
TEST(StrategySchedule, PanelsOfAMapOfTokensCopyTheWeightsOnce) {
  const int64_t H = 6, W = 14, K = 32, N = 768;
  Tensor A = placeholder("A", {1, H, W, K}), B = placeholder("B", {K, N});
  IterVar k = reduce_axis(K, "k");
  Tensor C = compute("C", {1, H, W, N},
                     [&](const std::vector<Expr>& i) { return sum(A(i[0], i[1], i[2], k.var) * B(k.var, i[3]), {k}); });
  Tensor y =
      compute("y", {1, H, W, N}, [&](const std::vector<Expr>& i) { return C(i[0], i[1], i[2], i[3]) * Expr(2.0); });
  Program p({y}, "tokens");
  for (const char* strategy : {"unfused", "global"}) {
    Schedule s = make_strategy_program(p, strategy, cpu()).schedule;
    const std::string host = std::string(strategy) == "unfused" ? "C" : "y";
    // The panel loop fused with the batch of one, the map's rows serial; rows of 7 tokens by 3 vectors.
    EXPECT_TRUE(has_decision(s, DecisionKind::kParallel, host, "m.o+i")) << strategy << " " << s.to_json();
    EXPECT_TRUE(has_decision(s, DecisionKind::kCacheRead, "C")) << strategy << " " << s.to_json();
    EXPECT_NE(compile_to_cpp_source(p, s).source.find("ingot_t20 += "), std::string::npos) << strategy;
    expect_matches_interpreter(p, s);
  }
}

// y[i, j] = sum_k A[i, k] W[j, k] + b[j]: a linear layer with its weight [out, in], as PyTorch stores it.
Program linear_layer(int64_t rows, int64_t cols, int64_t K) {
  Tensor A = placeholder("A", {rows, K}), W = placeholder("W", {cols, K}), b = placeholder("b", {cols});
  IterVar k = reduce_axis(K, "k");
  Tensor C =
      compute("C", {rows, cols}, [&](const std::vector<Expr>& i) { return sum(A(i[0], k.var) * W(i[1], k.var), {k}); });
  Tensor y = compute("y", {rows, cols}, [&](const std::vector<Expr>& i) { return C(i[0], i[1]) + b(i[1]); });
  return Program({y}, "linear");
}

// A linear layer y[i, j] = sum_k A[i, k] W[j, k] + b[j], alone (unfused) or under its bias add (global): the
// parallel loop visits W's rows outermost and A's rows inside them, so a tile of W stays in cache for every row of
// A, and the dot products run as a 4 x 4 register tile, four rows of A by four rows of W (16 accumulators).
TEST(StrategySchedule, LinearLayersReuseWeightTilesAndComputeRegisterTiles) {
  const int64_t rows = 12, cols = 128, K = 32;
  Program p = linear_layer(rows, cols, K);
  for (const char* strategy : {"unfused", "global"}) {
    Schedule s = make_strategy_program(p, strategy, cpu()).schedule;
    bool unfused = std::string(strategy) == "unfused";
    std::string host = unfused ? "C" : "y";
    EXPECT_TRUE(has_decision(s, DecisionKind::kParallel, host, "j.o+i.o")) << strategy << ": " << s.to_json();
    EXPECT_TRUE(has_decision(s, DecisionKind::kVectorize, "C", "k")) << strategy << ": " << s.to_json();
    // Unfused, C splits its own 4 x 64 tile per iteration into rows i.i and columns 16 x 4; under y, it computes
    // y's 4 x 64 tile as rows i and columns 16 x 4.
    EXPECT_TRUE(has_decision(s, DecisionKind::kUnroll, "C", unfused ? "i.i" : "i")) << strategy << ": " << s.to_json();
    EXPECT_TRUE(has_decision(s, DecisionKind::kUnroll, "C", unfused ? "j.i.i" : "j.i"))
        << strategy << ": " << s.to_json();
    // The tile is held in explicit vectors because the schedule says so, for the target's 16 lanes.
    EXPECT_TRUE(has_decision(s, DecisionKind::kExplicitVectors, "C", "k")) << strategy << ": " << s.to_json();
    std::string cpp = compile_to_cpp_source(p, s).source;
    EXPECT_NE(cpp.find("ingot_vacc15 += "), std::string::npos) << strategy << cpp;
    EXPECT_EQ(cpp.find("ingot_vacc16"), std::string::npos) << strategy << cpp;
    expect_matches_interpreter(p, s);
    // With 8-lane vectors (AVX2: 16 registers) the tile has 2 rows of A by 4 of W, 8 accumulators and 6 operands, held
    // in explicit vectors of 8 lanes.
    Schedule narrow = make_strategy_program(p, strategy, test_support::avx2_cpu()).schedule;
    EXPECT_TRUE(has_decision(narrow, DecisionKind::kExplicitVectors, "C", "k")) << strategy << narrow.to_json();
    std::string narrow_cpp = compile_to_cpp_source(p, narrow).source;
    EXPECT_NE(narrow_cpp.find("#define INGOT_F32_LANES 8"), std::string::npos) << strategy << narrow_cpp;
    EXPECT_NE(narrow_cpp.find("ingot_vacc7 += "), std::string::npos) << strategy << narrow_cpp;
    EXPECT_EQ(narrow_cpp.find("ingot_vacc8"), std::string::npos) << strategy << narrow_cpp;
    expect_matches_interpreter(p, narrow);
  }
  // Four rows in all: tiling them would leave the parallel loop one iteration per column tile only, so they stay
  // an outer loop of their own.
  Tensor A4 = placeholder("A", {4, K}), W = placeholder("W", {cols, K});
  IterVar k = reduce_axis(K, "k");
  Tensor C4 =
      compute("C", {4, 64}, [&](const std::vector<Expr>& i) { return sum(A4(i[0], k.var) * W(i[1], k.var), {k}); });
  Schedule s4 = make_strategy_program(Program({C4}, "short"), "unfused", cpu()).schedule;
  EXPECT_TRUE(has_decision(s4, DecisionKind::kParallel, "C")) << s4.to_json();
  EXPECT_FALSE(has_decision(s4, DecisionKind::kUnroll, "C", "i.i")) << s4.to_json();
}

// A linear layer's weight W [out, in] is read along the output columns in its first dimension. When the schedule knows
// it is a weight (the same values every run), it passes W packed once before the runs, in panels of 48 output columns
// (3 vectors of 16 lanes) laid out k-major: the GEMM's register tile is then an outer product, 8 rows of A broadcast
// times the panel's 3 vectors, as for a [in, out] weight, instead of dot products along k. Without the weight list, or
// with the knob off, nothing is packed. BERT's FFN (128 x 768 x 3072) ran 1.24x faster so (side by side, 6 rounds).
TEST(StrategySchedule, WeightsOfLinearLayersArePackedInPanelsOfOutputColumns) {
  Program p = linear_layer(16, 96, 32);
  FixedScheduleOptions packing;
  packing.weights = {"W", "b"};
  for (const char* strategy : {"unfused", "global"}) {
    Schedule s = make_strategy_program(p, strategy, cpu(), packing).schedule;
    ASSERT_EQ(s.decisions().front().to_string(), "pack W dimension 0 in blocks of 48") << strategy;
    EXPECT_FALSE(has_decision(s, DecisionKind::kCacheRead, "C")) << strategy << ": " << s.to_json();
    EXPECT_TRUE(has_decision(s, DecisionKind::kExplicitVectors, "C", "j.i")) << strategy << ": " << s.to_json();
    LoopFunction f = lower(p, s);
    ASSERT_EQ(f.packed_inputs.size(), 1u);
    EXPECT_EQ(f.packed_inputs[0].to_string(), "W [96, 32] packed: dimension 0 in blocks of 48 -> [2, 32, 48]");
    // The panel's loads walk the packed buffer contiguously: the lane loop j.i is W's innermost index.
    const std::string loops = to_string(f);
    EXPECT_THAT(loops, testing::ContainsRegex(R"(W\[[^]]*C\.j\.i[^]]*\])")) << strategy << "\n" << loops;
    EXPECT_THAT(loops, testing::ContainsRegex(R"(W\[[^]]*\(C\.k \* 48\)[^]]*\])")) << strategy << "\n" << loops;
    expect_matches_interpreter(p, s);
    // AVX2: panels of 3 vectors of 8 lanes, whose 4 rows fill its 12 accumulators (2 vectors x 4 rows: 8).
    Schedule narrow = make_strategy_program(p, strategy, test_support::avx2_cpu(), packing).schedule;
    EXPECT_EQ(narrow.decisions().front().to_string(), "pack W dimension 0 in blocks of 24") << strategy;
    expect_matches_interpreter(p, narrow);

    FixedScheduleOptions knob_off = packing;
    knob_off.knobs.pack_weights = false;
    for (const FixedScheduleOptions& options : {FixedScheduleOptions{}, knob_off}) {
      Schedule unpacked = make_strategy_program(p, strategy, cpu(), options).schedule;
      EXPECT_FALSE(has_decision(unpacked, DecisionKind::kPack, "W")) << strategy;
      EXPECT_TRUE(has_decision(unpacked, DecisionKind::kVectorize, "C", "k")) << strategy << ": " << unpacked.to_json();
    }
  }
}

// A linear layer over one 7 x 7 window [1, 7, 7, C], its rows put back in place by a window reverse whose indices
// (j / 7, j % 7, ...) are the identity on one window (Swin's last stage), under a residual add: the GEMM is still
// computed at the add's own coordinates with its weight packed in panels, not one dot product per output (Swin's
// last two projections took 1.2 ms each so, 0.28 with the tile).
TEST(StrategySchedule, AGemmUnderAnIdentityWindowReverseKeepsItsPanels) {
  const int64_t T = 7, K = 32, C = 256;
  Tensor x = placeholder("x", {1, T, T, K}), W = placeholder("W", {C, K}), res = placeholder("res", {1, T, T, C});
  IterVar k = reduce_axis(K, "k");
  Tensor proj = compute("proj", {1, T, T, C}, [&](const std::vector<Expr>& i) {
    return sum(x(i[0], i[1], i[2], k.var) * W(i[3], k.var), {k});
  });
  Tensor unwindow = compute("unwindow", {1, T, T, C}, [&](const std::vector<Expr>& i) {
    return proj((i[1] / T) * Expr(int64_t{1}) + i[2] / T, i[1] % T, i[2] % T, i[3]);
  });
  Tensor y = compute("y", {1, T, T, C}, [&](const std::vector<Expr>& i) {
    return unwindow(i[0], i[1], i[2], i[3]) + res(i[0], i[1], i[2], i[3]);
  });
  Program p({y}, "window");
  FixedScheduleOptions packing;
  packing.weights = {"W"};
  Schedule s = make_strategy_program(p, "global", cpu(), packing).schedule;
  EXPECT_TRUE(has_decision(s, DecisionKind::kPack, "W")) << s.to_json();
  EXPECT_TRUE(has_decision(s, DecisionKind::kComputeAt, "proj")) << s.to_json();
  EXPECT_TRUE(has_decision(s, DecisionKind::kExplicitVectors, "proj")) << s.to_json();
  EXPECT_FALSE(has_decision(s, DecisionKind::kVectorize, "proj", "k")) << s.to_json();
  expect_matches_interpreter(p, s);
}

// A packed weight that fits half of one core's L2 is read again for each row of the map, the map's rows outside the
// panels (fused with them into the parallel loop), so that A's rows stay in cache while every panel passes; a larger
// weight, an unknown cache or reuse_operand_order=0 keeps the panels outside and A's rows serial inside them. Alone and
// under an epilogue.
TEST(StrategySchedule, PackedPanelsOfASmallWeightRunInsideTheRowsOfTheMap) {
  const int64_t H = 6, T = 14, K = 32, N = 96;  // W: 12 KB
  Tensor x = placeholder("x", {1, H, T, K}), W = placeholder("W", {N, K});
  IterVar k = reduce_axis(K, "k");
  Tensor c = compute("c", {1, H, T, N},
                     [&](const std::vector<Expr>& i) { return sum(x(i[0], i[1], i[2], k.var) * W(i[3], k.var), {k}); });
  Tensor y =
      compute("y", {1, H, T, N}, [&](const std::vector<Expr>& i) { return c(i[0], i[1], i[2], i[3]) * Expr(2.0); });
  Program p({y}, "tokens");
  for (const char* strategy : {"unfused", "global"}) {
    const std::string host = std::string(strategy) == "unfused" ? "c" : "y";
    auto schedule = [&](int64_t l2_bytes, bool reuse_operand_order = true) {
      Target target = cpu();
      target.cpu.l2_bytes = l2_bytes;
      FixedScheduleOptions packing;
      packing.weights = {"W"};
      packing.knobs.reuse_operand_order = reuse_operand_order;
      Schedule s = make_strategy_program(p, strategy, target, packing).schedule;
      EXPECT_TRUE(has_decision(s, DecisionKind::kPack, "W")) << strategy << " " << s.to_json();
      expect_matches_interpreter(p, s);
      return s;
    };
    Schedule rows_first = schedule(24 << 10);
    EXPECT_TRUE(has_decision(rows_first, DecisionKind::kParallel, host, "j+m.o+i"))
        << strategy << " " << rows_first.to_json();
    for (int64_t l2_bytes : {int64_t{16} << 10, int64_t{0}}) {
      Schedule panels_first = schedule(l2_bytes);
      EXPECT_TRUE(has_decision(panels_first, DecisionKind::kParallel, host, "m.o+i"))
          << strategy << " " << l2_bytes << " " << panels_first.to_json();
    }
    Schedule own_order = schedule(24 << 10, false);  // reuse_operand_order=0: the panels outside, as before
    EXPECT_TRUE(has_decision(own_order, DecisionKind::kParallel, host, "m.o+i"))
        << strategy << " " << own_order.to_json();
  }
}

// A GEMM tile's 14 rows of A, 4 KB apart (1024 columns), would share one set of the L1 cache; stored by the stage
// before, A gets a cache line more per row. Rows 2 KB apart (7 of the 14 in each of two sets), pad_rows=0, AVX2's
// tiles of fewer rows and a reader in another stage keep A dense.
TEST(StrategySchedule, GemmRowsInOneL1SetArePadded) {
  auto two_gemms = [](int64_t hidden, bool second_reader = false) {
    const int64_t T = 14, K = 32, N = 64;
    Tensor x = placeholder("x", {1, T, T, K}), W1 = placeholder("W1", {hidden, K}), W2 = placeholder("W2", {N, hidden});
    IterVar k = reduce_axis(K, "k"), q = reduce_axis(hidden, "q");
    Tensor h = compute("h", {1, T, T, hidden}, [&](const std::vector<Expr>& i) {
      return sum(x(i[0], i[1], i[2], k.var) * W1(i[3], k.var), {k});
    });
    Tensor y = compute("y", {1, T, T, N}, [&](const std::vector<Expr>& i) {
      return sum(h(i[0], i[1], i[2], q.var) * W2(i[3], q.var), {q});
    });
    if (!second_reader) return Program({y}, "two_gemms");
    Tensor z = compute("z", {1, T, T, hidden}, [&](const std::vector<Expr>& i) { return h(i) * Expr(2.0); });
    return Program({y, z}, "two_gemms");
  };
  FixedScheduleOptions packing;
  packing.weights = {"W1", "W2"};
  for (const char* strategy : {"unfused", "global"}) {
    Program p = two_gemms(1024);
    Schedule s = make_strategy_program(p, strategy, cpu(), packing).schedule;
    ASSERT_TRUE(has_decision(s, DecisionKind::kPad, "h")) << strategy << " " << s.to_json();
    for (const Decision& d : s.decisions()) {
      if (d.kind == DecisionKind::kPad) {
        EXPECT_EQ(d.to_string(), "pad h dimension 3 by 16 elements");
      }
    }
    const std::string cpp = compile_to_cpp_source(p, s).source;
    EXPECT_NE(cpp.find("f32[1, 14, 14, 1040] h"), std::string::npos) << cpp;
    expect_matches_interpreter(p, s);

    FixedScheduleOptions dense = packing;
    dense.knobs.pad_rows = false;
    EXPECT_FALSE(has_decision(make_strategy_program(p, strategy, cpu(), dense).schedule, DecisionKind::kPad, "h"));
    Schedule avx2 = make_strategy_program(p, strategy, with_cpu_isa(cpu(), CpuIsa::kAvx2), packing).schedule;
    EXPECT_FALSE(has_decision(avx2, DecisionKind::kPad, "h")) << avx2.to_json();
    Schedule two_sets = make_strategy_program(two_gemms(512), strategy, cpu(), packing).schedule;
    EXPECT_FALSE(has_decision(two_sets, DecisionKind::kPad, "h")) << two_sets.to_json();
  }
  // Read by a stage of its own too (z, unfused), whose loops were planned on dense rows: h stays dense.
  Schedule shared = make_strategy_program(two_gemms(1024, true), "unfused", cpu(), packing).schedule;
  EXPECT_FALSE(has_decision(shared, DecisionKind::kPad, "h")) << shared.to_json();
}

// An outer-product GEMM tile holds its accumulators, its row of B and one broadcast element of A in the 32 AVX-512
// registers: on a map of 14-token rows with 512 output columns, 2 vectors x 14 rows (28 + 2 + 1 registers), not 4
// vectors x 7 rows (28 + 4 + 1: g++ kept one accumulator on the stack, stored and reloaded every step of k). With
// AVX2's 16, 2 vectors x 7 rows: 14 accumulators, the first vector of B and the broadcast, the second vector read from
// memory by its FMAs.
TEST(StrategySchedule, OuterProductTilesLeaveRegistersForTheirOperands) {
  const int64_t H = 14, K = 32, N = 512;
  Tensor x = placeholder("x", {1, H, H, K}), W = placeholder("W", {N, K});
  IterVar k = reduce_axis(K, "k");
  Tensor y = compute("y", {1, H, H, N},
                     [&](const std::vector<Expr>& i) { return sum(x(i[0], i[1], i[2], k.var) * W(i[3], k.var), {k}); });
  Program p({y}, "tokens");
  FixedScheduleOptions packing;
  packing.weights = {"W"};
  Schedule s = make_strategy_program(p, "unfused", cpu(), packing).schedule;
  EXPECT_EQ(s.decisions().front().to_string(), "pack W dimension 0 in blocks of 32") << s.to_json();
  const std::string cpp = compile_to_cpp_source(p, s).source;
  EXPECT_NE(cpp.find("ingot_f32xN ingot_t27 = "), std::string::npos) << cpp;
  EXPECT_EQ(cpp.find("ingot_t28"), std::string::npos) << cpp;
  expect_matches_interpreter(p, s);
  Schedule avx2 = make_strategy_program(p, "unfused", test_support::avx2_cpu(), packing).schedule;
  EXPECT_EQ(avx2.decisions().front().to_string(), "pack W dimension 0 in blocks of 16") << avx2.to_json();
  const std::string avx2_cpp = compile_to_cpp_source(p, avx2).source;
  EXPECT_NE(avx2_cpp.find("ingot_f32xN ingot_t13 = "), std::string::npos) << avx2_cpp;
  EXPECT_EQ(avx2_cpp.find("ingot_t14"), std::string::npos) << avx2_cpp;
  EXPECT_NE(avx2_cpp.find("ingot_t13 = ingot_fma_from_memory(ingot_t13, "), std::string::npos) << avx2_cpp;
  EXPECT_EQ(avx2_cpp.find("ingot_f32xN ingot_v1 ="), std::string::npos) << avx2_cpp;
  expect_matches_interpreter(p, avx2);
}

// With AVX2, a 2 x 7 GEMM tile (its second vector of B read from memory) becomes BLIS's 6 x 16, all in registers, over
// the rows fused across the map: 196 tokens are 32 blocks of 6 and a last block shifted back to row 190, peeled off
// its loop (a second copy of the tile), where it recomputes 2 rows; so with an epilogue, and across two axes (4
// windows x 7 x 7 tokens: the simplifier puts the fused index back together). 168 tokens (12 x 14) take 28 whole
// blocks. On a 7 x 7 map the last block would recompute 5 of 49 rows, and the 2 x 7 tile (a row of the map, unsplit)
// stays.
TEST(StrategySchedule, AvxTwoGemmTilesTakeSixRowsWithTheLastBlockShifted) {
  auto tokens = [](const std::vector<int64_t>& rows, bool epilogue) {
    const int64_t K = 32, N = 64;
    std::vector<int64_t> x_shape = rows, y_shape = rows;
    x_shape.push_back(K);
    y_shape.push_back(N);
    Tensor x = placeholder("x", x_shape), W = placeholder("W", {N, K}), bias = placeholder("bias", {N});
    IterVar k = reduce_axis(K, "k");
    Tensor mm = compute("mm", y_shape, [&](const std::vector<Expr>& i) {
      std::vector<Expr> row(i.begin(), i.end() - 1);
      row.push_back(k.var);
      return sum(x(row) * W(i.back(), k.var), {k});
    });
    Tensor y = !epilogue ? mm : compute("y", y_shape, [&](const std::vector<Expr>& i) {
      return maximum(mm(i) + bias(i.back()), 0.0);
    });
    return Program({y}, "tokens");
  };
  FixedScheduleOptions avx2;
  avx2.weights = {"W", "bias"};
  avx2.simd_fp32_lanes = int(test_support::avx2_cpu().cpu.simd_fp32_lanes);
  auto rows_split = [](const Schedule& s) {
    for (const Decision& d : s.decisions())
      if (d.kind == DecisionKind::kSplit && d.stage == "mm" && d.axes[0] != "m") return d.to_string();
    return std::string();
  };
  auto count = [](const std::string& text, const std::string& part) {
    int64_t n = 0;
    for (size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) ++n;
    return n;
  };
  struct Case {
    std::vector<int64_t> rows;
    bool epilogue;
    std::string split;
    int64_t tiles;  // register tiles of 12 accumulators in the C++; 0: the 2 x 7 tile
  };
  for (const Case& c : {Case{{1, 14, 14}, false, "split mm [j+l] by 6 (shifted tail)", 2},
                        Case{{1, 14, 14}, true, "split mm [j+l] by 6 (shifted tail)", 2},
                        Case{{4, 7, 7}, true, "split mm [i+j+l] by 6 (shifted tail)", 2},
                        Case{{1, 12, 14}, false, "split mm [j+l] by 6", 1}, Case{{1, 7, 7}, false, "", 0}}) {
    SCOPED_TRACE(c.split + (c.epilogue ? " with an epilogue" : ""));
    const Program p = tokens(c.rows, c.epilogue);
    // The global plan computes the GEMM inside its epilogue's panels.
    Schedule s = strategy_schedule(p, make_plan(c.epilogue ? "global" : "unfused", p, test_support::avx2_cpu()), avx2);
    EXPECT_EQ(rows_split(s), c.split) << s.to_json();
    EXPECT_EQ(has_decision(s, DecisionKind::kComputeAt, "mm", "m.o+i"), c.epilogue && c.rows[0] == 1) << s.to_json();
    const std::string cpp = compile_to_cpp_source(p, s).source;
    if (c.tiles > 0) {
      EXPECT_EQ(count(cpp, "ingot_f32xN ingot_t11 = "), c.tiles) << cpp;
      EXPECT_EQ(cpp.find("ingot_t12"), std::string::npos) << cpp;
      EXPECT_EQ(cpp.find("ingot_fma_from_memory(ingot_t"), std::string::npos) << cpp;
    } else {
      EXPECT_NE(cpp.find("ingot_t13 = ingot_fma_from_memory(ingot_t13, "), std::string::npos) << cpp;
    }
    expect_matches_interpreter(p, s);
  }
}

// A tile of one vector loads more per step of k than it multiplies (rows + 1 loads for rows FMAs): on 100 rows of
// 1024 columns (the ONNX LSTM's projection of a sequence) 4 vectors x 5 rows (9 loads per 20 FMAs) go before 1 vector
// x 25 rows (26 per 25), which fills more accumulators. AVX2's panels keep their rule.
TEST(StrategySchedule, GemmPanelsThatLoadMoreThanTheyMultiplyComeLast) {
  const int64_t M = 100, K = 64, N = 1024;
  Tensor x = placeholder("x", {M, K}), W = placeholder("W", {N, K});
  IterVar k = reduce_axis(K, "k");
  Tensor y =
      compute("y", {M, N}, [&](const std::vector<Expr>& i) { return sum(x(i[0], k.var) * W(i[1], k.var), {k}); });
  Program p({y}, "projection");
  FixedScheduleOptions packing;
  packing.weights = {"W"};
  Schedule s = make_strategy_program(p, "unfused", cpu(), packing).schedule;
  EXPECT_EQ(s.decisions().front().to_string(), "pack W dimension 0 in blocks of 64") << s.to_json();
  const std::string cpp = compile_to_cpp_source(p, s).source;
  EXPECT_NE(cpp.find("ingot_f32xN ingot_t19 = "), std::string::npos) << cpp;  // 20 accumulators
  EXPECT_EQ(cpp.find("ingot_t20"), std::string::npos) << cpp;
  expect_matches_interpreter(p, s);
  Schedule avx2 = make_strategy_program(p, "unfused", test_support::avx2_cpu(), packing).schedule;
  EXPECT_NE(avx2.decisions().front().to_string(), "pack W dimension 0 in blocks of 64") << avx2.to_json();
  expect_matches_interpreter(p, avx2);
}

// A layout's prefetch lists (a GPU plan's, or a schedule's from JSON; a CPU's plans have none, docs/plans.md) reach
// the CPU's program: here each step after a barrier of BERT's global schedule fetches the inputs its stage reads. Each
// is a prefetch at the end of the step before its stage, ahead of the barrier, printed as each thread's share of the
// lines; the program still equals the interpreter.
TEST(StrategySchedule, ALayoutsPrefetchesComeBeforeTheBarrier) {
  Program p = make_workload("bert", find_workload("bert")->small);
  StrategyProgram global = make_strategy_program(p, "global", cpu());
  for (const PlanStage& stage : global.plan.kernels[0].stages) EXPECT_TRUE(stage.prefetch.empty());
  StageLayout layout = global.schedule.layout();
  std::vector<std::string> planned;
  for (size_t s = 1; s < layout.size(); ++s) {
    if (!layout[s].barrier_before || layout[s].kernel_before) continue;
    std::vector<std::string>& fetch = layout[s].prefetch;
    for (const std::string& name : layout[s].computes)
      for_each_node(p.find(name)->body, [&](const Expr& e) {
        auto* read = e.as<TensorReadNode>();
        if (read && read->tensor->is_placeholder() &&
            std::find(fetch.begin(), fetch.end(), read->tensor->name) == fetch.end())
          fetch.push_back(read->tensor->name);
      });
    planned.insert(planned.end(), fetch.begin(), fetch.end());
  }
  ASSERT_FALSE(planned.empty());
  Schedule fetching = global.schedule;
  fetching.set_layout(layout);
  EXPECT_NE(fetching.to_json().find("\"prefetch\":["), std::string::npos);
  LoopFunction f = lower(p, fetching);
  std::vector<std::string> lowered;
  const auto& top = as<SeqNode>(f.body)->stmts;
  for (size_t n = 0; n < top.size(); ++n) {
    auto* fetch = as<PrefetchNode>(top[n]);
    if (!fetch) continue;
    lowered.push_back(fetch->buffer->name);
    size_t next = n + 1;
    while (next < top.size() && as<PrefetchNode>(top[next])) ++next;
    ASSERT_LT(next, top.size());
    EXPECT_TRUE(as<BarrierNode>(top[next])) << to_string(f);
  }
  EXPECT_EQ(lowered, planned);
  EXPECT_NE(cpp_source(f).source.find("__builtin_prefetch("), std::string::npos);
  expect_matches_interpreter(p, fetching);

  // A layout may only prefetch a buffer of the function, after some stage has run.
  Schedule bad = fetching;
  layout = bad.layout();
  layout[1].prefetch = {"no_such_tensor"};
  bad.set_layout(layout);
  EXPECT_THAT([&] { lower(p, bad); },
              testing::ThrowsMessage<ScheduleError>(
                  testing::HasSubstr("layout step #1: prefetch of 'no_such_tensor': not a tensor of the program")));
  size_t with_prefetch = 1;
  while (fetching.layout()[with_prefetch].prefetch.empty()) ++with_prefetch;
  layout = fetching.layout();
  layout[with_prefetch].kernel_before = true;
  bad.set_layout(layout);
  EXPECT_THAT([&] { lower(p, bad); }, testing::ThrowsMessage<ScheduleError>(testing::HasSubstr(
                                          "the step starts a kernel, and a prefetch does not outlive the one before")));
  layout = fetching.layout();
  layout[0].prefetch = {planned[0]};
  bad.set_layout(layout);
  EXPECT_THAT([&] { lower(p, bad); },
              testing::ThrowsMessage<ScheduleError>(testing::HasSubstr(
                  "layout step #0: prefetch of '" + planned[0] + "': no stage runs before the step to hide it under")));
}

// An LSTM under `global` on the CPU: each step's GEMV U h runs over the chunks of hidden units its cell runs over,
// all four gates of a chunk in one iteration, so codegen merges the GEMV with the cell and a step has one barrier
// (the next step's GEMV reads all of h). The program still equals the interpreter.
TEST(StrategySchedule, LstmStepsHaveOneBarrierEach) {
  LstmSizes sizes{1, 4, 32, 16};
  // Eight hidden units, fewer than a gate chunk: the cell runs one unit per iteration, and so does the GEMV.
  {
    LstmSizes narrow{1, 4, 8, 16};
    Program p = lstm(narrow);
    std::string cpp = compile_to_cpp_source(p, make_strategy_program(p, "global", cpu()).schedule).source;
    EXPECT_EQ(barrier_count(cpp), size_t(narrow.steps)) << cpp;
  }
  Program p = lstm(sizes);
  StrategyProgram global = make_strategy_program(p, "global", cpu());
  EXPECT_TRUE(has_decision(global.schedule, DecisionKind::kParallel, "uh_l0_t1", "i.i.o")) << global.schedule.to_json();
  EXPECT_TRUE(has_decision(global.schedule, DecisionKind::kCacheWrite, "uh_l0_t1", "i.o")) << global.schedule.to_json();
  std::string cpp = compile_to_cpp_source(p, global.schedule).source;
  // 3 between the 4 steps, 1 after the input projections: they share the kernel here, and the first step's cell
  // reads them, so it keeps the barrier that orders them.
  EXPECT_EQ(barrier_count(cpp), size_t(sizes.steps)) << cpp;
  expect_matches_interpreter(p, global.schedule);
}

// The same LSTM as ONNX files have it, every tensor with a batch axis of one ([1, 4H] gates, [1, H] states): its
// GEMVs are GEMVs (8-row tiles, not a GEMM's 4) and each step still has one barrier. As 2-D GEMMs the paper LSTM's
// ONNX file ran 1.36x slower.
TEST(StrategySchedule, GemvsWithABatchAxisOfOneAreGemvs) {
  using Axes = std::vector<Expr>;
  const int64_t steps = 4, H = 128, in = 16;  // H over 64: two chunks of hidden units
  Tensor X = placeholder("X", {steps, 1, in});
  Tensor W = placeholder("W", {4 * H, in}), U = placeholder("U", {4 * H, H}), b = placeholder("b", {4 * H});
  Tensor h_prev = compute("h0", {1, H}, [](const Axes&) { return Expr(0.0); });
  Tensor c_prev = compute("c0", {1, H}, [](const Axes&) { return Expr(0.0); });
  for (int64_t t = 0; t < steps; ++t) {
    IterVar kx = reduce_axis(in, "k"), kh = reduce_axis(H, "k");
    Tensor wx = compute("wx_t" + std::to_string(t), {1, 4 * H},
                        [&](const Axes& g) { return sum(W(g[1], kx.var) * X(t, g[0], kx.var), {kx}); });
    Tensor uh = compute("uh_t" + std::to_string(t), {1, 4 * H},
                        [&, h_prev](const Axes& g) { return sum(U(g[1], kh.var) * h_prev(g[0], kh.var), {kh}); });
    auto pre = [&](int64_t gate, const Axes& j) {
      Expr row = j[1] + gate * H;
      return wx(j[0], row) + uh(j[0], row) + b(row);
    };
    Tensor c = compute("c_t" + std::to_string(t), {1, H}, [&, c_prev](const Axes& j) {
      return math::sigmoid(pre(1, j)) * c_prev(j[0], j[1]) + math::sigmoid(pre(0, j)) * math::tanh(pre(2, j));
    });
    h_prev = compute("h_t" + std::to_string(t), {1, H},
                     [&](const Axes& j) { return math::sigmoid(pre(3, j)) * math::tanh(c(j[0], j[1])); });
    c_prev = c;
  }
  Program p({h_prev}, "lstm_batch_of_one");
  StrategyProgram global = make_strategy_program(p, "global", cpu());
  const std::string json = global.schedule.to_json();
  EXPECT_TRUE(has_decision(global.schedule, DecisionKind::kParallel, "uh_t1", "i+j.i.o")) << json;
  EXPECT_TRUE(has_decision(global.schedule, DecisionKind::kUnroll, "uh_t1", "j.i.i.i")) << json;
  EXPECT_TRUE(has_decision(global.schedule, DecisionKind::kUnroll, "wx_t1", "j.i.i")) << json;
  for (const Decision& d : global.schedule.decisions()) {
    if (d.stage == "wx_t1" && d.kind == DecisionKind::kSplit && d.axes[0] == "j.i") {
      EXPECT_EQ(d.factor, 8) << json;
    }
    if (d.stage == "uh_t1" && d.kind == DecisionKind::kSplit && d.axes[0] == "j.i.i") {
      EXPECT_EQ(d.factor, 8) << json;
    }
  }
  std::string cpp = compile_to_cpp_source(p, global.schedule).source;
  EXPECT_EQ(barrier_count(cpp), size_t(steps)) << cpp;
  expect_matches_interpreter(p, global.schedule);
}

// Model, strategy, and the ISA the code is written and compiled for (on the fixed targets, with the flags that select
// it: both forms are compiled on every machine and run where the CPU has the ISA; elsewhere the code runs as this
// CPU compiles it, its explicit vectors' fallback loops).
class EveryStrategyOnEveryModel : public ::testing::TestWithParam<std::tuple<std::string, std::string, CpuIsa>> {};

TEST_P(EveryStrategyOnEveryModel, MatchesTheInterpreter) {
  auto [model, strategy, isa] = GetParam();
  const WorkloadInfo* info = find_workload(model);
  ASSERT_NE(info, nullptr);
  Program p = make_workload(model, info->small);
  const Target target = isa == CpuIsa::kAvx2 ? test_support::avx2_cpu() : cpu();
  StrategyProgram sp = make_strategy_program(p, strategy, target);
  LocalRunOptions options;
  options.warmup_runs = 0;
  options.min_repeat_ms = 0;
  options.min_repeats = 1;
  const std::string isa_flags = cpu_isa_compiler_flags(isa);
  if (!isa_flags.empty()) {
    CompileOptions compile = options.compile;
    compile.flags = cpp_flags(isa_flags);
    if (host_runs(isa))
      options.compile = compile;
    else  // compiled with the ISA's flags (CompileError when it fails), run with this CPU's
      compile_cpp(compile_to_cpp_source(p, sp.schedule).source, compile);
  }
  TensorMap inputs = random_inputs(p, 7, workload_input_ranges(model, info->small));
  TensorMap expected = interpret(p, inputs);
  LocalRunResult r = local_run(p, sp.schedule, inputs, expected, options);
  for (const Comparison& c : r.checks) EXPECT_TRUE(c.ok) << model << " " << strategy << ": " << c.message;
  EXPECT_TRUE(r.correct);
  EXPECT_EQ(kernel_traffic(r.function).kernel_count(), sp.plan.kernel_count());
}

std::string model_strategy_isa(const ::testing::TestParamInfo<std::tuple<std::string, std::string, CpuIsa>>& info) {
  return std::get<0>(info.param) + "_" + std::get<1>(info.param) + "_" + cpu_isa_name(std::get<2>(info.param));
}

INSTANTIATE_TEST_SUITE_P(
    SmallModels, EveryStrategyOnEveryModel,
    ::testing::Combine(::testing::Values("lstm", "mmoe", "bert", "resnext", "efficientnet", "swin"),
                       ::testing::Values("unfused", "rules", "subgraph", "global"), ::testing::Values(CpuIsa::kAvx512)),
    model_strategy_isa);
// The AVX2 form (8-lane explicit vectors, 16 registers) under the plans with the most and the fewest kernels.
INSTANTIATE_TEST_SUITE_P(SmallModelsAvx2, EveryStrategyOnEveryModel,
                         ::testing::Combine(::testing::Values("lstm", "mmoe", "bert", "resnext", "efficientnet",
                                                              "swin"),
                                            ::testing::Values("unfused", "global"), ::testing::Values(CpuIsa::kAvx2)),
                         model_strategy_isa);

}  // namespace
}  // namespace ingot
