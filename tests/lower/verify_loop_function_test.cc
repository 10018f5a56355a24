// The loop-IR verifier: hand-built functions that each break one rule of docs/loop_semantics.md (the IR as it
// prints, then the exact problem), and every small paper model, under each fusion strategy and a few sampled
// schedules, passing it after every pass of the CPU and GPU recipes.
#include "lower/verify_loop_function.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <random>

#include "analysis/target.h"
#include "codegen/pipeline.h"
#include "ir/tensor.h"
#include "space/schedule_sampler.h"
#include "space/strategy_schedule.h"
#include "tests/support/cpu_test_kernels.h"
#include "workloads/registry.h"

namespace ingot {
namespace {

using cpu_test::global_buffer;
using Problems = std::vector<std::string>;

Buffer local_buffer(const std::string& name, std::vector<int64_t> shape, MemoryScope scope = MemoryScope::kLocal) {
  return make_buffer(name, DType::kFloat32, std::move(shape), scope);
}

// f prints as `before` (the broken IR, to read) and breaks exactly the rules `expected` names.
void expect_problems(const LoopFunction& f, const std::string& before, const Problems& expected) {
  EXPECT_EQ(to_string(f), before);
  EXPECT_EQ(loop_function_problems(f), expected);
}

TEST(VerifyLoopFunction, AcceptsFunctionsThatKeepTheContract) {
  EXPECT_EQ(loop_function_problems(cpu_test::tiny_two_stage_function()), Problems{});
  EXPECT_EQ(loop_function_problems(cpu_test::matmul_function()), Problems{});
  EXPECT_EQ(loop_function_problems(cpu_test::three_stage_function()), Problems{});

  // GPU style: block loops around a shared tile filled by the threads, block barriers, an unrolled loop.
  Buffer x = global_buffer("x", {64}), y = global_buffer("y", {64, 2}), w = global_buffer("w", {64});
  Buffer tile = local_buffer("tile", {32}, MemoryScope::kShared);
  Expr by = var("by"), bx = var("bx"), t = var("t"), u = var("u");
  Stmt gpu =
      for_loop(by, 1, LoopKind::kBlockY,
               for_loop(bx, 2, LoopKind::kBlockX,
                        allocate(tile, seq({for_loop(t, 32, LoopKind::kThreadX, store(tile, t, load(x, bx * 32 + t))),
                                            barrier(BarrierKind::kBlock),
                                            for_loop(t, 32, LoopKind::kThreadX,
                                                     for_loop(u, 2, LoopKind::kUnrolled,
                                                              store(y, (bx * 32 + t) * 2 + u, load(tile, 31 - t)))),
                                            barrier(BarrierKind::kBlock)}))));
  EXPECT_EQ(loop_function_problems(LoopFunction{"gpu_style", {x}, {y}, {}, gpu}), Problems{});

  // A register tile (unrolled loops inside a vectorized reduction loop), a prefetch and a grid barrier between
  // stages inside a top-level allocation, and a second kernel.
  Buffer acc = local_buffer("acc", {2});
  Expr i = var("i"), k = var("k"), r = var("r");
  Stmt tiled = for_loop(
      i, 32, LoopKind::kParallel,
      for_loop(k, 2, LoopKind::kVectorized,
               for_loop(r, 2, LoopKind::kUnrolled, store(w, i * 2 + r, load(w, i * 2 + r) + load(x, i * 2 + k)))));
  Stmt region =
      allocate(acc, seq({for_loop(i, 2, LoopKind::kSerial, store(acc, i, load(x, i))), barrier(BarrierKind::kGrid),
                         prefetch(x), for_loop(i, 2, LoopKind::kSerial, store(y, i, load(acc, i)))}));
  EXPECT_EQ(loop_function_problems(LoopFunction{
                "kernels", {x}, {y}, {w}, seq({tiled, prefetch(x), barrier(BarrierKind::kKernel), region})}),
            Problems{});
}

// ---- buffers ----

TEST(VerifyLoopFunction, BuffersAreArgumentsOrEnclosingAllocations) {
  Buffer x = global_buffer("x", {4}), y = global_buffer("y", {4}), t = local_buffer("t", {4});
  Expr i = var("i");
  LoopFunction f{"scope",
                 {x},
                 {y},
                 {},
                 seq({allocate(t, for_loop(i, 4, LoopKind::kParallel, store(t, i, load(x, i)))),
                      barrier(BarrierKind::kGrid), for_loop(i, 4, LoopKind::kParallel, store(y, i, load(t, i)))})};
  expect_problems(f, R"(func scope(x: f32[4]) -> (y: f32[4]) {
  alloc t: f32[4] local {
    for i in 0..4 parallel {
      t[i] = x[i]
    }
  }
  barrier grid
  for i in 0..4 parallel {
    y[i] = t[i]
  }
}
)",
                  {"stage 1, in i: buffer 't' is loaded but is not an input, output, workspace or enclosing "
                   "allocation"});
}

TEST(VerifyLoopFunction, BuffersAreUsedWithTheirDeclaredType) {
  Buffer x = global_buffer("x", {4}), y = global_buffer("y", {4}), x_i32 = global_buffer("x", {4}, DType::kInt32);
  Expr i = var("i");
  LoopFunction f{
      "dtype", {x}, {y}, {}, for_loop(i, 4, LoopKind::kParallel, store(y, i, cast(DType::kFloat32, load(x_i32, i))))};
  expect_problems(f, R"(func dtype(x: f32[4]) -> (y: f32[4]) {
  for i in 0..4 parallel {
    y[i] = f32(x[i])
  }
}
)",
                  {"stage 0, in i: buffer 'x' is loaded as i32 but declared f32"});
}

TEST(VerifyLoopFunction, InputsAreReadOnly) {
  Buffer x = global_buffer("x", {4}), y = global_buffer("y", {4});
  Expr i = var("i");
  LoopFunction f{"in_place",
                 {x},
                 {y},
                 {},
                 for_loop(i, 4, LoopKind::kParallel, seq({store(x, i, load(x, i) * 2.0), store(y, i, load(x, i))}))};
  expect_problems(f, R"(func in_place(x: f32[4]) -> (y: f32[4]) {
  for i in 0..4 parallel {
    x[i] = (x[i] * 2.0)
    y[i] = x[i]
  }
}
)",
                  {"stage 0, in i: store into input buffer 'x' (inputs are read-only)"});
}

TEST(VerifyLoopFunction, ArgumentsAreDistinctGlobalBuffers) {
  Buffer x = global_buffer("x", {4}), y = global_buffer("y", {4});
  Expr i = var("i");
  Stmt copy = for_loop(i, 4, LoopKind::kParallel, store(y, i, load(x, i)));
  EXPECT_EQ(loop_function_problems(LoopFunction{"twice", {x}, {y, x}, {}, copy}),
            Problems{"arguments: buffer name 'x' is used twice (input and output)"});
  Buffer shared = local_buffer("s", {4}, MemoryScope::kShared);
  EXPECT_EQ(loop_function_problems(LoopFunction{"shared_workspace", {x}, {y}, {shared}, copy}),
            Problems{"arguments: workspace buffer 's' is shared; inputs, outputs and workspace are global buffers"});
}

TEST(VerifyLoopFunction, AllocationsAreSharedOrLocalAndShadowNothing) {
  Buffer x = global_buffer("x", {4}), y = global_buffer("y", {4}), t = global_buffer("t", {4});
  Expr i = var("i");
  LoopFunction global{
      "global_alloc",
      {x},
      {y},
      {},
      for_loop(i, 4, LoopKind::kParallel, allocate(t, seq({store(t, i, load(x, i)), store(y, i, load(t, i))})))};
  expect_problems(global, R"(func global_alloc(x: f32[4]) -> (y: f32[4]) {
  for i in 0..4 parallel {
    alloc t: f32[4] global {
      t[i] = x[i]
      y[i] = t[i]
    }
  }
}
)",
                  {"stage 0, in i: allocation of global buffer 't' (global buffers are inputs, outputs or workspace, "
                   "never allocated)"});
  Buffer x_local = local_buffer("x", {4});
  LoopFunction shadow{"shadow",
                      {x},
                      {y},
                      {},
                      for_loop(i, 4, LoopKind::kParallel,
                               allocate(x_local, seq({store(x_local, i, Expr(1.0)), store(y, i, load(x_local, i))})))};
  EXPECT_EQ(loop_function_problems(shadow), Problems{"stage 0, in i: allocation of 'x' shadows another buffer of that "
                                                     "name"});
}

// ---- variables and expressions ----

TEST(VerifyLoopFunction, VariablesAreBoundByEnclosingLoops) {
  Buffer x = global_buffer("x", {4}), y = global_buffer("y", {4});
  Expr i = var("i"), j = var("j");
  LoopFunction f{"unbound",
                 {x},
                 {y},
                 {},
                 seq({for_loop(j, 4, LoopKind::kParallel, store(y, j, load(x, j))), barrier(BarrierKind::kGrid),
                      for_loop(i, 4, LoopKind::kParallel, store(y, i, load(x, j) + load(y, j)))})};
  // j is bound in the first stage only; the second stage's two uses make one problem.
  expect_problems(f, R"(func unbound(x: f32[4]) -> (y: f32[4]) {
  for j in 0..4 parallel {
    y[j] = x[j]
  }
  barrier grid
  for i in 0..4 parallel {
    y[i] = (x[j] + y[j])
  }
}
)",
                  {"stage 1, in i: variable 'j' is used outside any loop that binds it"});
  Expr k32 = var("k", DType::kInt32);
  LoopFunction narrow{
      "narrow", {x}, {y}, {}, for_loop(k32, 4, LoopKind::kParallel, store(y, cast(DType::kInt64, k32), Expr(0.0)))};
  EXPECT_EQ(loop_function_problems(narrow), Problems{"stage 0: loop variable 'k' is i32, not i64"});
}

TEST(VerifyLoopFunction, NoTensorReadsOrReductionsAreLeft) {
  Tensor a = placeholder("A", {4});
  Buffer y = global_buffer("y", {4});
  Expr i = var("i");
  IterVar k = reduce_axis(4, "k");
  LoopFunction f{"tensor_exprs",
                 {},
                 {y},
                 {},
                 for_loop(i, 4, LoopKind::kParallel, seq({store(y, i, a(i)), store(y, i, sum(a(k.var), {k}))}))};
  expect_problems(
      f, R"(func tensor_exprs() -> (y: f32[4]) {
  for i in 0..4 parallel {
    y[i] = A[i]
    y[i] = sum(A[k], axes=[k:4])
  }
}
)",
      {"stage 0, in i: tensor read A[i] in loop IR (lowering replaces tensor reads by buffer loads)",
       "stage 0, in i: reduction sum(A[k], axes=[k:4]) in loop IR (lowering replaces reductions by loops)"});
}

TEST(VerifyLoopFunction, IndicesAreIntegers) {
  Buffer x = global_buffer("x", {4}), y = global_buffer("y", {4});
  Expr i = var("i");
  // The builders reject a float index; a pass that builds nodes by hand might not.
  Expr float_index(std::make_shared<const BufferLoadNode>(x, cast(DType::kFloat32, i)));
  LoopFunction f{"float_index", {x}, {y}, {}, for_loop(i, 4, LoopKind::kParallel, store(y, i, float_index))};
  EXPECT_EQ(loop_function_problems(f),
            Problems{"stage 0, in i: index into 'x' is f32, not an integer (indices are flat element offsets)"});
}

// ---- loop kinds and GPU bindings ----

TEST(VerifyLoopFunction, ParallelAndBlockLoopsAreOutermost) {
  Buffer y = global_buffer("y", {4, 4}), n = global_buffer("n", {1}, DType::kInt64);
  Expr o = var("o"), i = var("i");
  LoopFunction f{
      "inner_parallel",
      {},
      {y},
      {},
      for_loop(o, 4, LoopKind::kSerial, for_loop(i, 4, LoopKind::kParallel, store(y, o * 4 + i, Expr(1.0))))};
  expect_problems(f, R"(func inner_parallel() -> (y: f32[4, 4]) {
  for o in 0..4 {
    for i in 0..4 parallel {
      y[((o * 4) + i)] = 1.0
    }
  }
}
)",
                  {"stage 0, in o: parallel loop 'i' is inside serial loop 'o' (parallel and block loops are only the "
                   "outermost loops of a stage)"});
  LoopFunction guarded{"guarded_block",
                       {n},
                       {y},
                       {},
                       if_then_else(gt(load(n, 0), 0), for_loop(i, 16, LoopKind::kBlockX, store(y, i, Expr(1.0))))};
  EXPECT_EQ(loop_function_problems(guarded),
            Problems{"stage 0, in if: blockIdx.x loop 'i' is inside a condition (parallel and block loops are only "
                     "the outermost loops of a stage)"});
}

TEST(VerifyLoopFunction, ThreadLoopsAreInsideBlockLoops) {
  Buffer y = global_buffer("y", {32});
  Expr t = var("t");
  LoopFunction f{"no_block", {}, {y}, {}, for_loop(t, 32, LoopKind::kThreadX, store(y, t, Expr(1.0)))};
  expect_problems(f, R"(func no_block() -> (y: f32[32]) {
  for t in 0..32 threadIdx.x {
    y[t] = 1.0
  }
}
)",
                  {"stage 0: threadIdx.x loop 't' is not inside any block loop (thread loops appear only inside block "
                   "loops)"});
}

TEST(VerifyLoopFunction, OneLoopBindsAGpuDimensionAtATime) {
  Buffer y = global_buffer("y", {4, 8, 8});
  Expr b = var("b"), t = var("t"), u = var("u");
  LoopFunction f{"twice_bound",
                 {},
                 {y},
                 {},
                 for_loop(b, 4, LoopKind::kBlockX,
                          for_loop(t, 8, LoopKind::kThreadX,
                                   for_loop(u, 8, LoopKind::kThreadX, store(y, (b * 8 + t) * 8 + u, Expr(1.0)))))};
  expect_problems(f, R"(func twice_bound() -> (y: f32[4, 8, 8]) {
  for b in 0..4 blockIdx.x {
    for t in 0..8 threadIdx.x {
      for u in 0..8 threadIdx.x {
        y[((((b * 8) + t) * 8) + u)] = 1.0
      }
    }
  }
}
)",
                  {"stage 0, in b > t: threadIdx.x loop 'u' is inside threadIdx.x loop 't' (one loop binds a GPU "
                   "dimension at a time)"});
}

TEST(VerifyLoopFunction, VectorizedLoopsHoldOnlyUnrolledLoops) {
  Buffer y = global_buffer("y", {4, 4});
  Expr v = var("v"), j = var("j");
  LoopFunction f{
      "inner_serial",
      {},
      {y},
      {},
      for_loop(v, 4, LoopKind::kVectorized, for_loop(j, 4, LoopKind::kSerial, store(y, v * 4 + j, Expr(1.0))))};
  expect_problems(f, R"(func inner_serial() -> (y: f32[4, 4]) {
  for v in 0..4 vectorized {
    for j in 0..4 {
      y[((v * 4) + j)] = 1.0
    }
  }
}
)",
                  {"stage 0, in v: serial loop 'j' is inside vectorized loop 'v' (a vectorized loop holds no loops but "
                   "unrolled ones, a register tile)"});
}

// A loop marked for explicit vectors must hold a register tile they can compute: one fold into y, not a tile.
TEST(VerifyLoopFunction, ExplicitVectorsHoldARegisterTile) {
  Buffer x = global_buffer("x", {32}), y = global_buffer("y", {1});
  Expr k = var("k");
  LoopFunction f{
      "one_fold", {x}, {y}, {}, for_loop(k, 32, LoopKind::kVectorized, store(y, 0, load(y, 0) + load(x, k)), 16)};
  expect_problems(f, R"(func one_fold(x: f32[32]) -> (y: f32[1]) {
  for k in 0..32 vectorized explicit(16) {
    y[0] = (y[0] + x[k])
  }
}
)",
                  {"explicit vectors: loop 'k' holds no register tile that explicit vectors of 16 lanes can compute "
                   "(docs/schedules.md: a vectorized + reduction of 4 to 24 folds of f32 +, -, * terms, or a spatial "
                   "tile's vectorized loop)"});
}

// ---- barriers and prefetches ----

TEST(VerifyLoopFunction, KernelBarriersSeparateTopLevelStages) {
  Buffer x = global_buffer("x", {4}), y = global_buffer("y", {4}), t = local_buffer("t", {4});
  Expr i = var("i");
  LoopFunction f{
      "kernel_in_loop",
      {x},
      {y},
      {},
      for_loop(i, 4, LoopKind::kParallel,
               seq({store(y, i, load(x, i)), barrier(BarrierKind::kKernel), store(y, i, load(y, i) * 2.0)}))};
  expect_problems(f, R"(func kernel_in_loop(x: f32[4]) -> (y: f32[4]) {
  for i in 0..4 parallel {
    y[i] = x[i]
    barrier kernel
    y[i] = (y[i] * 2.0)
  }
}
)",
                  {"stage 0, in i: kernel barrier inside parallel loop 'i' (kernel barriers only separate top-level "
                   "stages)"});
  LoopFunction in_allocation{
      "kernel_in_allocation",
      {x},
      {y},
      {},
      allocate(t, seq({for_loop(i, 4, LoopKind::kParallel, store(t, i, load(x, i))), barrier(BarrierKind::kKernel),
                       for_loop(i, 4, LoopKind::kParallel, store(y, i, load(t, i)))}))};
  EXPECT_EQ(loop_function_problems(in_allocation),
            Problems{"stage 0: kernel barrier inside allocation 't' (kernel barriers only separate top-level stages)"});
}

TEST(VerifyLoopFunction, GridBarriersAreReachedByEveryThread) {
  Buffer y = global_buffer("y", {4, 4}), n = global_buffer("n", {1}, DType::kInt64);
  Expr r = var("r"), i = var("i");
  LoopFunction f{
      "grid_in_loop",
      {},
      {y},
      {},
      for_loop(r, 4, LoopKind::kSerial,
               seq({store(y, r * 4, Expr(1.0)), barrier(BarrierKind::kGrid), store(y, r * 4 + 1, Expr(2.0))}))};
  expect_problems(f, R"(func grid_in_loop() -> (y: f32[4, 4]) {
  for r in 0..4 {
    y[(r * 4)] = 1.0
    barrier grid
    y[((r * 4) + 1)] = 2.0
  }
}
)",
                  {"stage 0, in r: grid barrier inside serial loop 'r' (grid barriers only separate top-level stages, "
                   "where every thread reaches them)"});
  LoopFunction guarded{"grid_in_condition",
                       {n},
                       {y},
                       {},
                       if_then_else(gt(load(n, 0), 0), seq({store(y, 0, Expr(1.0)), barrier(BarrierKind::kGrid),
                                                            store(y, 1, Expr(2.0))}))};
  EXPECT_EQ(loop_function_problems(guarded),
            Problems{"stage 0, in if: grid barrier inside a condition (grid barriers only separate top-level stages, "
                     "where every thread reaches them)"});
}

TEST(VerifyLoopFunction, PrefetchesGoBetweenTopLevelStagesAndFetchArguments) {
  Buffer x = global_buffer("x", {4}), y = global_buffer("y", {4}), w = global_buffer("w", {4});
  Expr i = var("i");
  LoopFunction f{"prefetch_in_loop",
                 {x, w},
                 {y},
                 {},
                 seq({for_loop(i, 4, LoopKind::kParallel, store(y, i, load(x, i))), barrier(BarrierKind::kGrid),
                      for_loop(i, 4, LoopKind::kParallel, seq({prefetch(w), store(y, i, load(y, i) * load(w, i))}))})};
  expect_problems(f, R"(func prefetch_in_loop(x: f32[4], w: f32[4]) -> (y: f32[4]) {
  for i in 0..4 parallel {
    y[i] = x[i]
  }
  barrier grid
  for i in 0..4 parallel {
    prefetch w
    y[i] = (y[i] * w[i])
  }
}
)",
                  {"stage 1, in i: prefetch of 'w' inside parallel loop 'i' (prefetches only go between top-level "
                   "stages)"});
  LoopFunction unknown{
      "prefetch_unknown",
      {x},
      {y},
      {},
      seq({for_loop(i, 4, LoopKind::kParallel, store(y, i, load(x, i))), prefetch(w), barrier(BarrierKind::kGrid),
           for_loop(i, 4, LoopKind::kParallel, store(y, i, load(y, i)))})};
  EXPECT_EQ(loop_function_problems(unknown),
            Problems{"top level, after stage 0: buffer 'w' is prefetched but is not an input, output, workspace or "
                     "enclosing allocation"});
}

TEST(VerifyLoopFunction, BlockBarriersStandWhereTheWholeBlockReachesThem) {
  Buffer y = global_buffer("y", {4, 8}), n = global_buffer("n", {1}, DType::kInt64);
  Expr b = var("b"), t = var("t"), r = var("r");
  LoopFunction outside{"block_outside",
                       {},
                       {y},
                       {},
                       for_loop(r, 4, LoopKind::kSerial, seq({store(y, r, Expr(1.0)), barrier(BarrierKind::kBlock)}))};
  expect_problems(outside, R"(func block_outside() -> (y: f32[4, 8]) {
  for r in 0..4 {
    y[r] = 1.0
    barrier block
  }
}
)",
                  {"stage 0, in r: block barrier outside any block loop (block barriers stand inside a block-bound "
                   "loop)"});
  LoopFunction in_thread{"block_in_thread",
                         {},
                         {y},
                         {},
                         for_loop(b, 4, LoopKind::kBlockX,
                                  for_loop(t, 8, LoopKind::kThreadX,
                                           seq({store(y, b * 8 + t, Expr(1.0)), barrier(BarrierKind::kBlock)})))};
  EXPECT_EQ(loop_function_problems(in_thread),
            Problems{"stage 0, in b > t: block barrier inside threadIdx.x loop 't' (block barriers stand outside "
                     "thread loops)"});
  LoopFunction guarded{
      "block_in_condition",
      {n},
      {y},
      {},
      for_loop(b, 4, LoopKind::kBlockX,
               if_then_else(gt(load(n, 0), b), seq({for_loop(t, 8, LoopKind::kThreadX, store(y, b * 8 + t, Expr(1.0))),
                                                    barrier(BarrierKind::kBlock)})))};
  EXPECT_EQ(loop_function_problems(guarded),
            Problems{"stage 0, in b > if: block barrier inside a condition (every thread of the block must reach it)"});
}

TEST(VerifyLoopFunction, ThrowsNamingThePassAfterWhichTheIrBroke) {
  Buffer x = global_buffer("x", {4}), y = global_buffer("y", {4});
  Expr i = var("i"), j = var("j");
  LoopFunction f{"broken",
                 {x},
                 {y},
                 {},
                 for_loop(i, 4, LoopKind::kParallel, seq({store(x, i, Expr(0.0)), store(y, i, load(x, j))}))};
  EXPECT_THAT([&] { verify_loop_function(f, "merge_parallel_stages"); },
              testing::ThrowsMessage<LoopIrError>(
                  testing::StrEq("the loop IR of 'broken' after merge_parallel_stages breaks docs/loop_semantics.md:\n"
                                 "  stage 0, in i: store into input buffer 'x' (inputs are read-only)\n"
                                 "  stage 0, in i: variable 'j' is used outside any loop that binds it")));
  EXPECT_NO_THROW(verify_loop_function(cpu_test::tiny_two_stage_function(), "lower"));
}

// ---- every lowered program keeps the contract ----

// A fixed CPU, not this machine's: strategy schedules depend on its cores, SIMD width and caches, and the test
// must see the same programs on AVX2 and AVX-512 machines.
const Target& fixed_cpu() {
  static const Target target = parse_target(R"(name: verifier_test_cpu
kind: cpu
peak_fp32_gflops: 2000
memory_bandwidth_gb_s: 100
cpu:
  cores: 16
  threads: 32
  simd_fp32_lanes: 16
  l1d_bytes: 49152
  l2_bytes: 2097152
  l3_bytes: 33554432
)",
                                            "verifier_test_cpu.yaml");
  return target;
}

PipelineOptions verified() {
  PipelineOptions options;
  options.verify = true;
  return options;
}

class EveryLoweredModel : public ::testing::TestWithParam<std::string> {};

TEST_P(EveryLoweredModel, PassesTheVerifierAfterEveryPass) {
  const std::string& model = GetParam();
  Program p = make_workload(model, find_workload(model)->small);
  const Target& cpu = fixed_cpu();
  const Target gpu = resolve_target("sm_80");
  FixedScheduleOptions gpu_schedule;
  gpu_schedule.gpu = true;
  for (const char* strategy : {"unfused", "rules", "subgraph", "global"}) {
    Schedule s = make_strategy_program(p, strategy, cpu).schedule;
    EXPECT_NO_THROW(lower_for_cpu(p, s, verified())) << model << " " << strategy << " (CPU)";
    s = make_strategy_program(p, strategy, gpu, gpu_schedule).schedule;
    EXPECT_NO_THROW(lower_for_gpu(p, s, verified())) << model << " " << strategy << " (GPU)";
  }
  std::mt19937_64 rng(15);
  SamplerOptions gpu_sampler;
  gpu_sampler.gpu = true;
  for (int n = 0; n < 2; ++n) {
    Schedule s = sample_schedule(p, rng);
    EXPECT_NO_THROW(lower_for_cpu(p, s, verified())) << model << " sample " << n << ": " << s.to_json();
    s = sample_schedule(p, rng, gpu_sampler);
    EXPECT_NO_THROW(lower_for_gpu(p, s, verified())) << model << " GPU sample " << n << ": " << s.to_json();
  }
}

INSTANTIATE_TEST_SUITE_P(SmallModels, EveryLoweredModel,
                         ::testing::Values("lstm", "mmoe", "bert", "resnext", "efficientnet", "swin"));

}  // namespace
}  // namespace ingot
