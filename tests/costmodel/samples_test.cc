#include "costmodel/samples.h"

#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>

namespace ingot {
namespace {

TEST(Samples, GroupsByWorkloadAndLabelsByThroughputRelativeToTheBest) {
  std::vector<SampleGroup> groups;
  add_sample(groups, "a", "mm", {1, 2}, 2.0);
  add_sample(groups, "b", "mlp", {3, 4}, 5.0);
  add_sample(groups, "a", "mm", {5, 6}, 1.0);
  ASSERT_EQ(groups.size(), 2u);
  EXPECT_EQ(sample_count(groups), 3);
  TrainingSet set = to_training_set(groups);
  EXPECT_EQ(set.columns, 2);
  EXPECT_EQ(set.group_sizes, (std::vector<unsigned>{2, 1}));
  EXPECT_EQ(set.values, (std::vector<float>{1, 2, 5, 6, 3, 4}));
  EXPECT_EQ(set.labels, (std::vector<float>{0.5f, 1.0f, 1.0f}));
}

TEST(Samples, RefusesRunTimesThatCannotBeRankedAndRowsOfAnotherWidth) {
  std::vector<SampleGroup> groups;
  EXPECT_THROW(add_sample(groups, "a", "mm", {1}, 0.0), std::invalid_argument);
  EXPECT_THROW(add_sample(groups, "a", "mm", {1}, std::nan("")), std::invalid_argument);
  add_sample(groups, "a", "mm", {1, 2}, 1.0);
  EXPECT_THROW(add_sample(groups, "b", "mm", {1}, 1.0), std::invalid_argument);
  EXPECT_EQ(sample_count(groups), 1);
}

}  // namespace
}  // namespace ingot
