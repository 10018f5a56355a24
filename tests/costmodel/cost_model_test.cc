#include "costmodel/cost_model.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "workloads/examples.h"

namespace ingot {
namespace {

TEST(UniformCostModel, ScoresEverySchedule) {
  Program p = matmul(8, 8, 8);
  Schedule split;
  split.split("C", "i", 2);
  UniformCostModel model;
  EXPECT_EQ(model.predict(p, {Schedule(), split, Schedule()}), (std::vector<double>{0, 0, 0}));
  EXPECT_TRUE(model.predict(p, {}).empty());
  model.update(p, {{split, 1e-3}, {Schedule(), std::nullopt}});
  EXPECT_EQ(model.predict(p, {split}), (std::vector<double>{0}));
}

TEST(UniformCostModel, SavesAndLoadsItsOwnFilesOnly) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("ingot_cost_model_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "model.txt").string(), other = (dir / "other.txt").string();
  UniformCostModel model;
  model.save(path);
  EXPECT_NO_THROW(UniformCostModel().load(path));
  std::ofstream(other) << "xgboost 1\n";
  EXPECT_THROW(UniformCostModel().load(other), std::runtime_error);
  EXPECT_THROW(UniformCostModel().load((dir / "missing.txt").string()), std::runtime_error);
  EXPECT_THROW(model.save((dir / "no_such_dir" / "model.txt").string()), std::runtime_error);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace ingot
