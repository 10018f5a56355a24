// Pins the first candidates a fixed config and seed propose, by their database keys. The values were computed
// before the tuner's interfaces were refactored (issue 15): a change here means resumed databases would no longer
// find their measured candidates.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "analysis/strategies.h"
#include "configs/run_config.h"
#include "ir/hash.h"
#include "tuner/search_strategy.h"
#include "tuner/strategy_schedule.h"

namespace ingot {
namespace {

// A target key of no real machine: the real one names this CPU, so keys differ from machine to machine.
const std::string kPinnedTarget = "cpu:pinned:threads=1";

// Tiny sizes: every tensor fits any cache, so the plan (prefetches included) is the same on every machine.
std::string config_text(const std::string& fusion, int seed) {
  return "workload:\n  name: mlp\n  params: {batch: 4, in: 16, hidden: 32, out: 16}\nbudget:\n  trials: 8\nseed: " +
         std::to_string(seed) + "\nsearch:\n  fusion: " + fusion + "\n";
}

struct Pinned {
  std::string workload_hash;
  std::vector<std::string> candidate_hashes;
};

Pinned first_candidates(const std::string& fusion, int seed, int n) {
  RunConfig config = parse_run_config(config_text(fusion, seed), "pinned.yaml");
  ConfiguredWorkload workload = make_configured_workload(config.workload);
  SamplerOptions options;
  options.layout = plan_layout(make_plan(config.search.fusion, workload.program, resolve_target("cpu")));
  RandomSearch search(workload.program, config.seed, options);
  Pinned out;
  out.workload_hash = hash_hex(workload.program.structural_hash());
  for (const Schedule& s : search.propose(n))
    out.candidate_hashes.push_back(hash_hex(fnv1a64(out.workload_hash + "\n" + kPinnedTarget + "\n" + s.to_json())));
  return out;
}

TEST(PinnedCandidates, GlobalFusionSeed1) {
  Pinned p = first_candidates("global", 1, 5);
  EXPECT_EQ(p.workload_hash, "00c277fc62fc5e74");
  EXPECT_EQ(p.candidate_hashes, (std::vector<std::string>{"ee6f5998fc9a7567", "3b6ceb818cc0c09d", "070122e618ea66a1",
                                                          "edcc73c433e3f24d", "5d743ed9aec3e9d4"}));
}

TEST(PinnedCandidates, UnfusedSeed7) {
  Pinned p = first_candidates("unfused", 7, 5);
  EXPECT_EQ(p.workload_hash, "00c277fc62fc5e74");
  EXPECT_EQ(p.candidate_hashes, (std::vector<std::string>{"419549aebfc7ef12", "382aec9bfb8d6f61", "c3b4ed058b052970",
                                                          "91b09f31200d18cb", "149c32ae69dc8d17"}));
}

}  // namespace
}  // namespace ingot
