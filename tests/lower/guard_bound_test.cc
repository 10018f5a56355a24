// The bound conjuncts of a loop's guard (a split's tail, v + rest < limit) against the expected limits and what is
// left of the condition, and the guards that give none.
#include "lower/guard_bound.h"

#include <gtest/gtest.h>

#include "ir/affine.h"
#include "tests/support/cpu_test_kernels.h"

namespace ingot {
namespace {

using cpu_test::global_buffer;

const Buffer& y() {
  static const Buffer buffer = global_buffer("y", {8, 64});
  return buffer;
}

Stmt loop_over(const Expr& v, Stmt body) { return for_loop(v, 44, LoopKind::kVectorized, std::move(body)); }

TEST(GuardBound, ASplitsTailBoundsTheLoopAndTheOtherConjunctsStay) {
  Expr i = var("i"), mi = var("m.i"), mo = var("m.o");
  Stmt write = store(y(), i * 64 + mi + mo * 44, Expr(1.0));
  Stmt loop = loop_over(mi, if_then_else(logical_and(lt(i, Expr(6)), lt(mi + mo * 44, Expr(56))), write));
  std::optional<GuardBound> bound = guard_bound(as<ForNode>(loop));
  ASSERT_TRUE(bound);
  ASSERT_EQ(bound->limits.size(), 1u);
  EXPECT_EQ(as_affine(bound->limits[0]), as_affine(Expr(56) - mo * 44)) << to_string(bound->limits[0]);
  ASSERT_TRUE(bound->remaining);
  EXPECT_EQ(to_string(bound->remaining), to_string(lt(i, Expr(6))));
  EXPECT_EQ(bound->guard->then_case, write);

  // The variable on the right, a constant on the left: 3 + m.i < i + 50 is m.i < i + 47.
  Stmt moved = loop_over(mi, if_then_else(lt(Expr(3) + mi, i + 50), write));
  bound = guard_bound(as<ForNode>(moved));
  ASSERT_TRUE(bound);
  EXPECT_EQ(as_affine(bound->limits.at(0)), as_affine(i + 47)) << to_string(bound->limits.at(0));
  EXPECT_FALSE(bound->remaining);
}

// A condition that does not use the loop's variable bounds nothing and remains whole: the printer tests it around the
// loop (a halo row's bound, which left a SiLU over the row scalar when tested inside it).
TEST(GuardBound, AConditionOffTheLoopRemainsWhole) {
  Expr i = var("i"), mi = var("m.i");
  Stmt write = store(y(), i * 64 + mi, Expr(1.0));
  std::optional<GuardBound> bound = guard_bound(as<ForNode>(loop_over(mi, if_then_else(lt(i, Expr(6)), write))));
  ASSERT_TRUE(bound);
  EXPECT_TRUE(bound->limits.empty());
  ASSERT_TRUE(bound->remaining);
  EXPECT_EQ(to_string(bound->remaining), to_string(lt(i, Expr(6))));
}

TEST(GuardBound, OtherConditionsAndBodiesGiveNone) {
  Expr i = var("i"), mi = var("m.i");
  Stmt write = store(y(), i * 64 + mi, Expr(1.0));
  auto none = [](const Stmt& loop) { return !guard_bound(as<ForNode>(loop)).has_value(); };
  EXPECT_TRUE(none(loop_over(mi, write)));                                                // no condition
  EXPECT_TRUE(none(loop_over(mi, if_then_else(lt(mi * 2, Expr(60)), write))));            // a stride: not a bound
  EXPECT_TRUE(none(loop_over(mi, if_then_else(lt(mi % 32, Expr(30)), write))));           // not affine
  EXPECT_TRUE(none(loop_over(mi, if_then_else(lt(Expr(60), mi), write))));                // a lower bound
  EXPECT_TRUE(none(loop_over(mi, if_then_else(lt(mi, Expr(40)), write, write))));         // an else branch
  EXPECT_TRUE(none(loop_over(mi, seq({if_then_else(lt(mi, Expr(40)), write), write}))));  // not the whole body
}

}  // namespace
}  // namespace ingot
