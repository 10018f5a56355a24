// Which vectorized loops are vector maps (explicit AVX-512 vectors in the C++ printer): one f32 store moving by one
// element or a constant stride, calling exp, sigmoid or tanh on loads that move by one element; and the loops that stay
// `omp simd`.
#include "lower/vector_maps.h"

#include <gtest/gtest.h>

#include "ir/functor.h"
#include "tests/support/cpu_test_kernels.h"

namespace ingot {
namespace {

using cpu_test::global_buffer;

const Buffer& x() {
  static const Buffer buffer = global_buffer("x", {4, 64});
  return buffer;
}
const Buffer& y() {
  static const Buffer buffer = global_buffer("y", {4, 64});
  return buffer;
}
const Buffer& bias() {
  static const Buffer buffer = global_buffer("bias", {4});
  return buffer;
}

Stmt loop_over(const Expr& m, Stmt body, int64_t explicit_lanes = 0) {
  return for_loop(m, 64, LoopKind::kVectorized, std::move(body), explicit_lanes);
}

TEST(VectorMaps, ASiluWithABiasIsAMapOfOneMovingLoad) {
  Expr r = var("r"), m = var("m");
  Expr biased = load(x(), r * 64 + m) + load(bias(), r);
  Stmt silu = store(y(), r * 64 + m, biased * math::sigmoid(biased));
  Stmt loop = loop_over(m, silu);
  std::optional<VectorMap> map = vector_map(as<ForNode>(loop));
  ASSERT_TRUE(map);
  EXPECT_EQ(map->store, as<StoreNode>(silu));
  ASSERT_EQ(map->lane_loads.size(), 1u);  // x's element, used twice; the bias does not move
  EXPECT_EQ(to_string(map->lane_loads[0]), to_string(load(x(), r * 64 + m)));
  EXPECT_FALSE(map->guard);
  EXPECT_EQ(map->store_step, 1);

  // Under a condition that does not use m (a halo row's), which the map keeps.
  Stmt guarded = loop_over(m, if_then_else(lt(r, Expr(3)), silu));
  map = vector_map(as<ForNode>(guarded));
  ASSERT_TRUE(map);
  EXPECT_EQ(to_string(map->guard), to_string(lt(r, Expr(3))));

  // exp and tanh, min and max, an in-place update.
  Expr own = load(y(), r * 64 + m);
  Stmt mixed = store(y(), r * 64 + m, minimum(math::exp(own - load(bias(), r)), math::tanh(own)) + Expr(1.0));
  EXPECT_TRUE(vector_map(as<ForNode>(loop_over(m, mixed))));
}

// A channel tile's epilogue along its channels (space/strategy_schedule.cc): each lane's result goes to another
// channel's plane, a constant stride apart, which the printer scatters.
TEST(VectorMaps, AStoreAPlaneApartPerLaneIsAScatter) {
  Expr p = var("p"), c = var("c");
  Stmt epilogue = store(y(), c * 4 + p, math::sigmoid(load(x(), p * 64 + c)));
  std::optional<VectorMap> map = vector_map(as<ForNode>(loop_over(c, epilogue)));
  ASSERT_TRUE(map);
  EXPECT_EQ(map->store_step, 4);
  ASSERT_EQ(map->lane_loads.size(), 1u);
  // A scatter's offsets are 32-bit lanes.
  Stmt far = store(y(), c * (int64_t(1) << 25) + p, math::sigmoid(load(x(), p * 64 + c)));
  EXPECT_FALSE(vector_map(as<ForNode>(loop_over(c, far))));
}

// A tensor of bf16 pairs (workloads/bf16_products.h): two rows of x, 8 elements apart, rounded and interleaved;
// with a padded channel, the second element zero past the real rows.
TEST(VectorMaps, PairsOfTwoRowsAreAPairMap) {
  Buffer pairs = cpu_test::global_buffer("pairs", {4, 8, 2}, DType::kBFloat16);
  Expr c = var("c"), p = var("p"), n = var("n");
  auto pair_loop = [&](const Expr& value, const Expr& index) {
    return for_loop(p, 8, LoopKind::kVectorized,
                    for_loop(n, 2, LoopKind::kUnrolled, store(pairs, index, cast(DType::kBFloat16, value))));
  };
  const Expr at = c * 16 + p * 2 + n;
  Stmt plain = pair_loop(load(x(), c * 16 + p + n * 8), at);
  std::optional<PairMap> map = pair_map(as<ForNode>(plain));
  ASSERT_TRUE(map);
  ASSERT_EQ(map->values.size(), 2u);
  EXPECT_EQ(to_string(map->values[0]), "x[((c * 16) + p)]");
  EXPECT_EQ(to_string(map->values[1]), "x[(((c * 16) + p) + 8)]");
  const Expr channel = c * 2 + n;
  Stmt padded = pair_loop(select(lt(channel, Expr(7)), load(x(), minimum(channel, Expr(6)) * 8 + p), Expr(0.0)), at);
  map = pair_map(as<ForNode>(padded));
  ASSERT_TRUE(map);
  EXPECT_TRUE(map->values[1].as<SelectNode>());
  EXPECT_FALSE(vector_map(as<ForNode>(plain)));  // no f32 store
  // Not pairs: a condition that moves with p, a row read every other element (a stride-2 convolution's), pairs not
  // side by side, an f32 store.
  EXPECT_FALSE(pair_map(as<ForNode>(pair_loop(select(lt(p, Expr(4)), load(x(), p), Expr(0.0)), at))));
  EXPECT_FALSE(pair_map(as<ForNode>(pair_loop(load(x(), p * 2 + n * 16), at))));
  EXPECT_FALSE(pair_map(as<ForNode>(pair_loop(load(x(), p + n * 8), c * 16 + p + n * 8))));
  Stmt f32_store = for_loop(p, 8, LoopKind::kVectorized,
                            for_loop(n, 2, LoopKind::kUnrolled, store(y(), p * 2 + n, load(x(), p + n * 8))));
  EXPECT_FALSE(pair_map(as<ForNode>(f32_store)));
}

TEST(VectorMaps, WhatTheVectorsCannotHoldStaysOmpSimd) {
  Expr r = var("r"), m = var("m");
  Expr element = load(x(), r * 64 + m);
  auto is_map = [&](Stmt body, int64_t explicit_lanes = 0) {
    Stmt loop = loop_over(m, std::move(body), explicit_lanes);
    return vector_map(as<ForNode>(loop)).has_value();
  };
  ASSERT_TRUE(is_map(store(y(), r * 64 + m, math::exp(element))));
  // No math function to gain on: the scalar form vectorizes as well.
  EXPECT_FALSE(is_map(store(y(), r * 64 + m, maximum(element, Expr(0.0)))));
  // A math function the maps do not have.
  EXPECT_FALSE(is_map(store(y(), r * 64 + m, math::exp(element) + math::log(element))));
  // A load moving by two elements, a store moving backwards, a load that moves by a division.
  EXPECT_FALSE(is_map(store(y(), r * 64 + m, math::exp(load(x(), m * 2)))));
  EXPECT_FALSE(is_map(store(y(), Expr(63) - m, math::exp(element))));
  EXPECT_FALSE(is_map(store(y(), r * 64 + m, math::exp(load(x(), m / 2)))));
  // The stored buffer read at another element (the vector would read what the loop has not written yet).
  EXPECT_FALSE(is_map(store(y(), r * 64 + m, math::exp(load(y(), r * 64 + m + 1)))));
  // A select or a comparison that moves with the loop.
  EXPECT_FALSE(is_map(store(y(), r * 64 + m, select(lt(element, Expr(0.0)), math::exp(element), element))));
  // A condition that uses the loop's variable (a split's tail).
  EXPECT_FALSE(is_map(if_then_else(lt(m, Expr(50)), store(y(), r * 64 + m, math::exp(element)))));
  // Two stores.
  EXPECT_FALSE(is_map(seq({store(y(), r * 64 + m, math::exp(element)), store(y(), r * 64 + m, element)})));
}

}  // namespace
}  // namespace ingot
