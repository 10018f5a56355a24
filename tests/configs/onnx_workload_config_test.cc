// Run configs that name an ONNX file as their workload (workload.onnx): path resolution, the mistakes the
// parser rejects, and a short tuning run of such a config whose candidates are checked with the model's weights.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "configs/run_config.h"
#include "results/database.h"
#include "tests/workloads/onnx_test_models.h"
#include "tuner/candidate.h"
#include "tuner/search_strategy.h"
#include "tuner/tuning_loop.h"
#include "workloads/onnx_import.h"

namespace ingot {
namespace {

namespace fs = std::filesystem;

// x[4,8] -> MatMul w1[8,16] -> Add b1 -> Relu -> MatMul w2[16,4] -> y[4,4]; weights are distinct values.
onnx::ModelProto small_mlp() {
  testing::OnnxModelBuilder b;
  b.input("x", {4, 8});
  b.initializer("w1", testing::iota_tensor({8, 16}, 0.01f, -0.5f));
  b.initializer("b1", testing::iota_tensor({16}, 0.1f, -0.8f));
  b.initializer("w2", testing::iota_tensor({16, 4}, -0.02f, 0.6f));
  b.node("MatMul", {"x", "w1"}, {"h1"}, "fc1");
  b.node("Add", {"h1", "b1"}, {"h1b"}, "fc1_bias");
  b.node("Relu", {"h1b"}, {"h"}, "relu");
  b.node("MatMul", {"h", "w2"}, {"y"}, "fc2");
  b.output("y");
  return b.model();
}

class OnnxWorkloadConfig : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("ingot_onnxcfg_" + std::to_string(::getpid()) + "_" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "models");
    model_path_ = dir_ / "models" / "small_mlp.onnx";
    write(model_path_, small_mlp().SerializeAsString());
  }
  void TearDown() override { fs::remove_all(dir_); }

  static void write(const fs::path& path, const std::string& bytes) { std::ofstream(path, std::ios::binary) << bytes; }
  // The message parse_run_config throws for text named "x.yaml" with relative paths taken from dir_, or
  // "<no error>".
  std::string error_of(const std::string& text) const {
    try {
      parse_run_config(text, "x.yaml", dir_.string());
    } catch (const ConfigError& e) {
      return e.what();
    }
    return "<no error>";
  }

  fs::path dir_, model_path_;
};

TEST_F(OnnxWorkloadConfig, RelativePathIsTakenFromTheConfigsFolderAndStoredAbsolute) {
  write(dir_ / "run.yaml", "workload:\n  onnx: models/small_mlp.onnx\nbudget: {trials: 2}\n");
  RunConfig c = load_run_config((dir_ / "run.yaml").string());
  EXPECT_EQ(c.workload.onnx, model_path_.string());
  EXPECT_TRUE(c.workload.name.empty());
  EXPECT_TRUE(c.workload.params.empty());
  // parse_run_config takes relative paths from the base directory it is given; an absolute path stays.
  EXPECT_EQ(
      parse_run_config("workload: {onnx: small_mlp.onnx}\nbudget: {trials: 1}\n", "y.yaml", (dir_ / "models").string())
          .workload.onnx,
      model_path_.string());
  EXPECT_EQ(
      parse_run_config("workload: {onnx: " + model_path_.string() + "}\nbudget: {trials: 1}\n", "z.yaml").workload.onnx,
      model_path_.string());
  EXPECT_EQ(parse_run_config("workload: {onnx: ./models/../models/small_mlp.onnx}\nbudget: {trials: 1}\n", "w.yaml",
                             dir_.string())
                .workload.onnx,
            model_path_.string());
}

TEST_F(OnnxWorkloadConfig, FormattedConfigKeepsTheAbsolutePathAndRoundTrips) {
  RunConfig c = parse_run_config("workload: {onnx: models/small_mlp.onnx}\nbudget: {trials: 3}\nseed: 5\n", "x.yaml",
                                 dir_.string());
  std::string text = format_run_config(c);
  EXPECT_NE(text.find(model_path_.string()), std::string::npos) << text;
  EXPECT_EQ(text.find("name:"), std::string::npos) << text;
  EXPECT_EQ(text.find("params:"), std::string::npos) << text;
  // Read back from another folder (as `ingot export` does from the database) it is the same config.
  EXPECT_EQ(parse_run_config(text, "recorded", "/"), c);
}

TEST_F(OnnxWorkloadConfig, ConfiguredWorkloadIsTheImportedModelWithItsWeights) {
  RunConfig c =
      parse_run_config("workload: {onnx: models/small_mlp.onnx}\nbudget: {trials: 1}\n", "x.yaml", dir_.string());
  ConfiguredWorkload w = make_configured_workload(c.workload);
  EXPECT_EQ(w.name, "small_mlp");
  ImportedModel model = import_onnx(model_path_.string());
  EXPECT_EQ(w.program.structural_hash(), model.program.structural_hash());
  EXPECT_TRUE(w.input_ranges.empty());
  ASSERT_EQ(w.fixed_inputs.size(), 3u);
  for (const auto& [name, value] : model.initializers) {
    ASSERT_EQ(w.fixed_inputs.count(name), 1u) << name;
    const HostTensor& fixed = w.fixed_inputs.at(name);
    ASSERT_EQ(fixed.shape(), value.shape()) << name;
    for (int64_t i = 0; i < value.num_elements(); ++i) ASSERT_EQ(fixed.f32()[i], value.f32()[i]) << name;
  }
  // w1 holds iota values: its element 5 is 5 * 0.01 - 0.5.
  ASSERT_EQ(model.initializers.count("w1"), 1u);
  EXPECT_FLOAT_EQ(w.fixed_inputs.at("w1").f32()[5], 5 * 0.01f - 0.5f);

  // A registry workload comes with its input ranges and no fixed inputs.
  ConfiguredWorkload lstm = make_configured_workload(
      parse_run_config("workload: {name: lstm, params: {layers: 1, steps: 2, hidden: 4, input: 4}}\n"
                       "budget: {trials: 1}\n",
                       "l.yaml")
          .workload);
  EXPECT_EQ(lstm.name, "lstm");
  EXPECT_TRUE(lstm.fixed_inputs.empty());
  EXPECT_EQ(lstm.input_ranges,
            workload_input_ranges("lstm", {{"layers", 1}, {"steps", 2}, {"hidden", 4}, {"input", 4}}));
}

TEST_F(OnnxWorkloadConfig, MissingFile) {
  EXPECT_EQ(error_of("workload:\n  onnx: models/nope.onnx\nbudget: {trials: 1}\n"),
            "x.yaml:2:9: workload.onnx: no such file: " + (dir_ / "models" / "nope.onnx").string());
  EXPECT_EQ(error_of("workload:\n  onnx: models\nbudget: {trials: 1}\n"),
            "x.yaml:2:9: workload.onnx: not a file: " + (dir_ / "models").string());
}

TEST_F(OnnxWorkloadConfig, InvalidModelGivesTheImportersMessage) {
  write(dir_ / "garbage.onnx", "this is not a protobuf \xff\xff\xff");
  const std::string garbage = (dir_ / "garbage.onnx").string();
  EXPECT_EQ(error_of("workload: {onnx: garbage.onnx}\nbudget: {trials: 1}\n"),
            "x.yaml:1:18: workload.onnx: does not import: '" + garbage + "' is not an ONNX model");
  write(dir_ / "empty.onnx", "");
  EXPECT_EQ(error_of("workload: {onnx: empty.onnx}\nbudget: {trials: 1}\n"),
            "x.yaml:1:18: workload.onnx: does not import: '" + (dir_ / "empty.onnx").string() +
                "' is empty (0 bytes), not an ONNX model");

  testing::OnnxModelBuilder b;
  b.input("x", {2, 3});
  auto& pad = b.node("Pad", {"x", "pads"}, {"y"}, "p");
  b.ints("pads", {0, 1, 0, 1});
  testing::set_attr(pad, "mode", std::string("wrap"));
  b.output("y");
  write(dir_ / "wrap.onnx", b.model().SerializeAsString());
  std::string message;
  try {
    import_onnx((dir_ / "wrap.onnx").string());
  } catch (const std::exception& e) {
    message = e.what();
  }
  ASSERT_FALSE(message.empty()) << "the importer accepted Pad mode=wrap; pick another unsupported model";
  EXPECT_EQ(error_of("workload:\n  onnx: wrap.onnx\nbudget: {trials: 1}\n"),
            "x.yaml:2:9: workload.onnx: does not import: " + message);
  EXPECT_EQ(message.rfind((dir_ / "wrap.onnx").string() + ": ", 0), 0u) << message;
}

TEST_F(OnnxWorkloadConfig, ExactlyOneOfNameAndOnnx) {
  EXPECT_EQ(error_of("workload:\n  name: mlp\n  onnx: models/small_mlp.onnx\nbudget: {trials: 1}\n"),
            "x.yaml:3:3: workload.onnx: workload.name is set too; give one of workload.name and workload.onnx");
  EXPECT_EQ(error_of("budget: {trials: 1}\nworkload:\n  params: {batch: 2}\n"),
            "x.yaml:2:1: workload: needs a name (a registered workload) or an onnx file");
  EXPECT_EQ(error_of("budget: {trials: 1}\n"),
            "x.yaml:1:1: workload: missing required section (add one with a name or an onnx file)");
  EXPECT_EQ(error_of("workload:\n  onnx: models/small_mlp.onnx\n  params: {batch: 2}\nbudget: {trials: 1}\n"),
            "x.yaml:3:3: workload.params: not used with workload.onnx (an ONNX model's shapes are fixed by the "
            "model)");
  EXPECT_EQ(error_of("workload:\n  onnx: models/small_mlp.onnx\n  size: small\nbudget: {trials: 1}\n"),
            "x.yaml:3:3: workload.size: not used with workload.onnx (an ONNX model's shapes are fixed by the "
            "model)");
  EXPECT_EQ(error_of("workload:\n  onnx: \"\"\nbudget: {trials: 1}\n"), "x.yaml:2:9: workload.onnx: must not be empty");
  EXPECT_EQ(error_of("workload:\n  onnx: [a, b]\nbudget: {trials: 1}\n"),
            "x.yaml:2:9: workload.onnx: expected a string, got a list");
  // The other checks still apply to an ONNX config.
  EXPECT_EQ(error_of("workload: {onnx: models/small_mlp.onnx}\n"),
            "x.yaml:1:1: budget: set trials or minutes above 0 (the run stops at whichever is reached first; "
            "without either it would never stop)");
}

// y = Reshape(x [2, 6], shape) + ReduceSum over `axes`, both shape operands graph inputs.
void write_shape_input_model(const fs::path& path) {
  testing::OnnxModelBuilder b;
  b.input("x", {2, 6});
  b.input("shape", {2}, onnx::TensorProto::INT64);
  b.input("axes", {1}, onnx::TensorProto::INT64);
  b.node("Reshape", {"x", "shape"}, {"r"}, "reshape");
  b.node("ReduceSum", {"r", "axes"}, {"y"}, "sum");
  b.output("y");
  std::ofstream(path, std::ios::binary) << b.model().SerializeAsString();
}

TEST_F(OnnxWorkloadConfig, BindGivesShapeInputsTheirValues) {
  write_shape_input_model(dir_ / "shaped.onnx");
  const std::string path = (dir_ / "shaped.onnx").string();
  EXPECT_EQ(error_of("workload: {onnx: shaped.onnx}\nbudget: {trials: 1}\n"),
            "x.yaml:1:18: workload.onnx: does not import: " + path +
                ": node 'reshape' (Reshape): shape (input 'shape') must be a constant: ingot has static shapes only, "
                "but it depends on model input 'shape' (give its value with workload.bind: {shape: [...]})");

  const std::string text = "workload:\n  onnx: shaped.onnx\n  bind: {shape: [3, 4], axes: [1]}\nbudget: {trials: 1}\n";
  RunConfig c = parse_run_config(text, "x.yaml", dir_.string());
  ASSERT_EQ(c.workload.bind.size(), 2u);
  EXPECT_EQ(c.workload.bind.at("shape").values, (std::vector<int64_t>{3, 4}));
  EXPECT_FALSE(c.workload.bind.at("shape").scalar);
  ConfiguredWorkload w = make_configured_workload(c.workload);
  EXPECT_EQ(w.name, "shaped");
  ASSERT_EQ(w.program.placeholders().size(), 1u);  // x only: the bound inputs are constants
  EXPECT_EQ(w.program.outputs()[0]->shape, (std::vector<int64_t>{3, 1}));
  // The formatted config keeps the binding and reads back as the same config.
  std::string formatted = format_run_config(c);
  EXPECT_NE(formatted.find("bind:"), std::string::npos) << formatted;
  EXPECT_EQ(parse_run_config(formatted, "recorded", "/"), c);

  // Another binding is another workload to the database; the same one the same.
  RunConfig other =
      parse_run_config("workload:\n  onnx: shaped.onnx\n  bind: {shape: [4, 3], axes: [1]}\nbudget: {trials: 1}\n",
                       "x.yaml", dir_.string());
  EXPECT_NE(workload_key(make_configured_workload(other.workload).program), workload_key(w.program));
  EXPECT_EQ(workload_key(make_configured_workload(c.workload).program), workload_key(w.program));
  EXPECT_EQ(make_configured_workload(other.workload).program.outputs()[0]->shape, (std::vector<int64_t>{4, 1}));
}

TEST_F(OnnxWorkloadConfig, BindTakesAScalarForAZeroDimensionalInput) {
  testing::OnnxModelBuilder b;
  b.input("x", {2, 3});
  b.input("axis", {}, onnx::TensorProto::INT64);
  b.ints("zero", {0});
  b.node("Unsqueeze", {"axis", "zero"}, {"axes"}, "as_list");
  b.node("ReduceSum", {"x", "axes"}, {"y"}, "sum");
  b.output("y");
  write(dir_ / "scalar.onnx", b.model().SerializeAsString());
  RunConfig c = parse_run_config("workload:\n  onnx: scalar.onnx\n  bind:\n    axis: 1\nbudget: {trials: 1}\n",
                                 "x.yaml", dir_.string());
  EXPECT_TRUE(c.workload.bind.at("axis").scalar);
  EXPECT_EQ(make_configured_workload(c.workload).program.outputs()[0]->shape, (std::vector<int64_t>{2, 1}));
  EXPECT_EQ(parse_run_config(format_run_config(c), "recorded", "/"), c);
}

TEST_F(OnnxWorkloadConfig, BindMistakesNameTheKey) {
  write_shape_input_model(dir_ / "shaped.onnx");
  const std::string path = (dir_ / "shaped.onnx").string();
  const std::string head = "workload:\n  onnx: shaped.onnx\n  bind:\n";
  EXPECT_EQ(error_of(head + "    shape: [3, 4]\n    axes: [1]\n    nope: [1]\nbudget: {trials: 1}\n"),
            "x.yaml:6:5: workload.bind.nope: " + path +
                ": 'nope' is not a graph input of the model (its inputs: x, shape, axes)");
  EXPECT_EQ(error_of(head + "    shape: [3, 4, 1]\n    axes: [1]\nbudget: {trials: 1}\n"),
            "x.yaml:4:5: workload.bind.shape: " + path +
                ": the value bound to input 'shape' has shape [3] but the input is declared [2]");
  EXPECT_EQ(error_of(head + "    shape: [3, four]\nbudget: {trials: 1}\n"),
            "x.yaml:4:16: workload.bind.shape: expected an integer, got 'four'");
  EXPECT_EQ(error_of(head + "    shape: []\nbudget: {trials: 1}\n"),
            "x.yaml:4:12: workload.bind.shape: expected at least one integer, got an empty list");
  EXPECT_EQ(error_of(head + "    shape: {a: 1}\nbudget: {trials: 1}\n"),
            "x.yaml:4:12: workload.bind.shape: expected an integer or a list of integers, got a mapping");
  EXPECT_EQ(error_of(head + "    shape:\nbudget: {trials: 1}\n"),
            "x.yaml:4:5: workload.bind.shape: expected an integer or a list of integers, got nothing");
  EXPECT_EQ(error_of("workload:\n  onnx: shaped.onnx\n  bind: [1, 2]\nbudget: {trials: 1}\n"),
            "x.yaml:3:9: workload.bind: expected a mapping of graph input names to integer lists, got a list");
  EXPECT_EQ(error_of("workload:\n  name: mlp\n  bind: {x: [1]}\nbudget: {trials: 1}\n"),
            "x.yaml:3:3: workload.bind: only used with workload.onnx (it binds a model's inputs)");
}

TuneOptions quick_options(const RunConfig& config, const ConfiguredWorkload& w) {
  TuneOptions o;
  o.database_path = config.database;
  o.trials = config.budget.trials;
  o.seed = config.seed;
  o.input_ranges = w.input_ranges;
  o.fixed_inputs = w.fixed_inputs;
  o.threads = 1;
  o.batch_size = 2;
  o.builder.workers = 2;
  o.runner.warmup_runs = 0;
  o.runner.min_repeat_ms = 1;
  o.runner.min_repeats = 1;
  o.runner.run_timeout_seconds = 60;
  o.config_text = format_run_config(config);
  return o;
}

TEST_F(OnnxWorkloadConfig, TuningAnOnnxConfigMeasuresCandidatesAgainstTheModelsWeights) {
  write(dir_ / "run.yaml", "workload: {onnx: models/small_mlp.onnx}\nbudget: {trials: 3}\nseed: 2\ndatabase: " +
                               (dir_ / "tune.db").string() + "\n");
  RunConfig config = load_run_config((dir_ / "run.yaml").string());
  ConfiguredWorkload w = make_configured_workload(config.workload);
  RandomSearch search(w.program, config.seed);
  TuneSummary s = tune(w.program, w.name, quick_options(config, w), search);
  EXPECT_EQ(s.measured_now, 3);
  EXPECT_EQ(s.errors_now, 0);
  ASSERT_TRUE(s.best_seconds.has_value());

  Database db = Database::open(config.database);
  std::vector<MeasuredCandidate> history = db.history();
  ASSERT_EQ(history.size(), 3u);
  for (const MeasuredCandidate& m : history) {
    EXPECT_EQ(m.workload_name, "small_mlp");
    EXPECT_EQ(m.measurement.error_class, ErrorClass::kNone) << m.measurement.error_message;
  }
  auto best = db.best("small_mlp", s.target);
  ASSERT_TRUE(best.has_value());

  // What `ingot export` does: the recorded config re-imports the model to the program that was measured.
  auto run = db.run(best->measurement.run_id);
  ASSERT_TRUE(run.has_value());
  RunConfig recorded = parse_run_config(run->config_text, "recorded", "/");
  EXPECT_EQ(recorded, config);
  EXPECT_EQ(workload_key(make_configured_workload(recorded.workload).program), best->candidate.workload_hash);
}

TEST_F(OnnxWorkloadConfig, TuningFeedsTheFixedInputsToTheReference) {
  // A weight of the wrong shape reaches the interpreter, which rejects it: the fixed inputs are what the
  // reference runs on, not the random values.
  RunConfig config = parse_run_config(
      "workload: {onnx: models/small_mlp.onnx}\nbudget: {trials: 1}\ndatabase: " + (dir_ / "bad.db").string() + "\n",
      "x.yaml", dir_.string());
  ConfiguredWorkload w = make_configured_workload(config.workload);
  w.fixed_inputs.at("w1") = HostTensor(DType::kFloat32, {3, 3});
  RandomSearch search(w.program, config.seed);
  EXPECT_THROW(tune(w.program, w.name, quick_options(config, w), search), std::invalid_argument);
}

}  // namespace
}  // namespace ingot
