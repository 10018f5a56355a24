// Stage features of hand-built loop programs against values worked out by hand (a tiled matmul, a vectorized loop,
// reuse across an outer loop, guards, reduction inits, GPU kernels), the merge of identical stores, and finite
// values on lowered schedules of a real workload.
#include "costmodel/features.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <regex>
#include <set>

#include "lower/lower.h"
#include "space/hand_schedules.h"
#include "space/schedule_sampler.h"
#include "tests/support/fixed_targets.h"
#include "workloads/registry.h"

namespace ingot {
namespace {

const Target& cpu() {
  static const Target target = test_support::avx512_cpu();
  return target;
}

Buffer global_f32(const std::string& name, std::vector<int64_t> shape) {
  return make_buffer(name, DType::kFloat32, std::move(shape), MemoryScope::kGlobal);
}

LoopFunction function_of(std::vector<Buffer> inputs, std::vector<Buffer> outputs, Stmt body) {
  return LoopFunction{"f", std::move(inputs), std::move(outputs), {}, std::move(body)};
}

// The feature named `name` of a row is log2(1 + expected) (float precision).
::testing::AssertionResult has_feature(const StageFeatures& row, const std::string& name, double expected) {
  const std::vector<std::string>& names = stage_feature_names();
  auto it = std::find(names.begin(), names.end(), name);
  if (it == names.end()) return ::testing::AssertionFailure() << "no feature named " << name;
  const double value = row.values[size_t(it - names.begin())];
  const double want = std::log2(1 + expected);
  if (std::abs(value - want) <= 1e-5 * std::max(1.0, want)) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << name << " is " << std::exp2(value) - 1 << " (log " << value << "), expected "
                                       << expected << " (log " << want << ")";
}

// C[64, 64] += A[64, 64] * B[64, 64] with 4 x 16 register tiles: i.o (16, parallel) > j.o (4) > k (64) >
// i.i (4, unrolled) > j.i (16, vectorized).
LoopFunction tiled_matmul() {
  Buffer a = global_f32("A", {64, 64}), b = global_f32("B", {64, 64}), c = global_f32("C", {64, 64});
  Expr io = var("i.o"), jo = var("j.o"), k = var("k"), ii = var("i.i"), ji = var("j.i");
  Expr row = io * 4 + ii;
  Expr c_index = row * 64 + jo * 16 + ji;
  Stmt update = store(c, c_index, load(c, c_index) + load(a, row * 64 + k) * load(b, k * 64 + jo * 16 + ji));
  Stmt nest = for_loop(
      io, 16, LoopKind::kParallel,
      for_loop(jo, 4, LoopKind::kSerial,
               for_loop(k, 64, LoopKind::kSerial,
                        for_loop(ii, 4, LoopKind::kUnrolled, for_loop(ji, 16, LoopKind::kVectorized, update)))));
  return function_of({a, b}, {c}, nest);
}

TEST(StageFeatures, NamesMatchTheValuesAndAreSnakeCase) {
  const std::vector<std::string>& names = stage_feature_names();
  std::set<std::string> distinct(names.begin(), names.end());
  EXPECT_EQ(distinct.size(), names.size());
  for (const std::string& name : names) EXPECT_TRUE(std::regex_match(name, std::regex("[a-z][a-z0-9_]*"))) << name;
  std::vector<StageFeatures> rows = extract_stage_features(tiled_matmul(), cpu());
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].values.size(), names.size());
  // The helper itself tells a wrong value and an unknown name.
  EXPECT_FALSE(has_feature(rows[0], "float_fma", 1));
  EXPECT_FALSE(has_feature(rows[0], "no_such_feature", 0));
}

TEST(StageFeatures, TiledMatmulCountsItsComputeAndLoops) {
  std::vector<StageFeatures> rows = extract_stage_features(tiled_matmul(), cpu());
  ASSERT_EQ(rows.size(), 1u);
  const StageFeatures& r = rows[0];
  EXPECT_EQ(r.store, "C");
  EXPECT_EQ(r.multiplicity, 1);
  const double runs = 64.0 * 64 * 64;
  EXPECT_TRUE(has_feature(r, "executions", runs));
  // C + A * B is one FMA, not an add and a multiply.
  EXPECT_TRUE(has_feature(r, "float_fma", runs));
  EXPECT_TRUE(has_feature(r, "float_add_sub", 0));
  EXPECT_TRUE(has_feature(r, "float_mul", 0));
  EXPECT_TRUE(has_feature(r, "float_ops", runs));
  // Index arithmetic per run: C's index twice (3 *, 3 + each), A's (2 *, 2 +), B's (2 *, 2 +).
  EXPECT_TRUE(has_feature(r, "int_mul", 10 * runs));
  EXPECT_TRUE(has_feature(r, "int_add_sub", 10 * runs));
  EXPECT_TRUE(has_feature(r, "vectorized_float_ops", runs));
  EXPECT_TRUE(has_feature(r, "unrolled_float_ops", runs));
  EXPECT_TRUE(has_feature(r, "parallel_float_ops", runs));
  EXPECT_TRUE(has_feature(r, "vector_lanes", 16));

  EXPECT_TRUE(has_feature(r, "loop_count", 5));
  EXPECT_TRUE(has_feature(r, "parallel_loops", 1));
  EXPECT_TRUE(has_feature(r, "parallel_extent_product", 16));
  EXPECT_TRUE(has_feature(r, "parallel_position", 3));  // outermost
  EXPECT_TRUE(has_feature(r, "unrolled_loops", 1));
  EXPECT_TRUE(has_feature(r, "unrolled_innermost_extent", 4));
  EXPECT_TRUE(has_feature(r, "unrolled_position", 2));  // middle
  EXPECT_TRUE(has_feature(r, "vectorized_extent_product", 16));
  EXPECT_TRUE(has_feature(r, "vectorized_position", 1));  // innermost
  EXPECT_TRUE(has_feature(r, "serial_loops", 2));
  EXPECT_TRUE(has_feature(r, "serial_extent_product", 4 * 64));
  EXPECT_TRUE(has_feature(r, "reduction_loops", 1));  // k: C's index does not use it, and C reads itself
  EXPECT_TRUE(has_feature(r, "reduction_extent_product", 64));
  EXPECT_TRUE(has_feature(r, "gpu_block_loops", 0));
  EXPECT_TRUE(has_feature(r, "is_reduction_init", 0));
  EXPECT_TRUE(has_feature(r, "target_simd_fp32_lanes", 16));
  EXPECT_TRUE(has_feature(r, "target_l2_bytes", 1024 * 1024));
  EXPECT_TRUE(has_feature(r, "target_is_gpu", 0));
  // The whole nest: 2 FLOPs per FMA over the three 16 KiB matrices.
  EXPECT_TRUE(has_feature(r, "arith_intensity_9", 2 * runs / (3 * 16384.0)));
}

TEST(StageFeatures, TiledMatmulBuffersAndTheirReuse) {
  std::vector<StageFeatures> rows = extract_stage_features(tiled_matmul(), cpu());
  const StageFeatures& r = rows.at(0);
  const double runs = 64.0 * 64 * 64;
  // buf0 = C (loaded and stored: twice the bytes), then A and B in order of first use.
  EXPECT_TRUE(has_feature(r, "buf0_read", 1));
  EXPECT_TRUE(has_feature(r, "buf0_write", 1));
  EXPECT_TRUE(has_feature(r, "buf0_scope", 1));
  EXPECT_TRUE(has_feature(r, "buf0_bytes", 2 * runs * 4));
  EXPECT_TRUE(has_feature(r, "buf0_unique_bytes", 64 * 64 * 4));
  EXPECT_TRUE(has_feature(r, "buf0_stride", 1));
  // C accumulates in place across k; between two uses of an element run the 4 x 16 tile's iterations, which touch
  // 64 elements of C, 4 of A and 16 of B.
  EXPECT_TRUE(has_feature(r, "buf0_reuse_type", 2));
  EXPECT_TRUE(has_feature(r, "buf0_reuse_count", 64));
  EXPECT_TRUE(has_feature(r, "buf0_reuse_distance_iters", 64));
  EXPECT_TRUE(has_feature(r, "buf0_reuse_distance_bytes", (64 + 4 + 16) * 4));

  EXPECT_TRUE(has_feature(r, "buf1_read", 1));
  EXPECT_TRUE(has_feature(r, "buf1_write", 0));
  EXPECT_TRUE(has_feature(r, "buf1_bytes", runs * 4));
  EXPECT_TRUE(has_feature(r, "buf1_unique_bytes", 64 * 64 * 4));
  // A is reused across j.i (16 times, one iteration apart: one element of each buffer in between).
  EXPECT_TRUE(has_feature(r, "buf1_reuse_type", 1));
  EXPECT_TRUE(has_feature(r, "buf1_reuse_count", 16));
  EXPECT_TRUE(has_feature(r, "buf1_reuse_distance_iters", 1));
  EXPECT_TRUE(has_feature(r, "buf1_reuse_distance_bytes", 3 * 4));
  EXPECT_TRUE(has_feature(r, "buf1_bytes_per_reuse", runs * 4 / 16));
  // The innermost loop that moves A is i.i (stride 64 elements, a new line each time it moves); the rows it reads
  // are contiguous, so its unique lines are its bytes over 64.
  EXPECT_TRUE(has_feature(r, "buf1_stride", 64));
  EXPECT_TRUE(has_feature(r, "buf1_lines", runs / 16));
  EXPECT_TRUE(has_feature(r, "buf1_unique_lines", 64 * 64 * 4 / 64));

  EXPECT_TRUE(has_feature(r, "buf2_bytes", runs * 4));
  EXPECT_TRUE(has_feature(r, "buf2_unique_bytes", 64 * 64 * 4));
  // B is reused across i.i, 16 iterations of j.i apart (16 elements of C, 1 of A, 16 of B).
  EXPECT_TRUE(has_feature(r, "buf2_reuse_type", 1));
  EXPECT_TRUE(has_feature(r, "buf2_reuse_count", 4));
  EXPECT_TRUE(has_feature(r, "buf2_reuse_distance_iters", 16));
  EXPECT_TRUE(has_feature(r, "buf2_reuse_distance_bytes", (16 + 1 + 16) * 4));
  // B moves with j.i, one element at a time: 16 floats per 64-byte line.
  EXPECT_TRUE(has_feature(r, "buf2_stride", 1));
  EXPECT_TRUE(has_feature(r, "buf2_lines", runs / 16));

  // Three buffers: the other slots are zero.
  EXPECT_TRUE(has_feature(r, "buf3_bytes", 0));
  EXPECT_TRUE(has_feature(r, "buf4_read", 0));
}

TEST(StageFeatures, ReuseAcrossAnOuterLoop) {
  // C[8, 16] += A[8, 32] * B[32, 16] over i (8) > j (16) > k (32), all serial.
  Buffer a = global_f32("A", {8, 32}), b = global_f32("B", {32, 16}), c = global_f32("C", {8, 16});
  Expr i = var("i"), j = var("j"), k = var("k");
  Stmt update = store(c, i * 16 + j, load(c, i * 16 + j) + load(a, i * 32 + k) * load(b, k * 16 + j));
  Stmt nest =
      for_loop(i, 8, LoopKind::kSerial, for_loop(j, 16, LoopKind::kSerial, for_loop(k, 32, LoopKind::kSerial, update)));
  std::vector<StageFeatures> rows = extract_stage_features(function_of({a, b}, {c}, nest), cpu());
  const StageFeatures& r = rows.at(0);
  // Slots: C (2 accesses), then A and B.
  // A's row is read again for every j: 16 times, a whole k loop (32 iterations) apart, in which C touches one
  // element, A 32 and B 32.
  EXPECT_TRUE(has_feature(r, "buf1_reuse_type", 1));
  EXPECT_TRUE(has_feature(r, "buf1_reuse_count", 16));
  EXPECT_TRUE(has_feature(r, "buf1_reuse_distance_iters", 32));
  EXPECT_TRUE(has_feature(r, "buf1_reuse_distance_bytes", (1 + 32 + 32) * 4));
  EXPECT_TRUE(has_feature(r, "buf1_stride", 1));
  EXPECT_TRUE(has_feature(r, "buf1_lines", 8 * 16 * 32 * 4 / 64.0));
  // B is read again for every i: 8 times, 16 x 32 iterations apart (C's row, A's row, all of B).
  EXPECT_TRUE(has_feature(r, "buf2_reuse_type", 1));
  EXPECT_TRUE(has_feature(r, "buf2_reuse_count", 8));
  EXPECT_TRUE(has_feature(r, "buf2_reuse_distance_iters", 16 * 32));
  EXPECT_TRUE(has_feature(r, "buf2_reuse_distance_bytes", (16 + 32 + 32 * 16) * 4));
  EXPECT_TRUE(has_feature(r, "buf2_stride", 16));
  EXPECT_TRUE(has_feature(r, "buf2_lines", 8 * 16 * 32));  // a new line every k
  // C accumulates in place across k, one iteration apart.
  EXPECT_TRUE(has_feature(r, "buf0_reuse_type", 2));
  EXPECT_TRUE(has_feature(r, "buf0_reuse_count", 32));
  EXPECT_TRUE(has_feature(r, "buf0_reuse_distance_iters", 1));
  EXPECT_TRUE(has_feature(r, "buf0_unique_bytes", 8 * 16 * 4));
  EXPECT_TRUE(has_feature(r, "serial_loops", 3));
  EXPECT_TRUE(has_feature(r, "vector_lanes", 0));
}

TEST(StageFeatures, VectorizedLoopOpsAndLanes) {
  Buffer x = global_f32("X", {8, 64}), y = global_f32("Y", {8, 64});
  Expr i = var("i"), j = var("j");
  auto axpb = [&](int64_t lanes) {
    Stmt body = store(y, i * 64 + j, load(x, i * 64 + j) * 2.0 + 1.0);
    return for_loop(i, 8, LoopKind::kSerial, for_loop(j, 64, LoopKind::kVectorized, body, lanes));
  };
  const StageFeatures plain = extract_stage_features(function_of({x}, {y}, axpb(0)), cpu()).at(0);
  EXPECT_TRUE(has_feature(plain, "float_fma", 8 * 64));
  EXPECT_TRUE(has_feature(plain, "vectorized_float_ops", 8 * 64));
  EXPECT_TRUE(has_feature(plain, "unrolled_float_ops", 0));
  EXPECT_TRUE(has_feature(plain, "vector_lanes", 64));
  EXPECT_TRUE(has_feature(plain, "vectorized_loops", 1));
  EXPECT_TRUE(has_feature(plain, "vectorized_position", 1));
  EXPECT_TRUE(has_feature(plain, "serial_extent_product", 8));
  EXPECT_TRUE(has_feature(plain, "reduction_loops", 0));
  // X and Y: 2 KiB each, read once, no reuse; 16 floats per line.
  EXPECT_TRUE(has_feature(plain, "buf0_reuse_type", 0));
  EXPECT_TRUE(has_feature(plain, "buf0_unique_lines", 8 * 64 * 4 / 64));
  EXPECT_TRUE(has_feature(plain, "buf0_bytes_per_reuse", 8 * 64 * 4));
  const StageFeatures explicit16 = extract_stage_features(function_of({x}, {y}, axpb(16)), cpu()).at(0);
  EXPECT_TRUE(has_feature(explicit16, "vector_lanes", 16));
}

TEST(StageFeatures, MachineEstimatesOfARegisterTile) {
  std::vector<StageFeatures> rows = extract_stage_features(tiled_matmul(), cpu());
  const StageFeatures& r = rows.at(0);
  const double runs = 64.0 * 64 * 64;
  // Along j.i: C and B move one element at a time, A stays.
  EXPECT_TRUE(has_feature(r, "lane_loop_extent", 16));
  EXPECT_TRUE(has_feature(r, "lane_contiguous_streams", 2));
  EXPECT_TRUE(has_feature(r, "lane_broadcast_streams", 1));
  EXPECT_TRUE(has_feature(r, "lane_strided_streams", 0));
  EXPECT_TRUE(has_feature(r, "lane_loop_is_reduction", 0));
  EXPECT_TRUE(has_feature(r, "lane_width", 16));
  // Each k step carries the 4 x 16 tile's independent sums.
  EXPECT_TRUE(has_feature(r, "reduction_chains", 64));
  // The 32 KiB L1 holds what the loops from j.o in touch (C's 4 x 64 strip, A's 4 rows, all of B: 18 KiB): C's and
  // A's 16 lines come in once per i.o, B's 256 lines once, as i.o does not move B. The 1 MiB L2 holds all three
  // 16 KiB matrices from one run to the next: nothing to bring in.
  EXPECT_TRUE(has_feature(r, "l1_miss_lines", 16 * 16 + 16 * 16 + 256));
  EXPECT_TRUE(has_feature(r, "l2_miss_lines", 0));
  EXPECT_TRUE(has_feature(r, "l3_miss_lines", 0));
  // Loads and stores bound it, over two ports: C loaded and stored 16 lanes at a time, A once per row of the tile
  // (broadcast over j.i's 16 lanes), B once per k for all four rows. FMAs take runs / 32 cycles, the k chain
  // runs / 64 x 4 and the lines from L2 768 x 2.
  EXPECT_TRUE(has_feature(r, "estimated_cycles", (2 * runs / 16 + runs / 16 + runs / 4 / 16) / 2));
}

TEST(StageFeatures, MachineEstimatesOfAReductionInnermost) {
  // C[8, 16] += A[8, 32] * B[32, 16] over i (8) > j (16) > k (32), all serial: every step waits for the last.
  Buffer a = global_f32("A", {8, 32}), b = global_f32("B", {32, 16}), c = global_f32("C", {8, 16});
  Expr i = var("i"), j = var("j"), k = var("k");
  Stmt update = store(c, i * 16 + j, load(c, i * 16 + j) + load(a, i * 32 + k) * load(b, k * 16 + j));
  Stmt nest =
      for_loop(i, 8, LoopKind::kSerial, for_loop(j, 16, LoopKind::kSerial, for_loop(k, 32, LoopKind::kSerial, update)));
  const StageFeatures r = extract_stage_features(function_of({a, b}, {c}, nest), cpu()).at(0);
  EXPECT_TRUE(has_feature(r, "lane_loop_extent", 32));
  EXPECT_TRUE(has_feature(r, "lane_contiguous_streams", 1));  // A
  EXPECT_TRUE(has_feature(r, "lane_broadcast_streams", 1));   // C
  EXPECT_TRUE(has_feature(r, "lane_strided_streams", 1));     // B, 16 apart
  EXPECT_TRUE(has_feature(r, "lane_loop_is_reduction", 1));
  EXPECT_TRUE(has_feature(r, "lane_width", 1));
  EXPECT_TRUE(has_feature(r, "reduction_chains", 1));
  // All three matrices (3.5 KiB) stay in L1 from one run to the next.
  EXPECT_TRUE(has_feature(r, "l1_miss_lines", 0));
  EXPECT_TRUE(has_feature(r, "l3_miss_lines", 0));
  // One FMA latency (4 cycles) per step.
  EXPECT_TRUE(has_feature(r, "estimated_cycles", 8 * 16 * 32 * 4));
}

TEST(StageFeatures, SerialLoopsVectorizeWhereTheCompilerCan) {
  Buffer x = global_f32("X", {8, 64}), y = global_f32("Y", {8, 64});
  Expr i = var("i"), j = var("j");
  // Y = 2 X + 1 with j innermost: contiguous, so the compiler vectorizes it (16 lanes here) unmarked.
  Stmt rows = for_loop(i, 8, LoopKind::kSerial,
                       for_loop(j, 64, LoopKind::kSerial, store(y, i * 64 + j, load(x, i * 64 + j) * 2.0 + 1.0)));
  const StageFeatures along = extract_stage_features(function_of({x}, {y}, rows), cpu()).at(0);
  EXPECT_TRUE(has_feature(along, "lane_width", 16));
  EXPECT_TRUE(has_feature(along, "lane_contiguous_streams", 2));
  EXPECT_TRUE(has_feature(along, "vectorized_float_ops", 0));
  // 512 FMAs over two 16-lane pipes, 1024 loads and stores 16 at a time over two ports.
  EXPECT_TRUE(has_feature(along, "estimated_cycles", 1024 / 16 / 2));
  // Transposed (i innermost, 64 floats apart): one element at a time.
  Stmt columns = for_loop(j, 64, LoopKind::kSerial,
                          for_loop(i, 8, LoopKind::kSerial, store(y, i * 64 + j, load(x, i * 64 + j) * 2.0 + 1.0)));
  const StageFeatures across = extract_stage_features(function_of({x}, {y}, columns), cpu()).at(0);
  EXPECT_TRUE(has_feature(across, "lane_width", 1));
  EXPECT_TRUE(has_feature(across, "lane_strided_streams", 2));
  EXPECT_TRUE(has_feature(across, "estimated_cycles", 1024 / 2));
}

// g++ (12) vectorizes a loop whose body is under a condition on the lane only with masked loads and stores of
// contiguous streams: a load all lanes share, a strided access or a math call there leaves it scalar. A condition
// that bounds the lane (a split's tail) is printed as the loop's bound instead, and masks nothing.
TEST(StageFeatures, AGuardOnTheLaneKeepsSharedLoadsAndMathCallsScalar) {
  Buffer x = global_f32("X", {8, 64}), w = global_f32("W", {8}), y = global_f32("Y", {8, 64});
  Expr i = var("i"), j = var("j");
  auto guarded = [&](Expr guard, Expr value) {
    Stmt nest = for_loop(i, 8, LoopKind::kSerial,
                         for_loop(j, 64, LoopKind::kVectorized, if_then_else(guard, store(y, i * 64 + j, value))));
    return extract_stage_features(function_of({x, w}, {y}, nest), cpu()).at(0);
  };
  const Expr contiguous = load(x, i * 64 + j) * 2.0 + 1.0;
  const Expr masking = lt(j % 32, Expr(30));
  EXPECT_TRUE(has_feature(guarded(masking, contiguous), "lane_width", 16));
  EXPECT_TRUE(has_feature(guarded(masking, contiguous * load(w, i)), "lane_width", 1));
  EXPECT_TRUE(has_feature(guarded(masking, math::exp(contiguous)), "lane_width", 1));
  // A bound on the lane, and a condition the lanes share (taken out of the loop): nothing is masked.
  for (const Expr& guard : {lt(j, Expr(60)), lt(i, Expr(6)), logical_and(lt(i, Expr(6)), lt(j, Expr(60)))}) {
    EXPECT_TRUE(has_feature(guarded(guard, contiguous * load(w, i)), "lane_width", 16)) << to_string(guard);
    EXPECT_TRUE(has_feature(guarded(guard, math::exp(contiguous)), "lane_width", 16)) << to_string(guard);
  }
}

TEST(StageFeatures, GuardsCountAsCompares) {
  Buffer x = global_f32("X", {16}), y = global_f32("Y", {16});
  Expr i = var("i");
  Stmt body = if_then_else(lt(i, 10), store(y, i, maximum(load(x, i), 0.0)));
  const StageFeatures r =
      extract_stage_features(function_of({x}, {y}, for_loop(i, 16, LoopKind::kSerial, body)), cpu()).at(0);
  EXPECT_TRUE(has_feature(r, "int_compare_logic", 16));
  EXPECT_TRUE(has_feature(r, "float_min_max", 16));  // counted as if every iteration stored

  // A select and its float comparison: two float ops, one FLOP (the select moves a value).
  Stmt relu = store(y, i, select(gt(load(x, i), 0.0), load(x, i), 0.0));
  const StageFeatures s =
      extract_stage_features(function_of({x}, {y}, for_loop(i, 16, LoopKind::kSerial, relu)), cpu()).at(0);
  EXPECT_TRUE(has_feature(s, "float_compare_select", 2 * 16));
  EXPECT_TRUE(has_feature(s, "float_ops", 2 * 16));
  // 16 FLOPs over X and Y (64 bytes each) for the whole loop.
  EXPECT_TRUE(has_feature(s, "arith_intensity_9", 16.0 / 128));
}

TEST(StageFeatures, IdenticalStoresMergeIntoOneRow) {
  // Two stages that differ only in buffer and variable names and in the offset they read at, and a third that
  // computes something else.
  Buffer x1 = global_f32("X1", {64}), x2 = global_f32("X2", {64});
  Buffer y1 = global_f32("Y1", {32}), y2 = global_f32("Y2", {32}), z = global_f32("Z", {32});
  Expr i = var("i"), j = var("j");
  Stmt first = for_loop(i, 32, LoopKind::kVectorized, store(y1, i, load(x1, i) + 1.0));
  Stmt second = for_loop(j, 32, LoopKind::kVectorized, store(y2, j, load(x2, j + 32) + 1.0));
  Stmt third = for_loop(i, 32, LoopKind::kVectorized, store(z, i, load(x1, i) * 3.0));
  LoopFunction f = function_of({x1, x2}, {y1, y2, z}, seq({first, barrier(BarrierKind::kGrid), second, third}));
  std::vector<StageFeatures> rows = extract_stage_features(f, cpu());
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].store, "Y1");
  EXPECT_EQ(rows[0].multiplicity, 2);
  EXPECT_TRUE(has_feature(rows[0], "stage_index", 0));  // the first instance's position
  EXPECT_TRUE(has_feature(rows[0], "grid_barriers_before", 0));
  EXPECT_EQ(rows[1].store, "Z");
  EXPECT_EQ(rows[1].multiplicity, 1);
  EXPECT_TRUE(has_feature(rows[1], "stage_index", 2));
  EXPECT_TRUE(has_feature(rows[1], "grid_barriers_before", 1));

  // Another extent is another computation.
  Stmt shorter = for_loop(j, 16, LoopKind::kVectorized, store(y2, j, load(x2, j) + 1.0));
  EXPECT_EQ(extract_stage_features(function_of({x1, x2}, {y1, y2}, seq({first, shorter})), cpu()).size(), 2u);
}

TEST(StageFeatures, PositionsCountKernelsAndBarriers) {
  Buffer x = global_f32("X", {32}), y = global_f32("Y", {32}), z = global_f32("Z", {32});
  Expr i = var("i");
  Stmt to_y = for_loop(i, 32, LoopKind::kParallel, store(y, i, load(x, i) + 1.0));
  Stmt to_z = for_loop(i, 32, LoopKind::kParallel, store(z, i, math::exp(load(y, i))));
  std::vector<StageFeatures> rows =
      extract_stage_features(function_of({x}, {z}, seq({to_y, barrier(BarrierKind::kKernel), to_z})), cpu());
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_TRUE(has_feature(rows[1], "kernel_index", 1));
  EXPECT_TRUE(has_feature(rows[1], "stage_index", 0));
  EXPECT_TRUE(has_feature(rows[1], "float_math_calls", 32));
  EXPECT_TRUE(has_feature(rows[1], "parallel_position", 1));  // the only loop is also the innermost
}

TEST(StageFeatures, ReductionInitAndLocalBuffers) {
  // acc[16] local: acc = 0; for k (8): acc += X[k, :]; Y = acc.
  Buffer x = global_f32("X", {8, 16}), y = global_f32("Y", {16});
  Buffer acc = make_buffer("acc", DType::kFloat32, {16}, MemoryScope::kLocal);
  Expr j = var("j"), k = var("k");
  Stmt body = allocate(
      acc, seq({for_loop(j, 16, LoopKind::kVectorized, store(acc, j, 0.0)),
                for_loop(k, 8, LoopKind::kSerial,
                         for_loop(j, 16, LoopKind::kVectorized, store(acc, j, load(acc, j) + load(x, k * 16 + j)))),
                for_loop(j, 16, LoopKind::kVectorized, store(y, j, load(acc, j)))}));
  std::vector<StageFeatures> rows = extract_stage_features(function_of({x}, {y}, body), cpu());
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_TRUE(has_feature(rows[0], "is_reduction_init", 1));
  EXPECT_TRUE(has_feature(rows[1], "is_reduction_init", 0));
  EXPECT_TRUE(has_feature(rows[2], "is_reduction_init", 0));
  for (const StageFeatures& r : rows) {
    EXPECT_TRUE(has_feature(r, "local_buffers", 1));
    EXPECT_TRUE(has_feature(r, "local_buffer_bytes", 64));
    EXPECT_TRUE(has_feature(r, "shared_buffers", 0));
  }
  EXPECT_TRUE(has_feature(rows[1], "reduction_loops", 1));
  EXPECT_TRUE(has_feature(rows[1], "reduction_extent_product", 8));
  EXPECT_TRUE(has_feature(rows[1], "store_scope", 3));
  EXPECT_TRUE(has_feature(rows[1], "buf0_reuse_type", 2));  // acc: 2 accesses per run, more bytes than X
  EXPECT_TRUE(has_feature(rows[1], "buf0_scope", 3));
}

TEST(StageFeatures, NonAffineIndicesAreBoundedConservatively) {
  // Y[3, 8] written through a fused loop v (12) at (v / 4) * 8 + v % 4: 12 distinct elements.
  Buffer x = global_f32("X", {12}), y = global_f32("Y", {3, 8});
  Expr v = var("v");
  Stmt body = for_loop(v, 12, LoopKind::kParallel, store(y, (v / 4) * 8 + v % 4, load(x, v)));
  const StageFeatures r = extract_stage_features(function_of({x}, {y}, body), cpu()).at(0);
  EXPECT_TRUE(has_feature(r, "buf0_unique_bytes", 12 * 4));
  EXPECT_TRUE(has_feature(r, "buf0_stride", 1));
  EXPECT_TRUE(has_feature(r, "int_div_mod", 2 * 12));
}

TEST(StageFeatures, GpuKernelFigures) {
  const Target gpu = *find_target("sm_80");
  Buffer x = global_f32("X", {256}), y = global_f32("Y", {256});
  Expr bx = var("bx"), tx = var("tx");
  Stmt body = for_loop(bx, 4, LoopKind::kBlockX,
                       for_loop(tx, 64, LoopKind::kThreadX, store(y, bx * 64 + tx, load(x, bx * 64 + tx) * 2.0)));
  LoopFunction f = function_of({x}, {y}, body);
  const StageFeatures r = extract_stage_features(f, gpu, {{32, 1024}}).at(0);
  EXPECT_TRUE(has_feature(r, "target_is_gpu", 1));
  EXPECT_TRUE(has_feature(r, "gpu_registers_per_thread", 32));
  EXPECT_TRUE(has_feature(r, "gpu_shared_bytes_per_block", 1024));
  EXPECT_TRUE(has_feature(r, "gpu_threads_per_block", 64));
  EXPECT_TRUE(has_feature(r, "gpu_blocks", 4));
  EXPECT_TRUE(has_feature(r, "gpu_block_position", 3));
  EXPECT_TRUE(has_feature(r, "gpu_thread_position", 1));
  EXPECT_TRUE(has_feature(r, "parallel_float_ops", 256));
  EXPECT_TRUE(has_feature(r, "target_simd_fp32_lanes", gpu.gpu.warp_size));
  // Unknown figures are zero; a wrong count of them is refused.
  EXPECT_TRUE(has_feature(extract_stage_features(f, gpu).at(0), "gpu_registers_per_thread", 0));
  EXPECT_THROW(extract_stage_features(f, gpu, {{32, 0}, {32, 0}}), std::invalid_argument);
}

TEST(StageFeatures, AnUnboundVariableIsRefused) {
  Buffer y = global_f32("Y", {16});
  Stmt body = for_loop(var("i"), 16, LoopKind::kSerial, store(y, var("j"), 1.0));
  EXPECT_THROW(extract_stage_features(function_of({}, {y}, body), cpu()), std::invalid_argument);
}

TEST(StageFeatures, LoweredSchedulesOfARealWorkloadGiveFiniteValues) {
  Program p = make_workload("matmul", find_workload("matmul")->small);
  std::vector<Schedule> schedules = {hand_schedule(p)};
  std::mt19937_64 rng(7);
  for (int n = 0; n < 8; ++n) schedules.push_back(sample_schedule(p, rng));
  for (const Schedule& s : schedules) {
    LoopFunction f = lower(p, s);
    int64_t stores = 0;
    for_each_stmt(f.body, [&](const Stmt& st) { stores += as<StoreNode>(st) != nullptr; });
    std::vector<StageFeatures> rows = extract_stage_features(f, cpu());
    ASSERT_FALSE(rows.empty()) << s.to_json();
    int64_t represented = 0;
    for (const StageFeatures& r : rows) {
      represented += r.multiplicity;
      ASSERT_EQ(r.values.size(), stage_feature_names().size());
      for (size_t c = 0; c < r.values.size(); ++c)
        EXPECT_TRUE(std::isfinite(r.values[c]))
            << stage_feature_names()[c] << " of " << r.store << " in " << s.to_json();
    }
    EXPECT_EQ(represented, stores) << s.to_json();
  }
}

}  // namespace
}  // namespace ingot
