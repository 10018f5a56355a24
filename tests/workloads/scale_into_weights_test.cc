// Per-channel scales folded into the weights of the sums that read them: which maps fold, the program they become,
// and the interpreter's result before and after (EfficientNet's squeeze-excitation included).
#include "workloads/scale_into_weights.h"

#include <gtest/gtest.h>

#include <cmath>

#include "interp/interpreter.h"
#include "ops/conv.h"
#include "workloads/efficientnet.h"

namespace ingot {
namespace {

// y = conv(x * gate[c], w): a squeeze-excitation scale and its projection (1 x 1, or 3 x 3 padded).
Program scaled_projection(int64_t kernel = 1, int64_t out_channels = 3) {
  Tensor x = placeholder("x", {1, 8, 6, 6}), gate = placeholder("gate", {1, 8});
  Tensor scaled = compute("scaled", x->shape, [&](const std::vector<Expr>& i) { return x(i) * gate(i[0], i[1]); });
  Tensor w = placeholder("w", {out_channels, 8, kernel, kernel});
  Conv2dAttrs attrs;
  const int64_t pad = kernel / 2;
  attrs.padding = {pad, pad, pad, pad};
  return Program({conv2d("y", scaled, w, Tensor(), attrs)}, "projection");
}

// The largest difference between the two programs' outputs, relative to the output's largest magnitude (as
// verification scales its tolerance): rounding only, since the products associate differently.
double largest_difference(const Program& a, const Program& b, const std::string& output) {
  TensorMap inputs = random_inputs(a, 7);
  const TensorMap out_a = interpret(a, inputs), out_b = interpret(b, inputs);
  const HostTensor &ya = out_a.at(output), &yb = out_b.at(output);
  double largest = 0, magnitude = 1;
  for (int64_t i = 0; i < ya.num_elements(); ++i) {
    largest = std::max(largest, std::fabs(ya.get(i) - yb.get(i)));
    magnitude = std::max(magnitude, std::fabs(ya.get(i)));
  }
  return largest / magnitude;
}

TEST(ScaleIntoWeights, TheSumReadsTheMapUnscaledAndAScaledWeight) {
  Program before = scaled_projection();
  Program after = fold_scales_into_weights(before);
  EXPECT_FALSE(after.find("scaled"));
  EXPECT_EQ(tensor_definition(after.find("y_scaled_weight")),
            "y_scaled_weight: f32[3, 8, 1, 1] = compute(i, j, l, m) (w[i, j, l, m] * gate[0, j])");
  EXPECT_EQ(tensor_definition(after.find("y")),
            "y: f32[1, 3, 6, 6] = compute(i, j, l, m) sum((x[i, rc, (((l * 1) + (ry * 1)) - 0), (((m * 1) + (rx * "
            "1)) - 0)] * y_scaled_weight[j, rc, ry, rx]), axes=[rc:8, ry:1, rx:1])");
  EXPECT_LT(largest_difference(before, after, "y"), 1e-6);
}

TEST(ScaleIntoWeights, APaddedWindowKeepsItsGuardOnTheUnscaledMap) {
  Program before = scaled_projection(/*kernel=*/3, /*out_channels=*/1);
  Program after = fold_scales_into_weights(before);
  ASSERT_FALSE(after.find("scaled"));
  const std::string y = tensor_definition(after.find("y"));
  EXPECT_NE(y.find("select("), std::string::npos) << y;
  EXPECT_NE(y.find("x[i, rc, "), std::string::npos) << y;
  EXPECT_LT(largest_difference(before, after, "y"), 1e-6);
}

TEST(ScaleIntoWeights, MapsThatDoNotQualifyStayAsTheyAre) {
  // The weight has more than a quarter of the map's elements: writing the scaled weight would cost more.
  Program large_weight = scaled_projection(/*kernel=*/1, /*out_channels=*/16);
  EXPECT_EQ(fold_scales_into_weights(large_weight).to_string(), large_weight.to_string());

  // The scale varies along the map's rows, so no weight can hold it.
  Tensor x = placeholder("x", {1, 8, 6, 6}), rows = placeholder("rows", {6});
  Tensor by_row = compute("by_row", x->shape, [&](const std::vector<Expr>& i) { return x(i) * rows(i[2]); });
  Program per_row({conv2d("y", by_row, placeholder("w", {1, 8, 1, 1}))}, "per_row");
  EXPECT_EQ(fold_scales_into_weights(per_row).to_string(), per_row.to_string());

  // The scaled map has another reader (here it is an output too).
  Tensor gate = placeholder("gate", {1, 8});
  Tensor scaled = compute("scaled", x->shape, [&](const std::vector<Expr>& i) { return x(i) * gate(i[0], i[1]); });
  Program kept({conv2d("y", scaled, placeholder("w", {1, 8, 1, 1})), scaled}, "kept");
  EXPECT_EQ(fold_scales_into_weights(kept).to_string(), kept.to_string());
}

TEST(ScaleIntoWeights, EfficientnetFoldsItsEarlySqueezeExcitationScales) {
  EfficientnetSizes small;
  small.image = 64;
  small.channel_divisor = 4;
  small.max_stage_layers = 1;
  Program before = efficientnet(small);
  Program after = fold_scales_into_weights(before);
  int folded = 0, kept = 0;
  for (const Tensor& t : after.computes()) {
    folded += t->name.find("_project_scaled_weight") != std::string::npos;
    kept += t->name.find("_se_scale") != std::string::npos;
  }
  // 7 blocks; from the fourth on (maps of 4 x 4 pixels or fewer) a map has fewer than 4 x its projection's weights.
  EXPECT_EQ(folded, 3);
  EXPECT_EQ(kept, 4);
  EXPECT_LT(largest_difference(before, after, "logits"), 1e-6);
}

}  // namespace
}  // namespace ingot
