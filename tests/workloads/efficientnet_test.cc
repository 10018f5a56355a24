#include "workloads/efficientnet.h"

#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include "interp/interpreter.h"
#include "workloads/registry.h"

namespace ingot {
namespace {

TEST(Efficientnet, PaperSizeShapes) {
  Program p = efficientnet();
  EXPECT_EQ(p.name(), "efficientnet");
  ASSERT_EQ(p.outputs().size(), 1u);
  EXPECT_EQ(p.outputs()[0]->name, "logits");
  EXPECT_EQ(p.outputs()[0]->shape, (std::vector<int64_t>{1, 1000}));
  EXPECT_EQ(p.find("stem_silu")->shape, (std::vector<int64_t>{1, 32, 112, 112}));
  // Stage 0 (ratio 1) has no expansion; stage 1 expands 16 -> 96 and its depthwise 3x3 has stride 2.
  EXPECT_FALSE(p.find("s0b0_expand"));
  EXPECT_EQ(p.find("s1b0_expand_weight")->shape, (std::vector<int64_t>{96, 16, 1, 1}));
  EXPECT_EQ(p.find("s1b0_dw_weight")->shape, (std::vector<int64_t>{96, 1, 3, 3}));
  EXPECT_EQ(p.find("s1b0_dw")->shape, (std::vector<int64_t>{1, 96, 56, 56}));
  EXPECT_EQ(p.find("s2b1_dw_weight")->shape, (std::vector<int64_t>{240, 1, 5, 5}));
  // Squeeze to max(1, in / 4) channels: 40 / 4 = 10 for stage 2's second block.
  EXPECT_EQ(p.find("s2b1_se_reduce_weight")->shape, (std::vector<int64_t>{10, 240}));
  EXPECT_EQ(p.find("s6b0_project")->shape, (std::vector<int64_t>{1, 320, 7, 7}));
  EXPECT_EQ(p.find("head_silu")->shape, (std::vector<int64_t>{1, 1280, 7, 7}));
  // Residuals only where stride is 1 and channels agree: not on a stage's first block here, on the rest.
  EXPECT_FALSE(p.find("s0b0_add"));
  EXPECT_FALSE(p.find("s4b0_add"));  // stride 1 but 80 -> 112
  EXPECT_TRUE(p.find("s5b3_add") && p.find("s1b1_add"));
  EXPECT_FALSE(p.find("s5b4_dw"));
  const std::vector<std::string> weights = efficientnet_weight_names(EfficientnetSizes{});
  EXPECT_EQ(p.placeholders().size(), weights.size() + 1);  // the image
  for (const std::string& w : weights) EXPECT_TRUE(p.find(w)->is_placeholder()) << w;
}

TEST(Efficientnet, SqueezeExcitationScalesEachChannelByItsGate) {
  Program p = efficientnet(EfficientnetSizes::small());
  TensorMap out = interpret(p, random_inputs(p, 5));
  const HostTensor &features = out.at("s3b0_dw_silu"), &gate = out.at("s3b0_se_gate"),
                   &scaled = out.at("s3b0_se_scale");
  const int64_t channels = features.shape()[1], plane = features.shape()[2] * features.shape()[3];
  EXPECT_EQ(channels, 6 * 5);  // stage 3 reads 40 / 8 channels and expands them 6x
  // Gates are sigmoids of a dense layer over the pooled features, so strictly between 0 and 1.
  for (int64_t c = 0; c < channels; ++c) {
    EXPECT_GT(gate.get(c), 0.0);
    EXPECT_LT(gate.get(c), 1.0);
    for (int64_t e = 0; e < plane; ++e)
      EXPECT_NEAR(scaled.get(c * plane + e), features.get(c * plane + e) * gate.get(c), 1e-6);
  }
}

TEST(Efficientnet, SmallVariantKeepsTheStructure) {
  const EfficientnetSizes s = EfficientnetSizes::small();
  Program p = efficientnet(s);
  EXPECT_EQ(p.outputs()[0]->shape, (std::vector<int64_t>{1, 10}));
  EXPECT_EQ(p.find("s5b0_dw_weight")->shape, (std::vector<int64_t>{84, 1, 5, 5}));  // 112 / 8 = 14, x 6
  EXPECT_EQ(p.find("head_conv_weight")->shape, (std::vector<int64_t>{160, 40, 1, 1}));
  EXPECT_FALSE(p.find("s1b1_dw"));
}

TEST(Efficientnet, RejectsBadSizes) {
  EXPECT_THROW(efficientnet(EfficientnetSizes{224, 1000, 0, 4}), std::invalid_argument);
  EXPECT_THROW(efficientnet(EfficientnetSizes{0, 1000, 1, 4}), std::invalid_argument);
}

}  // namespace
}  // namespace ingot
