// The search bench (docs/search.md): best-so-far against trials of random search, the evolutionary search without
// a model and the model-guided evolutionary search, on the five tasks, interleaved batch by batch in one run
// so that all three see the same machine. Each search keeps its state across batches; each has its own database.
// Usage: ingot_search_bench OUT_DIR [--trials N] [--minutes M] [--batch B] [--tasks a,b,...] [--seed S]
// Writes OUT_DIR/curves.csv (task, strategy, trial, elapsed_s, best_ms, fixed_ms) and prints the table, with each
// search's own time (propose and tell: evolution, scoring, retraining) apart from compiling and measuring. Then, per
// task, the fixed schedule and each search's best are measured again side by side in 5 interleaved rounds
// (OUT_DIR/side_by_side.csv: task, schedule, round, median_ms): the speed-ups to quote.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "configs/run_config.h"
#include "interp/interpreter.h"
#include "ir/flops.h"
#include "results/run_statistics.h"
#include "runtime/builder.h"
#include "runtime/runner.h"
#include "runtime/side_by_side.h"
#include "tuner/tune_job.h"

namespace ingot {
namespace {

struct Task {
  std::string name;      // short, for the table
  std::string workload;  // the config's workload section
};

const std::vector<Task>& all_tasks() {
  static const std::vector<Task> tasks = {
      {"matmul512", "{name: matmul, params: {m: 512, n: 512, k: 512}}"},
      {"bert_ffn", "{name: 'task:bert_ffn'}"},
      {"resnext_conv3x3_grouped", "{name: 'task:resnext_conv3x3_grouped'}"},
      {"efficientnet_depthwise", "{name: 'task:efficientnet_depthwise'}"},
      {"lstm_cell", "{name: 'task:lstm_cell'}"},
  };
  return tasks;
}

struct Strategy {
  std::string name, search;
};
const std::vector<Strategy> kStrategies = {
    {"random", "{strategy: random, fusion: global, batch: BATCH}"},
    {"evolutionary_no_model", "{strategy: evolutionary, cost_model: none, fusion: global, batch: BATCH}"},
    {"evolutionary_model", "{strategy: evolutionary, cost_model: xgboost, fusion: global, batch: BATCH}"},
};

std::string replaced(std::string text, const std::string& from, const std::string& to) {
  for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size()))
    text.replace(at, from.size(), to);
  return text;
}

// Forwards to a search and adds up the time its propose and tell take: the search's own cost, apart from compiling
// and measuring.
class TimedSearch final : public SearchStrategy {
 public:
  explicit TimedSearch(SearchStrategy& inner) : inner_(inner) {}
  std::vector<Schedule> propose(int n) override {
    const auto start = std::chrono::steady_clock::now();
    std::vector<Schedule> out = inner_.propose(n);
    if (!first && !out.empty()) first = out.front();
    seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return out;
  }
  void tell(const std::vector<TrialResult>& results) override {
    const auto start = std::chrono::steady_clock::now();
    inner_.tell(results);
    seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  }
  const XGBoostCostModel* learned_model() const override { return inner_.learned_model(); }
  std::optional<double> last_batch_accuracy() const override { return inner_.last_batch_accuracy(); }
  std::optional<double> reference_seconds() const override { return inner_.reference_seconds(); }

  double seconds = 0;
  std::optional<Schedule> first;  // the first schedule proposed: an evolutionary search's fixed schedule

 private:
  SearchStrategy& inner_;
};

struct Point {
  int64_t trial = 0;
  double elapsed = 0, best = 0;
};

// The fixed schedule and each search's best, measured again in interleaved rounds in one process: a search's best is
// the least of many measurements taken minutes apart, and where the machine's speed drifts (docs/search.md, "Bench")
// the candidate that met a fast period wins. These pairs are the speed-ups to quote.
void side_by_side(const std::string& task, const std::vector<TuneJob>& jobs, const std::vector<TimedSearch>& timed,
                  const std::vector<std::string>& best_json, const TensorMap& inputs, const TensorMap& expected,
                  std::ofstream& csv) {
  constexpr int kRounds = 5;
  std::vector<std::string> names;
  std::vector<BuildInput> contenders;
  for (size_t j = 0; j < jobs.size(); ++j)
    if (timed[j].first && kStrategies[j].name != "random") {
      names.push_back("fixed");
      contenders.emplace_back(jobs[j].program, *timed[j].first);
      break;
    }
  for (size_t j = 0; j < jobs.size(); ++j)
    if (!best_json[j].empty()) {
      names.push_back(kStrategies[j].name);
      contenders.emplace_back(jobs[j].program, Schedule::from_json(best_json[j]));
    }
  if (names.empty() || names[0] != "fixed") return;
  const std::vector<BuildResult> built = Builder(jobs[0].options.builder).build(contenders);
  RunnerOptions options = jobs[0].options.runner;
  options.threads = jobs[0].options.threads;
  options.min_repeat_ms = 300;
  Runner runner(jobs[0].program, inputs, expected, options);
  const std::vector<std::vector<Measurement>> rounds = measure_side_by_side(runner, built, kRounds);
  for (size_t round = 0; round < rounds.size(); ++round)
    for (size_t c = 0; c < contenders.size(); ++c)
      if (rounds[round][c].ok())
        csv << task << "," << names[c] << "," << round << "," << rounds[round][c].statistics.median * 1e3 << "\n"
            << std::flush;
  const std::optional<double> fixed = median_of_rounds(rounds, 0);
  if (!fixed) return;
  std::printf("%-26s side by side, median of %d interleaved rounds: fixed %.4f ms", task.c_str(), kRounds,
              *fixed * 1e3);
  for (size_t c = 1; c < contenders.size(); ++c)
    if (const std::optional<double> median = median_of_rounds(rounds, c))
      std::printf(" | %s %.4f ms (%.2fx fixed, paired by round)", names[c].c_str(), *median * 1e3,
                  paired_speedup(rounds, 0, c).value_or(0));
  std::printf("\n");
}

int run(int argc, char** argv) {
  const char* usage =
      "usage: ingot_search_bench OUT_DIR [--trials N] [--minutes M] [--batch B] [--tasks a,b] [--seed S]\n";
  // An option in OUT_DIR's place (--help) would otherwise become a folder and start an hour of benchmarking.
  if (argc < 2 || argv[1][0] == '-' || argc % 2 != 0) {
    std::cerr << usage;
    return 2;
  }
  const std::filesystem::path out = argv[1];
  int64_t trials = 200;
  double minutes = 15;
  int batch = 8;
  uint64_t seed = 1;
  std::vector<std::string> wanted;
  for (int a = 2; a + 1 < argc; a += 2) {
    const std::string flag = argv[a], value = argv[a + 1];
    if (flag == "--trials") {
      trials = std::stoll(value);
    } else if (flag == "--minutes") {
      minutes = std::stod(value);
    } else if (flag == "--batch") {
      batch = std::stoi(value);
    } else if (flag == "--seed") {
      seed = std::stoull(value);
    } else if (flag == "--tasks") {
      std::stringstream list(value);
      for (std::string t; std::getline(list, t, ',');) wanted.push_back(t);
    } else {
      std::cerr << "unknown flag " << flag << "\n";
      return 2;
    }
  }
  std::filesystem::create_directories(out);
  std::ofstream csv(out / "curves.csv");
  csv << "task,strategy,trial,elapsed_s,best_ms,fixed_ms\n";
  std::ofstream side_csv(out / "side_by_side.csv");
  side_csv << "task,schedule,round,median_ms\n";
  for (const Task& task : all_tasks()) {
    if (!wanted.empty() && std::find(wanted.begin(), wanted.end(), task.name) == wanted.end()) continue;
    std::vector<TuneJob> jobs;
    for (const Strategy& strategy : kStrategies) {
      const std::string db = (out / (task.name + "_" + strategy.name + ".db")).string();
      std::filesystem::remove(db);
      const std::string text = "workload: " + task.workload + "\nbudget: {trials: " + std::to_string(batch) +
                               "}\nseed: " + std::to_string(seed) + "\ndatabase: " + db +
                               "\nmeasure: {min_repeat_ms: 20, build_workers: 2, side_by_side: 0}\nsearch: " +
                               replaced(strategy.search, "BATCH", std::to_string(batch)) + "\n";
      jobs.push_back(make_tune_job(parse_run_config(text, task.name + "_" + strategy.name + ".yaml")));
    }
    // The reference outputs once for all three (they share program, seed and inputs).
    TensorMap inputs = random_inputs(jobs[0].program, jobs[0].options.seed, jobs[0].options.input_ranges);
    const TensorMap expected = interpret(jobs[0].program, inputs);
    const double gflop = double(count_flops(jobs[0].program)) / 1e9;
    std::vector<TimedSearch> timed;
    for (TuneJob& job : jobs) timed.emplace_back(*job.search);
    std::vector<std::vector<Point>> curves(jobs.size());
    std::vector<double> elapsed(jobs.size(), 0.0);
    std::vector<int64_t> done(jobs.size(), 0);
    std::vector<bool> active(jobs.size(), true);
    std::optional<double> fixed;
    std::vector<std::string> best_json(jobs.size());
    std::cout << "== " << task.name << " (" << gflop << " GFLOP)" << std::endl;
    for (bool any = true; any;) {
      any = false;
      for (size_t j = 0; j < jobs.size(); ++j) {
        if (!active[j]) continue;
        TuneOptions options = jobs[j].options;
        options.trials = std::min<int64_t>(batch, trials - done[j]);
        options.expected_outputs = expected;
        const auto start = std::chrono::steady_clock::now();
        TuneSummary s = tune(jobs[j].program, jobs[j].workload_name, options, timed[j]);
        elapsed[j] += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        done[j] += s.measured_now + s.skipped;
        if (s.reference_seconds) fixed = s.reference_seconds;
        if (!s.best_schedule_json.empty()) best_json[j] = s.best_schedule_json;
        if (s.best_seconds) curves[j].push_back(Point{done[j], elapsed[j], *s.best_seconds});
        if (s.best_seconds)
          csv << task.name << "," << kStrategies[j].name << "," << done[j] << "," << elapsed[j] << ","
              << *s.best_seconds * 1e3 << "," << (fixed ? std::to_string(*fixed * 1e3) : "") << "\n"
              << std::flush;
        active[j] = done[j] < trials && elapsed[j] < minutes * 60 && !s.exhausted && s.measured_now + s.skipped > 0;
        any = any || active[j];
      }
      std::cout << "  trials";
      for (size_t j = 0; j < jobs.size(); ++j)
        std::cout << "  " << kStrategies[j].name << " " << done[j] << ": "
                  << (curves[j].empty() ? 0.0 : curves[j].back().best * 1e3) << " ms";
      std::cout << std::endl;
    }
    // The table row: each search's final best, and when the model-guided search reached random search's final best.
    std::printf("%-26s fixed %.3f ms", task.name.c_str(), fixed ? *fixed * 1e3 : 0.0);
    for (size_t j = 0; j < jobs.size(); ++j) {
      if (curves[j].empty()) continue;
      const double best = curves[j].back().best;
      std::printf(" | %s %.3f ms (%.1f GFLOP/s, %.2fx fixed) in %lld trials, %.0f s (search %.1f s)",
                  kStrategies[j].name.c_str(), best * 1e3, gflop / best, fixed ? *fixed / best : 0.0,
                  static_cast<long long>(curves[j].back().trial), elapsed[j], timed[j].seconds);
    }
    if (!curves[0].empty())
      for (const Point& p : curves[2])
        if (p.best <= curves[0].back().best) {
          std::printf(" | model-guided reached random's final best at trial %lld", static_cast<long long>(p.trial));
          break;
        }
    std::printf("\n");
    side_by_side(task.name, jobs, timed, best_json, inputs, expected, side_csv);
    std::fflush(stdout);
  }
  return 0;
}

}  // namespace
}  // namespace ingot

int main(int argc, char** argv) {
  try {
    return ingot::run(argc, argv);
  } catch (const std::exception& e) {
    std::cerr << "ingot_search_bench: " << e.what() << "\n";
    return 1;
  }
}
