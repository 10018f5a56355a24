#include "ops/window.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/ops/op_test_util.h"

namespace ingot {
namespace {

using op_test::offset;
using op_test::run;
using op_test::tensor_of;
using op_test::values_of;
using testing::ElementsAre;
using testing::HasSubstr;

TEST(Roll, HandValuesLikeTorch) {
  Tensor x = placeholder("x", {5});
  TensorMap in{{"x", tensor_of({5}, {0, 1, 2, 3, 4})}};
  // torch.roll(torch.arange(5), 2) == [3, 4, 0, 1, 2]; shift -1 == [1, 2, 3, 4, 0]; 7 == 2.
  EXPECT_THAT(values_of(run(roll("a", x, {2}, {0}), in)), ElementsAre(3, 4, 0, 1, 2));
  EXPECT_THAT(values_of(run(roll("b", x, {-1}, {0}), in)), ElementsAre(1, 2, 3, 4, 0));
  EXPECT_THAT(values_of(run(roll("c", x, {7}, {-1}), in)), ElementsAre(3, 4, 0, 1, 2));
}

TEST(Roll, SwinShiftRandomizedAgainstPlainLoops) {
  const std::vector<int64_t> xs{2, 6, 6, 3};
  Tensor x = placeholder("x", xs);
  HostTensor xv = random_tensor(DType::kFloat32, xs, 21);
  const int64_t shift = -3;
  Tensor y = roll("y", x, {shift, shift}, {1, 2});
  HostTensor out = run(y, {{"x", xv}});
  op_test::for_each_index(xs, [&](const std::vector<int64_t>& o) {
    auto src = [&](int64_t i, int64_t n) { return ((i - shift) % n + n) % n; };
    EXPECT_EQ(out.get(offset(xs, o)), xv.get(offset(xs, {o[0], src(o[1], 6), src(o[2], 6), o[3]})));
  });
}

TEST(Window, PartitionMatchesSwinAndReverseRoundTrips) {
  const int64_t B = 2, H = 6, W = 9, C = 2, ws = 3;
  Tensor x = placeholder("x", {B, H, W, C});
  HostTensor xv = random_tensor(DType::kFloat32, {B, H, W, C}, 31);
  Tensor windows = window_partition("win", x, ws);
  ASSERT_EQ(windows->shape, (std::vector<int64_t>{B * 2 * 3, ws, ws, C}));
  Tensor back = window_reverse("back", windows, ws, H, W);
  ASSERT_EQ(back->shape, x->shape);
  TensorMap out = interpret(Program({back}), {{"x", xv}});
  // Swin: x.view(B, H/ws, ws, W/ws, ws, C).permute(0, 1, 3, 2, 4, 5).reshape(-1, ws, ws, C).
  op_test::for_each_index(windows->shape, [&](const std::vector<int64_t>& o) {
    const int64_t b = o[0] / 6, wh = o[0] / 3 % 2, ww = o[0] % 3;
    EXPECT_EQ(out.at("win").get(offset(windows->shape, o)),
              xv.get(offset(x->shape, {b, wh * ws + o[1], ww * ws + o[2], o[3]})));
  });
  EXPECT_EQ(values_of(out.at("back")), values_of(xv));
}

TEST(WindowErrors, RollLengths) {
  Tensor x = placeholder("x", {4, 4});
  EXPECT_THAT(
      [&] {
        roll("r", x, {1, 1}, {0});
      },
      testing::ThrowsMessage<std::invalid_argument>(
          HasSubstr("roll 'r': shifts [1,1] and axes [0] must have equal lengths")));
}

TEST(WindowErrors, PartitionNeedsMultiples) {
  Tensor x = placeholder("x", {1, 7, 7, 4});
  EXPECT_THAT([&] { window_partition("w", x, 2); },
              testing::ThrowsMessage<std::invalid_argument>(
                  HasSubstr("window_partition 'w': input [1,7,7,4] height and width must be multiples of window 2")));
}

TEST(WindowErrors, ReverseShape) {
  Tensor w = placeholder("w", {3, 2, 2, 4});
  EXPECT_THAT([&] { window_reverse("r", w, 2, 4, 4); },
              testing::ThrowsMessage<std::invalid_argument>(
                  HasSubstr("window_reverse 'r': windows [3,2,2,4] must be [B * 4, 2, 2, C] for a 4x4 map")));
}

}  // namespace
}  // namespace ingot
