#include "workloads/resnext.h"

#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include "interp/interpreter.h"
#include "workloads/registry.h"

namespace ingot {
namespace {

TEST(Resnext, PaperSizeShapes) {
  Program p = resnext();
  EXPECT_EQ(p.name(), "resnext");
  ASSERT_EQ(p.outputs().size(), 1u);
  EXPECT_EQ(p.outputs()[0]->name, "logits");
  EXPECT_EQ(p.outputs()[0]->shape, (std::vector<int64_t>{1, 1000}));
  EXPECT_EQ(p.find("stem_pool")->shape, (std::vector<int64_t>{1, 64, 56, 56}));
  // 64x4d: stage widths 256, 512, 1024, 2048 in 64 groups (4, 8, 16, 32 channels per group).
  EXPECT_EQ(p.find("s0b0_conv2_weight")->shape, (std::vector<int64_t>{256, 4, 3, 3}));
  EXPECT_EQ(p.find("s3b2_conv2_weight")->shape, (std::vector<int64_t>{2048, 32, 3, 3}));
  EXPECT_EQ(p.find("s1b0_conv2")->shape, (std::vector<int64_t>{1, 512, 28, 28}));  // stride 2 on the 3x3
  EXPECT_EQ(p.find("s2b22_relu3")->shape, (std::vector<int64_t>{1, 1024, 14, 14}));
  EXPECT_EQ(p.find("s3b2_relu3")->shape, (std::vector<int64_t>{1, 2048, 7, 7}));
  EXPECT_EQ(p.find("fc_weight")->shape, (std::vector<int64_t>{1000, 2048}));
  // A projection shortcut only on each stage's first block.
  for (const char* block : {"s0b0", "s1b0", "s2b0", "s3b0"}) EXPECT_TRUE(p.find(std::string(block) + "_down")) << block;
  EXPECT_FALSE(p.find("s0b1_down"));
  EXPECT_FALSE(p.find("s2b22_down"));
  EXPECT_TRUE(p.find("s2b22_add") && !p.find("s2b23_add"));
  const std::vector<std::string> weights = resnext_weight_names(ResnextSizes{});
  EXPECT_EQ(p.placeholders().size(), weights.size() + 1);  // the image
  // 3 per convolution and BN (stem, 3 per block, 4 shortcuts), plus the classifier's 2.
  EXPECT_EQ(weights.size(), size_t(3 * (1 + 3 * 33 + 4) + 2));
  for (const std::string& w : weights) EXPECT_TRUE(p.find(w)->is_placeholder()) << w;
}

TEST(Resnext, BatchNormIsAPerChannelScaleAndShift) {
  const ResnextSizes s = ResnextSizes::small();
  Program p = resnext(s);
  TensorMap in = random_inputs(p, 3);
  TensorMap out = interpret(p, in);
  const HostTensor &conv = out.at("s1b0_conv3"), &bn = out.at("s1b0_conv3_bn");
  const HostTensor &scale = in.at("s1b0_conv3_bn_scale"), &shift = in.at("s1b0_conv3_bn_shift");
  const int64_t channels = conv.shape()[1], plane = conv.shape()[2] * conv.shape()[3];
  EXPECT_EQ(channels, 4 * 16);
  for (int64_t c = 0; c < channels; ++c)
    for (int64_t e = 0; e < plane; ++e)
      EXPECT_NEAR(bn.get(c * plane + e), conv.get(c * plane + e) * scale.get(c) + shift.get(c), 1e-5);
}

TEST(Resnext, SmallVariantKeepsTheStructure) {
  const ResnextSizes s = ResnextSizes::small();
  Program p = resnext(s);
  EXPECT_EQ(p.outputs()[0]->shape, (std::vector<int64_t>{1, 10}));
  // Widths (width_per_group * 2^s) * groups = 4, 8, 16, 32 in 2 groups; outputs 4 * base * 2^s.
  EXPECT_EQ(p.find("s2b0_conv2_weight")->shape, (std::vector<int64_t>{16, 8, 3, 3}));
  EXPECT_EQ(p.find("s3b0_relu3")->shape, (std::vector<int64_t>{1, 256, 1, 1}));
  EXPECT_TRUE(p.find("s1b1_add") && !p.find("s1b1_down"));
}

TEST(Resnext, RejectsBadSizes) {
  ResnextSizes s;
  s.blocks[1] = 0;
  EXPECT_THROW(resnext(s), std::invalid_argument);
  s = ResnextSizes{};
  s.groups = -1;
  EXPECT_THROW(resnext(s), std::invalid_argument);
  s = ResnextSizes{};
  s.image = 0;
  EXPECT_THROW(resnext(s), std::invalid_argument);
}

}  // namespace
}  // namespace ingot
