// A tuning job from config text, run for real: the library `ingot tune` calls, without its printing.
#include "tuner/tune_job.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "analysis/strategies.h"
#include "compile/cpp_compiler.h"
#include "interp/interpreter.h"
#include "lower/vector_tiles.h"
#include "results/database.h"
#include "space/strategy_schedule.h"
#include "tests/tuner/test_directory.h"

namespace ingot {
namespace {

class TuneJobTest : public TestDirectory {
 protected:
  // The small mlp, a few quick trials into a database of this test's folder.
  std::string config_text(const std::string& target_kind = "cpu") const {
    std::string text = R"(workload:
  name: mlp
  params: {batch: 8, in: 16, hidden: 32, out: 16}
target: {kind: KIND, threads: 1}
budget: {trials: 3}
seed: 4
database: DB
measure: {warmup_runs: 0, min_repeat_ms: 1, min_repeats: 1, build_workers: 2}
search: {fusion: unfused}
)";
    text.replace(text.find("KIND"), 4, target_kind);
    text.replace(text.find("DB"), 2, (dir_ / "job.db").string());
    return text;
  }
};

TEST_F(TuneJobTest, RunsATinyJobFromConfigText) {
  RunConfig config = parse_run_config(config_text(), "job.yaml");
  TuneJob job = make_tune_job(config, "job.yaml");
  EXPECT_EQ(job.workload_name, "mlp");
  EXPECT_EQ(job.target.kind, TargetKind::kCpu);
  EXPECT_EQ(job.plan, make_plan("unfused", job.program, job.target));
  EXPECT_EQ(job.options.database_path, (dir_ / "job.db").string());
  EXPECT_EQ(job.options.trials, 3);
  EXPECT_EQ(job.options.seed, 4u);
  EXPECT_EQ(job.options.threads, 1);
  EXPECT_EQ(job.options.runner.min_repeats, 1);
  EXPECT_EQ(job.options.builder.workers, 2);
  EXPECT_EQ(job.options.config_path, "job.yaml");
  EXPECT_FALSE(job.options.input_ranges.empty());

  TuneSummary s = run_tune_job(job);
  EXPECT_EQ(s.measured_now, 3);
  EXPECT_EQ(s.errors_now, 0);
  Database db = Database::open(config.database);
  EXPECT_TRUE(db.best("mlp", s.target).has_value());
  EXPECT_EQ(db.history("mlp").size(), 3u);
  // Every candidate follows the config's fusion plan.
  for (const MeasuredCandidate& m : db.history())
    EXPECT_EQ(Schedule::from_json(m.candidate.schedule_json).layout(), plan_layout(job.plan));
  auto run = db.run(s.run_id);
  ASSERT_TRUE(run.has_value());
  EXPECT_EQ(parse_run_config(run->config_text, "recorded"), config);
  EXPECT_EQ(run->config_path, "job.yaml");
}

// The same config twice: the second job proposes the same candidates, finds them measured and measures nothing.
TEST_F(TuneJobTest, ASecondJobResumes) {
  RunConfig config = parse_run_config(config_text(), "job.yaml");
  TuneJob first = make_tune_job(config);
  run_tune_job(first);
  TuneJob second = make_tune_job(config);
  TuneSummary s = run_tune_job(second);
  EXPECT_EQ(s.skipped, 3);
  EXPECT_EQ(s.measured_now, 0);
}

// Each search.strategy gets its search and space: random draws the sampler's sequence; evolutionary (the default)
// starts from the plan's strategy schedule and ranks by a model unless search.cost_model is none; ranked without a
// model is refused.
TEST_F(TuneJobTest, EachStrategyGetsItsSearch) {
  RunConfig config = parse_run_config(config_text(), "job.yaml");
  ASSERT_EQ(config.search.strategy, "evolutionary");
  TuneJob evolution = make_tune_job(config);
  EXPECT_TRUE(evolution.cost_model);
  // As the job builds it on this CPU: its lanes and L2 decide the tiles, and the workload's weights are packed.
  FixedScheduleOptions fixed;
  fixed.weights = configured_workload(config).weights;
  fixed = fixed_options_for_target(std::move(fixed), evolution.target);
  EXPECT_EQ(evolution.search->propose(1).front(), strategy_schedule(evolution.program, evolution.plan, fixed));
  config.search.cost_model = "none";
  EXPECT_FALSE(make_tune_job(config).cost_model);
  config.search.strategy = "random";
  TuneJob random = make_tune_job(config);
  EXPECT_FALSE(random.cost_model);
  EXPECT_EQ(random.search->propose(3), RandomSearch(random.space, config.seed).propose(3));
  config.search.strategy = "ranked";
  try {
    make_tune_job(config, "job.yaml");
    FAIL() << "ranked without a model was not refused";
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "job.yaml: search.cost_model: none leaves search.strategy ranked nothing to rank by");
  }
}

// A compiler that cannot build is refused before the job opens (or creates) its database.
TEST_F(TuneJobTest, RefusesAToolchainThatCannotBuildBeforeTheDatabaseIsOpened) {
  RunConfig config = parse_run_config(config_text(), "job.yaml");
  config.target.compiler = "/nonexistent/g++";
  EXPECT_THROW(make_tune_job(config), ToolchainError);
  EXPECT_FALSE(std::filesystem::exists(dir_ / "job.db"));
}

// So is a workload whose tensors do not fit in this machine's memory (issue 20: no run row is left behind).
TEST_F(TuneJobTest, RefusesAWorkloadLargerThanTheMemoryBeforeTheDatabaseIsOpened) {
  RunConfig config = parse_run_config(config_text(), "job.yaml");
  config.workload.name = "matmul";
  config.workload.params = {{"m", 1000000}, {"n", 1000000}, {"k", 100000}};
  EXPECT_THROW(make_tune_job(config), MemoryNeedError);
  EXPECT_FALSE(std::filesystem::exists(dir_ / "job.db"));
}

// precision: bf16 tunes the program whose dense layers multiply bf16 (stored as "mlp@bf16") where the CPU has AVX-512
// BF16, and is refused before anything runs where it has not, or for AVX2 code.
TEST_F(TuneJobTest, Bf16IsTunedApartWhereTheCpuHasItAndRefusedElsewhere) {
  RunConfig config = parse_run_config(config_text(), "job.yaml");
  config.workload.precision = "bf16";
  config.target.isa = "avx2";
  EXPECT_THROW(make_tune_job(config, "job.yaml"), std::invalid_argument);
  config.target.isa = "native";
  if (!host_has_avx512_bf16()) {
    try {
      make_tune_job(config, "job.yaml");
      FAIL() << "bf16 was not refused on a CPU without AVX-512 BF16";
    } catch (const std::invalid_argument& e) {
      EXPECT_EQ(std::string(e.what()), "job.yaml: precision: bf16 needs AVX-512 BF16 (or AMX), and this CPU (" +
                                           std::string(cpu_isa_name(host_cpu_isa())) + ") has neither; use fp32");
    }
    EXPECT_FALSE(std::filesystem::exists(dir_ / "job.db"));
    GTEST_SKIP() << "this CPU has no AVX-512 BF16: the refusal was checked, a bf16 run was not";
  }
  TuneJob job = make_tune_job(config, "job.yaml");
  EXPECT_EQ(job.workload_name, "mlp@bf16");
  EXPECT_EQ(job.program.find("W1")->dtype, DType::kBFloat16);
  TuneSummary s = run_tune_job(job);
  EXPECT_EQ(s.measured_now, 3);
  EXPECT_EQ(s.errors_now, 0);
  Database db = Database::open(config.database);
  EXPECT_TRUE(db.best("mlp@bf16", s.target).has_value());
  EXPECT_THROW(db.best("mlp", s.target), std::exception);  // no f32 mlp was measured
}

// A bf16 workload's 1 x 1 convolutions pad their input channels on a target with AMX (bf16_conv_channel_multiple):
// the config builds the program of this machine's target, and given the key of a program measured with the other
// padding (a database from a machine with AMX, read on one without, or the other way round), that program.
TEST_F(TuneJobTest, ABf16ProgramMeasuredWithTheOtherPaddingIsFoundAgain) {
  RunConfig config = parse_run_config(config_text(), "job.yaml");
  config.workload.name = "task:efficientnet_expansion";
  config.workload.params = {{"in_channels", 24}, {"out_channels", 32}, {"map_size", 4}};
  config.workload.precision = "bf16";
  const std::string padded = workload_key(make_configured_workload(config.workload, kAmxTileK).program);
  const std::string unpadded = workload_key(make_configured_workload(config.workload, 2).program);
  ASSERT_NE(padded, unpadded);
  const std::string own = host_has_amx_bf16() ? padded : unpadded;
  EXPECT_EQ(workload_key(configured_workload(config).program), own);
  EXPECT_EQ(workload_key(configured_workload(config, padded).program), padded);
  EXPECT_EQ(workload_key(configured_workload(config, unpadded).program), unpadded);
  EXPECT_EQ(workload_key(configured_workload(config, "no such program").program), own);
  config.workload.precision = "fp32";
  EXPECT_EQ(workload_key(configured_workload(config, padded).program),
            workload_key(make_configured_workload(config.workload).program));
}

// A GPU target's candidates are measured on this machine's GPU. Without one, the job is refused with the reason
// before any database is created; with one, the small mlp is tuned on it by both searches, every candidate stored under
// the device's key, and `--target sm_90` finds that key again.
TEST_F(TuneJobTest, GpuTargetsAreTunedOnTheGpuOrRefusedBeforeAnythingRuns) {
  const GpuProbe gpu = probe_gpu();
  if (!gpu.available) {
    for (const std::string kind : {"sm_80", "sm_90"}) {
      RunConfig config = parse_run_config(config_text(kind), "gpu.yaml");
      try {
        make_tune_job(config, "configs/gpu.yaml");
        FAIL() << kind << " was not refused";
      } catch (const GpuUnavailable& e) {
        EXPECT_EQ(std::string(e.what()),
                  "configs/gpu.yaml: target.kind: " + kind +
                      " candidates are measured on this machine's GPU, and none is usable: " + gpu.reason);
      }
    }
    EXPECT_FALSE(std::filesystem::exists(dir_ / "job.db"));
    GTEST_SKIP() << "no usable GPU to tune on: " << gpu.reason;
  }
  for (const std::string strategy : {"random", "evolutionary"}) {
    std::string text = config_text(gpu.arch);
    text.replace(text.find("{fusion: unfused}"), 17, "{fusion: global, strategy: " + strategy + "}");
    text.replace(text.find("{trials: 3}"), 11, "{trials: 6}");
    TuneJob job = make_tune_job(parse_run_config(text, "gpu.yaml"), "gpu.yaml");
    EXPECT_EQ(job.target.kind, TargetKind::kGpu);
    EXPECT_TRUE(job.options.gpu);
    TuneSummary s = run_tune_job(job);
    EXPECT_EQ(s.target, gpu_target_key(gpu.device, gpu.arch)) << strategy;
    EXPECT_EQ(s.measured_now + s.skipped, 6) << strategy;
    EXPECT_LT(s.errors_now, s.measured_now) << strategy;
    ASSERT_TRUE(s.best_seconds.has_value()) << strategy;
    Database db = Database::open((dir_ / "job.db").string());
    EXPECT_EQ(resolve_stored_target(db, "mlp", gpu.arch), s.target);
    for (const MeasuredCandidate& m : db.history("mlp")) {
      EXPECT_EQ(m.candidate.target, s.target);
      // Every stage is bound to blocks and threads: the schedules are the GPU form.
      EXPECT_NE(m.candidate.schedule_json.find("bind"), std::string::npos) << m.candidate.schedule_json;
    }
  }
}

// target.isa picks the ISA the code is written for: another than this CPU's has its lanes, its compiler flags and a
// target key of its own, and is measured where this CPU runs it; where it does not, nothing is recorded.
// A config's own compiler or flags key its results apart: a run with the default toolchain measures the same
// candidates again instead of taking them as measured, and the same flags again skip them.
TEST_F(TuneJobTest, AnotherToolchainIsKeyedApart) {
  RunConfig custom = parse_run_config(config_text(), "job.yaml");
  custom.target.flags = default_cpp_flags() + " -DINGOT_ANOTHER_TOOLCHAIN";
  TuneJob job = make_tune_job(custom, "job.yaml");
  const std::string tag = toolchain_key("", custom.target.flags);
  EXPECT_EQ(job.options.toolchain, tag);
  EXPECT_EQ(tag.size(), 8u);
  EXPECT_NE(tag, toolchain_key("g++", custom.target.flags));
  EXPECT_EQ(toolchain_key("", ""), "");
  TuneSummary first = run_tune_job(job);
  EXPECT_EQ(first.measured_now, 3);
  EXPECT_EQ(first.target, cpu_target_key(1, "", tag));
  EXPECT_EQ(first.target.substr(first.target.size() - tag.size() - 11), ":toolchain=" + tag);

  RunConfig plain = parse_run_config(config_text(), "job.yaml");
  TuneJob defaults = make_tune_job(plain, "job.yaml");
  EXPECT_EQ(defaults.options.toolchain, "");
  TuneSummary second = run_tune_job(defaults);
  EXPECT_EQ(second.skipped, 0);
  EXPECT_EQ(second.measured_now, 3);
  EXPECT_EQ(second.target, cpu_target_key(1));

  TuneJob same = make_tune_job(custom, "job.yaml");
  TuneSummary again = run_tune_job(same);
  EXPECT_EQ(again.skipped, 3);
  EXPECT_EQ(again.measured_now, 0);
}

TEST_F(TuneJobTest, AnotherIsaIsPlannedCompiledAndKeyedApart) {
  const CpuIsa host = host_cpu_isa();
  const CpuIsa other = host == CpuIsa::kAvx512 ? CpuIsa::kAvx2 : CpuIsa::kAvx512;
  RunConfig config = parse_run_config(config_text(), "job.yaml");
  config.target.isa = cpu_isa_name(other);
  if (!host_runs(other)) {
    try {
      make_tune_job(config, "job.yaml");
      FAIL() << "an ISA this CPU cannot run was not refused";
    } catch (const std::invalid_argument& e) {
      EXPECT_EQ(std::string(e.what()), "job.yaml: target.isa: avx512 code cannot run on this CPU (" +
                                           std::string(cpu_isa_name(host)) +
                                           "), so its candidates cannot be measured here; `ingot lower` and `ingot "
                                           "run --isa` compile it");
    }
    EXPECT_FALSE(std::filesystem::exists(dir_ / "job.db"));
    return;
  }
  TuneJob job = make_tune_job(config, "job.yaml");
  EXPECT_EQ(job.target.cpu.isa, other);
  EXPECT_EQ(job.target.cpu.simd_fp32_lanes, cpu_isa_lanes(other));
  EXPECT_EQ(job.options.target_isa, cpu_isa_name(other));
  EXPECT_EQ(job.options.builder.compile.flags, cpp_flags(cpu_isa_compiler_flags(other)));
  TuneSummary s = run_tune_job(job);
  EXPECT_EQ(s.measured_now, 3);
  EXPECT_EQ(s.errors_now, 0);
  EXPECT_NE(s.target.find(std::string(":isa=") + cpu_isa_name(other) + ":"), std::string::npos) << s.target;
  // This CPU's own ISA, named or native, keeps the plain key and flags.
  for (const std::string& native : {std::string("native"), std::string(cpu_isa_name(host))}) {
    config.target.isa = native;
    TuneJob own = make_tune_job(config, "job.yaml");
    EXPECT_EQ(own.options.target_isa, "");
    EXPECT_EQ(own.options.builder.compile.flags, default_cpp_flags());
    EXPECT_EQ(cpu_target_key(1, own.options.target_isa), cpu_target_key(1));
  }
}

}  // namespace
}  // namespace ingot
